//! Real time into ticks: how many ticks are due after a frame, how long a
//! tick lasts, and how fast this machine can run them. Nothing here reads
//! a clock; the frontend passes the time in.
//!
//! - [`accumulator`] is the flipcode tip's fixed-step accumulator: given
//!   the real time a frame took, it says how many ticks are due and the
//!   interpolation alpha; MAX_LOOPS and discarding in solo play only.
//! - [`speed`] is the game speed the server announces (slower while a
//!   player's machine cannot keep up): the accumulator's tick length from
//!   an announced tick on.
//! - [`capacity`] measures what this machine sustains, for the server to
//!   choose the speed.
//! - [`loops`] holds every game loop strategy of the seed articles as a
//!   pure state machine over the same accumulator.

pub mod accumulator;
pub mod capacity;
pub mod loops;
pub mod speed;
