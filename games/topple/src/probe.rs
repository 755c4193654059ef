//! Probe scenarios: small rapier worlds that use on purpose the parts of
//! rapier and parry the game keeps away from, to show whether they compute
//! the same bits on every build and target (`lockstep-topple probe`,
//! `scripts/probe-physics.sh`, DETERMINISM.md "The rapier probe").
//!
//! Every scenario is built from constants and plain arithmetic: no random
//! numbers but integer tables, no clock. A world scenario steps its world
//! at 60 Hz and hashes every body in handle order (FNV-1a over index,
//! generation, the bits of translation, rotation, velocities, and the
//! sleeping and enabled flags: [`BodyView`]). This module calls no
//! platform maths itself except where it reproduces a call of parry's
//! word for word (`bvh-log2`); the point is what rapier and parry call.
//!
//! | scenario | what it exercises |
//! |---|---|
//! | `limits-centred` | 16 revolute joints with limits symmetric about 0: rapier takes `sin_cos` of the limit centre 0 |
//! | `limits-offcentre` | the same chain with limit ranges not centred on 0: rapier takes `sin_cos` of each centre on a plain `f32`, the platform's maths library with `std` |
//! | `halfspace-ccd` | a half-space ground, thin walls and fast spinning bodies with continuous collision detection (CCD): a third of them a custom shape, which rapier sweeps through its fallback, parry's nonlinear shape cast; the half-space, a target without a sweep of its own, takes the fallback for every body (parry has no nonlinear cast against a half-space, so contacts alone stop them there) |
//! | `multibody` | a 12-link multibody (reduced-coordinates) chain falling onto the ground |
//! | `multibody-motor` | the same with a box hanging from its end by an impulse joint with a position motor: a joint with a multibody link on one side goes through rapier's generic joint constraint, which takes `sin` of a plain `f32` |
//! | `multibody-limits` | the same with that joint limited to a range not centred on 0: the generic path's `sin_cos` of the centre |
//! | `bvh-log2` | parry's BVH optimisation parameters for 1 to 200,000 leaves, with std's `f32::log2` as parry calls it: the integers that decide the rebuild |
//! | `bvh-log2-raw` | the same formula, hashing the bits of the float it rounds |
//! | `game` | the game itself, four bots, seed 1: the control |

use std::ops::RangeInclusive;

use lockstep_engine::trace::{self, Trace};
use lockstep_engine::{Bots, Game, Setup};
use lockstep_protocol::PlayerId;
use rapier2d::parry::bounding_volume::{Aabb, BoundingSphere};
use rapier2d::parry::query::{PointProjection, PointQuery, Ray, RayCast, RayIntersection};
use rapier2d::parry::shape::{
    Cuboid, FeatureId, PolygonalFeature, PolygonalFeatureMap, Shape, ShapeType, SupportMap,
    TypedShape,
};
use rapier2d::prelude::*;

use crate::arena::PhysicsSettings;
use crate::game::Physics;
use crate::state::BodyView;
use lockstep_engine::determinism::fnv::Fnv1a;

/// Every scenario, in the order `probe` runs them without names.
pub const SCENARIOS: &[&str] = &[
    "limits-centred",
    "limits-offcentre",
    "halfspace-ccd",
    "multibody",
    "multibody-motor",
    "multibody-limits",
    "bvh-log2",
    "bvh-log2-raw",
    "game",
];

/// Ticks a world scenario runs without `--ticks`.
pub const DEFAULT_TICKS: u32 = 3000;
/// Ticks between the intermediate hashes without `--every`.
pub const DEFAULT_EVERY: u32 = 500;
/// The leaf counts `bvh-log2` evaluates: `1..=BVH_LEAVES`.
pub const BVH_LEAVES: u32 = 200_000;

