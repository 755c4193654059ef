//! How the ball game looks, as the window and the page draw it: a pitch
//! with its floor, goal nets, markings, walls and posts, the balls, and
//! the players' discs, each named. In the arena's own units, which are
//! already y down.
//!
//! Bodies are drawn between the last two ticks, except where that would
//! lie: a ball that respawned after a goal is drawn where it is now, not
//! smeared across the field, and a disc that just joined where it is.

use lockstep_engine::view::{Area, Paint, Picture, Point, Stroke, View, Width};
use lockstep_protocol::PlayerId;

use crate::{Arena, Ball, Disc, World};

/// The margin around the field, so the pitch reads as distinct from the
/// letterbox.
const SURROUND: Paint = Paint::rgb(20, 22, 30);
/// The playing field: dark, so bright discs and balls stand out.
const FIELD: Paint = Paint::rgb(30, 36, 50);
/// Centre line and circle: visible but quieter than anything that moves.
const MARKING: Paint = Paint::rgb(62, 72, 96);
/// The walls.
const WALL: Paint = Paint::rgb(170, 178, 196);
/// Goal frames and posts.
const GOAL: Paint = Paint::rgb(255, 196, 40);
/// Goal interiors: the goal colour, see-through so the net reads as a
/// space a ball enters.
const GOAL_NET: Paint = Paint::Rgba(255, 196, 40, 90);
/// Ball fill: pale, unlike any player colour.
const BALL: Paint = Paint::rgb(250, 242, 205);
/// Ball rim, so touching balls stay separate.
const BALL_EDGE: Paint = Paint::rgb(120, 104, 60);
/// The local player's ring.
const ME_RING: Paint = Paint::rgb(255, 255, 255);
/// Drawn wall thickness. Walls have no thickness in the simulation, so
/// they are drawn entirely outside the field: a ball resting against a
/// wall touches the drawn wall without overlapping it.
const WALL_THICKNESS: f32 = 8.0;
/// How far a goal net reaches behind its goal line.
const GOAL_DEPTH: f32 = 36.0;
/// Thickness of a goal net's frame.
const GOAL_FRAME: f32 = 3.0;
/// Radius of a goal post's knob.
const POST_RADIUS: f32 = 7.0;
/// Width of the centre line and circle: thin, they are only for
/// orientation.
const MARKING_WIDTH: f32 = 3.0;
/// Radius of the centre spot.
const CENTRE_SPOT: f32 = 6.0;
/// Radius of the centre circle.
const CENTRE_CIRCLE: f32 = 110.0;
/// Rims, in hairlines: a ball's, another player's disc's, and one's own
/// disc's, the widest so it is found at a glance.
const BALL_RIM: f32 = 1.0;
/// See [`BALL_RIM`].
const DISC_RIM: f32 = 2.0;
/// See [`BALL_RIM`].
const MY_RIM: f32 = 3.0;
/// A ball that moved further than this many radii in one tick was
/// respawned after a goal, not moved: it is drawn where it is now instead
/// of being smeared across the field.
const TELEPORT_RADII: f32 = 4.0;

impl View for World {
    fn field(&self) -> Area {
        let arena = self.arena();
        Area::new(Point::new(0.0, 0.0), Point::new(arena.width, arena.height))
    }

    fn view(
        previous: &World,
        current: &World,
        alpha: f32,
        me: Option<PlayerId>,
        out: &mut Picture,
    ) {
        arena(current.arena(), out);
        for (index, ball) in current.balls().iter().enumerate() {
            let at = ball_position(previous.balls().get(index), ball, alpha);
            out.circle(
                at,
                ball.radius,
                BALL,
                Some(Stroke::lines(BALL_EDGE, BALL_RIM)),
            );
        }
        // Discs after balls: a disc shoving a ball stays whole on top of
        // it. Names after all discs, so no disc hides a neighbour's name.
        for disc in current.discs() {
            let at = disc_position(previous.discs(), disc, alpha);
            let rim = if me == Some(disc.player) {
                Stroke::lines(ME_RING, MY_RIM)
            } else {
                Stroke::lines(Paint::PlayerDark(disc.player), DISC_RIM)
            };
            out.circle(at, disc.radius, Paint::Player(disc.player), Some(rim));
        }
        for disc in current.discs() {
            let at = disc_position(previous.discs(), disc, alpha);
            out.name(Point::new(at.x, at.y - disc.radius), disc.player, "");
        }
    }

