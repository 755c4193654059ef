//! The deterministic game simulation: the ball game every lockstep client
//! runs, its seeded bots, and whole games run offline.
//!
//! # The game
//!
//! Each player steers a disc around a walled [`Arena`] full of balls. Discs
//! shove balls; balls bounce off each other, the walls and the goal posts.
//! A ball that crosses a goal line through either opening scores one point
//! for the player whose disc touched it last ([`Ball::last_touch`]), then
//! respawns at a seeded random spot in the middle. A ball nobody touched
//! since it spawned scores for nobody. Scores are kept per player
//! ([`Score`]), for every player of the starting roster, including players
//! removed later.
//!
//! # How it works
//!
//! [`World::step`] advances one fixed tick: apply each disc's input, move
//! everything, resolve contacts (see `physics.rs` for the order), keep
//! everything inside the walls, then score and respawn balls that went into
//! a goal. [`World::hash`] folds the whole state into one `u64` that peers
//! compare every so often; any difference, even in the last bit of one
//! velocity, is a desync. Balls keep moving and collide many times a second,
//! so a difference never stays hidden for long.
//!
//! # Determinism rules
//!
//! Every peer must compute the same bits from the same inputs, on any CPU and
//! with any compiler settings. The simulation keeps these rules, and the
//! workspace `clippy.toml` enforces what a lint can see:
//!
//! - **Fixed step, integer time.** Time is a tick count; the step length is
//!   `1 / tick_rate`, one correctly rounded division. Wall-clock time never
//!   enters: frame rate and machine speed only decide *when* a step runs.
//! - **Only `+ - * /` and `sqrt` on floats.** IEEE 754 requires these to be
//!   correctly rounded, so they give the same bits everywhere. Rust never
//!   fuses a multiply and an add on its own, and every tier-1 target does
//!   `f32` in SSE/NEON registers without flush-to-zero.
//! - **No std transcendental functions** (`sin`, `cos`, `atan2`, `exp`,
//!   `powf`, ...): they call the platform's math library, whose results
//!   differ in the last bit between systems. If one is ever needed, use the
//!   `libm` crate, which is the same Rust code everywhere.
//! - **No `f32::min`/`f32::max`, no `mul_add`.** `min`/`max` leave the sign
//!   of a zero result unspecified (it can differ by target and optimisation
//!   level); without FMA hardware `mul_add` calls the C library's `fma`,
//!   which has been wrong on some systems. Comparisons and `a * b + c` are
//!   written out instead.
//! - **No NaN.** NaN bit patterns differ between CPUs (and so would the
//!   hash), so every division is guarded against a zero divisor.
//! - **glam is used for its plain arithmetic only.** In glam 0.30 `Vec2` is a
//!   scalar struct whatever the features; `dot` is two products and a sum, and the
//!   workspace builds it with `scalar-math` and `libm`. Length clamping and
//!   normalising are written out here rather than trusted to a library.
//! - **No hash maps or sets, defined iteration order.** Everything is a `Vec`
//!   walked in index order (discs in ascending player order), because
//!   `HashMap` iteration order is randomised per process.
//! - **Seeded RNG in the state.** The [`Rng`] is seeded from
//!   [`WorldConfig::seed`] and stored in the [`World`], so a snapshot resumes
//!   the same random stream.
//! - **Everything in the hash.** Every field of [`World`] feeds
//!   [`World::hash`], so no state can diverge unseen.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

// 32-bit x86 without SSE2 computes `f32` on the x87 FPU, in 80-bit
// extended precision rounded only when stored: every result can differ in
// the last bit from every other machine (an i586 build of the simulation
// parted from the golden hashes already at tick 0, in the balls' random
// spawn positions; DETERMINISM.md). Refuse to build rather than desync.
#[cfg(all(target_arch = "x86", not(target_feature = "sse2")))]
compile_error!(
    "lockstep-balls needs SSE2 on 32-bit x86: without it floats are computed on the x87 FPU \
     in 80-bit extended precision and the simulation gives different bits than on any other \
     machine. Build for i686 (which has SSE2), not i586."
);

mod arena;
mod body;
pub mod bot;
mod config;
pub mod engine;
mod physics;
mod self_test;
mod settings;
mod steering;
mod view;

use glam::Vec2;
use lockstep_protocol::{Input, PlayerId, PlayerInput, Tick};
use serde::{Deserialize, Serialize};