/// The outcome of one scenario.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The scenario's name.
    pub scenario: &'static str,
    /// Ticks stepped, or `None` for a scenario that is not a world.
    pub ticks: Option<u32>,
    /// The final hash.
    pub hash: u64,
    /// Ticks between the intermediate hashes (0: none).
    pub every: u32,
    /// The hash after every `every` ticks, in order.
    pub checkpoints: Vec<u64>,
    /// The sync trace of the ticks [`run_traced`] was asked for: the
    /// revolute chains' bodies and joints after each of those steps.
    pub trace: Trace,
}

impl Outcome {
    /// The line `probe` prints:
    /// `probe scenario=NAME ticks=N hash=H hash500=H1,H2,...`, or
    /// `probe scenario=NAME leaves=L hash=H` for the BVH scenarios.
    pub fn line(&self) -> String {
        let mut line = format!("probe scenario={}", self.scenario);
        match self.ticks {
            Some(ticks) => line.push_str(&format!(" ticks={ticks}")),
            None => line.push_str(&format!(" leaves={BVH_LEAVES}")),
        }
        line.push_str(&format!(" hash={:016x}", self.hash));
        if !self.checkpoints.is_empty() {
            let hashes: Vec<String> = self
                .checkpoints
                .iter()
                .map(|h| format!("{h:016x}"))
                .collect();
            line.push_str(&format!(" hash{}={}", self.every, hashes.join(",")));
        }
        line
    }
}

/// Runs `scenario` for `ticks` ticks, keeping a hash every `every` ticks
/// (0: none); `None` if there is no such scenario.
pub fn run(scenario: &str, ticks: u32, every: u32) -> Option<Outcome> {
    run_traced(scenario, ticks, every, None)
}

/// The scenarios [`run_traced`] traces: the revolute chains.
pub const TRACED: &[&str] = &["limits-centred", "limits-offcentre"];

/// [`run`], with the sync trace of the steps that reach the ticks in
/// `traced` in [`Outcome::trace`] (the [`TRACED`] scenarios only).
pub fn run_traced(
    scenario: &str,
    ticks: u32,
    every: u32,
    traced: Option<RangeInclusive<u32>>,
) -> Option<Outcome> {
    let name = *SCENARIOS.iter().find(|s| **s == scenario)?;
    let mut trace = Trace::default();
    let mut tracing = traced.map(|ticks| (ticks, &mut trace));
    let mut checkpoints = Vec::new();
    let mut keep = |tick: u32, hash: u64| {
        if every > 0 && tick.is_multiple_of(every) {
            checkpoints.push(hash);
        }
    };
    let (hash, ticks) = match name {
        "limits-centred" => (
            step_world(chain(centred_limits), ticks, &mut keep, tracing.take()),
            Some(ticks),
        ),
        "limits-offcentre" => (
            step_world(chain(offcentre_limits), ticks, &mut keep, tracing.take()),
            Some(ticks),
        ),
        "halfspace-ccd" => (halfspace_ccd(ticks, &mut keep), Some(ticks)),
        "multibody" => (multibody(Pendulum::None, ticks, &mut keep), Some(ticks)),
        "multibody-motor" => (multibody(Pendulum::Motor, ticks, &mut keep), Some(ticks)),
        "multibody-limits" => (multibody(Pendulum::Limits, ticks, &mut keep), Some(ticks)),
        "bvh-log2" => (bvh_log2(false), None),
        "bvh-log2-raw" => (bvh_log2(true), None),
        _ => (game(ticks, &mut keep), Some(ticks)),
    };
    Some(Outcome {
        scenario: name,
        ticks,
        hash,
        every: if ticks.is_some() { every } else { 0 },
        checkpoints,
        trace,
    })
}

/// The usage line of the `probe` command.
pub fn usage(program: &str) -> String {
    format!(
        "usage: {program} probe [--ticks N] [--every K] [--trace TICKS] [SCENARIO...]\n       scenarios: {}\n       \
         --trace T or FROM..TO prints the sync trace of those ticks' steps (scenarios {})",
        SCENARIOS.join(" "),
        TRACED.join(", ")
    )
}

