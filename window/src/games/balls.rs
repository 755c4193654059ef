//! The ball game in the window: a pitch, with its floor, goal nets, walls,
//! balls and the players' discs, each named.

use glam::Vec2;
use lockstep_balls::{Arena, Ball, Disc, World};
use sdl2::gfx::primitives::DrawRenderer;
use sdl2::pixels::Color;
use sdl2::render::WindowCanvas;

use crate::draw::colour::{darker, player_colour};
use crate::draw::pixels::{coord, pixel};
use crate::draw::scene::{
    lerp, world_rect, Layout, Roster, Scene, LETTERBOX, MARGIN, WALL_THICKNESS,
};
use crate::draw::text::{text, text_width, GLYPH};

impl Scene for World {
    fn field(&self) -> Vec2 {
        let arena = self.arena();
        Vec2::new(arena.width, arena.height)
    }

    fn draw_scene(
        canvas: &mut WindowCanvas,
        layout: &Layout,
        previous: &World,
        current: &World,
        alpha: f32,
        roster: &Roster,
    ) -> Result<(), String> {
        draw_arena(canvas, layout, current.arena())?;
        for (index, ball) in current.balls().iter().enumerate() {
            let pos = ball_position(previous.balls().get(index), ball, alpha);
            draw_ball(canvas, layout, pos, ball.radius)?;
        }
        // Discs after balls: a disc shoving a ball stays whole on top
        // of it. Names after all discs, so no disc hides a
        // neighbour's name.
        for disc in current.discs() {
            let pos = disc_position(previous.discs(), disc, alpha);
            draw_disc(canvas, layout, pos, disc, roster.me == Some(disc.player))?;
        }
        for disc in current.discs() {
            let pos = disc_position(previous.discs(), disc, alpha);
            draw_name(canvas, layout, pos, disc, roster)?;
        }
        Ok(())
    }
}

/// The margin around the field, so the view reads as distinct from the bars.
const SURROUND: Color = Color::RGB(20, 22, 30);
/// The playing field: dark, so bright discs and balls stand out.
const FIELD: Color = Color::RGB(30, 36, 50);
/// Centre line and circle: visible but quieter than anything that moves.
const MARKING: Color = Color::RGB(62, 72, 96);
/// The walls.
const WALL: Color = Color::RGB(170, 178, 196);
/// Goal frames and posts.
const GOAL: Color = Color::RGB(255, 196, 40);
/// Goal interiors: the goal colour, see-through so the net reads as a space
/// a ball enters.
const GOAL_NET: Color = Color::RGBA(255, 196, 40, 90);
/// Ball fill: pale, unlike any player colour.
const BALL: Color = Color::RGB(250, 242, 205);
/// Ball outline, so touching balls stay separate.
const BALL_EDGE: Color = Color::RGB(120, 104, 60);
/// The local player's ring.
const ME_RING: Color = Color::RGB(255, 255, 255);
/// How far a goal net reaches behind its goal line, in world units.
const GOAL_DEPTH: f32 = 36.0;
/// Thickness of a goal net's frame, in world units.
const GOAL_FRAME: f32 = 3.0;
/// Radius of a goal post's knob, in world units.
const POST_RADIUS: f32 = 7.0;
/// Width of the centre line and circle, in world units: thin, they are
/// only for orientation.
const MARKING_WIDTH: f32 = 3.0;
/// Radius of the centre spot, in world units.
const CENTRE_SPOT: f32 = 6.0;
/// Radius of the centre circle, in world units.
const CENTRE_CIRCLE: f32 = 110.0;
/// A ball that moved further than this many radii in one tick was
/// respawned after a goal, not moved: it is drawn where it is now instead
/// of being smeared across the field.
const TELEPORT_RADII: f32 = 4.0;

/// Where to draw a disc this frame: between its previous and current
/// position, or at its current position if it only just joined.
fn disc_position(previous: &[Disc], disc: &Disc, alpha: f32) -> Vec2 {
    previous
        .iter()
        .find(|old| old.player == disc.player)
        .map_or(disc.pos, |old| lerp(old.pos, disc.pos, alpha))
}

