//! A game's picture for the page: the shapes its
//! [`View`] draws between the last two ticks,
//! encoded as one flat list of numbers that `drawPicture` in
//! `web/static/main.js` draws, so no drawing library is compiled in and
//! nothing but numbers crosses into JavaScript each frame. Every game is
//! drawn by that one function.
//!
//! ```text
//! picture: min_x, min_y, max_x, max_y          the field (View::field)
//!          then shapes, each an opcode and its numbers, until the end:
//!   0 rect     x0, y0, x1, y1, fill
//!   1 circle   x, y, radius, fill, edge         fill may be "none"
//!   2 polygon  n, then x, y for each of n corners, fill, edge
//!   3 line     x0, y0, x1, y1, stroke
//!   4 label    x, y, player, paint, n, then n UTF-16 code units
//!   5 clip     0 (no clip), or 1, x0, y0, x1, y1
//!
//! paint:   kind, a, b, c, d (5 numbers): kind 0 is r, g, b, alpha
//!          (0..255); 1 player a's colour; 2 player a's colour darkened;
//!          -1 none (b, c, d unused)
//! stroke:  paint, then width kind (0 picture units, 1 hairlines), width
//! edge:    a stroke, or paint kind -1 for none
//! player:  the player whose name starts the label, -1 for none
//! ```
//!
//! Positions are in the picture's units, y down (see
//! [`lockstep_engine::view`]); the page fits the field and its margin to
//! the canvas as the window does. A label's text is its `player`'s name
//! from the page's roster, then the text after a space if any.

use lockstep_engine::view::{Paint, Picture, Shape, Stroke, Width};
use lockstep_engine::View;
use lockstep_protocol::PlayerId;

/// The opcode of each shape (see the [module docs](self)).
const RECT: f32 = 0.0;
/// See [`RECT`].
const CIRCLE: f32 = 1.0;
/// See [`RECT`].
const POLYGON: f32 = 2.0;
/// See [`RECT`].
const LINE: f32 = 3.0;
/// See [`RECT`].
const LABEL: f32 = 4.0;
/// See [`RECT`].
const CLIP: f32 = 5.0;

/// A paint kind's number: no paint.
const NO_PAINT: f32 = -1.0;
/// See [`NO_PAINT`]: red, green, blue and alpha.
const RGBA: f32 = 0.0;
/// See [`NO_PAINT`]: a player's colour.
const PLAYER: f32 = 1.0;
/// See [`NO_PAINT`]: a player's colour darkened.
const PLAYER_DARK: f32 = 2.0;
/// A width kind's number: the picture's units.
const UNITS: f32 = 0.0;
/// See [`UNITS`]: hairlines.
const LINES: f32 = 1.0;

/// Appends the picture of `G` between `previous` and `current` at
/// `alpha`, as `me` sees it, to `out` (see the [module docs](self)).
pub fn scene<G: View>(
    previous: &G,
    current: &G,
    alpha: f32,
    me: Option<PlayerId>,
    out: &mut Vec<f32>,
) {
    let mut picture = Picture::new();
    G::view(previous, current, alpha, me, &mut picture);
    let field = current.field();
    out.extend([field.min.x, field.min.y, field.max.x, field.max.y]);
    encode(&picture, out);
}

/// Appends every shape of `picture` to `out`.
fn encode(picture: &Picture, out: &mut Vec<f32>) {
    for shape in picture.shapes() {
        match shape {
            Shape::Rect { from, to, fill } => {
                out.extend([RECT, from.x, from.y, to.x, to.y]);
                paint(Some(*fill), out);
            }
            Shape::Circle {
                centre,
                radius,
                fill,
                edge,
            } => {
                out.extend([CIRCLE, centre.x, centre.y, *radius]);
                paint(*fill, out);
                stroke(*edge, out);
            }
            Shape::Polygon { points, fill, edge } => {
                out.extend([POLYGON, points.len() as f32]);
                out.extend(points.iter().flat_map(|p| [p.x, p.y]));
                paint(Some(*fill), out);
                stroke(*edge, out);
            }
            Shape::Line {
                from,
                to,
                stroke: line,
            } => {
                out.extend([LINE, from.x, from.y, to.x, to.y]);
                stroke(Some(*line), out);
            }
            Shape::Label {
                at,
                player,
                text,
                paint: colour,
            } => {
                let player = player.map_or(-1.0, |p| f32::from(p.0));
                out.extend([LABEL, at.x, at.y, player]);
                paint(Some(*colour), out);
                let units: Vec<u16> = text.encode_utf16().collect();
                out.push(units.len() as f32);
                out.extend(units.into_iter().map(f32::from));
            }
            Shape::Clip(None) => out.extend([CLIP, 0.0]),
            Shape::Clip(Some(area)) => {
                out.extend([CLIP, 1.0, area.min.x, area.min.y, area.max.x, area.max.y]);
            }
        }
    }
}

