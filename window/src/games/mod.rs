//! How a game looks in the window ([`Scene`]): the one thing a game must
//! add to be drawn, played and replayed in a window, one file per game
//! beside this one; and the dispatch that runs window code generic over
//! the game ([`ForWindowGame`]) for the one a server, a replay or the
//! command line names, over the games the binary offers
//! ([`WindowGames`]).
//!
//! [`crate::draw::render::Renderer`] fits the game's field to the window, asks
//! the game to draw itself between two states, and draws the scores, the
//! HUD and the banner over it; every game gets the same window, lobby,
//! replay viewer and network graph.

use glam::Vec2;
use sdl2::render::WindowCanvas;

use lockstep_client::games::{ClientGame, Games};
use lockstep_engine::UnknownGame;

use crate::draw::render::{Layout, Roster};

mod balls;
mod tally;

/// A game that draws itself.
pub trait Scene: Sized {
    /// The width and height of the field, in the game's own units: the
    /// window shows it whole, letterboxed, with a margin around it.
    fn field(&self) -> Vec2;

    /// Draws the game between `previous` and `current` (`alpha` in
    /// `[0, 1]`: 0 is `previous`) through `layout`, which maps the game's
    /// units to pixels. Draws no scores: the renderer draws them over it.
    fn draw_scene(
        canvas: &mut WindowCanvas,
        layout: &Layout,
        previous: &Self,
        current: &Self,
        alpha: f32,
        roster: &Roster,
    ) -> Result<(), String>;
}

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
