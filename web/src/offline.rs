//! The page's benchmark: a game of bots only, as `lockstep-client sim`
//! plays it, for whichever game of the list it names
//! ([`crate::games::PageGames::simulate`]).

use lockstep_engine::games::{ForGame, Playable};
use lockstep_engine::{final_line, offline, parse_setting, Bots, Setup};
use lockstep_protocol::PlayerId;

use crate::input::page_input;

/// One offline game, for whichever game it is: its `final` line, or why
/// the game refuses its settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Offline {
    /// `KEY=VALUE` settings, parsed by the game.
    settings: Vec<(String, String)>,
    /// Bots playing (at least one plays).
    players: u8,
    /// The game's seed; the bots' too.
    seed: u64,
    /// Ticks to play, at 60 Hz.
    ticks: u32,
    /// The stick the page hands player 0 every tick, through the page's
    /// own path ([`page_input`]), instead of its bot's input: the check
    /// that a value crossing from JS (a NaN with any payload among them)
    /// reaches the game the same in every engine.
    stick: Option<(f32, f32)>,
}

impl Offline {
    /// A game with `settings` (`K=V` pairs joined by commas), `players`
    /// bots seeded with `seed` (a u64 in decimal: the page passes it as
    /// text, since a JS number holds no u64), until `ticks` at 60 Hz; or
    /// why the settings are not pairs or the seed no u64.
    pub fn new(settings: &str, players: u8, seed: &str, ticks: u32) -> Result<Offline, String> {
        let settings = settings
            .split(',')
            .filter(|pair| !pair.trim().is_empty())
            .map(parse_setting)
            .collect::<Result<Vec<_>, _>>()?;
        let seed = seed.trim().parse().map_err(|_| {
            format!(
                "the seed is a whole number from 0 to {}, not {seed:?}",
                u64::MAX
            )
        })?;
        Ok(Offline {
            settings,
            players,
            seed,
            ticks,
            stick: None,
        })
    }

    /// This game with player 0 holding the page's stick at `x`, `y` on
    /// every tick, as the page's `set_input` takes it from JS.
    pub fn with_stick(self, x: f32, y: f32) -> Offline {
        Offline {
            stick: Some((x, y)),
            ..self
        }
    }
}

impl ForGame for Offline {
    type Output = Result<String, String>;
    fn run<G: Playable>(self) -> Self::Output {
        let setup = Setup {
            seed: self.seed,
            tick_rate: 60,
            settings: G::parse_settings(&self.settings)?,
            players: (0..self.players.max(1)).map(PlayerId).collect(),
        };
        let Some(stick) = self.stick else {
            let game: G = offline(&setup, self.ticks);
            return Ok(final_line(game.tick().0, game.hash()));
        };
        let mut game = G::start(&setup);
        let mut bots = Bots::<G>::new(setup.seed, &setup.players);
        for _ in 0..self.ticks {
            let mut inputs = bots.inputs(&game);
            if let Some(first) = inputs.first_mut() {
                first.input = page_input(0, Some(stick));
            }
            game.step(&inputs);
        }
        Ok(final_line(game.tick().0, game.hash()))
    }
}

#[cfg(test)]
mod tests {
    use lockstep_engine::games::Games;

    use super::*;

    /// What the page's `simulate` does, on lockstep's games.
    fn simulate(
        game: &str,
        settings: &str,
        players: u8,
        seed: &str,
        ticks: u32,
    ) -> Result<String, String> {
        let offline = Offline::new(settings, players, seed, ticks)?;
        lockstep_games::Shipped
            .run(game, offline)
            .map_err(|e| e.to_string())?
    }

    #[test]
    fn the_benchmark_plays_what_the_native_sim_plays() {
        let tally = simulate("tally", "", 5, "7", 900).expect("tally runs");
        assert_eq!(tally, "final tick=900 hash=4418b7a8c0073ec9");
        let balls = simulate("balls", "balls=24", 4, "1", 60).expect("balls runs");
        assert_eq!(balls, "final tick=60 hash=ff567b8fe1364906");
        // A seed past what a JS number holds exactly: a golden row's.
        let row = simulate("balls", "balls=24", 1, "18446744073709551615", 2000).expect("runs");
        assert_eq!(row, "final tick=2000 hash=953ea1895f1d736c");
    }

    #[test]
    fn a_stick_that_is_not_a_number_plays_as_a_stick_at_rest() {
        let stick = |x: f32, y: f32| {
            let offline = Offline::new("balls=24", 2, "5", 120)
                .expect("pairs")
                .with_stick(x, y);
            lockstep_games::Shipped
                .run("balls", offline)
                .expect("balls is shipped")
                .expect("runs")
        };
        let held = stick(0.0, 0.8);
        let at_rest = stick(0.0, 0.0);
        assert_ne!(held, at_rest, "the stick reaches the game");
        for nan in [
            f32::NAN,
            f32::from_bits(0x7fc0_1234),
            f32::from_bits(0xffc0_0001),
            f32::from_bits(0x7f80_0001),
        ] {
            assert_eq!(stick(nan, 0.8), held, "{:08x}", nan.to_bits());
            assert_eq!(stick(nan, nan), at_rest, "{:08x}", nan.to_bits());
        }
        assert_eq!(stick(f32::INFINITY, f32::NEG_INFINITY), at_rest);
        assert_eq!(stick(-0.0, 0.8), held);
    }

    #[test]
    fn a_game_or_setting_the_page_lacks_is_said() {
        let unknown = simulate("chess", "", 2, "1", 10).unwrap_err();
        assert!(unknown.contains("chess"), "{unknown}");
        let wrong = simulate("tally", "balls=3", 2, "1", 10).unwrap_err();
        assert!(wrong.contains("balls"), "{wrong}");
        assert!(simulate("tally", "nonsense", 2, "1", 10).is_err());
        let seed = simulate("tally", "", 2, "1.5", 10).unwrap_err();
        assert!(seed.contains("the seed is a whole number"), "{seed}");
        assert!(simulate("tally", "", 2, "18446744073709551616", 10).is_err());
    }
}
