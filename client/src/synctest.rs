//! `lockstep-client synctest`: proves that a snapshot and the hash cover the
//! whole simulation state, by restoring and re-simulating (GGRS's
//! `SyncTestSession`, without the session).
//!
//! # How it works
//!
//! The offline game (a bot for every player, exactly as `lockstep-client
//! sim` plays it) runs straight ahead. At every tick `t` the checker
//!
//! 1. serializes the state with postcard and checks that the deserialized
//!    copy has the original's hash ([`Check::RestoredHash`]);
//! 2. restores the snapshot of tick `t - check_distance`, replays the inputs
//!    the straight run recorded since, and checks that the result has the
//!    straight run's hash ([`Check::ResimulatedHash`]) and is equal to it
//!    field by field ([`Check::ResimulatedState`]).
//!
//! The first failed check ends the run with [`SyncTestError::Mismatch`].
//!
//! The checker keeps serialized bytes, not clones. A clone copies every
//! field, while a snapshot only carries what serde sees, and a field that
//! serialization drops is exactly what this test is for: a lockstep peer
//! that rolls back, or joins from a snapshot, would silently drift.
//!
//! Only the last `check_distance + 1` snapshots and `check_distance` inputs
//! are kept (two rings), so memory does not grow with the number of ticks;
//! time is about `check_distance + 1` steps per tick.
//!
//! The hash compares bit patterns and `PartialEq` compares values, so
//! together they see both a `-0.0` that became `0.0` and a field the hash
//! leaves out.

use std::collections::VecDeque;
use std::fmt;

use lockstep_protocol::PlayerInput;
use serde::de::DeserializeOwned;
use serde::Serialize;

use lockstep_sim::offline::SimOptions;
use lockstep_sim::World;

/// Parameters of a sync test.
#[derive(Debug, Clone, Copy)]
pub struct SyncTestOptions {
    /// The offline game to run.
    pub sim: SimOptions,
    /// Ticks between the restored snapshot and the checked tick. Longer
    /// distances let a forgotten field do more damage before the check;
    /// 0 checks only the serialization round trip.
    pub check_distance: u32,
}

/// A passed sync test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyncTestReport {
    /// Ticks run.
    pub tick: u32,
    /// Hash after the last tick: the same as `lockstep-client sim` with the
    /// same options, since the straight run is that game.
    pub hash: u64,
}

/// Which comparison of a sync test failed, and what it points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// A snapshot, deserialized, hashes differently from the state it was
    /// taken from: the hash covers something serialization drops.
    RestoredHash,
    /// Re-simulating from an earlier snapshot ends on a different hash than
    /// the straight run: the snapshot drops state that affects the future,
    /// or a step is not deterministic.
    ResimulatedHash,
    /// Re-simulating from an earlier snapshot ends on the straight run's
    /// hash but on a different state: the hash misses state that the
    /// snapshot drops too.
    ResimulatedState,
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Check::RestoredHash => {
                "the deserialized snapshot hashes differently from the state it was taken from \
                 (the hash covers something serialization drops)"
            }
            Check::ResimulatedHash => {
                "re-simulating from an earlier snapshot ends on a different hash \
                 (the snapshot drops state that matters, or a step is not deterministic)"
            }
            Check::ResimulatedState => {
                "re-simulating from an earlier snapshot ends on the same hash but a different \
                 state (the hash misses state that the snapshot drops too)"
            }
        })
    }
}

/// Why a sync test failed.
#[derive(Debug, thiserror::Error)]
pub enum SyncTestError {
    /// A check failed; this is the first one, in tick order.
    #[error("sync test failed at tick {tick}: {check}; expected hash {expected:016x}, got {actual:016x}")]
    Mismatch {
        /// The tick whose state failed the check: the snapshot's tick for
        /// [`Check::RestoredHash`], the re-simulated tick otherwise.
        tick: u32,
        /// Hash of the straight run's state at `tick`.
        expected: u64,
        /// Hash of the restored (and re-simulated) state at `tick`.
        actual: u64,
        /// The comparison that failed.
        check: Check,
    },
    /// A state could not be serialized, or its bytes not deserialized.
    #[error("the snapshot of tick {tick} does not round-trip through postcard")]
    Snapshot {
        /// The tick of the state being saved or restored.
        tick: u32,
        /// What postcard reported.
        source: postcard::Error,
    },
    /// The run would end before any tick could be re-simulated, so passing
    /// would prove nothing.
    #[error("{ticks} ticks are fewer than the check distance {check_distance}: nothing would be re-simulated")]
    TooFewTicks {
        /// Ticks asked for.
        ticks: u32,
        /// Check distance asked for.
        check_distance: u32,
    },
}

