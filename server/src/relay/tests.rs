//! The relay's rules, each shown with explicit time.

use super::*;
use lockstep_protocol::{
    decode, BundleDatagram, Buttons, Input, ServerDatagram, MAX_DATAGRAM_SIZE,
};

const P0: PlayerId = PlayerId(0);
const P1: PlayerId = PlayerId(1);
const P2: PlayerId = PlayerId(2);
const TIMEOUT: Duration = Duration::from_secs(2);

fn input(b: u8) -> Input {
    Input {
        buttons: Buttons(b),
        axes: None,
    }
}

fn send(relay: &mut Relay, p: PlayerId, first: u32, buttons: &[u8], now: Duration) {
    let datagram = InputDatagram {
        bundles_ack: Tick(0),
        first_tick: Tick(first),
        inputs: buttons.iter().map(|&b| input(b)).collect(),
    };
    relay.receive(p, &datagram, now);
}

fn bundles(relay: &Relay, p: PlayerId) -> BundleDatagram {
    let bytes = relay.datagram_for(p, MAX_DATAGRAM_SIZE).unwrap();
    let ServerDatagram::Bundles(d) = decode(&bytes, MAX_DATAGRAM_SIZE).unwrap();
    d
}

#[test]
fn bundles_a_tick_only_when_every_player_sent_it() {
    let mut relay = Relay::new(&[P0, P1], TIMEOUT, None, Duration::ZERO, 60);
    send(&mut relay, P0, 0, &[1, 2], Duration::ZERO);
    assert_eq!(relay.complete(), 0);
    send(&mut relay, P1, 0, &[3], Duration::ZERO);
    assert_eq!(relay.complete(), 1);
    assert_eq!(relay.next_tick(), Tick(1));
    let d = bundles(&relay, P0);
    assert_eq!(d.first_tick, Tick(0));
    assert_eq!(
        d.bundles[0].inputs,
        vec![
            PlayerInput {
                player: P0,
                input: input(1)
            },
            PlayerInput {
                player: P1,
                input: input(3)
            }
        ]
    );
    assert_eq!(d.inputs_ack, Tick(2));
    assert_eq!(bundles(&relay, P1).inputs_ack, Tick(1));
}

#[test]
fn first_input_wins_and_repeats_are_counted() {
    let mut relay = Relay::new(&[P0], TIMEOUT, None, Duration::ZERO, 60);
    send(&mut relay, P0, 0, &[1, 1], Duration::ZERO);
    let repeat = InputDatagram {
        bundles_ack: Tick(0),
        first_tick: Tick(1),
        inputs: vec![input(9), input(2)],
    };
    let outcome = relay.receive(P0, &repeat, Duration::ZERO);
    assert_eq!(
        outcome,
        InputOutcome {
            accepted: 1,
            repeated: 1,
            conflicting: 1,
            out_of_window: 0
        }
    );
    relay.complete();
    let d = bundles(&relay, P0);
    let got: Vec<u8> = d
        .bundles
        .iter()
        .map(|b| b.inputs[0].input.buttons.0)
        .collect();
    assert_eq!(got, vec![1, 1, 2]);
    // Inputs for already bundled ticks are repeats, never a second bundle.
    let again = relay.receive(P0, &repeat, Duration::ZERO);
    assert_eq!((again.repeated, again.conflicting), (2, 1));
    assert_eq!(relay.complete(), 0);
    let totals = relay.input_totals(P0).unwrap();
    assert_eq!(
        (totals.accepted, totals.repeated, totals.conflicting),
        (3, 3, 2)
    );
}

#[test]
fn inputs_far_ahead_are_refused() {
    let mut relay = Relay::new(&[P0], TIMEOUT, None, Duration::ZERO, 60);
    let far = InputDatagram {
        bundles_ack: Tick(0),
        first_tick: Tick(INPUT_WINDOW),
        inputs: vec![input(1)],
    };
    assert_eq!(relay.receive(P0, &far, Duration::ZERO).out_of_window, 1);
    assert_eq!(
        relay.receive(PlayerId(7), &far, Duration::ZERO),
        InputOutcome::default()
    );
}

