//! Flock: a flock of boids that follows the players' leaders, written the
//! way anyone writes a game for lockstep, outside its repository.
//!
//! Every player steers a leader (W A S D, the arrows or a stick; Shift or
//! a controller's button for a burst). Each boid keeps apart from its
//! neighbours (separation), flies as they fly (alignment), stays with
//! them (cohesion) and heads for the nearest leader. A player's score is
//! the number of boids whose nearest leader is theirs.
//!
//! Determinism, as every lockstep game needs it: a fixed step, time in
//! ticks, `f32` arithmetic of adds, multiplies, divides and square roots
//! only in the step (each correctly rounded on every machine), sines and
//! cosines only through `libm` (the same code everywhere, never the
//! platform's), the random generator seeded and kept in the state, and
//! every loop over a `Vec` in index order.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
mod page;
mod view;

use lockstep_engine::determinism::fnv::Fnv1a;
use lockstep_engine::trace::{self, trace_item};
use lockstep_engine::{Game, HasBots, Setup};
use lockstep_protocol::{Buttons, Input, PlayerId, PlayerInput, Tick};
use lockstep_rng::Rng;
use serde::{Deserialize, Serialize};

/// The field's width and height, in the game's units.
pub const FIELD: Vec2 = Vec2::new(1600.0, 900.0);
/// Boids in a game by default.
pub const DEFAULT_BOIDS: u16 = 64;
/// Most boids a game may have: the step compares every pair.
pub const MAX_BOIDS: u16 = 400;

/// How far a boid sees its neighbours.
const VIEW: f32 = 90.0;
/// How close a neighbour may come before the boid moves away.
const SEPARATION: f32 = 28.0;
/// The weights of the four rules.
const W_SEPARATION: f32 = 2.5;
const W_ALIGNMENT: f32 = 0.05;
const W_COHESION: f32 = 0.004;
const W_FOLLOW: f32 = 0.002;
/// A boid's speed limits, units per tick.
const MAX_SPEED: f32 = 6.0;
const MIN_SPEED: f32 = 1.5;
/// A leader's push per tick, its burst and the share of its velocity it
/// keeps each tick.
const LEADER_PUSH: f32 = 0.6;
const LEADER_BURST: f32 = 2.0;
const LEADER_DRAG: f32 = 0.9;

/// A point or a velocity.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Vec2 {
    /// Across, left to right.
    pub x: f32,
    /// Down, top to bottom.
    pub y: f32,
}

impl Vec2 {
    /// The vector `(x, y)`.
    #[must_use]
    pub const fn new(x: f32, y: f32) -> Vec2 {
        Vec2 { x, y }
    }

    fn plus(self, o: Vec2) -> Vec2 {
        Vec2::new(self.x + o.x, self.y + o.y)
    }

    fn minus(self, o: Vec2) -> Vec2 {
        Vec2::new(self.x - o.x, self.y - o.y)
    }

    fn times(self, k: f32) -> Vec2 {
        Vec2::new(self.x * k, self.y * k)
    }

    fn length_squared(self) -> f32 {
        self.x * self.x + self.y * self.y
    }
}

/// The flock's settings (`--set boids=N`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlockSettings {
    /// Boids in the flock, 1 to [`MAX_BOIDS`].
    pub boids: u16,
}

impl Default for FlockSettings {
    fn default() -> FlockSettings {
        FlockSettings {
            boids: DEFAULT_BOIDS,
        }
    }
}

/// A player's leader.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Leader {
    /// Whose.
    pub player: PlayerId,
    /// Where.
    pub pos: Vec2,
    /// Units per tick.
    pub vel: Vec2,
}

/// One boid.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Boid {
    /// Where.
    pub pos: Vec2,
    /// Units per tick.
    pub vel: Vec2,
}

/// The whole state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Flock {
    tick: Tick,
    /// The starting roster, ascending: where a returning leader starts.
    roster: Vec<PlayerId>,
    /// The leaders of the players taking part, ascending by player.
    leaders: Vec<Leader>,
    boids: Vec<Boid>,
}

impl Flock {
    /// The leaders, ascending by player.
    #[must_use]
    pub fn leaders(&self) -> &[Leader] {
        &self.leaders
    }

