//! The playing field: its size, its goals and where things spawn.

use glam::Vec2;
use serde::{Deserialize, Serialize};

use super::body::{Ball, Disc};
use crate::Rng;

/// The walled rectangle everything moves in.
///
/// World units, origin at the top-left corner, x right, y down, so a
/// renderer maps it to pixels with one scale factor. The walls are the
/// rectangle's edges and have no thickness. Each side wall (x = 0 and
/// x = `width`) has a goal: an opening `goal_width` tall, centred vertically.
/// Balls pass through an opening and score; discs cannot (a goal line is a
/// wall for discs, so nobody can park inside a goal).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Arena {
    /// Width of the field, in world units.
    pub width: f32,
    /// Height of the field, in world units.
    pub height: f32,
    /// Height of each goal opening, in world units.
    pub goal_width: f32,
}

impl Arena {
    /// The one arena every game uses: 16:9 so it fills a typical window,
    /// with goals wide enough (about 8 ball diameters) that scoring happens
    /// often in a long run.
    pub const STANDARD: Arena = Arena {
        width: 1600.0,
        height: 900.0,
        goal_width: 260.0,
    };

    /// The y coordinate of the upper post of both goals.
    #[must_use]
    pub fn goal_top(&self) -> f32 {
        (self.height - self.goal_width) * 0.5
    }

    /// The y coordinate of the lower post of both goals.
    #[must_use]
    pub fn goal_bottom(&self) -> f32 {
        (self.height + self.goal_width) * 0.5
    }

    /// Whether a centre at height `y` is level with the goal openings
    /// (strictly between the posts).
    #[must_use]
    pub fn in_goal_mouth(&self, y: f32) -> bool {
        y > self.goal_top() && y < self.goal_bottom()
    }

    /// Whether a ball centred at `pos` has crossed a goal line through an
    /// opening: that is a goal.
    #[must_use]
    pub fn in_goal(&self, pos: Vec2) -> bool {
        (pos.x < 0.0 || pos.x > self.width) && self.in_goal_mouth(pos.y)
    }

    /// The four goal posts (the ends of the openings): left top, left
    /// bottom, right top, right bottom. Balls bounce off them like off a
    /// point.
    #[must_use]
    pub fn posts(&self) -> [Vec2; 4] {
        let (top, bottom) = (self.goal_top(), self.goal_bottom());
        [
            Vec2::new(0.0, top),
            Vec2::new(0.0, bottom),
            Vec2::new(self.width, top),
            Vec2::new(self.width, bottom),
        ]
    }

    /// Where the disc of the player in roster position `slot` (of `count`)
    /// starts: even slots on the left half, odd slots on the right, spread
    /// evenly down their side. Depends only on the slot, so every peer
    /// agrees without communicating.
    #[must_use]
    pub(crate) fn disc_spawn(&self, slot: usize, count: usize) -> Vec2 {
        let column = if slot.is_multiple_of(2) { 0.25 } else { 0.75 };
        let rows = count.div_ceil(2);
        let row = slot / 2;
        // Exact for any roster a u8 player id allows: small integers convert
        // to f32 without rounding.
        let y = self.height * (row as f32 + 1.0) / (rows as f32 + 1.0);
        Vec2::new(self.width * column, y)
    }

    /// A random position anywhere on the field, clear of the walls, for the
    /// balls at the start.
    pub(crate) fn ball_spawn(&self, rng: &mut Rng) -> Vec2 {
        let margin = Ball::RADIUS + Disc::RADIUS;
        let x = rng.range_f32(margin, self.width - margin);
        let y = rng.range_f32(margin, self.height - margin);
        Vec2::new(x, y)
    }

    /// A random position in the central band, for a ball that was just
    /// scored: far from both goals so it cannot be scored again at once.
    pub(crate) fn ball_respawn(&self, rng: &mut Rng) -> Vec2 {
        let half_band = self.width * 0.1;
        let centre = self.width * 0.5;
        let x = rng.range_f32(centre - half_band, centre + half_band);
        let y = rng.range_f32(Ball::RADIUS, self.height - Ball::RADIUS);
        Vec2::new(x, y)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn goal_opening_is_centred() {
        let arena = Arena::STANDARD;
        assert_eq!(arena.goal_top(), 320.0);
        assert_eq!(arena.goal_bottom(), 580.0);
    }

    #[test]
    fn crossing_a_side_wall_is_a_goal_only_through_the_opening() {
        let arena = Arena::STANDARD;
        assert!(arena.in_goal(Vec2::new(-1.0, 450.0)));
        assert!(arena.in_goal(Vec2::new(1601.0, 450.0)));
        assert!(!arena.in_goal(Vec2::new(-1.0, 100.0)));
        assert!(!arena.in_goal(Vec2::new(10.0, 450.0)));
    }

    #[test]
    fn four_players_start_in_distinct_quadrants() {
        let arena = Arena::STANDARD;
        let spawns: Vec<Vec2> = (0..4).map(|slot| arena.disc_spawn(slot, 4)).collect();
        assert_eq!(spawns[0], Vec2::new(400.0, 300.0));
        assert_eq!(spawns[1], Vec2::new(1200.0, 300.0));
        assert_eq!(spawns[2], Vec2::new(400.0, 600.0));
        assert_eq!(spawns[3], Vec2::new(1200.0, 600.0));
    }
}
