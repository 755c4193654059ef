//! The client's side of the datagram exchange: acknowledgements, redundancy
//! and the arrival estimate behind the adaptive input delay.
//!
//! Pure state machine in the quinn-proto style, like the server's relay: no
//! socket and no clock. The pure [`Connection`](crate::connection::Connection)
//! holds it and passes `now` (the connection's clock, which its driver in
//! [`crate::net`] reads) in with whatever arrived, then has the driver send
//! the bytes the link returns:
//!
//! ```text
//! Start arrives            => link.start(tick_rate, now)
//! Speed arrives            => link.set_speed(from_tick, percent)
//! bundle datagram arrives  => deliver(link.receive(datagram, now))
//! History on the stream    => deliver(link.take_history(first_tick, bundles))
//! local input for a tick   => if !link.queue_input(tick, input).is_empty() {
//!                                 send(link.next_datagram(now, max_size))
//!                             }
//! every RESEND_AFTER / 3   => if link.due(now) { send(link.next_datagram(now, max_size)) }
//! HUD refresh              => show(link.irregularity())
//! ```
//!
//! # Rules
//! - One input per tick, the first one queued: the frontend's sample and
//!   the network thread's input on schedule ([`crate::input_schedule`])
//!   may both name a tick, and the server must never see two inputs for
//!   one. A tick acknowledged or already queued keeps its input.
//! - Every input datagram carries every local input the server has not
//!   acknowledged, oldest first, so a lost datagram delays nothing: the next
//!   one repeats its inputs. The server's `inputs_ack` ends the repeats.
//! - Every input datagram acknowledges the bundles received, so the server
//!   stops repeating them.
//! - A datagram too large for the path keeps the older half of its inputs,
//!   as often as needed: the server needs the oldest one first, and the
//!   rest follow once it is acknowledged.
//! - Bundles are delivered exactly once, contiguous. A datagram that starts
//!   past the first missing bundle is ignored; the server repeats from our
//!   acknowledgement, so its bundles come again. Acknowledgements never move
//!   backwards, whatever order datagrams arrive in.
//! - Once the game has started, unacknowledged inputs are repeated after
//!   [`RESEND_AFTER`] without sending, and something is sent at least every
//!   [`HEARTBEAT`].
//! - Only live bundle datagrams count for the arrival estimate: History on
//!   the stream is a catch-up, not a sign of how the path behaves.
//! - Bundles are expected one tick apart at the game speed in force for
//!   them: a game the server slowed down sends them further apart, and
//!   that is not jitter.

use std::collections::VecDeque;
use std::ops::Range;
use std::time::Duration;

use lockstep_engine::timing::speed::SpeedSchedule;
use lockstep_protocol::{
    encode, Bundle, BundleDatagram, ClientDatagram, Input, InputDatagram, Percent, Tick,
    MAX_DATAGRAM_SIZE,
};

/// Repeat unacknowledged inputs when nothing was sent for this long: about
/// two ticks at 60 Hz, enough to repair a lost datagram before the stall
/// becomes visible.
pub const RESEND_AFTER: Duration = Duration::from_millis(30);

/// Send something at least this often, even with nothing to repeat, so the
/// server knows a stalled client is alive (its drop timeout is 2 s).
pub const HEARTBEAT: Duration = Duration::from_millis(100);

/// Per-arrival decay of the outage peak: a half-life of about 180 arrivals
/// (3 s at 60 Hz), long enough to span the quiet time between bursts of
/// loss on a bad link.
pub const OUTAGE_DECAY: (u32, u32) = (255, 256);

/// Arrival gaps beyond this are stalls or pauses, not jitter, and are left
/// out of the estimate.
pub const JITTER_OUTLIER: Duration = Duration::from_millis(200);

/// Bundles received for the first time: the bundles of `first_tick`,
/// `first_tick + 1`, ...
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewBundles {
    /// Tick of `bundles[0]`.
    pub first_tick: Tick,
    /// The bundles, never empty.
    pub bundles: Vec<Bundle>,
}

