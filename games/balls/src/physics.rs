//! Motion and collisions: integration, contacts between bodies, walls.
//!
//! Semi-implicit Euler (velocity first, then position) with a fixed step,
//! then one pass of contact resolution in a fixed order: disc-disc pairs,
//! disc-ball pairs, ball-ball pairs, each in index order, then walls, which
//! come last so nothing ends a step outside the arena. Each contact is
//! resolved fully before the next one is looked at (sequential impulses), so
//! the order above is part of the result and must never change silently.

use glam::Vec2;
use lockstep_engine::trace::trace;
use lockstep_protocol::Input;

use super::arena::Arena;
use super::body::{Ball, Disc};
use super::steering::Steering;

/// Disc acceleration at full input, in units/s². With [`DISC_DRAG`] this
/// gives a cruising speed of 500 units/s (a third of the arena per second),
/// reached in well under a second, so steering feels immediate.
const DISC_ACCEL: f32 = 2_000.0;
/// BOOST multiplies acceleration, so a boosting disc also cruises twice as
/// fast (capped by [`DISC_MAX_SPEED`]): enough to smash a ball across the
/// arena.
const BOOST_FACTOR: f32 = 2.0;
/// Disc speed cap, in units/s. Only boosting discs reach it.
const DISC_MAX_SPEED: f32 = 800.0;
/// Linear drag on discs, per second: a released disc stops within about a
/// second instead of sliding into a wall.
const DISC_DRAG: f32 = 4.0;

/// Linear drag on balls, per second. Low so balls keep rolling for many
/// seconds after a hit: more collisions, and any divergence spreads fast.
const BALL_DRAG: f32 = 0.1;
/// Ball speed cap, in units/s. Two balls meeting head-on at this speed
/// close 30 units per step at 60 Hz, less than the 40 between their centres
/// at contact, so they cannot pass through each other.
const BALL_MAX_SPEED: f32 = 900.0;

/// Inverse mass (1 / mass) of a disc. A disc weighs four balls, so it
/// pushes balls around but a crowd of balls still slows it down.
const DISC_INV_MASS: f32 = 0.25;
/// Inverse mass of a ball, the unit of mass.
const BALL_INV_MASS: f32 = 1.0;

/// Restitution (bounciness) between balls: lively, so balls keep bouncing
/// around and collisions stay frequent.
const BALL_BALL_RESTITUTION: f32 = 0.95;
/// Restitution between a disc and a ball: a hit sends the ball off briskly.
const DISC_BALL_RESTITUTION: f32 = 0.9;
/// Restitution between discs: damped, so players who bump keep control.
const DISC_DISC_RESTITUTION: f32 = 0.6;
/// Restitution of walls and posts for balls: most of the speed survives.
const BALL_WALL_RESTITUTION: f32 = 0.9;
/// Restitution of walls for discs: low, so a disc steered into a wall
/// stays there instead of being thrown back.
const DISC_WALL_RESTITUTION: f32 = 0.3;

/// Below this centre distance two bodies count as coincident and are pushed
/// apart along +x: coincident centres have no direction between them, and
/// 0 / 0 would be NaN, whose bit patterns differ between CPUs.
const MIN_NORMAL_LENGTH: f32 = 1e-4;

/// Applies one tick of input to a disc and moves it.
pub(crate) fn drive_disc(disc: &mut Disc, input: Input, dt: f32) {
    let steering = Steering::from_input(input);
    let accel = if steering.boost {
        DISC_ACCEL * BOOST_FACTOR
    } else {
        DISC_ACCEL
    };
    disc.vel += steering.direction * (accel * dt);
    disc.vel *= drag_factor(DISC_DRAG, dt);
    disc.vel = clamp_speed(disc.vel, DISC_MAX_SPEED);
    disc.pos += disc.vel * dt;
}

/// Moves a ball one tick.
pub(crate) fn roll_ball(ball: &mut Ball, dt: f32) {
    ball.vel *= drag_factor(BALL_DRAG, dt);
    ball.vel = clamp_speed(ball.vel, BALL_MAX_SPEED);
    ball.pos += ball.vel * dt;
}