    /// The boids, in their fixed order.
    #[must_use]
    pub fn boids(&self) -> &[Boid] {
        &self.boids
    }

    /// The index in [`Flock::leaders`] of the leader nearest to `at` (the
    /// lower player on a tie); `None` without leaders.
    #[must_use]
    pub fn nearest_leader(&self, at: Vec2) -> Option<usize> {
        let mut best: Option<(usize, f32)> = None;
        for (i, leader) in self.leaders.iter().enumerate() {
            let d = leader.pos.minus(at).length_squared();
            if best.is_none_or(|(_, b)| d < b) {
                best = Some((i, d));
            }
        }
        best.map(|(i, _)| i)
    }

    fn step_leaders(&mut self, inputs: &[PlayerInput]) {
        for leader in &mut self.leaders {
            let input = inputs
                .iter()
                .find(|i| i.player == leader.player)
                .map_or(Input::default(), |i| i.input);
            let push = push(input);
            leader.vel = leader.vel.times(LEADER_DRAG).plus(push);
            leader.pos = leader.pos.plus(leader.vel);
            keep_inside(&mut leader.pos, &mut leader.vel);
        }
    }

    /// Every leader's and boid's position and velocity, for the sync
    /// trace after each phase; nothing while playing.
    fn trace_state(&self) {
        if !trace::enabled() {
            return;
        }
        for (i, l) in self.leaders.iter().enumerate() {
            trace_item("leader.pos", i, [l.pos.x, l.pos.y]);
            trace_item("leader.vel", i, [l.vel.x, l.vel.y]);
        }
        for (i, b) in self.boids.iter().enumerate() {
            trace_item("boid.pos", i, [b.pos.x, b.pos.y]);
            trace_item("boid.vel", i, [b.vel.x, b.vel.y]);
        }
    }

    fn step_boids(&mut self) {
        // Every boid steers by where the others were: the new velocities
        // first, from the old state, then the moves.
        let mut velocities = Vec::with_capacity(self.boids.len());
        for (i, boid) in self.boids.iter().enumerate() {
            let mut separation = Vec2::new(0.0, 0.0);
            let mut heading = Vec2::new(0.0, 0.0);
            let mut centre = Vec2::new(0.0, 0.0);
            let mut seen = 0u32;
            for (j, other) in self.boids.iter().enumerate() {
                let d = other.pos.minus(boid.pos);
                let d2 = d.length_squared();
                if j == i || d2 >= VIEW * VIEW {
                    continue;
                }
                seen += 1;
                heading = heading.plus(other.vel);
                centre = centre.plus(other.pos);
                if d2 < SEPARATION * SEPARATION && d2 > 0.0 {
                    separation = separation.minus(d.times(1.0 / d2));
                }
            }
            let mut steer = separation.times(W_SEPARATION);
            if seen > 0 {
                let n = seen as f32;
                let alignment = heading.times(1.0 / n).minus(boid.vel);
                let cohesion = centre.times(1.0 / n).minus(boid.pos);
                steer = steer
                    .plus(alignment.times(W_ALIGNMENT))
                    .plus(cohesion.times(W_COHESION));
            }
            if let Some(nearest) = self.nearest_leader(boid.pos) {
                let follow = self.leaders[nearest].pos.minus(boid.pos);
                steer = steer.plus(follow.times(W_FOLLOW));
            }
            // The sync trace: the steering of boid i and its new
            // velocity, by their bits, with these lines, when a desync
            // dump redoes the tick. `trace_item` returns the value, so
            // the velocity can be traced where it is computed.
            trace_item("boid.steer", i, [steer.x, steer.y]);
            let vel = limit(boid.vel.plus(steer));
            let [x, y] = trace_item("boid.velocity", i, [vel.x, vel.y]);
            velocities.push(Vec2::new(x, y));
        }
        for (boid, vel) in self.boids.iter_mut().zip(velocities) {
            boid.vel = vel;
            boid.pos = boid.pos.plus(vel);
            keep_inside(&mut boid.pos, &mut boid.vel);
        }
    }
}

