//! Replays: playing one back and verifying its hashes (`lockstep-client
//! replay`); recording is [`crate::replay::recorder`].
//!
//! A replay holds the starting parameters and every tick's bundle, so the
//! whole game re-simulates exactly, entirely inside the fixed-step loop:
//! flipcode's "record the user commands to a file and play them back".
//! Recorded hash reports make the playback a verification: the first
//! recorded hash the re-simulation must reproduce and does not is the
//! divergence ([`crate::replay::expected_hashes`] says which must: not the
//! reports of a player the server named diverged).

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use lockstep_protocol::{Damage, Replay, ReplayError, Tick};

use super::expected_hashes::ExpectedHashes;
pub use super::expected_hashes::{Diverged, Mismatch};
use super::last_reports::{LastReport, LastReports};
use crate::game::{apply, Game, HasBots, Setup, SetupError};

/// Snapshots kept every this many ticks while playing, so a seek
/// re-simulates at most this many ticks (5 s at 60 Hz: a seek stays
/// instant at over a million ticks per second).
pub const SNAPSHOT_EVERY: u32 = 300;

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

/// Reads a replay file; damage is returned beside the good part before it.
pub fn open(path: &Path) -> Result<(Replay, Option<Damage>), PlaybackError> {
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
    /// The recorded reports, checked as the ticks are stepped (a seek
    /// back steps them again without counting twice).
    expected: ExpectedHashes,
    snapshots: BTreeMap<Tick, G>,
    mismatch: Option<Mismatch>,
}

