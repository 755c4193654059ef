//! What the state is made of for everyone but the step: its copies, its
//! snapshot, its comparison and the per-body view the hash and the desync
//! diff read.
//!
//! rapier's `PhysicsWorld` has no `Clone`, `PartialEq` or `Debug`. A copy
//! clones every set and starts the pipelines fresh, as loading a snapshot
//! does (rapier skips them: they are workspaces). Two states are equal
//! when their snapshots are the same bytes. A snapshot is postcard of the
//! whole world plus the game's fields; JSON (a desync dump) adds every
//! body as named fields (`bodies[17].linvel.y`) before the world, which
//! it carries as base64 of the same postcard bytes.

use base64::Engine as _;
use lockstep_protocol::{PlayerId, Tick};
use rapier2d::prelude::*;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::arena::PhysicsSettings;
use crate::game::{Physics, Ram};
use lockstep_engine::determinism::fnv::Fnv1a;
use lockstep_rng::Rng;

/// A vector, as the desync diff names its parts.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct V2 {
    /// Right.
    pub x: f32,
    /// Up.
    pub y: f32,
}

/// A rotation as rapier keeps it: a unit complex number.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rot {
    /// Cosine of the angle.
    pub re: f32,
    /// Sine of the angle.
    pub im: f32,
}

/// One body as the hash reads it, in handle order.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BodyView {
    /// Its handle's index (its slot).
    pub index: u32,
    /// Its handle's generation.
    pub generation: u32,
    /// Where its centre is.
    pub translation: V2,
    /// Its rotation.
    pub rotation: Rot,
    /// Its linear velocity.
    pub linvel: V2,
    /// Its angular velocity.
    pub angvel: f32,
    /// Whether rapier has put it to sleep.
    pub sleeping: bool,
    /// Whether it takes part (a departed player's ram does not).
    pub enabled: bool,
}

impl BodyView {
    /// The view of `body`, whose handle is `handle`.
    pub(crate) fn of(handle: RigidBodyHandle, body: &RigidBody) -> BodyView {
        let (index, generation) = handle.into_raw_parts();
        let (t, r, v) = (body.translation(), body.rotation(), body.linvel());
        BodyView {
            index,
            generation,
            translation: V2 { x: t.x, y: t.y },
            rotation: Rot { re: r.re, im: r.im },
            linvel: V2 { x: v.x, y: v.y },
            angvel: body.angvel(),
            sleeping: body.is_sleeping(),
            enabled: body.is_enabled(),
        }
    }

    pub(crate) fn hash_into(&self, h: &mut Fnv1a) {
        h.write_u32(self.index);
        h.write_u32(self.generation);
        for v in [
            self.translation.x,
            self.translation.y,
            self.rotation.re,
            self.rotation.im,
            self.linvel.x,
            self.linvel.y,
            self.angvel,
        ] {
            h.write_f32(v);
        }
        h.write_bool(self.sleeping);
        h.write_bool(self.enabled);
    }
}

impl Physics {
    /// Every body in handle order.
    pub fn bodies(&self) -> impl Iterator<Item = BodyView> + '_ {
        self.handles.iter().filter_map(|&handle| {
            let body = self.world.bodies.get(handle)?;
            Some(BodyView::of(handle, body))
        })
    }

    /// The snapshot bytes of the state (postcard).
    pub fn snapshot_bytes(&self) -> Vec<u8> {
        // Every field is plain data: encoding into memory cannot fail.
        postcard::to_stdvec(self).unwrap_or_default()
    }
}

impl Clone for Physics {
    fn clone(&self) -> Physics {
        let w = &self.world;
        Physics {
            tick: self.tick,
            settings: self.settings,
            rng: self.rng,
            rams: self.rams.clone(),
            touched: self.touched.clone(),
            handles: self.handles.clone(),
            world: PhysicsWorld {
                gravity: w.gravity,
                integration_parameters: w.integration_parameters,
                physics_pipeline: PhysicsPipeline::new(),
                collision_pipeline: CollisionPipeline::new(),
                islands: w.islands.clone(),
                broad_phase: w.broad_phase.clone(),
                narrow_phase: w.narrow_phase.clone(),
                bodies: w.bodies.clone(),
                colliders: w.colliders.clone(),
                impulse_joints: w.impulse_joints.clone(),
                multibody_joints: w.multibody_joints.clone(),
                soft_bodies: w.soft_bodies.clone(),
                ccd_solver: CCDSolver::new(),
            },
        }
    }
}