/// Velocity multiplier for linear drag over one step: `1 - drag * dt`, but
/// never negative, so a very long step stops a body instead of reversing it.
fn drag_factor(drag: f32, dt: f32) -> f32 {
    let loss = drag * dt;
    if loss < 1.0 {
        1.0 - loss
    } else {
        0.0
    }
}

/// `vel` scaled down to at most `max` long. Written out instead of glam's
/// `clamp_length_max` so the exact operations are visible here.
fn clamp_speed(vel: Vec2, max: f32) -> Vec2 {
    let speed_squared = vel.length_squared();
    if speed_squared > max * max {
        // speed_squared > 0 here, so the division is safe.
        vel * (max / trace("clamp.speed", speed_squared.sqrt()))
    } else {
        vel
    }
}

/// One side of a contact: the parts of a disc or ball the solver changes.
struct Body<'a> {
    pos: &'a mut Vec2,
    vel: &'a mut Vec2,
    radius: f32,
    inv_mass: f32,
}

impl<'a> Body<'a> {
    fn disc(disc: &'a mut Disc) -> Self {
        Body {
            pos: &mut disc.pos,
            vel: &mut disc.vel,
            radius: disc.radius,
            inv_mass: DISC_INV_MASS,
        }
    }

    fn ball(ball: &'a mut Ball) -> Self {
        Body {
            pos: &mut ball.pos,
            vel: &mut ball.vel,
            radius: ball.radius,
            inv_mass: BALL_INV_MASS,
        }
    }
}

/// Resolves every overlapping pair once, in the order described in the
/// module docs, and returns how many pairs were moving into each other
/// (the collisions that exchanged momentum).
pub(crate) fn resolve_contacts(discs: &mut [Disc], balls: &mut [Ball]) -> u64 {
    let mut collisions = 0;
    for i in 0..discs.len() {
        let (head, tail) = discs.split_at_mut(i + 1);
        let a = &mut head[i];
        for b in tail {
            collisions += u64::from(collide(Body::disc(a), Body::disc(b), DISC_DISC_RESTITUTION));
        }
    }
    for disc in discs.iter_mut() {
        for ball in balls.iter_mut() {
            if collide(Body::disc(disc), Body::ball(ball), DISC_BALL_RESTITUTION) {
                ball.last_touch = Some(disc.player);
                collisions += 1;
            }
        }
    }
    for i in 0..balls.len() {
        let (head, tail) = balls.split_at_mut(i + 1);
        let a = &mut head[i];
        for b in tail {
            collisions += u64::from(collide(Body::ball(a), Body::ball(b), BALL_BALL_RESTITUTION));
        }
    }
    collisions
}

/// If `a` and `b` overlap, pushes them apart (in inverse proportion to their
/// mass) and, if they are moving into each other, applies the impulse that
/// bounces them with `restitution`. Returns whether an impulse was applied.
fn collide(a: Body<'_>, b: Body<'_>, restitution: f32) -> bool {
    let offset = *b.pos - *a.pos;
    let reach = a.radius + b.radius;
    let distance_squared = offset.length_squared();
    if distance_squared >= reach * reach {
        return false;
    }
    let distance = trace("contact.distance", distance_squared.sqrt());
    let normal = if distance > MIN_NORMAL_LENGTH {
        offset / distance
    } else {
        Vec2::X
    };
    let inv_mass_sum = a.inv_mass + b.inv_mass;
    let push = normal * ((reach - distance) / inv_mass_sum);
    *a.pos -= push * a.inv_mass;
    *b.pos += push * b.inv_mass;

    let closing = (*b.vel - *a.vel).dot(normal);
    if closing >= 0.0 {
        return false;
    }
    let impulse = normal * (-(1.0 + restitution) * closing / inv_mass_sum);
    // Traced where it is computed and used as traced, so that a fault
    // injected at it (--inject-desync-value contact.impulse) takes effect.
    let impulse = Vec2::from_array(trace("contact.impulse", impulse.to_array()));
    *a.vel -= impulse * a.inv_mass;
    *b.vel += impulse * b.inv_mass;
    true
}