/// Where to draw a ball this frame: between its previous and current
/// position, unless it respawned in between (or did not exist).
fn ball_position(previous: Option<&Ball>, ball: &Ball, alpha: f32) -> Vec2 {
    match previous {
        Some(old) => {
            let jump = TELEPORT_RADII * ball.radius;
            if (ball.pos - old.pos).length_squared() > jump * jump {
                ball.pos
            } else {
                lerp(old.pos, ball.pos, alpha)
            }
        }
        None => ball.pos,
    }
}

/// Floor, goal nets, markings, walls and posts.
fn draw_arena(canvas: &mut WindowCanvas, layout: &Layout, arena: Arena) -> Result<(), String> {
    let (w, h) = (arena.width, arena.height);
    let view = (Vec2::splat(-MARGIN), Vec2::new(w, h) + Vec2::splat(MARGIN));
    world_rect(canvas, layout, view, SURROUND)?;
    world_rect(canvas, layout, (Vec2::ZERO, Vec2::new(w, h)), FIELD)?;
    draw_markings(canvas, layout, arena)?;

    let (top, bottom) = (arena.goal_top(), arena.goal_bottom());
    let f = GOAL_FRAME;
    // Each net, then its frame: a bar along each post's side and one along
    // the back, all outside the net. `out` points away from the field.
    for (line, out) in [(0.0, -1.0), (w, 1.0)] {
        let back = line + out * GOAL_DEPTH;
        let end = back + out * f;
        let rects = [
            ((line, top), (back, bottom), GOAL_NET),
            ((line, top - f), (end, top), GOAL),
            ((line, bottom), (end, bottom + f), GOAL),
            ((back, top), (end, bottom), GOAL),
        ];
        for ((x0, y0), (x1, y1), colour) in rects {
            let corners = (Vec2::new(x0, y0), Vec2::new(x1, y1));
            world_rect(canvas, layout, corners, colour)?;
        }
    }

    // Walls, outside the field, with gaps at the goal openings.
    let t = WALL_THICKNESS;
    let walls = [
        (Vec2::new(-t, -t), Vec2::new(w + t, 0.0)),
        (Vec2::new(-t, h), Vec2::new(w + t, h + t)),
        (Vec2::new(-t, 0.0), Vec2::new(0.0, top)),
        (Vec2::new(-t, bottom), Vec2::new(0.0, h)),
        (Vec2::new(w, 0.0), Vec2::new(w + t, top)),
        (Vec2::new(w, bottom), Vec2::new(w + t, h)),
    ];
    for wall in walls {
        world_rect(canvas, layout, wall, WALL)?;
    }
    for post in arena.posts() {
        let at = layout.to_screen(post);
        let r = coord(layout.length(POST_RADIUS));
        canvas.filled_circle(coord(at.x), coord(at.y), r, GOAL)?;
    }
    Ok(())
}

/// The centre line, centre circle and centre spot.
fn draw_markings(canvas: &mut WindowCanvas, layout: &Layout, arena: Arena) -> Result<(), String> {
    let mid = layout.to_screen(Vec2::new(arena.width * 0.5, arena.height * 0.5));
    let (x, y) = (coord(mid.x), coord(mid.y));
    let line = coord(layout.length(MARKING_WIDTH)).max(1);
    let half = MARKING_WIDTH * 0.5;
    let centre_line = (
        Vec2::new(arena.width * 0.5 - half, 0.0),
        Vec2::new(arena.width * 0.5 + half, arena.height),
    );
    world_rect(canvas, layout, centre_line, MARKING)?;
    let circle = coord(layout.length(CENTRE_CIRCLE));
    for inset in 0..line {
        canvas.aa_circle(x, y, circle - inset, MARKING)?;
    }
    canvas.filled_circle(x, y, coord(layout.length(CENTRE_SPOT)), MARKING)
}

/// A pale ball with a dark rim.
fn draw_ball(
    canvas: &mut WindowCanvas,
    layout: &Layout,
    pos: Vec2,
    radius: f32,
) -> Result<(), String> {
    let at = layout.to_screen(pos);
    let (x, y) = (coord(at.x), coord(at.y));
    let r = coord(layout.length(radius)).max(2);
    let rim = ring_size(layout);
    ringed_circle(canvas, (x, y), r, BALL, (BALL_EDGE, rim))
}

