//! Topple in the window: the platform over the drop, every crate and ball
//! turned as rapier turns it, the rams in their players' colours with
//! their names, each body drawn between its last two ticks.

use glam::Vec2;
use lockstep_protocol::PlayerId;
use lockstep_topple::{
    BodyShape, BodyView, Physics, BALL_RADIUS, CRATE_HALF, PLATFORM_HALF_WIDTH, RAM_RADIUS,
};
use sdl2::gfx::primitives::DrawRenderer;
use sdl2::pixels::Color;
use sdl2::rect::Rect;
use sdl2::render::WindowCanvas;

use crate::draw::colour::{darker, player_colour};
use crate::draw::pixels::{coord, extent, pixel};
use crate::draw::scene::{lerp, world_rect, Layout, Roster, Scene};
use crate::draw::text::{text, text_width, GLYPH};

/// The part of the world shown, in metres: x right, y up.
const LEFT: f32 = -24.0;
const TOP: f32 = 17.0;
/// 16:9, like the other games: 48 m by 27 m.
const VIEW_METRES: Vec2 = Vec2::new(48.0, 27.0);
/// The view's units per metre. The field is 1600 by 900 units like the
/// other games', so the window's margin (`MARGIN`, in field units) and
/// its overlays fit Topple as they fit them; in metres the margin would
/// be wider than the field.
const UNITS: f32 = 1600.0 / 48.0;
/// The field, in the view's units.
const VIEW: Vec2 = Vec2::new(VIEW_METRES.x * UNITS, VIEW_METRES.y * UNITS);
/// The sky, and the pit below the platform.
const SKY: Color = Color::RGB(30, 36, 50);
const PIT: Color = Color::RGB(18, 20, 28);
const PLATFORM: Color = Color::RGB(96, 104, 120);
const CRATE: Color = Color::RGB(196, 150, 92);
const BALL: Color = Color::RGB(150, 190, 210);

/// A world point in the view's units (from the top-left corner, y down).
fn view(x: f32, y: f32) -> Vec2 {
    Vec2::new(x - LEFT, TOP - y) * UNITS
}

/// A length in metres in pixels.
fn metres(layout: &Layout, length: f32) -> f32 {
    layout.length(length * UNITS)
}

impl Scene for Physics {
    fn field(&self) -> Vec2 {
        VIEW
    }

    fn draw_scene(
        canvas: &mut WindowCanvas,
        layout: &Layout,
        previous: &Physics,
        current: &Physics,
        alpha: f32,
        roster: &Roster,
    ) -> Result<(), String> {
        world_rect(canvas, layout, (Vec2::ZERO, view(-LEFT, 0.0)), SKY)?;
        world_rect(canvas, layout, (view(LEFT, 0.0), VIEW), PIT)?;
        world_rect(
            canvas,
            layout,
            (
                view(-PLATFORM_HALF_WIDTH, 0.0),
                view(PLATFORM_HALF_WIDTH, -1.0),
            ),
            PLATFORM,
        )?;
        // Bodies flying past the view's edges vanish there, not over the
        // letterbox.
        let (corner, far) = (layout.to_screen(Vec2::ZERO), layout.to_screen(VIEW));
        canvas.set_clip_rect(Rect::new(
            pixel(corner.x),
            pixel(corner.y),
            extent(pixel(far.x) - pixel(corner.x)),
            extent(pixel(far.y) - pixel(corner.y)),
        ));
        let rams = draw_bodies(canvas, layout, previous, current, alpha, roster);
        canvas.set_clip_rect(None);
        // Names over the rams, also past the view's edges.
        for &(player, at) in &rams? {
            let size = layout.text_size();
            let label = roster.name(player);
            let centre = layout.to_screen(view(at.x, at.y + RAM_RADIUS));
            let x = pixel(centre.x) - text_width(label.len(), size) / 2;
            let y = pixel(centre.y) - (GLYPH + 3) * size;
            text(canvas, x, y, size, &label, player_colour(player))?;
        }
        Ok(())
    }
}