pub use arena::Arena;
pub use body::{Ball, Disc};
pub use config::WorldConfig;
pub use lockstep_rng::Rng;
pub use self_test::{
    self_test, SELF_TEST_BALLS, SELF_TEST_PLAYERS, SELF_TEST_SEED, SELF_TEST_TICKS,
    SELF_TEST_TICK_RATE,
};

use lockstep_engine::determinism::fnv::Fnv1a;
use lockstep_engine::trace;

/// The phases of one step, in the order [`World::step_phases`] runs them:
/// discs driven by the inputs, balls rolled, contacts resolved (the
/// collision counter too), bodies kept inside the walls, and goals scored
/// (a scored ball respawns with the world's RNG, so every RNG draw is in
/// this phase) with the tick counted.
pub const PHASES: [&str; 5] = ["inputs", "movement", "collisions", "walls", "goals"];

/// Goals scored by one player.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Score {
    /// The scorer.
    pub player: PlayerId,
    /// Balls they sent into a goal (either goal) as the last toucher.
    pub goals: u32,
}

/// The whole game state.
///
/// Cloning a `World` is taking a snapshot: the clone, stepped with the same
/// inputs, stays identical to the original (same [`hash`](Self::hash)).
/// Serialising it carries the same guarantee, with any serializer that keeps
/// `f32` bits exactly (postcard does).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct World {
    /// The parameters the world was built from.
    config: WorldConfig,
    /// Steps taken so far.
    tick: Tick,
    /// Source of every random choice after construction (respawns).
    rng: Rng,
    /// Active players' discs, ascending by player id.
    discs: Vec<Disc>,
    /// All balls; their count never changes.
    balls: Vec<Ball>,
    /// One entry per player of the starting roster, ascending by id.
    scores: Vec<Score>,
    /// Cumulative count of body-body collisions, see [`World::collisions`].
    collisions: u64,
}

impl World {
    /// A new world at tick 0.
    ///
    /// `players` is the roster in ascending [`PlayerId`] order (ids may have
    /// gaps); it is sorted and de-duplicated again here so that a careless
    /// caller still gets the same world as everyone else. Discs start at
    /// positions that depend only on their roster slot; balls start at
    /// seeded random positions with seeded random velocities, so the arena is
    /// busy from the first tick.
    #[must_use]
    pub fn new(config: WorldConfig, players: &[PlayerId]) -> World {
        /// Largest initial ball speed along each axis, in units/s: lively
        /// but well below the cap.
        const SPAWN_SPEED: f32 = 250.0;

        let arena = Arena::STANDARD;
        let mut roster = players.to_vec();
        roster.sort_unstable();
        roster.dedup();

        let discs = roster
            .iter()
            .enumerate()
            .map(|(slot, &player)| Disc {
                player,
                pos: arena.disc_spawn(slot, roster.len()),
                vel: Vec2::ZERO,
                radius: Disc::RADIUS,
            })
            .collect();
        let mut rng = Rng::new(config.seed);
        let balls = (0..config.balls)
            .map(|_| {
                let pos = arena.ball_spawn(&mut rng);
                let vel = random_velocity(&mut rng, SPAWN_SPEED);
                Ball {
                    pos,
                    vel,
                    radius: Ball::RADIUS,
                    last_touch: None,
                }
            })
            .collect();
        let scores = roster
            .iter()
            .map(|&player| Score { player, goals: 0 })
            .collect();

        World {
            config,
            tick: Tick(0),
            rng,
            discs,
            balls,
            scores,
            collisions: 0,
        }
    }

    /// Advances one tick.
    ///
    /// `inputs` holds at most one entry per active player. An active player
    /// with no entry behaves as [`Input::default()`] (nothing pressed);
    /// entries for unknown or removed players are ignored; if a player has
    /// several entries, the first counts.
    pub fn step(&mut self, inputs: &[PlayerInput]) {
        self.advance(inputs, self.config.dt(), &mut |_, _| {});
    }

