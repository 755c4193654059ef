//! The parameters a session agrees on before the first tick.

use serde::{Deserialize, Serialize};

/// World parameters everyone must agree on.
///
/// Every peer builds its [`World`](super::World) from the same config (the
/// server hands it out at start), and the config is part of the
/// [hash](super::World::hash), so a peer that somehow got a different one is
/// caught at the first checksum instead of drifting silently.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorldConfig {
    /// Seeds the world's random number generator: ball spawn positions and
    /// velocities, and every respawn after a goal.
    pub seed: u64,
    /// Steps per simulated second; the step length is `1 / tick_rate`
    /// seconds. 0 is treated as 1 so a bad value cannot divide by zero. The
    /// tuning constants assume roughly 30 to 120 Hz: at much lower rates
    /// fast balls move further than their own diameter in one step.
    pub tick_rate: u16,
    /// Number of balls in play. They never disappear (a scored ball
    /// respawns), so this stays the ball count for the whole game.
    pub balls: u16,
}

impl WorldConfig {
    /// Enough balls to keep a four-player arena busy (many collisions per
    /// second) without covering the floor.
    pub const DEFAULT_BALLS: u16 = 24;

    /// A config with [`Self::DEFAULT_BALLS`] balls.
    #[must_use]
    pub fn new(seed: u64, tick_rate: u16) -> Self {
        WorldConfig {
            seed,
            tick_rate,
            balls: Self::DEFAULT_BALLS,
        }
    }

    /// The fixed step length in seconds.
    ///
    /// Computed as one correctly rounded division from an exact integer, so
    /// every machine gets the same bits.
    #[must_use]
    pub fn dt(&self) -> f32 {
        1.0 / f32::from(self.tick_rate.max(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_uses_the_default_ball_count() {
        assert_eq!(WorldConfig::new(1, 60).balls, WorldConfig::DEFAULT_BALLS);
    }

    #[test]
    fn zero_tick_rate_gives_a_finite_step() {
        assert_eq!(WorldConfig::new(1, 0).dt(), 1.0);
    }
}
