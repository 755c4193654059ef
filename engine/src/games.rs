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
                pinned: game.self_test_pin(),
            })
            .collect()
    }

    /// Why this build's copy of the game `spec` names refuses its
    /// settings, in one sentence; `None` when it takes them, or has no such
    /// game (the server refuses that client at its Hello). Only settings a
    /// host gave as `KEY=VALUE` pairs can fail here: a host built with the
    /// game encoded them with the game's own code.
    fn refuses(&self, spec: &GameSpec) -> Option<String> {
        let game = self.find(&spec.name).ok()?;
        game.describe(spec).err().map(|e| e.to_string())
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

/// A list of games, as a binary or the page takes it: a unit struct that
/// implements [`Games`] for the game types named, in the order help texts
/// list them (the first is the default), and its `HOSTED` list. What a
/// game outside this repository writes in its own binary:
///
/// ```ignore
/// lockstep_engine::game_list!(
///     /// The games this client plays.
///     pub struct MyGames: flock::Flock, lockstep_balls::World
/// );
///
/// fn main() -> std::process::ExitCode {
///     lockstep_cli::main(&MyGames)
/// }
/// ```
#[macro_export]
macro_rules! game_list {
    ($(#[$meta:meta])* $vis:vis struct $list:ident: $($game:ty),+ $(,)?) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, Default)]
        $vis struct $list;

        impl $list {
            /// Every game of the list, as a host sees it, in order.
            pub const HOSTED: &'static [&'static dyn $crate::HostedGame] =
                &[$(&$crate::Hosted::<$game>::new()),+];
        }

        impl $crate::games::Games for $list {
            fn hosted(&self) -> &[&'static dyn $crate::HostedGame] {
                Self::HOSTED
            }

            fn run<F: $crate::games::ForGame>(
                &self,
                name: &str,
                code: F,
            ) -> ::core::result::Result<F::Output, $crate::UnknownGame> {
                $(
                    if name == <$game as $crate::Game>::NAME {
                        return Ok(code.run::<$game>());
                    }
                )+
                Err($crate::UnknownGame {
                    name: name.to_string(),
                    offered: Self::HOSTED.iter().map(|game| game.name()).collect(),
                })
            }
        }
    };
}