/// A leader's push from an input: a stick's axes if it has them, else the
/// held direction buttons; the burst button multiplies it.
fn push(input: Input) -> Vec2 {
    let mut dir = match input.axes {
        Some([x, y]) => Vec2::new(f32::from(x) / 127.0, f32::from(y) / 127.0),
        None => {
            let b = input.buttons;
            let axis = |minus: Buttons, plus: Buttons| {
                f32::from(u8::from(b.contains(plus))) - f32::from(u8::from(b.contains(minus)))
            };
            Vec2::new(
                axis(Buttons::LEFT, Buttons::RIGHT),
                axis(Buttons::UP, Buttons::DOWN),
            )
        }
    };
    dir = dir.times(LEADER_PUSH);
    if input.buttons.contains(Buttons::BOOST) {
        dir = dir.times(LEADER_BURST);
    }
    dir
}

/// `vel` within the boids' speed limits, in its own direction.
fn limit(vel: Vec2) -> Vec2 {
    let s2 = vel.length_squared();
    if s2 > MAX_SPEED * MAX_SPEED {
        vel.times(MAX_SPEED / libm::sqrtf(s2))
    } else if s2 < MIN_SPEED * MIN_SPEED && s2 > 0.0 {
        vel.times(MIN_SPEED / libm::sqrtf(s2))
    } else {
        vel
    }
}

/// Bounces `pos` back into the field, turning `vel` round on that axis.
fn keep_inside(pos: &mut Vec2, vel: &mut Vec2) {
    bounce(&mut pos.x, &mut vel.x, FIELD.x);
    bounce(&mut pos.y, &mut vel.y, FIELD.y);
}

/// One axis of [`keep_inside`]: `at` back into `0..=end`, `speed` turned.
fn bounce(at: &mut f32, speed: &mut f32, end: f32) {
    if *at < 0.0 {
        *at = -*at;
        *speed = -*speed;
    } else if *at > end {
        *at = end - (*at - end);
        *speed = -*speed;
    }
}

/// Where the leader of the `i`-th of `n` players starts: evenly round a
/// circle about the centre.
fn start_of(i: usize, n: usize) -> Vec2 {
    let turn = core::f32::consts::TAU * i as f32 / n.max(1) as f32;
    Vec2::new(
        FIELD.x * 0.5 + 300.0 * libm::cosf(turn),
        FIELD.y * 0.5 + 300.0 * libm::sinf(turn),
    )
}

fn leader(roster: &[PlayerId], player: PlayerId) -> Leader {
    let i = roster.iter().position(|p| *p == player).unwrap_or(0);
    Leader {
        player,
        pos: start_of(i, roster.len()),
        vel: Vec2::new(0.0, 0.0),
    }
}

impl Game for Flock {
    const NAME: &'static str = "flock";
    type Settings = FlockSettings;
    const PHASES: &'static [&'static str] = &["leaders", "boids"];

    fn start(setup: &Setup<FlockSettings>) -> Flock {
        let mut roster = setup.players.clone();
        roster.sort_unstable();
        roster.dedup();
        let leaders = roster.iter().map(|&p| leader(&roster, p)).collect();
        let mut rng = Rng::new(setup.seed);
        let boids = (0..setup.settings.boids.clamp(1, MAX_BOIDS))
            .map(|_| {
                let pos = Vec2::new(rng.range_f32(0.0, FIELD.x), rng.range_f32(0.0, FIELD.y));
                let turn = rng.range_f32(0.0, core::f32::consts::TAU);
                let vel = Vec2::new(libm::cosf(turn), libm::sinf(turn)).times(MAX_SPEED * 0.5);
                Boid { pos, vel }
            })
            .collect();
        Flock {
            tick: Tick(0),
            roster,
            leaders,
            boids,
        }
    }

    fn step(&mut self, inputs: &[PlayerInput]) {
        self.step_phases(inputs, &mut |_, _| {});
    }

    /// Two phases: the leaders move, then the boids.
    fn step_phases(
        &mut self,
        inputs: &[PlayerInput],
        after: &mut dyn FnMut(&'static str, &mut Flock),
    ) {
        self.step_leaders(inputs);
        self.trace_state();
        after("leaders", self);
        self.step_boids();
        self.tick = self.tick.next();
        self.trace_state();
        after("boids", self);
    }

    fn tick(&self) -> Tick {
        self.tick
    }

    fn hash(&self) -> u64 {
        let mut h = Fnv1a::new();
        h.write_u32(self.tick.0);
        h.write_len(self.leaders.len());
        for l in &self.leaders {
            h.write_u8(l.player.0);
            for v in [l.pos.x, l.pos.y, l.vel.x, l.vel.y] {
                h.write_f32(v);
            }
        }
        h.write_len(self.boids.len());
        for b in &self.boids {
            for v in [b.pos.x, b.pos.y, b.vel.x, b.vel.y] {
                h.write_f32(v);
            }
        }
        h.finish()
    }

    fn remove_player(&mut self, player: PlayerId) {
        self.leaders.retain(|l| l.player != player);
    }

    fn add_player(&mut self, player: PlayerId) {
        let known = self.roster.contains(&player);
        if let (true, Err(at)) = (
            known,
            self.leaders.binary_search_by_key(&player, |l| l.player),
        ) {
            self.leaders.insert(at, leader(&self.roster, player));
        }
    }

    fn has_player(&self, player: PlayerId) -> bool {
        self.leaders.iter().any(|l| l.player == player)
    }

    fn nudge(&mut self) -> Option<&'static str> {
        let boid = self.boids.first_mut()?;
        boid.pos.x = f32::from_bits(boid.pos.x.to_bits() + 1);
        Some("boids[0].pos.x")
    }
}

