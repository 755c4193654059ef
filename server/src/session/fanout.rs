//! What goes out to every client: bundle datagrams and the lag indicator.
//!
//! Tuned for 64 clients. Each datagram repeats every bundle its client has
//! not acknowledged, so clients at the same place get the same bytes: a
//! round of sends encodes each distinct datagram once and shares it. A
//! client nothing was sent to for [`RESEND_AFTER`] gets its repeats again
//! (that repairs a loss while the game waits). The lag indicator
//! ([`PeerStatus`]) is queued just before a round of bundles, and the
//! driver carries out actions in order, so QUIC carries each client's
//! status and bundle in one packet; it goes alone only when no bundle has
//! left for a while.
//!
//! A client whose transport is reliable and ordered (a WebSocket,
//! [`LinkStats::reliable`](super::LinkStats)) is sent each bundle once:
//! its datagrams start at the first bundle it was never sent, not at its
//! acknowledgement, and it gets no repeats.

use std::time::Duration;

use bytes::Bytes;
use lockstep_protocol::{encode_frame, Peer, PeerStatus, ServerMessage, Tick, MAX_DATAGRAM_SIZE};
use tracing::warn;

use super::{Action, ConnId, Outgoing, Role, Session};
use crate::recording::Recording;
use crate::relay::Standing;

/// Repeat unacknowledged bundles to a client we have sent nothing to for
/// this long. Longer than a tick (new bundles carry the repeats for free
/// while the game runs) and short enough to repair a loss during a stall.
const RESEND_AFTER: Duration = Duration::from_millis(30);

/// How often every client gets the lag indicator ([`PeerStatus`]): often
/// enough for a live HUD, rare enough to cost nothing.
const STATUS_EVERY: Duration = Duration::from_millis(250);

/// While bundles flow, a due status leaves with the next bundle, so QUIC
/// carries both in one packet. When none has gone out this long after the
/// status fell due (the game waits), the status goes alone.
const STATUS_ALONE_AFTER: Duration = Duration::from_millis(40);

/// Silence after which the server warns that it waits for a player (the
/// drop comes later, at the drop timeout).
const SILENCE_WARNING: Duration = Duration::from_millis(500);

/// Bundle datagrams built during one round of sends, by (first bundle,
/// input ack, size limit), with the tick after their last bundle. A
/// handful at most: usually every client is at the same place.
type Encoded = Vec<((Tick, Tick, usize), (Bytes, Tick))>;

impl Session {
    /// Bundles every complete tick, records the new bundles and sends them.
    pub(super) fn bundle_ready(&mut self, now: Duration) {
        let Some(game) = &mut self.game else {
            return;
        };
        let relay = &mut game.relay;
        let from = relay.next_tick();
        if relay.complete() == 0 {
            return;
        }
        if game.recording {
            for (tick, bundle) in relay.bundles_from(from) {
                let recording = Recording::Bundle(tick, bundle.clone());
                self.actions.push(Action::Record(recording));
            }
        }
        // Queued before the bundles, so each client's status and bundle
        // leave in one packet.
        if now.saturating_sub(self.last_status) >= STATUS_EVERY {
            self.send_status(now);
        }
        self.broadcast(now);
    }

    /// Sends the lag indicator on its own when it is overdue: no round of
    /// bundles carried it (the game waits).
    pub(super) fn send_lone_status(&mut self, now: Duration) {
        if now.saturating_sub(self.last_status) >= STATUS_EVERY + STATUS_ALONE_AFTER {
            self.send_status(now);
        }
    }

