//! The datagram exchange's rules, one test each.

use std::collections::BTreeMap;

use super::*;
use lockstep_protocol::{decode, encode_bundles, Buttons, PlayerId, PlayerInput, ServerDatagram};

/// The tick period at 60 Hz, as the link computes it from Start.
const TICK: Duration = Duration::from_nanos(16_666_666);

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn input(n: u32) -> Input {
    Input {
        buttons: Buttons(n as u8),
        axes: None,
    }
}

/// Bundles for ticks `first..first + count`, each telling its tick.
fn bundles(first: u32, count: u32) -> Vec<Bundle> {
    (first..first + count)
        .map(|tick| Bundle {
            inputs: vec![PlayerInput {
                player: PlayerId(0),
                input: input(tick),
            }],
            ..Bundle::default()
        })
        .collect()
}

/// A bundle datagram as the server encodes it and the driver decodes it.
fn from_server(inputs_ack: u32, first_tick: u32, count: u32) -> BundleDatagram {
    let bytes = encode_bundles(
        Tick(inputs_ack),
        Tick(first_tick),
        &bundles(first_tick, count),
        MAX_DATAGRAM_SIZE,
    )
    .unwrap();
    let ServerDatagram::Bundles(datagram) = decode(&bytes, MAX_DATAGRAM_SIZE).unwrap();
    datagram
}

/// What the server reads from the link's bytes.
fn sent(bytes: Option<Vec<u8>>) -> InputDatagram {
    let bytes = bytes.expect("a datagram to send");
    let ClientDatagram::Inputs(datagram) = decode(&bytes, MAX_DATAGRAM_SIZE).unwrap();
    datagram
}

/// A link whose 60 Hz game started at time zero.
fn started() -> Link {
    let mut link = Link::default();
    link.start(60, Duration::ZERO);
    link
}

/// Live bundles for ticks `first..first + count` arriving at `at`.
fn arrive(link: &mut Link, first: u32, count: u32, at: Duration) -> Option<NewBundles> {
    link.receive(from_server(0, first, count), at)
}

#[test]
fn on_a_reliable_transport_each_input_goes_once_and_only_the_heartbeat_is_due() {
    let mut link = Link::new(true);
    link.start(60, Duration::ZERO);
    link.queue_input(Tick(0), input(10));
    let d = sent(link.next_datagram(ms(0), MAX_DATAGRAM_SIZE));
    assert_eq!((d.first_tick, d.inputs), (Tick(0), vec![input(10)]));
    link.queue_input(Tick(1), input(11));
    let d = sent(link.next_datagram(ms(17), MAX_DATAGRAM_SIZE));
    assert_eq!((d.first_tick, d.inputs), (Tick(1), vec![input(11)]));
    // Nothing to repeat however long the server takes to acknowledge.
    assert!(!link.due(ms(17) + RESEND_AFTER));
    assert!(link.due(ms(17) + HEARTBEAT));
    let d = sent(link.next_datagram(ms(17) + HEARTBEAT, MAX_DATAGRAM_SIZE));
    assert_eq!((d.first_tick, d.inputs), (Tick(2), vec![]));
    // A late acknowledgement of what was sent changes nothing.
    link.receive(from_server(1, 0, 1), ms(200));
    link.queue_input(Tick(2), input(12));
    let d = sent(link.next_datagram(ms(210), MAX_DATAGRAM_SIZE));
    assert_eq!((d.first_tick, d.inputs), (Tick(2), vec![input(12)]));
}

#[test]
fn every_unacknowledged_input_is_repeated_until_the_server_acknowledges_it() {
    let mut link = started();
    link.queue_input(Tick(0), input(10));
    let d = sent(link.next_datagram(ms(0), MAX_DATAGRAM_SIZE));
    assert_eq!((d.first_tick, d.inputs), (Tick(0), vec![input(10)]));

    link.queue_input(Tick(1), input(11));
    let d = sent(link.next_datagram(ms(17), MAX_DATAGRAM_SIZE));
    assert_eq!(
        (d.first_tick, d.inputs),
        (Tick(0), vec![input(10), input(11)])
    );

    // The server needs tick 1 next: tick 0 is acknowledged.
    link.receive(from_server(1, 0, 1), ms(20));
    link.queue_input(Tick(2), input(12));
    let d = sent(link.next_datagram(ms(33), MAX_DATAGRAM_SIZE));
    assert_eq!(
        (d.first_tick, d.inputs),
        (Tick(1), vec![input(11), input(12)])
    );

    link.receive(from_server(3, 1, 1), ms(40));
    let d = sent(link.next_datagram(ms(50), MAX_DATAGRAM_SIZE));
    assert_eq!(d.inputs, vec![]);
}

