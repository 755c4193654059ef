//! The ball game on the lockstep engine: [`World`] is a
//! [`lockstep_engine::Game`], the seeded [`Bots`] are solo play's
//! opponents, and [`synctest`] runs an offline game under the engine's
//! sync test. Built with the `engine` feature, so the simulation itself
//! builds without the engine (for other architectures, say).

use lockstep_engine::solo::Opponents;
use lockstep_engine::synctest::{check, SyncTestError};
use lockstep_engine::{Game, Setup};
use lockstep_protocol::{PlayerId, PlayerInput, Tick};

use crate::bot::Bots;
use crate::offline::{self, SimOptions};
use crate::{World, WorldConfig};

impl Game for World {
    fn start(setup: &Setup) -> World {
        let config = WorldConfig {
            balls: setup.balls,
            ..WorldConfig::new(setup.seed, setup.tick_rate)
        };
        World::new(config, &setup.players)
    }

    fn step(&mut self, inputs: &[PlayerInput]) {
        World::step(self, inputs);
    }

    fn step_phases(
        &mut self,
        inputs: &[PlayerInput],
        after: &mut dyn FnMut(&'static str, &mut World),
    ) {
        World::step_phases(self, inputs, after);
    }

    fn tick(&self) -> Tick {
        World::tick(self)
    }

    fn hash(&self) -> u64 {
        World::hash(self)
    }

    fn remove_player(&mut self, player: PlayerId) {
        World::remove_player(self, player);
    }

    fn add_player(&mut self, player: PlayerId) {
        World::add_player(self, player);
    }

    fn has_player(&self, player: PlayerId) -> bool {
        self.discs().iter().any(|disc| disc.player == player)
    }

    fn nudge(&mut self) -> Option<&'static str> {
        self.nudge_one_ulp()
    }
}

impl Opponents<World> for Bots {
    fn inputs(&mut self, world: &World) -> Vec<PlayerInput> {
        Bots::inputs(self, world)
    }
}

/// A passed sync test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyncTestReport {
    /// Ticks run.
    pub tick: u32,
    /// Hash after the last tick: the same as `lockstep-client sim` with the
    /// same options, since the straight run is that game.
    pub hash: u64,
}

/// Runs the offline game of `sim` (a bot for every player) under the
/// engine's sync test, restoring from `check_distance` ticks back every
/// tick.
///
/// # Errors
///
/// The first failed check; see [`SyncTestError`].
pub fn synctest(sim: SimOptions, check_distance: u32) -> Result<SyncTestReport, SyncTestError> {
    let (world, mut bots) = offline::setup(sim);
    let world = check(world, |world| bots.inputs(world), sim.ticks, check_distance)?;
    Ok(SyncTestReport {
        tick: world.tick().0,
        hash: world.hash(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sim(ticks: u32) -> SimOptions {
        SimOptions {
            players: 4,
            seed: 1,
            ticks,
            balls: WorldConfig::DEFAULT_BALLS,
            tick_rate: 60,
        }
    }

    #[test]
    fn the_world_passes_300_ticks_at_distance_7() {
        let report =
            synctest(sim(300), 7).expect("the world's snapshot and hash cover its whole state");
        assert_eq!(report.tick, 300);
    }

    #[test]
    fn the_report_is_the_plain_offline_games_final_state() {
        let report = synctest(sim(120), 3).expect("sync test passes");
        let world = offline::run(sim(120));
        assert_eq!(
            report,
            SyncTestReport {
                tick: world.tick().0,
                hash: world.hash()
            }
        );
    }

    #[test]
    fn a_player_is_in_the_game_until_removed_and_again_once_back() {
        let mut world = World::start(&Setup {
            seed: 1,
            tick_rate: 60,
            balls: 4,
            players: vec![PlayerId(0), PlayerId(1)],
        });
        assert!(world.has_player(PlayerId(1)));
        Game::remove_player(&mut world, PlayerId(1));
        assert!(!world.has_player(PlayerId(1)));
        Game::add_player(&mut world, PlayerId(1));
        assert!(world.has_player(PlayerId(1)));
        assert!(!world.has_player(PlayerId(7)));
    }
}
