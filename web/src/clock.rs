//! The one place the peer reads a clock: how long a call's ticks took,
//! for the capacity report and the tick budget (as the native client's
//! `io/clock.rs`). Everything else is given the time by the page.
#![allow(clippy::disallowed_methods)]

use std::time::Duration;

use web_time::Instant;

/// Now (`performance.now()` in a page).
pub fn now() -> Instant {
    Instant::now()
}

/// The time since `earlier`.
pub fn since(earlier: Instant) -> Duration {
    earlier.elapsed()
}
