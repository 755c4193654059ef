//! The session's rules, each shown on a [`Harness`] with explicit time:
//! the game's start, drops, stand-ins, desyncs, speed and verdicts.

use std::time::Duration;

use lockstep_protocol::{
    DesyncNotice, Percent, Platform, PlayerId, Replay, RosterEntry, ServerMessage, Start, Tick,
};

use super::harness::{ms, platform, Harness, Out, TRIPLE};
use super::CloseCode;
use crate::desync_check::PINPOINT_WAIT;
use crate::{Config, OnDesync};

fn roster(names: &[&str]) -> Vec<RosterEntry> {
    names
        .iter()
        .enumerate()
        .map(|(i, name)| RosterEntry {
            id: PlayerId(i as u8),
            name: name.to_string(),
        })
        .collect()
}

fn start(you: Option<u8>, roster: Vec<RosterEntry>, history: u32) -> ServerMessage {
    let config = Config::new(crate::TEST_GAME);
    ServerMessage::Start(Start {
        seed: config.seed,
        tick_rate: config.tick_rate,
        input_delay: config.input_delay,
        spec: config.spec.clone(),
        roster,
        hash_interval: config.hash_interval,
        you: you.map(PlayerId),
        first_input_tick: Tick(0),
        history,
        snapshot: None,
        snapshot_hash: None,
        resume: None,
    })
}

/// Three players that have played ticks `0..10` at time zero.
fn three_playing(config: Config) -> Harness {
    let mut h = Harness::new(Config {
        players: 3,
        ..config
    });
    for (id, name) in [(1, "ann"), (2, "bob"), (3, "cat")] {
        h.join(id, name);
    }
    for id in 1..=3 {
        h.inputs(id, 0..10);
    }
    assert_eq!(h.next_tick(), Tick(10));
    h
}

#[test]
fn a_full_lobby_starts_the_game_for_everyone() {
    let mut h = Harness::players(2);
    let ann = h.join_on(
        1,
        "ann",
        Platform {
            target: "aarch64-apple-darwin".into(),
            os: "macos".into(),
            cpu: "unknown".into(),
            features: vec!["neon".into(), "fp".into()],
            rustc: "rustc 1.95.0 (abc 2026-01-01)".into(),
            profile: "release".into(),
            build: "0.1.0".into(),
        },
    );
    assert_eq!(ann.reply(1), Some(Ok(())));
    assert_eq!(
        ann.messages(1),
        vec![ServerMessage::Welcome {
            player: PlayerId(0),
            players_needed: 2
        }]
    );
    assert_eq!(
        ann.reports(),
        vec![
            "joined player=0 name=ann",
            "platform player=0 name=ann target=aarch64-apple-darwin os=macos \
             cpu=\"unknown\" features=neon,fp rustc=\"rustc 1.95.0 (abc 2026-01-01)\" \
             profile=release build=0.1.0"
        ]
    );
    let sam = h.spectate(3, "sam");
    assert_eq!(sam.reply(3), Some(Ok(())));
    assert!(sam.messages(3).is_empty(), "nothing to watch yet");

    let bob = h.join(2, "bob");
    let everyone = roster(&["ann", "bob"]);
    assert_eq!(bob.messages(1), vec![start(Some(0), everyone.clone(), 0)]);
    assert_eq!(
        bob.messages(2),
        vec![
            ServerMessage::Welcome {
                player: PlayerId(1),
                players_needed: 2
            },
            start(Some(1), everyone.clone(), 0)
        ]
    );
    assert_eq!(bob.messages(3), vec![start(None, everyone, 0)]);
    assert_eq!(
        bob.reports(),
        vec![
            "joined player=1 name=bob",
            "platform player=1 name=bob target=x86_64-unknown-linux-gnu os= cpu=\"\" \
             features= rustc=\"\" profile= build=",
            "start players=ann,bob seed=1"
        ]
    );
}

