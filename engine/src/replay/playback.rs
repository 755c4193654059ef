//! Replays: playing one back and verifying its hashes (`lockstep-client
//! replay`); recording is [`crate::replay::recorder`].
//!
//! A replay holds the starting parameters and every tick's bundle, so the
//! whole game re-simulates exactly, entirely inside the fixed-step loop:
//! flipcode's "record the user commands to a file and play them back".
//! Recorded hash reports make the playback a verification: any tick whose
//! hash differs from the recorded one is the first divergence.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use lockstep_protocol::{PlayerId, Replay, ReplayError, Tick};

use crate::game::{apply, Game, Setup, SetupError};

/// Snapshots kept every this many ticks while playing, so a seek
/// re-simulates at most this many ticks (5 s at 60 Hz: a seek stays
/// instant at over a million ticks per second).
pub const SNAPSHOT_EVERY: u32 = 300;

/// A recorded hash that the re-simulation did not reproduce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mismatch {
    /// World tick of the report.
    pub tick: Tick,
    /// Who reported it.
    pub player: PlayerId,
    /// The recorded hash.
    pub recorded: u64,
    /// The re-simulated hash.
    pub actual: u64,
}

/// Why a replay could not be played or verified.
#[derive(Debug, thiserror::Error)]
pub enum PlaybackError {
    /// The file could not be opened.
    #[error("cannot open {}: {source}", path.display())]
    Open {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The file is not a readable replay.
    #[error("{}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        source: ReplayError,
    },
    /// The replay is of another game than the one asked for, or its
    /// settings do not decode.
    #[error("{}: {source}", path.display())]
    Game {
        /// The file.
        path: PathBuf,
        /// Which game, and what is wrong.
        source: SetupError,
    },
}

/// Reads a replay file; a damaged tail is returned beside the good part.
pub fn open(path: &Path) -> Result<(Replay, Option<ReplayError>), PlaybackError> {
    let file = File::open(path).map_err(|source| PlaybackError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    let outcome =
        Replay::read(std::io::BufReader::new(file)).map_err(|source| PlaybackError::Read {
            path: path.to_path_buf(),
            source,
        })?;
    Ok((outcome.replay, outcome.problem))
}

/// A replay being played: the world, a cursor, snapshots for seeking and
/// the verification of recorded hashes.
#[derive(Debug)]
pub struct Playback<G> {
    replay: Replay,
    /// The state before the last step (for interpolation).
    pub previous: G,
    /// The state now.
    pub current: G,
    expected: BTreeMap<Tick, Vec<(PlayerId, u64)>>,
    snapshots: BTreeMap<Tick, G>,
    checked: u32,
    /// Ticks up to here had their reports counted in `checked` (a seek
    /// back replays them without counting twice).
    checked_through: Tick,
    mismatch: Option<Mismatch>,
}

impl<G: Game> Playback<G> {
    /// A playback at tick 0, if the replay is a game of `G`.
    pub fn new(replay: Replay) -> Result<Playback<G>, SetupError> {
        let world = G::start(&Setup::from_header::<G>(&replay.header)?);
        let mut expected: BTreeMap<Tick, Vec<(PlayerId, u64)>> = BTreeMap::new();
        for &(tick, player, hash) in &replay.hashes {
            expected.entry(tick).or_default().push((player, hash));
        }
        let mut snapshots = BTreeMap::new();
        snapshots.insert(Tick(0), world.clone());
        Ok(Playback {
            replay,
            previous: world.clone(),
            current: world,
            expected,
            snapshots,
            checked: 0,
            checked_through: Tick(0),
            mismatch: None,
        })
    }

    /// The replay being played.
    pub fn replay(&self) -> &Replay {
        &self.replay
    }

    /// Ticks in the replay.
    pub fn total(&self) -> u32 {
        self.replay.bundles.len() as u32
    }

    /// Recorded hashes checked so far.
    pub fn checked(&self) -> u32 {
        self.checked
    }

    /// Recorded hash reports in the replay.
    pub fn recorded_checks(&self) -> usize {
        self.replay.hashes.len()
    }

    /// The first recorded hash the re-simulation did not reproduce.
    pub fn mismatch(&self) -> Option<Mismatch> {
        self.mismatch
    }

    /// Simulates the next tick; false at the end of the replay.
    pub fn step(&mut self) -> bool {
        let tick = self.current.tick();
        let Some(bundle) = self.replay.bundles.get(tick.0 as usize) else {
            return false;
        };
        self.previous.clone_from(&self.current);
        apply(&mut self.current, bundle);
        let now = self.current.tick();
        if now.0.is_multiple_of(SNAPSHOT_EVERY) {
            self.snapshots
                .entry(now)
                .or_insert_with(|| self.current.clone());
        }
        if let Some(reports) = self.expected.get(&now) {
            let actual = self.current.hash();
            if now > self.checked_through {
                self.checked += reports.len() as u32;
                self.checked_through = now;
            }
            for &(player, recorded) in reports {
                if recorded != actual && self.mismatch.is_none_or(|m| m.tick > now) {
                    self.mismatch = Some(Mismatch {
                        tick: now,
                        player,
                        recorded,
                        actual,
                    });
                }
            }
        }
        true
    }

    /// Moves to `tick` (clamped to the replay): restores the nearest kept
    /// snapshot at or before it and re-simulates from there.
    pub fn seek(&mut self, tick: Tick) {
        let target = Tick(tick.0.min(self.total()));
        if let Some((_, snapshot)) = self.snapshots.range(..=target).next_back() {
            if self.current.tick() > target || self.current.tick() < snapshot.tick() {
                self.current.clone_from(snapshot);
            }
        }
        while self.current.tick() < target && self.step() {}
        self.previous.clone_from(&self.current);
    }
}

/// The result of a verification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verified {
    /// Ticks re-simulated.
    pub ticks: u32,
    /// World hash after the last tick.
    pub hash: u64,
    /// Recorded hashes checked.
    pub checked: u32,
    /// The first divergence, if any.
    pub mismatch: Option<Mismatch>,
}