/// Appends a paint, or none, as five numbers.
fn paint(paint: Option<Paint>, out: &mut Vec<f32>) {
    out.extend(match paint {
        None => [NO_PAINT, 0.0, 0.0, 0.0, 0.0],
        Some(Paint::Rgba(r, g, b, a)) => [RGBA, r.into(), g.into(), b.into(), a.into()],
        Some(Paint::Player(p)) => [PLAYER, p.0.into(), 0.0, 0.0, 0.0],
        Some(Paint::PlayerDark(p)) => [PLAYER_DARK, p.0.into(), 0.0, 0.0, 0.0],
    });
}

/// Appends a stroke, or none, as seven numbers.
fn stroke(stroke: Option<Stroke>, out: &mut Vec<f32>) {
    paint(stroke.map(|s| s.paint), out);
    out.extend(match stroke.map(|s| s.width) {
        None => [UNITS, 0.0],
        Some(Width::Units(units)) => [UNITS, units],
        Some(Width::Lines(lines)) => [LINES, lines],
    });
}

#[cfg(test)]
mod tests {
    use lockstep_balls::World;
    use lockstep_engine::view::{Area, Point};
    use lockstep_engine::{offline, Game, Setup};
    use lockstep_tally::Tally;
    use lockstep_topple::Physics;

    use super::*;

