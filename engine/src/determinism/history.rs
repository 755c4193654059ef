//! The history ring: the last ticks' states, hashes and bundles, like
//! OpenRA's sync reports, so that when the server says tick `T` diverged a
//! client can still show what it had at `T` and how it got there.

use std::borrow::Cow;
use std::collections::VecDeque;

use lockstep_protocol::{Bundle, GameSpec, PlayerId, Tick};
use serde::{Deserialize, Serialize};

use crate::determinism::desync::{DesyncDump, PhaseHash, DUMP_FORMAT};
use crate::game::Game;
use crate::trace::{self, Trace};

/// Ticks of history kept by default: 10 s at 60 Hz, far more than the
/// server needs to gather and compare one round of reports.
pub const DEFAULT_HISTORY: usize = 600;

/// One simulated tick as remembered (or the starting state, as tick 0 with
/// an empty bundle).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(bound = "G: Game")]
pub struct Remembered<G> {
    /// The bundle that was applied to reach this tick.
    pub bundle: Bundle,
    /// The tick: the state after it is the one remembered.
    pub tick: Tick,
    /// The whole state, on a keyframe ([`Game::STATE_EVERY`]); between
    /// keyframes it is the keyframe's stepped on with the bundles.
    pub world: Option<G>,
    /// The state's hash.
    pub hash: u64,
}

/// The last ticks, oldest first.
#[derive(Debug)]
pub struct History<G> {
    ticks: VecDeque<Remembered<G>>,
    capacity: usize,
    every: u32,
}

impl<G: Game> History<G> {
    /// A ring that keeps the last `capacity` ticks (at least one), the
    /// whole state of every one.
    pub fn new(capacity: usize) -> Self {
        History::with_keyframes(capacity, 1)
    }

    /// A ring that keeps the last `capacity` ticks, the whole state of
    /// every `every`th tick (and of the first after a gap); the others are
    /// stepped on from it when asked for.
    pub fn with_keyframes(capacity: usize, every: u32) -> Self {
        History {
            ticks: VecDeque::new(),
            capacity: capacity.max(1),
            every: every.max(1),
        }
    }

    /// Remembers the tick that produced `world`. Reuses the oldest entry's
    /// allocations once the ring is full.
    pub fn record(&mut self, bundle: &Bundle, world: &G, hash: u64) {
        let tick = world.tick();
        let follows = self
            .ticks
            .back()
            .is_some_and(|last| last.tick.next() == tick);
        let keyframe = !follows || tick.0.is_multiple_of(self.every);
        let mut entry = match self.ticks.len() == self.capacity {
            true => self.ticks.pop_front(),
            false => None,
        }
        .unwrap_or_else(|| Remembered {
            bundle: Bundle::default(),
            tick,
            world: None,
            hash,
        });
        entry.bundle.clone_from(bundle);
        entry.tick = tick;
        entry.hash = hash;
        match (keyframe, &mut entry.world) {
            (true, Some(kept)) => kept.clone_from(world),
            (true, None) => entry.world = Some(world.clone()),
            (false, kept) => *kept = None,
        }
        self.ticks.push_back(entry);
    }

    /// The most recent tick.
    pub fn latest(&self) -> Option<&Remembered<G>> {
        self.ticks.back()
    }

    /// The entry of `tick`, if still kept.
    fn entry(&self, tick: Tick) -> Option<(usize, &Remembered<G>)> {
        let first = self.ticks.front()?.tick;
        let i = usize::try_from(tick.0.checked_sub(first.0)?).ok()?;
        self.ticks
            .get(i)
            .filter(|e| e.tick == tick)
            .map(|e| (i, e))
            .or_else(|| self.ticks.iter().enumerate().find(|(_, e)| e.tick == tick))
    }