    /// The lag indicator: every client learns who the game waits for and
    /// how each player's link looks; the log says it too, once per wait.
    fn send_status(&mut self, now: Duration) {
        self.last_status = now;
        let Some(game) = &self.game else {
            return;
        };
        let next_tick = game.relay.next_tick();
        let standings = game.relay.standings(now);
        let peers: Vec<Peer> = standings
            .iter()
            .map(|s| Peer {
                player: s.player,
                ping_ms: self
                    .player_conn(s.player)
                    .and_then(|id| self.clients.get(&id))
                    .map_or(0, |c| {
                        c.link.rtt.as_millis().min(u128::from(u16::MAX)) as u16
                    }),
                ticks_behind: s.ticks_behind.min(u32::from(u16::MAX)) as u16,
                silent_ms: s.silent.as_millis().min(u128::from(u32::MAX)) as u32,
                waited_for: s.waited_for,
                slack: s.slack,
            })
            .collect();
        let waited_long = |s: &&Standing| s.waited_for && s.silent >= SILENCE_WARNING;
        for s in standings.iter().filter(waited_long) {
            if !game.waiting_warned.contains(&s.player) {
                warn!(
                    player = %s.player,
                    name = %self.name_of(s.player),
                    tick = %next_tick,
                    silent_ms = s.silent.as_millis() as u64,
                    ticks_behind = s.ticks_behind,
                    "waiting for player"
                );
            }
        }
        let Some(game) = &mut self.game else {
            return;
        };
        for s in &standings {
            if waited_long(&s) {
                game.waiting_warned.insert(s.player);
            } else if !s.waited_for {
                game.waiting_warned.remove(&s.player);
            }
        }
        if game.recording {
            let recording = Recording::Status {
                tick: next_tick,
                peers: peers.clone(),
            };
            self.actions.push(Action::Record(recording));
        }
        let status = ServerMessage::PeerStatus(PeerStatus { next_tick, peers });
        let frame = match encode_frame(&status) {
            Ok(frame) => Bytes::from(frame),
            Err(e) => {
                warn!(error = %e, "status not encodable");
                return;
            }
        };
        for &conn in self.clients.keys() {
            self.actions
                .push(Action::Control(conn, Outgoing::Frame(frame.clone())));
        }
    }

    fn broadcast(&mut self, now: Duration) {
        let ids: Vec<ConnId> = self.clients.keys().copied().collect();
        let mut encoded = Encoded::default();
        for id in ids {
            self.send_bundles(id, &mut encoded, now);
        }
    }

    pub(super) fn resend_stale(&mut self, now: Duration) {
        let Some(game) = &self.game else {
            return;
        };
        let relay = &game.relay;
        let next = relay.next_tick();
        let stale: Vec<ConnId> = self
            .clients
            .iter()
            .filter(|(_, c)| {
                now.saturating_sub(c.last_sent) >= RESEND_AFTER && !c.rejoining && !c.link.reliable
            })
            .filter(|(_, c)| match c.role {
                Role::Player(p) => !relay.is_up_to_date(p),
                Role::Spectator => c.ack < next,
            })
            .map(|(&id, _)| id)
            .collect();
        let mut encoded = Encoded::default();
        for id in stale {
            self.send_bundles(id, &mut encoded, now);
        }
    }

    /// Sends client `id` the bundles it lacks; `encoded` keeps the
    /// datagrams already built in this round, since clients that acked the
    /// same bundles get the same bytes.
    fn send_bundles(&mut self, id: ConnId, encoded: &mut Encoded, now: Duration) {
        let (Some(game), Some(client)) = (&self.game, self.clients.get_mut(&id)) else {
            return;
        };
        let relay = &game.relay;
        if client.rejoining {
            return;
        }
        let limit = client.link.max_datagram_size.min(MAX_DATAGRAM_SIZE);
        let start = match client.role {
            Role::Player(p) => relay.datagram_start(p),
            Role::Spectator => Some((client.ack, Tick(0))),
        };
        let Some((acked, inputs_ack)) = start else {
            return;
        };
        let from = if client.link.reliable {
            acked.max(client.sent_through)
        } else {
            acked
        };
        if client.link.reliable && from >= relay.next_tick() {
            return;
        }
        let key = (from, inputs_ack, limit);
        let (bytes, through) = match encoded.iter().find(|(k, _)| *k == key) {
            Some((_, sent)) => sent.clone(),
            None => {
                let Some((bytes, through)) = relay.datagram_from(from, inputs_ack, limit) else {
                    return;
                };
                let sent = (Bytes::from(bytes), through);
                encoded.push((key, sent.clone()));
                sent
            }
        };
        self.actions.push(Action::Datagram(id, bytes));
        client.last_sent = now;
        client.sent_through = client.sent_through.max(through);
    }
}