#[test]
fn a_disconnected_player_is_dropped_at_its_first_missing_tick() {
    let mut relay = Relay::new(&[P0, P1, P2], TIMEOUT, None, Duration::ZERO, 60);
    send(&mut relay, P0, 0, &[1; 6], Duration::ZERO);
    send(&mut relay, P1, 0, &[1; 3], Duration::ZERO);
    send(&mut relay, P2, 0, &[1; 6], Duration::ZERO);
    assert_eq!(relay.complete(), 3);
    let departure = relay.remove(P1, DropReason::Disconnected).unwrap();
    assert_eq!(departure.tick, Tick(3));
    assert_eq!(relay.remove(P1, DropReason::Timeout), None);
    assert_eq!(relay.complete(), 3);
    let d = bundles(&relay, P0);
    assert_eq!(d.bundles[3].left, vec![P1]);
    assert_eq!(d.bundles[3].inputs.len(), 2);
    assert!(d.bundles[4].left.is_empty());
    assert_eq!(relay.players().collect::<Vec<_>>(), vec![P0, P2]);
}

#[test]
fn a_leaving_player_keeps_the_inputs_it_already_sent() {
    let mut relay = Relay::new(&[P0, P1], TIMEOUT, None, Duration::ZERO, 60);
    send(&mut relay, P1, 0, &[1; 5], Duration::ZERO);
    let departure = relay.remove(P1, DropReason::Left).unwrap();
    assert_eq!(departure.tick, Tick(5));
    send(&mut relay, P1, 5, &[1], Duration::ZERO);
    send(&mut relay, P0, 0, &[1; 8], Duration::ZERO);
    assert_eq!(relay.complete(), 8);
    let d = bundles(&relay, P0);
    assert_eq!(d.bundles[4].inputs.len(), 2);
    assert_eq!(d.bundles[5].left, vec![P1]);
    assert_eq!(d.bundles[5].inputs.len(), 1);
}

#[test]
fn silence_past_the_timeout_drops_the_player() {
    let mut relay = Relay::new(&[P0, P1], TIMEOUT, None, Duration::ZERO, 60);
    send(&mut relay, P0, 0, &[1; 4], Duration::from_secs(2));
    assert!(relay.poll_timeouts(Duration::from_secs(2)).is_empty());
    let departures = relay.poll_timeouts(Duration::from_millis(2001));
    assert_eq!(
        departures,
        vec![Departure {
            player: P1,
            tick: Tick(0),
            reason: DropReason::Timeout
        }]
    );
    assert_eq!(relay.complete(), 4);
    assert!(relay.poll_timeouts(Duration::from_secs(3)).is_empty());
    assert!(!relay.is_empty());
}

#[test]
fn bundles_a_snapshot_covers_are_forgotten_and_the_rest_still_relay() {
    let mut relay = Relay::new(&[P0, P1], TIMEOUT, None, Duration::ZERO, 60);
    send(&mut relay, P0, 0, &[1; 10], Duration::ZERO);
    send(&mut relay, P1, 0, &[2; 10], Duration::ZERO);
    relay.complete();
    assert_eq!(relay.forget_before(Tick(6)), 6);
    assert_eq!((relay.first_kept(), relay.next_tick()), (Tick(6), Tick(10)));
    // History from before the snapshot starts where the relay does.
    let (first, kept) = relay.history(Tick(0), Tick(10));
    assert_eq!((first, kept.len()), (Tick(6), 4));
    assert_eq!(
        relay.bundles_from(Tick(8)).next().map(|(t, _)| t),
        Some(Tick(8))
    );
    // A repeat of an input of a forgotten tick is ignored, not a panic;
    // new ticks still bundle, with the previous input to stand in.
    send(&mut relay, P0, 3, &[1; 9], Duration::ZERO);
    send(&mut relay, P1, 10, &[2; 2], Duration::ZERO);
    assert_eq!(relay.complete(), 2);
    assert_eq!(
        relay.history(Tick(11), Tick(12)).1[0].inputs[1].input,
        input(2)
    );
    let d = bundles(&relay, P0);
    assert_eq!(d.first_tick, Tick(6));
    // Never past the last complete tick.
    assert_eq!(relay.forget_before(Tick(100)), 6);
    assert_eq!(relay.first_kept(), Tick(12));
}