/// `probe [--ticks N] [--every K] [--trace TICKS] [SCENARIO...]` (the
/// arguments after `probe`): one line per scenario, every scenario without
/// names; with `--trace`, each scenario's trace lines before its line.
pub fn command(program: &str, args: &[String]) -> Result<Vec<String>, String> {
    let (mut ticks, mut every) = (DEFAULT_TICKS, DEFAULT_EVERY);
    let mut names = Vec::new();
    let mut traced = None;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--trace" => {
                let value = rest
                    .next()
                    .ok_or_else(|| format!("--trace needs a value\n{}", usage(program)))?;
                traced = Some(trace::parse_ticks(value)?);
            }
            "--ticks" | "--every" => {
                let value = rest
                    .next()
                    .ok_or_else(|| format!("{arg} needs a value\n{}", usage(program)))?;
                let value: u32 = value
                    .parse()
                    .map_err(|_| format!("{arg}: not a number: {value:?}"))?;
                if arg == "--ticks" {
                    ticks = value;
                } else {
                    every = value;
                }
            }
            name if SCENARIOS.contains(&name) => names.push(name),
            other => return Err(format!("unknown scenario {other:?}\n{}", usage(program))),
        }
    }
    if names.is_empty() {
        names = match traced {
            Some(_) => TRACED.to_vec(),
            None => SCENARIOS.to_vec(),
        };
    }
    if let Some(name) = names
        .iter()
        .find(|n| traced.is_some() && !TRACED.contains(n))
    {
        return Err(format!(
            "--trace: the scenario {name} is not traced; {} are",
            TRACED.join(" and ")
        ));
    }
    let mut lines = Vec::new();
    for outcome in names
        .iter()
        .filter_map(|name| run_traced(name, ticks, every, traced.clone()))
    {
        lines.extend(outcome.trace.entries.iter().map(|e| e.to_line()));
        lines.push(outcome.line());
    }
    Ok(lines)
}

/// Every body of `world`, in handle-index order.
fn views(world: &PhysicsWorld) -> Vec<BodyView> {
    let mut views: Vec<BodyView> = world
        .bodies
        .iter()
        .map(|(handle, body)| BodyView::of(handle, body))
        .collect();
    views.sort_unstable_by_key(|v| v.index);
    views
}

/// FNV-1a over every body of `world` in handle-index order.
pub fn world_hash(world: &PhysicsWorld) -> u64 {
    let mut h = Fnv1a::new();
    for view in &views(world) {
        view.hash_into(&mut h);
    }
    h.finish()
}

/// A fresh world stepping at 60 Hz with the default gravity.
fn new_world() -> PhysicsWorld {
    let mut world = PhysicsWorld::new();
    world.integration_parameters.dt = 1.0 / 60.0;
    world
}

/// Steps `world` `ticks` times, passing the hash after each tick to
/// `keep`; the final hash. With `tracing`, the steps that reach its ticks
/// are traced into its [`Trace`] ([`trace_world`]).
fn step_world(
    mut world: PhysicsWorld,
    ticks: u32,
    keep: &mut dyn FnMut(u32, u64),
    mut tracing: Option<(RangeInclusive<u32>, &mut Trace)>,
) -> u64 {
    for tick in 1..=ticks {
        match tracing.as_mut() {
            Some((traced, out)) if traced.contains(&tick) => {
                let ((), trace) = trace::record(tick, || {
                    world.step();
                    trace_world(&world);
                    trace::end_phase("step");
                });
                out.entries.extend(trace.entries);
                out.dropped += trace.dropped;
            }
            _ => world.step(),
        }
        keep(tick, world_hash(&world));
    }
    world_hash(&world)
}

