//! Who gets in: a join's name is checked, a lobby player gets the first
//! free slot, a spectator gets the game so far, and a player of the
//! running game that connects again under its name takes its slot back.
//!
//! A reconnection never pushes out a live player: the old connection must
//! first fall silent for [`TAKEOVER_SILENCE`], and a reconnection still
//! facing a live old connection after [`TAKEOVER_PATIENCE`] is refused.
//! Once the old slot has been bundled out, the player comes back a lead of
//! ticks ahead, after fast-forwarding through the history it is sent.

use std::time::Duration;

use lockstep_protocol::{
    Percent, PlayerId, Refusal, SelfTest, ServerMessage, Tick, MAX_SELF_TESTS,
};
use tracing::info;

use super::snapshots::ServedTo;
use super::{Action, Client, CloseCode, ConnId, Join, Outgoing, Role, Session};
use crate::relay::DropReason;
use crate::ServerEvent;

/// Silence after which a player's slot may be taken over by a new
/// connection under its name. An honest client sends something every
/// 100 ms at least, so half a second of silence means it is gone; a live
/// player cannot be pushed out by someone borrowing its name.
const TAKEOVER_SILENCE: Duration = Duration::from_millis(500);

/// How long a reconnection waits for the old connection to fall silent
/// before it is refused.
const TAKEOVER_PATIENCE: Duration = Duration::from_secs(3);

/// Longest accepted player name, in characters.
pub const MAX_NAME_CHARS: usize = 32;

impl Session {
    /// Answers a join ([`super::Event::Join`]) and starts the game when
    /// the lobby is full and ready.
    pub(super) fn admit(&mut self, conn: ConnId, join: Join, now: Duration) {
        let Join {
            name,
            spectate,
            ready,
            platform,
            self_tests,
            link,
            unix_time,
            resume,
        } = join;
        let self_test = match self.check_self_test(&name, &self_tests) {
            Ok(hash) => hash,
            Err(refusal) => {
                self.actions.push(Action::Reply(conn, Err(refusal)));
                self.actions.push(Action::Release(conn));
                return;
            }
        };
        let client = Client {
            name,
            self_test,
            role: Role::Spectator,
            platform,
            link,
            last_sent: now,
            sent_through: Tick(0),
            ack: Tick(0),
            rejoining: false,
            joined_at: now,
            ready,
            done: false,
            resume,
            served: None,
        };
        let result = self.join(conn, client, spectate, now);
        let refused = result.is_err();
        self.actions.push(Action::Reply(conn, result));
        if refused {
            self.actions.push(Action::Release(conn));
        }
        if !refused {
            self.lobby.unix_time = unix_time;
            self.lobby_changed(now, unix_time);
        }
    }

    /// Refuses a client whose machine or build computes the simulation's
    /// self-test differently from this server's build, or, for a game the
    /// server was not built with, from the hash the game pins: it would
    /// desync the game, so it is stopped before it takes a slot or watches.
    /// Returns the hash it reported, which the players of a game the server
    /// was not built with must agree on before it starts
    /// ([`super::lobby`]).
    fn check_self_test(&self, name: &str, self_tests: &[SelfTest]) -> Result<u64, Refusal> {
        let game = &self.config.spec.name;
        let reported = self_tests
            .iter()
            .take(MAX_SELF_TESTS)
            .find(|test| test.game == *game);
        let reason = match (reported, self.config.self_test) {
            (Some(test), Some(expected)) if test.hash == expected => return Ok(test.hash),
            (Some(test), Some(expected)) => format!(
                "this machine computes the simulation differently (self-test {:016x}, \
                 expected {expected:016x}); it would desync the game",
                test.hash
            ),
            (Some(test), None) => match test.pinned {
                Some(pin) if pin != test.hash => format!(
                    "this machine computes {game}'s self-test as {:016x}, but the game pins \
                     {pin:016x}; it would desync the game",
                    test.hash
                ),
                _ => return Ok(test.hash),
            },
            (None, _) => format!("this client cannot play {game}, the game this server hosts"),
        };
        info!(%name, %reason, "join refused");
        Err(Refusal { reason })
    }