/// Acknowledgement state of the datagram exchange, and how regularly the
/// game's bundles arrive.
#[derive(Debug)]
pub struct Link {
    /// Local inputs the server has not confirmed, one per tick from
    /// `first_unacked` on.
    unacked: VecDeque<Input>,
    /// The tick of `unacked[0]`; `None` until the first input is queued
    /// (a player who rejoins starts at the tick the server gives it).
    first_unacked: Option<Tick>,
    /// First bundle tick not received yet.
    received_through: Tick,
    /// When the last input datagram was built; the resend and heartbeat
    /// timers run from it.
    last_sent: Duration,
    /// Whether Start arrived. The timers only run during the game: QUIC
    /// keep-alives hold the lobby open.
    started: bool,
    /// The game's tick period at each tick (from Start and the speed
    /// announcements), for the jitter estimate.
    speeds: SpeedSchedule,
    /// When new live bundles last arrived.
    last_arrival: Option<Duration>,
    /// Smoothed deviation of arrival spacing from the expected spacing.
    jitter: Duration,
    /// The longest recent wait for news beyond one tick (a burst of lost
    /// datagrams), decaying slowly.
    outage: Duration,
}

impl Default for Link {
    /// A link created at time zero, before Start, expecting 60 Hz until
    /// Start says otherwise.
    fn default() -> Self {
        Link {
            unacked: VecDeque::new(),
            first_unacked: None,
            received_through: Tick(0),
            last_sent: Duration::ZERO,
            started: false,
            speeds: SpeedSchedule::new(60),
            last_arrival: None,
            jitter: Duration::ZERO,
            outage: Duration::ZERO,
        }
    }
}

impl Link {
    /// The game started at `now` with `tick_rate` ticks a second: the
    /// timers run from now, and bundles are expected one tick period apart.
    pub fn start(&mut self, tick_rate: u16, now: Duration) {
        self.started = true;
        self.last_sent = now;
        self.speeds = SpeedSchedule::new(tick_rate);
    }

    /// The game is joined from a snapshot of the world after `tick` ticks:
    /// the first bundle expected is `tick`'s.
    pub fn start_at(&mut self, tick: Tick) {
        self.received_through = tick;
    }

    /// The server's announcement that the game runs at `percent` from
    /// `from_tick` on: bundles of those ticks are expected that much
    /// further apart.
    pub fn set_speed(&mut self, from_tick: Tick, percent: Percent) {
        // The postponement moves the clients' schedules, not the spacing
        // of the bundles.
        self.speeds.announce(from_tick, percent, 0);
    }

    /// Whether the game has started (the driver runs the resend timer only
    /// then).
    pub fn started(&self) -> bool {
        self.started
    }

    /// The first bundle tick not received yet: every bundle before it was
    /// delivered. Our acknowledgement to the server.
    pub fn received_through(&self) -> Tick {
        self.received_through
    }

    /// The smoothed jitter of bundle arrivals: how far their spacing
    /// strays from the ticks they carry.
    pub fn jitter(&self) -> Duration {
        self.jitter
    }

    /// What the delay must absorb beyond the round trip, as a jitter: the
    /// smoothed jitter, or three quarters of the recent worst outage,
    /// whichever is larger. The controller budgets twice the jitter, so an
    /// outage half again as long as the worst seen recently is covered
    /// (loss bursts vary in length).
    pub fn irregularity(&self) -> Duration {
        let outage = self.outage * 3 / 4;
        if outage > self.jitter {
            outage
        } else {
            self.jitter
        }
    }

    /// Applies a bundle datagram that arrived at `now`: ends the repeats of
    /// the inputs it acknowledges and returns the bundles not received
    /// before.
    pub fn receive(&mut self, datagram: BundleDatagram, now: Duration) -> Option<NewBundles> {
        self.acknowledge(datagram.inputs_ack);
        let new = self.take(datagram.first_tick, datagram.bundles)?;
        self.arrived(new.first_tick, new.bundles.len(), now);
        Some(new)
    }

    /// Applies bundles from a History message on the control stream:
    /// returns those not received before. They do not count as an arrival.
    pub fn take_history(&mut self, first_tick: Tick, bundles: Vec<Bundle>) -> Option<NewBundles> {
        self.take(first_tick, bundles)
    }

    /// Keeps `input` for `tick` until the server acknowledges it, and
    /// gives it to every tick before `tick` still without an input (the
    /// network thread fills the ticks the frontend has not sampled yet
    /// this way). A tick that already has an input, acknowledged or not,
    /// keeps it. Returns the ticks that took `input`: empty when `tick`
    /// had one.
    pub fn queue_input(&mut self, tick: Tick, input: Input) -> Range<Tick> {
        let next = self.next_unqueued().unwrap_or(tick);
        if tick < next {
            return next..next;
        }
        self.first_unacked.get_or_insert(next);
        let count = tick.next().since(next) as usize;
        self.unacked.extend(std::iter::repeat_n(input, count));
        next..tick.next()
    }