    fn scores(&self) -> Vec<(PlayerId, u32)> {
        World::scores(self)
            .iter()
            .map(|score| (score.player, score.goals))
            .collect()
    }
}

/// A glam vector as a point of the picture (the arena's units and axes
/// are the picture's).
fn point(v: glam::Vec2) -> Point {
    Point::new(v.x, v.y)
}

/// Where to draw a disc this frame: between its previous and current
/// position, or at its current position if it only just joined.
fn disc_position(previous: &[Disc], disc: &Disc, alpha: f32) -> Point {
    previous
        .iter()
        .find(|old| old.player == disc.player)
        .map_or(point(disc.pos), |old| {
            point(old.pos).lerp(point(disc.pos), alpha)
        })
}

/// Where to draw a ball this frame: between its previous and current
/// position, unless it respawned in between (or did not exist).
fn ball_position(previous: Option<&Ball>, ball: &Ball, alpha: f32) -> Point {
    match previous {
        Some(old) => {
            let jump = TELEPORT_RADII * ball.radius;
            if (ball.pos - old.pos).length_squared() > jump * jump {
                point(ball.pos)
            } else {
                point(old.pos).lerp(point(ball.pos), alpha)
            }
        }
        None => point(ball.pos),
    }
}

/// Surround, floor, markings, goal nets, walls and posts.
fn arena(arena: Arena, out: &mut Picture) {
    let (w, h) = (arena.width, arena.height);
    let field = Area::new(Point::new(0.0, 0.0), Point::new(w, h));
    let margin = field.margin();
    out.rect(
        Point::new(-margin, -margin),
        Point::new(w + margin, h + margin),
        SURROUND,
    );
    out.rect(field.min, field.max, FIELD);
    markings(field, out);

    let (top, bottom) = (arena.goal_top(), arena.goal_bottom());
    let f = GOAL_FRAME;
    // Each net, then its frame: a bar along each post's side and one
    // along the back, all outside the net. `out_x` points away from the
    // field.
    for (line, out_x) in [(0.0, -1.0), (w, 1.0)] {
        let back = line + out_x * GOAL_DEPTH;
        let end = back + out_x * f;
        let rects = [
            ((line, top), (back, bottom), GOAL_NET),
            ((line, top - f), (end, top), GOAL),
            ((line, bottom), (end, bottom + f), GOAL),
            ((back, top), (end, bottom), GOAL),
        ];
        for ((x0, y0), (x1, y1), paint) in rects {
            out.rect(Point::new(x0, y0), Point::new(x1, y1), paint);
        }
    }

    // Walls, outside the field, with gaps at the goal openings.
    let t = WALL_THICKNESS;
    let walls = [
        ((-t, -t), (w + t, 0.0)),
        ((-t, h), (w + t, h + t)),
        ((-t, 0.0), (0.0, top)),
        ((-t, bottom), (0.0, h)),
        ((w, 0.0), (w + t, top)),
        ((w, bottom), (w + t, h)),
    ];
    for ((x0, y0), (x1, y1)) in walls {
        out.rect(Point::new(x0, y0), Point::new(x1, y1), WALL);
    }
    for post in arena.posts() {
        out.circle(point(post), POST_RADIUS, GOAL, None);
    }
}

/// The centre line, centre circle and centre spot.
fn markings(field: Area, out: &mut Picture) {
    let mid = field.centre();
    let half = MARKING_WIDTH * 0.5;
    out.rect(
        Point::new(mid.x - half, field.min.y),
        Point::new(mid.x + half, field.max.y),
        MARKING,
    );
    let circle = Stroke {
        paint: MARKING,
        width: Width::Units(MARKING_WIDTH),
    };
    out.ring(mid, CENTRE_CIRCLE, circle);
    out.circle(mid, CENTRE_SPOT, MARKING, None);
}

