//! The games the page plays, chosen by the name in the server's Start as
//! the native client chooses them: the project's list of games
//! (`lockstep-games`), taken here and only here. Each game brings what the
//! page draws of it and its scores in its own crate (its `View`); the
//! page draws any of them alike ([`crate::picture`]).

use lockstep_engine::games::Games;
use lockstep_engine::HostedGame;
use lockstep_protocol::SelfTest;

/// Every game the page offers, for code generic over the game.
pub const OFFERED: lockstep_games::Shipped = lockstep_games::Shipped;

/// Every game the page offers, as a host sees it (the self-tests of the
/// Hello come from these).
pub const GAMES: &[&dyn HostedGame] = lockstep_games::HOSTED;

/// This build's preflight: the self-test hash of every game, computed in
/// the page, for the Hello.
pub fn self_tests() -> Vec<SelfTest> {
    OFFERED.self_tests()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_preflight_names_every_game_with_its_self_test() {
        let tests = self_tests();
        let names: Vec<&str> = tests.iter().map(|t| t.game.as_str()).collect();
        assert_eq!(names, ["balls", "tally", "physics"]);
        assert_eq!(tests[0].hash, GAMES[0].self_test());
    }
}
