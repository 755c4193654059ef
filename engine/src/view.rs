//! What a game looks like, as plain shapes: the [`View`] a game implements
//! in its own crate, and the [`Picture`] of [`Shape`]s it answers with.
//! The native window and the browser's page each have one renderer that
//! draws any picture, so a game is drawn the same everywhere and neither
//! frontend holds code of its own for any game (a bevy plugin's habit:
//! the game brings its look, the renderer only draws).
//!
//! # The rules a picture keeps
//!
//! - **The game's own units, y down.** Every position and length is in
//!   the units the view chooses (the ball game's arena units, Topple's
//!   metres), x to the right and y *down*, as on a screen. A game whose
//!   world is y-up (Topple) flips its y while it draws.
//! - **A field, and a margin around it.** [`View::field`] is the area a
//!   renderer fits into its window, letterboxed; every renderer also shows
//!   a [margin](Area::margin) around it, a fixed share of the field's
//!   width, where a game may draw (the ball game's goal nets) and the
//!   renderer puts its score strip.
//! - **Painted in order.** Shapes are drawn in the order pushed, later
//!   over earlier; a [`Shape::Clip`] limits the shapes after it.
//! - **Players by id, not by colour or name.** [`Paint::Player`] and
//!   [`Shape::Label`]'s `player` name a player; each renderer resolves
//!   them from its own palette and roster, so a picture is the same on
//!   every peer and needs no names to be built.
//! - **Between two ticks.** The view is given the last two states and the
//!   frame's alpha and interpolates itself: only the game knows which of
//!   its bodies jumped (a respawn) and must not be smeared.
//! - **Nothing changes.** A view reads the states; drawing never touches
//!   what the hash covers.

use lockstep_protocol::PlayerId;

/// A position in a picture, in the view's units, y down.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Point {
    /// Right.
    pub x: f32,
    /// Down.
    pub y: f32,
}

impl Point {
    /// The point (`x`, `y`).
    #[must_use]
    pub const fn new(x: f32, y: f32) -> Point {
        Point { x, y }
    }

    /// The point `alpha` of the way from `self` (0) to `to` (1): where a
    /// body is drawn between two ticks.
    #[must_use]
    pub fn lerp(self, to: Point, alpha: f32) -> Point {
        Point::new(
            self.x + (to.x - self.x) * alpha,
            self.y + (to.y - self.y) * alpha,
        )
    }

    /// The square of the distance to `other`: a jump test needs no square
    /// root.
    #[must_use]
    pub fn distance_squared(self, other: Point) -> f32 {
        let (dx, dy) = (other.x - self.x, other.y - self.y);
        dx * dx + dy * dy
    }
}

/// An axis-aligned rectangle of a picture: the field, a clip.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Area {
    /// The corner with the smallest coordinates (top left, y down).
    pub min: Point,
    /// The opposite corner (bottom right).
    pub max: Point,
}

impl Area {
    /// The rectangle from `min` (top left) to `max` (bottom right).
    #[must_use]
    pub const fn new(min: Point, max: Point) -> Area {
        Area { min, max }
    }

    /// Its width.
    #[must_use]
    pub fn width(self) -> f32 {
        self.max.x - self.min.x
    }

    /// Its height.
    #[must_use]
    pub fn height(self) -> f32 {
        self.max.y - self.min.y
    }

    /// Its centre.
    #[must_use]
    pub fn centre(self) -> Point {
        self.min.lerp(self.max, 0.5)
    }

    /// How much every renderer shows around a field, on each side: 3% of
    /// its width, which is 48 units around the ball game's 1600-wide
    /// arena (room for its goal nets behind the side walls and for the
    /// score strip above the top wall). A share of the width rather than
    /// a length, so a game in metres gets the same frame as one in
    /// hundreds of units.
    #[must_use]
    pub fn margin(self) -> f32 {
        self.width() * 3.0 / 100.0
    }
}

/// What a shape is filled or stroked with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paint {
    /// Red, green, blue and opacity (255 opaque); see-through paint
    /// blends with what is under it.
    Rgba(u8, u8, u8, u8),
    /// The player's colour, from the renderer's palette: the same for a
    /// player on every peer and every screen.
    Player(PlayerId),
    /// The player's colour darkened, for an outline that belongs to the
    /// player's body.
    PlayerDark(PlayerId),
}