#[test]
fn acknowledged_bundles_are_not_repeated() {
    let mut relay = Relay::new(&[P0, P1], TIMEOUT, None, Duration::ZERO, 60);
    send(&mut relay, P0, 0, &[1; 10], Duration::ZERO);
    send(&mut relay, P1, 0, &[1; 10], Duration::ZERO);
    relay.complete();
    assert_eq!(bundles(&relay, P0).bundles.len(), 10);
    let ack = InputDatagram {
        bundles_ack: Tick(7),
        first_tick: Tick(10),
        inputs: vec![],
    };
    relay.receive(P0, &ack, Duration::ZERO);
    let d = bundles(&relay, P0);
    assert_eq!((d.first_tick, d.bundles.len()), (Tick(7), 3));
    assert_eq!(bundles(&relay, P1).bundles.len(), 10);
    relay.receive(P1, &ack, Duration::ZERO);
    assert_eq!(bundles(&relay, P1).first_tick, Tick(7));
    assert!(!relay.is_up_to_date(P0));
    assert_eq!(relay.history(Tick(0), Tick(10)).1.len(), 10);
}

#[test]
fn a_rejoining_player_takes_part_from_its_first_tick_announced_in_the_bundle() {
    let mut relay = Relay::new(&[P0, P1], TIMEOUT, None, Duration::ZERO, 60);
    send(&mut relay, P0, 0, &[1; 4], Duration::ZERO);
    send(&mut relay, P1, 0, &[1; 2], Duration::ZERO);
    relay.complete();
    relay.remove(P1, DropReason::Disconnected);
    assert_eq!(relay.complete(), 2);
    assert_eq!(relay.rejoin(P0, 5, Duration::ZERO), None);
    let first = relay.rejoin(P1, 5, Duration::ZERO).unwrap();
    assert_eq!(first, Tick(9));
    // Inputs before its first tick are refused; the game runs on
    // without it until then.
    let early = InputDatagram {
        bundles_ack: Tick(4),
        first_tick: Tick(8),
        inputs: vec![input(2), input(2)],
    };
    let outcome = relay.receive(P1, &early, Duration::ZERO);
    assert_eq!((outcome.accepted, outcome.out_of_window), (1, 1));
    send(&mut relay, P0, 4, &[1; 8], Duration::ZERO);
    assert_eq!(relay.complete(), 6);
    assert_eq!(relay.next_tick(), Tick(10));
    let d = bundles(&relay, P0);
    let at = |t: usize| &d.bundles[t - d.first_tick.0 as usize];
    assert_eq!(at(8).inputs.len(), 1);
    assert_eq!(at(9).joined, vec![P1]);
    assert_eq!(at(9).inputs.len(), 2);
    assert_eq!(relay.players_at(Tick(8)), vec![P0]);
    assert_eq!(relay.players_at(Tick(9)), vec![P0, P1]);
}

#[test]
fn the_standings_say_how_early_each_players_inputs_arrived() {
    let mut relay = Relay::new(&[P0, P1], TIMEOUT, None, Duration::ZERO, 50);
    let ms = Duration::from_millis;
    // The first second (50 ticks) is not timed.
    send(&mut relay, P0, 0, &[1], ms(900));
    // P0 sends tick 50 (needed at 1020 ms) at 1005 ms; P1 at 1030 ms,
    // late.
    send(&mut relay, P0, 50, &[1], ms(1005));
    send(&mut relay, P1, 50, &[1], ms(1030));
    // A repeat of an input already counted changes nothing.
    send(&mut relay, P1, 50, &[1], ms(1090));
    let slack = |p| {
        relay
            .standings(ms(1030))
            .iter()
            .find(|s| s.player == p)
            .and_then(|s| s.slack)
    };
    assert_eq!(slack(P0).map(|s| (s.p1_ms, s.p10_ms)), Some((15, 15)));
    assert_eq!(slack(P1).map(|s| (s.from, s.p1_ms)), Some((Tick(50), -10)));
    let fresh = Relay::new(&[P0], TIMEOUT, None, Duration::ZERO, 50);
    assert_eq!(fresh.standings(ms(1))[0].slack, None);
}

#[test]
fn standings_name_who_the_next_tick_waits_for() {
    let mut relay = Relay::new(&[P0, P1], TIMEOUT, None, Duration::ZERO, 60);
    send(&mut relay, P0, 0, &[1; 2], Duration::from_millis(100));
    let standings = relay.standings(Duration::from_millis(700));
    assert!(!standings[0].waited_for);
    assert!(standings[1].waited_for);
    assert_eq!(standings[1].silent, Duration::from_millis(700));
    assert_eq!(standings[0].silent, Duration::from_millis(600));
}

const TOLERANCE: Duration = Duration::from_millis(50);

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn tolerant(players: &[PlayerId]) -> Relay {
    Relay::new(players, TIMEOUT, Some(TOLERANCE), Duration::ZERO, 60)
}