impl<G: Game> Playback<G> {
    /// A playback at tick 0, if the replay is a game of `G`.
    pub fn new(replay: Replay) -> Result<Playback<G>, SetupError>
    where
        G: HasBots,
    {
        let world = G::start(&Setup::from_header::<G>(&replay.header)?);
        let expected = ExpectedHashes::new(&replay);
        let mut snapshots = BTreeMap::new();
        snapshots.insert(Tick(0), world.clone());
        Ok(Playback {
            replay,
            previous: world.clone(),
            current: world,
            expected,
            snapshots,
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
        self.expected.checked()
    }

    /// Recorded hash reports in the replay.
    pub fn recorded_checks(&self) -> usize {
        self.replay.hashes.len()
    }

    /// The first recorded hash the re-simulation did not reproduce.
    pub fn mismatch(&self) -> Option<Mismatch> {
        self.mismatch
    }

    /// The players named diverged whose reports the re-simulation has not
    /// reproduced so far.
    pub fn diverged(&self) -> Vec<Diverged> {
        self.expected.diverged()
    }

    /// Each player's last report up to the tick played to, with the
    /// world's hash at its tick: the playback seeks to each, and back.
    pub fn last_reports(&mut self) -> Vec<LastReport> {
        let now = self.current.tick();
        let mut last = LastReports::new(&self.replay, now.0);
        for tick in last.ticks() {
            self.seek(tick);
            last.world(tick, self.current.hash());
        }
        self.seek(now);
        last.finish()
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
        let current = &self.current;
        if let Some(mismatch) = self.expected.check(now, || current.hash()) {
            if self.mismatch.is_none_or(|m| m.tick > now) {
                self.mismatch = Some(mismatch);
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    /// Ticks re-simulated.
    pub ticks: u32,
    /// World hash after the last tick.
    pub hash: u64,
    /// Recorded hashes checked.
    pub checked: u32,
    /// The first divergence, if any.
    pub mismatch: Option<Mismatch>,
    /// The players the server named diverged whose reports were not
    /// reproduced: expected, said, not a failure.
    pub diverged: Vec<Diverged>,
    /// Each player's last report in the ticks re-simulated, with the
    /// world's hash at its tick.
    pub last: Vec<LastReport>,
}

impl Verified {
    /// What `replay --verify` prints when every check passed.
    pub fn summary(&self) -> String {
        format!("verified ticks={} checks={}", self.ticks, self.checked)
    }

    /// The verdict on `path`, whose reading stopped at `problem` if any:
    /// the summary, a `diverged player=P name=N tick=T first=F
    /// unreproduced=K` line for each player the server named diverged, a
    /// `last player=P name=N tick=T hash=H` line for each player's last
    /// report ([`LastReport`]), and the final line; or why the file
    /// fails. A damaged file fails even when every tick before the damage
    /// verified, so a truncated recording never passes as a good one; nor
    /// do the intact records after damage in the middle of the file,
    /// which are not verified (what the damaged record held is unknown).
    pub fn conclude(
        self,
        path: &Path,
        problem: Option<Damage>,
    ) -> Result<Vec<String>, VerifyError> {
        if let Some(mismatch) = self.mismatch {
            return Err(VerifyError::Diverged(mismatch));
        }
        if let Some(problem) = problem {
            return Err(VerifyError::Damaged {
                path: path.to_path_buf(),
                problem: Box::new(problem),
                ticks: self.ticks,
                checked: self.checked,
            });
        }
        let mut lines = vec![self.summary()];
        lines.extend(self.diverged.iter().map(ToString::to_string));
        lines.extend(self.last.iter().map(ToString::to_string));
        lines.push(crate::final_line(self.ticks, self.hash));
        Ok(lines)
    }
}

/// Why a replay does not verify.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// A recorded hash was not reproduced.
    #[error("{0}")]
    Diverged(Mismatch),
    /// The file is damaged after the ticks that did verify.
    #[error(
        "{}: {problem}; {ticks} ticks before it verified ({checked} hash checks), none after it",
        path.display()
    )]
    Damaged {
        /// The replay file.
        path: PathBuf,
        /// Where it is damaged, and what follows.
        problem: Box<Damage>,
        /// Ticks verified before the damage.
        ticks: u32,
        /// Recorded hashes checked in those ticks.
        checked: u32,
    },
}

/// Re-simulates the replay as fast as possible (up to tick `stop_at` if
/// given), checking the recorded hashes ([`ExpectedHashes`] says which
/// must be reproduced); `progress(done, total)` is called
/// every few thousand ticks (for a progress bar).
pub fn verify<G: HasBots>(
    replay: Replay,
    stop_at: Option<u32>,
    mut progress: impl FnMut(u32, u32),
) -> Result<Verified, SetupError> {
    let total = (replay.bundles.len() as u32).min(stop_at.unwrap_or(u32::MAX));
    let mut expected = ExpectedHashes::new(&replay);
    let mut last = LastReports::new(&replay, total);
    let mut wanted = last.ticks().into_iter().peekable();
    let mut world = G::start(&Setup::from_header::<G>(&replay.header)?);
    let mut mismatch = None;
    for (i, bundle) in replay.bundles.iter().take(total as usize).enumerate() {
        apply(&mut world, bundle);
        let found = expected.check(world.tick(), || world.hash());
        mismatch = mismatch.or(found);
        if wanted.next_if_eq(&world.tick()).is_some() {
            last.world(world.tick(), world.hash());
        }
        if i % 4096 == 0 {
            progress(i as u32, total);
        }
    }
    progress(total, total);
    Ok(Verified {
        ticks: world.tick().0,
        hash: world.hash(),
        checked: expected.checked(),
        mismatch,
        diverged: expected.diverged(),
        last: last.finish(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::recorder::{solo_header, Recorder};
    use crate::testing::{inputs_at, setup, Tally};
    use lockstep_protocol::{Bundle, GameEvent, PlayerId, RosterEntry};

    /// A recorded Tally of `players` players and `ticks` ticks, player 0's
    /// hashes every 15.
    fn recorded(players: u8, ticks: u32) -> Vec<u8> {
        let setup = setup(players);
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
                inputs: inputs_at(&game, players),
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
        let verified = verify::<Tally>(read(&recorded(2, 900)), None, |_, _| {}).unwrap();
        assert_eq!(verified.ticks, 900);
        assert_eq!(verified.checked, 60);
        assert_eq!(verified.mismatch, None);
    }

    #[test]
    fn verification_names_the_first_divergent_tick() {
        let mut replay = read(&recorded(2, 900));
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
        let replay = read(&recorded(2, 1000));
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

    /// A three-player game of 900 ticks as the server records one whose
    /// player 2 parted from the others at tick 400 and came back from a
    /// verified snapshot at 600: every player's report every 15 ticks,
    /// player 2's wrong from 405 to 585, and the desync the server named
    /// at 405.
    fn desynced() -> Replay {
        let mut replay = read(&recorded(3, 900));
        let parted = 405..600;
        replay.hashes = replay
            .hashes
            .iter()
            .flat_map(|&(tick, _, hash)| {
                let parted = parted.clone();
                (0..3).map(move |p| {
                    let wrong = p == 2 && parted.contains(&tick.0);
                    (tick, PlayerId(p), if wrong { !hash } else { hash })
                })
            })
            .collect();
        let desync = GameEvent::Desync {
            diverged: vec![PlayerId(2)],
            first: Some(Tick(400)),
        };
        replay.events.push((Tick(405), desync));
        replay
    }

    #[test]
    fn a_replay_with_a_recorded_desync_of_one_player_verifies_and_names_it() {
        let replay = desynced();
        let straight = verify::<Tally>(read(&recorded(3, 900)), None, |_, _| {}).unwrap();
        let verified = verify::<Tally>(replay.clone(), None, |_, _| {}).unwrap();
        assert_eq!(verified.mismatch, None);
        assert_eq!(verified.checked, 180);
        let last = verified.last.clone();
        let lines = verified.conclude(Path::new("game"), None).unwrap();
        // Player 2 came back from a snapshot: its last report is right.
        let at_900 = |p: u8| {
            format!(
                "last player={p} name=p{p} tick=900 hash={:016x}",
                straight.hash
            )
        };
        assert_eq!(
            lines,
            [
                "verified ticks=900 checks=180".to_string(),
                "diverged player=2 name=p2 tick=405 first=400 unreproduced=13".to_string(),
                at_900(0),
                at_900(1),
                at_900(2),
                crate::final_line(900, straight.hash),
            ]
        );
        // The replay window's playback sees the same.
        let mut playback = Playback::<Tally>::new(replay).unwrap();
        while playback.step() {}
        playback.seek(Tick(300));
        playback.seek(Tick(900));
        assert_eq!(playback.mismatch(), None);
        assert_eq!(playback.checked(), 180);
        assert_eq!(playback.diverged()[0].unreproduced, 13);
        assert_eq!(playback.last_reports(), last);
        assert_eq!(playback.current.tick(), Tick(900));
    }

    #[test]
    fn a_verification_stopped_early_says_each_players_last_report_before_it() {
        // Player 2 is wrong from 405: stopped at 500, its last report is
        // said with the hash it reported beside the world's.
        let replay = desynced();
        let verified = verify::<Tally>(replay.clone(), Some(500), |_, _| {}).unwrap();
        let mut playback = Playback::<Tally>::new(replay).unwrap();
        playback.seek(Tick(495));
        let world = playback.current.hash();
        assert_eq!(playback.last_reports(), verified.last);
        let lines: Vec<String> = verified.last.iter().map(ToString::to_string).collect();
        assert_eq!(
            lines,
            [
                format!("last player=0 name=p0 tick=495 hash={world:016x}"),
                format!("last player=1 name=p1 tick=495 hash={world:016x}"),
                format!(
                    "last player=2 name=p2 tick=495 hash={world:016x} reported={:016x}",
                    !world
                ),
            ]
        );
    }

    #[test]
    fn a_replay_with_a_recorded_desync_whose_bundles_were_changed_still_fails() {
        // One input changed before the desync, or after it: the world
        // parts from the one everybody not named reported.
        for (changed, fails_at) in [(100, 105), (700, 705)] {
            let mut replay = desynced();
            let input = &mut replay.bundles[changed].inputs[0].input;
            input.buttons = lockstep_protocol::Buttons(input.buttons.0 ^ 0x20);
            let verified = verify::<Tally>(replay, None, |_, _| {}).unwrap();
            let mismatch = verified.mismatch.expect("a changed bundle fails");
            assert_eq!(mismatch.tick, Tick(fails_at));
            assert_eq!(mismatch.player, PlayerId(0));
            let error = verified.conclude(Path::new("game"), None).unwrap_err();
            assert!(matches!(error, VerifyError::Diverged(_)), "{error}");
        }
    }
}
