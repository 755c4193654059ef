//! The one place the chaos run reads the wall clock: real processes
//! answer in real time, so the run's deadlines, a frozen bot's pause and
//! a bad link's window are real time too. The schedule is not: it is game
//! time ([`crate::schedule`]).
#![allow(
    clippy::disallowed_methods,
    reason = "the run waits for real processes and times real faults"
)]

use std::time::{Duration, Instant};

/// A clock started when the run started.
#[derive(Debug, Clone, Copy)]
pub struct Clock(Instant);

impl Clock {
    /// A clock reading zero now.
    pub fn start() -> Clock {
        Clock(Instant::now())
    }

    /// Real time since the clock started.
    pub fn now(&self) -> Duration {
        self.0.elapsed()
    }
}
