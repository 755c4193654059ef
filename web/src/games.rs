//! The games the page plays, chosen by the name in the server's Start as
//! the native client chooses them: the ball game and Tally, each with what
//! the page draws of it ([`WebGame::scene`]) and its scores.
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
//! ```
//!
//! Positions are between the last two ticks at the accumulator's alpha
//! (interpolation), as the window's scenes draw them.

use lockstep_engine::{HasBots, Hosted, HostedGame};
use lockstep_protocol::{PlayerId, SelfTest};
use lockstep_sim::{Ball, Disc, World};
use lockstep_tally::{Counter, Tally};

/// Every game the page offers, as a host sees it (the self-tests of the
/// Hello come from these).
pub const GAMES: &[&dyn HostedGame] = &[&Hosted::<World>::new(), &Hosted::<Tally>::new()];

/// The scene's first number: which game it draws.
const BALLS_SCENE: f32 = 0.0;
/// See [`BALLS_SCENE`].
const TALLY_SCENE: f32 = 1.0;

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

#[cfg(test)]
mod tests {
    use lockstep_engine::{Game, Setup};

    use super::*;

    #[test]
    fn the_preflight_names_every_game_with_its_self_test() {
        let tests = self_tests();
        let names: Vec<&str> = tests.iter().map(|t| t.game.as_str()).collect();
        assert_eq!(names, ["balls", "tally"]);
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
}
