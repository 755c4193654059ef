//! Each game as the window shows it: its [`Scene`], one file per game
//! beside this one (the one thing a game must add to be drawn, played and
//! replayed in a window); and the dispatch that runs window code generic
//! over the game ([`ForWindowGame`]) for the one a server, a replay or the
//! command line names, over the games the binary offers
//! ([`WindowGames`]).
//!
//! [`Scene`] and the [`Layout`](crate::draw::scene::Layout) a scene draws
//! through belong to the drawing ([`crate::draw::scene`]): the renderer
//! calls them, so drawing never imports the games.

use lockstep_client::games::{ClientGame, Games};
use lockstep_engine::UnknownGame;

use crate::draw::scene::Scene;

mod balls;
mod physics;
mod tally;

/// A game this client can show: the client's game with its [`Scene`].
pub trait WindowGame: ClientGame + Scene {}

impl<G: ClientGame + Scene> WindowGame for G {}

/// Window code generic over the game, run for a game picked by name.
pub trait ForWindowGame {
    /// What the code returns.
    type Output;

    /// Runs the code for the game `G`.
    fn run<G: WindowGame>(self) -> Self::Output;
}

/// The games a client binary offers, with the window.
pub trait WindowGames: Games {
    /// Runs `code` for the game called `name`.
    fn run_windowed<F: ForWindowGame>(&self, name: &str, code: F)
        -> Result<F::Output, UnknownGame>;
}
