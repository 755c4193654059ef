//! The play loop's rules, each on an explicit clock: a two-player Tally
//! whose bundles the test hands in as the connection would.

use std::time::Duration;

use lockstep_engine::{spec_of, Game};
use lockstep_protocol::{decode, Bundle, Buttons, PlayerInput, RosterEntry};
use lockstep_tally::Tally;

use super::*;

/// The tick length at 60 Hz.
const TICK: Duration = Duration::from_nanos(1_000_000_000 / 60);

/// The instant a test game counts from.
#[allow(
    clippy::disallowed_methods,
    reason = "a test game needs an epoch; only its offsets matter"
)]
fn epoch() -> Instant {
    Instant::now()
}

fn start(you: Option<PlayerId>, history: u32) -> Start {
    Start {
        seed: 7,
        tick_rate: 60,
        input_delay: 3,
        spec: spec_of::<Tally>(&()),
        roster: (0..2)
            .map(|id| RosterEntry {
                id: PlayerId(id),
                name: format!("p{id}"),
            })
            .collect(),
        hash_interval: 15,
        you,
        first_input_tick: Tick(history),
        history,
        snapshot: None,
        snapshot_hash: None,
        resume: None,
    }
}

/// Both players pressing their button.
fn bundle() -> Bundle {
    Bundle {
        inputs: (0..2)
            .map(|id| PlayerInput {
                player: PlayerId(id),
                input: Input {
                    buttons: Buttons(1),
                    axes: None,
                },
            })
            .collect(),
        ..Bundle::default()
    }
}

fn bundles(first: u32, count: u32) -> NetEvent {
    NetEvent::Bundles {
        first_tick: Tick(first),
        bundles: (0..count).map(|_| bundle()).collect(),
    }
}

/// A game of player 0 (a bot with `bot`) started at the epoch.
fn game(bot: Option<u64>, start: Start) -> (Play<Tally>, Instant) {
    let epoch = epoch();
    let options = LoopOptions {
        bot,
        ..LoopOptions::default()
    };
    let started = Started {
        start,
        at: epoch,
        snapshot: None,
    };
    (Play::start(started, options, epoch).unwrap(), epoch)
}

/// One frame at `now` whose driver stops after `budget` ticks (its
/// TICK_BUDGET); the steps it saw and what it ended with.
fn frame(play: &mut Play<Tally>, now: Duration, budget: usize) -> (Vec<Step>, FrameTicks) {
    play.begin_frame(now, Input::default());
    let mut steps = Vec::new();
    loop {
        let step = play.step();
        steps.push(step);
        if !matches!(step, Step::Ran { .. }) || steps.len() >= budget {
            break;
        }
    }
    (steps, play.end_frame(Duration::ZERO))
}

fn ran(steps: &[Step]) -> Vec<u32> {
    steps
        .iter()
        .filter_map(|step| match step {
            Step::Ran { tick } => Some(tick.0),
            _ => None,
        })
        .collect()
}

fn inputs(outbox: &Outbox) -> Vec<u32> {
    outbox
        .commands
        .iter()
        .filter_map(|command| match command {
            NetCommand::Input(tick, _) => Some(tick.0),
            _ => None,
        })
        .collect()
}

#[test]
fn a_stall_ends_when_the_bundle_arrives() {
    let (mut play, _) = game(None, start(Some(PlayerId(0)), 0));
    let (steps, end) = frame(&mut play, TICK, usize::MAX);
    assert_eq!(steps, [Step::Stalled]);
    assert!(end.stalled);
    assert_eq!(play.step(), Step::Stalled, "the frame is over");
    play.handle(bundles(0, 3), TICK).unwrap();
    let (steps, end) = frame(&mut play, TICK * 2, usize::MAX);
    assert_eq!(ran(&steps), [1, 2]);
    assert!(!end.stalled);
    assert_eq!(steps.last(), Some(&Step::NotDue));
}