    fn join(
        &mut self,
        conn: ConnId,
        mut client: Client,
        spectate: bool,
        now: Duration,
    ) -> Result<(), Refusal> {
        let name = client.name.clone();
        let refuse = |reason: String| {
            info!(%name, %reason, "join refused");
            Err(Refusal { reason })
        };
        if name.trim().is_empty()
            || name.chars().count() > MAX_NAME_CHARS
            || name.chars().any(char::is_control)
        {
            return refuse(format!(
                "the name must be 1 to {MAX_NAME_CHARS} printable characters"
            ));
        }
        if spectate {
            info!(%name, "spectator joined");
            self.clients.insert(conn, client);
            if let Some(next) = self.send_game_so_far(conn, None, Tick(0)) {
                if let Some(client) = self.clients.get_mut(&conn) {
                    client.ack = next;
                }
            }
            return Ok(());
        }
        if self.game.is_some() {
            return self.rejoin(conn, client, now);
        }
        if client.resume.is_some() {
            // It kept a game this server no longer runs: joining the lobby
            // would only start another game without it noticing.
            return refuse(
                "this server is not running your game any more (it was started again without \
                 --resume, or the game ended)"
                    .into(),
            );
        }
        let taken = self
            .clients
            .values()
            .any(|c| c.name == name && matches!(c.role, Role::Player(_)));
        if taken {
            return refuse(format!("the name {name:?} is already taken in this game"));
        }
        let used = self.connected_players();
        let Some(id) = (0..=u8::MAX).map(PlayerId).find(|id| !used.contains(id)) else {
            return refuse("the server is full".into());
        };
        client.role = Role::Player(id);
        self.actions.send(
            conn,
            ServerMessage::Welcome {
                player: id,
                players_needed: self.config.players,
            },
        );
        info!(player = %id, %name, platform = %client.platform, "joined the lobby");
        self.emit(ServerEvent::Joined {
            player: id,
            name: name.clone(),
        });
        self.emit(ServerEvent::Platform {
            player: id,
            name,
            platform: client.platform.clone(),
        });
        self.clients.insert(conn, client);
        Ok(())
    }

    /// A player of the running game connects again under its name: its old
    /// slot (if still there) is dropped, and it comes back once that slot
    /// has been bundled out.
    fn rejoin(&mut self, conn: ConnId, mut client: Client, now: Duration) -> Result<(), Refusal> {
        let Some(player) = self
            .game
            .iter()
            .flat_map(|game| &game.roster)
            .find(|r| r.name == client.name)
            .map(|r| r.id)
        else {
            let reason = "a game is already running on this server: watch it with --spectate, \
                          or join the next one"
                .to_string();
            info!(name = %client.name, %reason, "join refused");
            return Err(Refusal { reason });
        };
        if self.awaited(player) {
            self.reconnect(conn, client, player, now);
            return Ok(());
        }
        if self
            .clients
            .values()
            .any(|c| c.rejoining && c.role == Role::Player(player))
        {
            let reason = format!("{} is already reconnecting", client.name);
            info!(%reason, "join refused");
            return Err(Refusal { reason });
        }
        info!(%player, name = %client.name, "player reconnecting");
        client.role = Role::Player(player);
        client.rejoining = true;
        client.joined_at = now;
        self.clients.insert(conn, client);
        self.advance(now);
        Ok(())
    }

    /// Drops the old slots of reconnecting players once their old
    /// connection fell silent, and refuses reconnections whose old
    /// connection is still alive after [`TAKEOVER_PATIENCE`]. Returns
    /// whether a slot was dropped.
    pub(super) fn take_over_slots(&mut self, now: Duration) -> bool {
        let Some(game) = &self.game else {
            return false;
        };
        let relay = &game.relay;
        let mut takeovers = Vec::new();
        let mut refused = Vec::new();
        for (&conn, client) in self.clients.iter().filter(|(_, c)| c.rejoining) {
            let Role::Player(player) = client.role else {
                continue;
            };
            match relay.silence(player, now) {
                Some(quiet) if quiet >= TAKEOVER_SILENCE => takeovers.push(player),
                Some(_) if now.saturating_sub(client.joined_at) >= TAKEOVER_PATIENCE => {
                    refused.push(conn);
                }
                _ => {}
            }
        }
        for conn in refused {
            if let Some(client) = self.clients.remove(&conn) {
                let reason = format!(
                    "the name {:?} belongs to a player who is still connected",
                    client.name
                );
                info!(name = %client.name, %reason, "reconnection refused");
                self.actions
                    .send(conn, ServerMessage::Refused(Refusal { reason }));
                self.actions.push(Action::Release(conn));
            }
        }
        let dropped = !takeovers.is_empty();
        for player in takeovers {
            let old = self
                .clients
                .iter()
                .find(|(_, c)| c.role == Role::Player(player) && !c.rejoining)
                .map(|(&id, _)| id);
            if let Some(old) = old {
                if self.clients.remove(&old).is_some() {
                    self.actions.push(Action::Close(
                        old,
                        CloseCode::Dropped,
                        "the player connected again elsewhere",
                    ));
                }
            }
            let departure = self
                .game
                .as_mut()
                .and_then(|game| game.relay.remove(player, DropReason::Reconnected));
            if let Some(departure) = departure {
                self.report_departure(departure);
            }
        }
        dropped
    }

