//! Proving and diagnosing determinism: every machine must compute the
//! same bits from the same inputs, and when one does not, the players
//! need to see where.
//!
//! - [`history`] keeps the last ticks' states, hashes and bundles, so a
//!   tick the server reports diverged can still be shown.
//! - [`desync`] writes and reads the dumps of such a tick.
//! - [`diff`] compares two states, or two dumps, field by field.
//! - [`fnv`] is the checksum every game's hash is: FNV-1a 64 over
//!   little-endian fields.
//! - [`synctest`] proves that a game's snapshot and hash cover its whole
//!   state, by restoring and re-simulating.

pub mod desync;
pub mod diff;
pub mod fnv;
pub mod history;
pub mod synctest;
