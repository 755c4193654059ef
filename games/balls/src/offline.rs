//! `lockstep-client sim`: the whole game with a bot for every player and no
//! network, for benchmarks and determinism checks.

use lockstep_protocol::PlayerId;

use crate::bot::Bots;
use crate::{World, WorldConfig};

/// Parameters of an offline run.
#[derive(Debug, Clone, Copy)]
pub struct SimOptions {
    /// Number of players (each driven by a bot).
    pub players: u8,
    /// World and bot seed.
    pub seed: u64,
    /// Ticks to simulate.
    pub ticks: u32,
    /// Balls in the arena.
    pub balls: u16,
    /// Tick rate (sets the fixed dt).
    pub tick_rate: u16,
}

/// The starting world of an offline game and a bot for every player, both
/// seeded with `options.seed`.
pub fn setup(options: SimOptions) -> (World, Bots) {
    let players: Vec<PlayerId> = (0..options.players).map(PlayerId).collect();
    let config = WorldConfig {
        balls: options.balls,
        ..WorldConfig::new(options.seed, options.tick_rate)
    };
    (
        World::new(config, &players),
        Bots::new(options.seed, &players),
    )
}

/// Runs the simulation for `options.ticks` ticks and returns the world.
pub fn run(options: SimOptions) -> World {
    let (mut world, mut bots) = setup(options);
    for _ in 0..options.ticks {
        let inputs = bots.inputs(&world);
        world.step(&inputs);
    }
    world
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(seed: u64) -> SimOptions {
        SimOptions {
            players: 4,
            seed,
            ticks: 600,
            balls: WorldConfig::DEFAULT_BALLS,
            tick_rate: 60,
        }
    }

    #[test]
    fn two_runs_with_the_same_seed_end_on_the_same_hash() {
        assert_eq!(run(options(5)).hash(), run(options(5)).hash());
    }

    #[test]
    fn different_seeds_end_on_different_hashes() {
        assert_ne!(run(options(5)).hash(), run(options(6)).hash());
    }
}
