//! How Topple looks, as the window and the page draw it: the sky over the
//! platform and the pit below it, every crate and ball turned as rapier
//! turns it, and the rams in their players' colours with their names,
//! each body drawn between its last two ticks.
//!
//! The picture is in metres, like the world, but y down: the world's y is
//! up, so every y is negated here ([`at`]) and the renderers need not know.

use lockstep_engine::view::{Area, Paint, Picture, Point, Stroke, View};
use lockstep_protocol::PlayerId;

use crate::{
    BodyShape, BodyView, Physics, BALL_RADIUS, CRATE_HALF, PLATFORM_HALF_WIDTH, RAM_RADIUS,
};

/// The part of the world shown, in the picture's coordinates (metres, y
/// down): x from -24 to 24 and the world's y from 17 down to -10, 48 m by
/// 27 m, 16:9 like the other games.
const FIELD: Area = Area::new(Point::new(-24.0, -17.0), Point::new(24.0, 10.0));
/// The sky, and the pit below the platform's top.
const SKY: Paint = Paint::rgb(30, 36, 50);
/// See [`SKY`].
const PIT: Paint = Paint::rgb(18, 20, 28);
/// The platform.
const PLATFORM: Paint = Paint::rgb(96, 104, 120);
/// A crate.
const CRATE: Paint = Paint::rgb(196, 150, 92);
/// A ball.
const BALL: Paint = Paint::rgb(150, 190, 210);
/// The ring around one's own ram.
const ME_RING: Paint = Paint::rgb(255, 255, 255);
/// How far outside one's own ram its ring is, in metres.
const ME_RING_GAP: f32 = 0.25;
/// The platform's thickness, in metres (its collider is 1 m tall, top at
/// y = 0).
const PLATFORM_THICKNESS: f32 = 1.0;
/// A body that moved further than this in one tick, in metres, fell and
/// was put back: it is drawn where it is, not smeared across the view.
const JUMP: f32 = 2.0;

/// A world position (metres, y up) in the picture (y down).
fn at(x: f32, y: f32) -> Point {
    Point::new(x, -y)
}

impl View for Physics {
    fn field(&self) -> Area {
        FIELD
    }

    fn view(
        previous: &Physics,
        current: &Physics,
        alpha: f32,
        me: Option<PlayerId>,
        out: &mut Picture,
    ) {
        let (min, max) = (FIELD.min, FIELD.max);
        out.rect(min, Point::new(max.x, 0.0), SKY);
        out.rect(Point::new(min.x, 0.0), max, PIT);
        out.rect(
            at(-PLATFORM_HALF_WIDTH, 0.0),
            at(PLATFORM_HALF_WIDTH, -PLATFORM_THICKNESS),
            PLATFORM,
        );
        // Bodies flying past the view's edges vanish there, not over the
        // letterbox.
        out.clip(Some(FIELD));
        let before: Vec<BodyView> = previous.bodies().collect();
        let mut rams = Vec::new();
        for (slot, body) in current.bodies().enumerate() {
            if !body.enabled {
                continue;
            }
            let (centre, turn) = between(before.get(slot), &body, alpha);
            match current.shape(slot) {
                BodyShape::Crate => crate_shape(centre, turn, out),
                BodyShape::Ball => spoked(centre, turn, BALL_RADIUS, BALL, out),
                BodyShape::Ram(player) => rams.push((player, centre, turn)),
                // Fixed: drawn with the sky and the pit.
                BodyShape::Platform => {}
            }
        }
        // Rams over the piles.
        for &(player, centre, turn) in &rams {
            spoked(centre, turn, RAM_RADIUS, Paint::Player(player), out);
            if me == Some(player) {
                let ring = Stroke::lines(ME_RING, 1.0);
                out.ring(at(centre.0, centre.1), RAM_RADIUS + ME_RING_GAP, ring);
            }
        }
        // Names over the rams, also past the view's edges.
        out.clip(None);
        for &(player, (x, y), _) in &rams {
            out.name(at(x, y + RAM_RADIUS), player, "");
        }
    }

    fn scores(&self) -> Vec<(PlayerId, u32)> {
        self.rams().iter().map(|r| (r.player, r.score)).collect()
    }
}

/// Where a body is drawn between ticks (world metres, y up), and its
/// rotation's cosine and sine: the position moved by `alpha`, the
/// rotation turned by `alpha` and made unit again. A body that jumped
/// (it fell and came back), or that was not there before, is drawn where
/// it is.
fn between(before: Option<&BodyView>, now: &BodyView, alpha: f32) -> ((f32, f32), (f32, f32)) {
    let (t, r) = (now.translation, now.rotation);
    let here = ((t.x, t.y), (r.re, r.im));
    let Some(old) = before else {
        return here;
    };
    let (dx, dy) = (t.x - old.translation.x, t.y - old.translation.y);
    if dx * dx + dy * dy > JUMP * JUMP {
        return here;
    }
    let lerp = |a: f32, b: f32| a + (b - a) * alpha;
    let (re, im) = (lerp(old.rotation.re, r.re), lerp(old.rotation.im, r.im));
    let length = (re * re + im * im).sqrt();
    let turn = if length > 1e-6 {
        (re / length, im / length)
    } else {
        (1.0, 0.0)
    };
    (
        (lerp(old.translation.x, t.x), lerp(old.translation.y, t.y)),
        turn,
    )
}

