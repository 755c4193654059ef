//! The page's benchmark: a game of bots only, as `lockstep-client sim`
//! plays it, for whichever game of the list it names
//! ([`crate::games::PageGames::simulate`]).

use lockstep_engine::games::{ForGame, Playable};
use lockstep_engine::{final_line, offline, parse_setting, Setup};
use lockstep_protocol::PlayerId;

/// One offline game, for whichever game it is: its `final` line, or why
/// the game refuses its settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offline {
    /// `KEY=VALUE` settings, parsed by the game.
    settings: Vec<(String, String)>,
    /// Bots playing (at least one plays).
    players: u8,
    /// The game's seed; the bots' too.
    seed: u64,
    /// Ticks to play, at 60 Hz.
    ticks: u32,
}

impl Offline {
    /// A game with `settings` (`K=V` pairs joined by commas), `players`
    /// bots seeded with `seed`, until `ticks` at 60 Hz; or why the
    /// settings are not pairs.
    pub fn new(settings: &str, players: u8, seed: u32, ticks: u32) -> Result<Offline, String> {
        let settings = settings
            .split(',')
            .filter(|pair| !pair.trim().is_empty())
            .map(parse_setting)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Offline {
            settings,
            players,
            seed: u64::from(seed),
            ticks,
        })
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
        let game: G = offline(&setup, self.ticks);
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
        seed: u32,
        ticks: u32,
    ) -> Result<String, String> {
        let offline = Offline::new(settings, players, seed, ticks)?;
        lockstep_games::Shipped
            .run(game, offline)
            .map_err(|e| e.to_string())?
    }

    #[test]
    fn the_benchmark_plays_what_the_native_sim_plays() {
        let tally = simulate("tally", "", 5, 7, 900).expect("tally runs");
        assert_eq!(tally, "final tick=900 hash=4418b7a8c0073ec9");
        let balls = simulate("balls", "balls=24", 4, 1, 60).expect("balls runs");
        assert_eq!(balls, "final tick=60 hash=ff567b8fe1364906");
    }

    #[test]
    fn a_game_or_setting_the_page_lacks_is_said() {
        let unknown = simulate("chess", "", 2, 1, 10).unwrap_err();
        assert!(unknown.contains("chess"), "{unknown}");
        let wrong = simulate("tally", "balls=3", 2, 1, 10).unwrap_err();
        assert!(wrong.contains("balls"), "{wrong}");
        assert!(simulate("tally", "nonsense", 2, 1, 10).is_err());
    }
}