    /// The state after `tick`, if still kept: the keyframe's, or stepped on
    /// from the last keyframe before it with the kept bundles.
    pub fn at(&self, tick: Tick) -> Option<Cow<'_, G>> {
        let (i, entry) = self.entry(tick)?;
        if let Some(world) = &entry.world {
            return Some(Cow::Borrowed(world));
        }
        let from = (0..i).rev().find(|&k| self.ticks[k].world.is_some())?;
        let mut world = self.ticks[from].world.clone()?;
        for later in self.ticks.range(from + 1..=i) {
            crate::game::apply(&mut world, &later.bundle);
        }
        Some(Cow::Owned(world))
    }

    /// The hash of `tick`, if still kept.
    pub fn hash_at(&self, tick: Tick) -> Option<u64> {
        self.entry(tick).map(|(_, e)| e.hash)
    }

    /// The kept hashes of ticks `from..=to`, consecutive: the tick of the
    /// first, and the hashes. `None` when none of them is kept.
    pub fn hashes(&self, from: Tick, to: Tick) -> Option<(Tick, Vec<u64>)> {
        let mut kept = self
            .ticks
            .iter()
            .filter(|f| (from..=to).contains(&f.tick))
            .peekable();
        let first = kept.peek()?.tick;
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
        self.redo(tick, step).0
    }

    /// [`History::phases`] with the values the step traced ([`crate::trace`],
    /// each credited to its phase): what a desync dump holds. The trace is
    /// `None` when the tick before is no longer kept.
    pub fn redo(
        &self,
        tick: Tick,
        step: impl FnOnce(&mut G, &Bundle, &mut dyn FnMut(&'static str, &mut G)),
    ) -> (Vec<PhaseHash>, Option<Trace>) {
        let (Some(previous), Some((_, at))) = (tick.0.checked_sub(1), self.entry(tick)) else {
            return (Vec::new(), None);
        };
        let (Some(before), Some(hash)) = (self.at(Tick(previous)), self.hash_at(Tick(previous)))
        else {
            return (Vec::new(), None);
        };
        let mut world = before.into_owned();
        let mut phases = vec![PhaseHash::new("before", hash)];
        let ((), trace) = trace::record(tick.0, || {
            step(&mut world, &at.bundle, &mut |phase, world| {
                trace::end_phase(phase);
                phases.push(PhaseHash::new(phase, world.hash()));
            });
        });
        (phases, Some(trace))
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
        let hash = self.hash_at(tick)?;
        let world = self.at(tick)?.into_owned();
        let inputs = self
            .ticks
            .iter()
            .filter(|f| f.tick > Tick(0) && f.tick <= tick)
            .map(|f| (f.tick, f.bundle.clone()))
            .collect();
        Some(DesyncDump {
            format: DUMP_FORMAT,
            game: spec.clone(),
            player,
            name: name.to_string(),
            tick,
            hash: format!("{hash:016x}"),
            world,
            inputs,
            phases: Vec::new(),
            trace: None,
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
        assert_eq!(history.hash_at(Tick(5)), Some(game.hash()));
        assert_eq!(history.at(Tick(5)).map(|w| w.hash()), Some(game.hash()));
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

    #[test]
    fn a_ring_of_keyframes_gives_every_kept_tick_as_a_ring_of_every_state_does() {
        let (mut dense, mut sparse) = (History::new(10), History::with_keyframes(10, 4));
        let mut game: Tally = play(3, 0);
        for t in 0..23u8 {
            let bundle = Bundle {
                inputs: vec![lockstep_protocol::PlayerInput {
                    player: PlayerId(t % 3),
                    input: lockstep_protocol::Input {
                        buttons: lockstep_protocol::Buttons(t & 0x1f),
                        axes: None,
                    },
                }],
                ..Bundle::default()
            };
            crate::apply(&mut game, &bundle);
            dense.record(&bundle, &game, game.hash());
            sparse.record(&bundle, &game, game.hash());
        }
        let kept = sparse.ticks.iter().filter(|e| e.world.is_some()).count();
        assert!(kept <= 3, "{kept} whole states kept");
        // Ticks 14 to 23 are in both rings; 14 and 15 come before the
        // first kept keyframe (16), so the sparse ring cannot give them.
        for tick in 16..=23 {
            let tick = Tick(tick);
            assert_eq!(sparse.at(tick), dense.at(tick), "tick {tick}");
            assert_eq!(sparse.hash_at(tick), dense.hash_at(tick));
            let step =
                |g: &mut Tally, b: &Bundle, after: &mut dyn FnMut(&'static str, &mut Tally)| {
                    crate::apply_phases(g, b, after);
                };
            if tick > Tick(16) {
                assert_eq!(sparse.phases(tick, step), dense.phases(tick, step));
            }
            assert_eq!(
                sparse.dump(tick, &spec(), None, "ada"),
                dense.dump(tick, &spec(), None, "ada")
            );
        }
        assert!(sparse.at(Tick(15)).is_none());
        assert!(dense.at(Tick(15)).is_some());
    }

    #[test]
    fn the_first_tick_after_a_gap_is_kept_whole() {
        let mut history = History::with_keyframes(10, 50);
        let game: Tally = play(2, 7);
        history.record(&Bundle::default(), &game, game.hash());
        let later = play(2, 9);
        history.record(&Bundle::default(), &later, later.hash());
        assert_eq!(history.at(Tick(7)).map(|w| w.hash()), Some(game.hash()));
        assert_eq!(history.at(Tick(9)).map(|w| w.hash()), Some(later.hash()));
    }

    fn play_on(mut game: Tally) -> Tally {
        game.step(&[]);
        game
    }
}