fn stand_in(player: PlayerId, tick: u32, waited: u64) -> Substitution {
    Substitution {
        player,
        tick: Tick(tick),
        waited: ms(waited),
    }
}

#[test]
fn no_input_is_stood_in_for_before_half_a_tick_before_its_tick_is_needed() {
    let mut relay = tolerant(&[P0, P1]);
    // P0 is 30 ticks ahead of its need (a larger delay than P1's):
    // tick 0 is needed at 16.7 ms, tick 30 at 516.7 ms, so its
    // stand-in may leave from 508.3 ms on.
    send(&mut relay, P0, 0, &[1; 31], ms(0));
    send(&mut relay, P1, 0, &[1; 30], ms(0));
    assert_eq!(relay.complete(), 30);
    assert_eq!(
        relay.next_stand_in(),
        Some(Duration::from_nanos(508_333_313)),
        "the driver wakes for it"
    );
    assert!(relay.poll_laggards(ms(100)).is_empty());
    assert!(relay.poll_laggards(ms(508)).is_empty());
    assert_eq!(relay.poll_laggards(ms(509)), vec![stand_in(P1, 30, 509)]);
    assert_eq!(relay.complete(), 1);
    assert_eq!(relay.next_stand_in(), None, "nothing of tick 31 is in");
}

#[test]
fn the_next_stand_in_waits_for_the_tolerance_after_the_last_arrival() {
    let mut relay = tolerant(&[P0, P1]);
    // Tick 40 is needed at 683.3 ms; P0's input for it arrives late,
    // at 700 ms, so the stand-in waits the tolerance from then.
    send(&mut relay, P0, 0, &[1; 40], ms(0));
    send(&mut relay, P1, 0, &[1; 40], ms(0));
    assert_eq!(relay.complete(), 40);
    send(&mut relay, P0, 40, &[1], ms(700));
    assert_eq!(relay.next_stand_in(), Some(ms(700) + TOLERANCE));
    let mut relay = Relay::new(&[P0, P1], TIMEOUT, None, Duration::ZERO, 60);
    send(&mut relay, P0, 0, &[1], ms(0));
    assert_eq!(relay.next_stand_in(), None, "no tolerance, no stand-in");
}

#[test]
fn a_missing_input_is_stood_in_for_the_tolerance_after_the_last_other_arrived() {
    let mut relay = tolerant(&[P0, P1, P2]);
    send(&mut relay, P0, 0, &[1, 1], ms(0));
    send(&mut relay, P1, 0, &[4, 5], ms(0));
    send(&mut relay, P2, 0, &[1, 1], ms(0));
    assert_eq!(relay.complete(), 2);
    send(&mut relay, P0, 2, &[1], ms(100));
    send(&mut relay, P2, 2, &[1], ms(110));
    assert!(relay.poll_laggards(ms(159)).is_empty(), "not before");
    assert_eq!(relay.complete(), 0);
    assert_eq!(relay.poll_laggards(ms(160)), vec![stand_in(P1, 2, 50)]);
    assert_eq!(relay.complete(), 1);
    // P1's input of tick 1 again, marked.
    let bundle = &relay.history(Tick(2), Tick(3)).1[0];
    assert_eq!(bundle.inputs[1].input, input(5));
    assert_eq!(bundle.substituted, vec![P1]);
    assert!(relay
        .history(Tick(0), Tick(2))
        .1
        .iter()
        .all(|b| b.substituted.is_empty()));
    // The late player is told to stop repeating it.
    assert_eq!(relay.datagram_start(P1), Some((Tick(0), Tick(3))));
}

#[test]
fn a_late_input_for_a_stood_in_tick_is_a_repeat_and_no_conflict() {
    let mut relay = tolerant(&[P0, P1]);
    send(&mut relay, P0, 0, &[1, 1], ms(0));
    assert_eq!(relay.poll_laggards(ms(50)).len(), 2);
    assert_eq!(relay.complete(), 2);
    let late = InputDatagram {
        bundles_ack: Tick(0),
        first_tick: Tick(0),
        inputs: vec![input(3), input(3), input(3)],
    };
    let outcome = relay.receive(P1, &late, ms(80));
    assert_eq!(
        outcome,
        InputOutcome {
            accepted: 1,
            repeated: 2,
            conflicting: 0,
            out_of_window: 0
        }
    );
    assert_eq!(relay.complete(), 0);
    assert_eq!(
        relay.history(Tick(0), Tick(1)).1[0].inputs[1].input,
        input(0)
    );
    send(&mut relay, P0, 2, &[1], ms(90));
    assert_eq!(relay.complete(), 1, "its input of tick 2 arrived in time");
    assert!(relay.history(Tick(2), Tick(3)).1[0].substituted.is_empty());
}

