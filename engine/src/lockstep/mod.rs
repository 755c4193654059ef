//! The lockstep itself: when a networked tick may run, and with which
//! inputs.
//!
//! - [`gate`] holds the bundles from the server and answers whether the
//!   next tick may run; it also schedules the local inputs `input_delay`
//!   ticks ahead.
//! - [`input_delay`] picks the smallest input delay that keeps this
//!   client's inputs on time at the server.
//! - [`playout`] lets this client's clock run a few ticks behind the
//!   schedule when its own link delivers the bundles in bursts.
//! - [`net_game`] glues these, the game and the fixed-step clock into one
//!   networked game that answers "what now".

pub mod gate;
pub mod input_delay;
pub mod net_game;
pub mod playout;