/// A crate centred on `centre` (world metres), turned by `(cos, sin)`,
/// outlined in a darker shade.
fn crate_shape((x, y): (f32, f32), (cos, sin): (f32, f32), out: &mut Picture) {
    let corner = |sx: f32, sy: f32| {
        let (cx, cy) = (sx * CRATE_HALF, sy * CRATE_HALF);
        at(x + cx * cos - cy * sin, y + cx * sin + cy * cos)
    };
    let corners = vec![
        corner(-1.0, -1.0),
        corner(1.0, -1.0),
        corner(1.0, 1.0),
        corner(-1.0, 1.0),
    ];
    out.polygon(corners, CRATE, Some(Stroke::lines(CRATE.darker(), 1.0)));
}

/// A ball (or a ram) with a rim and a spoke, both in a darker shade, so a
/// rolling ball is seen to turn.
fn spoked((x, y): (f32, f32), (cos, sin): (f32, f32), radius: f32, fill: Paint, out: &mut Picture) {
    let edge = Stroke::lines(fill.darker(), 1.0);
    out.circle(at(x, y), radius, fill, Some(edge));
    out.line(at(x, y), at(x + radius * cos, y + radius * sin), edge);
}

#[cfg(test)]
mod tests {
    use lockstep_engine::view::Shape;
    use lockstep_engine::{offline, Game, Setup};

    use super::*;
    use crate::PhysicsSettings;

    fn setup(players: &[u8]) -> Setup<PhysicsSettings> {
        Setup {
            seed: 5,
            tick_rate: 60,
            settings: PhysicsSettings::default(),
            players: players.iter().map(|&p| PlayerId(p)).collect(),
        }
    }

    /// Every label of `out`: whose name, standing where.
    fn names(out: &Picture) -> Vec<(PlayerId, Point)> {
        out.shapes()
            .iter()
            .filter_map(|shape| match shape {
                Shape::Label {
                    at,
                    player: Some(player),
                    ..
                } => Some((*player, *at)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn the_picture_is_y_down_with_the_platform_top_at_zero() {
        let game = offline::<Physics>(&setup(&[0]), 1);
        let mut out = Picture::new();
        Physics::view(&game, &game, 1.0, None, &mut out);
        assert_eq!(
            out.shapes()[2],
            Shape::Rect {
                from: Point::new(-PLATFORM_HALF_WIDTH, 0.0),
                to: Point::new(PLATFORM_HALF_WIDTH, PLATFORM_THICKNESS),
                fill: PLATFORM,
            }
        );
        let ram = game.bodies().nth(game.rams()[0].body as usize).unwrap();
        let (x, y) = (ram.translation.x, ram.translation.y);
        assert!(y > 0.0, "the ram starts above the platform");
        assert_eq!(
            names(&out),
            [(PlayerId(0), Point::new(x, -(y + RAM_RADIUS)))]
        );
    }

    #[test]
    fn bodies_are_drawn_between_ticks_and_a_departed_ram_not_at_all() {
        let previous = offline::<Physics>(&setup(&[0, 1]), 30);
        let mut current = offline::<Physics>(&setup(&[0, 1]), 31);
        let slot = current.rams()[1].body as usize;
        let old = previous.bodies().nth(slot).unwrap().translation;
        let new = current.bodies().nth(slot).unwrap().translation;
        let mut out = Picture::new();
        Physics::view(&previous, &current, 0.5, None, &mut out);
        let halfway = Point::new(
            old.x + (new.x - old.x) * 0.5,
            -(old.y + (new.y - old.y) * 0.5),
        );
        let rams: Vec<Point> = out
            .shapes()
            .iter()
            .filter_map(|shape| match shape {
                Shape::Circle {
                    centre,
                    fill: Some(Paint::Player(_)),
                    ..
                } => Some(*centre),
                _ => None,
            })
            .collect();
        assert_eq!(rams.len(), 2);
        assert_eq!(rams[1], halfway);

        current.remove_player(PlayerId(0));
        out.clear();
        Physics::view(&previous, &current, 0.5, None, &mut out);
        let named: Vec<PlayerId> = names(&out).iter().map(|(p, _)| *p).collect();
        assert_eq!(named, [PlayerId(1)]);
    }

    #[test]
    fn a_body_that_fell_and_came_back_is_not_smeared() {
        let game = offline::<Physics>(&setup(&[0]), 1);
        let mut fell = game.bodies().nth(1).unwrap();
        let now = fell;
        fell.translation.y -= 12.0;
        assert_eq!(between(Some(&fell), &now, 0.5), between(None, &now, 0.5));
    }

    #[test]
    fn my_ram_alone_is_ringed() {
        let game = offline::<Physics>(&setup(&[0, 1]), 1);
        let rings = |me| {
            let mut out = Picture::new();
            Physics::view(&game, &game, 1.0, me, &mut out);
            out.shapes()
                .iter()
                .filter(|shape| matches!(shape, Shape::Circle { fill: None, .. }))
                .count()
        };
        assert_eq!((rings(None), rings(Some(PlayerId(1)))), (0, 1));
    }

    #[test]
    fn every_ram_scores() {
        let game = offline::<Physics>(&setup(&[0, 3]), 1);
        assert_eq!(View::scores(&game), [(PlayerId(0), 0), (PlayerId(3), 0)]);
    }
}
