//! The games the page plays, chosen by the name in the server's Start as
//! the native client chooses them: the ball game, Tally and Topple, each
//! with what the page draws of it ([`WebGame::scene`]) and its scores.
//!
//! A scene is a flat list of numbers the page's script draws from, so no
//! drawing library is compiled in and nothing but numbers crosses into
//! JavaScript each frame:
//!
//! ```text
//! balls: 0, width, height, goal_top, goal_bottom, balls, discs,
//!        then x, y, radius for each ball,
//!        then x, y, radius, player for each disc
//! tally: 1, counters, then player, speed (0..1 of the bar), count for each
//! physics: 2, platform_half_width, crate_half, ball_radius, ram_radius,
//!          bodies, then kind, x, y, cos, sin, player for each enabled body
//! ```
//!
//! A physics body's kind is 0 for the platform, 1 a crate, 2 a ball and
//! 3 a ram; its player is the ram's player id, -1 for the others. Its
//! position is in metres, x right and y up; cos and sin are its rotation.
//!
//! Positions are between the last two ticks at the accumulator's alpha
//! (interpolation), as the window's scenes draw them.

use lockstep_balls::{Ball, Disc, World};
use lockstep_engine::{HasBots, Hosted, HostedGame};
use lockstep_protocol::{PlayerId, SelfTest};
use lockstep_tally::{Counter, Tally};
use lockstep_topple::{
    BodyShape, BodyView, Physics, BALL_RADIUS, CRATE_HALF, PLATFORM_HALF_WIDTH, RAM_RADIUS,
};

/// Every game the page offers, as a host sees it (the self-tests of the
/// Hello come from these).
pub const GAMES: &[&dyn HostedGame] = &[
    &Hosted::<World>::new(),
    &Hosted::<Tally>::new(),
    &Hosted::<Physics>::new(),
];

/// The scene's first number: which game it draws.
const BALLS_SCENE: f32 = 0.0;
/// See [`BALLS_SCENE`].
const TALLY_SCENE: f32 = 1.0;
/// See [`BALLS_SCENE`].
const PHYSICS_SCENE: f32 = 2.0;

/// Numbers before a physics scene's bodies.
const PHYSICS_HEADER: usize = 6;
/// Numbers per body of a physics scene.
const PHYSICS_BODY: usize = 6;

/// A physics body that moved further than this many metres in one tick
/// fell and was put back: it is drawn where it is now (as the window
/// does).
const PHYSICS_JUMP: f32 = 2.0;

/// A ball that moved further than this many radii in one tick respawned
/// after a goal: it is drawn where it is now (as the window does).
const TELEPORT_RADII: f32 = 4.0;

/// A Tally speed that fills the bar: held buttons add at most 31 a tick
/// and the speed halves every tick (the window's `TOP_SPEED`).
const TALLY_TOP_SPEED: f32 = 62.0;

/// What the page needs of a game beyond the engine's.
pub trait WebGame: HasBots + 'static {
    /// Appends the scene between `previous` and `current` at `alpha` to
    /// `out` (see the [module docs](self)).
    fn scene(previous: &Self, current: &Self, alpha: f32, out: &mut Vec<f32>);

    /// Every player's score, ascending by player; empty for a game that
    /// keeps none.
    fn scores(&self) -> Vec<(PlayerId, u32)>;
}

/// This build's preflight: the self-test hash of every game, computed in
/// the page, for the Hello.
pub fn self_tests() -> Vec<SelfTest> {
    GAMES
        .iter()
        .map(|game| SelfTest {
            game: game.name().to_string(),
            hash: game.self_test(),
        })
        .collect()
}

/// `a` moved towards `b` by `alpha`.
fn lerp(a: f32, b: f32, alpha: f32) -> f32 {
    a + (b - a) * alpha
}

impl WebGame for World {
    fn scene(previous: &World, current: &World, alpha: f32, out: &mut Vec<f32>) {
        let arena = current.arena();
        out.extend([
            BALLS_SCENE,
            arena.width,
            arena.height,
            arena.goal_top(),
            arena.goal_bottom(),
            current.balls().len() as f32,
            current.discs().len() as f32,
        ]);
        for (index, ball) in current.balls().iter().enumerate() {
            let (x, y) = ball_position(previous.balls().get(index), ball, alpha);
            out.extend([x, y, ball.radius]);
        }
        for disc in current.discs() {
            let (x, y) = disc_position(previous.discs(), disc, alpha);
            out.extend([x, y, disc.radius, f32::from(disc.player.0)]);
        }
    }

    fn scores(&self) -> Vec<(PlayerId, u32)> {
        World::scores(self)
            .iter()
            .map(|score| (score.player, score.goals))
            .collect()
    }
}

/// A disc between its previous and current position, or where it is now
/// if it only just joined.
fn disc_position(previous: &[Disc], disc: &Disc, alpha: f32) -> (f32, f32) {
    previous
        .iter()
        .find(|old| old.player == disc.player)
        .map_or((disc.pos.x, disc.pos.y), |old| {
            (
                lerp(old.pos.x, disc.pos.x, alpha),
                lerp(old.pos.y, disc.pos.y, alpha),
            )
        })
}

