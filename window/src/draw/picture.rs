//! Draws a game's [`Picture`] (the plain shapes its
//! [`View`](lockstep_engine::View) answers with) through a [`Layout`],
//! with SDL2 and SDL2_gfx: the one renderer of every game in the window.
//! The [`Roster`] gives the names the picture's labels ask for.
//!
//! Hairlines ([`Width::Lines`]) are [`Layout::hairline`] pixels wide, so
//! rims thicken in a big window; a circle's rim is drawn
//! inside its radius as two filled circles (stacked outlines would leave
//! gaps between them) with an anti-aliased edge outside.

use lockstep_engine::view::{Area, Paint, Picture, Point, Shape, Stroke, Width};
use lockstep_protocol::PlayerId;
use sdl2::gfx::primitives::DrawRenderer;
use sdl2::pixels::Color;
use sdl2::rect::Rect;
use sdl2::render::WindowCanvas;

use crate::draw::colour::{darker, player_colour};
use crate::draw::layout::{Layout, LETTERBOX};
use crate::draw::pixels::{coord, extent, fill_box, pixel};
use crate::draw::text::{printable, text, text_width, GLYPH};

/// Player colours and names in slot order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Roster {
    /// Every player of the session with their display name.
    pub players: Vec<(PlayerId, String)>,
    /// The local player, whose body the picture marks; `None` when
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

/// Draws every shape of `picture` in order through `layout`, naming
/// players from `roster`. Leaves no clip behind.
pub(crate) fn draw_picture(
    canvas: &mut WindowCanvas,
    layout: &Layout,
    picture: &Picture,
    roster: &Roster,
) -> Result<(), String> {
    let drawn = picture
        .shapes()
        .iter()
        .try_for_each(|shape| draw_shape(canvas, layout, shape, roster));
    canvas.set_clip_rect(None);
    drawn
}

/// Draws one shape.
fn draw_shape(
    canvas: &mut WindowCanvas,
    layout: &Layout,
    shape: &Shape,
    roster: &Roster,
) -> Result<(), String> {
    match shape {
        Shape::Rect { from, to, fill } => {
            let (a, b) = (layout.to_screen(*from), layout.to_screen(*to));
            let (ax, bx) = (pixel(a.x), pixel(b.x));
            let (ay, by) = (pixel(a.y), pixel(b.y));
            let (x, y) = (ax.min(bx), ay.min(by));
            fill_box(
                canvas,
                x,
                y,
                (bx - ax).abs(),
                (by - ay).abs(),
                colour(*fill),
            )
        }
        Shape::Circle {
            centre,
            radius,
            fill,
            edge,
        } => circle(canvas, layout, (*centre, *radius), *fill, *edge),
        Shape::Polygon { points, fill, edge } => {
            let corners: Vec<_> = points.iter().map(|&p| layout.to_screen(p)).collect();
            let xs: Vec<i16> = corners.iter().map(|c| coord(c.x)).collect();
            let ys: Vec<i16> = corners.iter().map(|c| coord(c.y)).collect();
            canvas.filled_polygon(&xs, &ys, colour(*fill))?;
            match edge {
                Some(edge) if width(layout, edge.width) <= 1 => {
                    canvas.aa_polygon(&xs, &ys, colour(edge.paint))
                }
                Some(edge) => {
                    let ends = xs.iter().zip(&ys).zip(xs.iter().zip(&ys).cycle().skip(1));
                    for ((&x0, &y0), (&x1, &y1)) in ends {
                        line(canvas, layout, ((x0, y0), (x1, y1)), *edge)?;
                    }
                    Ok(())
                }
                None => Ok(()),
            }
        }
        Shape::Line { from, to, stroke } => {
            let (a, b) = (layout.to_screen(*from), layout.to_screen(*to));
            let ends = ((coord(a.x), coord(a.y)), (coord(b.x), coord(b.y)));
            line(canvas, layout, ends, *stroke)
        }
        Shape::Label {
            at,
            player,
            text: words,
            paint,
        } => {
            let words = match player {
                Some(player) if words.is_empty() => roster.name(*player),
                Some(player) => format!("{} {}", roster.name(*player), printable(words)),
                None => printable(words),
            };
            label(canvas, layout, *at, &words, colour(*paint))
        }
        Shape::Clip(area) => {
            canvas.set_clip_rect(area.map(|area| clip(layout, area)));
            Ok(())
        }
    }
}

