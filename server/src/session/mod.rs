//! The session: the lobby and the [`Relay`](crate::Relay) of the running
//! game, as a pure state machine in the quinn-proto style.
//!
//! The driver (`io/session.rs`) feeds it [`Event`]s (already decoded, and
//! stamped with the connection they came from, so nobody can speak for
//! another player) and calls [`Session::poll`] every [`POLL_INTERVAL`],
//! each time with `now`, the time since the server started. The session
//! answers with [`Action`]s (control messages, bundle datagrams, closes,
//! replies to joins, events to print) that the driver carries out in
//! order. It reads no clock and owns no socket or file, so every rule is
//! tested with explicit time; even the game's replay is written by the
//! driver, as the session asks ([`Action::Record`]).
//!
//! Its driving API is public so that a driver other than the QUIC one can
//! run it: the in-memory cluster (`lockstep-cluster`) wires it to clients
//! on a simulated clock. Such a driver turns an [`Outgoing`] into frames
//! with [`Outgoing::frames`], a client's control message into an
//! [`Event`] with [`Event::from_message`], and writes the replay with a
//! [`crate::Recorder`], as the QUIC driver does.
//!
//! Clients are players or spectators. A player that reconnects under its
//! name while the game runs takes its slot back: the relay removes the old
//! connection's slot, then brings the player back a moment later, after it
//! has fast-forwarded through the history it is sent. Spectators get the
//! same history and bundles but send no inputs, so nobody waits for them.
//!
//! Between games the players wait in the lobby: each is ready or not, and
//! a game starts when every one of them is ready and enough are there. A
//! player that has played what it wanted of a game says GameDone instead
//! of Leave: it leaves the game but stays connected, and when the game is
//! over it is back in the lobby for the next one (a rematch, with a new
//! seed and a new replay).
//!
//! The session holds a lobby (`Lobby`) and, while a game runs, a
//! `RunningGame`: no game is one `None`. This file holds the
//! state, the event handling and the periodic poll; `snapshots.rs` the
//! requests for snapshots and a joiner's word on one; `running.rs` a
//! game's start, its departures and its end,
//! `admission.rs` who gets in (names, slots, rejoins, takeovers),
//! `lobby.rs` who is ready and when a game starts, `fanout.rs` what goes
//! out to every client (bundle datagrams, repeats, the lag indicator),
//! `desyncs.rs` what the hash reports come to (desyncs and the verdict),
//! `resuming.rs` a game resumed after a restart, `laggards.rs` how often
//! the inputs the relay stood in for are reported, and `wire.rs` how the
//! session's values travel.

mod admission;
mod desyncs;
mod fanout;
#[cfg(test)]
mod harness;
mod laggards;
mod lobby;
mod resuming;
mod running;
mod snapshots;
mod traces;
mod wire;

pub use admission::MAX_NAME_CHARS;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::Duration;

use bytes::Bytes;
use lockstep_protocol::{
    Bundle, InputDatagram, Percent, Platform, PlayerId, Refusal, Resume, SelfTest, ServerMessage,
    SnapshotChunk, Tick, TraceReport,
};
use tracing::{debug, info};

use crate::recording::Recording;
use crate::relay::DropReason;
use crate::speed::{lead_ticks, CapacityReport, SpeedChange};
use crate::{Config, ServerEvent};
use lobby::Lobby;
use running::RunningGame;

/// How often the driver calls [`Session::poll`] to check timeouts and
/// repeat unacknowledged bundles. Well under one 60 Hz tick, so a lost
/// datagram during a stall is repaired within about two ticks.
pub const POLL_INTERVAL: Duration = Duration::from_millis(10);

/// Identifies one connection: a QUIC connection's `stable_id`, or a
/// WebSocket's number with the top bit set (never a `stable_id`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ConnId(pub usize);

/// What the transport knows about a connection's path and the session
/// needs: the driver reads it when the client joins and again at every
/// poll.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkStats {
    /// Smoothed round-trip time: the ping of the lag indicator.
    pub rtt: Duration,
    /// Largest datagram the path carries now (0 if the peer takes none):
    /// bundle datagrams are cut to fit.
    pub max_datagram_size: usize,
    /// The transport delivers every datagram, in order (a WebSocket): the
    /// client is sent each bundle once, never a repeat.
    pub reliable: bool,
}