/// A ball between its previous and current position, unless it respawned
/// in between (or did not exist).
fn ball_position(previous: Option<&Ball>, ball: &Ball, alpha: f32) -> (f32, f32) {
    match previous {
        Some(old) if (ball.pos - old.pos).length() <= TELEPORT_RADII * ball.radius => (
            lerp(old.pos.x, ball.pos.x, alpha),
            lerp(old.pos.y, ball.pos.y, alpha),
        ),
        _ => (ball.pos.x, ball.pos.y),
    }
}

impl WebGame for Tally {
    fn scene(previous: &Tally, current: &Tally, alpha: f32, out: &mut Vec<f32>) {
        out.extend([TALLY_SCENE, current.counters().len() as f32]);
        for counter in current.counters() {
            let speed = speed_between(previous.counters(), counter, alpha);
            out.extend([
                f32::from(counter.player.0),
                (speed / TALLY_TOP_SPEED).clamp(0.0, 1.0),
                counter.count as f32,
            ]);
        }
    }

    fn scores(&self) -> Vec<(PlayerId, u32)> {
        self.counters()
            .iter()
            .map(|counter| (counter.player, counter.count))
            .collect()
    }
}

/// A counter's speed between its previous value and now.
fn speed_between(previous: &[Counter], counter: &Counter, alpha: f32) -> f32 {
    previous
        .iter()
        .find(|old| old.player == counter.player)
        .map_or(counter.speed, |old| lerp(old.speed, counter.speed, alpha))
}

impl WebGame for Physics {
    fn scene(previous: &Physics, current: &Physics, alpha: f32, out: &mut Vec<f32>) {
        let before: Vec<BodyView> = previous.bodies().collect();
        out.reserve(PHYSICS_HEADER + PHYSICS_BODY * current.body_count());
        let header = out.len();
        out.extend([
            PHYSICS_SCENE,
            PLATFORM_HALF_WIDTH,
            CRATE_HALF,
            BALL_RADIUS,
            RAM_RADIUS,
            0.0,
        ]);
        let mut count = 0u32;
        for (slot, body) in current.bodies().enumerate() {
            if !body.enabled {
                continue;
            }
            let (kind, player) = match current.shape(slot) {
                BodyShape::Platform => (0.0, -1.0),
                BodyShape::Crate => (1.0, -1.0),
                BodyShape::Ball => (2.0, -1.0),
                BodyShape::Ram(player) => (3.0, f32::from(player.0)),
            };
            let ((x, y), (cos, sin)) = body_between(before.get(slot), &body, alpha);
            out.extend([kind, x, y, cos, sin, player]);
            count += 1;
        }
        out[header + PHYSICS_HEADER - 1] = count as f32;
    }

    fn scores(&self) -> Vec<(PlayerId, u32)> {
        self.rams().iter().map(|r| (r.player, r.score)).collect()
    }
}

/// Where a body is between ticks, and its rotation's cosine and sine: the
/// position moved by `alpha`, the rotation turned by `alpha` and made
/// unit again. A body that jumped (it fell and came back) is where it is.
fn body_between(
    previous: Option<&BodyView>,
    body: &BodyView,
    alpha: f32,
) -> ((f32, f32), (f32, f32)) {
    let (t, r) = (body.translation, body.rotation);
    let now = ((t.x, t.y), (r.re, r.im));
    let Some(old) = previous else {
        return now;
    };
    let (dx, dy) = (t.x - old.translation.x, t.y - old.translation.y);
    if dx * dx + dy * dy > PHYSICS_JUMP * PHYSICS_JUMP {
        return now;
    }
    let (re, im) = (
        lerp(old.rotation.re, r.re, alpha),
        lerp(old.rotation.im, r.im, alpha),
    );
    let length = (re * re + im * im).sqrt();
    let turn = if length > 1e-6 {
        (re / length, im / length)
    } else {
        (1.0, 0.0)
    };
    (
        (
            lerp(old.translation.x, t.x, alpha),
            lerp(old.translation.y, t.y, alpha),
        ),
        turn,
    )
}

#[cfg(test)]
mod tests {
    use lockstep_engine::{Game, Setup};

    use super::*;

    #[test]
    fn the_preflight_names_every_game_with_its_self_test() {
        let tests = self_tests();
        let names: Vec<&str> = tests.iter().map(|t| t.game.as_str()).collect();
        assert_eq!(names, ["balls", "tally", "physics"]);
        assert_eq!(tests[0].hash, <World as HasBots>::self_test());
    }

