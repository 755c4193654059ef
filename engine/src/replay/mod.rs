//! Replays: a game recorded as its bundles, re-simulated exactly.
//!
//! - [`recorder`] writes a game as this client sees it, in the format the
//!   server writes.
//! - [`playback`] plays a recording back and verifies its hashes;
//!   [`expected_hashes`] says which recorded hashes it must reproduce (a
//!   player the server named diverged is expected to differ);
//!   [`last_reports`] sets each player's last report beside the world at
//!   its tick, what the player's own `final` line compares with.

pub mod expected_hashes;
pub mod last_reports;
pub mod playback;
pub mod recorder;
