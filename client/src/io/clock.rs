//! The one place the client reads the wall clock (and the date).
//!
//! The simulation, the lockstep gate and the fixed-step accumulator are
//! given elapsed time as numbers and never read a clock (`clippy.toml`
//! forbids it). Only the frontends need real time, to measure frames and to
//! sleep, and the network thread, to give the link the time since it was
//! created; they take it from here.
#![allow(
    clippy::disallowed_methods,
    reason = "the frontends and the network thread measure real time here and pass it into the pure core"
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

/// The current instant on tokio's clock, which the network thread's timers
/// run on.
pub fn tokio_now() -> tokio::time::Instant {
    tokio::time::Instant::now()
}

/// Real time since `earlier`, on tokio's clock.
pub fn tokio_since(earlier: tokio::time::Instant) -> Duration {
    earlier.elapsed()
}

/// Seconds since the Unix epoch (UTC), for timestamps in files; never used
/// by the simulation.
pub fn unix_seconds() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