#[test]
fn a_recording_is_named_after_the_wall_clock_time_the_driver_gave_the_join() {
    let dir = std::env::temp_dir().join(format!("lockstep-session-{}", std::process::id()));
    let mut h = Harness::new(Config {
        players: 1,
        replay_dir: Some(dir.clone()),
        ..Config::new(crate::TEST_GAME)
    });
    let started = h.join(1, "ann");
    let path = dir.join("2026-11-21T13-36-39Z.lsreplay");
    let reports = started.reports();
    assert_eq!(reports[0], "joined player=0 name=ann");
    assert_eq!(
        reports[2..],
        [
            format!("recording path={}", path.display()),
            "start players=ann seed=1".to_string(),
        ]
    );
    // The replay keeps the machine of every player.
    let file = std::fs::File::open(&path).unwrap();
    let header = Replay::read(file).unwrap().replay.header;
    assert_eq!(header.platforms, vec![(PlayerId(0), platform(TRIPLE))]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_spectator_of_a_running_game_gets_start_and_the_history_then_the_bundles() {
    let mut h = Harness::players(2);
    h.join(1, "ann");
    h.join(2, "bob");
    h.inputs(1, 0..5);
    h.inputs(2, 0..5);

    let sam = h.spectate(3, "sam");
    assert_eq!(sam.reply(3), Some(Ok(())));
    assert_eq!(
        sam.messages(3),
        vec![start(None, roster(&["ann", "bob"]), 5)]
    );
    let histories = sam.histories(3);
    assert_eq!(histories.len(), 1);
    assert_eq!(histories[0].0, Tick(0));
    assert_eq!(histories[0].1.len(), 5);

    h.inputs(1, 5..8);
    let bundles = h.inputs(2, 5..8);
    let datagram = &bundles.datagrams(3)[0];
    assert_eq!(datagram.first_tick, Tick(5), "the history covered 0..5");
    assert_eq!(datagram.bundles.len(), 3);
    // The players' inputs alone complete the ticks: the spectator, who
    // sends none, is never waited for.
    assert_eq!(h.next_tick(), Tick(8));
    assert!(!bundles.datagrams(1).is_empty() && !bundles.datagrams(2).is_empty());
}

#[test]
fn a_silent_player_is_dropped_at_the_timeout_and_the_bundles_announce_it() {
    let mut h = three_playing(Config {
        laggard_tolerance: None,
        ..Config::new(crate::TEST_GAME)
    });
    h.advance_to(ms(1500));
    h.inputs(1, 10..20);
    h.inputs(2, 10..20);
    assert_eq!(h.next_tick(), Tick(10), "the game waits for cat");

    // The drop timeout (2 s) has to be exceeded, not just reached.
    let waiting = h.advance_to(ms(2000));
    assert!(waiting.events().is_empty());
    assert_eq!(waiting.closed(3), None);

    let dropped = h.advance(ms(10));
    assert_eq!(
        dropped.reports(),
        vec!["dropped player=2 name=cat tick=10 reason=timeout"]
    );
    // Ticks from 10 on are simulated without cat, and every client
    // learns so from the bundle of tick 10.
    let bundle = dropped.bundle(1, Tick(10)).unwrap();
    assert_eq!(bundle.left, vec![PlayerId(2)]);
    assert_eq!(bundle.inputs.len(), 2);
    assert_eq!(dropped.bundle(2, Tick(10)), Some(bundle));
    assert_eq!(h.next_tick(), Tick(20));
    assert_eq!(
        dropped.closed(3),
        Some((CloseCode::Dropped, "removed from the game"))
    );
    assert_eq!(dropped.closed(1), None);
}

#[test]
fn a_late_player_is_stood_in_for_and_reported_at_a_bounded_rate() {
    let dir = std::env::temp_dir().join(format!("lockstep-laggard-{}", std::process::id()));
    let mut h = three_playing(Config {
        replay_dir: Some(dir.clone()),
        laggard_tolerance: Some(ms(50)),
        ..Config::new(crate::TEST_GAME)
    });
    // cat sends nothing more; at 500 ms, when ticks up to 29 are needed
    // (a stand-in never comes before its tick is), the others send
    // ticks 10 to 29.
    h.advance_to(ms(500));
    h.inputs(1, 10..30);
    h.inputs(2, 10..30);
    let waiting = h.advance(ms(40));
    assert!(waiting.events().is_empty());
    assert_eq!(h.next_tick(), Tick(10));

    let stood_in = h.advance(ms(10));
    assert_eq!(
        stood_in.reports(),
        vec!["substituted player=2 name=cat tick=10 waited_ms=50 count=1"]
    );
    assert_eq!(h.next_tick(), Tick(30));
    let bundle = stood_in.bundle(1, Tick(29)).unwrap();
    assert_eq!(bundle.substituted, vec![PlayerId(2)]);
    assert_eq!(bundle.inputs.len(), 3);
    assert_eq!(stood_in.bundle(3, Tick(29)), Some(bundle));

    // Late on every tick for 8 s: one sum 5 s after the first line, not
    // a line a tick (ticks 11 to 327; polls come every 10 ms, so an
    // input may wait up to 59 ms).
    let mut lines = Vec::new();
    for tick in 30..510 {
        h.inputs(1, tick..tick + 1);
        h.inputs(2, tick..tick + 1);
        h.heartbeat(3);
        lines.extend(h.advance(Duration::from_secs(1) / 60).reports());
    }
    assert_eq!(h.next_tick(), Tick(507));
    assert_eq!(
        lines,
        vec!["substituted player=2 name=cat tick=11 waited_ms=59 count=317"]
    );
    // What is left is reported before the game's verdict: ticks 10 to
    // 506 in three lines.
    h.session.shut_down();
    let reports = h.actions().reports();
    assert_eq!(
        reports[0],
        "substituted player=2 name=cat tick=328 waited_ms=59 count=179"
    );
    assert!(reports[1].starts_with("verdict agreed"), "{reports:?}");
    // The replay keeps every mark.
    let path = dir.join("2026-11-21T13-36-39Z.lsreplay");
    let replay = Replay::read(std::fs::File::open(&path).unwrap())
        .unwrap()
        .replay;
    let marked = replay
        .bundles
        .iter()
        .filter(|b| b.substituted == [PlayerId(2)])
        .count();
    assert_eq!(marked, 497);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_leaving_player_is_dropped_after_the_last_tick_it_sent() {
    let mut h = three_playing(Config::new(crate::TEST_GAME));
    h.inputs(3, 10..12);
    let left = h.leave(3);
    assert_eq!(
        left.reports(),
        vec!["dropped player=2 name=cat tick=12 reason=left"]
    );
    assert_eq!(
        left.closed(3),
        None,
        "its ticks 10 and 11 are not bundled yet"
    );
    h.inputs(1, 10..15);
    let bundled = h.inputs(2, 10..15);
    assert_eq!(bundled.bundle(1, Tick(11)).unwrap().inputs.len(), 3);
    assert_eq!(bundled.bundle(1, Tick(12)).unwrap().left, vec![PlayerId(2)]);
    assert_eq!(
        bundled.closed(3),
        Some((CloseCode::Dropped, "removed from the game"))
    );
}

#[test]
fn when_the_last_player_leaves_the_game_ends_and_the_lobby_opens_again() {
    let mut h = Harness::players(1);
    h.join(1, "ann");
    h.spectate(2, "sam");
    h.inputs(1, 0..3);

    let over = h.leave(1);
    assert_eq!(
        over.reports(),
        vec![
            "dropped player=0 name=ann tick=3 reason=left",
            "verdict agreed ticks=4 checks=0 platforms=x86_64-unknown-linux-gnu",
            "game over tick=4"
        ]
    );
    assert_eq!(
        over.closed(1),
        Some((CloseCode::Dropped, "removed from the game"))
    );
    assert!(over.messages(2).contains(&ServerMessage::Ended {
        reason: "the game is over: every player left".into()
    }));
    assert!(over.released(2), "the spectator's writer flushes Ended");

    let next = h.join(3, "ann");
    assert_eq!(next.reply(3), Some(Ok(())));
    assert_eq!(next.reports()[0], "joined player=0 name=ann");
}

/// ann, bob and cat's answers to the notice of tick 15: their hashes of
/// ticks 0 to 15, bob's apart from tick 12 on.
fn answer_tick_15(h: &mut Harness) -> Out {
    let honest: Vec<u64> = (0..=15).map(|t| if t == 15 { 7 } else { t }).collect();
    let mut bob = honest.clone();
    for hash in &mut bob[12..] {
        *hash += 100;
    }
    h.tick_hashes(1, 15, 0, honest.clone());
    h.tick_hashes(2, 15, 0, bob);
    h.tick_hashes(3, 15, 0, honest)
}

#[test]
fn a_hash_unlike_the_others_is_named_with_the_tick_where_it_began() {
    let mut h = three_playing(Config::new(crate::TEST_GAME));
    h.spectate(4, "sam");
    h.hash(1, 15, 7);
    h.hash(2, 15, 8);
    let judged = h.hash(3, 15, 7);

    // Everyone is told at once, so every client dumps tick 15...
    let notice = ServerMessage::Desync(DesyncNotice {
        tick: Tick(15),
        diverged: vec![PlayerId(1)],
        majority: Some(7),
        since: Tick(0),
    });
    for id in 1..=4 {
        assert_eq!(judged.messages(id), vec![notice.clone()]);
    }
    // ...and the line waits for the players' per-tick hashes.
    assert!(judged.reports().is_empty());
    let pinpointed = answer_tick_15(&mut h);
    assert_eq!(
        pinpointed.reports(),
        vec!["desync tick=15 diverged=bob first=12"]
    );
    let first = ServerMessage::Pinpointed {
        tick: Tick(15),
        first: Tick(12),
    };
    for id in 1..=4 {
        assert_eq!(pinpointed.messages(id), vec![first.clone()]);
    }
    // The game goes on: the default is to announce and continue.
    h.inputs(1, 10..11);
    h.inputs(2, 10..11);
    h.inputs(3, 10..11);
    assert_eq!(h.next_tick(), Tick(11));
}

#[test]
fn a_desync_whose_answers_do_not_all_come_is_announced_after_the_wait() {
    let mut h = three_playing(Config::new(crate::TEST_GAME));
    h.hash(1, 15, 7);
    h.hash(2, 15, 8);
    h.hash(3, 15, 7);
    // Only ann answers; a spectator's or a stranger's answer counts
    // for nothing, nor does one for another tick.
    h.spectate(4, "sam");
    h.tick_hashes(4, 15, 0, vec![1; 16]);
    h.tick_hashes(1, 15, 0, vec![1; 16]);
    h.tick_hashes(2, 30, 0, vec![2; 31]);
    // Everybody stays (nobody is dropped for silence meanwhile).
    let started = h.now;
    while h.now + ms(100) < started + PINPOINT_WAIT {
        for id in 1..=3 {
            h.heartbeat(id);
        }
        let waiting = h.advance(ms(100));
        assert_eq!(waiting.reports(), Vec::<String>::new());
    }
    let late = h.advance_to(started + PINPOINT_WAIT);
    assert_eq!(
        late.reports(),
        vec!["desync tick=15 diverged=bob first=unknown"]
    );
    assert!(late
        .messages(1)
        .iter()
        .all(|m| !matches!(m, ServerMessage::Pinpointed { .. })));
}

#[test]
fn on_desync_stop_ends_the_game_for_everyone_once_pinpointed() {
    let mut h = three_playing(Config {
        on_desync: OnDesync::Stop,
        ..Config::new(crate::TEST_GAME)
    });
    h.hash(1, 15, 7);
    h.hash(2, 15, 8);
    h.hash(3, 15, 7);
    let judged = answer_tick_15(&mut h);

    assert_eq!(
        judged.reports(),
        vec![
            "desync tick=15 diverged=bob first=12",
            "verdict diverged ticks=10 checks=3 diverged=bob@x86_64-unknown-linux-gnu \
             majority=x86_64-unknown-linux-gnu,x86_64-unknown-linux-gnu",
            "game over tick=10"
        ]
    );
    let ended = ServerMessage::Ended {
        reason: "desync at tick 15: bob diverged".into(),
    };
    for id in 1..=3 {
        let messages = judged.messages(id);
        assert!(matches!(messages[0], ServerMessage::Pinpointed { .. }));
        assert_eq!(messages[1], ended);
        assert!(judged.released(id));
    }
    assert_eq!(h.next_tick(), Tick(0), "back in the lobby");
}

#[test]
fn a_player_that_cannot_keep_up_slows_the_game_for_everyone_until_it_recovers() {
    let mut h = three_playing(Config::new(crate::TEST_GAME));
    h.spectate(4, "sam");
    h.capacity(1, 3000);
    h.capacity(3, 3000);
    // A spectator's machine sets no pace: nobody waits for it.
    assert!(h.capacity(4, 10).reports().is_empty());

    // bob's machine runs 49% of the tick rate and, at tick 8, was
    // 300 ms behind: the game slows to what it sustains with 10% to
    // spare, from a tick a tenth of a second of play ahead, for
    // everyone, and everyone forgives what bob will be behind by then
    // (another 17.3 ms for each of the 8 ticks).
    let slowed = h.capacity_behind(2, 49, 8, ms(300));
    assert_eq!(
        slowed.reports(),
        vec![
            "speed percent=44 from_tick=16 reason=slow slowest=bob capacity=49 \
             postpone_ms=438"
        ]
    );
    let speed = ServerMessage::Speed {
        from_tick: Tick(16),
        percent: Percent(44),
        postpone_us: 438_775,
    };
    for id in 1..=4 {
        assert_eq!(slowed.messages(id), vec![speed.clone()]);
    }
    // Whoever joins now hears the speed right after its Start, with
    // nothing to forgive: its clock starts then.
    let late = h.spectate(5, "tom");
    let fresh = ServerMessage::Speed {
        from_tick: Tick(16),
        percent: Percent(44),
        postpone_us: 0,
    };
    assert!(matches!(late.messages(5)[..], [ServerMessage::Start(_), ref then] if *then == fresh));

    // bob's machine recovers: once every report has allowed full
    // speed for five seconds, the game goes back to it.
    let mut raised = Vec::new();
    for round in 0..11 {
        h.advance(ms(500));
        let ticks = 10 + round * 10..20 + round * 10;
        for id in 1..=3 {
            h.inputs(id, ticks.clone());
        }
        for (id, capacity) in [(1, 3000), (2, 2500), (3, 3000)] {
            raised.extend(h.capacity(id, capacity).reports());
        }
    }
    assert_eq!(
        raised,
        vec![
            "speed percent=100 from_tick=123 reason=recovered slowest=bob capacity=2500 \
             postpone_ms=0"
        ]
    );
}

#[test]
fn with_speed_control_off_a_slow_machine_changes_nothing() {
    let mut h = three_playing(Config {
        speed_control: false,
        ..Config::new(crate::TEST_GAME)
    });
    let out = h.capacity(2, 30);
    assert!(out.reports().is_empty());
    assert!(out.messages(1).is_empty());
}

/// ann and cat on x86-64 Linux, bob on an ARM Mac, ticks `0..10`
/// played and the hashes of tick 15 all alike.
fn three_machines() -> Harness {
    let mut h = Harness::players(3);
    h.join_on(1, "ann", platform(TRIPLE));
    h.join_on(2, "bob", platform("aarch64-apple-darwin"));
    h.join_on(3, "cat", platform(TRIPLE));
    for id in 1..=3 {
        h.inputs(id, 0..10);
        h.hash(id, 15, 7);
    }
    h
}

#[test]
fn a_game_where_every_machine_agreed_ends_on_an_agreed_verdict() {
    let mut h = three_machines();
    h.session.announce_shutdown();
    h.actions();
    h.session.shut_down();
    assert_eq!(
        h.actions().reports(),
        vec![
            "verdict agreed ticks=10 checks=3 platforms=x86_64-unknown-linux-gnu,\
             aarch64-apple-darwin,x86_64-unknown-linux-gnu"
        ]
    );
}

#[test]
fn a_verdict_names_the_machines_that_diverged_and_those_of_the_majority() {
    let mut h = three_machines();
    h.hash(1, 30, 9);
    h.hash(2, 30, 8);
    h.hash(3, 30, 9);
    for id in 1..=3 {
        h.inputs(id, 10..12);
    }
    h.leave(1);
    h.leave(2);
    let over = h.leave(3);
    let reports = over.reports();
    assert_eq!(
        reports[reports.len() - 2..],
        [
            "verdict diverged ticks=13 checks=6 diverged=bob@aarch64-apple-darwin \
             majority=x86_64-unknown-linux-gnu,x86_64-unknown-linux-gnu",
            "game over tick=13"
        ]
    );
}

#[test]
fn a_shutdown_in_the_lobby_gives_no_verdict() {
    let mut h = Harness::players(2);
    h.join(1, "ann");
    h.session.shut_down();
    assert!(h.actions().reports().is_empty());
}

#[test]
fn a_shutdown_tells_every_client_then_closes_every_connection() {
    let mut h = three_playing(Config::new(crate::TEST_GAME));
    h.session.announce_shutdown();
    let told = h.actions();
    for id in 1..=3 {
        assert_eq!(
            told.messages(id),
            vec![ServerMessage::Ended {
                reason: "the server is shutting down".into()
            }]
        );
        assert_eq!(told.closed(id), None, "the writers get a moment first");
    }
    h.session.shut_down();
    let closed = h.actions();
    for id in 1..=3 {
        assert_eq!(
            closed.closed(id),
            Some((CloseCode::Shutdown, "the server is shutting down"))
        );
    }
}

/// A snapshot the server verified itself that a joiner finds off says the
/// joiner's machine computes the game differently: it is refused, saying
/// so, and nobody else is blamed.
#[test]
fn a_joiner_that_disputes_a_verified_snapshot_is_refused_and_nobody_is_named() {
    let mut h = Harness::new(Config {
        players: 2,
        replay_dir: None,
        snapshot_secs: 1,
        ..Config::new(crate::TEST_GAME)
    });
    h.join(1, "ann");
    h.join(2, "bob");
    for first in (0..70).step_by(10) {
        h.inputs(1, first..first + 10);
        h.inputs(2, first..first + 10);
    }
    let world = crate::testing::played(&[PlayerId(0), PlayerId(1)], 60);
    let bytes = lockstep_protocol::encode(&world, 1 << 20).expect("a world encodes");
    h.snapshot_round(60, lockstep_engine::Game::hash(&world), &bytes);
    let out = h.spectate(3, "cat");
    assert_eq!(out.starts(3)[0].snapshot, Some(Tick(60)));
    let out = h.event(super::Event::BadSnapshot(
        super::harness::conn(3),
        Tick(60),
        "it hashes to 1".into(),
    ));
    assert!(out.released(3));
    let refusals: Vec<String> = out
        .messages(3)
        .into_iter()
        .filter_map(|m| match m {
            ServerMessage::Refused(r) => Some(r.reason),
            _ => None,
        })
        .collect();
    assert_eq!(
        refusals,
        [
            "your machine does not find the server's verified snapshot of tick 60 to be the world \
          the players computed (it hashes to 1): it computes this game differently"
        ]
    );
    assert!(out.events().is_empty(), "{:?}", out.events());
}