/// What the sync trace reads out of a probe world after a step: every
/// body in handle order, then every impulse joint in the joint set's
/// order, with the rotation of its second body relative to its first (the
/// joint's angle as a unit complex number, by products alone: no
/// `atan2`) and the impulses it applied.
fn trace_world(world: &PhysicsWorld) {
    if !trace::enabled() {
        return;
    }
    for v in &views(world) {
        let i = v.index as usize;
        trace::trace_item("body.translation", i, [v.translation.x, v.translation.y]);
        trace::trace_item("body.rotation", i, [v.rotation.re, v.rotation.im]);
        trace::trace_item("body.linvel", i, [v.linvel.x, v.linvel.y]);
        trace::trace_item("body.angvel", i, v.angvel);
    }
    for (i, (_, joint)) in world.impulse_joints.iter().enumerate() {
        let bodies = (
            world.bodies.get(joint.body1()),
            world.bodies.get(joint.body2()),
        );
        let (Some(a), Some(b)) = bodies else {
            continue;
        };
        let (a, b) = (
            BodyView::of(joint.body1(), a),
            BodyView::of(joint.body2(), b),
        );
        let (r1, r2) = (a.rotation, b.rotation);
        let relative = [r1.re * r2.re + r1.im * r2.im, r1.re * r2.im - r1.im * r2.re];
        trace::trace_item("joint.rotation", i, relative);
        trace::trace_item("joint.impulses", i, joint.impulses.to_array());
    }
}

// --- the revolute chains ---------------------------------------------------

/// Links of the revolute chains.
const CHAIN_LINKS: usize = 16;
/// Half the length of a link.
const LINK_HALF: f32 = 0.5;
/// Half the thickness of a link.
const LINK_HALF_THICKNESS: f32 = 0.1;
/// Half the range of every limit, in radians.
const LIMIT_HALF_RANGE: f32 = 0.5;
/// The limit centres of `limits-offcentre`, in units of 0.005 rad. Each
/// centre, as rapier computes it (`(min + max) * 0.5`), is one where
/// glibc's `sinf` or `cosf` and the `libm` crate's give different bits
/// (found by comparing the two over `k * 0.005` for |k| <= 300 on x86_64),
/// so the scenario is sure to reach a value the libraries disagree on.
const OFFCENTRE_K: [i32; CHAIN_LINKS] = [
    19, -96, 111, -163, 167, -199, 241, -246, -19, 96, -111, 163, -167, 199, -241, 246,
];

/// Limits symmetric about 0.
fn centred_limits(_link: usize) -> [f32; 2] {
    [-LIMIT_HALF_RANGE, LIMIT_HALF_RANGE]
}

/// Limits centred on `OFFCENTRE_K[link] * 0.005`.
fn offcentre_limits(link: usize) -> [f32; 2] {
    let centre = OFFCENTRE_K[link % CHAIN_LINKS] as f32 * 0.005;
    [centre - LIMIT_HALF_RANGE, centre + LIMIT_HALF_RANGE]
}

/// A chain of links hanging from a fixed anchor, held out horizontally at
/// the start, each joint a revolute impulse joint limited to `limits(i)`.
fn chain(limits: fn(usize) -> [f32; 2]) -> PhysicsWorld {
    let mut world = new_world();
    let link = ColliderBuilder::cuboid(LINK_HALF, LINK_HALF_THICKNESS).density(1.0);
    hang_links(&mut world, 20.0, CHAIN_LINKS, &link, |w, i, a, b, j| {
        w.insert_impulse_joint(a, b, j.limits(limits(i)));
    });
    world
}

/// Hangs `links` links shaped as `collider` from a fixed anchor at height
/// `top`, held out horizontally along +x, each joined to the one before
/// by `join(world, i, previous, link, joint)` with a revolute joint
/// between their ends (contacts off); returns the last link.
fn hang_links(
    world: &mut PhysicsWorld,
    top: f32,
    links: usize,
    collider: &ColliderBuilder,
    mut join: impl FnMut(
        &mut PhysicsWorld,
        usize,
        RigidBodyHandle,
        RigidBodyHandle,
        RevoluteJointBuilder,
    ),
) -> RigidBodyHandle {
    let mut previous =
        world.insert_body(RigidBodyBuilder::fixed().translation(Vector::new(0.0, top)));
    let mut anchor = Vector::ZERO;
    for i in 0..links {
        let x = LINK_HALF + 2.0 * LINK_HALF * i as f32;
        let (link, _) = world.insert(
            RigidBodyBuilder::dynamic().translation(Vector::new(x, top)),
            collider.clone(),
        );
        let joint = RevoluteJointBuilder::new()
            .local_anchor1(anchor)
            .local_anchor2(Vector::new(-LINK_HALF, 0.0))
            .contacts_enabled(false);
        join(world, i, previous, link, joint);
        previous = link;
        anchor = Vector::new(LINK_HALF, 0.0);
    }
    previous
}