#[test]
fn every_missing_player_is_stood_in_for_on_every_tick_the_others_completed() {
    let mut relay = tolerant(&[P0, P1, P2]);
    send(&mut relay, P0, 0, &[1], ms(0));
    send(&mut relay, P1, 0, &[7], ms(0));
    send(&mut relay, P2, 0, &[9], ms(0));
    assert_eq!(relay.complete(), 1);
    send(&mut relay, P0, 1, &[1, 1], ms(10));
    send(&mut relay, P0, 3, &[1], ms(40));
    assert!(relay.poll_laggards(ms(59)).is_empty());
    assert_eq!(
        relay.poll_laggards(ms(60)),
        vec![
            stand_in(P1, 1, 50),
            stand_in(P2, 1, 50),
            stand_in(P1, 2, 50),
            stand_in(P2, 2, 50)
        ]
    );
    assert_eq!(relay.complete(), 2);
    for bundle in relay.history(Tick(1), Tick(3)).1 {
        assert_eq!(bundle.substituted, vec![P1, P2]);
        let inputs: Vec<Input> = bundle.inputs.iter().map(|i| i.input).collect();
        assert_eq!(inputs, vec![input(1), input(7), input(9)]);
    }
    // Tick 3's wait runs from its own input.
    assert!(relay.poll_laggards(ms(89)).is_empty());
    assert_eq!(relay.poll_laggards(ms(90)).len(), 2);
}

#[test]
fn a_player_without_a_previous_input_is_stood_in_for_with_the_default() {
    let mut relay = tolerant(&[P0, P1]);
    send(&mut relay, P0, 0, &[1], ms(0));
    assert_eq!(relay.poll_laggards(ms(50)), vec![stand_in(P1, 0, 50)]);
    relay.complete();
    assert_eq!(
        relay.history(Tick(0), Tick(1)).1[0].inputs[1].input,
        Input::default()
    );
}

#[test]
fn nothing_is_stood_in_for_when_the_tolerance_is_off_or_no_input_of_the_tick_is_in() {
    let mut off = Relay::new(&[P0, P1], TIMEOUT, None, Duration::ZERO, 60);
    send(&mut off, P0, 0, &[1; 3], ms(0));
    assert!(off.poll_laggards(ms(1000)).is_empty());
    assert_eq!(off.complete(), 0);

    let mut relay = tolerant(&[P0, P1]);
    assert!(relay.poll_laggards(ms(1000)).is_empty());
    let mut alone = tolerant(&[P0]);
    assert!(alone.poll_laggards(ms(1000)).is_empty());
    assert_eq!(alone.next_tick(), Tick(0));
}

#[test]
fn a_leaving_player_is_never_stood_in_for() {
    let mut relay = tolerant(&[P0, P1]);
    send(&mut relay, P1, 0, &[1; 2], ms(0));
    relay.remove(P1, DropReason::Left);
    send(&mut relay, P0, 0, &[1; 5], ms(0));
    assert!(relay.poll_laggards(ms(1000)).is_empty());
    assert_eq!(relay.complete(), 5);
    let bundles = relay.history(Tick(0), Tick(5)).1;
    assert_eq!(bundles[2].left, vec![P1]);
    assert!(bundles.iter().all(|b| b.substituted.is_empty()));
}

#[test]
fn datagrams_fit_the_size_limit_oldest_bundles_first() {
    let players: Vec<PlayerId> = (0..64).map(PlayerId).collect();
    let mut relay = Relay::new(&players, TIMEOUT, None, Duration::ZERO, 60);
    for &p in &players {
        send(&mut relay, p, 0, &[1; 40], Duration::ZERO);
    }
    assert_eq!(relay.complete(), 40);
    let bytes = relay.datagram_for(P0, MAX_DATAGRAM_SIZE).unwrap();
    assert!(bytes.len() <= MAX_DATAGRAM_SIZE);
    let d = bundles(&relay, P0);
    assert_eq!(d.first_tick, Tick(0));
    assert!(!d.bundles.is_empty() && d.bundles.len() < 40);
}