/// What a connection's writer task puts on its control stream.
#[derive(Debug, Clone, PartialEq)]
pub enum Outgoing {
    /// One control message.
    Message(ServerMessage),
    /// One control message already encoded as a frame, shared by every
    /// client it goes to (encoded once, not once per client).
    Frame(Bytes),
    /// Past bundles from `first_tick`, cut into History messages by the
    /// writer so the session never waits on a long history.
    History {
        /// Tick of `bundles[0]`.
        first_tick: Tick,
        /// The bundles.
        bundles: Vec<Bundle>,
    },
    /// A verified snapshot, cut into Snapshot messages by the writer.
    Snapshot {
        /// The tick it is the state after.
        tick: Tick,
        /// The encoded world, shared with every joiner.
        bytes: Bytes,
    },
}

/// What a client brings when it joins, from its Hello and its connection.
#[derive(Debug)]
pub struct Join {
    /// The name from its Hello.
    pub name: String,
    /// Whether it only watches.
    pub spectate: bool,
    /// Whether it is ready for the game as it joins (its Hello says).
    pub ready: bool,
    /// Its machine and build, as its Hello claims (sanitized): shown and
    /// recorded, never trusted.
    pub platform: Platform,
    /// The self-test hashes of the games it has; the one of the hosted
    /// game is compared with [`Config::self_test`] before it gets anything.
    pub self_tests: Vec<SelfTest>,
    /// Its path, as QUIC sees it at the join.
    pub link: LinkStats,
    /// Seconds since the Unix epoch: the replay of a game this join starts
    /// is named after it.
    pub unix_time: u64,
    /// The game it kept through a lost connection, from its Hello.
    pub resume: Option<Resume>,
}

/// What happened on a connection, as the driver tells the session.
#[derive(Debug)]
pub enum Event {
    /// A client said a valid Hello and wants in. The session answers with
    /// [`Action::Reply`]; a refused join is released right after. Boxed:
    /// joins are rare next to the inputs this enum mostly carries.
    Join(ConnId, Box<Join>),
    /// A decoded input datagram (or Inputs message).
    Inputs(ConnId, InputDatagram),
    /// The client said Leave.
    Leave(ConnId),
    /// The client says it is ready for the next game, or not.
    Ready {
        /// Who.
        conn: ConnId,
        /// Ready or not.
        ready: bool,
        /// Seconds since the Unix epoch: a game this starts is named
        /// after it.
        unix_time: u64,
    },
    /// The client has played what it wanted of the running game and stays
    /// for the next.
    GameDone(ConnId),
    /// The client's world hash at a tick.
    HashReport(ConnId, Tick, u64),
    /// The client's answer to a desync notice: for the desync at the
    /// first tick, its hashes from the second tick on.
    TickHashes(ConnId, Tick, Tick, Vec<u64>),
    /// The connection is gone (closed, lost, or broke the protocol).
    Disconnected(ConnId, String),
    /// Fresh path facts for a connection (the driver sends them with every
    /// poll; RTT and datagram size change over a connection's life).
    Link(ConnId, LinkStats),
    /// The client's report of what its machine sustains.
    Capacity(ConnId, CapacityReport),
    /// A piece of the snapshot the client was asked for.
    Snapshot(ConnId, SnapshotChunk),
    /// The client's game refuses the hosted game's settings, for this
    /// reason: it leaves.
    CannotPlay(ConnId, String),
    /// The snapshot of this tick the client was started from is not the
    /// majority's world, for this reason.
    BadSnapshot(ConnId, Tick, String),
    /// The player's sync trace of a desync's first tick.
    Trace(ConnId, Tick, TraceReport),
}

/// Which QUIC close code a connection is closed with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloseCode {
    /// [`crate::CLOSE_SHUTDOWN`].
    Shutdown,
    /// [`crate::CLOSE_DROPPED`].
    Dropped,
}

/// What the session asks the driver to do, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Queue something on the connection's control stream (dropped, with a
    /// debug line, if the writer's queue is full).
    Control(ConnId, Outgoing),
    /// Send one bundle datagram.
    Datagram(ConnId, Bytes),
    /// Answer the connection's [`Event::Join`].
    Reply(ConnId, Result<(), Refusal>),
    /// Close the connection; the session has forgotten it.
    Close(ConnId, CloseCode, &'static str),
    /// The session has forgotten the connection without closing it: its
    /// writer flushes what is queued (an Ended, a Refused) and finishes
    /// the stream, and the client closes.
    Release(ConnId),
    /// Tell whoever runs the server.
    Report(ServerEvent),
    /// Write to the running game's replay, before carrying out the next
    /// action (a [`crate::Recorder`] does it).
    Record(Recording),
}