#[test]
fn a_bots_inputs_go_out_for_the_overdue_ticks_while_a_peer_stalls_the_game() {
    let (mut play, _) = game(Some(5), start(Some(PlayerId(0)), 0));
    let initial = inputs(&play.outbox());
    assert_eq!(initial, [0, 1, 2], "the neutral inputs of the input delay");
    play.handle(bundles(0, 1), Duration::ZERO).unwrap();
    // Bundle 1 never comes; the clock says ten ticks are overdue.
    let (steps, end) = frame(&mut play, TICK * 10, usize::MAX);
    assert_eq!(ran(&steps), [1]);
    assert!(end.stalled);
    let sent = inputs(&play.outbox());
    assert!(
        sent.len() > 1 && sent.windows(2).all(|w| w[1] == w[0] + 1) && sent[0] == 3,
        "inputs for the overdue ticks, in order after the first: {sent:?}"
    );
    assert!(*sent.last().unwrap() >= 10, "{sent:?}");
}

#[test]
fn a_player_reports_its_hash_every_hash_interval_ticks() {
    let (mut play, _) = game(Some(5), start(Some(PlayerId(0)), 0));
    play.handle(bundles(0, 61), Duration::ZERO).unwrap();
    // The engine runs at most 30 owed ticks a frame, so the next frame
    // runs the rest.
    let (first, _) = frame(&mut play, TICK * 60, usize::MAX);
    let (second, _) = frame(&mut play, TICK * 60, usize::MAX);
    assert_eq!(
        [ran(&first), ran(&second)].concat(),
        (1..=60).collect::<Vec<u32>>()
    );
    let reports: Vec<(Tick, u64)> = play
        .outbox()
        .commands
        .into_iter()
        .filter_map(|command| match command {
            NetCommand::Report(tick, hash) => Some((tick, hash)),
            _ => None,
        })
        .collect();
    let ticks: Vec<u32> = reports.iter().map(|(tick, _)| tick.0).collect();
    assert_eq!(ticks, [15, 30, 45, 60]);
    assert_eq!(reports[3].1, play.game().current.hash());
}

#[test]
fn a_snapshot_the_server_asks_for_is_the_world_of_that_tick() {
    let (mut play, _) = game(Some(5), start(Some(PlayerId(0)), 0));
    play.handle(bundles(0, 31), Duration::ZERO).unwrap();
    frame(&mut play, TICK * 30, usize::MAX);
    play.outbox();
    play.handle(NetEvent::SnapshotRequest(Tick(20)), TICK * 30)
        .unwrap();
    let outbox = play.outbox();
    let [NetCommand::Snapshot(tick, bytes)] = &outbox.commands[..] else {
        panic!("no snapshot: {:?}", outbox.commands);
    };
    assert_eq!(*tick, Tick(20));
    let world: Tally = decode(bytes, MAX_SNAPSHOT_SIZE as usize).unwrap();
    assert_eq!(world.tick(), Tick(20));
    assert_eq!(world.hash(), play.game().world_at(Tick(20)).unwrap().hash());
}

#[test]
fn a_desync_is_said_and_answered_with_the_hashes_of_every_tick_since_the_last_check() {
    let (mut play, _) = game(Some(5), start(Some(PlayerId(0)), 0));
    play.handle(bundles(0, 31), Duration::ZERO).unwrap();
    frame(&mut play, TICK * 30, usize::MAX);
    play.outbox();
    let notice = DesyncNotice {
        tick: Tick(30),
        diverged: vec![PlayerId(1)],
        majority: None,
        since: Tick(15),
    };
    play.handle(NetEvent::Desync(notice), TICK * 30).unwrap();
    let outbox = play.outbox();
    assert_eq!(
        outbox.notices,
        [Notice::Desync {
            tick: Tick(30),
            names: "p1".into(),
            dump: String::new(),
        }]
    );
    let [NetCommand::TickHashes(tick, first, hashes)] = &outbox.commands[..] else {
        panic!("no tick hashes: {:?}", outbox.commands);
    };
    assert_eq!((*tick, *first), (Tick(30), Tick(15)));
    assert_eq!(hashes.len(), 16);
    assert_eq!(hashes.last(), Some(&play.game().current.hash()));
    assert_eq!(play.desync(), Some("DESYNC at tick 30: p1 diverged"));
    let pinpointed = NetEvent::Pinpointed {
        tick: Tick(30),
        first: Tick(22),
    };
    play.handle(pinpointed, TICK * 31).unwrap();
    assert_eq!(
        play.desync(),
        Some("DESYNC at tick 30: p1 diverged (from tick 22)")
    );
}