impl Paint {
    /// An opaque colour.
    #[must_use]
    pub const fn rgb(r: u8, g: u8, b: u8) -> Paint {
        Paint::Rgba(r, g, b, 255)
    }

    /// The same paint darkened to 55%, as [`Paint::PlayerDark`] darkens a
    /// player's colour: the outline of a body in this paint.
    #[must_use]
    pub const fn darker(self) -> Paint {
        match self {
            Paint::Rgba(r, g, b, a) => Paint::Rgba(shade(r), shade(g), shade(b), a),
            Paint::Player(player) | Paint::PlayerDark(player) => Paint::PlayerDark(player),
        }
    }
}

/// A colour channel at 55% (the renderers darken players' colours alike).
const fn shade(channel: u8) -> u8 {
    (channel as u16 * 55 / 100) as u8
}

/// How wide a line or an outline is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Width {
    /// In the picture's units: it grows and shrinks with the field, like
    /// a marking painted on it.
    Units(f32),
    /// In hairlines: a renderer's thinnest line, one pixel while the field
    /// and its margin are up to about 720 pixels tall on screen and a
    /// whole pixel more per 720 beyond, so a body's rim stays visible in a
    /// small window and keeps its look in a big one.
    Lines(f32),
}

/// A line's paint and width.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stroke {
    /// Its paint.
    pub paint: Paint,
    /// Its width.
    pub width: Width,
}

impl Stroke {
    /// A line `lines` hairlines wide (see [`Width::Lines`]).
    #[must_use]
    pub const fn lines(paint: Paint, lines: f32) -> Stroke {
        Stroke {
            paint,
            width: Width::Lines(lines),
        }
    }
}

/// One thing drawn.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// A filled rectangle between two opposite corners, in either order.
    Rect {
        /// One corner.
        from: Point,
        /// The opposite corner.
        to: Point,
        /// Its fill.
        fill: Paint,
    },
    /// A circle, filled or not, with an optional rim drawn inside its
    /// radius (so a ringed body is as big as its collider).
    Circle {
        /// Its centre.
        centre: Point,
        /// Its radius.
        radius: f32,
        /// Its fill; `None` for a ring alone.
        fill: Option<Paint>,
        /// Its rim, inside the radius.
        edge: Option<Stroke>,
    },
    /// A filled polygon (a turned crate), with an optional outline along
    /// its edges.
    Polygon {
        /// Its corners in order, either way round.
        points: Vec<Point>,
        /// Its fill.
        fill: Paint,
        /// Its outline.
        edge: Option<Stroke>,
    },
    /// A straight line (a ball's spoke).
    Line {
        /// One end.
        from: Point,
        /// The other end.
        to: Point,
        /// Its paint and width.
        stroke: Stroke,
    },
    /// A line of text centred on `at`, just above it, on a dark shadow so
    /// it reads over anything. The renderer picks the size (its own text
    /// size, the same for every label of a picture). With a `player`, the
    /// text shown is that player's name, then `text` after a space if it
    /// is not empty ("ada 12").
    Label {
        /// The point the text stands on, centred above it.
        at: Point,
        /// Whose name starts the text, if anyone's.
        player: Option<PlayerId>,
        /// The text, or what follows the name.
        text: String,
        /// Its colour.
        paint: Paint,
    },
    /// The shapes after this one are drawn only inside the area (`None`:
    /// everywhere again): bodies that fly past the field's edge vanish
    /// there instead of over the letterbox.
    Clip(Option<Area>),
}

/// Everything a view draws for one frame, in order. Kept between frames
/// by the renderers so its memory is reused.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Picture {
    /// The shapes, first drawn first.
    shapes: Vec<Shape>,
}

impl Picture {
    /// An empty picture.
    #[must_use]
    pub fn new() -> Picture {
        Picture::default()
    }

    /// The shapes, in drawing order.
    #[must_use]
    pub fn shapes(&self) -> &[Shape] {
        &self.shapes
    }

    /// Forgets every shape, keeping the memory, for the next frame.
    pub fn clear(&mut self) {
        self.shapes.clear();
    }