    /// [`World::step`], calling `after(phase, self)` after each of its
    /// [`PHASES`], in order, so a desync dump can hash the state between
    /// them. The result is [`World::step`]'s when `after` changes nothing.
    pub fn step_phases(
        &mut self,
        inputs: &[PlayerInput],
        after: &mut dyn FnMut(&'static str, &mut World),
    ) {
        self.advance(inputs, self.config.dt(), after);
    }

    /// Advances one step of `dt` seconds (finite, not negative) instead of
    /// the configured fixed step, with the same inputs rule as
    /// [`World::step`]: the ball game's
    /// [`Game::step_variable`](lockstep_engine::Game::step_variable), which
    /// the game loop lab's variable-step strategies run.
    ///
    /// Outside the determinism contract: `dt` comes from the wall clock,
    /// so two machines, or two runs, never step alike. The lab plays solo,
    /// where that costs nothing; anything shared, replayed or hashed uses
    /// [`World::step`].
    pub fn step_with_dt(&mut self, inputs: &[PlayerInput], dt: f32) {
        self.advance(inputs, dt, &mut |_, _| {});
    }

    /// One step of `dt` seconds: the body of [`World::step`], in the order
    /// of [`PHASES`], with `after` called after each.
    fn advance(
        &mut self,
        inputs: &[PlayerInput],
        dt: f32,
        after: &mut dyn FnMut(&'static str, &mut World),
    ) {
        let [inputs_applied, movement, collisions, walls, goals] = PHASES;
        let arena = self.arena();
        for disc in &mut self.discs {
            let input = inputs
                .iter()
                .find(|entry| entry.player == disc.player)
                .map_or(Input::default(), |entry| entry.input);
            physics::drive_disc(disc, input, dt);
        }
        self.trace_bodies();
        after(inputs_applied, self);
        for ball in &mut self.balls {
            physics::roll_ball(ball, dt);
        }
        self.trace_bodies();
        after(movement, self);
        let contacts = physics::resolve_contacts(&mut self.discs, &mut self.balls);
        self.collisions = self.collisions.saturating_add(contacts);
        self.trace_bodies();
        after(collisions, self);
        for disc in &mut self.discs {
            physics::confine_disc(disc, &arena);
        }
        for ball in &mut self.balls {
            physics::bounce_ball_off_walls(ball, &arena);
        }
        self.trace_bodies();
        after(walls, self);
        self.score_goals(&arena);
        self.tick = self.tick.next();
        self.trace_bodies();
        after(goals, self);
    }

    /// Every disc's and ball's position and velocity, for the sync trace
    /// ([`lockstep_engine::trace`]) after each phase; nothing in play.
    fn trace_bodies(&self) {
        if !trace::enabled() {
            return;
        }
        for (i, disc) in self.discs.iter().enumerate() {
            trace::trace_item("disc.pos", i, disc.pos.to_array());
            trace::trace_item("disc.vel", i, disc.vel.to_array());
        }
        for (i, ball) in self.balls.iter().enumerate() {
            trace::trace_item("ball.pos", i, ball.pos.to_array());
            trace::trace_item("ball.vel", i, ball.vel.to_array());
        }
    }

    /// Credits and respawns every ball that is in a goal, in ball order.
    fn score_goals(&mut self, arena: &Arena) {
        /// Largest respawn speed along each axis, in units/s: a gentle nudge
        /// so a respawned ball does not sit still.
        const RESPAWN_SPEED: f32 = 150.0;

        for ball in &mut self.balls {
            if !arena.in_goal(ball.pos) {
                continue;
            }
            if let Some(scorer) = ball.last_touch {
                if let Some(score) = self.scores.iter_mut().find(|s| s.player == scorer) {
                    score.goals = score.goals.saturating_add(1);
                }
            }
            ball.pos = arena.ball_respawn(&mut self.rng);
            ball.vel = random_velocity(&mut self.rng, RESPAWN_SPEED);
            ball.last_touch = None;
        }
    }

    /// Removes a player's disc, e.g. when they disconnect. Every peer must
    /// call it before the same tick. Their score stays on the board, but
    /// balls they touched last no longer score for them. Unknown id: no-op.
    pub fn remove_player(&mut self, id: PlayerId) {
        self.discs.retain(|disc| disc.player != id);
        for ball in &mut self.balls {
            if ball.last_touch == Some(id) {
                ball.last_touch = None;
            }
        }
    }

    /// Brings back a player of the starting roster that was removed (a
    /// rejoin; called at the same tick on every machine, after that tick's
    /// removals). Its disc reappears at its starting spot, at rest; its
    /// score is kept. A player already in the game, or not in the starting
    /// roster, is ignored.
    pub fn add_player(&mut self, id: PlayerId) {
        let Some(slot) = self.scores.iter().position(|score| score.player == id) else {
            return;
        };
        let Err(index) = self.discs.binary_search_by_key(&id, |disc| disc.player) else {
            return;
        };
        let disc = Disc {
            player: id,
            pos: Arena::STANDARD.disc_spawn(slot, self.scores.len()),
            vel: Vec2::ZERO,
            radius: Disc::RADIUS,
        };
        self.discs.insert(index, disc);
    }

    /// Fault injection for desync tests (`--inject-desync-at`): moves the
    /// first ball (or, with no balls, the first disc) one ulp to the right,
    /// the smallest change a float can make. Returns the changed field's
    /// path as `desync-diff` prints it, or `None` if the world is empty.
    pub fn nudge_one_ulp(&mut self) -> Option<&'static str> {
        let (x, path) = if let Some(ball) = self.balls.first_mut() {
            (&mut ball.pos.x, "balls[0].pos.x")
        } else if let Some(disc) = self.discs.first_mut() {
            (&mut disc.pos.x, "discs[0].pos.x")
        } else {
            return None;
        };
        *x = f32::from_bits(x.to_bits() + 1);
        Some(path)
    }

    /// Number of steps taken so far (starts at `Tick(0)`).
    #[must_use]
    pub fn tick(&self) -> Tick {
        self.tick
    }

    /// The parameters this world was built from.
    #[must_use]
    pub fn config(&self) -> WorldConfig {
        self.config
    }

    /// The field everything moves in.
    #[must_use]
    pub fn arena(&self) -> Arena {
        Arena::STANDARD
    }

    /// Active players' discs, ascending by player id.
    #[must_use]
    pub fn discs(&self) -> &[Disc] {
        &self.discs
    }

    /// All balls, in a stable order (a respawned ball keeps its index).
    #[must_use]
    pub fn balls(&self) -> &[Ball] {
        &self.balls
    }

    /// One entry per player of the starting roster, ascending by id,
    /// including removed players.
    #[must_use]
    pub fn scores(&self) -> &[Score] {
        &self.scores
    }

    /// Cumulative number of collisions between bodies (disc-disc, disc-ball,
    /// ball-ball pairs that were moving into each other and exchanged
    /// momentum). Wall and post bounces are not counted. Part of the state
    /// and of the hash; useful to show how busy, and so how
    /// divergence-sensitive, a run is.
    #[must_use]
    pub fn collisions(&self) -> u64 {
        self.collisions
    }

    /// FNV-1a 64 checksum of the whole state. Peers compare it to detect a
    /// desync, and golden values are pinned in tests, so the byte order below
    /// is a contract: changing it (or any field's encoding) changes every
    /// hash.
    ///
    /// Integers are little-endian; an `f32` is its IEEE-754 bit pattern as a
    /// `u32` (`to_bits`); a list is its length as a `u32`, then its
    /// elements. In order:
    ///
    /// 1. tick: `u32`
    /// 2. RNG state: `u64`
    /// 3. config: seed `u64`, tick_rate `u16`, balls `u16`
    /// 4. collision count: `u64`
    /// 5. discs (list), each: player `u8`, pos.x, pos.y, vel.x, vel.y,
    ///    radius (`f32`s)
    /// 6. balls (list), each: pos.x, pos.y, vel.x, vel.y, radius (`f32`s),
    ///    last toucher: `0u8` for none, or `1u8` then the player `u8`
    /// 7. scores (list), each: player `u8`, goals `u32`
    #[must_use]
    pub fn hash(&self) -> u64 {
        let mut h = Fnv1a::new();
        h.write_u32(self.tick.0);
        h.write_u64(self.rng.state());
        h.write_u64(self.config.seed);
        h.write_u16(self.config.tick_rate);
        h.write_u16(self.config.balls);
        h.write_u64(self.collisions);
        h.write_len(self.discs.len());
        for disc in &self.discs {
            h.write_u8(disc.player.0);
            h.write_f32(disc.pos.x);
            h.write_f32(disc.pos.y);
            h.write_f32(disc.vel.x);
            h.write_f32(disc.vel.y);
            h.write_f32(disc.radius);
        }
        h.write_len(self.balls.len());
        for ball in &self.balls {
            h.write_f32(ball.pos.x);
            h.write_f32(ball.pos.y);
            h.write_f32(ball.vel.x);
            h.write_f32(ball.vel.y);
            h.write_f32(ball.radius);
            match ball.last_touch {
                None => h.write_u8(0),
                Some(player) => {
                    h.write_u8(1);
                    h.write_u8(player.0);
                }
            }
        }
        h.write_len(self.scores.len());
        for score in &self.scores {
            h.write_u8(score.player.0);
            h.write_u32(score.goals);
        }
        h.finish()
    }
}

/// A velocity with each axis uniform in `[-max, max)`. The x draw comes
/// first: the order of draws is part of the determinism contract.
fn random_velocity(rng: &mut Rng, max: f32) -> Vec2 {
    let x = rng.range_f32(-max, max);
    let y = rng.range_f32(-max, max);
    Vec2::new(x, y)
}

#[cfg(test)]
mod tests;