impl Verified {
    /// What `replay --verify` prints when every check passed.
    pub fn summary(&self) -> String {
        format!("verified ticks={} checks={}", self.ticks, self.checked)
    }

    /// The verdict on `path`, whose reading stopped at `problem` if any:
    /// the summary and the final line, or why the file fails. A damaged
    /// file fails even when every tick before the damage verified, so a
    /// truncated recording never passes as a good one.
    pub fn conclude(
        self,
        path: &Path,
        problem: Option<ReplayError>,
    ) -> Result<[String; 2], VerifyError> {
        if let Some(mismatch) = self.mismatch {
            return Err(VerifyError::Diverged(mismatch));
        }
        if let Some(problem) = problem {
            return Err(VerifyError::Damaged {
                path: path.to_path_buf(),
                problem,
                ticks: self.ticks,
            });
        }
        Ok([self.summary(), crate::final_line(self.ticks, self.hash)])
    }
}

/// Why a replay does not verify.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// A recorded hash was not reproduced.
    #[error("{0}")]
    Diverged(Mismatch),
    /// The file is damaged after the ticks that did verify.
    #[error("{}: {problem} (the {ticks} ticks before it verified)", path.display())]
    Damaged {
        /// The replay file.
        path: PathBuf,
        /// What is wrong with it.
        problem: ReplayError,
        /// Ticks verified before the damage.
        ticks: u32,
    },
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the replay diverges at tick {}: player {} recorded hash {:016x}, re-simulation gives {:016x}",
            self.tick, self.player, self.recorded, self.actual
        )
    }
}