    /// Adds `shape` over everything so far.
    pub fn push(&mut self, shape: Shape) {
        self.shapes.push(shape);
    }

    /// A filled rectangle between opposite corners `from` and `to`.
    pub fn rect(&mut self, from: Point, to: Point, fill: Paint) {
        self.push(Shape::Rect { from, to, fill });
    }

    /// A filled circle with an optional rim inside its radius.
    pub fn circle(&mut self, centre: Point, radius: f32, fill: Paint, edge: Option<Stroke>) {
        self.push(Shape::Circle {
            centre,
            radius,
            fill: Some(fill),
            edge,
        });
    }

    /// A ring: a circle's rim alone, inside `radius`.
    pub fn ring(&mut self, centre: Point, radius: f32, edge: Stroke) {
        self.push(Shape::Circle {
            centre,
            radius,
            fill: None,
            edge: Some(edge),
        });
    }

    /// A filled polygon with an optional outline.
    pub fn polygon(&mut self, points: Vec<Point>, fill: Paint, edge: Option<Stroke>) {
        self.push(Shape::Polygon { points, fill, edge });
    }

    /// A straight line.
    pub fn line(&mut self, from: Point, to: Point, stroke: Stroke) {
        self.push(Shape::Line { from, to, stroke });
    }

    /// `player`'s name, followed by `text` if it is not empty, standing on
    /// `at` in the player's colour.
    pub fn name(&mut self, at: Point, player: PlayerId, text: impl Into<String>) {
        self.push(Shape::Label {
            at,
            player: Some(player),
            text: text.into(),
            paint: Paint::Player(player),
        });
    }

    /// Limits the shapes that follow to `area` (`None`: no limit).
    pub fn clip(&mut self, area: Option<Area>) {
        self.push(Shape::Clip(area));
    }
}

/// A game that shows itself as a [`Picture`]: implemented in the game's
/// crate, drawn by the window and the page alike.
pub trait View {
    /// The area every renderer fits to its window (with a
    /// [margin](Area::margin) around it), in the picture's units.
    fn field(&self) -> Area;

    /// Draws the game between `previous` and `current` into `out` (which
    /// the caller has cleared): `alpha` is in `[0, 1]`, 0 being
    /// `previous`. `me` is the local player, whom the picture may mark
    /// (`None` when spectating or replaying). No scores: the renderer
    /// shows [`View::scores`] in its own strip.
    fn view(previous: &Self, current: &Self, alpha: f32, me: Option<PlayerId>, out: &mut Picture);

    /// Every player's score, ascending by player (the ball game's goals),
    /// for the score strip and the report; empty for a game that keeps
    /// none.
    fn scores(&self) -> Vec<(PlayerId, u32)> {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_margin_is_48_units_around_a_1600_wide_field() {
        let field = Area::new(Point::new(0.0, 0.0), Point::new(1600.0, 900.0));
        assert_eq!(field.margin(), 48.0);
        assert_eq!(field.centre(), Point::new(800.0, 450.0));
    }

    #[test]
    fn a_darker_paint_is_55_percent_of_each_channel_and_keeps_its_opacity() {
        assert_eq!(
            Paint::Rgba(196, 150, 92, 90).darker(),
            Paint::Rgba(107, 82, 50, 90)
        );
        assert_eq!(
            Paint::Player(PlayerId(2)).darker(),
            Paint::PlayerDark(PlayerId(2))
        );
    }

    #[test]
    fn a_picture_keeps_its_shapes_in_the_order_pushed() {
        let mut picture = Picture::new();
        picture.rect(
            Point::new(0.0, 0.0),
            Point::new(1.0, 1.0),
            Paint::rgb(1, 2, 3),
        );
        picture.name(Point::new(0.5, 0.0), PlayerId(1), "7");
        assert!(matches!(picture.shapes()[0], Shape::Rect { .. }));
        let Shape::Label { player, text, .. } = &picture.shapes()[1] else {
            panic!("{:?}", picture.shapes());
        };
        assert_eq!((*player, text.as_str()), (Some(PlayerId(1)), "7"));
        picture.clear();
        assert!(picture.shapes().is_empty());
    }
}