#[test]
fn resuming_after_a_reconnection_sends_the_initial_inputs_again_and_catches_up() {
    let (mut play, epoch) = game(Some(5), start(Some(PlayerId(0)), 0));
    play.handle(bundles(0, 21), Duration::ZERO).unwrap();
    frame(&mut play, TICK * 20, usize::MAX);
    play.outbox();
    let lost = NetEvent::Reconnecting {
        reason: "the server went away".into(),
        for_secs: 30,
    };
    play.handle(lost, TICK * 21).unwrap();
    assert!(play.is_reconnecting());
    assert_eq!(
        play.waiting_for(TICK * 21).as_deref(),
        Some("waiting for the server to come back")
    );
    let back = Duration::from_secs(2);
    let resumed = NetEvent::Resumed {
        start: start(Some(PlayerId(0)), 30),
        at: epoch + back,
    };
    play.handle(resumed, back).unwrap();
    assert!(!play.is_reconnecting());
    let outbox = play.outbox();
    assert_eq!(inputs(&outbox), [30, 31, 32]);
    assert_eq!(
        outbox.notices.last(),
        Some(&Notice::Reconnected {
            at: Tick(20),
            goes_on_from: 30,
        })
    );
    play.handle(bundles(21, 20), back).unwrap();
    let mut now = back;
    let mut caught_up = None;
    for _ in 0..100 {
        now += TICK;
        frame(&mut play, now, usize::MAX);
        let said = play.outbox().notices;
        caught_up = said
            .into_iter()
            .find(|n| matches!(n, Notice::CaughtUp { .. }));
        if caught_up.is_some() {
            break;
        }
    }
    let Some(Notice::CaughtUp { tick, from, .. }) = caught_up else {
        panic!("never caught up");
    };
    assert!(tick.0 >= 31, "{tick}");
    assert_eq!(
        from,
        format!(
            " after reconnecting at tick 20 ({} ticks simulated)",
            tick.0 - 20
        )
    );
}

#[test]
fn a_game_joined_late_says_how_far_its_catch_up_came_and_when_it_is_over() {
    let (mut play, _) = game(None, start(None, 120));
    play.handle(bundles(0, 130), Duration::ZERO).unwrap();
    let mut said = Vec::new();
    let mut now = Duration::ZERO;
    while play.game().catching_up().is_some() {
        now += TICK;
        frame(&mut play, now, 50);
        said.extend(play.outbox().notices);
    }
    assert!(
        said.contains(&Notice::CatchingUp {
            done: 50,
            total: 120
        }),
        "{said:?}"
    );
    let Some(Notice::CaughtUp { tick, from, .. }) = said.last() else {
        panic!("no catch-up line: {said:?}");
    };
    // Every bundle already here is run before the clock takes over.
    assert_eq!(*tick, Tick(130));
    assert_eq!(from, " from tick 0");
}

#[test]
fn a_long_pause_is_caught_up_tick_by_tick_across_frames_and_no_time_is_dropped() {
    let (mut play, _) = game(Some(5), start(Some(PlayerId(0)), 0));
    play.handle(bundles(0, 1000), Duration::ZERO).unwrap();
    frame(&mut play, TICK, usize::MAX);
    // Five seconds without a frame: 300 ticks are owed. A driver whose
    // budget allows 20 ticks a frame runs them over the next frames, and
    // all of them, where solo play's MAX_LOOPS would have dropped most.
    let pause = TICK + Duration::from_secs(5);
    let mut done = Vec::new();
    let mut frames = 0;
    loop {
        let (steps, end) = frame(&mut play, pause, 20);
        assert_eq!(end.end.discarded_ns, 0);
        frames += 1;
        if steps == [Step::NotDue] {
            break;
        }
        done.extend(ran(&steps));
    }
    assert_eq!(done, (2..=301).collect::<Vec<u32>>());
    assert_eq!(
        frames, 16,
        "fifteen frames of twenty ticks, then nothing owed"
    );
}