// --- the multibody chain ---------------------------------------------------

/// Links of the multibody chain.
const MULTIBODY_LINKS: usize = 12;
/// Ticks between the kicks that swing the multibody chain again.
const MULTIBODY_KICK_EVERY: u32 = 300;

/// What hangs from the end of the multibody chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pendulum {
    /// Nothing.
    None,
    /// A box on an impulse revolute joint with a position motor.
    Motor,
    /// A box on an impulse revolute joint with limits not centred on 0.
    Limits,
}

/// A 12-link chain of multibody revolute joints (no limits, no motors)
/// from a fixed anchor 8 m above a ground box, held out horizontally at
/// the start: it swings down and its end drags on the ground; every 300
/// ticks its last link is flung up again. With a [`Pendulum`], a box
/// hangs from the last link by an impulse joint: rapier builds a joint
/// with a multibody link on one side through its generic joint
/// constraints.
fn multibody(pendulum: Pendulum, ticks: u32, keep: &mut dyn FnMut(u32, u64)) -> u64 {
    let mut world = new_world();
    world.insert(
        RigidBodyBuilder::fixed().translation(Vector::new(0.0, -0.5)),
        ColliderBuilder::cuboid(30.0, 0.5).friction(0.6),
    );
    let top = 8.0;
    let link = ColliderBuilder::cuboid(LINK_HALF, LINK_HALF_THICKNESS)
        .density(1.0)
        .friction(0.6);
    let tip = hang_links(&mut world, top, MULTIBODY_LINKS, &link, |w, _, a, b, j| {
        w.insert_multibody_joint(a, b, j);
    });
    let anchor = Vector::new(LINK_HALF, 0.0);
    if pendulum != Pendulum::None {
        let x = 2.0 * LINK_HALF * MULTIBODY_LINKS as f32 + 0.6;
        let (bob, _) = world.insert(
            RigidBodyBuilder::dynamic().translation(Vector::new(x, top)),
            ColliderBuilder::cuboid(0.6, 0.2).density(2.0),
        );
        let joint = RevoluteJointBuilder::new()
            .local_anchor1(anchor)
            .local_anchor2(Vector::new(-0.6, 0.0))
            .contacts_enabled(false);
        let joint = if pendulum == Pendulum::Motor {
            joint.motor_position(0.7, 40.0, 4.0)
        } else {
            joint.limits(offcentre_limits(0))
        };
        world.insert_impulse_joint(tip, bob, joint);
    }
    for tick in 0..ticks {
        if tick > 0 && tick.is_multiple_of(MULTIBODY_KICK_EVERY) {
            if let Some(body) = world.bodies.get_mut(tip) {
                let round = (tick / MULTIBODY_KICK_EVERY) % 4;
                body.set_linvel(Vector::new(2.0 * round as f32 - 3.0, 12.0), true);
            }
        }
        world.step();
        keep(tick + 1, world_hash(&world));
    }
    world_hash(&world)
}

// --- continuous collision detection against a half-space -------------------

/// Fast bodies of `halfspace-ccd`.
const FAST_BODIES: u32 = 24;
/// Ticks between the kicks that throw every fast body again.
const KICK_EVERY: u32 = 300;

