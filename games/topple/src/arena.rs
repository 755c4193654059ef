//! The arena: the platform, where the towers stand and where rams start.
//! Every number is a constant or plain arithmetic on integers, so every
//! machine builds the same world bit for bit.

use rapier2d::prelude::*;
use serde::{Deserialize, Serialize};

/// Half the platform's width, in metres: bodies beyond it fall.
pub const PLATFORM_HALF_WIDTH: f32 = 18.5;
/// Below this height a body has fallen off: it scores and comes back.
pub const FALL_Y: f32 = -10.0;
/// Half the side of a crate.
pub const CRATE_HALF: f32 = 0.45;
/// Radius of a ball.
pub const BALL_RADIUS: f32 = 0.45;
/// Radius of a player's ram.
pub const RAM_RADIUS: f32 = 0.8;
/// The most bodies a game may ask for (`bodies=`).
pub const MAX_BODIES: u16 = 2000;
/// The bodies of a game without settings: enough for resting stacks and
/// hundreds of contacts, light enough for an ARM board or a phone.
pub const DEFAULT_BODIES: u16 = 160;

/// Towers on the platform; bodies are dealt to them in turn.
const TOWERS: u32 = 8;
/// Columns of a tower.
const COLUMNS: u32 = 3;
/// Distance between tower centres.
const TOWER_PITCH: f32 = 4.5;

/// The host's choice for a game of Topple.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhysicsSettings {
    /// Crates and balls in the towers (the rams come on top).
    pub bodies: u16,
}

impl Default for PhysicsSettings {
    fn default() -> Self {
        PhysicsSettings {
            bodies: DEFAULT_BODIES,
        }
    }
}

/// Which shape a tower body has.
pub(crate) fn is_ball(k: u32) -> bool {
    let slot = k / TOWERS;
    let (layer, column) = (slot / COLUMNS, slot % COLUMNS);
    column == 1 && layer % 2 == 1
}

/// Where tower body `k` starts: tower `k % 8`, then rows of three.
pub(crate) fn tower_spot(k: u32) -> Vector {
    let tower = k % TOWERS;
    let slot = k / TOWERS;
    let (layer, column) = (slot / COLUMNS, slot % COLUMNS);
    let centre = -TOWER_PITCH * 3.5 + TOWER_PITCH * tower as f32;
    Vector::new(
        centre + (column as f32 - 1.0) * 1.0,
        CRATE_HALF + 0.02 + layer as f32 * 0.95,
    )
}

/// Height of the top of the towers of a game of `bodies`.
pub(crate) fn towers_top(bodies: u16) -> f32 {
    let layers = u32::from(bodies).div_ceil(TOWERS * COLUMNS);
    layers as f32 * 0.95 + 1.0
}

/// Where the ram of the `i`th of `n` players starts, above the towers.
pub(crate) fn ram_spawn(i: usize, n: usize, bodies: u16) -> [f32; 2] {
    let share = (i as f32 + 0.5) / n.max(1) as f32;
    [
        -(PLATFORM_HALF_WIDTH - 2.0) + 2.0 * (PLATFORM_HALF_WIDTH - 2.0) * share,
        towers_top(bodies) + 3.0,
    ]
}

/// The fixed platform.
pub(crate) fn platform() -> (RigidBodyBuilder, ColliderBuilder) {
    (
        RigidBodyBuilder::fixed().translation(Vector::new(0.0, -0.5)),
        ColliderBuilder::cuboid(PLATFORM_HALF_WIDTH, 0.5).friction(0.8),
    )
}

/// Tower body `k`, a crate or a ball.
pub(crate) fn tower_body(k: u32) -> (RigidBodyBuilder, ColliderBuilder) {
    let collider = if is_ball(k) {
        ColliderBuilder::ball(BALL_RADIUS).density(1.0)
    } else {
        ColliderBuilder::cuboid(CRATE_HALF, CRATE_HALF).density(1.0)
    };
    (
        RigidBodyBuilder::dynamic().translation(tower_spot(k)),
        collider.friction(0.7).restitution(0.05),
    )
}

/// A player's ram at `spawn`.
pub(crate) fn ram(spawn: [f32; 2]) -> (RigidBodyBuilder, ColliderBuilder) {
    (
        RigidBodyBuilder::dynamic()
            .translation(Vector::new(spawn[0], spawn[1]))
            .linear_damping(0.8)
            .angular_damping(1.0),
        ColliderBuilder::ball(RAM_RADIUS)
            .density(3.0)
            .friction(0.5)
            .restitution(0.3),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tower_bodies_do_not_overlap_and_stand_on_the_platform() {
        let spots: Vec<Vector> = (0..600).map(tower_spot).collect();
        for (i, a) in spots.iter().enumerate() {
            assert!(a.x.abs() < PLATFORM_HALF_WIDTH - 1.0);
            assert!(a.y >= CRATE_HALF);
            for b in &spots[i + 1..] {
                assert!(
                    (a.x - b.x).abs() > 2.0 * CRATE_HALF || (a.y - b.y).abs() > 2.0 * CRATE_HALF
                );
            }
        }
        assert!((0..160).any(is_ball) && !(0..160).all(is_ball));
    }

    #[test]
    fn what_the_game_says_of_its_setting_is_what_it_accepts() {
        use lockstep_engine::HasBots;
        let about = crate::Physics::ABOUT;
        let range = format!("bodies=N, 0-{MAX_BODIES}, default {DEFAULT_BODIES}");
        assert!(about.contains(&range), "{about}");
    }

    #[test]
    fn rams_start_apart_above_the_towers() {
        let spawns: Vec<[f32; 2]> = (0..8).map(|i| ram_spawn(i, 8, 160)).collect();
        for pair in spawns.windows(2) {
            assert!(pair[1][0] - pair[0][0] > 2.0 * RAM_RADIUS);
        }
        let top = (0..160)
            .map(tower_spot)
            .fold(0.0f32, |m, s| if s.y > m { s.y } else { m });
        assert!(spawns[0][1] > top + CRATE_HALF + RAM_RADIUS);
    }
}