#[test]
fn the_game_is_over_at_the_last_tick_asked_for() {
    let epoch = epoch();
    let started = Started {
        start: start(Some(PlayerId(0)), 0),
        at: epoch,
        snapshot: None,
    };
    let options = LoopOptions {
        bot: Some(5),
        ticks: Some(10),
        ..LoopOptions::default()
    };
    let mut play = Play::<Tally>::start(started, options, epoch).unwrap();
    play.handle(bundles(0, 30), Duration::ZERO).unwrap();
    let (steps, end) = frame(&mut play, TICK * 20, usize::MAX);
    assert_eq!(ran(&steps), (1..=10).collect::<Vec<u32>>());
    assert_eq!(steps.last(), Some(&Step::Finished));
    assert!(end.finished && play.finished());
}

#[test]
fn a_held_input_is_told_to_the_connection_once_with_the_schedule_every_frame() {
    let (mut play, _) = game(None, start(Some(PlayerId(0)), 0));
    let first = play.outbox();
    assert!(first
        .commands
        .iter()
        .any(|c| matches!(c, NetCommand::Hold(input) if *input == Input::default())));
    let pressed = Input {
        buttons: Buttons(1),
        axes: None,
    };
    play.hold(pressed);
    play.hold(pressed);
    play.handle(bundles(0, 3), Duration::ZERO).unwrap();
    frame(&mut play, TICK, usize::MAX);
    let commands = play.outbox().commands;
    let holds = commands
        .iter()
        .filter(|c| matches!(c, NetCommand::Hold(_)))
        .count();
    assert_eq!(holds, 1);
    assert!(commands
        .iter()
        .any(|c| matches!(c, NetCommand::Schedule(..))));
}

#[test]
fn a_start_after_a_reconnection_joins_the_game_afresh_from_the_servers_snapshot() {
    let (mut play, epoch) = game(Some(5), start(Some(PlayerId(0)), 0));
    play.handle(bundles(0, 21), Duration::ZERO).unwrap();
    frame(&mut play, TICK * 20, usize::MAX);
    play.outbox();
    let world = play.game().world_at(Tick(10)).unwrap().into_owned();
    let rejoined = Started {
        start: Start {
            snapshot: Some(Tick(10)),
            snapshot_hash: Some(world.hash()),
            ..start(Some(PlayerId(0)), 40)
        },
        at: epoch + Duration::from_secs(3),
        snapshot: Some(encode(&world, MAX_SNAPSHOT_SIZE as usize).unwrap()),
    };
    let now = Duration::from_secs(3);
    play.handle(NetEvent::Started(rejoined), now).unwrap();
    assert_eq!(play.game().current.tick(), Tick(10));
    let outbox = play.outbox();
    assert_eq!(inputs(&outbox), [40, 41, 42]);
    assert_eq!(outbox.notices, [Notice::Rejoined]);
}