#[cfg(test)]
mod tests {
    use lockstep_protocol::{InputDatagram, Peer, PeerStatus, PlayerId, ServerMessage, Tick};

    use super::super::harness::{conn, logs_of, ms, Harness, Out, LINK};
    use super::super::{Action, Event, LinkStats, Outgoing};
    use super::{RESEND_AFTER, STATUS_ALONE_AFTER, STATUS_EVERY};

    fn statuses(out: &Out, id: usize) -> Vec<PeerStatus> {
        out.messages(id)
            .into_iter()
            .filter_map(|message| match message {
                ServerMessage::PeerStatus(status) => Some(status),
                _ => None,
            })
            .collect()
    }

    fn players(n: usize) -> Harness {
        let mut h = Harness::players(n as u8);
        for id in 1..=n {
            h.join(id, &format!("p{id}"));
        }
        h
    }

    #[test]
    fn clients_at_the_same_place_share_one_encoded_datagram() {
        let mut h = players(3);
        h.inputs(1, 0..5);
        h.inputs(2, 0..5);
        let out = h.inputs(3, 0..5);
        let sent: Vec<_> = (1..=3).flat_map(|id| out.raw_datagrams(id)).collect();
        assert_eq!(sent.len(), 3);
        assert!(
            sent.iter().all(|bytes| bytes.as_ptr() == sent[0].as_ptr()),
            "encoded once, shared by all three"
        );
        assert_eq!(out.datagrams(1)[0].bundles.len(), 5);
    }

    #[test]
    fn bundle_datagrams_fit_the_path_the_driver_reports() {
        let mut h = players(2);
        let narrow = LinkStats {
            max_datagram_size: 60,
            ..LINK
        };
        h.event(Event::Link(conn(1), narrow));
        h.inputs(1, 0..40);
        let out = h.inputs(2, 0..40);
        let small = &out.raw_datagrams(1)[0];
        let large = &out.raw_datagrams(2)[0];
        assert!(small.len() <= 60, "{} bytes", small.len());
        assert!(large.len() > 60);
        assert_eq!(out.datagrams(1)[0].first_tick, Tick(0), "oldest first");
        assert!(out.datagrams(1)[0].bundles.len() < out.datagrams(2)[0].bundles.len());
    }

    #[test]
    fn a_client_left_alone_gets_its_missing_bundles_again() {
        let mut h = players(2);
        h.inputs(1, 0..5);
        h.inputs(2, 0..5);
        h.advance(ms(10));
        // p2 acknowledges the five bundles; p1's acknowledgement is lost.
        h.heartbeat(2);

        let early = h.advance_to(RESEND_AFTER - ms(10));
        assert!(early.raw_datagrams(1).is_empty());
        let resent = h.advance_to(RESEND_AFTER);
        let repeat = &resent.datagrams(1)[0];
        assert_eq!((repeat.first_tick, repeat.bundles.len()), (Tick(0), 5));
        assert!(resent.raw_datagrams(2).is_empty(), "p2 holds them all");

        let acked = InputDatagram {
            bundles_ack: Tick(5),
            first_tick: Tick(5),
            inputs: Vec::new(),
        };
        h.event(Event::Inputs(conn(1), acked));
        assert!(h.advance(RESEND_AFTER * 3).raw_datagrams(1).is_empty());
    }

