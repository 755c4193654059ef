//! Every game lockstep ships, as one list. The binaries take it
//! (`lockstep-server`'s and `lockstep-client`'s `main` are a line each
//! that hands it to their library) and nothing else names a game, so
//! adding one is its crate under `games/` and a line here.

use lockstep_balls::World;
use lockstep_engine::{Hosted, HostedGame};
use lockstep_tally::Tally;
use lockstep_topple::Physics;

/// Every game, as a host sees it (name, settings, self-test, snapshots,
/// dumps), in the order help texts list them; the first is the default.
pub const HOSTED: &[&dyn HostedGame] = &[
    &Hosted::<World>::new(),
    &Hosted::<Tally>::new(),
    &Hosted::<Physics>::new(),
];

#[cfg(test)]
mod tests {
    use super::*;

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