/// A snapshot whose world is not the majority's (garbage, or a world
/// hashing to another value than the Start gives) is reported to the
/// server; the game runs nothing and sends nothing until the server's
/// next Start, which begins it again.
#[test]
fn a_snapshot_off_the_majoritys_hash_is_reported_and_nothing_runs_until_the_next_start() {
    let (mut play, epoch) = game(Some(5), start(Some(PlayerId(0)), 0));
    play.handle(bundles(0, 21), Duration::ZERO).unwrap();
    frame(&mut play, TICK * 20, usize::MAX);
    play.outbox();
    let world = play.game().world_at(Tick(10)).unwrap().into_owned();
    let bytes = encode(&world, MAX_SNAPSHOT_SIZE as usize).unwrap();
    let from_snapshot = |hash: u64, bytes: Vec<u8>| Started {
        start: Start {
            snapshot: Some(Tick(10)),
            snapshot_hash: Some(hash),
            ..start(Some(PlayerId(0)), 40)
        },
        at: epoch,
        snapshot: Some(bytes),
    };
    let now = Duration::from_secs(3);
    for (hash, bytes) in [
        (world.hash() ^ 1, bytes.clone()),
        (world.hash(), vec![0xff; 8]),
    ] {
        play.handle(NetEvent::Started(from_snapshot(hash, bytes)), now)
            .unwrap();
        let outbox = play.outbox();
        let [NetCommand::BadSnapshot(Tick(10), why)] = &outbox.commands[..] else {
            panic!("no report: {:?}", outbox.commands);
        };
        assert!(
            why.starts_with("the snapshot of tick 10 is not the majority's tally world: "),
            "{why}"
        );
        assert_eq!(
            outbox.notices,
            [Notice::SnapshotRefused {
                tick: Tick(10),
                why: why.clone()
            }]
        );
        assert_eq!(play.awaiting_start(), Some(Tick(10)));
        // Bundles from the snapshot's tick on come, and nothing runs.
        play.handle(bundles(10, 40), now).unwrap();
        let (steps, ticks) = frame(&mut play, now + TICK * 30, usize::MAX);
        assert_eq!((steps, ticks.steps), (vec![Step::NotDue], 0));
        assert!(play.outbox().commands.is_empty(), "nothing sent");
    }
    // The server starts the game again from tick 0: it runs.
    play.handle(
        NetEvent::Started(Started {
            start: start(Some(PlayerId(0)), 0),
            at: epoch + now,
            snapshot: None,
        }),
        now,
    )
    .unwrap();
    assert_eq!(play.awaiting_start(), None);
    assert!(play.outbox().notices.is_empty(), "not a reconnection");
    play.handle(bundles(0, 5), now).unwrap();
    let (_, ticks) = frame(&mut play, now + TICK * 40, usize::MAX);
    assert_eq!(ticks.steps, 5);
}

#[test]
fn a_player_reports_what_its_machine_sustains_and_a_spectator_does_not() {
    for (you, reports) in [(Some(PlayerId(0)), true), (None, false)] {
        let (mut play, _) = game(None, start(you, 0));
        play.handle(bundles(0, 200), Duration::ZERO).unwrap();
        let mut capacity = 0;
        for n in 1..=60 {
            play.begin_frame(TICK * n, Input::default());
            while let Step::Ran { .. } = play.step() {}
            play.end_frame(Duration::from_millis(1));
            capacity += play
                .outbox()
                .commands
                .iter()
                .filter(|c| matches!(c, NetCommand::Capacity(..)))
                .count();
        }
        assert_eq!(
            capacity > 0,
            reports,
            "{you:?}: {capacity} reports in a second"
        );
    }
}

#[test]
fn a_wait_long_enough_to_mention_names_whom_the_game_waits_for_once() {
    use lockstep_protocol::Peer;

    let (mut play, _) = game(None, start(Some(PlayerId(0)), 0));
    let status = PeerStatus {
        next_tick: Tick(0),
        peers: vec![Peer {
            player: PlayerId(1),
            ping_ms: 40,
            ticks_behind: 3,
            silent_ms: 600,
            waited_for: true,
            slack: None,
        }],
    };
    play.handle(NetEvent::Peers(status), Duration::ZERO)
        .unwrap();
    let mut said = Vec::new();
    for n in 1..=60 {
        frame(&mut play, TICK * n, usize::MAX);
        said.extend(play.outbox().notices);
    }
    assert_eq!(
        said,
        [Notice::Lag(
            "waiting for p1 (ping 40 ms, 3 ticks behind, heard 600 ms ago)".into()
        )]
    );
    assert!(play.waiting_for(TICK * 60).is_some());
}
