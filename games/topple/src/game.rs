//! The game: the physics world and what the rules add to it.
//!
//! Determinism: bodies are created in one order and never removed, so a
//! body's slot in [`Physics`] is its rapier handle's index; the rules walk
//! bodies by slot and rams by player; contacts are read per ram, and the
//! last player in id order wins a body two rams touch, whatever order
//! rapier lists contacts in. Nothing reads a clock, and the generator is
//! part of the state.

use lockstep_engine::trace;
use lockstep_engine::{FixedStepOnly, Game, Setup};
use lockstep_protocol::{PlayerId, PlayerInput, Tick};
use rapier2d::prelude::*;
use serde::{Deserialize, Serialize};

use crate::arena::{self, PhysicsSettings, FALL_Y};
use crate::steering::thrust;
use lockstep_engine::determinism::fnv::Fnv1a;
use lockstep_rng::Rng;

/// Thrust of a ram, in newtons: a little more than its weight lifts it.
const THRUST: f32 = 110.0;
/// Thrust with BOOST held.
const BOOST_THRUST: f32 = 260.0;
/// Where a fallen crate or ball comes back: this far above the towers,
/// anywhere over the middle of the platform.
const DROP_HEIGHT: f32 = 4.0;
const DROP_HALF_WIDTH: f32 = 12.0;

/// One player's ram and score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ram {
    /// Whose ram.
    pub player: PlayerId,
    /// Its body's slot.
    pub body: u32,
    /// Bodies knocked off (and rams, by hitting them last).
    pub score: u32,
    /// False while the player is out of the game (its body is disabled).
    pub active: bool,
    /// Where it starts and comes back.
    pub spawn: [f32; 2],
}

/// A body's shape, for drawing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyShape {
    /// The fixed platform, a box of these half extents.
    Platform,
    /// A crate.
    Crate,
    /// A ball.
    Ball,
    /// A player's ram.
    Ram(PlayerId),
}

/// The whole state: the rapier world and the game's own fields.
pub struct Physics {
    pub(crate) tick: Tick,
    pub(crate) settings: PhysicsSettings,
    pub(crate) rng: Rng,
    /// Ascending by player.
    pub(crate) rams: Vec<Ram>,
    /// For every body slot, the last ram to touch it.
    pub(crate) touched: Vec<Option<PlayerId>>,
    /// Every body's handle, by slot (= handle index).
    pub(crate) handles: Vec<RigidBodyHandle>,
    pub(crate) world: PhysicsWorld,
}

