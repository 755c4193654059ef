use lockstep_protocol::{Buttons, DesyncNotice, PlayerInput, RosterEntry};

use super::*;
use crate::determinism::desync::DesyncDump;
use crate::testing::Tally;

/// A tick at 60 Hz, in nanoseconds.
const TICK_NS: u64 = 1_000_000_000 / 60;

fn start(you: Option<PlayerId>, history: u32) -> Start {
    Start {
        seed: 7,
        tick_rate: 60,
        input_delay: 3,
        spec: crate::spec_of::<Tally>(&()),
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

/// Both players holding `buttons`.
fn bundle(buttons: u8) -> Bundle {
    Bundle {
        inputs: (0..2)
            .map(|id| PlayerInput {
                player: PlayerId(id),
                input: Input {
                    buttons: Buttons(buttons),
                    axes: None,
                },
            })
            .collect(),
        ..Bundle::default()
    }
}

/// Runs one frame of `elapsed_ns`; returns the ticks that ran and the
/// reports they asked for.
fn frame(game: &mut NetGame<Tally>, elapsed_ns: u64) -> (Vec<u32>, Vec<(Tick, u64)>) {
    game.begin_frame(elapsed_ns);
    let (mut ran, mut reports) = (Vec::new(), Vec::new());
    while let Advance::Ran { tick, report, .. } = game.advance() {
        ran.push(tick.0);
        reports.extend(report);
        game.local_ticks_due();
    }
    game.end_frame();
    (ran, reports)
}

#[test]
fn a_tick_runs_only_when_it_is_due_and_its_bundle_is_here() {
    let mut game =
        NetGame::<Tally>::new(&start(Some(PlayerId(0)), 0), GameOptions::default()).unwrap();
    assert_eq!(frame(&mut game, TICK_NS).0, Vec::<u32>::new());
    assert_eq!(game.stats().stalled_ticks, 1);
    game.receive(Tick(0), (0..3).map(bundle).collect());
    // Two ticks of real time are owed by now, and both bundles are here.
    assert_eq!(frame(&mut game, TICK_NS).0, vec![1, 2]);
    // The third bundle waits for its time.
    assert_eq!(frame(&mut game, 0).0, Vec::<u32>::new());
    assert_eq!(game.advance(), Advance::NotDue);
    assert_eq!(frame(&mut game, TICK_NS).0, vec![3]);
    assert_eq!(game.stats().stalled_ticks, 1);
}

#[test]
fn a_player_reports_its_hash_every_hash_interval_ticks() {
    let mut game =
        NetGame::<Tally>::new(&start(Some(PlayerId(1)), 0), GameOptions::default()).unwrap();
    game.receive(Tick(0), (0..30).map(|_| bundle(1)).collect());
    let (ran, reports) = frame(&mut game, 30 * TICK_NS);
    assert_eq!(ran.len(), 30);
    let ticks: Vec<u32> = reports.iter().map(|(t, _)| t.0).collect();
    assert_eq!(ticks, vec![15, 30]);
    assert_eq!(reports[1].1, game.current.hash());
}

#[test]
fn a_spectator_sends_no_inputs_reports_nothing_and_is_never_dropped() {
    let mut game = NetGame::<Tally>::new(&start(None, 0), GameOptions::default()).unwrap();
    assert!(game.initial_inputs().is_empty());
    assert_eq!(game.name(), "spectator");
    game.receive(Tick(0), (0..20).map(|_| bundle(2)).collect());
    game.begin_frame(20 * TICK_NS);
    while let Advance::Ran { report, .. } = game.advance() {
        assert_eq!(report, None);
        assert!(game.local_ticks_due().is_empty());
    }
    assert_eq!(game.current.tick(), Tick(20));
    assert!(game.is_playing());
}

#[test]
fn a_late_joiner_fast_forwards_through_the_history_then_follows_the_clock() {
    let mut game =
        NetGame::<Tally>::new(&start(Some(PlayerId(1)), 100), GameOptions::default()).unwrap();
    assert_eq!(game.initial_inputs().first().map(|(t, _)| t.0), Some(100));
    game.receive(Tick(0), (0..100).map(|_| bundle(1)).collect());
    // No real time has passed, yet the whole history runs at once.
    let (ran, reports) = frame(&mut game, 0);
    assert_eq!(ran.len(), 100);
    assert!(reports.is_empty(), "no reports while catching up");
    assert_eq!(game.catching_up(), None);
    game.receive(Tick(100), vec![bundle(1)]);
    assert_eq!(frame(&mut game, 0).0, Vec::<u32>::new());
    assert_eq!(frame(&mut game, TICK_NS).0, vec![101]);
}

#[test]
fn a_joiner_from_a_snapshot_fast_forwards_only_the_bundles_after_it_to_the_same_state() {
    let history: Vec<Bundle> = (0..100).map(|t| bundle((t % 7) as u8)).collect();
    let mut whole =
        NetGame::<Tally>::new(&start(Some(PlayerId(1)), 100), GameOptions::default()).unwrap();
    whole.receive(Tick(0), history.clone());
    frame(&mut whole, 0);
    // The state after 60 ticks, as a player would send it.
    let snapshot = whole
        .world_at(Tick(60))
        .expect("still in the ring")
        .into_owned();
    let mut joined = NetGame::<Tally>::from_world(
        &start(Some(PlayerId(1)), 100),
        GameOptions::default(),
        snapshot,
    );
    joined.receive(Tick(60), history[60..].to_vec());
    let (ran, _) = frame(&mut joined, 0);
    assert_eq!(ran.len(), 40, "only the ticks after the snapshot");
    assert_eq!(joined.catching_up(), None);
    assert_eq!(joined.current, whole.current);
    assert_eq!(joined.current.hash(), whole.current.hash());
}

#[test]
fn a_reconnected_player_keeps_its_world_and_restarts_its_clock_with_the_resumed_game() {
    let mut game =
        NetGame::<Tally>::new(&start(Some(PlayerId(1)), 0), GameOptions::default()).unwrap();
    game.receive(Tick(0), (0..12).map(|t| bundle(t as u8)).collect());
    assert_eq!(frame(&mut game, 10 * TICK_NS).0.len(), 10);
    // The server dies with bundles 10 and 11 held and not yet due; the
    // game waits five seconds for the one restarted from its replay.
    frame(&mut game, 5_000_000_000);
    assert_eq!(game.current.tick(), Tick(12));
    let stalls = game.stats().stalled_ticks;
    let ticks = game.stats().ticks;
    let before = game.current.clone();
    // The replay ends at bundle 14: the restarted server sends 12..14
    // and the game goes on at 14, where our inputs start again.
    let mut resumed = start(Some(PlayerId(1)), 14);
    resumed.resume = Some(Tick(12));
    assert!(game.behind() > Duration::from_secs(4));
    game.resume(&resumed);
    // Nothing is owed for the time the server was away: a capacity report
    // sent now tells the server's speed control the game is on time.
    assert_eq!(game.behind(), Duration::ZERO);
    let inputs: Vec<u32> = game.initial_inputs().iter().map(|(t, _)| t.0).collect();
    assert_eq!(inputs, [14, 15, 16]);
    game.receive(Tick(12), vec![bundle(12), bundle(13)]);
    // The bundles it lacked run at once, and it waits for tick 14's
    // without counting a stall or owing the five seconds.
    assert_eq!(frame(&mut game, 0).0, vec![13, 14]);
    assert_eq!(frame(&mut game, TICK_NS).0, Vec::<u32>::new());
    assert_eq!(game.stats().stalled_ticks, stalls);
    assert!(game.catching_up().is_some());
    game.receive(Tick(14), vec![bundle(14), bundle(15), bundle(16)]);
    assert_eq!(frame(&mut game, 0).0, vec![15, 16, 17]);
    assert_eq!(game.catching_up(), None);
    assert_eq!(game.behind(), Duration::ZERO);
    game.receive(Tick(17), vec![bundle(17)]);
    assert_eq!(frame(&mut game, 0).0, Vec::<u32>::new());
    assert_eq!(frame(&mut game, TICK_NS).0, vec![18]);
    assert_eq!(game.stats().ticks, ticks + 6);
    // The same world as one that never lost the server.
    let mut steady =
        NetGame::<Tally>::new(&start(Some(PlayerId(1)), 0), GameOptions::default()).unwrap();
    steady.receive(Tick(0), (0..18).map(|t| bundle(t as u8)).collect());
    frame(&mut steady, 30 * TICK_NS);
    assert_eq!(steady.current, game.current);
    assert_ne!(before, game.current);
}

#[test]
fn an_announced_speed_paces_the_ticks_from_its_tick_on_and_not_before() {
    let mut game =
        NetGame::<Tally>::new(&start(Some(PlayerId(0)), 0), GameOptions::default()).unwrap();
    game.receive(Tick(0), (0..10).map(bundle).collect());
    game.set_speed(Tick(3), Percent(50), Duration::ZERO);
    assert_eq!(game.speed(), Percent::FULL);
    // Ticks 0, 1 and 2 at full speed: one tick of real time each.
    for tick in 1..=3 {
        assert_eq!(frame(&mut game, TICK_NS).0, vec![tick]);
    }
    // From tick 3 on at half speed: each waits twice as long.
    assert_eq!(game.speed(), Percent(50));
    assert_eq!(frame(&mut game, TICK_NS).0, Vec::<u32>::new());
    assert_eq!(frame(&mut game, TICK_NS).0, vec![4]);
    assert_eq!(game.until_due_ns(), 2 * TICK_NS);
    assert_eq!(frame(&mut game, 2 * TICK_NS).0, vec![5]);
    assert_eq!(game.stats().stalled_ticks, 0);
    assert_eq!(game.slowest_speed(), Percent(50));

    // Only the pacing changed: the same bundles at full speed give the
    // same world.
    let mut full =
        NetGame::<Tally>::new(&start(Some(PlayerId(0)), 0), GameOptions::default()).unwrap();
    full.receive(Tick(0), (0..10).map(bundle).collect());
    assert_eq!(frame(&mut full, 5 * TICK_NS).0, vec![1, 2, 3, 4, 5]);
    assert_eq!(full.current.hash(), game.current.hash());
}

#[test]
fn a_late_joiner_follows_the_speed_in_force_once_caught_up() {
    let mut game =
        NetGame::<Tally>::new(&start(Some(PlayerId(1)), 100), GameOptions::default()).unwrap();
    game.set_speed(Tick(50), Percent(25), Duration::from_secs(9));
    game.receive(Tick(0), (0..100).map(|_| bundle(1)).collect());
    // The history runs at once, whatever the speed...
    assert_eq!(frame(&mut game, 0).0.len(), 100);
    game.receive(Tick(100), vec![bundle(1)]);
    // ...and live ticks take four times their nominal length.
    assert_eq!(frame(&mut game, 3 * TICK_NS).0, Vec::<u32>::new());
    assert_eq!(frame(&mut game, TICK_NS).0, vec![101]);
}

#[test]
fn a_postponed_schedule_makes_the_ticks_from_the_change_on_due_that_much_later() {
    let mut game =
        NetGame::<Tally>::new(&start(Some(PlayerId(0)), 0), GameOptions::default()).unwrap();
    // Half a second of stall: the game is 29 ticks behind.
    assert_eq!(frame(&mut game, 30 * TICK_NS).0, Vec::<u32>::new());
    assert_eq!(game.behind(), Duration::from_nanos(29 * TICK_NS));
    // The server slows the game to half speed from tick 2 and forgives
    // what the game will be behind then: 27 ticks, once ticks 0 and 1
    // have run late.
    game.set_speed(Tick(2), Percent(50), Duration::from_nanos(27 * TICK_NS));
    game.receive(Tick(0), (0..10).map(bundle).collect());
    assert_eq!(frame(&mut game, 0).0, vec![1, 2]);
    // Back on schedule: tick 2, twice as long, is due in one more
    // nominal tick, then every two.
    assert_eq!(game.behind(), Duration::ZERO);
    assert_eq!(game.until_due_ns(), TICK_NS);
    assert_eq!(frame(&mut game, TICK_NS).0, vec![3]);
    assert_eq!(frame(&mut game, TICK_NS).0, Vec::<u32>::new());
    assert_eq!(frame(&mut game, TICK_NS).0, vec![4]);
}

/// A faulty and an honest player, both played through 10 ticks.
fn faulty_and_honest(fault: Fault) -> (NetGame<Tally>, NetGame<Tally>) {
    faulty_and_honest_for(fault, 1)
}

/// A faulty and an honest player, both played through `tens` times
/// 10 ticks.
fn faulty_and_honest_for(fault: Fault, tens: u32) -> (NetGame<Tally>, NetGame<Tally>) {
    let options = GameOptions {
        fault: Some(fault),
        ..GameOptions::default()
    };
    let mut faulty = NetGame::<Tally>::new(&start(Some(PlayerId(0)), 0), options).unwrap();
    let mut honest =
        NetGame::<Tally>::new(&start(Some(PlayerId(1)), 0), GameOptions::default()).unwrap();
    for game in [&mut faulty, &mut honest] {
        for ten in 0..tens {
            game.receive(Tick(10 * ten), (0..10).map(|_| bundle(3)).collect());
            frame(game, 10 * TICK_NS);
        }
    }
    (faulty, honest)
}

fn phase_names(dump: &DesyncDump<Tally>) -> Vec<&str> {
    dump.phases.iter().map(|p| p.phase.as_str()).collect()
}

#[test]
fn an_injected_fault_changes_the_state_at_its_tick_and_its_dump_holds_it() {
    let (faulty, honest) = faulty_and_honest(Fault {
        tick: Tick(5),
        phase: None,
        value: None,
    });
    assert_ne!(faulty.current.hash(), honest.current.hash());
    let (Some(dump), Some(clean)) = (faulty.desync_dump(Tick(5)), honest.desync_dump(Tick(5)))
    else {
        panic!("tick 5 is in both histories");
    };
    assert_eq!((dump.player, dump.tick), (Some(PlayerId(0)), Tick(5)));
    let diffs = crate::determinism::diff::diff_worlds(&clean.world, &dump.world);
    assert_eq!(diffs.len(), 1, "{diffs:?}");
    assert_eq!(diffs[0].path, "drift");
    // A change after the step is not redone: every phase agrees with
    // the honest machine, and the faulty one's last phase is not its
    // own recorded hash.
    assert_eq!(
        phase_names(&dump),
        ["before", "roster", "counters", "drift"]
    );
    assert_eq!(dump.phases, clean.phases);
    assert_eq!(clean.phases.last().map(|p| &p.hash), Some(&clean.hash));
    assert_ne!(dump.phases.last().map(|p| &p.hash), Some(&dump.hash));
}

#[test]
fn a_fault_inside_a_phase_is_redone_in_the_dump_and_shows_from_that_phase() {
    let (faulty, honest) = faulty_and_honest(Fault {
        tick: Tick(5),
        phase: Some("counters"),
        value: None,
    });
    assert_ne!(faulty.current.hash(), honest.current.hash());
    let (Some(dump), Some(clean)) = (faulty.desync_dump(Tick(5)), honest.desync_dump(Tick(5)))
    else {
        panic!("tick 5 is in both histories");
    };
    let differ: Vec<bool> = dump
        .phases
        .iter()
        .zip(&clean.phases)
        .map(|(a, b)| a.hash != b.hash)
        .collect();
    assert_eq!(differ, [false, false, true, true]);
    assert_eq!(dump.phases.last().map(|p| &p.hash), Some(&dump.hash));
    // Tick 4 was computed alike.
    assert_eq!(
        faulty.desync_dump(Tick(4)).map(|d| d.hash),
        honest.desync_dump(Tick(4)).map(|d| d.hash)
    );
}

#[test]
fn a_fault_in_a_traced_value_is_named_by_the_dumps_traces_at_its_line() {
    let (faulty, honest) = faulty_and_honest(Fault {
        tick: Tick(5),
        phase: None,
        value: Some("drift"),
    });
    assert_ne!(faulty.current.hash(), honest.current.hash());
    let (Some(dump), Some(clean)) = (faulty.desync_dump(Tick(5)), honest.desync_dump(Tick(5)))
    else {
        panic!("tick 5 is in both histories");
    };
    // The change is where the value is computed, so the step redone
    // computes it again and its phase shows it.
    assert_eq!(dump.phases.last().map(|p| &p.hash), Some(&dump.hash));
    let (Some(a), Some(b)) = (&clean.trace, &dump.trace) else {
        panic!("both dumps hold a trace");
    };
    let found = crate::trace::diff(&a.entries, &b.entries);
    assert_eq!(found, crate::trace::TraceDiff::Value { at: 4 });
    let first = &a.entries[4];
    assert_eq!(
        (first.label.as_ref(), first.tick, first.phase.as_ref()),
        ("drift", 5, "drift")
    );
    assert!(first.file.ends_with("games/tally/src/game.rs"), "{first:?}");
    let (x, y) = (&a.entries[4].value.bits, &b.entries[4].value.bits);
    assert_eq!(x[0] + 1, y[0]);
    // Tick 4 was computed alike, and so was its trace.
    let (Some(a4), Some(b4)) = (honest.desync_dump(Tick(4)), faulty.desync_dump(Tick(4))) else {
        panic!("tick 4 is in both histories");
    };
    assert_eq!(a4.trace, b4.trace);
}

#[test]
fn an_injected_fault_goes_on_in_every_step_from_its_tick() {
    // Tally's drift converges on one value, rounding a single one-ulp
    // nudge away: only a fault that goes on still shows ticks later.
    for phase in [None, Some("drift")] {
        let (faulty, honest) = faulty_and_honest_for(
            Fault {
                tick: Tick(3),
                phase,
                value: None,
            },
            12,
        );
        assert_eq!(faulty.current.tick(), Tick(120));
        assert_ne!(faulty.current.hash(), honest.current.hash(), "{phase:?}");
    }
}

#[test]
fn after_a_notice_a_player_answers_with_the_hashes_since_the_last_check() {
    let (faulty, honest) = faulty_and_honest(Fault {
        tick: Tick(3),
        phase: None,
        value: None,
    });
    let notice = DesyncNotice {
        tick: Tick(9),
        diverged: vec![PlayerId(0)],
        majority: None,
        since: Tick(0),
    };
    let (Some((first, ours)), Some((_, theirs))) =
        (faulty.tick_hashes(&notice), honest.tick_hashes(&notice))
    else {
        panic!("both players answer");
    };
    // Tick 0, the starting state, is kept too.
    assert_eq!((first, ours.len()), (Tick(0), 10));
    let parted = ours.iter().zip(&theirs).position(|(a, b)| a != b);
    assert_eq!(parted, Some(3));
    assert!(ours[3..].iter().zip(&theirs[3..]).all(|(a, b)| a != b));
    let spectator = NetGame::<Tally>::new(&start(None, 0), GameOptions::default()).unwrap();
    assert_eq!(spectator.tick_hashes(&notice), None);
}

#[test]
fn a_stalled_player_still_sends_the_inputs_the_clock_says_are_due() {
    let options = GameOptions {
        pinned_delay: Some(2),
        ..GameOptions::default()
    };
    let mut game = NetGame::<Tally>::new(&start(Some(PlayerId(0)), 0), options).unwrap();
    // Ticks 0 and 1 get the neutral initial inputs.
    assert_eq!(game.initial_inputs().len(), 2);
    game.receive(Tick(0), vec![bundle(1)]);
    // Four ticks of real time: tick 0 runs, then bundle 1 is missing.
    let (ran, _) = frame(&mut game, 4 * TICK_NS);
    assert_eq!(ran, vec![1]);
    game.begin_frame(0);
    assert_eq!(game.advance(), Advance::Stalled(Tick(1)));
    // Three steps are overdue: their inputs (ticks 3 to 5) are due now,
    // after tick 2's, which the step of tick 0 asked for.
    assert_eq!(game.local_ticks_due_while_stalled(), Tick(3)..Tick(6));
    assert_eq!(game.local_ticks_due_while_stalled(), Tick(6)..Tick(6));
    // Once the bundles come, the steps catch up without asking again.
    game.receive(Tick(1), vec![bundle(1), bundle(1), bundle(1)]);
    while let Advance::Ran { .. } = game.advance() {
        assert!(game.local_ticks_due().is_empty());
    }
    let spectator = &mut NetGame::<Tally>::new(&start(None, 0), GameOptions::default()).unwrap();
    assert!(spectator.local_ticks_due_while_stalled().is_empty());
}

/// Plays tick `tick` after its bundle was `wait_ns` late, then the
/// next `more` ticks on time.
fn late_bundle(game: &mut NetGame<Tally>, tick: u32, late: Bundle, wait_ns: u64, more: u32) {
    assert_eq!(game.current.tick(), Tick(tick));
    assert_eq!(frame(game, TICK_NS).0, Vec::<u32>::new(), "waits for it");
    assert_eq!(frame(game, wait_ns).0, Vec::<u32>::new());
    game.receive(Tick(tick), vec![late]);
    game.receive(Tick(tick + 1), vec![bundle(0); more as usize]);
    game.begin_frame(0);
    assert!(matches!(game.advance(), Advance::Ran { .. }));
    game.local_ticks_due();
    while game.current.tick() < Tick(tick + 1 + more) {
        frame(game, TICK_NS);
    }
}

/// Player 0's game, 100 ticks played on time.
fn on_time_to_100() -> NetGame<Tally> {
    let mut game =
        NetGame::<Tally>::new(&start(Some(PlayerId(0)), 0), GameOptions::default()).unwrap();
    game.receive(Tick(0), vec![bundle(0); 100]);
    for _ in 0..100 {
        frame(&mut game, TICK_NS);
    }
    game
}

#[test]
fn bundles_late_on_our_own_link_raise_the_playout_and_the_delay_with_it() {
    let mut game = on_time_to_100();
    assert_eq!((game.playout(), game.input_delay()), (0, 3));
    // One stall of 40 ms is within the budget.
    late_bundle(&mut game, 100, bundle(0), 40_000_000, 199);
    assert_eq!(game.playout(), 0);
    // The second within the window covers it: three ticks, and the
    // 40 ms just waited are forgiven instead of caught up.
    late_bundle(&mut game, 300, bundle(0), 40_000_000, 0);
    assert_eq!((game.playout(), game.input_delay()), (3, 6));
    // (It waited a little more than 40 ms: the frames before left a
    // remainder of a tick on the clock.)
    assert_eq!(game.clock().lag_ns(), 0);
    let hold = game.clock().hold_ns();
    assert!(hold > 0 && hold <= 3 * TICK_NS - 40_000_000, "{hold}");
}

#[test]
fn a_stall_while_catching_up_counts_only_its_own_wait() {
    let mut game = on_time_to_100();
    // A 300 ms wait for bundle 100, then bundle 101 comes 10 ms after
    // 100 while the game is still 300 ms behind: its own wait is 10 ms,
    // and two stalls of 300 and 10 ms call for one tick of playout,
    // not for the cap.
    assert_eq!(frame(&mut game, TICK_NS).0, Vec::<u32>::new());
    assert_eq!(frame(&mut game, 300_000_000).0, Vec::<u32>::new());
    game.receive(Tick(100), vec![bundle(0)]);
    assert_eq!(frame(&mut game, 0).0, vec![101]);
    game.begin_frame(10_000_000);
    assert_eq!(game.advance(), Advance::Stalled(Tick(101)));
    game.receive(Tick(101), vec![bundle(0)]);
    assert!(matches!(game.advance(), Advance::Ran { .. }));
    assert_eq!(game.playout(), 1);
}

#[test]
fn a_wait_for_a_stand_in_is_a_late_peer_and_raises_no_playout() {
    let mut game = on_time_to_100();
    let stood_in = Bundle {
        substituted: vec![PlayerId(1)],
        ..bundle(0)
    };
    late_bundle(&mut game, 100, stood_in.clone(), 40_000_000, 99);
    late_bundle(&mut game, 200, stood_in, 40_000_000, 99);
    assert_eq!((game.playout(), game.input_delay()), (0, 3));
}

#[test]
fn the_input_lag_is_the_delay_plus_sampling_interpolation_and_a_frame_when_drawn() {
    let options = GameOptions {
        pinned_delay: Some(3),
        ..GameOptions::default()
    };
    let game = NetGame::<Tally>::new(&start(Some(PlayerId(0)), 0), options).unwrap();
    let tick = Duration::from_secs(1) / 60;
    assert_eq!(game.input_lag(None), 3 * tick);
    let frame = Duration::from_millis(10);
    assert_eq!(
        game.input_lag(Some(frame)),
        3 * tick + tick / 2 + tick + Duration::from_millis(5)
    );
}

#[test]
fn a_player_is_told_when_the_server_stood_in_for_its_input() {
    let mut bundles: Vec<Bundle> = (0..4).map(bundle).collect();
    bundles[2].substituted = vec![PlayerId(1)];
    let mut late =
        NetGame::<Tally>::new(&start(Some(PlayerId(1)), 0), GameOptions::default()).unwrap();
    let mut other =
        NetGame::<Tally>::new(&start(Some(PlayerId(0)), 0), GameOptions::default()).unwrap();
    for game in [&mut late, &mut other] {
        game.receive(Tick(0), bundles.clone());
        game.begin_frame(4 * TICK_NS);
    }
    let mut replaced = Vec::new();
    while let Advance::Ran { replaced: r, .. } = late.advance() {
        replaced.extend(r);
    }
    assert_eq!(replaced, vec![Tick(2)]);
    assert_eq!(late.stats().replaced_inputs, 1);
    while let Advance::Ran { replaced, .. } = other.advance() {
        assert_eq!(replaced, None);
    }
    assert_eq!(other.stats().replaced_inputs, 0);
    // The bundle is applied as it is: the same game either way.
    assert_eq!(late.current.hash(), other.current.hash());
}

#[test]
fn a_clock_behind_the_others_takes_the_ticks_they_are_ahead_as_due_once() {
    let mut game =
        NetGame::<Tally>::new(&start(Some(PlayerId(1)), 0), GameOptions::default()).unwrap();
    game.receive(Tick(0), (0..3).map(bundle).collect());
    assert_eq!(frame(&mut game, TICK_NS).0, vec![1]);
    // Our inputs went out through tick 3. The others are 20 ticks ahead:
    // the server stood in for ours to complete ticks 4 to 23.
    let ahead = (3..24).map(|tick| {
        let mut b = bundle(1);
        if tick > 3 {
            b.substituted = vec![PlayerId(1)];
        }
        b
    });
    game.receive(Tick(3), ahead.collect());
    // One tick of real time, yet the clock takes the 19 ticks the others
    // are ahead of it as due: it runs to where it holds what its input
    // delay holds back, as a punctual player does.
    assert_eq!(frame(&mut game, TICK_NS).0, (2..=21).collect::<Vec<u32>>());
    assert_eq!(game.stats().caught_up_ticks, 19);
    assert_eq!(game.bundles_held(), 3);
    // Then the clock's pace again, and nothing more is caught up.
    assert_eq!(frame(&mut game, TICK_NS).0, vec![22]);
    assert_eq!(frame(&mut game, 0).0, Vec::<u32>::new());
    assert_eq!(game.stats().caught_up_ticks, 19);
}

#[test]
fn a_player_plays_until_its_departure_is_bundled() {
    let mut game =
        NetGame::<Tally>::new(&start(Some(PlayerId(1)), 0), GameOptions::default()).unwrap();
    let mut gone = bundle(0);
    gone.left = vec![PlayerId(1)];
    game.receive(Tick(0), vec![bundle(0), gone]);
    frame(&mut game, TICK_NS);
    assert!(game.is_playing());
    frame(&mut game, TICK_NS);
    assert!(!game.is_playing());
}
