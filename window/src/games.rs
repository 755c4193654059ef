//! The dispatch that runs window code generic over the game
//! ([`ForWindowGame`]) for the one a server, a replay or the command line
//! names, over the games the binary offers ([`WindowGames`]).
//!
//! The window holds no game of its own: every game shows itself through
//! its [`View`](lockstep_engine::View), which the client's games have,
//! and the renderer ([`crate::draw::render`]) draws any picture.

use lockstep_client::games::{ClientGame, Games};
use lockstep_engine::UnknownGame;

/// A game this client can show in a window: any of the client's games,
/// since each brings its view.
pub trait WindowGame: ClientGame {}

impl<G: ClientGame> WindowGame for G {}

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