/// Runs the offline game of `options.sim` under the sync test and returns
/// its final tick and hash.
///
/// # Errors
///
/// The first failed check, a snapshot postcard cannot handle, or a run too
/// short to check anything; see [`SyncTestError`].
pub fn run(options: SyncTestOptions) -> Result<SyncTestReport, SyncTestError> {
    let (world, mut bots) = lockstep_sim::offline::setup(options.sim);
    let world = check(
        world,
        |world| bots.inputs(world),
        options.sim.ticks,
        options.check_distance,
    )?;
    Ok(SyncTestReport {
        tick: world.tick().0,
        hash: world.hash(),
    })
}

/// A game the checker can drive: deterministic steps, a hash meant to cover
/// the whole state, equality, and serde for snapshots. The real world
/// implements it, and so do the deliberately broken toy games of the tests,
/// which show that each check catches the flaw it is for.
trait Checked: PartialEq + Serialize + DeserializeOwned {
    /// One tick of input: recorded by the straight run, replayed after a
    /// restore. Bots are not part of the game; they only choose inputs.
    type Input;

    /// Advances one tick.
    fn step(&mut self, input: &Self::Input);

    /// Checksum of the state, as peers would compare it.
    fn hash(&self) -> u64;
}

impl Checked for World {
    type Input = Vec<PlayerInput>;

    fn step(&mut self, inputs: &Vec<PlayerInput>) {
        World::step(self, inputs);
    }

    fn hash(&self) -> u64 {
        World::hash(self)
    }
}

/// A state as the checker keeps it.
struct Snapshot {
    /// The tick it was taken at.
    tick: u32,
    /// The state, serialized.
    bytes: Vec<u8>,
    /// The hash of the state the bytes were taken from (not of the
    /// deserialized copy, which is the point of comparing them).
    hash: u64,
}

impl Snapshot {
    /// Serializes `game` and checks the round trip against its hash.
    fn take<G: Checked>(game: &G, tick: u32) -> Result<Snapshot, SyncTestError> {
        let bytes =
            postcard::to_stdvec(game).map_err(|source| SyncTestError::Snapshot { tick, source })?;
        let snapshot = Snapshot {
            tick,
            bytes,
            hash: game.hash(),
        };
        let restored: G = snapshot.restore()?;
        let actual = restored.hash();
        if actual != snapshot.hash {
            return Err(SyncTestError::Mismatch {
                tick,
                expected: snapshot.hash,
                actual,
                check: Check::RestoredHash,
            });
        }
        Ok(snapshot)
    }

    /// A new state from the bytes alone: whatever they do not carry is lost.
    fn restore<G: Checked>(&self) -> Result<G, SyncTestError> {
        postcard::from_bytes(&self.bytes).map_err(|source| SyncTestError::Snapshot {
            tick: self.tick,
            source,
        })
    }
}

/// Runs `game` straight for `ticks` ticks with the inputs `next_input`
/// chooses, checking every tick as the module docs describe, and returns
/// the final state.
fn check<G: Checked>(
    mut game: G,
    mut next_input: impl FnMut(&G) -> G::Input,
    ticks: u32,
    check_distance: u32,
) -> Result<G, SyncTestError> {
    if ticks < check_distance {
        return Err(SyncTestError::TooFewTicks {
            ticks,
            check_distance,
        });
    }
    let distance = check_distance as usize;
    // After trimming: the snapshots of ticks t-D..=t and the inputs that led
    // from each of them to the next.
    let mut snapshots: VecDeque<Snapshot> = VecDeque::new();
    let mut inputs: VecDeque<G::Input> = VecDeque::new();
    for tick in 0..=ticks {
        let snapshot = Snapshot::take(&game, tick)?;
        let hash = snapshot.hash;
        snapshots.push_back(snapshot);
        if snapshots.len() > distance + 1 {
            snapshots.pop_front();
        }
        if inputs.len() > distance {
            inputs.pop_front();
        }
        if snapshots.len() == distance + 1 {
            resimulate(&snapshots[0], &inputs, &game, tick, hash)?;
        }
        if tick < ticks {
            let input = next_input(&game);
            game.step(&input);
            inputs.push_back(input);
        }
    }
    Ok(game)
}