    #[test]
    fn a_ball_scene_lists_every_ball_and_disc_between_the_two_ticks() {
        let setup = Setup {
            seed: 7,
            tick_rate: 60,
            settings: Default::default(),
            players: vec![PlayerId(0), PlayerId(1)],
        };
        let previous = World::start(&setup);
        let current = lockstep_engine::offline::<World>(&setup, 1);
        let mut out = Vec::new();
        World::scene(&previous, &current, 0.5, &mut out);
        let (balls, discs) = (out[5] as usize, out[6] as usize);
        assert_eq!(out[0], BALLS_SCENE);
        assert_eq!(discs, 2);
        assert_eq!(out.len(), 7 + 3 * balls + 4 * discs);
        let disc = 7 + 3 * balls;
        let (old, new) = (previous.discs()[0].pos, current.discs()[0].pos);
        assert_eq!(out[disc], (old.x + new.x) * 0.5);
    }

    #[test]
    fn a_tally_scene_has_one_bar_per_player() {
        let setup = Setup {
            seed: 1,
            tick_rate: 60,
            settings: (),
            players: vec![PlayerId(0), PlayerId(2)],
        };
        let game = lockstep_engine::offline::<Tally>(&setup, 30);
        let mut out = Vec::new();
        Tally::scene(&game, &game, 1.0, &mut out);
        assert_eq!(out.len(), 2 + 3 * 2);
        assert_eq!(out[5], 2.0, "the second counter is player 2's");
        assert_eq!(game.scores().len(), 2);
    }

    fn physics_setup(players: &[u8]) -> Setup<lockstep_topple::PhysicsSettings> {
        Setup {
            seed: 5,
            tick_rate: 60,
            settings: Default::default(),
            players: players.iter().map(|&p| PlayerId(p)).collect(),
        }
    }

    /// The bodies of a physics scene, after checking its header.
    fn physics_bodies(out: &[f32]) -> Vec<&[f32]> {
        assert_eq!(out[0], PHYSICS_SCENE);
        assert_eq!(
            out[1..PHYSICS_HEADER - 1],
            [PLATFORM_HALF_WIDTH, CRATE_HALF, BALL_RADIUS, RAM_RADIUS]
        );
        let bodies = out[PHYSICS_HEADER - 1] as usize;
        assert_eq!(out.len(), PHYSICS_HEADER + PHYSICS_BODY * bodies);
        out[PHYSICS_HEADER..].chunks(PHYSICS_BODY).collect()
    }

    #[test]
    fn a_physics_scene_has_one_entry_per_enabled_body_with_finite_numbers() {
        let setup = physics_setup(&[0, 3]);
        let previous = lockstep_engine::offline::<Physics>(&setup, 239);
        let current = lockstep_engine::offline::<Physics>(&setup, 240);
        let mut out = Vec::new();
        Physics::scene(&previous, &current, 0.5, &mut out);
        let bodies = physics_bodies(&out);
        assert_eq!(bodies.len(), current.body_count());
        assert!(out.iter().all(|v| v.is_finite()), "{out:?}");
        assert_eq!(bodies[0][0], 0.0, "the platform comes first");
        let rams: Vec<f32> = bodies
            .iter()
            .filter(|b| b[0] == 3.0)
            .map(|b| b[5])
            .collect();
        assert_eq!(rams, [0.0, 3.0], "a ram per player, with its id");
        for body in &bodies {
            let turn = body[3] * body[3] + body[4] * body[4];
            assert!((turn - 1.0).abs() < 1e-4, "a unit rotation: {body:?}");
            assert!(body[0] == 3.0 || body[5] == -1.0, "{body:?}");
        }
        let scored: Vec<PlayerId> = current.scores().iter().map(|s| s.0).collect();
        assert_eq!(scored, [PlayerId(0), PlayerId(3)], "a score per ram");
    }

    #[test]
    fn a_physics_scene_draws_bodies_between_the_two_ticks_and_leaves_out_departed_rams() {
        let setup = physics_setup(&[0, 1]);
        let previous = lockstep_engine::offline::<Physics>(&setup, 30);
        let mut current = lockstep_engine::offline::<Physics>(&setup, 31);
        let mut out = Vec::new();
        Physics::scene(&previous, &current, 0.5, &mut out);
        let ram = current.rams()[0].body as usize;
        let (old, new) = (
            previous.bodies().nth(ram).map(|b| b.translation),
            current.bodies().nth(ram).map(|b| b.translation),
        );
        let (old, new) = (old.unwrap(), new.unwrap());
        let drawn = physics_bodies(&out)[ram];
        assert_eq!(drawn[1], old.x + (new.x - old.x) * 0.5);
        assert_eq!(drawn[2], old.y + (new.y - old.y) * 0.5);

        current.remove_player(PlayerId(0));
        out.clear();
        Physics::scene(&previous, &current, 0.5, &mut out);
        let bodies = physics_bodies(&out);
        assert_eq!(bodies.len(), current.body_count() - 1);
        let rams: Vec<f32> = bodies
            .iter()
            .filter(|b| b[0] == 3.0)
            .map(|b| b[5])
            .collect();
        assert_eq!(rams, [1.0]);
    }
}
