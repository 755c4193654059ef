//! The games the page plays, chosen by the name in the server's Start as
//! the native client chooses them. The page takes its list as a value,
//! like the native client's `main`: the final wasm module [`offer`]s it,
//! and the page reads it once, when it makes its peer ([`offered`]).
//! Without an offer, the page offers the project's own games
//! (`lockstep-games`, behind the default feature `shipped`); a game
//! outside this workspace builds the page without that feature and offers
//! its own list from its crate's start function:
//!
//! ```ignore
//! lockstep_engine::game_list!(struct Games: flock::Flock);
//!
//! #[wasm_bindgen::prelude::wasm_bindgen(start)]
//! fn start() {
//!     lockstep_web::games::offer(&Games);
//! }
//! ```
//!
//! A list of games ([`Games`]) dispatches code generic over the game,
//! which a `static` cannot hold; [`PageGames`] is what the page does with
//! one, each generic step named, so any list becomes a
//! `&'static dyn PageGames`. Each game brings what the page draws of it
//! and its scores in its own crate (its `View`); the page draws any of
//! them alike ([`crate::picture`]).

use std::sync::OnceLock;

use lockstep_engine::games::Games;
use lockstep_engine::HostedGame;
use lockstep_link::connection::Started;
use lockstep_link::play::LoopOptions;
use lockstep_protocol::{GameSpec, SelfTest};
use web_time::Instant;

use crate::offline::Offline;
use crate::play::{Running, Starting};

/// What the page does with a list of games: every use of [`Games`] it
/// makes, without a generic method, so that one list chosen at start-up
/// serves the whole page. Every list of games is one
/// (`lockstep_engine::game_list!` makes them).
pub trait PageGames: Sync {
    /// Every game, as a host sees it; the first is the benchmark's
    /// default.
    fn hosted(&self) -> &[&'static dyn HostedGame];

    /// This build's self-test hash of every game, for the Hello.
    fn self_tests(&self) -> Vec<SelfTest>;

    /// Why this page's copy of the game `spec` names refuses its
    /// settings; `None` when it takes them or has no such game.
    fn refuses(&self, spec: &GameSpec) -> Option<String>;

    /// `spec` in a few words, as the native lobby says it.
    fn describe(&self, spec: &GameSpec) -> String;

    /// Starts the game the Start names, if the page has it.
    fn start(
        &self,
        started: Started,
        options: LoopOptions,
        epoch: Instant,
    ) -> Result<Box<dyn Running>, String>;

    /// The `final` line of the game called `name` (empty: the first)
    /// played `offline` (the page's benchmark), or why it cannot run.
    fn simulate(&self, name: &str, offline: Offline) -> Result<String, String>;
}

impl<L: Games + Sync> PageGames for L {
    fn hosted(&self) -> &[&'static dyn HostedGame] {
        Games::hosted(self)
    }

    fn self_tests(&self) -> Vec<SelfTest> {
        Games::self_tests(self)
    }

    fn refuses(&self, spec: &GameSpec) -> Option<String> {
        Games::refuses(self, spec)
    }

    fn describe(&self, spec: &GameSpec) -> String {
        Games::describe(self, spec)
    }

    fn start(
        &self,
        started: Started,
        options: LoopOptions,
        epoch: Instant,
    ) -> Result<Box<dyn Running>, String> {
        let name = started.start.spec.name.clone();
        let starting = Starting {
            started,
            options,
            epoch,
        };
        self.run(&name, starting)
            .unwrap_or_else(|unknown| Err(format!("{unknown} (in this page)")))
    }

    fn simulate(&self, name: &str, offline: Offline) -> Result<String, String> {
        let first = Games::hosted(self).first().map_or("", |game| game.name());
        let name = if name.is_empty() { first } else { name };
        self.run(name, offline).map_err(|e| e.to_string())?
    }
}

impl std::fmt::Debug for dyn PageGames {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.hosted().iter().map(|game| game.name()))
            .finish()
    }
}

/// The list the final module offered, if it did.
static OFFER: OnceLock<&'static dyn PageGames> = OnceLock::new();

/// Makes `games` the page's list, before the page makes its peer: what the
/// final wasm module's start function does. Only the first offer counts;
/// a later one is refused with `false`.
pub fn offer(games: &'static dyn PageGames) -> bool {
    OFFER.set(games).is_ok()
}

/// The page's games: those [`offer`]ed, or else the project's own (none
/// without the feature `shipped`).
pub fn offered() -> &'static dyn PageGames {
    OFFER.get().copied().unwrap_or(DEFAULT)
}

/// The games of a page whose module offers none.
#[cfg(feature = "shipped")]
const DEFAULT: &dyn PageGames = &lockstep_games::Shipped;

/// The games of a page whose module offers none.
#[cfg(not(feature = "shipped"))]
const DEFAULT: &dyn PageGames = &NoGames;

/// No game at all: a page built without the project's games whose module
/// offered none joins, announces no self-test, and says it cannot play
/// what the server hosts.
#[cfg(not(feature = "shipped"))]
#[derive(Debug, Clone, Copy)]
struct NoGames;

#[cfg(not(feature = "shipped"))]
impl Games for NoGames {
    fn hosted(&self) -> &[&'static dyn HostedGame] {
        &[]
    }

    fn run<F: lockstep_engine::games::ForGame>(
        &self,
        name: &str,
        _code: F,
    ) -> Result<F::Output, lockstep_engine::UnknownGame> {
        Err(lockstep_engine::UnknownGame {
            name: name.to_string(),
            offered: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_preflight_names_every_game_with_its_self_test() {
        let games: &dyn PageGames = &lockstep_games::Shipped;
        let tests = games.self_tests();
        let names: Vec<&str> = tests.iter().map(|t| t.game.as_str()).collect();
        assert_eq!(names, ["balls", "tally", "physics"]);
        assert_eq!(tests[0].hash, games.hosted()[0].self_test());
    }

    #[test]
    fn the_benchmark_plays_the_first_game_when_it_names_none() {
        let games: &dyn PageGames = &lockstep_games::Shipped;
        let offline = Offline::new("balls=24", 4, "1", 60).expect("pairs");
        let first = games.simulate("", offline).expect("the first game runs");
        assert_eq!(first, "final tick=60 hash=ff567b8fe1364906");
    }

    #[test]
    fn the_first_offer_is_the_pages_list_and_a_second_is_refused() {
        lockstep_engine::game_list!(struct Tally: lockstep_tally::Tally);
        assert!(offer(&Tally));
        assert!(!offer(&lockstep_games::Shipped));
        let names: Vec<&str> = offered().hosted().iter().map(|g| g.name()).collect();
        assert_eq!(names, ["tally"]);
        assert_eq!(format!("{:?}", offered()), r#"["tally"]"#);
    }
}
