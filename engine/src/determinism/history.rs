//! The history ring: the last ticks' states, hashes and bundles, like
//! OpenRA's sync reports, so that when the server says tick `T` diverged a
//! client can still show what it had at `T` and how it got there.

use std::collections::VecDeque;

use lockstep_protocol::{Bundle, GameSpec, PlayerId, Tick};
use serde::{Deserialize, Serialize};

use crate::determinism::desync::{DesyncDump, PhaseHash, DUMP_FORMAT};
use crate::game::Game;

/// Ticks of history kept by default: 10 s at 60 Hz, far more than the
/// server needs to gather and compare one round of reports.
pub const DEFAULT_HISTORY: usize = 600;

/// One simulated tick as remembered (or the starting state, as tick 0 with
/// an empty bundle).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(bound = "G: Game")]
pub struct Remembered<G> {
    /// The bundle that was applied to reach `world`.
    pub bundle: Bundle,
    /// The state after the tick (`world.tick()` is its number).
    pub world: G,
    /// `world.hash()`.
    pub hash: u64,
}

/// The last ticks, oldest first.
#[derive(Debug)]
pub struct History<G> {
    ticks: VecDeque<Remembered<G>>,
    capacity: usize,
}

impl<G: Game> History<G> {
    /// A ring that keeps the last `capacity` ticks (at least one).
    pub fn new(capacity: usize) -> Self {
        History {
            ticks: VecDeque::new(),
            capacity: capacity.max(1),
        }
    }

    /// Remembers the tick that produced `world`. Reuses the oldest entry's
    /// allocations once the ring is full.
    pub fn record(&mut self, bundle: &Bundle, world: &G, hash: u64) {
        if self.ticks.len() == self.capacity {
            if let Some(mut oldest) = self.ticks.pop_front() {
                oldest.bundle.clone_from(bundle);
                oldest.world.clone_from(world);
                oldest.hash = hash;
                self.ticks.push_back(oldest);
                return;
            }
        }
        self.ticks.push_back(Remembered {
            bundle: bundle.clone(),
            world: world.clone(),
            hash,
        });
    }

    /// The most recent tick.
    pub fn latest(&self) -> Option<&Remembered<G>> {
        self.ticks.back()
    }

    /// The tick whose state is at `tick`, if still kept.
    pub fn at(&self, tick: Tick) -> Option<&Remembered<G>> {
        self.ticks.iter().find(|f| f.world.tick() == tick)
    }

    /// The kept hashes of ticks `from..=to`, consecutive: the tick of the
    /// first, and the hashes. `None` when none of them is kept.
    pub fn hashes(&self, from: Tick, to: Tick) -> Option<(Tick, Vec<u64>)> {
        let mut kept = self
            .ticks
            .iter()
            .filter(|f| (from..=to).contains(&f.world.tick()))
            .peekable();
        let first = kept.peek()?.world.tick();
        Some((first, kept.map(|f| f.hash).collect()))
    }

    /// Tick `tick`'s step done again from the state before it, with the
    /// hash after each phase (see [`DesyncDump::phases`]); `step` applies a
    /// bundle phase by phase ([`crate::apply_phases`], or a driver's
    /// version of it). Empty when the tick before is no longer kept.
    pub fn phases(
        &self,
        tick: Tick,
        step: impl FnOnce(&mut G, &Bundle, &mut dyn FnMut(&'static str, &mut G)),
    ) -> Vec<PhaseHash> {
        let (Some(previous), Some(at)) = (tick.0.checked_sub(1), self.at(tick)) else {
            return Vec::new();
        };
        let Some(before) = self.at(Tick(previous)) else {
            return Vec::new();
        };
        let mut world = before.world.clone();
        let mut phases = vec![PhaseHash::new("before", before.hash)];
        step(&mut world, &at.bundle, &mut |phase, world| {
            phases.push(PhaseHash::new(phase, world.hash()));
        });
        phases
    }

    /// A dump of `tick` with every kept bundle up to it, or `None` if the
    /// tick has left the ring (or not happened yet). `player` is the
    /// writer's slot, `None` for a spectator. Its phases are left empty
    /// for [`History::phases`].
    pub fn dump(
        &self,
        tick: Tick,
        spec: &GameSpec,
        player: Option<PlayerId>,
        name: &str,
    ) -> Option<DesyncDump<G>> {
        let at = self.at(tick)?;
        let inputs = self
            .ticks
            .iter()
            .filter(|f| f.world.tick() > Tick(0) && f.world.tick() <= tick)
            .map(|f| (f.world.tick(), f.bundle.clone()))
            .collect();
        Some(DesyncDump {
            format: DUMP_FORMAT,
            game: spec.clone(),
            player,
            name: name.to_string(),
            tick,
            hash: format!("{:016x}", at.hash),
            world: at.world.clone(),
            inputs,
            phases: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{play, spec, Tally};

    #[test]
    fn the_ring_keeps_only_the_last_ticks() {
        let mut history = History::new(3);
        let mut game: Tally = play(2, 0);
        for _ in 0..5 {
            game = play_on(game);
            history.record(&Bundle::default(), &game, game.hash());
        }
        assert!(history.at(Tick(2)).is_none());
        assert_eq!(history.at(Tick(5)).map(|f| f.hash), Some(game.hash()));
        let dump = history
            .dump(Tick(4), &spec(), Some(PlayerId(0)), "ada")
            .unwrap();
        assert_eq!(dump.inputs.len(), 2);
        assert_eq!(dump.world.tick(), Tick(4));
        assert!(history.dump(Tick(9), &spec(), None, "ada").is_none());
    }

    #[test]
    fn hashes_and_phases_come_only_from_kept_ticks() {
        let mut history = History::new(3);
        let mut game: Tally = play(2, 0);
        let mut hashes = Vec::new();
        for _ in 0..5 {
            game = play_on(game);
            hashes.push(game.hash());
            history.record(&Bundle::default(), &game, game.hash());
        }
        // Ticks 3 to 5 are kept.
        assert_eq!(
            history.hashes(Tick(0), Tick(4)),
            Some((Tick(3), hashes[2..4].to_vec()))
        );
        assert_eq!(history.hashes(Tick(6), Tick(9)), None);
        let phases = history.phases(Tick(4), |game, bundle, after| {
            crate::apply_phases(game, bundle, after);
        });
        let names: Vec<&str> = phases.iter().map(|p| p.phase.as_str()).collect();
        assert_eq!(names, ["before", "roster", "counters", "drift"]);
        assert_eq!(phases[0].hash, format!("{:016x}", hashes[2]));
        assert_eq!(phases[3].hash, format!("{:016x}", hashes[3]));
        // Tick 3's step starts from tick 2, which is gone.
        assert!(history.phases(Tick(3), |_, _, _| {}).is_empty());
    }

    fn play_on(mut game: Tally) -> Tally {
        game.step(&[]);
        game
    }
}