/// A circle at `centre` of `radius`: filled, ringed inside its radius, or
/// both.
fn circle(
    canvas: &mut WindowCanvas,
    layout: &Layout,
    (centre, radius): (Point, f32),
    fill: Option<Paint>,
    edge: Option<Stroke>,
) -> Result<(), String> {
    let at = layout.to_screen(centre);
    let (x, y) = (coord(at.x), coord(at.y));
    let r = coord(layout.length(radius));
    match (fill, edge) {
        (Some(fill), Some(edge)) => {
            let rim = width(layout, edge.width);
            // Never so small that the rim swallows the fill.
            let r = r.max(rim + 1);
            canvas.filled_circle(x, y, r, colour(edge.paint))?;
            canvas.filled_circle(x, y, r - rim, colour(fill))?;
            canvas.aa_circle(x, y, r, colour(edge.paint))
        }
        (Some(fill), None) => canvas.filled_circle(x, y, r.max(1), colour(fill)),
        (None, Some(edge)) => {
            for inset in 0..width(layout, edge.width) {
                canvas.aa_circle(x, y, r - inset, colour(edge.paint))?;
            }
            Ok(())
        }
        (None, None) => Ok(()),
    }
}

/// A line between two pixels: anti-aliased when a pixel wide, solid when
/// wider.
fn line(
    canvas: &mut WindowCanvas,
    layout: &Layout,
    ((x0, y0), (x1, y1)): ((i16, i16), (i16, i16)),
    stroke: Stroke,
) -> Result<(), String> {
    let paint = colour(stroke.paint);
    match u8::try_from(width(layout, stroke.width)) {
        Ok(0 | 1) => canvas.aa_line(x0, y0, x1, y1, paint),
        wide => canvas.thick_line(x0, y0, x1, y1, wide.unwrap_or(u8::MAX), paint),
    }
}

/// `words` centred on `at`, just above it, over a dark copy one font
/// pixel down-right that keeps it readable over anything of a similar
/// brightness.
fn label(
    canvas: &mut WindowCanvas,
    layout: &Layout,
    at: Point,
    words: &str,
    paint: Color,
) -> Result<(), String> {
    let at = layout.to_screen(at);
    let size = layout.text_size();
    let x = pixel(at.x) - text_width(words.len(), size) / 2;
    let y = pixel(at.y) - (GLYPH + 3) * size;
    text(canvas, x + size, y + size, size, words, LETTERBOX)?;
    text(canvas, x, y, size, words, paint)
}

/// The pixels of `area`.
fn clip(layout: &Layout, area: Area) -> Rect {
    let (corner, far) = (layout.to_screen(area.min), layout.to_screen(area.max));
    Rect::new(
        pixel(corner.x),
        pixel(corner.y),
        extent(pixel(far.x) - pixel(corner.x)),
        extent(pixel(far.y) - pixel(corner.y)),
    )
}

/// A width in whole pixels, never under one.
fn width(layout: &Layout, width: Width) -> i16 {
    let pixels = match width {
        Width::Units(units) => layout.length(units),
        Width::Lines(lines) => lines * layout.hairline(),
    };
    coord(pixels).max(1)
}

/// The colour of `paint` in this window.
fn colour(paint: Paint) -> Color {
    match paint {
        Paint::Rgba(r, g, b, a) => Color::RGBA(r, g, b, a),
        Paint::Player(player) => player_colour(player),
        Paint::PlayerDark(player) => darker(player_colour(player)),
    }
}

#[cfg(test)]
mod tests {
    use lockstep_engine::view::Paint;

    use super::*;

    #[test]
    fn a_player_paint_is_the_palette_colour_and_its_dark_shade_matches_the_games() {
        let player = PlayerId(3);
        assert_eq!(colour(Paint::Player(player)), player_colour(player));
        let c = player_colour(player);
        let dark = Paint::rgb(c.r, c.g, c.b).darker();
        assert_eq!(colour(Paint::PlayerDark(player)), colour(dark));
    }

    #[test]
    fn a_player_missing_from_the_roster_is_named_by_id() {
        let roster = Roster {
            players: vec![(PlayerId(0), "ada\n".to_owned())],
            me: None,
        };
        assert_eq!(roster.name(PlayerId(0)), "ada?");
        assert_eq!(roster.name(PlayerId(2)), "P2");
    }
}
