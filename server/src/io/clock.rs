//! The one place the server reads the wall clock (and the date).
//!
//! The pure state machines (everything outside `io/`: the session, the
//! relay, the desync check, the beacon) are given `now` as a number and
//! never read a clock (`clippy.toml` forbids it), so their tests run on
//! explicit time. Only the tasks around them need real time: the session's
//! driver to tell the session how long the server has run and to date
//! replays, the beacon's task to time its broadcasts, the connection tasks
//! for the Hello deadline and the rate-limit budgets, and the binary for a
//! default seed. They take it from here.
//!
//! Instants are tokio's, the clock its timers (`timeout_at`, `interval`)
//! run on.
#![allow(
    clippy::disallowed_methods,
    reason = "the tasks around the session measure real time here and pass it in as numbers"
)]

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::time::Instant;

/// The current instant.
pub(crate) fn now() -> Instant {
    Instant::now()
}

/// Time since the server started: the `now` the session is given.
#[derive(Debug)]
pub(crate) struct Uptime {
    start: Instant,
}

impl Uptime {
    /// Starts counting from this instant.
    pub(crate) fn start() -> Uptime {
        Uptime { start: now() }
    }

    /// Real time since [`Uptime::start`].
    pub(crate) fn now(&self) -> Duration {
        self.start.elapsed()
    }

    /// The instant at `uptime`, for timers.
    pub(crate) fn instant(&self, uptime: Duration) -> Instant {
        self.start + uptime
    }
}

/// Seconds since the Unix epoch (UTC), for replay headers and file names;
/// never given to the game.
pub(crate) fn unix_seconds() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A world seed that differs between runs: nanoseconds since the Unix
/// epoch. Only a default; the chosen seed is printed and sent to every
/// client, so a game can be replayed with `--seed`.
pub fn seed() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1)
}