#[test]
fn the_first_input_queued_for_a_tick_is_the_one_sent() {
    let mut link = started();
    assert_eq!(link.queue_input(Tick(0), input(10)), Tick(0)..Tick(1));
    assert_eq!(link.queue_input(Tick(1), input(11)), Tick(1)..Tick(2));
    // A second input for a queued tick changes nothing.
    assert!(link.queue_input(Tick(0), input(99)).is_empty());
    assert!(link.queue_input(Tick(1), input(99)).is_empty());
    let d = sent(link.next_datagram(ms(0), MAX_DATAGRAM_SIZE));
    assert_eq!(
        (d.first_tick, d.inputs),
        (Tick(0), vec![input(10), input(11)])
    );
}

#[test]
fn an_acknowledged_tick_is_never_queued_again() {
    let mut link = started();
    link.queue_input(Tick(0), input(10));
    link.queue_input(Tick(1), input(11));
    link.receive(from_server(2, 0, 1), ms(10));
    assert!(link.queue_input(Tick(0), input(99)).is_empty());
    assert!(link.queue_input(Tick(1), input(99)).is_empty());
    assert!(!link.due(RESEND_AFTER));
    link.queue_input(Tick(2), input(12));
    let d = sent(link.next_datagram(ms(20), MAX_DATAGRAM_SIZE));
    assert_eq!((d.first_tick, d.inputs), (Tick(2), vec![input(12)]));
}

#[test]
fn queueing_a_later_tick_gives_its_input_to_the_ticks_before_it() {
    let mut link = started();
    link.queue_input(Tick(0), input(10));
    assert_eq!(link.queue_input(Tick(3), input(7)), Tick(1)..Tick(4));
    // The frontend's samples for those ticks come too late.
    assert!(link.queue_input(Tick(2), input(12)).is_empty());
    assert_eq!(link.queue_input(Tick(4), input(14)), Tick(4)..Tick(5));
    let d = sent(link.next_datagram(ms(0), MAX_DATAGRAM_SIZE));
    assert_eq!(
        (d.first_tick, d.inputs),
        (
            Tick(0),
            vec![input(10), input(7), input(7), input(7), input(14)]
        )
    );
}

#[test]
fn a_rejoining_player_queues_from_its_first_tick() {
    let mut link = started();
    // The server acknowledges nothing of ours before our first input.
    link.receive(from_server(0, 0, 1), ms(0));
    assert_eq!(link.queue_input(Tick(500), input(1)), Tick(500)..Tick(501));
    let d = sent(link.next_datagram(ms(1), MAX_DATAGRAM_SIZE));
    assert_eq!((d.first_tick, d.inputs), (Tick(500), vec![input(1)]));
}

#[test]
fn inputs_of_lost_datagrams_arrive_with_the_next_one() {
    let mut link = started();
    let mut server = BTreeMap::new();
    for tick in 0..3 {
        link.queue_input(Tick(tick), input(tick));
        let d = sent(link.next_datagram(TICK * tick, MAX_DATAGRAM_SIZE));
        // The first two datagrams are lost.
        if tick == 2 {
            for (i, input) in (0..).zip(d.inputs) {
                server.insert(d.first_tick.plus(i), input);
            }
        }
    }
    let expected: BTreeMap<Tick, Input> = (0..3).map(|t| (Tick(t), input(t))).collect();
    assert_eq!(server, expected);
}

#[test]
fn bundles_of_a_lost_datagram_arrive_with_the_next_one() {
    let mut link = started();
    assert!(arrive(&mut link, 0, 1, ms(0)).is_some());
    // The datagram with bundle 1 is lost: we keep acknowledging 1, so
    // the server's next datagram starts there.
    assert_eq!(
        sent(link.next_datagram(ms(20), MAX_DATAGRAM_SIZE)).bundles_ack,
        Tick(1)
    );
    assert_eq!(
        arrive(&mut link, 1, 2, ms(33)),
        Some(NewBundles {
            first_tick: Tick(1),
            bundles: bundles(1, 2),
        })
    );
    assert_eq!(
        sent(link.next_datagram(ms(40), MAX_DATAGRAM_SIZE)).bundles_ack,
        Tick(3)
    );
}

#[test]
fn a_stale_datagram_adds_nothing_and_never_moves_acknowledgements_back() {
    let mut link = started();
    for tick in 0..4 {
        link.queue_input(Tick(tick), input(tick));
    }
    let newer = from_server(3, 0, 3);
    let older = from_server(1, 0, 1);
    assert!(link.receive(newer, ms(50)).is_some());
    assert_eq!(link.receive(older, ms(51)), None);

    assert_eq!(link.received_through(), Tick(3));
    let d = sent(link.next_datagram(ms(52), MAX_DATAGRAM_SIZE));
    assert_eq!(
        (d.bundles_ack, d.first_tick, d.inputs),
        (Tick(3), Tick(3), vec![input(3)])
    );
}