/// A half-space ground, two thin walls and three thin posts, all fixed,
/// and 24 fast spinning bodies with CCD on (cuboids, balls and [`Slab`]s
/// in turn), thrown again every 300 ticks at 40 to 58 m/s: far more than
/// a wall's 0.1 m per 1/60 s step.
fn halfspace_ccd(ticks: u32, keep: &mut dyn FnMut(u32, u64)) -> u64 {
    let mut world = new_world();
    world.insert(
        RigidBodyBuilder::fixed(),
        ColliderBuilder::new(SharedShape::halfspace(Vector::Y))
            .friction(0.5)
            .restitution(0.3),
    );
    for (x, half_height) in [
        (-15.0, 10.0),
        (15.0, 10.0),
        (-6.0, 1.5),
        (0.0, 1.5),
        (6.0, 1.5),
    ] {
        world.insert(
            RigidBodyBuilder::fixed().translation(Vector::new(x, half_height)),
            ColliderBuilder::cuboid(0.05, half_height).restitution(0.3),
        );
    }
    let mut fast = Vec::new();
    for i in 0..FAST_BODIES {
        let collider = match i % 3 {
            0 => ColliderBuilder::cuboid(0.25, 0.25),
            1 => ColliderBuilder::ball(0.25),
            _ => ColliderBuilder::new(SharedShape::new(Slab(Cuboid::new(Vector::new(0.3, 0.1))))),
        };
        let (body, _) = world.insert(
            RigidBodyBuilder::dynamic()
                .translation(Vector::new(-12.0 + i as f32, 6.0 + (i % 4) as f32))
                .ccd_enabled(true),
            collider.density(1.0).restitution(0.4).friction(0.4),
        );
        fast.push(body);
    }
    for tick in 0..ticks {
        if tick.is_multiple_of(KICK_EVERY) {
            let round = tick / KICK_EVERY;
            for (i, &handle) in (0u32..).zip(&fast) {
                let Some(body) = world.bodies.get_mut(handle) else {
                    continue;
                };
                let sign = if (i + round).is_multiple_of(2) {
                    1.0
                } else {
                    -1.0
                };
                let speed = 40.0 + 3.0 * ((i + round) % 7) as f32;
                let drop = 20.0 + 2.0 * ((i + 2 * round) % 5) as f32;
                let spin = 30.0 + 5.0 * ((i + round) % 6) as f32;
                body.set_linvel(Vector::new(sign * speed, -drop), true);
                body.set_angvel(-sign * spin, true);
            }
        }
        world.step();
        keep(tick + 1, world_hash(&world));
    }
    world_hash(&world)
}

/// A custom shape: a cuboid under another name. rapier's continuous
/// collision detection has an exact sweep for its own shapes only and
/// falls back to parry's nonlinear shape cast for a custom one; contacts
/// go through the support-map and polygonal-feature paths.
#[derive(Debug, Clone, Copy)]
struct Slab(Cuboid);

impl RayCast for Slab {
    fn cast_local_ray_and_get_normal(
        &self,
        ray: &Ray,
        max_time_of_impact: f32,
        solid: bool,
    ) -> Option<RayIntersection> {
        self.0
            .cast_local_ray_and_get_normal(ray, max_time_of_impact, solid)
    }
}

impl PointQuery for Slab {
    fn project_local_point(&self, pt: Vector, solid: bool) -> PointProjection {
        self.0.project_local_point(pt, solid)
    }

    fn project_local_point_and_get_feature(&self, pt: Vector) -> (PointProjection, FeatureId) {
        self.0.project_local_point_and_get_feature(pt)
    }
}

impl SupportMap for Slab {
    fn local_support_point(&self, dir: Vector) -> Vector {
        self.0.local_support_point(dir)
    }
}

impl PolygonalFeatureMap for Slab {
    fn local_support_feature(&self, dir: Vector, out_feature: &mut PolygonalFeature) {
        self.0.local_support_feature(dir, out_feature);
    }
}

impl Shape for Slab {
    fn compute_local_aabb(&self) -> Aabb {
        self.0.compute_local_aabb()
    }

    fn compute_local_bounding_sphere(&self) -> BoundingSphere {
        self.0.compute_local_bounding_sphere()
    }

