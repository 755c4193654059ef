//! The games this client plays, chosen by name at run time.
//!
//! The binary lists the games it offers ([`Games`]); the library runs code
//! generic over the game ([`ForGame`]) for the one a server hosts, a
//! replay recorded or the command line names. A game brings everything
//! this side needs of it in its own crate (its scores and how it looks
//! are its [`View`]): a new game needs only a line in the binary's list.

use lockstep_engine::{find_game, HasBots, HostedGame, UnknownGame, View};
use lockstep_protocol::{GameSpec, SelfTest};

/// What the client needs of a game beyond the engine's: its
/// [`View`], whose scores the report and the score strip show and whose
/// picture the window draws.
pub trait ClientGame: HasBots + View + Send + 'static {}

impl<G: HasBots + View + Send + 'static> ClientGame for G {}

/// Code generic over the game, run for a game picked by name.
pub trait ForGame {
    /// What the code returns.
    type Output;

    /// Runs the code for the game `G`.
    fn run<G: ClientGame>(self) -> Self::Output;
}

/// The games a client binary offers.
pub trait Games {
    /// Every game, as a host sees it: its name, settings, self-test,
    /// snapshots and dumps.
    fn hosted(&self) -> &[&'static dyn HostedGame];

    /// Runs `code` for the game called `name`.
    fn run<F: ForGame>(&self, name: &str, code: F) -> Result<F::Output, UnknownGame>;

    /// The game called `name`, as a host sees it.
    fn find(&self, name: &str) -> Result<&'static dyn HostedGame, UnknownGame> {
        find_game(self.hosted(), name)
    }

    /// This build's self-test hash of every game: what the Hello
    /// announces, for the server to compare with its own for the game it
    /// hosts.
    fn self_tests(&self) -> Vec<SelfTest> {
        self.hosted()
            .iter()
            .map(|game| SelfTest {
                game: game.name().to_string(),
                hash: game.self_test(),
            })
            .collect()
    }

    /// `spec` in a few words: the game's name and its settings ("balls
    /// (24 balls)"), or the name alone for a game without settings or one
    /// this client does not have.
    fn describe(&self, spec: &GameSpec) -> String {
        match self.find(&spec.name).map(|game| game.describe(spec)) {
            Ok(Ok(settings)) if !settings.is_empty() => format!("{} ({settings})", spec.name),
            _ => spec.name.clone(),
        }
    }
}
