//! Topple: a rigid-body game on rapier2d, and the third game every command
//! of lockstep plays (`--game physics`).
//!
//! Eight towers of crates and balls stand on a platform over a drop. Every
//! player flies a heavy ball, the ram, and knocks bodies over the edge: a
//! body that falls scores for the last ram that touched it and is dropped
//! back in from the sky; a ram that falls is put back on its spawn point
//! and scores for the last other ram that hit it.
//!
//! The physics is rapier2d's, pinned in the workspace with its
//! `enhanced-determinism` feature. This crate keeps to the parts of rapier
//! that compute the same bits on every target (DETERMINISM.md, "The
//! physics game"): balls and boxes, no joints, no continuous collision
//! detection, every value of its own from plain arithmetic or `libm`.
//! The whole physics world is the snapshot, solver warm starts included:
//! positions and velocities alone would not continue the same way.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod arena;
mod bot;
mod game;
pub mod probe;
mod state;
mod steering;
mod view;

pub use arena::{
    PhysicsSettings, BALL_RADIUS, CRATE_HALF, MAX_BODIES, PLATFORM_HALF_WIDTH, RAM_RADIUS,
};
pub use bot::PhysicsBot;
pub use game::{BodyShape, Physics, Ram};
pub use state::{BodyView, Rot, V2};
