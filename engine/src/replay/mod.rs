//! Replays: a game recorded as its bundles, re-simulated exactly.
//!
//! - [`recorder`] writes a game as this client sees it, in the format the
//!   server writes.
//! - [`playback`] plays a recording back and verifies its hashes;
//!   [`expected_hashes`] says which recorded hashes it must reproduce (a
//!   player the server named diverged is expected to differ).

pub mod expected_hashes;
pub mod playback;
pub mod recorder;
