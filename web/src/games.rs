//! The games the page plays, chosen by the name in the server's Start as
//! the native client chooses them: the ball game, Tally and Topple. Each
//! brings what the page draws of it and its scores in its own crate (its
//! [`View`]); the page draws any of them alike ([`crate::picture`]).

use lockstep_balls::World;
use lockstep_engine::{HasBots, Hosted, HostedGame, View};
use lockstep_protocol::SelfTest;
use lockstep_tally::Tally;
use lockstep_topple::Physics;

/// Every game the page offers, as a host sees it (the self-tests of the
/// Hello come from these).
pub const GAMES: &[&dyn HostedGame] = &[
    &Hosted::<World>::new(),
    &Hosted::<Tally>::new(),
    &Hosted::<Physics>::new(),
];

/// What the page needs of a game beyond the engine's: its view, for the
/// picture and the score strip.
pub trait WebGame: HasBots + View + 'static {}

impl<G: HasBots + View + 'static> WebGame for G {}

/// This build's preflight: the self-test hash of every game, computed in
/// the page, for the Hello.
pub fn self_tests() -> Vec<SelfTest> {
    GAMES
        .iter()
        .map(|game| SelfTest {
            game: game.name().to_string(),
            hash: game.self_test(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_preflight_names_every_game_with_its_self_test() {
        let tests = self_tests();
        let names: Vec<&str> = tests.iter().map(|t| t.game.as_str()).collect();
        assert_eq!(names, ["balls", "tally", "physics"]);
        assert_eq!(tests[0].hash, <World as HasBots>::self_test());
    }
}
