//! Frame pacing: waiting for a frame's deadline without a busy wait and
//! without trusting `sleep` (java-gaming).
//!
//! # How it works
//!
//! A spin loop hits a deadline to the microsecond and burns a core doing
//! it; `sleep(1)` leaves the core alone but wakes up "subject to the
//! precision and accuracy of system timers and schedulers", often late by
//! a fraction of a millisecond, sometimes by several. The [`Pacer`] does
//! both in turn: it sleeps until a safety margin before the deadline, then
//! yields its time slice in a loop until the deadline has passed. Most of
//! the wait costs no CPU, and only the last stretch is spent yielding.
//!
//! The margin learns how late this machine's sleeps wake up: after each
//! sleep it jumps at once to half as much again as the latest oversleep if
//! that is more (being late costs a frame, spinning only a little CPU), and
//! otherwise creeps back down a sixteenth of the way per sleep.
//!
//! The loop strategies (`lockstep_engine::timing::loops`) never read a clock: they
//! only name the deadline, and this module waits for it, reading the clock
//! through [`crate::clock`].

use std::time::{Duration, Instant};

use crate::clock;

/// The margin before any sleep has been measured: well above the
/// oversleep of a desktop Linux or macOS timer, below a frame.
const INITIAL_MARGIN: Duration = Duration::from_millis(1);
/// The least margin kept: a scheduler's wake-up is rarely better.
const MIN_MARGIN: Duration = Duration::from_micros(100);
/// The most margin kept: a quarter of a 60 FPS frame spent yielding is
/// already a lot; a sleep later than this is an outlier, not a habit.
const MAX_MARGIN: Duration = Duration::from_millis(4);

/// How one wait for a deadline went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paced {
    /// The frame's own work ran past the deadline: there was nothing to
    /// wait for.
    Missed {
        /// How far past the deadline the wait started.
        late: Duration,
    },
    /// The pacer waited and woke up `error` after the deadline: the
    /// pacing error.
    Waited {
        /// Time between the deadline and the end of the wait.
        error: Duration,
    },
}

/// What to do next while waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wait {
    /// Far from the deadline: sleep this long.
    Sleep(Duration),
    /// Within the margin: give up the time slice and look again.
    Yield,
    /// The deadline has passed.
    Done,
}

/// Waits for frame deadlines; keeps what it learned about sleeping.
#[derive(Debug, Clone)]
pub struct Pacer {
    /// How long before the deadline sleeping stops.
    margin: Duration,
}

impl Default for Pacer {
    fn default() -> Self {
        Pacer {
            margin: INITIAL_MARGIN,
        }
    }
}

impl Pacer {
    /// A pacer that has not slept yet.
    pub fn new() -> Pacer {
        Pacer::default()
    }

    /// How long before a deadline sleeping stops and yielding starts.
    pub fn margin(&self) -> Duration {
        self.margin
    }

    /// Returns once `deadline` has passed.
    pub fn wait_until(&mut self, deadline: Instant) -> Paced {
        let arrived = clock::now();
        if arrived >= deadline {
            return Paced::Missed {
                late: arrived - deadline,
            };
        }
        loop {
            let now = clock::now();
            match next_wait(deadline.saturating_duration_since(now), self.margin) {
                Wait::Sleep(nap) => {
                    std::thread::sleep(nap);
                    let overslept = clock::since(now).saturating_sub(nap);
                    self.margin = adapted_margin(self.margin, overslept);
                }
                Wait::Yield => std::thread::yield_now(),
                Wait::Done => {
                    return Paced::Waited {
                        error: now.saturating_duration_since(deadline),
                    }
                }
            }
        }
    }
}

/// The next move with `remaining` time to the deadline.
fn next_wait(remaining: Duration, margin: Duration) -> Wait {
    if remaining.is_zero() {
        Wait::Done
    } else if remaining > margin {
        Wait::Sleep(remaining - margin)
    } else {
        Wait::Yield
    }
}

/// The margin after a sleep that woke up `overslept` late.
fn adapted_margin(margin: Duration, overslept: Duration) -> Duration {
    let wanted = overslept + overslept / 2;
    let next = if wanted > margin {
        wanted
    } else {
        margin - (margin - wanted) / 16
    };
    next.clamp(MIN_MARGIN, MAX_MARGIN)
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Duration = Duration::from_micros(1);

    #[test]
    fn sleeps_until_the_margin_then_yields_until_the_deadline() {
        let margin = 500 * US;
        assert_eq!(next_wait(3_000 * US, margin), Wait::Sleep(2_500 * US));
        assert_eq!(next_wait(500 * US, margin), Wait::Yield);
        assert_eq!(next_wait(US, margin), Wait::Yield);
        assert_eq!(next_wait(Duration::ZERO, margin), Wait::Done);
    }

    #[test]
    fn a_late_wake_up_widens_the_margin_at_once() {
        assert_eq!(adapted_margin(1_000 * US, 2_000 * US), 3_000 * US);
    }

    #[test]
    fn punctual_wake_ups_narrow_the_margin_slowly() {
        // Wanted: 150 µs; a sixteenth of the 1600 µs gap is given up.
        assert_eq!(adapted_margin(1_750 * US, 100 * US), 1_650 * US);
        let mut margin = MAX_MARGIN;
        for _ in 0..200 {
            margin = adapted_margin(margin, Duration::ZERO);
        }
        assert_eq!(margin, MIN_MARGIN);
    }

    #[test]
    fn an_outlier_does_not_make_the_pacer_spin_for_ever() {
        assert_eq!(adapted_margin(1_000 * US, 50_000 * US), MAX_MARGIN);
    }

    #[test]
    fn a_deadline_already_passed_is_reported_as_missed() {
        let mut pacer = Pacer::new();
        let past = clock::now();
        assert!(matches!(pacer.wait_until(past), Paced::Missed { .. }));
    }

    #[test]
    fn a_wait_ends_after_its_deadline_and_reports_how_late() {
        let mut pacer = Pacer::new();
        let deadline = clock::now() + Duration::from_millis(5);
        let Paced::Waited { error } = pacer.wait_until(deadline) else {
            panic!("a deadline 5 ms ahead is not missed");
        };
        let woke = deadline + error;
        assert!(woke >= deadline);
        assert!(clock::now() >= woke);
    }
}