/// Keeps a disc inside the arena. Goal openings are closed to discs.
pub(crate) fn confine_disc(disc: &mut Disc, arena: &Arena) {
    let r = disc.radius;
    bounce_low(&mut disc.pos.x, &mut disc.vel.x, r, DISC_WALL_RESTITUTION);
    bounce_high(
        &mut disc.pos.x,
        &mut disc.vel.x,
        arena.width - r,
        DISC_WALL_RESTITUTION,
    );
    bounce_low(&mut disc.pos.y, &mut disc.vel.y, r, DISC_WALL_RESTITUTION);
    bounce_high(
        &mut disc.pos.y,
        &mut disc.vel.y,
        arena.height - r,
        DISC_WALL_RESTITUTION,
    );
}

/// Bounces a ball off the walls and goal posts. A ball level with a goal
/// opening is not stopped by the side wall: it may cross the goal line,
/// which the caller turns into a goal.
///
/// Afterwards the ball's centre is inside the field, or strictly between
/// the posts of a goal (possibly past its line): the side walls are applied
/// only outside the openings, and a post pushes a ball away along the line
/// from the post, which never crosses the post's own height.
pub(crate) fn bounce_ball_off_walls(ball: &mut Ball, arena: &Arena) {
    let r = ball.radius;
    bounce_low(&mut ball.pos.y, &mut ball.vel.y, r, BALL_WALL_RESTITUTION);
    bounce_high(
        &mut ball.pos.y,
        &mut ball.vel.y,
        arena.height - r,
        BALL_WALL_RESTITUTION,
    );
    if !arena.in_goal_mouth(ball.pos.y) {
        bounce_low(&mut ball.pos.x, &mut ball.vel.x, r, BALL_WALL_RESTITUTION);
        bounce_high(
            &mut ball.pos.x,
            &mut ball.vel.x,
            arena.width - r,
            BALL_WALL_RESTITUTION,
        );
    }
    for post in arena.posts() {
        bounce_off_point(ball, post);
    }
}

/// One coordinate against a wall that keeps it at or above `limit`.
fn bounce_low(pos: &mut f32, vel: &mut f32, limit: f32, restitution: f32) {
    if *pos < limit {
        *pos = limit;
        if *vel < 0.0 {
            *vel = -*vel * restitution;
        }
    }
}

/// One coordinate against a wall that keeps it at or below `limit`.
fn bounce_high(pos: &mut f32, vel: &mut f32, limit: f32, restitution: f32) {
    if *pos > limit {
        *pos = limit;
        if *vel > 0.0 {
            *vel = -*vel * restitution;
        }
    }
}

