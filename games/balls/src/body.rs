//! The moving things: players' discs and the balls they push.

use glam::Vec2;
use lockstep_protocol::PlayerId;
use serde::{Deserialize, Serialize};

/// A player's disc: what their input steers.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Disc {
    /// Whose input drives this disc.
    pub player: PlayerId,
    /// Centre, in world units (origin top-left, y down).
    pub pos: Vec2,
    /// Velocity, in world units per second.
    pub vel: Vec2,
    /// Radius, in world units.
    pub radius: f32,
}

impl Disc {
    /// Half again a ball's radius, so a disc can shepherd a ball and is
    /// easy to see.
    pub const RADIUS: f32 = 30.0;
}

/// A ball: pushed by discs, scored in goals.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Ball {
    /// Centre, in world units (origin top-left, y down).
    pub pos: Vec2,
    /// Velocity, in world units per second.
    pub vel: Vec2,
    /// Radius, in world units.
    pub radius: f32,
    /// The player whose disc touched this ball last since it (re)spawned:
    /// they get the point if it goes into a goal. `None` for a ball nobody
    /// has touched yet, or whose last toucher left the game.
    pub last_touch: Option<PlayerId>,
}

impl Ball {
    /// Small enough that 96 balls (4x the default) cover about 8% of the
    /// arena floor and still leave room to play.
    pub const RADIUS: f32 = 20.0;
}
