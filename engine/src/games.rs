//! Games chosen by name at run time: a binary hands its library a list of
//! games ([`Games`]), and the library runs code generic over the game
//! ([`ForGame`]) for the one a server hosts, a replay recorded or the
//! command line names. A game brings everything a frontend needs of it in
//! its own crate ([`Playable`]: its rules, bots, settings and view), so the
//! client, the window and the page hold no game of their own.

use lockstep_protocol::{GameSpec, SelfTest};

use crate::host::{find_game, HostedGame, UnknownGame};
use crate::view::View;
use crate::HasBots;

/// Everything a frontend needs of a game: its rules and bots
/// ([`HasBots`]) and its [`View`], whose picture the window and the page
/// draw and whose scores the report and the score strips show.
pub trait Playable: HasBots + View + Send + 'static {}

impl<G: HasBots + View + Send + 'static> Playable for G {}

/// Code generic over the game, run for a game picked by name.
pub trait ForGame {
    /// What the code returns.
    type Output;

    /// Runs the code for the game `G`.
    fn run<G: Playable>(self) -> Self::Output;
}

/// A list of games: what a binary offers and hands its library
/// (`lockstep_games::Shipped` is every game this project ships).
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
