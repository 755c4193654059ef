//! What a game draws itself through: the [`Scene`] each game implements
//! (one file per game in `games/`), the [`Layout`] that maps the game's
//! own units to the window's pixels, the [`Roster`] of who plays, and the
//! few world-space helpers the scenes share.
//!
//! The renderer ([`crate::draw::render`]) fits the game's field to the
//! window, asks the game to draw itself between two states, and draws the
//! scores, the HUD and the banner over it; every game gets the same
//! window, lobby, replay viewer and net graph.

use glam::Vec2;
use lockstep_protocol::PlayerId;
use sdl2::pixels::Color;
use sdl2::rect::Rect;
use sdl2::render::WindowCanvas;

use crate::draw::pixels::{fill_box, pixel};
use crate::draw::text::{printable, text_size};

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

/// Player colours and names in slot order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Roster {
    /// Every player of the session with their display name.
    pub players: Vec<(PlayerId, String)>,
    /// The local player, whose disc gets a white ring; `None` when
    /// spectating or replaying.
    pub me: Option<PlayerId>,
}

impl Roster {
    /// The display name of `player`; a player missing from the roster is
    /// still labelled, by id.
    pub(crate) fn name(&self, player: PlayerId) -> String {
        self.players
            .iter()
            .find(|(id, _)| *id == player)
            .map_or_else(|| format!("P{player}"), |(_, name)| printable(name))
    }
}

/// Behind everything: the bars left over when the window's shape differs
/// from the field's.
pub(crate) const LETTERBOX: Color = Color::RGB(0, 0, 0);
/// World units shown around the field on every side: room for the goal nets
/// behind the side walls and for the score line above the top wall.
pub(crate) const MARGIN: f32 = 48.0;
/// Drawn wall thickness, in world units. Walls have no thickness in the
/// simulation, so they are drawn entirely outside the field: a ball resting
/// against a wall touches the drawn wall without overlapping it.
pub(crate) const WALL_THICKNESS: f32 = 8.0;

/// Where a game's field lands on a canvas: one scale factor and an
/// offset. A [`Scene`] draws through it in its own
/// world units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Layout {
    /// The field's width and height, in world units.
    pub(crate) field: Vec2,
    /// Pixels per world unit, the same along both axes.
    scale: f32,
    /// The pixel world position (0, 0) maps to.
    origin: Vec2,
    /// Integer text magnification for this window size.
    text_size: i32,
    /// The area the arena is fitted into: the overlays stay inside it.
    pub(crate) area: Rect,
}

impl Layout {
    /// The largest view of the field and its margin that fits `area`,
    /// centred in it.
    pub(crate) fn fit(area: Rect, field: Vec2) -> Layout {
        let size = Vec2::new(area.width() as f32, area.height() as f32);
        let view = field + Vec2::splat(2.0 * MARGIN);
        // The tighter axis decides; the other gets bars.
        let (across, down) = (size.x / view.x, size.y / view.y);
        let scale = if across < down { across } else { down };
        let offset = Vec2::new(area.x() as f32, area.y() as f32);
        let corner = offset + (size - view * scale) * 0.5;
        Layout {
            field,
            scale,
            origin: corner + Vec2::splat(MARGIN * scale),
            text_size: text_size(area.height()),
            area,
        }
    }

    /// The pixel position of a world position.
    pub fn to_screen(self, pos: Vec2) -> Vec2 {
        self.origin + pos * self.scale
    }

    /// A world length in pixels.
    pub fn length(self, world: f32) -> f32 {
        world * self.scale
    }

    /// The text magnification for this window size: labels a scene draws
    /// match the HUD's.
    pub fn text_size(self) -> i32 {
        self.text_size
    }
}

/// Linear interpolation from `a` (alpha 0) to `b` (alpha 1).
pub(crate) fn lerp(a: Vec2, b: Vec2, alpha: f32) -> Vec2 {
    a + (b - a) * alpha
}

/// Fills the rectangle between two opposite world corners, in either order.
pub(crate) fn world_rect(
    canvas: &mut WindowCanvas,
    layout: &Layout,
    (a, b): (Vec2, Vec2),
    colour: Color,
) -> Result<(), String> {
    let (a, b) = (layout.to_screen(a), layout.to_screen(b));
    let (ax, bx) = (pixel(a.x), pixel(b.x));
    let (ay, by) = (pixel(a.y), pixel(b.y));
    let (x, y) = (ax.min(bx), ay.min(by));
    fill_box(canvas, x, y, (bx - ax).abs(), (by - ay).abs(), colour)
}
