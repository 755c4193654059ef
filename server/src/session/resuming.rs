//! A game resumed after the server died (`--resume`): the session is
//! rebuilt from the replay (`crate::resume`), waits for the players to
//! reconnect, each keeping its world and its slot, and runs again once the
//! resumed game's first tick is bundled. A player still missing when the
//! wait is over is dropped at an announced tick, as any silent player is.

use std::collections::BTreeSet;
use std::time::Duration;

use lockstep_protocol::PlayerId;
use tracing::info;

use super::running::{Resuming, RunningGame};
use super::{Action, Client, ConnId, Role, Session};
use crate::recording::Recording;
use crate::relay::{DropReason, Relay};
use crate::resume::ResumedGame;
use crate::ServerEvent;

impl Session {
    /// Goes on with a game the server was running when it died, from its
    /// replay (`--resume`): the relay holds every recorded bundle, the
    /// replay file grows on, and the game waits, with no stand-ins and no
    /// drops, until every player still in it has reconnected or
    /// [`crate::Config::resume_wait`] is over; then those still missing
    /// are dropped at an announced tick as always. The desyncs found
    /// before the restart are known again from the replay's reports.
    pub fn resume(&mut self, mut game: ResumedGame, now: Duration) {
        let header = game.header.clone();
        self.lobby.games = 1;
        self.config.tick_rate = header.tick_rate;
        self.config.input_delay = header.input_delay;
        self.config.spec = header.spec.clone();
        self.config.hash_interval = header.hash_interval;
        self.config.players = u8::try_from(header.roster.len()).unwrap_or(u8::MAX);
        let next = game.next_tick();
        let relay = Relay::resumed(
            &game.players,
            game.bundles,
            self.config.drop_timeout,
            self.config.laggard_tolerance,
            now,
            header.tick_rate,
        );
        let mut running = RunningGame::new(
            &self.config,
            header.seed,
            header.roster.clone(),
            header.platforms.clone(),
            relay,
            next,
        );
        running.recording = true;
        self.game = Some(running);
        self.actions.push(Action::Record(Recording::Resume {
            path: game.path.clone(),
            valid_len: game.valid_len,
            next_tick: next,
        }));
        if let Some(tail) = &game.damaged_tail {
            info!(path = %game.path.display(), tail = %tail, "cut off the record the crash left half written");
        }
        let reports = std::mem::take(&mut game.reports);
        self.judge_recorded(reports, &game.announced, now);
        let mut waiting: BTreeSet<PlayerId> = game.players.iter().map(|&(id, _)| id).collect();
        for player in game.leaving {
            waiting.remove(&player);
            let departure = self
                .game
                .as_mut()
                .and_then(|running| running.relay.remove(player, DropReason::Left));
            if let Some(departure) = departure {
                self.report_departure(departure);
            }
        }
        let names = waiting.iter().map(|&id| self.name_of(id)).collect();
        info!(tick = %next, players = waiting.len(), "game resumed from its replay; waiting for the players");
        self.emit(ServerEvent::Resuming {
            tick: next,
            waiting: names,
        });
        let until = now + self.config.resume_wait;
        if let Some(running) = &mut self.game {
            running.resuming = Some(Resuming {
                tick: next,
                waiting,
                until,
            });
        }
        self.forget_departed();
        self.settle_pinpoints(Some(now));
    }

    /// The resumed game that still waits for its players, if one does.
    fn resuming(&mut self) -> Option<&mut Resuming> {
        self.game.as_mut()?.resuming.as_mut()
    }

    /// Whether `player` is a player of a resumed game not back yet.
    pub(super) fn awaited(&self, player: PlayerId) -> bool {
        self.game
            .as_ref()
            .and_then(|game| game.resuming.as_ref())
            .is_some_and(|r| r.waiting.contains(&player))
    }

