//! The browser peer: a page that plays in the same live lockstep game as
//! native clients, with the simulation compiled to wasm32 and driven by
//! the same pure [`lockstep_link::connection::Connection`] and the
//! engine's `NetGame` as the native client.
//!
//! # How it works
//!
//! Everything but the binding is plain Rust, tested natively:
//!
//! - [`peer`]: [`WebPeer`], the driver of the connection over a WebSocket
//!   (what to open, send and close, [`Op`]s the page carries out), the
//!   lobby, and the game it plays. It is given the time.
//! - [`play`]: one game in progress, driven as the native client's
//!   `NetPlay` drives it (ticks with no MAX_LOOPS, inputs, hash and
//!   capacity reports, snapshots, desyncs, speed), for any game.
//! - [`games`]: the games the page offers, a list its wasm module hands
//!   it ([`games::offer`]; lockstep's own by default), and their
//!   preflight.
//! - [`picture`]: what the page draws of any game, its view's picture
//!   encoded as a flat list of numbers that one function of the page
//!   draws.
//! - [`view`]: the state the page shows and tests read.
//! - [`options`], [`platform`], [`input`]: the URL parameters, the
//!   browser as the Hello describes it, and the page's input on the wire.
//!
//! The binding (`wasm.rs`, wasm32 only) hands the page's events and
//! `performance.now()` to the peer and its ops and lines back; the page
//! (`web/static/`) owns the WebSocket, the timers and the canvas.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod clock;
pub mod games;
pub mod input;
pub mod offline;
pub mod options;
pub mod peer;
pub mod picture;
pub mod platform;
pub mod play;
pub mod view;
#[cfg(target_arch = "wasm32")]
mod wasm;

pub use options::WebOptions;
pub use peer::{Op, Phase, WebPeer};