impl PartialEq for Physics {
    fn eq(&self, other: &Physics) -> bool {
        self.snapshot_bytes() == other.snapshot_bytes()
    }
}

impl std::fmt::Debug for Physics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use lockstep_engine::Game;
        f.debug_struct("Physics")
            .field("tick", &self.tick)
            .field("hash", &format_args!("{:016x}", self.hash()))
            .field("bodies", &self.handles.len())
            .field("rams", &self.rams)
            .finish_non_exhaustive()
    }
}

/// The game's fields, shared by both forms.
#[derive(Serialize, Deserialize)]
struct Fields<R> {
    tick: Tick,
    settings: PhysicsSettings,
    rng: Rng,
    rams: R,
    touched: Vec<Option<PlayerId>>,
}

#[derive(Serialize)]
struct Binary<'a> {
    fields: Fields<&'a [Ram]>,
    world: &'a PhysicsWorld,
}

#[derive(Deserialize)]
struct BinaryOwned {
    fields: Fields<Vec<Ram>>,
    world: PhysicsWorld,
}

#[derive(Serialize)]
struct Readable<'a> {
    #[serde(flatten)]
    fields: Fields<&'a [Ram]>,
    bodies: Vec<BodyView>,
    world: String,
}

#[derive(Deserialize)]
struct ReadableOwned {
    #[serde(flatten)]
    fields: Fields<Vec<Ram>>,
    /// Derived from `world`; read to be skipped.
    #[allow(dead_code)]
    bodies: serde::de::IgnoredAny,
    world: String,
}

impl Serialize for Physics {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let fields = Fields {
            tick: self.tick,
            settings: self.settings,
            rng: self.rng,
            rams: self.rams.as_slice(),
            touched: self.touched.clone(),
        };
        if serializer.is_human_readable() {
            let world = postcard::to_stdvec(&self.world).map_err(serde::ser::Error::custom)?;
            Readable {
                fields,
                bodies: self.bodies().collect(),
                world: base64::engine::general_purpose::STANDARD.encode(world),
            }
            .serialize(serializer)
        } else {
            Binary {
                fields,
                world: &self.world,
            }
            .serialize(serializer)
        }
    }
}

impl<'de> Deserialize<'de> for Physics {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Physics, D::Error> {
        let (fields, world) = if deserializer.is_human_readable() {
            let readable = ReadableOwned::deserialize(deserializer)?;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(readable.world)
                .map_err(serde::de::Error::custom)?;
            let world: PhysicsWorld =
                postcard::from_bytes(&bytes).map_err(serde::de::Error::custom)?;
            (readable.fields, world)
        } else {
            let binary = BinaryOwned::deserialize(deserializer)?;
            (binary.fields, binary.world)
        };
        Physics::assemble(fields, world).map_err(serde::de::Error::custom)
    }
}

impl Physics {
    /// A state from its parts, checked: every ram and mark names a body
    /// the world has, and the bodies are slots `0..n`, as the game makes
    /// them.
    fn assemble(fields: Fields<Vec<Ram>>, world: PhysicsWorld) -> Result<Physics, String> {
        let mut handles: Vec<RigidBodyHandle> = world.bodies.iter().map(|(h, _)| h).collect();
        handles.sort_unstable_by_key(|h| h.into_raw_parts().0);
        if handles
            .iter()
            .enumerate()
            .any(|(slot, h)| h.into_raw_parts().0 as usize != slot)
        {
            return Err("the bodies are not numbered 0..n as the game makes them".into());
        }
        if fields.touched.len() != handles.len() {
            return Err(format!(
                "{} marks for {} bodies",
                fields.touched.len(),
                handles.len()
            ));
        }
        if fields.rams.iter().any(|r| r.body as usize >= handles.len())
            || !fields.rams.windows(2).all(|w| w[0].player < w[1].player)
        {
            return Err("a ram names no body, or the rams are not ascending".into());
        }
        Ok(Physics {
            tick: fields.tick,
            settings: fields.settings,
            rng: fields.rng,
            rams: fields.rams,
            touched: fields.touched,
            handles,
            world,
        })
    }
}