    fn clone_dyn(&self) -> Box<dyn Shape> {
        Box::new(*self)
    }

    fn scale_dyn(&self, scale: Vector, _num_subdivisions: u32) -> Option<Box<dyn Shape>> {
        Some(Box::new(Slab(self.0.scaled(scale))))
    }

    fn mass_properties(&self, density: f32) -> MassProperties {
        self.0.mass_properties(density)
    }

    fn shape_type(&self) -> ShapeType {
        ShapeType::Custom
    }

    fn as_typed_shape(&self) -> TypedShape<'_> {
        TypedShape::Custom(self)
    }

    fn ccd_thickness(&self) -> f32 {
        self.0.ccd_thickness()
    }

    fn ccd_angular_thickness(&self) -> f32 {
        self.0.ccd_angular_thickness()
    }

    fn is_convex(&self) -> bool {
        true
    }

    fn as_support_map(&self) -> Option<&dyn SupportMap> {
        Some(self)
    }

    fn as_polygonal_feature_map(&self) -> Option<(&dyn PolygonalFeatureMap, f32)> {
        Some((self, 0.0))
    }
}

// --- parry's BVH optimisation parameters -----------------------------------

/// For every leaf count `1..=BVH_LEAVES`, parry's incremental BVH
/// optimisation parameters (parry2d 0.31.1,
/// `src/partitioning/bvh/bvh_optimize.rs`, `Bvh::optimization_config`),
/// computed as parry computes them: the integers that decide how much of
/// the tree is rebuilt, or with `raw` the bits of the float that is
/// rounded to the last of them.
fn bvh_log2(raw: bool) -> u64 {
    const TARGET_REBUILD_NODE_PERCENTAGE: u32 = 5;
    let mut h = Fnv1a::new();
    for num_leaves in 1..=BVH_LEAVES {
        let num_optimized_leaves = (num_leaves * TARGET_REBUILD_NODE_PERCENTAGE).div_ceil(100);
        let num_leaves_sqrt = (num_leaves as f32).sqrt();
        let target_root_node_count = num_leaves_sqrt.ceil();
        let target_subtree_leaf_count = (num_leaves_sqrt * 4.0).ceil();
        // Deliberately parry's own expression, std's `f32::log2` (the
        // platform's `log2f`) included: this scenario shows what that call
        // computes on each target.
        #[allow(clippy::disallowed_methods)]
        let root_refinement_cost = target_root_node_count * target_root_node_count.log2()
            / (target_subtree_leaf_count * target_subtree_leaf_count.log2());
        let unrounded =
            num_optimized_leaves as f32 / target_subtree_leaf_count - root_refinement_cost;
        if raw {
            h.write_f32(root_refinement_cost);
            h.write_f32(unrounded);
        } else {
            // parry writes `.round().max(0.0) as usize`; the cast saturates
            // below 0 as the comparison does.
            let rounded = unrounded.round();
            let count = if rounded > 0.0 { rounded as u64 } else { 0 };
            h.write_u64(target_root_node_count as u64);
            h.write_u64(target_subtree_leaf_count as u64);
            h.write_u64(count);
        }
    }
    h.finish()
}

// --- the game ----------------------------------------------------------------

/// The game with its default settings, four bots and seed 1, stepped as
/// [`lockstep_engine::offline`] steps it; the game's own hash.
fn game(ticks: u32, keep: &mut dyn FnMut(u32, u64)) -> u64 {
    let setup = game_setup();
    let mut game = Physics::start(&setup);
    let mut bots = Bots::<Physics>::new(setup.seed, &setup.players);
    for tick in 1..=ticks {
        let inputs = bots.inputs(&game);
        game.step(&inputs);
        keep(tick, game.hash());
    }
    game.hash()
}

/// The control game's setup.
fn game_setup() -> Setup<PhysicsSettings> {
    Setup {
        seed: 1,
        tick_rate: 60,
        settings: PhysicsSettings::default(),
        players: (0..4).map(PlayerId).collect(),
    }
}

#[cfg(test)]
mod tests;
