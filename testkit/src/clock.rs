//! The one place the test kit and the end-to-end tests read the wall clock:
//! real processes answer in real time, so their deadlines are real time too.
#![allow(
    clippy::disallowed_methods,
    reason = "the tests wait for real processes and time real commands"
)]

use std::time::{Duration, Instant};

/// The current instant.
pub fn now() -> Instant {
    Instant::now()
}

/// Real time since `earlier`.
pub fn since(earlier: Instant) -> Duration {
    earlier.elapsed()
}