/// A disc in its player's colour, ringed in white if it is the local
/// player's and in a darker shade of its colour otherwise.
fn draw_disc(
    canvas: &mut WindowCanvas,
    layout: &Layout,
    pos: Vec2,
    disc: &Disc,
    mine: bool,
) -> Result<(), String> {
    let at = layout.to_screen(pos);
    let (x, y) = (coord(at.x), coord(at.y));
    let r = coord(layout.length(disc.radius)).max(3);
    let colour = player_colour(disc.player);
    let ring = if mine {
        (ME_RING, 3 * ring_size(layout))
    } else {
        (darker(colour), 2 * ring_size(layout))
    };
    ringed_circle(canvas, (x, y), r, colour, ring)
}

/// Unit of rim width, in pixels: rims thicken with the text, so bodies
/// keep their look in a big window.
fn ring_size(layout: &Layout) -> i16 {
    i16::try_from(layout.text_size()).unwrap_or(1)
}

/// A filled circle of radius `r` with a `ring.1` pixel wide rim in
/// `ring.0`, anti-aliased on the outside. Drawn as two filled circles
/// rather than stacked outlines, which leave gaps between them.
fn ringed_circle(
    canvas: &mut WindowCanvas,
    (x, y): (i16, i16),
    r: i16,
    fill: Color,
    ring: (Color, i16),
) -> Result<(), String> {
    let (rim, width) = ring;
    canvas.filled_circle(x, y, r, rim)?;
    canvas.filled_circle(x, y, r - width, fill)?;
    canvas.aa_circle(x, y, r, rim)
}

/// The player's name, centred just above their disc.
fn draw_name(
    canvas: &mut WindowCanvas,
    layout: &Layout,
    pos: Vec2,
    disc: &Disc,
    roster: &Roster,
) -> Result<(), String> {
    let at = layout.to_screen(pos);
    let size = layout.text_size();
    let name = roster.name(disc.player);
    let x = pixel(at.x) - text_width(name.len(), size) / 2;
    let y = pixel(at.y - layout.length(disc.radius)) - (GLYPH + 3) * size;
    // A dark copy one font pixel down-right keeps the name readable over a ball
    // or a marking of similar brightness.
    text(canvas, x + size, y + size, size, &name, LETTERBOX)?;
    text(canvas, x, y, size, &name, player_colour(disc.player))
}

#[cfg(test)]
mod tests {
    use lockstep_protocol::PlayerId;

    use super::*;

    fn ball_at(x: f32, y: f32) -> Ball {
        Ball {
            pos: Vec2::new(x, y),
            vel: Vec2::ZERO,
            radius: Ball::RADIUS,
            last_touch: None,
        }
    }

    fn disc_at(player: u8, x: f32, y: f32) -> Disc {
        Disc {
            player: PlayerId(player),
            pos: Vec2::new(x, y),
            vel: Vec2::ZERO,
            radius: Disc::RADIUS,
        }
    }

    #[test]
    fn balls_are_drawn_between_ticks() {
        let pos = ball_position(Some(&ball_at(100.0, 100.0)), &ball_at(110.0, 90.0), 0.5);
        assert_eq!(pos, Vec2::new(105.0, 95.0));
    }

    #[test]
    fn a_respawned_ball_is_drawn_where_it_is_not_smeared() {
        let pos = ball_position(Some(&ball_at(-5.0, 450.0)), &ball_at(800.0, 300.0), 0.5);
        assert_eq!(pos, Vec2::new(800.0, 300.0));
    }

    #[test]
    fn discs_are_matched_by_player_not_by_index() {
        let previous = [disc_at(0, 0.0, 0.0), disc_at(2, 100.0, 100.0)];
        let pos = disc_position(&previous, &disc_at(2, 200.0, 100.0), 0.25);
        assert_eq!(pos, Vec2::new(125.0, 100.0));
    }

    #[test]
    fn a_disc_that_just_joined_is_drawn_where_it_is() {
        let pos = disc_position(&[disc_at(0, 0.0, 0.0)], &disc_at(1, 50.0, 60.0), 0.5);
        assert_eq!(pos, Vec2::new(50.0, 60.0));
    }
}
