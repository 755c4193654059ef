//! A seeded chaos run: the real `lockstep-server` and `lockstep-client`
//! processes on loopback, one game of six headless bots and a spectator,
//! and faults at seeded points of the game, each checked for the answer
//! the system owes it.
//!
//! # How it works
//! 1. [`schedule`] turns the seed and the game's length into the faults,
//!    their game ticks and parameters: a pure function, unit-tested.
//! 2. The driver ([`run`]) starts a server on a free loopback port with
//!    its own identity and replay directory in the run's directory, six
//!    bots (`bot5` and `bot6` through a UDP proxy each, [`io::proxy`]),
//!    and a spectator that stays to the end. Every process writes to
//!    files there; the run reads them back into one timeline of what was
//!    said ([`said`]), and follows the server's replay record by record
//!    to know the game's tick.
//! 3. Once the game reaches a fault's tick, the fault is done and its
//!    answer awaited ([`faults`], whose doc lists what each kind expects);
//!    each goes into the history ([`history`]) with what the system said.
//! 4. At the end: every bot's last process and the spectator must end on
//!    one `final tick=T hash=H`, the only desync must be the injected one,
//!    the replay (written by every server of the run in turn) must hold
//!    and verify the whole game, and no bot may be lost: every one must
//!    end the game, and every drop be followed by a rejoin ([`checks`]).
//!    The last line is the summary, whose `lost` counts the ticks missing
//!    from the replay and the bots lost:
//!
//! ```text
//! chaos seed=S minutes=M faults=N kinds=kill:a,stop:b,link:c,spectator:d,server:e,desync:f desyncs=D verdict=agreed|split|unfinished lost=L
//! ```
//!
//! Before the summary come the run's figures ([`figures`]), for the
//! record rather than the verdict: each kind's answer time (median and
//! worst), every stall of a second or more and the fault it fell in, the
//! game's pace against real time, and each server process's peak memory.
//!
//! The run starts processes, signals them by PID and removes its
//! directory (unless kept); it touches nothing it did not start.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod checks;
mod end;
pub mod faults;
pub mod figures;
pub mod history;
pub mod io;
pub mod observe;
mod others;
pub mod peers;
mod run;
pub mod said;
pub mod schedule;
pub mod shaper;

pub use checks::Judgement;
pub use run::{run, Options, RunError};