/// Restores `from`, replays `inputs` and compares the result with the
/// straight run's state at `tick`, whose hash is `expected`.
fn resimulate<G: Checked>(
    from: &Snapshot,
    inputs: &VecDeque<G::Input>,
    straight: &G,
    tick: u32,
    expected: u64,
) -> Result<(), SyncTestError> {
    let mut game: G = from.restore()?;
    for input in inputs {
        game.step(input);
    }
    let actual = game.hash();
    let mismatch = |check| SyncTestError::Mismatch {
        tick,
        expected,
        actual,
        check,
    };
    if actual != expected {
        return Err(mismatch(Check::ResimulatedHash));
    }
    if game != *straight {
        return Err(mismatch(Check::ResimulatedState));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;
    use lockstep_sim::offline;
    use lockstep_sim::WorldConfig;

    /// Ticks between restore and check in the toy tests.
    const DISTANCE: u32 = 4;
    /// The one tick at which a toy gets pushed. Before it every toy field is
    /// zero, so no flaw has anything to lose yet.
    const PUSH_TICK: u32 = 10;
    /// The first tick whose state holds the push.
    const PUSHED: u32 = PUSH_TICK + 1;
    /// Long enough for every flaw to show.
    const TOY_TICKS: u32 = 40;

    /// A toy's input: a push of 1 at [`PUSH_TICK`], nothing otherwise.
    fn push_at(tick: u32) -> u64 {
        u64::from(tick == PUSH_TICK)
    }

    /// FNV-1a-style fold: good enough to tell toy states apart.
    fn toy_hash(values: &[u64]) -> u64 {
        values.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &value| {
            (hash ^ value).wrapping_mul(0x0000_0100_0000_01b3)
        })
    }

    /// A body that a push speeds up for good. Its snapshot forgets the
    /// speed, and so does its hash: the loss shows only once a restored
    /// copy has moved differently.
    #[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
    struct SnapshotForgetsSpeed {
        tick: u32,
        position: u64,
        #[serde(skip)]
        speed: u64,
    }

    impl Checked for SnapshotForgetsSpeed {
        type Input = u64;

        fn step(&mut self, push: &u64) {
            self.speed += push;
            self.position += self.speed;
            self.tick += 1;
        }

        fn hash(&self) -> u64 {
            toy_hash(&[self.tick.into(), self.position])
        }
    }

    /// The same body, but its hash covers the speed its snapshot forgets.
    #[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
    struct HashCoversForgottenSpeed {
        tick: u32,
        position: u64,
        #[serde(skip)]
        speed: u64,
    }

    impl Checked for HashCoversForgottenSpeed {
        type Input = u64;

        fn step(&mut self, push: &u64) {
            self.speed += push;
            self.position += self.speed;
            self.tick += 1;
        }

        fn hash(&self) -> u64 {
            toy_hash(&[self.tick.into(), self.position, self.speed])
        }
    }

    /// A body that also counts the pushes it got. Snapshot and hash both
    /// miss the count, and the count never changes the motion, so only
    /// comparing whole states can notice it.
    #[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
    struct HashMissesPushCount {
        tick: u32,
        position: u64,
        speed: u64,
        #[serde(skip)]
        pushes: u64,
    }

    impl Checked for HashMissesPushCount {
        type Input = u64;

        fn step(&mut self, push: &u64) {
            self.pushes += u64::from(*push != 0);
            self.speed += push;
            self.position += self.speed;
            self.tick += 1;
        }

        fn hash(&self) -> u64 {
            toy_hash(&[self.tick.into(), self.position, self.speed])
        }
    }

    fn sim(ticks: u32) -> SimOptions {
        SimOptions {
            players: 4,
            seed: 1,
            ticks,
            balls: WorldConfig::DEFAULT_BALLS,
            tick_rate: 60,
        }
    }

    #[test]
    fn the_real_world_passes_300_ticks_at_distance_7() {
        let report = run(SyncTestOptions {
            sim: sim(300),
            check_distance: 7,
        })
        .expect("the world's snapshot and hash cover its whole state");
        assert_eq!(report.tick, 300);
    }

    #[test]
    fn the_report_is_the_plain_offline_games_final_state() {
        let report = run(SyncTestOptions {
            sim: sim(120),
            check_distance: 3,
        })
        .expect("sync test passes");
        let world = offline::run(sim(120));
        assert_eq!(
            report,
            SyncTestReport {
                tick: world.tick().0,
                hash: world.hash()
            }
        );
    }

    #[test]
    fn a_forgotten_field_is_reported_at_the_first_tick_it_changes_a_replay() {
        let error = check(
            SnapshotForgetsSpeed::default(),
            |toy| push_at(toy.tick),
            TOY_TICKS,
            DISTANCE,
        )
        .expect_err("the snapshot drops the speed");
        // The snapshot of PUSHED is the first with a speed to lose; restored
        // at rest, it has moved 1 where the straight run moved DISTANCE + 1.
        let checked = PUSHED + DISTANCE;
        let moved = u64::from(DISTANCE) + 1;
        assert!(
            matches!(
                error,
                SyncTestError::Mismatch {
                    tick,
                    expected,
                    actual,
                    check: Check::ResimulatedHash,
                } if tick == checked
                    && expected == toy_hash(&[checked.into(), moved])
                    && actual == toy_hash(&[checked.into(), 1])
            ),
            "{error:?}"
        );
    }

    #[test]
    fn a_forgotten_field_that_never_leaves_its_default_is_not_reported() {
        let toy = check(SnapshotForgetsSpeed::default(), |_| 0, TOY_TICKS, DISTANCE)
            .expect("nothing is lost while the speed stays 0");
        assert_eq!(toy.tick, TOY_TICKS);
    }

    #[test]
    fn a_hash_covering_a_field_the_snapshot_drops_is_reported_at_the_snapshots_tick() {
        let error = check(
            HashCoversForgottenSpeed::default(),
            |toy| push_at(toy.tick),
            TOY_TICKS,
            DISTANCE,
        )
        .expect_err("the snapshot drops the hashed speed");
        let pushed = u64::from(PUSHED);
        assert!(
            matches!(
                error,
                SyncTestError::Mismatch {
                    tick: PUSHED,
                    expected,
                    actual,
                    check: Check::RestoredHash,
                } if expected == toy_hash(&[pushed, 1, 1]) && actual == toy_hash(&[pushed, 1, 0])
            ),
            "{error:?}"
        );
    }

    #[test]
    fn state_that_both_hash_and_snapshot_miss_is_caught_by_comparing_whole_states() {
        let error = check(
            HashMissesPushCount::default(),
            |toy| push_at(toy.tick),
            TOY_TICKS,
            DISTANCE,
        )
        .expect_err("the push count is lost");
        let checked = PUSHED + DISTANCE;
        assert!(
            matches!(
                error,
                SyncTestError::Mismatch {
                    tick,
                    expected,
                    actual,
                    check: Check::ResimulatedState,
                } if tick == checked && expected == actual
            ),
            "{error:?}"
        );
    }

    #[test]
    fn a_run_shorter_than_the_check_distance_is_refused() {
        let error = check(SnapshotForgetsSpeed::default(), |_| 0, 3, 4)
            .expect_err("no tick could be re-simulated");
        assert!(
            matches!(
                error,
                SyncTestError::TooFewTicks {
                    ticks: 3,
                    check_distance: 4
                }
            ),
            "{error:?}"
        );
    }

    #[test]
    fn a_mismatch_names_the_tick_both_hashes_and_the_failed_check() {
        let message = SyncTestError::Mismatch {
            tick: 15,
            expected: 0xab,
            actual: 0xcd,
            check: Check::ResimulatedHash,
        }
        .to_string();
        assert!(message.contains("tick 15"), "{message}");
        assert!(message.contains("00000000000000ab"), "{message}");
        assert!(message.contains("00000000000000cd"), "{message}");
        assert!(
            message.contains(&Check::ResimulatedHash.to_string()),
            "{message}"
        );
    }
}