#[test]
fn bundles_are_delivered_once_and_contiguous() {
    let mut link = started();
    let mut delivered = Vec::new();
    for (first, count) in [(0, 3), (1, 4), (0, 2), (5, 1), (4, 2)] {
        if let Some(new) = arrive(&mut link, first, count, TICK * first) {
            assert_eq!(new.first_tick, Tick(delivered.len() as u32));
            assert!(!new.bundles.is_empty());
            delivered.extend(new.bundles);
        }
    }
    assert_eq!(delivered, bundles(0, 6));
    assert_eq!(link.received_through(), Tick(6));
}

#[test]
fn a_datagram_starting_after_a_gap_is_ignored_but_its_inputs_ack_counts() {
    let mut link = started();
    link.queue_input(Tick(0), input(0));
    link.queue_input(Tick(1), input(1));
    assert!(arrive(&mut link, 0, 2, ms(0)).is_some());

    assert_eq!(link.receive(from_server(1, 3, 2), ms(17)), None);
    assert_eq!(link.received_through(), Tick(2));
    let d = sent(link.next_datagram(ms(20), MAX_DATAGRAM_SIZE));
    assert_eq!(
        (d.bundles_ack, d.first_tick, d.inputs),
        (Tick(2), Tick(1), vec![input(1)])
    );

    // The server repeats from our acknowledgement.
    assert_eq!(
        arrive(&mut link, 2, 3, ms(33)),
        Some(NewBundles {
            first_tick: Tick(2),
            bundles: bundles(2, 3),
        })
    );
}

#[test]
fn history_is_delivered_once_and_is_not_an_arrival() {
    let mut link = started();
    assert!(arrive(&mut link, 0, 1, Duration::ZERO).is_some());
    assert_eq!(
        link.take_history(Tick(0), bundles(0, 60)),
        Some(NewBundles {
            first_tick: Tick(1),
            bundles: bundles(1, 59),
        })
    );
    assert_eq!(link.take_history(Tick(30), bundles(30, 30)), None);

    // One live bundle one tick after the last live one: perfectly
    // regular, however many bundles History brought in between.
    assert_eq!(
        arrive(&mut link, 58, 3, TICK).map(|new| new.first_tick),
        Some(Tick(60))
    );
    assert_eq!(link.irregularity(), Duration::ZERO);
}

#[test]
fn inputs_are_trimmed_to_fit_the_size_limit_oldest_kept() {
    let mut link = started();
    for tick in 0..8 {
        link.queue_input(Tick(tick), input(tick));
    }
    let full = link.next_datagram(ms(0), MAX_DATAGRAM_SIZE).unwrap().len();
    let bytes = link.next_datagram(ms(1), full - 1).unwrap();
    assert!(bytes.len() < full);
    let d = sent(Some(bytes));
    assert_eq!(
        (d.first_tick, d.inputs),
        (Tick(0), (0..4).map(input).collect::<Vec<_>>())
    );
}

#[test]
fn datagrams_never_exceed_the_protocol_limit() {
    let mut link = started();
    for tick in 0..1000 {
        link.queue_input(
            Tick(tick),
            Input {
                buttons: Buttons(0),
                axes: Some([1, -1]),
            },
        );
    }
    let bytes = link.next_datagram(ms(0), usize::MAX).unwrap();
    assert!(bytes.len() <= MAX_DATAGRAM_SIZE);
    let d = sent(Some(bytes));
    assert_eq!((d.first_tick, d.inputs.len()), (Tick(0), 250));
}

#[test]
fn nothing_is_sent_when_not_even_the_acknowledgement_fits() {
    let mut link = started();
    link.queue_input(Tick(0), input(0));
    assert_eq!(link.next_datagram(ms(0), 2), None);
    // Nothing counted as sent: the resend is still due.
    assert!(link.due(RESEND_AFTER));
}

#[test]
fn nothing_is_due_before_the_game_starts() {
    let link = Link::default();
    assert!(!link.started());
    assert!(!link.due(ms(10_000)));
}

