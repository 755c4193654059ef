//! The lockstep core: everything between the wire messages and the screen,
//! with no sockets, no window and no clock, so it runs the same in a
//! client, a test or a benchmark, driven by explicit time.
//!
//! # How it works
//!
//! - [`gate`] is the lockstep gate: tick `t` runs only once the bundle for
//!   `t` (every player's input) has arrived; it also schedules the local
//!   inputs `input_delay` ticks ahead.
//! - [`accumulator`] is the flipcode tip's fixed-step accumulator: given
//!   the real time a frame took, it says how many ticks are due and the
//!   interpolation alpha; MAX_LOOPS and discarding in solo play only.
//! - [`input_delay`] picks the smallest input delay that keeps the game
//!   from waiting, from the round trip, the jitter and the server's lag
//!   indicator.
//! - [`loops`] holds every game loop strategy of the seed articles as a
//!   pure state machine over the same accumulator.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod accumulator;
pub mod gate;
pub mod input_delay;
pub mod loops;