    #[test]
    fn a_client_on_a_reliable_link_is_sent_each_bundle_once() {
        let mut h = players(2);
        let reliable = LinkStats {
            reliable: true,
            ..LINK
        };
        h.event(Event::Link(conn(1), reliable));
        h.inputs(1, 0..5);
        let first = h.inputs(2, 0..5);
        let sent = &first.datagrams(1)[0];
        assert_eq!((sent.first_tick, sent.bundles.len()), (Tick(0), 5));

        // p1 acknowledges nothing, yet is never sent those bundles again:
        // not when it is left alone, not with the next bundle.
        let quiet = h.advance(RESEND_AFTER * 3);
        assert!(quiet.raw_datagrams(1).is_empty());
        assert!(!quiet.raw_datagrams(2).is_empty(), "p2's link repeats");
        let stale = InputDatagram {
            bundles_ack: Tick(0),
            first_tick: Tick(5),
            inputs: vec![super::super::harness::input()],
        };
        h.event(Event::Inputs(conn(1), stale));
        let next = h.inputs(2, 5..6);
        let sent = &next.datagrams(1)[0];
        assert_eq!((sent.first_tick, sent.bundles.len()), (Tick(5), 1));
        assert_eq!(next.datagrams(2)[0].first_tick, Tick(5), "p2 acked");
    }

    #[test]
    fn a_due_status_is_queued_just_before_the_bundles() {
        let mut h = players(2);
        h.inputs(1, 0..5);
        assert!(statuses(&h.inputs(2, 0..5), 1).is_empty(), "not due yet");
        h.advance_to(STATUS_EVERY);
        h.inputs(1, 5..6);
        let out = h.inputs(2, 5..6);
        for id in 1..=2 {
            let status = out.position(
                |a| matches!(a, Action::Control(to, Outgoing::Frame(_)) if *to == conn(id)),
            );
            let bundle = out.position(|a| matches!(a, Action::Datagram(to, _) if *to == conn(id)));
            assert!(
                status.is_some() && status < bundle,
                "client {id}: status at {status:?}, bundle at {bundle:?}"
            );
        }
    }

    #[test]
    fn the_lag_indicator_says_who_is_waited_for_how_far_behind_and_how_silent() {
        let mut h = players(2);
        h.inputs(1, 0..10);
        h.inputs(2, 0..4);
        h.event(Event::Link(
            conn(2),
            LinkStats {
                rtt: ms(80),
                ..LINK
            },
        ));
        h.advance_to(ms(200));
        h.heartbeat(1);

        // No bundle leaves while the game waits: the status goes alone.
        let alone = STATUS_EVERY + STATUS_ALONE_AFTER;
        assert!(statuses(&h.advance_to(alone - ms(10)), 1).is_empty());
        let out = h.advance_to(alone);
        let expected = PeerStatus {
            next_tick: Tick(4),
            peers: vec![
                Peer {
                    player: PlayerId(0),
                    ping_ms: 20,
                    ticks_behind: 0,
                    silent_ms: 90,
                    waited_for: false,
                    // Inputs of the game's first second are not timed.
                    slack: None,
                },
                Peer {
                    player: PlayerId(1),
                    ping_ms: 80,
                    ticks_behind: 6,
                    silent_ms: 290,
                    waited_for: true,
                    slack: None,
                },
            ],
        };
        assert_eq!(statuses(&out, 1), vec![expected.clone()]);
        assert_eq!(statuses(&out, 2), vec![expected]);
    }

    #[test]
    fn the_server_warns_once_per_wait_for_a_player() {
        let ((), logs) = logs_of(|| {
            let mut h = players(2);
            h.inputs(1, 0..100);
            h.inputs(2, 0..4);
            // p2 is silent for 1.2 s: one warning, however many statuses.
            for _ in 0..12 {
                h.advance(ms(100));
                h.heartbeat(1);
            }
            // It catches up, then falls silent again: a new wait.
            h.inputs(2, 4..100);
            h.advance(ms(300));
            h.inputs(1, 100..200);
            for _ in 0..10 {
                h.advance(ms(100));
                h.heartbeat(1);
            }
        });
        let warnings: Vec<&str> = logs
            .lines()
            .filter(|line| line.contains("waiting for player"))
            .collect();
        assert_eq!(warnings.len(), 2, "{logs}");
        assert!(warnings[0].contains("player=1") && warnings[0].contains("tick=4"));
        assert!(warnings[1].contains("tick=100"));
    }
}
