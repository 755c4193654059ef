//! The lockstep core: everything between the wire messages and the screen,
//! with no sockets, no window and no clock, so it runs the same in a
//! client, a test or a benchmark, driven by explicit time.
//!
//! # How it works
//!
//! - [`Game`] is the seam: any deterministic game that can start from a
//!   [`Setup`], step with one input per player, hash and snapshot itself
//!   plugs in (ggrs's `Config`). The ball game of `lockstep-sim` does; so
//!   does the Tally of `games/tally`. [`HasBots`] adds seeded computer
//!   players, and [`host`] is what a server or a tool needs of a game it
//!   takes by name at run time ([`HostedGame`]).
//! - [`gate`] is the lockstep gate: tick `t` runs only once the bundle for
//!   `t` (every player's input) has arrived; it also schedules the local
//!   inputs `input_delay` ticks ahead.
//! - [`accumulator`] is the flipcode tip's fixed-step accumulator: given
//!   the real time a frame took, it says how many ticks are due and the
//!   interpolation alpha; MAX_LOOPS and discarding in solo play only.
//! - [`input_delay`] picks the smallest input delay that keeps the game
//!   from waiting, from the round trip, the jitter and the server's lag
//!   indicator.
//! - [`speed`] is the game speed the server announces (slower while a
//!   player's machine cannot keep up): the accumulator's tick length from
//!   an announced tick on; [`capacity`] measures what this machine
//!   sustains, for the server to choose it.
//! - [`net_game`] glues these into a networked game, [`solo`] is the
//!   game against the computer; both only answer "what now", the frontend
//!   carries it out.
//! - [`history`] keeps the last ticks for [`desync`] dumps, which
//!   [`diff`] compares field by field; [`synctest`] proves the snapshot and
//!   the hash cover the whole state.
//! - [`replay`] plays back and verifies recordings that [`recorder`]
//!   writes.
//! - [`loops`] holds every game loop strategy of the seed articles as a
//!   pure state machine over the same accumulator.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

// The example game's source is shared with the unit tests, and names this
// crate the way an outside game would.
#[cfg(test)]
extern crate self as lockstep_engine;

pub mod accumulator;
pub mod capacity;
pub mod desync;
pub mod diff;
mod game;
pub mod gate;
pub mod history;
pub mod host;
pub mod input_delay;
pub mod loops;
pub mod net_game;
pub mod playout;
pub mod recorder;
pub mod replay;
pub mod solo;
pub mod speed;
pub mod synctest;
#[cfg(test)]
mod testing;

pub use game::{
    apply, apply_phases, offline, settings_of, spec_of, Bots, Game, HasBots, Setup, SetupError,
};
pub use host::{find_game, Hosted, HostedGame, UnknownGame};

/// The contract's last stdout line of every mode that ends on a state
/// (`sim`, `synctest`, a played game, a verified replay), on every target:
/// `final tick=N hash=<16 hex digits>`. Scripts and tests compare it.
pub fn final_line(tick: u32, hash: u64) -> String {
    format!("final tick={tick} hash={hash:016x}")
}