/// Every crate and ball, then the rams over them; answers where each
/// ram is drawn and its player, for the names.
fn draw_bodies(
    canvas: &mut WindowCanvas,
    layout: &Layout,
    previous: &Physics,
    current: &Physics,
    alpha: f32,
    roster: &Roster,
) -> Result<Vec<(PlayerId, Vec2)>, String> {
    let before: Vec<BodyView> = previous.bodies().collect();
    let now: Vec<BodyView> = current.bodies().collect();
    let mut rams = Vec::new();
    for (slot, body) in now.iter().enumerate().skip(1) {
        if !body.enabled {
            continue;
        }
        let (at, (cos, sin)) = between(before.get(slot), body, alpha);
        match current.shape(slot) {
            BodyShape::Crate => draw_crate(canvas, layout, at, cos, sin)?,
            BodyShape::Ball => draw_ball(canvas, layout, at, cos, sin, BALL_RADIUS, BALL)?,
            BodyShape::Ram(player) => rams.push((player, at, cos, sin)),
            BodyShape::Platform => {}
        }
    }
    // Rams over the piles.
    for &(player, at, cos, sin) in &rams {
        draw_ball(
            canvas,
            layout,
            at,
            cos,
            sin,
            RAM_RADIUS,
            player_colour(player),
        )?;
        if roster.me == Some(player) {
            let centre = layout.to_screen(view(at.x, at.y));
            let r = coord(metres(layout, RAM_RADIUS + 0.25));
            canvas.aa_circle(coord(centre.x), coord(centre.y), r, Color::WHITE)?;
        }
    }
    Ok(rams
        .iter()
        .map(|&(player, at, _, _)| (player, at))
        .collect())
}

/// Where a body is drawn between ticks, and its rotation's cosine and
/// sine. A body that jumped (it fell and came back) is drawn where it is.
fn between(before: Option<&BodyView>, now: &BodyView, alpha: f32) -> (Vec2, (f32, f32)) {
    let to = Vec2::new(now.translation.x, now.translation.y);
    let Some(before) = before else {
        return (to, (now.rotation.re, now.rotation.im));
    };
    let from = Vec2::new(before.translation.x, before.translation.y);
    if from.distance_squared(to) > 4.0 {
        return (to, (now.rotation.re, now.rotation.im));
    }
    let turn = lerp(
        Vec2::new(before.rotation.re, before.rotation.im),
        Vec2::new(now.rotation.re, now.rotation.im),
        alpha,
    )
    .normalize_or(Vec2::X);
    (lerp(from, to, alpha), (turn.x, turn.y))
}

fn draw_crate(
    canvas: &mut WindowCanvas,
    layout: &Layout,
    at: Vec2,
    cos: f32,
    sin: f32,
) -> Result<(), String> {
    let corner = |sx: f32, sy: f32| {
        let (x, y) = (sx * CRATE_HALF, sy * CRATE_HALF);
        layout.to_screen(view(at.x + x * cos - y * sin, at.y + x * sin + y * cos))
    };
    let corners = [
        corner(-1.0, -1.0),
        corner(1.0, -1.0),
        corner(1.0, 1.0),
        corner(-1.0, 1.0),
    ];
    let xs = corners.map(|c| coord(c.x));
    let ys = corners.map(|c| coord(c.y));
    canvas.filled_polygon(&xs, &ys, CRATE)?;
    canvas.aa_polygon(&xs, &ys, darker(CRATE))
}

fn draw_ball(
    canvas: &mut WindowCanvas,
    layout: &Layout,
    at: Vec2,
    cos: f32,
    sin: f32,
    radius: f32,
    colour: Color,
) -> Result<(), String> {
    let centre = layout.to_screen(view(at.x, at.y));
    let (x, y) = (coord(centre.x), coord(centre.y));
    let r = coord(metres(layout, radius)).max(1);
    canvas.filled_circle(x, y, r, colour)?;
    canvas.aa_circle(x, y, r, darker(colour))?;
    // A spoke, so a rolling ball is seen to turn.
    let rim = layout.to_screen(view(at.x + radius * cos, at.y + radius * sin));
    canvas.aa_line(x, y, coord(rim.x), coord(rim.y), darker(colour))
}