/// Actions waiting for the driver. A field of its own, so handlers can
/// queue actions while they walk the clients.
#[derive(Debug, Default)]
struct Actions(VecDeque<Action>);

impl Actions {
    fn send(&mut self, conn: ConnId, message: ServerMessage) {
        self.0
            .push_back(Action::Control(conn, Outgoing::Message(message)));
    }

    fn push(&mut self, action: Action) {
        self.0.push_back(action);
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Player(PlayerId),
    Spectator,
}

#[derive(Debug)]
struct Client {
    name: String,
    role: Role,
    /// The hash its build computes for the hosted game's self-test.
    self_test: u64,
    /// The machine it runs on, for the log, the replay and the verdict.
    platform: Platform,
    link: LinkStats,
    /// When a bundle datagram last went to it: one left alone too long
    /// gets its repeats again.
    last_sent: Duration,
    /// The first bundle never sent to it: a client on a reliable link is
    /// sent only bundles from here on.
    sent_through: Tick,
    /// A spectator's first unacknowledged bundle (players' acks live in
    /// the relay).
    ack: Tick,
    /// A reconnected player waiting for its old slot to be bundled out.
    rejoining: bool,
    /// When a reconnection asked for its slot.
    joined_at: Duration,
    /// Ready for the next game (counts in the lobby only).
    ready: bool,
    /// Said GameDone: out of the running game, waiting for the next.
    done: bool,
    /// The game it kept through a lost connection: it is sent only the
    /// bundles it lacks.
    resume: Option<Resume>,
    /// The snapshot it was last started from, until it starts from it.
    served: Option<snapshots::ServedTo>,
}

/// The lobby, the running game and every client of the server.
#[derive(Debug)]
pub struct Session {
    config: Config,
    clients: BTreeMap<ConnId, Client>,
    /// What the lobby keeps between games.
    lobby: Lobby,
    /// The running game; `None` in the lobby.
    game: Option<RunningGame>,
    /// When the lag indicator last went out. Kept across games: the first
    /// status of a game goes out with its first bundle at least
    /// `fanout::STATUS_EVERY` after the last status of the game before.
    last_status: Duration,
    actions: Actions,
}

impl Session {
    /// A session in the lobby, hosting `config`'s game. A game to resume
    /// ([`Config::resume`]) is not taken from it: the driver hands it to
    /// [`Session::resume`] with the time it starts at.
    pub fn new(config: Config) -> Self {
        Session {
            config,
            clients: BTreeMap::new(),
            lobby: Lobby::default(),
            game: None,
            last_status: Duration::ZERO,
            actions: Actions::default(),
        }
    }

    /// The next thing the driver should do, oldest first.
    pub fn next_action(&mut self) -> Option<Action> {
        self.actions.0.pop_front()
    }

    fn emit(&mut self, event: ServerEvent) {
        self.actions.push(Action::Report(event));
    }

    /// Takes one event that happened at `now`.
    pub fn handle(&mut self, event: Event, now: Duration) {
        match event {
            Event::Join(conn, join) => self.admit(conn, *join, now),
            Event::Inputs(conn, datagram) => {
                let (Some(game), Some(client)) = (&mut self.game, self.clients.get_mut(&conn))
                else {
                    return;
                };
                let relay = &mut game.relay;
                match client.role {
                    Role::Player(player) => {
                        let outcome = relay.receive(player, &datagram, now);
                        if outcome.out_of_window > 0 || outcome.conflicting > 0 {
                            debug!(%player, ?outcome, "inputs ignored");
                        }
                    }
                    Role::Spectator => {
                        let ack = datagram.bundles_ack.min(relay.next_tick());
                        if ack > client.ack {
                            client.ack = ack;
                        }
                    }
                }
                self.advance(now);
            }
            Event::HashReport(conn, tick, hash) => self.take_hash_report(conn, tick, hash, now),
            Event::TickHashes(conn, tick, first_tick, hashes) => {
                self.take_tick_hashes(conn, tick, first_tick, hashes, now)
            }
            Event::Leave(conn) => self.remove(conn, DropReason::Left, "left", now),
            Event::Ready {
                conn,
                ready,
                unix_time,
            } => {
                self.lobby.unix_time = unix_time;
                self.set_ready(conn, ready, now);
            }
            Event::GameDone(conn) => self.game_done(conn, now),
            Event::Disconnected(conn, why) => {
                self.remove(conn, DropReason::Disconnected, &why, now)
            }
            Event::Link(conn, link) => {
                if let Some(client) = self.clients.get_mut(&conn) {
                    client.link = link;
                }
            }
            Event::Snapshot(conn, chunk) => self.take_snapshot(conn, chunk),
            Event::CannotPlay(conn, reason) => self.cannot_play(conn, &reason, now),
            Event::BadSnapshot(conn, tick, reason) => self.bad_snapshot(conn, tick, &reason, now),
            Event::Trace(conn, tick, report) => self.take_trace(conn, tick, &report),
            Event::Capacity(conn, report) => {
                let Some(Role::Player(player)) =
                    self.clients.get(&conn).filter(|c| !c.done).map(|c| c.role)
                else {
                    return;
                };
                if !self.config.speed_control {
                    return;
                }
                let Some(game) = &mut self.game else {
                    return;
                };
                let before = game.speed.speed();
                if let Some(change) = game.speed.report(player, report, now) {
                    self.announce_speed(change, before);
                }
            }
        }
    }

