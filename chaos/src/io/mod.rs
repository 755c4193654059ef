//! Everything of the run that owns a process, a socket, a thread, a file
//! or the clock; the rules (the schedule, the shaper, the checks) are
//! outside, pure.

pub mod clock;
pub mod peer;
pub mod process;
pub mod proxy;
pub mod tail;