/// A computer player: it flies its leader to a random point of the field,
/// then picks another.
#[derive(Debug, Clone, PartialEq)]
pub struct FlockBot {
    rng: Rng,
    target: Vec2,
    until: Tick,
}

impl HasBots for Flock {
    const ABOUT: &'static str = "boids following the players, boids=N";
    type Bot = FlockBot;

    /// Pinned from `self_test` on x86_64 Linux; `tests/golden.rs` checks
    /// it, and a server built without the flock refuses a machine that
    /// computes another.
    const SELF_TEST_PIN: Option<u64> = Some(SELF_TEST);

    fn bot(seed: u64, player: PlayerId) -> FlockBot {
        FlockBot {
            rng: Rng::new(seed ^ (u64::from(player.0) + 1).wrapping_mul(0x9e37_79b9)),
            target: Vec2::new(FIELD.x * 0.5, FIELD.y * 0.5),
            until: Tick(0),
        }
    }

    fn bot_input(&self, bot: &mut FlockBot, me: PlayerId) -> Input {
        let Some(mine) = self.leaders.iter().find(|l| l.player == me) else {
            return Input::default();
        };
        let to = bot.target.minus(mine.pos);
        if self.tick >= bot.until || to.length_squared() < 40.0 * 40.0 {
            bot.target = Vec2::new(
                bot.rng.range_f32(100.0, FIELD.x - 100.0),
                bot.rng.range_f32(100.0, FIELD.y - 100.0),
            );
            bot.until = self.tick.plus(120 + bot.rng.below(180));
        }
        let to = bot.target.minus(mine.pos);
        let mut buttons = Buttons(0);
        for (far, button) in [
            (to.x > 20.0, Buttons::RIGHT),
            (to.x < -20.0, Buttons::LEFT),
            (to.y > 20.0, Buttons::DOWN),
            (to.y < -20.0, Buttons::UP),
        ] {
            if far {
                buttons = buttons.with(button);
            }
        }
        Input {
            buttons,
            axes: None,
        }
    }

    fn parse_settings(pairs: &[(String, String)]) -> Result<FlockSettings, String> {
        let mut settings = FlockSettings::default();
        for (key, value) in pairs {
            match key.as_str() {
                "boids" => {
                    settings.boids = value
                        .parse()
                        .ok()
                        .filter(|n| (1..=MAX_BOIDS).contains(n))
                        .ok_or_else(|| {
                            format!(
                                "boids must be a whole number from 1 to {MAX_BOIDS}, not {value:?}"
                            )
                        })?;
                }
                other => return Err(format!("the game flock has no setting {other:?}")),
            }
        }
        Ok(settings)
    }

    fn describe_settings(settings: &FlockSettings) -> String {
        format!("{} boids", settings.boids)
    }
}

/// The flock's self-test hash, as [`HasBots::self_test`] computes it on
/// the machines its authors checked.
pub const SELF_TEST: u64 = 0xe666_fda4_0a64_1e60;
