//! How a game looks in the window: the one thing a game must add to be
//! drawn, played and replayed in a window.
//!
//! [`crate::render::Renderer`] fits the game's field to the window, asks
//! the game to draw itself between two states, and draws the scores, the
//! HUD and the banner over it; every game gets the same window, lobby,
//! replay viewer and network graph.

use glam::Vec2;
use sdl2::render::WindowCanvas;

use crate::render::{Layout, Roster};

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