    /// Sends `conn` the running game so far: a Start (as `you`, giving
    /// inputs from `first_input_tick`), the game speed unless it is full,
    /// and every bundle until now as History, which the client
    /// fast-forwards through. Returns the tick the live bundles go on
    /// from; `None` when no game runs.
    pub(super) fn send_game_so_far(
        &mut self,
        conn: ConnId,
        you: Option<PlayerId>,
        first_input_tick: Tick,
    ) -> Option<Tick> {
        let game = self.game.as_ref()?;
        let relay = &game.relay;
        let next = relay.next_tick();
        // A client that kept its world from this game gets the bundles it
        // lacks, if the relay still holds them all.
        let kept = self
            .clients
            .get(&conn)
            .and_then(|c| c.resume)
            .filter(|r| r.seed == game.seed)
            .map(|r| r.next_bundle)
            .filter(|&from| relay.first_kept() <= from && from <= next);
        // Else from the verified snapshot when there is one (the relay may
        // no longer hold the bundles before it), or without the game the
        // newest kept, which the client checks; else from tick 0.
        let snapshot = match kept {
            Some(_) => None,
            None => game.snapshots.for_joiner(),
        };
        let from = kept.unwrap_or(snapshot.as_ref().map_or(Tick(0), |s| s.tick));
        let (first_tick, history) = relay.history(from, next);
        let history = history.to_vec();
        let mut start = game.start_message(&self.config, you, first_input_tick, next);
        start.snapshot = snapshot.as_ref().map(|s| s.tick);
        start.snapshot_hash = snapshot.as_ref().map(|s| s.hash);
        start.resume = kept;
        if let Some(client) = self.clients.get_mut(&conn) {
            client.served = snapshot.as_ref().map(|s| ServedTo {
                tick: s.tick,
                sender: s.sender,
                first_input_tick,
            });
        }
        if let Some(from) = kept {
            info!(%from, bundles = history.len(), "sending a reconnected client the bundles it lacks");
        }
        let (percent, from_tick) = (game.speed.speed(), game.speed_from);
        self.actions.send(conn, ServerMessage::Start(start));
        if percent != Percent::FULL {
            // Its clock starts now: nothing to forgive.
            let speed = ServerMessage::Speed {
                from_tick,
                percent,
                postpone_us: 0,
            };
            self.actions.send(conn, speed);
        }
        if let Some(snapshot) = snapshot {
            let checked = match snapshot.sender {
                Some(sender) => format!("by the joiner (sent by {})", self.name_of(sender)),
                None => "by the server".to_string(),
            };
            info!(tick = %snapshot.tick, bytes = snapshot.bytes.len(), bundles = history.len(), %checked, "sending the game from the snapshot");
            self.actions.push(Action::Control(
                conn,
                Outgoing::Snapshot {
                    tick: snapshot.tick,
                    bytes: snapshot.bytes,
                },
            ));
        }
        self.actions.push(Action::Control(
            conn,
            Outgoing::History {
                first_tick,
                bundles: history,
            },
        ));
        Some(next)
    }

