//! The client's side of the datagram exchange: acknowledgements, redundancy
//! and the arrival estimate behind the adaptive input delay.
//!
//! Pure state machine in the quinn-proto style, like the server's relay: no
//! socket and no clock. The pure [`Connection`](crate::connection::Connection)
//! holds it and passes `now` (the connection's clock, which its driver in
//! the client's `io::link` reads) in with whatever arrived, then has the driver send
//! the bytes the link returns:
//!
//! ```text
//! Start arrives            => link.start(tick_rate, now)
//! Speed arrives            => link.set_speed(from_tick, percent)
//! bundle datagram arrives  => deliver(link.receive(datagram, now))
//! History on the stream    => deliver(link.take_history(first_tick, bundles))
//! local input for a tick   => if !link.queue_input(tick, input).is_empty()
//!                                 && link.may_send(now) {
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
//! - Input datagrams go out at once up to a burst of [`SEND_BURST`], then
//!   one per [`SEND_PACE`]: inputs queued meanwhile wait, and go together
//!   in the next datagram the pace allows. A machine that wakes from a
//!   stop (a frozen process, a suspended laptop) finds a hundred ticks
//!   overdue, and its frontend sends their inputs one tick at a time;
//!   unpaced, each would leave in a datagram of its own repeating all the
//!   ones before, and the server would cut the flood.
//! - On a reliable transport (the browser's WebSocket) an input goes out
//!   once: nothing the transport delivers needs repeating, so a sent
//!   input counts as acknowledged, and only the heartbeat is ever due.
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
    MAX_DATAGRAMS_PER_SECOND, MAX_DATAGRAM_SIZE,
};

/// Repeat unacknowledged inputs when nothing was sent for this long: about
/// two ticks at 60 Hz, enough to repair a lost datagram before the stall
/// becomes visible.
pub const RESEND_AFTER: Duration = Duration::from_millis(30);

/// Send something at least this often, even with nothing to repeat, so the
/// server knows a stalled client is alive (its drop timeout is 2 s).
pub const HEARTBEAT: Duration = Duration::from_millis(100);

/// Input datagrams that may go back to back: a frame that runs a few ticks
/// at once (after a stall) sends each one's input at once.
pub const SEND_BURST: u32 = 8;

/// The pace of input datagrams beyond [`SEND_BURST`]: half the rate the
/// server allows ([`MAX_DATAGRAMS_PER_SECOND`]), two a tick at 60 Hz, so
/// every tick's input still leaves at once up to 120 Hz.
pub const SEND_PACE: Duration =
    Duration::from_nanos(2_000_000_000 / MAX_DATAGRAMS_PER_SECOND as u64);

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
    /// Whether inputs were queued since the last datagram (the pace held
    /// them back).
    unsent: bool,
    /// The pace's clock: a datagram may go while it is at most
    /// [`SEND_BURST`] - 1 paces ahead of now, and each one sent moves it a
    /// pace on from now or from where it was, whichever is later (a token
    /// bucket counted in time).
    paced_until: Duration,
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
    /// Whether the transport delivers everything, in order: then an input
    /// is sent once.
    reliable: bool,
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
            unsent: false,
            paced_until: Duration::ZERO,
            started: false,
            speeds: SpeedSchedule::new(60),
            last_arrival: None,
            jitter: Duration::ZERO,
            outage: Duration::ZERO,
            reliable: false,
        }
    }
}

impl Link {
    /// A link like the [default](Link::default) one; on a `reliable`
    /// transport it sends each input once.
    pub fn new(reliable: bool) -> Link {
        Link {
            reliable,
            ..Link::default()
        }
    }

    /// Whether this link sends each input once (a reliable transport).
    pub fn is_reliable(&self) -> bool {
        self.reliable
    }

    /// The game started at `now` with `tick_rate` ticks a second: the
    /// timers run from now, and bundles are expected one tick period apart.
    pub fn start(&mut self, tick_rate: u16, now: Duration) {
        self.started = true;
        self.last_sent = now;
        self.speeds = SpeedSchedule::new(tick_rate);
    }

    /// This client's inputs start at `tick` (the Start's
    /// `first_input_tick`): the first input queued, for whatever tick,
    /// fills every tick from `tick` on, so none of them is left without
    /// an input. Without it the first input queued would set where they
    /// start: an input of the game before a reconnection, still on its way
    /// from the frontend when the resumed game's Start arrived, would make
    /// every earlier tick of the resumed game (its neutral first inputs
    /// among them) one the link refuses, and the server would wait for
    /// those ticks for ever.
    pub fn inputs_from(&mut self, tick: Tick) {
        if self.first_unacked.is_none() {
            self.first_unacked = Some(tick);
        }
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
        self.unsent = true;
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

    /// Whether the pace lets an input datagram go at `now`.
    pub fn may_send(&self, now: Duration) -> bool {
        self.paced_until <= now + SEND_PACE * (SEND_BURST - 1)
    }

    /// Whether an input datagram is due at `now`: inputs the pace held
    /// back go as soon as it allows, unacknowledged inputs wait at most
    /// [`RESEND_AFTER`] to be repeated, and silence lasts at most
    /// [`HEARTBEAT`]. Never before Start.
    pub fn due(&self, now: Duration) -> bool {
        let idle = now.saturating_sub(self.last_sent);
        let inputs = !self.unacked.is_empty() && (self.unsent || idle >= RESEND_AFTER);
        self.started && self.may_send(now) && (inputs || idle >= HEARTBEAT)
    }

    /// The input datagram to send at `now`: every unacknowledged input that
    /// fits in `max_size` bytes (and [`MAX_DATAGRAM_SIZE`]), oldest first,
    /// and our bundle acknowledgement. `None` when not even the bare
    /// acknowledgement fits (the connection carries no datagrams); nothing
    /// counts as sent then, so the timers stay due. On a reliable link the
    /// inputs sent count as acknowledged.
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
                self.unsent = false;
                self.paced_until = self.paced_until.max(now) + SEND_PACE;
                if self.reliable {
                    // Delivered for certain: nothing to repeat.
                    let ClientDatagram::Inputs(sent) = &message;
                    self.acknowledge(sent.first_tick.plus(sent.inputs.len() as u32));
                }
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
mod tests;