    /// After a restart, drops the players still missing once the wait is
    /// over, and marks the game running again once its first tick is
    /// bundled: the relay's clock starts there, as the clients' do when
    /// that bundle reaches them.
    pub(super) fn settle_resume(&mut self, now: Duration) {
        let Some(resuming) = self.resuming() else {
            return;
        };
        if now >= resuming.until && !resuming.waiting.is_empty() {
            let missing = std::mem::take(&mut resuming.waiting);
            for player in missing {
                let departure = self
                    .game
                    .as_mut()
                    .and_then(|game| game.relay.remove(player, DropReason::NotBack));
                if let Some(departure) = departure {
                    self.report_departure(departure);
                }
            }
            self.bundle_ready(now);
            self.forget_departed();
        }
        let Some(game) = &mut self.game else {
            return;
        };
        let Some(resuming) = &game.resuming else {
            return;
        };
        if game.relay.next_tick() > resuming.tick {
            let tick = resuming.tick;
            game.relay.restart_clock(tick.next(), now);
            game.resuming = None;
            info!(%tick, "the resumed game runs again");
            self.emit(ServerEvent::Resumed { tick });
        }
    }

    /// A player of a game resumed after a restart is back: it takes its
    /// slot again as it was (nobody dropped it), gives inputs from the
    /// resumed game's first tick, and is sent the bundles it lacks.
    pub(super) fn reconnect(
        &mut self,
        conn: ConnId,
        mut client: Client,
        player: PlayerId,
        now: Duration,
    ) {
        client.role = Role::Player(player);
        let name = client.name.clone();
        let platform = client.platform.clone();
        self.clients.insert(conn, client);
        self.set_platform(player, platform);
        let Some(resuming) = self.resuming() else {
            return;
        };
        resuming.waiting.remove(&player);
        let (tick, still) = (resuming.tick, resuming.waiting.len());
        self.send_game_so_far(conn, Some(player), tick);
        info!(%player, %name, %tick, waiting = still, "player back in the resumed game");
        self.emit(ServerEvent::Reconnected { player, name, tick });
        self.advance(now);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use lockstep_protocol::{
        Bundle, GameEvent, Input, PlayerId, PlayerInput, ReplayHeader, RosterEntry, Tick,
        PROTOCOL_VERSION,
    };

    use super::super::harness::{ms, platform, Harness, TRIPLE};
    use super::super::Action;
    use crate::recording::Recording;
    use crate::resume::ResumedGame;
    use crate::{Config, ServerEvent};

    const SEED: u64 = 77;

    /// A game of ann (0), bob (1) and cy (2) recorded up to tick 30, as
    /// the replay of a server that died would give it.
    fn game(dir: &str) -> ResumedGame {
        let roster: Vec<RosterEntry> = ["ann", "bob", "cy"]
            .iter()
            .enumerate()
            .map(|(i, name)| RosterEntry {
                id: PlayerId(i as u8),
                name: (*name).into(),
            })
            .collect();
        let bundle = Bundle {
            inputs: (0..3)
                .map(|p| PlayerInput {
                    player: PlayerId(p),
                    input: Input::default(),
                })
                .collect(),
            ..Bundle::default()
        };
        ResumedGame {
            // Nothing there: the session goes on without recording.
            path: std::env::temp_dir().join(dir).join("none.lsreplay"),
            valid_len: 0,
            header: ReplayHeader {
                protocol_version: PROTOCOL_VERSION,
                build: "test".into(),
                recorder: "server".into(),
                started_unix: 0,
                seed: SEED,
                tick_rate: 60,
                input_delay: 3,
                hash_interval: 15,
                spec: crate::TEST_GAME.default_spec(),
                roster,
                platforms: Vec::new(),
            },
            bundles: vec![bundle; 30],
            players: (0..3).map(|p| (PlayerId(p), Tick(0))).collect(),
            leaving: Vec::new(),
            reports: Vec::new(),
            announced: Default::default(),
            damaged_tail: None,
        }
    }

    /// [`game`] on three x86-64 Linux machines, whose replay holds the
    /// reports of ticks 15 and 30, bob's of tick 30 apart from the
    /// others'; `announced` when the server had announced that desync
    /// before it died.
    fn desynced_game(announced: bool) -> ResumedGame {
        let mut game = game("lockstep-no-such-dir");
        game.header.platforms = (0..3).map(|p| (PlayerId(p), platform(TRIPLE))).collect();
        for (tick, bob) in [(15, 1), (30, 2)] {
            for (player, hash) in [(0, 1), (1, bob), (2, 1)] {
                game.reports.push((Tick(tick), PlayerId(player), hash));
            }
        }
        if announced {
            game.announced.insert(Tick(30));
        }
        game
    }

    /// A server started with `--resume`, which waits `wait` for the
    /// players, resuming `game`.
    fn resuming(game: ResumedGame, wait: Duration) -> Harness {
        let mut h = Harness::new(Config {
            players: 9,
            resume_wait: wait,
            ..Config::new(crate::TEST_GAME)
        });
        h.session.resume(game, h.now);
        h
    }

    fn resumed(wait: Duration) -> Harness {
        let mut h = resuming(game("lockstep-no-such-dir"), wait);
        h.actions();
        h
    }

    #[test]
    fn a_resumed_game_waits_for_every_player_then_runs_on_from_its_last_bundle() {
        let mut h = resumed(Duration::from_secs(30));
        assert_eq!(h.next_tick(), Tick(30));
        let out = h.join_keeping(1, "ann", SEED, 28);
        let start = &out.starts(1)[0];
        assert_eq!(start.first_input_tick, Tick(30));
        assert_eq!(start.history, 30);
        assert_eq!(start.resume, Some(Tick(28)));
        assert_eq!(start.snapshot, None);
        let histories = out.histories(1);
        assert_eq!(histories[0].0, Tick(28));
        assert_eq!(histories[0].1.len(), 2, "only the bundles ann lacks");
        h.inputs(1, 30..33);
        // bob and cy are silent for far longer than the drop timeout and
        // the laggard tolerance: the game waits for them all the same.
        let out = h.advance(ms(10_000));
        assert!(out.events().is_empty(), "{:?}", out.events());
        assert_eq!(h.next_tick(), Tick(30));
        // bob lost nothing (it is at the last bundle); cy was started
        // again and has nothing: it gets the game from tick 0.
        let out = h.join_keeping(2, "bob", SEED, 30);
        assert_eq!(out.histories(2)[0].1.len(), 0);
        let out = h.join(3, "cy");
        assert_eq!(out.starts(3)[0].resume, None);
        assert_eq!(
            out.histories(3)[0],
            (Tick(0), out.histories(3)[0].1.clone())
        );
        assert_eq!(out.histories(3)[0].1.len(), 30);
        h.inputs(2, 30..33);
        let out = h.inputs(3, 30..33);
        assert!(out
            .events()
            .contains(&ServerEvent::Resumed { tick: Tick(30) }));
        assert_eq!(h.next_tick(), Tick(33));
        let bundle = out.bundle(1, Tick(30)).expect("tick 30 reaches ann");
        assert_eq!(bundle.inputs.len(), 3);
        assert!(bundle.left.is_empty() && bundle.joined.is_empty());
        // From here on the game is timed again: a silent player is dropped.
        h.inputs(1, 33..400);
        h.inputs(2, 33..400);
        let out = h.advance(ms(3000));
        assert!(
            out.reports()
                .iter()
                .any(|r| r.starts_with("dropped player=2 name=cy")),
            "{:?}",
            out.reports()
        );
    }

    #[test]
    fn a_player_not_back_when_the_wait_is_over_is_dropped_and_the_others_play_on() {
        let mut h = resumed(Duration::from_secs(5));
        h.join_keeping(1, "ann", SEED, 30);
        h.join_keeping(2, "bob", SEED, 30);
        h.inputs(1, 30..40);
        h.inputs(2, 30..40);
        // ann and bob stall, their clients still sending.
        for _ in 0..49 {
            h.heartbeat(1);
            h.heartbeat(2);
            assert_eq!(h.advance(ms(100)).events(), []);
        }
        h.heartbeat(1);
        h.heartbeat(2);
        let out = h.advance(ms(200));
        let reports = out.reports();
        assert!(
            reports
                .iter()
                .any(|r| r == "dropped player=2 name=cy tick=30 reason=not-back-after-restart"),
            "{reports:?}"
        );
        assert!(
            reports.iter().any(|r| r == "resumed tick=30"),
            "{reports:?}"
        );
        let bundle = out.bundle(1, Tick(30)).expect("tick 30 is bundled");
        assert_eq!(bundle.left, [PlayerId(2)]);
        // Too late: cy comes back as any dropped player does, a second of
        // game ahead, and is still sent only the bundles it lacks.
        let out = h.join_keeping(3, "cy", SEED, 30);
        assert_eq!(out.reply(3), Some(Ok(())));
        let start = &out.starts(3)[0];
        assert!(start.first_input_tick >= Tick(31 + 60), "{start:?}");
        assert_eq!(start.resume, Some(Tick(30)));
    }

    #[test]
    fn once_the_wait_is_over_a_player_back_but_silent_is_dropped_like_any_other() {
        let mut h = resumed(Duration::from_secs(5));
        h.join_keeping(1, "ann", SEED, 30);
        h.join_keeping(2, "bob", SEED, 30);
        h.join_keeping(3, "cy", SEED, 30);
        // cy is back but its client hangs before it sends a single input.
        h.inputs(1, 30..40);
        h.inputs(2, 30..40);
        let mut reports = Vec::new();
        for _ in 0..15 {
            h.heartbeat(1);
            h.heartbeat(2);
            reports.extend(h.advance(ms(500)).reports());
        }
        assert!(
            reports
                .iter()
                .any(|r| r.starts_with("dropped player=2 name=cy tick=30 reason=timeout")),
            "{reports:?}"
        );
        assert!(
            reports.iter().any(|r| r == "resumed tick=30"),
            "{reports:?}"
        );
    }

    #[test]
    fn a_client_keeping_a_game_the_server_does_not_run_is_refused_not_put_in_the_lobby() {
        let mut h = Harness::players(2);
        let out = h.join_keeping(1, "ann", SEED, 30);
        match out.reply(1) {
            Some(Err(refusal)) => assert!(
                refusal.reason.contains("not running your game"),
                "{}",
                refusal.reason
            ),
            other => panic!("expected a refusal, got {other:?}"),
        }
        h.join(2, "bob");
        assert!(
            h.session.game.is_none(),
            "no game starts with a refused client"
        );
    }

    #[test]
    fn a_stranger_cannot_take_a_slot_of_the_resumed_game() {
        let mut h = resumed(Duration::from_secs(30));
        let out = h.join(1, "eve");
        assert!(matches!(out.reply(1), Some(Err(_))));
        let out = h.join_keeping(2, "ann", SEED + 1, 30);
        // ann of another game: its world is not this one's.
        assert_eq!(out.starts(2)[0].resume, None);
        assert_eq!(out.histories(2)[0].1.len(), 30);
    }

    #[test]
    fn a_desync_before_the_restart_is_in_the_verdict_of_the_resumed_game() {
        let mut h = resuming(desynced_game(true), Duration::from_secs(30));
        let mut reports = h.actions().reports();
        for (id, name) in [(1, "ann"), (2, "bob"), (3, "cy")] {
            h.join_keeping(id, name, SEED, 30);
        }
        for id in 1..=3 {
            reports.extend(h.inputs(id, 30..46).reports());
        }
        // bob came back from a verified snapshot before the restart:
        // everyone agrees from here on.
        for id in 1..=3 {
            reports.extend(h.hash(id, 45, 1).reports());
        }
        assert!(
            !reports.iter().any(|r| r.starts_with("desync")),
            "{reports:?}"
        );
        h.session.announce_shutdown();
        h.actions();
        h.session.shut_down();
        // As a server that never restarted says it: bob, and the reports
        // of before the restart counted too.
        assert_eq!(
            h.actions().reports(),
            [
                "verdict diverged ticks=46 checks=9 diverged=bob@x86_64-unknown-linux-gnu \
                 majority=x86_64-unknown-linux-gnu,x86_64-unknown-linux-gnu"
            ]
        );
    }

    #[test]
    fn a_desync_the_server_died_before_announcing_is_announced_when_the_game_resumes() {
        let mut h = resuming(desynced_game(false), Duration::from_secs(30));
        let out = h.actions();
        assert!(
            out.reports()
                .contains(&"desync tick=30 diverged=bob first=unknown".to_string()),
            "{:?}",
            out.reports()
        );
        let recorded = out.position(|action| {
            let event = GameEvent::Desync {
                diverged: vec![PlayerId(1)],
                first: None,
            };
            *action == Action::Record(Recording::Event(Tick(30), event))
        });
        assert!(recorded.is_some(), "the desync is recorded");
    }
}