    /// Finishes the rejoins whose old slot is gone: the player comes back
    /// after a lead long enough to fast-forward through the history.
    pub(super) fn complete_rejoins(&mut self, now: Duration) {
        let Some(game) = &mut self.game else {
            return;
        };
        let relay = &mut game.relay;
        let next = relay.next_tick();
        // One second of game, plus a tick for every thousand ticks of
        // history to replay (a catch-up runs at about a million ticks/s):
        // those since the verified snapshot the joiner starts from.
        let from = game.snapshots.for_joiner().map_or(Tick(0), |s| s.tick);
        let lead = u32::from(self.config.tick_rate) + next.since(from) / 1000;
        let mut started = Vec::new();
        for (&conn, client) in self.clients.iter_mut().filter(|(_, c)| c.rejoining) {
            let Role::Player(player) = client.role else {
                continue;
            };
            let Some(first) = relay.rejoin(player, lead, now) else {
                continue;
            };
            client.rejoining = false;
            started.push((conn, player, first));
        }
        for (conn, player, first) in started {
            if let Some(client) = self.clients.get(&conn) {
                let platform = client.platform.clone();
                self.set_platform(player, platform);
                self.send_game_so_far(conn, Some(player), first);
            }
            let name = self.name_of(player);
            info!(%player, %name, first_tick = %first, "player rejoins");
            self.emit(ServerEvent::Rejoined {
                player,
                name,
                tick: first,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use lockstep_protocol::{PlayerId, Refusal, ServerMessage, Start, Tick};

    use super::super::harness::{ms, Harness, Out};
    use super::super::CloseCode;
    use super::{MAX_NAME_CHARS, TAKEOVER_PATIENCE, TAKEOVER_SILENCE};

    fn refused(out: &Out, id: usize) -> String {
        match out.reply(id) {
            Some(Err(Refusal { reason })) => {
                assert!(out.released(id), "a refused join is let go");
                reason
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    /// The Start messages among what `id` was sent.
    fn starts(out: &Out, id: usize) -> Vec<Start> {
        out.messages(id)
            .into_iter()
            .filter_map(|message| match message {
                ServerMessage::Start(start) => Some(start),
                _ => None,
            })
            .collect()
    }

    /// ann and bob have played ticks `0..10` at time zero.
    fn two_playing() -> Harness {
        let mut h = Harness::players(2);
        h.join(1, "ann");
        h.join(2, "bob");
        h.inputs(1, 0..10);
        h.inputs(2, 0..10);
        h
    }

    #[test]
    fn names_must_be_one_to_32_printable_characters() {
        let mut h = Harness::players(4);
        let too_long = "x".repeat(MAX_NAME_CHARS + 1);
        for (id, name) in [
            (1, ""),
            (2, "   "),
            (3, "bell\u{7}"),
            (4, too_long.as_str()),
        ] {
            let out = h.join(id, name);
            assert_eq!(
                refused(&out, id),
                "the name must be 1 to 32 printable characters"
            );
        }
        let longest = "é".repeat(MAX_NAME_CHARS);
        assert_eq!(h.join(5, &longest).reply(5), Some(Ok(())));
    }

    #[test]
    fn a_client_whose_self_test_differs_is_refused_before_it_takes_a_slot() {
        let mut h = Harness::players(2);
        let expected = crate::TEST_GAME.self_test();
        let mut self_tests = super::super::harness::honest_self_tests();
        self_tests[0].hash ^= 1;
        let odd = h.join_with_self_tests(1, "ann", self_tests);
        assert_eq!(
            refused(&odd, 1),
            format!(
                "this machine computes the simulation differently (self-test {:016x}, \
                 expected {expected:016x}); it would desync the game",
                expected ^ 1
            )
        );
        assert!(odd.events().is_empty(), "no slot, no joined line");

        let honest = h.join_with_self_tests(2, "bob", super::super::harness::honest_self_tests());
        assert_eq!(honest.reply(2), Some(Ok(())));
        assert_eq!(
            honest.messages(2),
            vec![ServerMessage::Welcome {
                player: PlayerId(0),
                players_needed: 2
            }],
            "the refused client took no slot"
        );
    }

    #[test]
    fn a_client_without_the_hosted_game_is_refused_with_its_name() {
        let mut h = Harness::players(2);
        let other = vec![lockstep_protocol::SelfTest {
            game: "chess".into(),
            hash: crate::TEST_GAME.self_test(),
            pinned: None,
        }];
        let out = h.join_with_self_tests(1, "ann", other);
        assert_eq!(
            refused(&out, 1),
            "this client cannot play sum, the game this server hosts"
        );
        let none = h.join_with_self_tests(2, "bob", Vec::new());
        assert_eq!(
            refused(&none, 2),
            "this client cannot play sum, the game this server hosts"
        );
    }

    #[test]
    fn a_name_is_taken_once_per_lobby() {
        let mut h = Harness::players(3);
        h.join(1, "ann");
        let again = h.join(2, "ann");
        assert_eq!(
            refused(&again, 2),
            "the name \"ann\" is already taken in this game"
        );
        assert!(again.events().is_empty());
    }

    #[test]
    fn a_stranger_cannot_join_a_running_game_but_may_watch_it() {
        let mut h = two_playing();
        let stranger = h.join(3, "cat");
        assert!(refused(&stranger, 3).contains("watch it with --spectate"));
        assert_eq!(h.spectate(4, "cat").reply(4), Some(Ok(())));
    }

    #[test]
    fn a_lobby_player_that_leaves_frees_its_slot() {
        let mut h = Harness::players(3);
        h.join(1, "ann");
        h.join(2, "bob");
        assert!(h.disconnect(1).released(1));
        let cat = h.join(3, "cat");
        assert_eq!(
            cat.messages(3),
            vec![ServerMessage::Welcome {
                player: PlayerId(0),
                players_needed: 3
            }]
        );
    }

    #[test]
    fn a_reconnection_takes_the_slot_over_only_after_the_old_connection_falls_silent() {
        let mut h = two_playing();
        h.advance_to(ms(100));
        let asked = h.join(3, "bob");
        assert_eq!(asked.reply(3), Some(Ok(())), "it waits for the slot");
        assert!(starts(&asked, 3).is_empty());

        // The old connection is still alive: nobody can push it out.
        h.advance_to(ms(400));
        h.inputs(1, 10..40);
        h.inputs(2, 10..11);
        let alive = h.advance_to(ms(400) + TAKEOVER_SILENCE - ms(10));
        assert_eq!(alive.closed(2), None);
        assert!(starts(&alive, 3).is_empty());

        // Silent for TAKEOVER_SILENCE: the old slot ends at its first
        // missing tick and the new connection gets it back after a lead.
        let taken = h.advance(ms(10));
        assert_eq!(
            taken.closed(2),
            Some((CloseCode::Dropped, "the player connected again elsewhere"))
        );
        assert_eq!(
            taken.bundle(1, Tick(11)).map(|b| b.left),
            Some(vec![PlayerId(1)])
        );
        // One second of game at 60 Hz after the 40 bundled ticks.
        let first_tick = Tick(100);
        assert_eq!(
            taken.reports(),
            vec![
                "dropped player=1 name=bob tick=11 reason=reconnected".to_string(),
                format!("rejoined player=1 name=bob tick={first_tick}"),
            ]
        );
        let [start] = &starts(&taken, 3)[..] else {
            panic!("expected one Start, got {:?}", taken.messages(3));
        };
        assert_eq!(start.you, Some(PlayerId(1)));
        assert_eq!(start.first_input_tick, first_tick);
        assert_eq!(start.history, 40);
        assert_eq!(taken.histories(3)[0].1.len(), 40);
    }

    #[test]
    fn a_reconnection_is_refused_when_the_old_connection_stays_active() {
        let mut h = two_playing();
        h.advance_to(ms(100));
        h.join(3, "bob");
        let mut seen = Out::default();
        while h.now < ms(100) + TAKEOVER_PATIENCE - ms(100) {
            seen.0.extend(h.advance(ms(100)).0);
            h.heartbeat(1);
            h.heartbeat(2);
        }
        assert_eq!(seen.reply(3), None);
        assert!(!seen.released(3), "still waiting after {:?}", h.now);

        let out = h.advance(ms(100));
        assert_eq!(
            out.messages(3),
            vec![ServerMessage::Refused(Refusal {
                reason: "the name \"bob\" belongs to a player who is still connected".into()
            })]
        );
        assert!(out.released(3), "its writer flushes the refusal");
        assert_eq!(out.closed(2), None);
        assert!(out.events().is_empty());
    }

    #[test]
    fn only_one_reconnection_per_player_waits() {
        let mut h = two_playing();
        h.join(3, "bob");
        let second = h.join(4, "bob");
        assert_eq!(refused(&second, 4), "bob is already reconnecting");
    }

    #[test]
    fn a_player_whose_old_connection_is_gone_rejoins_at_once() {
        let mut h = two_playing();
        h.inputs(1, 10..20);
        let lost = h.disconnect(2);
        assert_eq!(
            lost.closed(2),
            Some((CloseCode::Dropped, "removed from the game"))
        );
        let back = h.join(3, "bob");
        assert_eq!(back.reply(3), Some(Ok(())));
        assert_eq!(back.reports(), vec!["rejoined player=1 name=bob tick=80"]);
        assert_eq!(starts(&back, 3)[0].first_input_tick, Tick(80));
    }
}
