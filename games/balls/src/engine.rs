//! The ball game on the lockstep engine: [`World`] is a
//! [`lockstep_engine::Game`], and its seeded [`Bot`]s are what the
//! engine's bots play, as Tally's and Topple's are.

use lockstep_engine::{FixedStepOnly, Game, HasBots, Setup};
use lockstep_protocol::{Input, PlayerId, PlayerInput, Tick};

use crate::bot::Bot;
pub use crate::settings::{setup, BallSettings};
use crate::{World, WorldConfig};

/// Most balls a game may have: more would not fit the arena's floor.
pub const MAX_BALLS: u16 = 1000;

impl Game for World {
    const NAME: &'static str = lockstep_protocol::BALLS_GAME;
    type Settings = BallSettings;
    const PHASES: &'static [&'static str] = &crate::PHASES;

    fn start(setup: &Setup<BallSettings>) -> World {
        let config = WorldConfig {
            balls: setup.settings.balls,
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

    /// Every phase scales by dt (drive, roll) or does not depend on it
    /// (contacts, walls, goals).
    const VARIABLE_STEP: bool = true;

    fn step_variable(&mut self, inputs: &[PlayerInput], dt: f32) -> Result<(), FixedStepOnly> {
        self.step_with_dt(inputs, dt);
        Ok(())
    }
}

impl HasBots for World {
    const ABOUT: &'static str = "the ball game; --set balls=N, 0-1000, default 24";
    type Bot = Bot;

    fn bot(seed: u64, player: PlayerId) -> Bot {
        Bot::for_player(seed, player)
    }

    fn bot_input(&self, bot: &mut Bot, me: PlayerId) -> Input {
        bot.next_input(self, me)
    }

    /// `balls=N`, 0 to [`MAX_BALLS`] (`--balls N`).
    fn parse_settings(pairs: &[(String, String)]) -> Result<BallSettings, String> {
        let mut settings = BallSettings::default();
        for (key, value) in pairs {
            match key.as_str() {
                "balls" => {
                    settings.balls = value
                        .parse()
                        .ok()
                        .filter(|&n| n <= MAX_BALLS)
                        .ok_or_else(|| format!("balls={value}: give 0 to {MAX_BALLS}"))?;
                }
                other => {
                    return Err(format!(
                        "the ball game has no setting {other:?}; it has balls"
                    ))
                }
            }
        }
        Ok(settings)
    }

    fn describe_settings(settings: &BallSettings) -> String {
        format!("{} balls", settings.balls)
    }

    /// The ball game's own, crowded preflight ([`crate::self_test`]).
    fn self_test() -> u64 {
        crate::self_test()
    }
}

#[cfg(test)]
mod tests {
    use lockstep_engine::determinism::synctest::check;

    use super::*;

    /// Four bots, seed 1, the default balls, at 60 Hz.
    fn four() -> Setup<BallSettings> {
        setup(4, 1, WorldConfig::DEFAULT_BALLS, 60)
    }

    /// The offline game of `four` under the engine's sync test, restoring
    /// from `check_distance` ticks back every tick.
    fn synctested(ticks: u32, check_distance: u32) -> World {
        let setup = four();
        let mut bots = lockstep_engine::Bots::<World>::new(setup.seed, &setup.players);
        check(
            World::start(&setup),
            |world| bots.inputs(world),
            ticks,
            check_distance,
        )
        .expect("the world's snapshot and hash cover its whole state")
    }

    #[test]
    fn the_world_passes_300_ticks_at_distance_7() {
        assert_eq!(synctested(300, 7).tick(), Tick(300));
    }

    #[test]
    fn the_sync_tested_game_ends_on_the_plain_offline_games_state() {
        let plain: World = lockstep_engine::offline(&four(), 120);
        assert_eq!(synctested(120, 3), plain);
    }

    #[test]
    fn what_the_game_says_of_its_setting_is_what_it_accepts() {
        let range = format!(
            "balls=N, 0-{MAX_BALLS}, default {}",
            WorldConfig::DEFAULT_BALLS
        );
        assert!(World::ABOUT.contains(&range), "{}", World::ABOUT);
    }

    #[test]
    fn the_settings_encode_as_the_ball_count_of_old_replays() {
        let spec = lockstep_engine::spec_of::<World>(&BallSettings { balls: 300 });
        assert_eq!(spec, lockstep_protocol::GameSpec::balls(300));
        let pairs = [("balls".to_string(), "12".to_string())];
        assert_eq!(
            World::parse_settings(&pairs),
            Ok(BallSettings { balls: 12 })
        );
        let too_many = [("balls".to_string(), "1001".to_string())];
        assert!(World::parse_settings(&too_many).is_err());
    }

    #[test]
    fn a_variable_step_of_the_fixed_dt_is_the_fixed_step() {
        let variable = lockstep_engine::offline_variable::<World>(&four(), 120, 1.0 / 60.0)
            .expect("the ball game steps by any dt");
        let fixed: World = lockstep_engine::offline(&four(), 120);
        assert_eq!(variable.hash(), fixed.hash());
        assert_eq!(variable, fixed);
    }

    #[test]
    fn a_player_is_in_the_game_until_removed_and_again_once_back() {
        let mut world = World::start(&Setup {
            seed: 1,
            tick_rate: 60,
            settings: BallSettings { balls: 4 },
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
