//! Replays: a game recorded as its bundles, re-simulated exactly.
//!
//! - [`recorder`] writes a game as this client sees it, in the format the
//!   server writes.
//! - [`playback`] plays a recording back and verifies its hashes.

pub mod playback;
pub mod recorder;