impl Game for Physics {
    const NAME: &'static str = "physics";
    type Settings = PhysicsSettings;
    const PHASES: &'static [&'static str] = &["thrust", "physics", "rules"];
    /// A world of 160 bodies is about 175 KB: ten seconds of history keep
    /// 20 of them, not 600.
    const STATE_EVERY: u32 = 30;

    fn start(setup: &Setup<PhysicsSettings>) -> Physics {
        let mut world = PhysicsWorld::new();
        world.integration_parameters.dt = 1.0 / f32::from(setup.tick_rate.max(1));
        let mut handles = Vec::new();
        let mut add =
            |world: &mut PhysicsWorld, (body, collider): (RigidBodyBuilder, ColliderBuilder)| {
                let (handle, _) = world.insert(body, collider);
                handles.push(handle);
                handles.len() as u32 - 1
            };
        add(&mut world, arena::platform());
        let mut players = setup.players.clone();
        players.sort_unstable();
        players.dedup();
        let bodies = setup.settings.bodies.min(arena::MAX_BODIES);
        let rams = players
            .iter()
            .enumerate()
            .map(|(i, &player)| {
                let spawn = arena::ram_spawn(i, players.len(), bodies);
                Ram {
                    player,
                    body: add(&mut world, arena::ram(spawn)),
                    score: 0,
                    active: true,
                    spawn,
                }
            })
            .collect();
        for k in 0..u32::from(bodies) {
            add(&mut world, arena::tower_body(k));
        }
        Physics {
            tick: Tick(0),
            settings: PhysicsSettings { bodies },
            rng: Rng::new(setup.seed),
            rams,
            touched: vec![None; handles.len()],
            handles,
            world,
        }
    }

    fn step(&mut self, inputs: &[PlayerInput]) {
        self.step_phases(inputs, &mut |_, _| {});
    }

    /// Three phases: the rams' thrust, rapier's step, then the rules
    /// (contacts, falls, scores).
    fn step_phases(
        &mut self,
        inputs: &[PlayerInput],
        after: &mut dyn FnMut(&'static str, &mut Physics),
    ) {
        self.apply_thrust(inputs);
        self.trace_world();
        after("thrust", self);
        self.world.step();
        self.trace_world();
        after("physics", self);
        self.note_contacts();
        self.bring_back_fallen();
        self.tick = self.tick.next();
        self.trace_world();
        after("rules", self);
    }

    fn tick(&self) -> Tick {
        self.tick
    }

    fn hash(&self) -> u64 {
        let mut h = Fnv1a::new();
        h.write_u32(self.tick.0);
        h.write_u64(self.rng.state());
        for ram in &self.rams {
            h.write_bytes(&[ram.player.0, u8::from(ram.active)]);
            h.write_u32(ram.body);
            h.write_u32(ram.score);
        }
        for touched in &self.touched {
            h.write_bytes(&[touched.map_or(0, |p| p.0.wrapping_add(1))]);
        }
        for view in self.bodies() {
            view.hash_into(&mut h);
        }
        h.finish()
    }

    fn remove_player(&mut self, player: PlayerId) {
        if let Some(ram) = self.rams.iter_mut().find(|r| r.player == player) {
            ram.active = false;
            let handle = self.handles[ram.body as usize];
            if let Some(body) = self.world.bodies.get_mut(handle) {
                body.set_enabled(false);
            }
        }
    }

    fn add_player(&mut self, player: PlayerId) {
        let Some(i) = self
            .rams
            .iter()
            .position(|r| r.player == player && !r.active)
        else {
            return;
        };
        self.rams[i].active = true;
        let (slot, spawn) = (self.rams[i].body, self.rams[i].spawn);
        self.put_back(slot, spawn);
    }

    fn has_player(&self, player: PlayerId) -> bool {
        self.rams.iter().any(|r| r.player == player && r.active)
    }

    /// One ulp on the first ram's horizontal velocity: `bodies[1]` is the
    /// first player's ram (the platform is `bodies[0]`). Always the next
    /// bit pattern up, never a flipped bit: a fault repeated every tick
    /// must not undo itself when the step carries the last one's ulp on.
    fn nudge(&mut self) -> Option<&'static str> {
        let handle = *self.handles.get(1)?;
        let body = self.world.bodies.get_mut(handle)?;
        let v = body.linvel();
        body.set_linvel(
            Vector::new(f32::from_bits(v.x.to_bits().wrapping_add(1)), v.y),
            true,
        );
        Some("bodies[1].linvel.x")
    }

    /// rapier steps by its integration parameters' dt, which the rams'
    /// thrust reads too: a variable step is a fixed step with that dt
    /// changed for its length.
    const VARIABLE_STEP: bool = true;

    fn step_variable(&mut self, inputs: &[PlayerInput], dt: f32) -> Result<(), FixedStepOnly> {
        let tick = std::mem::replace(&mut self.world.integration_parameters.dt, dt);
        self.step(inputs);
        self.world.integration_parameters.dt = tick;
        Ok(())
    }
}

impl Physics {
    /// The settings the game was started with.
    pub fn settings(&self) -> PhysicsSettings {
        self.settings
    }

    /// Every ram, ascending by player.
    pub fn rams(&self) -> &[Ram] {
        &self.rams
    }

    /// Number of bodies, the platform included.
    pub fn body_count(&self) -> usize {
        self.handles.len()
    }

    /// The shape of body `slot`.
    pub fn shape(&self, slot: usize) -> BodyShape {
        if slot == 0 {
            return BodyShape::Platform;
        }
        if let Some(ram) = self.rams.iter().find(|r| r.body as usize == slot) {
            return BodyShape::Ram(ram.player);
        }
        let first_tower = 1 + self.rams.len();
        if arena::is_ball((slot - first_tower) as u32) {
            BodyShape::Ball
        } else {
            BodyShape::Crate
        }
    }

    /// The rapier world, to read (drawing, probes, benchmarks).
    pub fn world(&self) -> &PhysicsWorld {
        &self.world
    }

    /// Bodies awake now.
    pub fn awake(&self) -> usize {
        self.world
            .bodies
            .iter()
            .filter(|(_, b)| b.is_dynamic() && !b.is_sleeping())
            .count()
    }

    /// Contact pairs touching now.
    pub fn touching_pairs(&self) -> usize {
        self.world
            .narrow_phase
            .contact_pairs()
            .filter(|pair| pair.has_any_active_contact())
            .count()
    }

