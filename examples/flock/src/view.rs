//! How the flock looks, as lockstep's window and page draw it: every boid
//! a small arrow along its flight, in the colour of the leader it is
//! nearest to, and every leader a disc in its player's colour. In the
//! game's own units: the 1600 by 900 field, y down.

use lockstep_engine::view::{Area, Paint, Picture, Point, Stroke, View};
use lockstep_protocol::PlayerId;

use crate::{Flock, Vec2, FIELD};

/// The sky.
const SKY: Paint = Paint::rgb(18, 24, 38);
/// A boid with no leader to follow.
const STRAY: Paint = Paint::rgb(160, 160, 170);
/// A leader's radius, units.
const LEADER_RADIUS: f32 = 18.0;
/// A boid's arrow: its length ahead of its centre, behind it, and its
/// half width.
const AHEAD: f32 = 10.0;
const BEHIND: f32 = 6.0;
const HALF_WIDTH: f32 = 5.0;

fn point(v: Vec2) -> Point {
    Point::new(v.x, v.y)
}

impl View for Flock {
    fn field(&self) -> Area {
        Area::new(Point::new(0.0, 0.0), point(FIELD))
    }

    fn view(
        previous: &Flock,
        current: &Flock,
        alpha: f32,
        me: Option<PlayerId>,
        out: &mut Picture,
    ) {
        out.rect(Point::new(0.0, 0.0), point(FIELD), SKY);
        for (i, boid) in current.boids().iter().enumerate() {
            let was = previous.boids().get(i).map_or(boid.pos, |b| b.pos);
            let at = point(was).lerp(point(boid.pos), alpha);
            let paint = current
                .nearest_leader(boid.pos)
                .map_or(STRAY, |l| Paint::Player(current.leaders()[l].player));
            out.polygon(arrow(at, boid.vel), paint, None);
        }
        for leader in current.leaders() {
            let was = previous
                .leaders()
                .iter()
                .find(|l| l.player == leader.player)
                .map_or(leader.pos, |l| l.pos);
            let at = point(was).lerp(point(leader.pos), alpha);
            let rim = if me == Some(leader.player) { 3.0 } else { 1.0 };
            let edge = Stroke::lines(Paint::PlayerDark(leader.player), rim);
            out.circle(at, LEADER_RADIUS, Paint::Player(leader.player), Some(edge));
        }
    }

    fn scores(&self) -> Vec<(PlayerId, u32)> {
        let mut scores: Vec<(PlayerId, u32)> =
            self.leaders().iter().map(|l| (l.player, 0)).collect();
        for boid in self.boids() {
            if let Some(nearest) = self.nearest_leader(boid.pos) {
                scores[nearest].1 += 1;
            }
        }
        scores
    }
}

/// A boid's arrow at `at`, pointing along `vel` (to the right when it
/// stands still).
fn arrow(at: Point, vel: Vec2) -> Vec<Point> {
    let speed = libm::sqrtf(vel.x * vel.x + vel.y * vel.y);
    let (dx, dy) = if speed > 0.0 {
        (vel.x / speed, vel.y / speed)
    } else {
        (1.0, 0.0)
    };
    vec![
        Point::new(at.x + dx * AHEAD, at.y + dy * AHEAD),
        Point::new(
            at.x - dx * BEHIND - dy * HALF_WIDTH,
            at.y - dy * BEHIND + dx * HALF_WIDTH,
        ),
        Point::new(
            at.x - dx * BEHIND + dy * HALF_WIDTH,
            at.y - dy * BEHIND - dx * HALF_WIDTH,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use lockstep_engine::view::Shape;
    use lockstep_engine::{offline, Setup};

    use super::*;
    use crate::FlockSettings;

    #[test]
    fn every_boid_is_an_arrow_and_every_leader_a_disc_and_the_scores_count_every_boid() {
        let setup = Setup {
            seed: 3,
            tick_rate: 60,
            settings: FlockSettings { boids: 20 },
            players: vec![PlayerId(0), PlayerId(1)],
        };
        let game = offline::<Flock>(&setup, 60);
        let mut out = Picture::new();
        Flock::view(&game, &game, 1.0, Some(PlayerId(1)), &mut out);
        let arrows = out
            .shapes()
            .iter()
            .filter(|s| matches!(s, Shape::Polygon { .. }))
            .count();
        let discs = out
            .shapes()
            .iter()
            .filter(|s| matches!(s, Shape::Circle { .. }))
            .count();
        assert_eq!((arrows, discs), (20, 2));
        let scores = game.scores();
        assert_eq!(scores.iter().map(|(_, n)| n).sum::<u32>(), 20);
        assert_eq!(
            scores.iter().map(|(p, _)| *p).collect::<Vec<_>>(),
            [PlayerId(0), PlayerId(1)]
        );
    }

    #[test]
    fn an_arrow_points_along_the_flight() {
        let tip = arrow(Point::new(100.0, 100.0), Vec2::new(0.0, 3.0))[0];
        assert_eq!(tip, Point::new(100.0, 110.0));
        let still = arrow(Point::new(0.0, 0.0), Vec2::new(0.0, 0.0))[0];
        assert_eq!(still, Point::new(AHEAD, 0.0));
    }
}