    /// Reads what [`encode`] wrote back into shapes, as the page's
    /// `drawPicture` reads it.
    struct Decoder<'a> {
        numbers: &'a [f32],
        at: usize,
    }

    impl Decoder<'_> {
        fn next(&mut self) -> f32 {
            self.at += 1;
            self.numbers[self.at - 1]
        }

        fn point(&mut self) -> Point {
            Point::new(self.next(), self.next())
        }

        fn paint(&mut self) -> Option<Paint> {
            let [kind, a, b, c, d] = [0; 5].map(|_| self.next());
            let byte = |v: f32| v as u8;
            match kind {
                NO_PAINT => None,
                RGBA => Some(Paint::Rgba(byte(a), byte(b), byte(c), byte(d))),
                PLAYER => Some(Paint::Player(PlayerId(byte(a)))),
                PLAYER_DARK => Some(Paint::PlayerDark(PlayerId(byte(a)))),
                other => panic!("paint kind {other}"),
            }
        }

        fn stroke(&mut self) -> Option<Stroke> {
            let paint = self.paint();
            let (kind, width) = (self.next(), self.next());
            let width = if kind == LINES {
                Width::Lines(width)
            } else {
                Width::Units(width)
            };
            paint.map(|paint| Stroke { paint, width })
        }

        fn shape(&mut self) -> Shape {
            match self.next() {
                RECT => Shape::Rect {
                    from: self.point(),
                    to: self.point(),
                    fill: self.paint().expect("a fill"),
                },
                CIRCLE => Shape::Circle {
                    centre: self.point(),
                    radius: self.next(),
                    fill: self.paint(),
                    edge: self.stroke(),
                },
                POLYGON => {
                    let n = self.next() as usize;
                    Shape::Polygon {
                        points: (0..n).map(|_| self.point()).collect(),
                        fill: self.paint().expect("a fill"),
                        edge: self.stroke(),
                    }
                }
                LINE => Shape::Line {
                    from: self.point(),
                    to: self.point(),
                    stroke: self.stroke().expect("a stroke"),
                },
                LABEL => {
                    let at = self.point();
                    let player = self.next();
                    let paint = self.paint().expect("a paint");
                    let n = self.next() as usize;
                    let units: Vec<u16> = (0..n).map(|_| self.next() as u16).collect();
                    Shape::Label {
                        at,
                        player: (player >= 0.0).then_some(PlayerId(player as u8)),
                        text: String::from_utf16(&units).expect("UTF-16"),
                        paint,
                    }
                }
                CLIP if self.next() == 0.0 => Shape::Clip(None),
                CLIP => Shape::Clip(Some(Area::new(self.point(), self.point()))),
                other => panic!("opcode {other} at {}", self.at - 1),
            }
        }
    }

    /// The field and the shapes of an encoded picture.
    fn decode(numbers: &[f32]) -> (Area, Vec<Shape>) {
        let mut decoder = Decoder { numbers, at: 0 };
        let field = Area::new(decoder.point(), decoder.point());
        let mut shapes = Vec::new();
        while decoder.at < numbers.len() {
            shapes.push(decoder.shape());
        }
        (field, shapes)
    }

    /// `G`'s picture and its encoding, decoded.
    fn both<G: View>(previous: &G, current: &G, me: Option<PlayerId>) -> (Vec<Shape>, Vec<Shape>) {
        let mut picture = Picture::new();
        G::view(previous, current, 0.5, me, &mut picture);
        let mut out = Vec::new();
        scene(previous, current, 0.5, me, &mut out);
        let (field, decoded) = decode(&out);
        assert_eq!(field, current.field());
        (picture.shapes().to_vec(), decoded)
    }

    fn setup<S: Default>(players: &[u8]) -> Setup<S> {
        Setup {
            seed: 7,
            tick_rate: 60,
            settings: S::default(),
            players: players.iter().map(|&p| PlayerId(p)).collect(),
        }
    }

    #[test]
    fn every_shape_of_every_kind_decodes_to_itself() {
        let mut picture = Picture::new();
        let (a, b) = (Point::new(-1.5, 2.0), Point::new(1600.0, 0.25));
        picture.rect(a, b, Paint::Rgba(255, 196, 40, 90));
        picture.circle(a, 30.0, Paint::Player(PlayerId(7)), None);
        picture.ring(
            b,
            110.0,
            Stroke {
                paint: Paint::rgb(1, 2, 3),
                width: Width::Units(3.0),
            },
        );
        let edge = Some(Stroke::lines(Paint::PlayerDark(PlayerId(2)), 2.0));
        picture.polygon(vec![a, b, Point::new(0.0, 9.0)], Paint::rgb(9, 8, 7), edge);
        picture.line(b, a, Stroke::lines(Paint::rgb(0, 0, 0), 1.0));
        picture.name(a, PlayerId(1), "12");
        picture.push(Shape::Label {
            at: b,
            player: None,
            text: "Zoë ✓".to_owned(),
            paint: Paint::rgb(255, 255, 255),
        });
        picture.clip(Some(Area::new(a, b)));
        picture.clip(None);
        let mut out = vec![0.0, 0.0, 1.0, 1.0];
        encode(&picture, &mut out);
        assert_eq!(decode(&out).1, picture.shapes());
    }

    #[test]
    fn the_ball_game_decodes_to_its_picture() {
        let setup = setup(&[0, 1]);
        let previous = World::start(&setup);
        let current = offline::<World>(&setup, 1);
        let (picture, decoded) = both(&previous, &current, Some(PlayerId(1)));
        assert_eq!(decoded, picture);
    }

    #[test]
    fn tally_decodes_to_its_picture() {
        let game = offline::<Tally>(&setup(&[0, 2]), 30);
        let (picture, decoded) = both(&game, &game, None);
        assert_eq!(decoded, picture);
    }

    #[test]
    fn topple_decodes_to_its_picture_with_finite_numbers() {
        let setup = setup(&[0, 3]);
        let previous = offline::<Physics>(&setup, 239);
        let current = offline::<Physics>(&setup, 240);
        let mut out = Vec::new();
        scene(&previous, &current, 0.5, Some(PlayerId(3)), &mut out);
        assert!(out.iter().all(|v| v.is_finite()));
        let (picture, decoded) = both(&previous, &current, Some(PlayerId(3)));
        assert_eq!(decoded, picture);
    }
}
