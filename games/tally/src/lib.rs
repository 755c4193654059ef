//! Tally: about the smallest game that plugs into `lockstep-engine`, and
//! the second game every command of lockstep plays (`--game tally`).
//!
//! Every player has a counter that its held buttons push up and a speed
//! that follows them; one shared float drifts each tick. It has no
//! settings, its bots press seeded buttons, and the window draws one bar
//! per counter. The engine's unit tests, its example and the system tests
//! all play this same file (`game.rs`), which names the engine
//! `lockstep_engine` the way any outside game would.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod game;
mod view;

pub use game::{Counter, Tally, TallyBot};