    fn apply_thrust(&mut self, inputs: &[PlayerInput]) {
        let dt = self.world.integration_parameters.dt;
        for ram in self.rams.iter().filter(|r| r.active) {
            let Some(input) = inputs.iter().find(|i| i.player == ram.player) else {
                continue;
            };
            let ([x, y], boost) = thrust(input.input);
            if x == 0.0 && y == 0.0 {
                continue;
            }
            let force = if boost { BOOST_THRUST } else { THRUST };
            if let Some(body) = self.world.bodies.get_mut(self.handles[ram.body as usize]) {
                let [x, y] = trace::trace("thrust.impulse", [x * force * dt, y * force * dt]);
                body.apply_impulse(Vector::new(x, y), true);
            }
        }
    }

    /// What the sync trace ([`lockstep_engine::trace`]) reads out of rapier
    /// after each phase, nothing in play: every body's position, rotation,
    /// velocities and sleeping state in handle order, then the impulses of
    /// its active contacts, each pair from the body with the lower slot.
    fn trace_world(&self) {
        if !trace::enabled() {
            return;
        }
        for view in self.bodies() {
            let i = view.index as usize;
            trace::trace_item(
                "body.translation",
                i,
                [view.translation.x, view.translation.y],
            );
            trace::trace_item("body.rotation", i, [view.rotation.re, view.rotation.im]);
            trace::trace_item("body.linvel", i, [view.linvel.x, view.linvel.y]);
            trace::trace_item("body.angvel", i, view.angvel);
            trace::trace_item("body.sleeping", i, view.sleeping);
        }
        for (slot, &handle) in self.handles.iter().enumerate() {
            let Some(body) = self.world.bodies.get(handle) else {
                continue;
            };
            for &collider in body.colliders() {
                for pair in self.world.narrow_phase.contact_pairs_with(collider) {
                    if pair.collider1 != collider || !pair.has_any_active_contact() {
                        continue;
                    }
                    for point in pair.manifolds().iter().flat_map(|m| &m.points) {
                        let impulse = [point.data.impulse, point.data.tangent_impulse.x];
                        trace::trace_item("contact.impulse", slot, impulse);
                    }
                }
            }
        }
    }

    /// Marks every body a ram touches now as that ram's; rams in
    /// ascending player order, so the highest id wins a shared body.
    fn note_contacts(&mut self) {
        let colliders = &self.world.colliders;
        for ram in self.rams.iter().filter(|r| r.active) {
            let Some(body) = self.world.bodies.get(self.handles[ram.body as usize]) else {
                continue;
            };
            for &collider in body.colliders() {
                for pair in self.world.narrow_phase.contact_pairs_with(collider) {
                    if !pair.has_any_active_contact() {
                        continue;
                    }
                    let other = if pair.collider1 == collider {
                        pair.collider2
                    } else {
                        pair.collider1
                    };
                    let Some(parent) = colliders.get(other).and_then(|c| c.parent()) else {
                        continue;
                    };
                    let slot = parent.into_raw_parts().0 as usize;
                    if slot != 0 && slot != ram.body as usize {
                        if let Some(t) = self.touched.get_mut(slot) {
                            *t = Some(ram.player);
                        }
                    }
                }
            }
        }
    }

    /// Every body below the drop, in slot order: it scores for the ram
    /// that touched it last and comes back.
    fn bring_back_fallen(&mut self) {
        let top = arena::towers_top(self.settings.bodies);
        for slot in 1..self.handles.len() {
            let Some(body) = self.world.bodies.get(self.handles[slot]) else {
                continue;
            };
            if !body.is_enabled() || body.translation().y >= FALL_Y {
                continue;
            }
            let owner = self.rams.iter().position(|r| r.body as usize == slot);
            let scorer =
                self.touched[slot].filter(|&p| owner.is_none_or(|o| self.rams[o].player != p));
            if let Some(ram) = scorer.and_then(|p| self.rams.iter_mut().find(|r| r.player == p)) {
                ram.score += 1;
            }
            self.touched[slot] = None;
            let spot = match owner {
                Some(o) => self.rams[o].spawn,
                None => [
                    self.rng.range_f32(-DROP_HALF_WIDTH, DROP_HALF_WIDTH),
                    top + DROP_HEIGHT + self.rng.range_f32(0.0, 4.0),
                ],
            };
            self.put_back(slot as u32, spot);
        }
    }

    /// Body `slot` at rest at `spot`, upright, enabled and awake.
    fn put_back(&mut self, slot: u32, spot: [f32; 2]) {
        let Some(body) = self.world.bodies.get_mut(self.handles[slot as usize]) else {
            return;
        };
        body.set_enabled(true);
        body.set_translation(Vector::new(spot[0], spot[1]), true);
        body.set_rotation(Rotation::IDENTITY, true);
        body.set_linvel(Vector::ZERO, true);
        body.set_angvel(0.0, true);
    }
}
