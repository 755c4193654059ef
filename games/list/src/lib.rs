//! Every game lockstep ships, as one list. The binaries take it
//! (`lockstep-server`'s and `lockstep-client`'s `main` are a line each
//! that hands it to their library) and nothing else names a game, so
//! adding one is its crate under `games/` and a line here.

use lockstep_engine::HostedGame;

lockstep_engine::game_list!(
    /// Every game, for code generic over the game: what the client's and
    /// the page's entry points take. The list: a game is its crate under
    /// `games/`, a dependency in this crate's Cargo.toml, and its type
    /// here.
    pub struct Shipped:
        lockstep_balls::World,
        lockstep_tally::Tally,
        lockstep_topple::Physics,
);

/// Every game, as a host sees it (name, settings, self-test, snapshots,
/// dumps), in the order help texts list them; the first is the default.
pub const HOSTED: &[&dyn HostedGame] = Shipped::HOSTED;

#[cfg(test)]
mod tests {
    use lockstep_engine::games::{ForGame, Games, Playable};

    use super::*;

    /// The list of hosted games and the dispatch name the same games.
    #[test]
    fn every_hosted_game_runs_and_no_other() {
        struct Name;
        impl ForGame for Name {
            type Output = &'static str;
            fn run<G: Playable>(self) -> &'static str {
                G::NAME
            }
        }
        for game in HOSTED {
            assert_eq!(Shipped.run(game.name(), Name), Ok(game.name()));
        }
        let unknown = Shipped.run("chess", Name).unwrap_err();
        assert_eq!(unknown.offered, ["balls", "tally", "physics"]);
    }

    #[test]
    fn every_game_is_listed_once_by_its_own_name() {
        let mut names: Vec<&str> = HOSTED.iter().map(|game| game.name()).collect();
        assert_eq!(names, ["balls", "tally", "physics"]);
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), HOSTED.len());
    }

    #[test]
    fn every_game_says_what_it_is() {
        for game in HOSTED {
            assert!(!game.about().is_empty(), "{} says nothing", game.name());
        }
    }
}