#[test]
fn unacknowledged_inputs_are_repeated_after_resend_after() {
    let mut link = started();
    link.queue_input(Tick(0), input(0));
    assert!(link.next_datagram(ms(0), MAX_DATAGRAM_SIZE).is_some());
    assert!(!link.due(RESEND_AFTER - ms(1)));
    assert!(link.due(RESEND_AFTER));

    // Sending restarts the wait.
    assert!(link
        .next_datagram(RESEND_AFTER, MAX_DATAGRAM_SIZE)
        .is_some());
    assert!(!link.due(RESEND_AFTER * 2 - ms(1)));
    assert!(link.due(RESEND_AFTER * 2));
}

#[test]
fn an_idle_link_sends_a_heartbeat() {
    let mut link = Link::default();
    link.start(60, ms(500));
    assert!(!link.due(ms(500) + HEARTBEAT - ms(1)));
    assert!(link.due(ms(500) + HEARTBEAT));
}

#[test]
fn acknowledged_inputs_wait_for_the_heartbeat() {
    let mut link = started();
    link.queue_input(Tick(0), input(0));
    assert!(link.next_datagram(ms(0), MAX_DATAGRAM_SIZE).is_some());
    link.receive(from_server(1, 0, 1), ms(10));
    assert!(!link.due(RESEND_AFTER));
    assert!(!link.due(HEARTBEAT - ms(1)));
    assert!(link.due(HEARTBEAT));
}

/// Queues the inputs of `ticks` at `now` one tick at a time, as a
/// frontend sends them, each followed by a datagram when the pace allows;
/// the datagrams sent.
fn send_each(link: &mut Link, ticks: std::ops::Range<u32>, now: Duration) -> Vec<InputDatagram> {
    let mut datagrams = Vec::new();
    for tick in ticks {
        link.queue_input(Tick(tick), input(tick));
        if link.may_send(now) {
            datagrams.push(sent(link.next_datagram(now, MAX_DATAGRAM_SIZE)));
        }
    }
    datagrams
}

#[test]
fn inputs_of_a_hundred_overdue_ticks_leave_in_a_burst_then_together_at_the_pace() {
    // A machine waking from a stop: its clock says 128 ticks are overdue,
    // and their inputs come one tick at a time.
    let mut link = started();
    let woke = ms(5_000);
    let burst = send_each(&mut link, 0..128, woke);
    assert_eq!(burst.len(), SEND_BURST as usize);
    assert_eq!(burst[0].inputs.len(), 1);
    assert_eq!(
        burst.last().map(|d| d.inputs.len()),
        Some(SEND_BURST as usize)
    );
    // The rest wait for the pace, then go together, the repeats with them.
    assert!(!link.due(woke + SEND_PACE - Duration::from_nanos(1)));
    assert!(link.due(woke + SEND_PACE));
    let rest = sent(link.next_datagram(woke + SEND_PACE, MAX_DATAGRAM_SIZE));
    assert_eq!((rest.first_tick, rest.inputs.len()), (Tick(0), 128));
    // Nothing new: nothing more is due until the repeat.
    assert!(!link.due(woke + SEND_PACE * 2));
    assert!(link.due(woke + SEND_PACE + RESEND_AFTER));
}

#[test]
fn the_pace_keeps_a_frontend_running_flat_out_under_the_servers_limit() {
    // Catching up after a stop: a tick's input every 0.1 ms for a second.
    let mut link = started();
    let mut datagrams = 0;
    for tick in 0..10_000u32 {
        let now = ms(5_000) + Duration::from_micros(100) * tick;
        datagrams += send_each(&mut link, tick..tick + 1, now).len();
        // The server acknowledges as it goes.
        link.receive(from_server(tick + 1, 0, 0), now);
    }
    let most = SEND_BURST as usize + 1_000_000 / SEND_PACE.as_micros() as usize;
    assert!(datagrams <= most, "{datagrams} datagrams, at most {most}");
    assert!(most < MAX_DATAGRAMS_PER_SECOND as usize);
}

#[test]
fn a_frame_that_runs_a_few_ticks_sends_each_input_at_once() {
    let mut link = started();
    let datagrams = send_each(&mut link, 0..3, ms(100));
    let firsts: Vec<Tick> = datagrams.iter().map(|d| d.first_tick).collect();
    assert_eq!(firsts, vec![Tick(0); 3]);
    assert_eq!(datagrams[2].inputs.len(), 3);
    // A tick later three more find room: the burst refills at the pace.
    assert_eq!(send_each(&mut link, 3..6, ms(100) + TICK).len(), 3);
}

#[test]
fn arrivals_one_tick_apart_have_no_jitter() {
    let mut link = started();
    for tick in 0..120 {
        assert!(arrive(&mut link, tick, 1, TICK * tick).is_some());
    }
    assert_eq!(link.irregularity(), Duration::ZERO);
}