#[cfg(test)]
mod tests {
    use glam::Vec2;
    use lockstep_engine::view::Shape;

    use super::*;
    use crate::WorldConfig;

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
        let at = ball_position(Some(&ball_at(100.0, 100.0)), &ball_at(110.0, 90.0), 0.5);
        assert_eq!(at, Point::new(105.0, 95.0));
    }

    #[test]
    fn a_respawned_ball_is_drawn_where_it_is_not_smeared() {
        let at = ball_position(Some(&ball_at(-5.0, 450.0)), &ball_at(800.0, 300.0), 0.5);
        assert_eq!(at, Point::new(800.0, 300.0));
    }

    #[test]
    fn discs_are_matched_by_player_not_by_index() {
        let previous = [disc_at(0, 0.0, 0.0), disc_at(2, 100.0, 100.0)];
        let at = disc_position(&previous, &disc_at(2, 200.0, 100.0), 0.25);
        assert_eq!(at, Point::new(125.0, 100.0));
    }

    #[test]
    fn a_disc_that_just_joined_is_drawn_where_it_is() {
        let at = disc_position(&[disc_at(0, 0.0, 0.0)], &disc_at(1, 50.0, 60.0), 0.5);
        assert_eq!(at, Point::new(50.0, 60.0));
    }

    /// The picture of a fresh three-player world, seen by `me`.
    fn picture(me: Option<PlayerId>) -> (World, Picture) {
        let ids = [PlayerId(0), PlayerId(1), PlayerId(4)];
        let world = World::new(WorldConfig::new(3, 60), &ids);
        let mut out = Picture::new();
        World::view(&world, &world, 1.0, me, &mut out);
        (world, out)
    }

    #[test]
    fn the_picture_names_every_player_just_above_their_disc() {
        let (world, out) = picture(None);
        let names: Vec<(PlayerId, Point)> = out
            .shapes()
            .iter()
            .filter_map(|shape| match shape {
                Shape::Label {
                    at,
                    player: Some(player),
                    text,
                    ..
                } if text.is_empty() => Some((*player, *at)),
                _ => None,
            })
            .collect();
        let expected: Vec<(PlayerId, Point)> = world
            .discs()
            .iter()
            .map(|d| (d.player, Point::new(d.pos.x, d.pos.y - d.radius)))
            .collect();
        assert_eq!(names, expected);
    }

    #[test]
    fn only_my_disc_has_the_white_ring() {
        let (_, out) = picture(Some(PlayerId(1)));
        let rims: Vec<(Paint, Option<Stroke>)> = out
            .shapes()
            .iter()
            .filter_map(|shape| match shape {
                Shape::Circle {
                    fill: Some(fill @ Paint::Player(_)),
                    edge,
                    ..
                } => Some((*fill, *edge)),
                _ => None,
            })
            .collect();
        assert_eq!(
            rims,
            [
                (
                    Paint::Player(PlayerId(0)),
                    Some(Stroke::lines(Paint::PlayerDark(PlayerId(0)), DISC_RIM))
                ),
                (
                    Paint::Player(PlayerId(1)),
                    Some(Stroke::lines(ME_RING, MY_RIM))
                ),
                (
                    Paint::Player(PlayerId(4)),
                    Some(Stroke::lines(Paint::PlayerDark(PlayerId(4)), DISC_RIM))
                ),
            ]
        );
    }

    #[test]
    fn the_pitch_fills_the_margin_every_renderer_shows() {
        let (world, out) = picture(None);
        let field = world.field();
        let margin = field.margin();
        assert_eq!(
            out.shapes()[0],
            Shape::Rect {
                from: Point::new(-margin, -margin),
                to: Point::new(field.max.x + margin, field.max.y + margin),
                fill: SURROUND,
            }
        );
    }

    #[test]
    fn the_scores_are_the_goals_of_every_player() {
        let (world, _) = picture(None);
        let scores = View::scores(&world);
        assert_eq!(
            scores,
            [(PlayerId(0), 0), (PlayerId(1), 0), (PlayerId(4), 0)]
        );
    }
}