    /// Tells every client the new speed, the tick it starts at (a moment
    /// of play at the `before` speed after the next tick to bundle, and
    /// never before an earlier announcement's tick) and the backlog every
    /// client forgives there.
    fn announce_speed(&mut self, change: SpeedChange, before: Percent) {
        let Some(game) = &mut self.game else {
            return;
        };
        let lead = lead_ticks(self.config.tick_rate, before);
        let from_tick = game.relay.next_tick().plus(lead).max(game.speed_from);
        game.speed_from = from_tick;
        let postpone = game.speed.backlog_at(from_tick, before);
        // The inputs are timed against the schedule the clients will keep.
        let full_ns = 1_000_000_000 / u64::from(self.config.tick_rate.max(1));
        let tick = Duration::from_nanos(change.percent.tick_ns(full_ns));
        let sent = Duration::from_micros(postpone.as_micros().min(u128::from(u32::MAX)) as u64);
        game.relay.change_pace(from_tick, tick, sent);
        if game.recording {
            let percent = change.percent;
            let event = lockstep_protocol::GameEvent::Speed { percent };
            self.actions
                .push(Action::Record(Recording::Event(from_tick, event)));
        }
        let slowest = self.name_of(change.slowest);
        info!(
            percent = change.percent.0,
            %from_tick,
            reason = change.reason.as_str(),
            %slowest,
            capacity = change.capacity.0,
            postpone_ms = postpone.as_millis() as u64,
            "game speed"
        );
        self.tell_everyone(&ServerMessage::Speed {
            from_tick,
            percent: change.percent,
            postpone_us: sent.as_micros() as u32,
        });
        self.emit(ServerEvent::Speed {
            percent: change.percent,
            from_tick,
            reason: change.reason,
            slowest,
            capacity: change.capacity,
            postpone,
        });
    }

    /// Queues `message` for every client, players and spectators.
    fn tell_everyone(&mut self, message: &ServerMessage) {
        for &conn in self.clients.keys() {
            self.actions.send(conn, message.clone());
        }
    }

    /// How many players are in and whether they play, for the LAN beacon.
    pub fn occupancy(&self) -> crate::Occupancy {
        crate::Occupancy {
            players: u8::try_from(self.connected_players().len()).unwrap_or(u8::MAX),
            playing: self.game.is_some(),
        }
    }

    /// The slots of the players connected now.
    fn connected_players(&self) -> BTreeSet<PlayerId> {
        self.clients
            .values()
            .filter_map(|c| match c.role {
                Role::Player(player) => Some(player),
                Role::Spectator => None,
            })
            .collect()
    }

    fn player_conn(&self, player: PlayerId) -> Option<ConnId> {
        self.clients
            .iter()
            .find(|(_, c)| c.role == Role::Player(player))
            .map(|(&id, _)| id)
    }

    /// The name of `player`: the running game's roster says it, else the
    /// client in that slot.
    fn name_of(&self, player: PlayerId) -> String {
        self.game
            .iter()
            .flat_map(|game| &game.roster)
            .find(|r| r.id == player)
            .map(|r| r.name.clone())
            .or_else(|| {
                self.clients
                    .values()
                    .find(|c| c.role == Role::Player(player))
                    .map(|c| c.name.clone())
            })
            .unwrap_or_else(|| format!("player{player}"))
    }