    /// The first tick without an input; `None` before the first input.
    fn next_unqueued(&self) -> Option<Tick> {
        self.first_unacked
            .map(|first| first.plus(self.unacked.len() as u32))
    }

    /// The server holds our inputs for every tick before `inputs_ack`.
    fn acknowledge(&mut self, inputs_ack: Tick) {
        let Some(first) = self.first_unacked else {
            return;
        };
        if inputs_ack > first {
            let done = (inputs_ack.since(first) as usize).min(self.unacked.len());
            self.unacked.drain(..done);
            self.first_unacked = Some(inputs_ack);
        }
    }

    /// Whether an input datagram is due at `now`: unacknowledged inputs
    /// wait at most [`RESEND_AFTER`] to be repeated, and silence lasts at
    /// most [`HEARTBEAT`]. Never before Start.
    pub fn due(&self, now: Duration) -> bool {
        let idle = now.saturating_sub(self.last_sent);
        self.started && ((!self.unacked.is_empty() && idle >= RESEND_AFTER) || idle >= HEARTBEAT)
    }

    /// The input datagram to send at `now`: every unacknowledged input that
    /// fits in `max_size` bytes (and [`MAX_DATAGRAM_SIZE`]), oldest first,
    /// and our bundle acknowledgement. `None` when not even the bare
    /// acknowledgement fits (the connection carries no datagrams); nothing
    /// counts as sent then, so the timers stay due.
    pub fn next_datagram(&mut self, now: Duration, max_size: usize) -> Option<Vec<u8>> {
        let mut message = ClientDatagram::Inputs(InputDatagram {
            bundles_ack: self.received_through,
            first_tick: self.first_unacked.unwrap_or(self.received_through),
            inputs: self.unacked.iter().copied().collect(),
        });
        let limit = max_size.min(MAX_DATAGRAM_SIZE);
        loop {
            if let Ok(bytes) = encode(&message, limit) {
                self.last_sent = now;
                return Some(bytes);
            }
            let ClientDatagram::Inputs(datagram) = &mut message;
            if datagram.inputs.is_empty() {
                return None;
            }
            let keep = datagram.inputs.len() / 2;
            datagram.inputs.truncate(keep);
        }
    }

    /// Keeps the bundles not received before, if they continue the ones
    /// received.
    fn take(&mut self, first: Tick, bundles: Vec<Bundle>) -> Option<NewBundles> {
        if first > self.received_through {
            return None;
        }
        let skip = self.received_through.since(first) as usize;
        let new: Vec<Bundle> = bundles.into_iter().skip(skip).collect();
        if new.is_empty() {
            return None;
        }
        let first_tick = self.received_through;
        self.received_through = first_tick.plus(new.len() as u32);
        Some(NewBundles {
            first_tick,
            bundles: new,
        })
    }

    /// Updates the arrival estimate: `count` new live bundles from
    /// `first_tick` on arrived at `now`.
    fn arrived(&mut self, first_tick: Tick, count: usize, now: Duration) {
        self.speeds.enter(first_tick);
        let tick = Duration::from_nanos(self.speeds.tick_ns());
        if let Some(last) = self.last_arrival {
            let gap = now.saturating_sub(last);
            let expected = tick * count as u32;
            if gap < JITTER_OUTLIER {
                // EWMA with gain 1/8, like TCP's RTT variance.
                self.jitter = (self.jitter * 7 + gap.abs_diff(expected)) / 8;
                // Redundancy hides a burst of losses in `expected` (the
                // next datagram brings every missed bundle), but not the
                // wait: time without news beyond one tick.
                let wait = gap.saturating_sub(tick);
                let decayed = self.outage * OUTAGE_DECAY.0 / OUTAGE_DECAY.1;
                self.outage = if wait > decayed { wait } else { decayed };
            }
        }
        self.last_arrival = Some(now);
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use lockstep_protocol::{
        decode, encode_bundles, Buttons, PlayerId, PlayerInput, ServerDatagram,
    };

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
}
