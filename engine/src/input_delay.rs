//! Adaptive input delay: the smallest delay that keeps the game from
//! waiting for this client's inputs.
//!
//! A client's input for tick `t` is sampled when it simulates `t - d` and
//! must reach every other client before they simulate `t`. The clients'
//! clocks start when Start reaches them, half a round trip apart, so the
//! budget works out to this client's own round trip to the server: the
//! delay must cover `rtt + 2 * jitter`, plus two ticks: one for the phase
//! of the sampling (an input is sampled only after a tick ran) and one for
//! the offset between the clients' frame clocks. Two signals feed the
//! choice:
//!
//! - the link: quinn's smoothed RTT and the jitter of bundle arrivals;
//! - the server's lag indicator: if the game is waiting for our inputs, we
//!   are late whatever the estimate says, so the delay goes up one more
//!   (and that extra is forgotten after a quiet while).
//!
//! The delay goes up at once and comes down one tick at a time after
//! [`LOWER_AFTER`] ticks without a change, so it does not flap. Pure: fed
//! ticks and durations, returns the delay to use; [`crate::gate`]
//! applies a change between ticks without skipping or repeating one.

use std::time::Duration;

use lockstep_protocol::Tick;

/// Smallest delay: one tick, an input sampled now is for the next tick.
pub const MIN_DELAY: u8 = 1;
/// Largest delay: a quarter of a second at 60 Hz. Beyond it the game feels
/// broken anyway, and waiting is better than an ever longer delay.
pub const MAX_DELAY: u8 = 15;
/// Ticks without a change before the delay may come down by one (5 s at
/// 60 Hz): a delay that was needed recently is likely needed again.
pub const LOWER_AFTER: u32 = 300;
/// Ticks without being waited for before the lag-indicator extra is
/// dropped (10 s at 60 Hz).
pub const FORGET_LATENESS_AFTER: u32 = 600;
/// Headroom for processing and scheduling on both ends.
const SAFETY: Duration = Duration::from_millis(2);
/// Most extra ticks the lag indicator can add on top of the estimate.
const MAX_EXTRA: u8 = 3;

/// Chooses the input delay as the game goes.
#[derive(Debug, Clone)]
pub struct DelayController {
    tick: Duration,
    pinned: Option<u8>,
    current: u8,
    extra: u8,
    last_change: Tick,
    last_late: Tick,
}

impl DelayController {
    /// Starts at `initial` (the server's delay); `pinned` fixes the delay
    /// for good (`--input-delay`).
    pub fn new(initial: u8, tick_rate: u16, pinned: Option<u8>) -> Self {
        DelayController {
            tick: Duration::from_secs(1) / u32::from(tick_rate.max(1)),
            pinned,
            current: pinned.unwrap_or(initial).clamp(MIN_DELAY, MAX_DELAY),
            extra: 0,
            last_change: Tick(0),
            last_late: Tick(0),
        }
    }

    /// The delay in force.
    pub fn current(&self) -> u8 {
        self.current
    }

    /// Whether the delay is fixed.
    pub fn is_pinned(&self) -> bool {
        self.pinned.is_some()
    }

    /// The delay the link alone calls for.
    pub fn estimate(&self, rtt: Duration, jitter: Duration) -> u8 {
        let budget = rtt + 2 * jitter + SAFETY;
        let ticks = budget.as_nanos().div_ceil(self.tick.as_nanos().max(1)) + 2;
        ticks.clamp(u128::from(MIN_DELAY), u128::from(MAX_DELAY)) as u8
    }

    /// Called after every simulated tick with the latest link figures and
    /// whether the server's last lag report said the game waits for us.
    /// Returns the new delay when it changes.
    pub fn update(
        &mut self,
        tick: Tick,
        rtt: Duration,
        jitter: Duration,
        late: bool,
    ) -> Option<u8> {
        if self.pinned.is_some() {
            return None;
        }
        if late {
            if tick.since(self.last_late) > 0 && self.extra < MAX_EXTRA {
                self.extra += 1;
            }
            self.last_late = tick;
        } else if self.extra > 0 && tick.since(self.last_late) >= FORGET_LATENESS_AFTER {
            self.extra -= 1;
            self.last_late = tick;
        }
        let wanted = self
            .estimate(rtt, jitter)
            .saturating_add(self.extra)
            .clamp(MIN_DELAY, MAX_DELAY);
        let next = if wanted > self.current {
            wanted
        } else if wanted < self.current && tick.since(self.last_change) >= LOWER_AFTER {
            self.current - 1
        } else {
            return None;
        };
        self.current = next;
        self.last_change = tick;
        Some(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn the_estimate_covers_the_round_trip_and_jitter_plus_a_tick() {
        let c = DelayController::new(3, 60, None);
        // Loopback: well under a tick, so one, plus two.
        assert_eq!(c.estimate(MS / 5, Duration::ZERO), 3);
        // 50 ms +/- 10 ms: (50 + 20 + 2) ms = 4.3 ticks -> 5, plus two.
        assert_eq!(c.estimate(50 * MS, 10 * MS), 7);
        // 150 ms: 9.1 -> 10, plus two.
        assert_eq!(c.estimate(150 * MS, Duration::ZERO), 12);
        assert_eq!(
            c.estimate(Duration::from_secs(5), Duration::ZERO),
            MAX_DELAY
        );
    }

    #[test]
    fn the_delay_rises_at_once_and_falls_slowly() {
        let mut c = DelayController::new(3, 60, None);
        assert_eq!(c.update(Tick(10), 50 * MS, 10 * MS, false), Some(7));
        // The link gets better: no change until LOWER_AFTER ticks passed,
        // then one tick down at a time.
        assert_eq!(c.update(Tick(11), MS, Duration::ZERO, false), None);
        assert_eq!(
            c.update(Tick(10 + LOWER_AFTER), MS, Duration::ZERO, false),
            Some(6)
        );
        assert_eq!(
            c.update(Tick(11 + LOWER_AFTER), MS, Duration::ZERO, false),
            None
        );
        assert_eq!(
            c.update(Tick(10 + 2 * LOWER_AFTER), MS, Duration::ZERO, false),
            Some(5)
        );
    }

    #[test]
    fn being_waited_for_adds_a_tick_that_is_forgotten_later() {
        let mut c = DelayController::new(3, 60, None);
        assert_eq!(c.update(Tick(1), MS, Duration::ZERO, true), Some(4));
        assert_eq!(c.update(Tick(2), MS, Duration::ZERO, true), Some(5));
        let quiet = Tick(2 + FORGET_LATENESS_AFTER);
        assert_eq!(c.update(quiet, MS, Duration::ZERO, false), Some(4));
    }

    #[test]
    fn a_pinned_delay_never_moves() {
        let mut c = DelayController::new(3, 60, Some(7));
        assert_eq!(c.current(), 7);
        assert_eq!(
            c.update(Tick(1), Duration::from_millis(300), 50 * MS, true),
            None
        );
        assert_eq!(c.current(), 7);
    }
}
