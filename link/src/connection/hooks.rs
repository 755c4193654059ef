//! What tests and measurements turn on to make a connection behave as
//! real play never does: off by default, and off on every path a player
//! takes (the page builds [`Hooks::default`]).

use std::time::Duration;

/// Departures from real play, for tests and measurements only.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Hooks {
    /// Send inputs on the control stream instead of as datagrams (to
    /// compare the transports), and only as the frontend sends them, never
    /// on schedule.
    pub inputs_over_stream: bool,
    /// Hold every local input this long before it goes to the link, as a
    /// machine too slow to keep up would: only for testing the server's
    /// laggard tolerance. Zero in real play.
    pub send_delay: Duration,
}
