//! The sync test (`lockstep-client synctest`): proves that a snapshot and
//! the hash cover a game's whole state, by restoring and re-simulating
//! (GGRS's `SyncTestSession`, without the session).
//!
//! # How it works
//!
//! The game runs straight ahead with the inputs the caller chooses (for
//! the ball game: a bot for every player, exactly as `lockstep-client sim`
//! plays it). At every tick `t` the checker
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

use crate::game::Game;

/// Which comparison of a sync test failed, and what it points at. It
/// displays as the check's name, which DETERMINISM.md explains too.
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
            Check::RestoredHash => "the restored hash differs",
            Check::ResimulatedHash => "the re-simulated hash differs",
            Check::ResimulatedState => "the re-simulated state differs under the same hash",
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
    fn take<G: Game>(game: &G, tick: u32) -> Result<Snapshot, SyncTestError> {
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
    fn restore<G: Game>(&self) -> Result<G, SyncTestError> {
        postcard::from_bytes(&self.bytes).map_err(|source| SyncTestError::Snapshot {
            tick: self.tick,
            source,
        })
    }
}

/// Runs `game` straight for `ticks` ticks with the inputs `next_input`
/// chooses, checking every tick as the module docs describe, and returns
/// the final state. `check_distance` is how many ticks back each check
/// restores from: longer distances let a forgotten field do more damage
/// before the check; 0 checks only the serialization round trip.
///
/// # Errors
///
/// The first failed check, a snapshot postcard cannot handle, or a run too
/// short to check anything; see [`SyncTestError`].
pub fn check<G: Game>(
    mut game: G,
    mut next_input: impl FnMut(&G) -> Vec<PlayerInput>,
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
    let mut inputs: VecDeque<Vec<PlayerInput>> = VecDeque::new();
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
fn resimulate<G: Game>(
    from: &Snapshot,
    inputs: &VecDeque<Vec<PlayerInput>>,
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
    use lockstep_protocol::{Buttons, Input, PlayerId, Tick};
    use serde::{Deserialize, Serialize};

    use super::*;
    use crate::determinism::fnv::Fnv1a;
    use crate::game::Setup;
    use crate::testing::{self, Tally};

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
    fn push_at(tick: u32) -> Vec<PlayerInput> {
        pushes(u8::from(tick == PUSH_TICK))
    }

    /// One player pressing `buttons`.
    fn pushes(buttons: u8) -> Vec<PlayerInput> {
        vec![PlayerInput {
            player: PlayerId(0),
            input: Input {
                buttons: Buttons(buttons),
                axes: None,
            },
        }]
    }

    /// The push in a toy's inputs.
    fn push(inputs: &[PlayerInput]) -> u64 {
        inputs.first().map_or(0, |i| u64::from(i.input.buttons.0))
    }

    /// The toy states' hash: their fields, in order.
    fn toy_hash(values: &[u64]) -> u64 {
        let mut hash = Fnv1a::new();
        for &value in values {
            hash.write_u64(value);
        }
        hash.finish()
    }

    /// A body that a push speeds up for good. Its snapshot forgets the
    /// speed, and so does its hash: the loss shows only once a restored
    /// copy has moved differently.
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
    struct SnapshotForgetsSpeed {
        tick: u32,
        position: u64,
        #[serde(skip)]
        speed: u64,
    }

    impl Game for SnapshotForgetsSpeed {
        const NAME: &'static str = "test";
        type Settings = ();

        fn start(_: &Setup<()>) -> Self {
            Self::default()
        }

        fn tick(&self) -> Tick {
            Tick(self.tick)
        }

        fn step(&mut self, inputs: &[PlayerInput]) {
            let push = push(inputs);
            self.speed += push;
            self.position += self.speed;
            self.tick += 1;
        }

        fn hash(&self) -> u64 {
            toy_hash(&[self.tick.into(), self.position])
        }
    }

    /// The same body, but its hash covers the speed its snapshot forgets.
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
    struct HashCoversForgottenSpeed {
        tick: u32,
        position: u64,
        #[serde(skip)]
        speed: u64,
    }

    impl Game for HashCoversForgottenSpeed {
        const NAME: &'static str = "test";
        type Settings = ();

        fn start(_: &Setup<()>) -> Self {
            Self::default()
        }

        fn tick(&self) -> Tick {
            Tick(self.tick)
        }

        fn step(&mut self, inputs: &[PlayerInput]) {
            let push = push(inputs);
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
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
    struct HashMissesPushCount {
        tick: u32,
        position: u64,
        speed: u64,
        #[serde(skip)]
        pushes: u64,
    }

    impl Game for HashMissesPushCount {
        const NAME: &'static str = "test";
        type Settings = ();

        fn start(_: &Setup<()>) -> Self {
            Self::default()
        }

        fn tick(&self) -> Tick {
            Tick(self.tick)
        }

        fn step(&mut self, inputs: &[PlayerInput]) {
            let push = push(inputs);
            self.pushes += u64::from(push != 0);
            self.speed += push;
            self.position += self.speed;
            self.tick += 1;
        }

        fn hash(&self) -> u64 {
            toy_hash(&[self.tick.into(), self.position, self.speed])
        }
    }

    #[test]
    fn the_example_game_passes_300_ticks_at_distance_7() {
        let game = check(
            Tally::start(&testing::setup(3)),
            |game| testing::inputs_at(game, 3),
            300,
            7,
        )
        .expect("the example's snapshot and hash cover its whole state");
        assert_eq!(game, testing::play(3, 300));
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
        let toy = check(
            SnapshotForgetsSpeed::default(),
            |_| pushes(0),
            TOY_TICKS,
            DISTANCE,
        )
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
        let error = check(SnapshotForgetsSpeed::default(), |_| pushes(0), 3, 4)
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
