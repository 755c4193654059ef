//! The ball game's settings and the setup of an offline game: what the
//! engine's `Game` impl (`engine.rs`) and the self-test (`self_test.rs`)
//! both start from.

use lockstep_engine::Setup;
use lockstep_protocol::PlayerId;
use serde::{Deserialize, Serialize};

use crate::WorldConfig;

/// The ball game's settings, as Start and the replay header carry them:
/// postcard of one `u16`, the bytes replay formats 3 and 4 had.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BallSettings {
    /// Balls in the arena.
    pub balls: u16,
}

/// The setup of an offline game: `players` (ids from 0), each a bot
/// seeded with `seed` like the world, `balls` in the arena, at
/// `tick_rate` Hz. [`lockstep_engine::offline`] plays it.
#[must_use]
pub fn setup(players: u8, seed: u64, balls: u16, tick_rate: u16) -> Setup<BallSettings> {
    Setup {
        seed,
        tick_rate,
        settings: BallSettings { balls },
        players: (0..players).map(PlayerId).collect(),
    }
}

impl Default for BallSettings {
    fn default() -> Self {
        BallSettings {
            balls: WorldConfig::DEFAULT_BALLS,
        }
    }
}
