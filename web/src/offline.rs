//! The page's benchmark: a game of bots only, as `lockstep-client sim`
//! plays it, for whichever game of the list it names.

use lockstep_engine::games::{ForGame, Games, Playable};
use lockstep_engine::{final_line, offline, parse_setting, Setup};
use lockstep_protocol::PlayerId;

use crate::games::OFFERED;

/// The `final` line of `game` (empty: the first of the list) with
/// `settings` (`K=V` pairs joined by commas), `players` bots seeded with
/// `seed`, after `ticks` at 60 Hz; or why it cannot run.
pub fn simulate(
    game: &str,
    settings: &str,
    players: u8,
    seed: u32,
    ticks: u32,
) -> Result<String, String> {
    /// One offline game, for whichever game it is.
    struct Offline {
        settings: Vec<(String, String)>,
        players: u8,
        seed: u64,
        ticks: u32,
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
    let settings = settings
        .split(',')
        .filter(|pair| !pair.trim().is_empty())
        .map(parse_setting)
        .collect::<Result<Vec<_>, _>>()?;
    let first = OFFERED.hosted().first().map_or("", |game| game.name());
    let name = if game.is_empty() { first } else { game };
    let offline = Offline {
        settings,
        players,
        seed: u64::from(seed),
        ticks,
    };
    OFFERED.run(name, offline).map_err(|e| e.to_string())?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_benchmark_plays_what_the_native_sim_plays() {
        let tally = simulate("tally", "", 5, 7, 900).expect("tally runs");
        assert_eq!(tally, "final tick=900 hash=4418b7a8c0073ec9");
        let balls = simulate("", "balls=24", 4, 1, 60).expect("the first game runs");
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