#[test]
fn a_slower_game_spaces_its_bundles_further_apart_without_jitter() {
    let mut link = started();
    link.set_speed(Tick(60), Percent(40));
    let mut at = Duration::ZERO;
    for tick in 0..120 {
        assert!(arrive(&mut link, tick, 1, at).is_some());
        at += if tick < 59 { TICK } else { TICK * 5 / 2 };
    }
    assert_eq!(link.irregularity(), Duration::ZERO);
}

#[test]
fn two_bundles_every_two_ticks_are_no_jitter_but_a_wait_of_one_tick() {
    let mut link = started();
    for tick in (0..120).step_by(2) {
        assert!(arrive(&mut link, tick, 2, TICK * (tick + 1)).is_some());
    }
    // The spacing matches the ticks carried, but each bundle pair
    // leaves the game a tick without news.
    assert_eq!(link.jitter, Duration::ZERO);
    assert_eq!(link.outage, TICK);
    assert_eq!(link.irregularity(), TICK * 3 / 4);
}

#[test]
fn alternating_early_and_late_arrivals_raise_the_jitter() {
    let mut link = started();
    let mut at = Duration::ZERO;
    let mut after_eight = Duration::ZERO;
    for tick in 0..100 {
        assert!(arrive(&mut link, tick, 1, at).is_some());
        at += if tick % 2 == 0 {
            TICK + ms(4)
        } else {
            TICK - ms(4)
        };
        if tick == 8 {
            after_eight = link.irregularity();
        }
    }
    // Each gap is 4 ms off: the smoothed deviation approaches 4 ms.
    assert!(after_eight > ms(2), "{after_eight:?}");
    assert!(link.irregularity() > after_eight);
    assert!(link.irregularity() > ms(3) && link.irregularity() <= ms(4));
    // The late arrivals wait 4 ms beyond a tick; three quarters of
    // that is less than the jitter, which therefore counts.
    assert_eq!(link.irregularity(), link.jitter);
}

#[test]
fn a_pause_beyond_the_outlier_limit_is_not_jitter() {
    let mut link = started();
    for tick in 0..10 {
        assert!(arrive(&mut link, tick, 1, TICK * tick).is_some());
    }
    let resumed = TICK * 9 + JITTER_OUTLIER;
    assert!(arrive(&mut link, 10, 1, resumed).is_some());
    assert_eq!(link.irregularity(), Duration::ZERO);
    // Regular arrivals after it are measured from the pause's end.
    for tick in 11..20 {
        assert!(arrive(&mut link, tick, 1, resumed + TICK * (tick - 10)).is_some());
    }
    assert_eq!(link.irregularity(), Duration::ZERO);
}

#[test]
fn a_gap_just_under_the_outlier_limit_counts() {
    let mut link = started();
    assert!(arrive(&mut link, 0, 1, Duration::ZERO).is_some());
    let gap = JITTER_OUTLIER - ms(1);
    assert!(arrive(&mut link, 1, 1, gap).is_some());
    assert_eq!(link.outage, gap - TICK);
    assert_eq!(link.jitter, (gap - TICK) / 8);
}

/// Regular arrivals for ticks 0..60, then a burst of five lost bundle
/// datagrams: the sixth brings all six bundles at once.
fn after_a_burst_of_five_losses() -> Link {
    let mut link = started();
    for tick in 0..60 {
        assert!(arrive(&mut link, tick, 1, TICK * tick).is_some());
    }
    assert!(arrive(&mut link, 60, 6, TICK * 65).is_some());
    link
}

#[test]
fn a_burst_of_losses_raises_the_outage_at_once() {
    let link = after_a_burst_of_five_losses();
    // Redundancy made up for the bundles, so the spacing matched the
    // ticks they carry: no jitter. The wait for news shows the burst.
    assert_eq!(link.jitter, Duration::ZERO);
    assert_eq!(link.outage, TICK * 5);
}

#[test]
fn irregularity_is_three_quarters_of_the_outage_when_that_is_larger() {
    let link = after_a_burst_of_five_losses();
    assert_eq!(link.irregularity(), TICK * 5 * 3 / 4);
}

#[test]
fn the_outage_halves_in_about_180_arrivals() {
    let mut link = after_a_burst_of_five_losses();
    let peak = link.outage;
    for n in 1..=190 {
        let tick = 65 + n;
        assert!(arrive(&mut link, tick, 1, TICK * tick).is_some());
        match n {
            170 => assert!(link.outage > peak / 2, "{:?}", link.outage),
            190 => assert!(link.outage < peak / 2, "{:?}", link.outage),
            _ => {}
        }
    }
    assert_eq!(link.jitter, Duration::ZERO);
}