/// Re-simulates the replay as fast as possible (up to tick `stop_at` if
/// given), checking every recorded hash; `progress(done, total)` is called
/// every few thousand ticks (for a progress bar).
pub fn verify<G: Game>(
    replay: Replay,
    stop_at: Option<u32>,
    mut progress: impl FnMut(u32, u32),
) -> Result<Verified, SetupError> {
    let total = (replay.bundles.len() as u32).min(stop_at.unwrap_or(u32::MAX));
    let mut expected: BTreeMap<Tick, Vec<(PlayerId, u64)>> = BTreeMap::new();
    for &(tick, player, hash) in &replay.hashes {
        expected.entry(tick).or_default().push((player, hash));
    }
    let mut world = G::start(&Setup::from_header::<G>(&replay.header)?);
    let mut checked = 0;
    let mut mismatch = None;
    for (i, bundle) in replay.bundles.iter().take(total as usize).enumerate() {
        apply(&mut world, bundle);
        if let Some(reports) = expected.get(&world.tick()) {
            let actual = world.hash();
            for &(player, recorded) in reports {
                checked += 1;
                if recorded != actual && mismatch.is_none() {
                    mismatch = Some(Mismatch {
                        tick: world.tick(),
                        player,
                        recorded,
                        actual,
                    });
                }
            }
        }
        if i % 4096 == 0 {
            progress(i as u32, total);
        }
    }
    progress(total, total);
    Ok(Verified {
        ticks: world.tick().0,
        hash: world.hash(),
        checked,
        mismatch,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::recorder::{solo_header, Recorder};
    use crate::testing::{inputs_at, setup, Tally};
    use lockstep_protocol::{Bundle, RosterEntry};

    /// A recorded two-player Tally of `ticks` ticks, hashes every 15.
    fn recorded(ticks: u32) -> Vec<u8> {
        let setup = setup(2);
        let roster = setup
            .players
            .iter()
            .map(|&id| RosterEntry {
                id,
                name: format!("p{id}"),
            })
            .collect();
        let header = solo_header::<Tally>(&setup, roster, 0);
        let mut recorder = Recorder::new(Vec::new(), &header, PlayerId(0)).unwrap();
        let mut game = Tally::start(&setup);
        for _ in 0..ticks {
            let bundle = Bundle {
                inputs: inputs_at(&game, 2),
                ..Bundle::default()
            };
            apply(&mut game, &bundle);
            recorder.tick(&bundle, &game).unwrap();
        }
        recorder.finish("done").unwrap()
    }

    fn read(bytes: &[u8]) -> Replay {
        Replay::read(bytes).unwrap().replay
    }

    #[test]
    fn verification_reproduces_every_recorded_hash() {
        let verified = verify::<Tally>(read(&recorded(900)), None, |_, _| {}).unwrap();
        assert_eq!(verified.ticks, 900);
        assert_eq!(verified.checked, 60);
        assert_eq!(verified.mismatch, None);
    }

    #[test]
    fn verification_names_the_first_divergent_tick() {
        let mut replay = read(&recorded(900));
        // Change one input of tick 400: the world diverges from tick 401 on,
        // and 405 is the first recorded hash after it.
        let input = &mut replay.bundles[400].inputs[0].input;
        let changed = lockstep_protocol::Input {
            buttons: lockstep_protocol::Buttons(0x20),
            axes: None,
        };
        assert_ne!(*input, changed);
        *input = changed;
        let verified = verify::<Tally>(replay, None, |_, _| {}).unwrap();
        let mismatch = verified.mismatch.unwrap();
        assert_eq!(mismatch.tick, Tick(405));
        assert_ne!(mismatch.recorded, mismatch.actual);
    }

    #[test]
    fn playback_and_seeking_reach_the_same_worlds_as_a_straight_run() {
        let replay = read(&recorded(1000));
        let straight = verify::<Tally>(replay.clone(), None, |_, _| {}).unwrap();
        let mut playback = Playback::<Tally>::new(replay).unwrap();
        while playback.step() {}
        assert_eq!(playback.current.hash(), straight.hash);
        assert_eq!(playback.mismatch(), None);
        playback.seek(Tick(123));
        assert_eq!(playback.current.tick(), Tick(123));
        let at_123 = playback.current.hash();
        playback.seek(Tick(950));
        playback.seek(Tick(123));
        assert_eq!(playback.current.hash(), at_123);
        playback.seek(Tick(5000));
        assert_eq!(playback.current.tick(), Tick(1000));
        assert_eq!(playback.current.hash(), straight.hash);
    }
}