    /// A client is gone (it said Leave, or its connection ended): a
    /// spectator or a player in the lobby is forgotten at once, a player
    /// of the running game leaves it at the tick the relay picks.
    fn remove(&mut self, conn: ConnId, reason: DropReason, why: &str, now: Duration) {
        let Some(client) = self.clients.get(&conn) else {
            return;
        };
        match (client.role, &mut self.game) {
            (Role::Spectator, _) => {
                info!(name = %client.name, why, "spectator left");
                self.clients.remove(&conn);
                self.actions.push(Action::Release(conn));
            }
            (Role::Player(player), None) => {
                info!(%player, name = %client.name, why, "left the lobby");
                self.clients.remove(&conn);
                self.actions.push(Action::Release(conn));
                self.lobby_changed(now, self.lobby.unix_time);
            }
            (Role::Player(player), Some(_)) if client.done => {
                info!(%player, name = %client.name, why, "left while waiting for the next game");
                self.clients.remove(&conn);
                self.actions.push(Action::Release(conn));
            }
            (Role::Player(player), Some(game)) => {
                if client.rejoining {
                    self.clients.remove(&conn);
                    self.actions.push(Action::Release(conn));
                    self.advance(now);
                } else if let Some(departure) = game.relay.remove(player, reason) {
                    self.report_departure(departure);
                    self.advance(now);
                }
            }
        }
    }

    /// When the session next has work that cannot wait for the periodic
    /// poll: a late input to stand in for ([`crate::Relay::next_stand_in`]).
    pub fn next_deadline(&self) -> Option<Duration> {
        self.game.as_ref()?.relay.next_stand_in()
    }

    /// The periodic work, every [`POLL_INTERVAL`] and at every
    /// [`Session::next_deadline`]: drops silent players,
    /// stands in for late ones, repeats bundles to clients that lack them,
    /// and sends the lag indicator when no bundle carried it.
    pub fn poll(&mut self, now: Duration) {
        // The players a resumed game still waits for when the wait is over
        // go first, as not back; after that a player back but silent is
        // dropped like any other, or the game could wait for it for ever.
        if self.game.as_ref().is_some_and(|g| g.resuming.is_some()) {
            self.settle_resume(now);
        }
        let Some(game) = &mut self.game else {
            self.refresh_lobby(now);
            return;
        };
        // A resumed game waits for its players without standing in for or
        // dropping anyone until they are back or the wait is over.
        let resuming = game.resuming.as_ref().is_some_and(|r| now < r.until);
        let (departures, substitutions) = if resuming {
            (Vec::new(), Vec::new())
        } else {
            (game.relay.poll_timeouts(now), game.relay.poll_laggards(now))
        };
        for departure in departures {
            self.report_departure(departure);
        }
        for substitution in substitutions {
            debug!(
                player = %substitution.player,
                tick = %substitution.tick,
                waited_ms = substitution.waited.as_millis() as u64,
                "late input stood in for"
            );
            let report = self
                .game
                .as_mut()
                .and_then(|game| game.laggards.stood_in(substitution, now));
            if let Some(report) = report {
                self.report_laggard(report);
            }
        }
        let due = self
            .game
            .as_mut()
            .map(|game| game.laggards.due(now))
            .unwrap_or_default();
        for report in due {
            self.report_laggard(report);
        }
        self.advance(now);
        self.resend_stale(now);
        self.send_lone_status(now);
        self.settle_pinpoints(Some(now));
        self.ask_for_snapshot(now);
    }

    /// First half of a shutdown: every client is told the server is going.
    /// The driver gives the writers a moment to put that on the wire, then
    /// calls [`Session::shut_down`].
    pub fn announce_shutdown(&mut self) {
        self.tell_everyone(&ServerMessage::Ended {
            reason: "the server is shutting down".into(),
        });
    }

    /// Closes the recording and every connection, after the verdict of a
    /// game still running.
    pub fn shut_down(&mut self) {
        self.settle_pinpoints(None);
        self.report_verdict();
        if self.game.take().is_some_and(|game| game.recording) {
            let finish = Recording::Finish("the server shut down".into());
            self.actions.push(Action::Record(finish));
        }
        for conn in std::mem::take(&mut self.clients).into_keys() {
            self.actions.push(Action::Close(
                conn,
                CloseCode::Shutdown,
                "the server is shutting down",
            ));
        }
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod without_game;