/// A ball against a fixed point (a goal post).
fn bounce_off_point(ball: &mut Ball, point: Vec2) {
    let offset = ball.pos - point;
    let distance_squared = offset.length_squared();
    if distance_squared >= ball.radius * ball.radius {
        return;
    }
    let distance = distance_squared.sqrt();
    if distance <= MIN_NORMAL_LENGTH {
        // No direction to push along. Unreachable after the side walls (a
        // centre level with a post is outside the opening, so it was pushed
        // to x = r), but a division by zero must never be one refactor away.
        return;
    }
    let normal = offset / distance;
    ball.pos = point + normal * ball.radius;
    let closing = ball.vel.dot(normal);
    if closing < 0.0 {
        ball.vel -= normal * ((1.0 + BALL_WALL_RESTITUTION) * closing);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockstep_protocol::{Buttons, PlayerId};

    fn ball_at(x: f32, y: f32, vx: f32, vy: f32) -> Ball {
        Ball {
            pos: Vec2::new(x, y),
            vel: Vec2::new(vx, vy),
            radius: Ball::RADIUS,
            last_touch: None,
        }
    }

    #[test]
    fn drag_never_reverses_velocity() {
        assert_eq!(drag_factor(4.0, 1.0), 0.0);
        assert_eq!(drag_factor(4.0, 0.125), 0.5);
    }

    #[test]
    fn speed_is_clamped_to_the_cap() {
        let clamped = clamp_speed(Vec2::new(3_000.0, 4_000.0), 500.0);
        assert_eq!(clamped, Vec2::new(300.0, 400.0));
        assert_eq!(clamp_speed(Vec2::ZERO, 500.0), Vec2::ZERO);
    }

    #[test]
    fn boost_accelerates_harder() {
        let mut plain = Disc {
            player: PlayerId(0),
            pos: Vec2::ZERO,
            vel: Vec2::ZERO,
            radius: Disc::RADIUS,
        };
        let mut boosted = plain;
        drive_disc(
            &mut plain,
            Input {
                buttons: Buttons::RIGHT,
                axes: None,
            },
            1.0 / 60.0,
        );
        drive_disc(
            &mut boosted,
            Input {
                buttons: Buttons::RIGHT.with(Buttons::BOOST),
                axes: None,
            },
            1.0 / 60.0,
        );
        assert!(boosted.vel.x > plain.vel.x && plain.vel.x > 0.0);
    }

    #[test]
    fn perfectly_elastic_head_on_equal_balls_swap_velocities() {
        let mut a = ball_at(100.0, 100.0, 100.0, 0.0);
        let mut b = ball_at(130.0, 100.0, -100.0, 0.0);
        assert!(collide(Body::ball(&mut a), Body::ball(&mut b), 1.0));
        assert_eq!(a.vel, Vec2::new(-100.0, 0.0));
        assert_eq!(b.vel, Vec2::new(100.0, 0.0));
        assert_eq!(b.pos.x - a.pos.x, 2.0 * Ball::RADIUS);
    }

    #[test]
    fn separating_bodies_are_pushed_apart_without_impulse() {
        let mut a = ball_at(100.0, 100.0, -10.0, 0.0);
        let mut b = ball_at(120.0, 100.0, 10.0, 0.0);
        assert!(!collide(Body::ball(&mut a), Body::ball(&mut b), 1.0));
        assert_eq!(a.vel.x, -10.0);
        assert_eq!(b.pos.x - a.pos.x, 2.0 * Ball::RADIUS);
    }

    #[test]
    fn coincident_bodies_separate_along_x() {
        let mut a = ball_at(100.0, 100.0, 0.0, 0.0);
        let mut b = a;
        collide(Body::ball(&mut a), Body::ball(&mut b), 1.0);
        assert!(a.pos.is_finite() && b.pos.is_finite());
        assert!(b.pos.x > a.pos.x);
    }

    #[test]
    fn disc_touch_marks_the_ball() {
        let mut discs = [Disc {
            player: PlayerId(3),
            pos: Vec2::new(100.0, 100.0),
            vel: Vec2::new(50.0, 0.0),
            radius: Disc::RADIUS,
        }];
        let mut balls = [ball_at(140.0, 100.0, 0.0, 0.0)];
        assert_eq!(resolve_contacts(&mut discs, &mut balls), 1);
        assert_eq!(balls[0].last_touch, Some(PlayerId(3)));
        assert!(balls[0].vel.x > 0.0);
    }

    #[test]
    fn ball_bounces_off_a_side_wall_outside_the_goal() {
        let arena = Arena::STANDARD;
        let mut ball = ball_at(-5.0, 100.0, -200.0, 0.0);
        bounce_ball_off_walls(&mut ball, &arena);
        assert_eq!(ball.pos.x, Ball::RADIUS);
        assert_eq!(ball.vel.x, 180.0);
    }

    #[test]
    fn ball_passes_the_side_wall_through_the_goal_opening() {
        let arena = Arena::STANDARD;
        let mut ball = ball_at(-5.0, 450.0, -200.0, 0.0);
        bounce_ball_off_walls(&mut ball, &arena);
        assert!(arena.in_goal(ball.pos));
    }

    #[test]
    fn ball_bounces_off_a_goal_post() {
        let arena = Arena::STANDARD;
        let post = arena.posts()[0];
        let mut ball = ball_at(10.0, post.y + 5.0, -100.0, 0.0);
        bounce_ball_off_walls(&mut ball, &arena);
        assert!((ball.pos - post).length() >= Ball::RADIUS - 1e-3);
        assert!(ball.vel.x > 0.0);
    }

    #[test]
    fn discs_cannot_enter_a_goal() {
        let arena = Arena::STANDARD;
        let mut disc = Disc {
            player: PlayerId(0),
            pos: Vec2::new(-20.0, 450.0),
            vel: Vec2::new(-300.0, 0.0),
            radius: Disc::RADIUS,
        };
        confine_disc(&mut disc, &arena);
        assert_eq!(disc.pos.x, Disc::RADIUS);
        assert!(disc.vel.x > 0.0);
    }
}
