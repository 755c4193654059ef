//! Replays on the client: recording a game (`--record`), playing one back
//! and verifying its hashes (`lockstep-client replay`).
//!
//! A replay holds the starting parameters and every tick's bundle, so the
//! whole game re-simulates exactly, entirely inside the fixed-step loop:
//! flipcode's "record the user commands to a file and play them back".
//! Recorded hash reports make the playback a verification: any tick whose
//! hash differs from the recorded one is the first divergence.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use lockstep_protocol::{
    Bundle, PlayerId, Record, Replay, ReplayError, ReplayHeader, ReplayWriter, RosterEntry, Start,
    Tick, PROTOCOL_VERSION,
};

use lockstep_sim::{World, WorldConfig};

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

/// The world a replay starts from.
pub fn initial_world(header: &ReplayHeader) -> World {
    let players: Vec<PlayerId> = header.roster.iter().map(|r| r.id).collect();
    let config = WorldConfig {
        balls: header.balls,
        ..WorldConfig::new(header.seed, header.tick_rate)
    };
    World::new(config, &players)
}

/// Applies one bundle to a world: departures first, then returns, then
/// the inputs. The one place a bundle turns into a step, shared by live
/// play, replays and verification.
pub fn apply(world: &mut World, bundle: &Bundle) {
    for &left in &bundle.left {
        world.remove_player(left);
    }
    for &joined in &bundle.joined {
        world.add_player(joined);
    }
    world.step(&bundle.inputs);
}

/// A replay being played: the world, a cursor, snapshots for seeking and
/// the verification of recorded hashes.
#[derive(Debug)]
pub struct Playback {
    replay: Replay,
    /// The world before the last step (for interpolation).
    pub previous: World,
    /// The world now.
    pub current: World,
    expected: BTreeMap<Tick, Vec<(PlayerId, u64)>>,
    snapshots: BTreeMap<Tick, World>,
    checked: u32,
    /// Ticks up to here had their reports counted in `checked` (a seek
    /// back replays them without counting twice).
    checked_through: Tick,
    mismatch: Option<Mismatch>,
}

impl Playback {
    /// A playback at tick 0.
    pub fn new(replay: Replay) -> Playback {
        let world = initial_world(&replay.header);
        let mut expected: BTreeMap<Tick, Vec<(PlayerId, u64)>> = BTreeMap::new();
        for &(tick, player, hash) in &replay.hashes {
            expected.entry(tick).or_default().push((player, hash));
        }
        let mut snapshots = BTreeMap::new();
        snapshots.insert(Tick(0), world.clone());
        Playback {
            replay,
            previous: world.clone(),
            current: world,
            expected,
            snapshots,
            checked: 0,
            checked_through: Tick(0),
            mismatch: None,
        }
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

/// Re-simulates the replay as fast as possible (up to tick `stop_at` if
/// given), checking every recorded hash; `progress(done, total)` is called
/// every few thousand ticks (for a progress bar).
pub fn verify(
    replay: Replay,
    stop_at: Option<u32>,
    mut progress: impl FnMut(u32, u32),
) -> Verified {
    let total = (replay.bundles.len() as u32).min(stop_at.unwrap_or(u32::MAX));
    let mut expected: BTreeMap<Tick, Vec<(PlayerId, u64)>> = BTreeMap::new();
    for &(tick, player, hash) in &replay.hashes {
        expected.entry(tick).or_default().push((player, hash));
    }
    let mut world = initial_world(&replay.header);
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
    Verified {
        ticks: world.tick().0,
        hash: world.hash(),
        checked,
        mismatch,
    }
}

/// A client's own recording (`--record FILE`): the same format the server
/// writes, with this client's hashes as the reports.
#[derive(Debug)]
pub struct ClientRecorder {
    writer: Option<ReplayWriter<BufWriter<File>>>,
    path: PathBuf,
    me: PlayerId,
    hash_interval: u32,
}

impl ClientRecorder {
    /// Creates (or replaces) `path` and writes the header.
    pub fn create(path: &Path, header: &ReplayHeader, me: PlayerId) -> Result<Self, PlaybackError> {
        let open_error = |source| PlaybackError::Open {
            path: path.to_path_buf(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(open_error)?;
        }
        let file = File::create(path).map_err(open_error)?;
        let writer = ReplayWriter::new(BufWriter::new(file), header).map_err(|source| {
            PlaybackError::Read {
                path: path.to_path_buf(),
                source,
            }
        })?;
        Ok(ClientRecorder {
            writer: Some(writer),
            path: path.to_path_buf(),
            me,
            hash_interval: u32::from(header.hash_interval.max(1)),
        })
    }

    /// A header for a networked game from its Start.
    pub fn header_for(start: &Start, recorder: &str) -> ReplayHeader {
        ReplayHeader {
            protocol_version: PROTOCOL_VERSION,
            build: concat!("lockstep-client ", env!("CARGO_PKG_VERSION")).to_string(),
            recorder: recorder.to_string(),
            started_unix: crate::clock::unix_seconds(),
            seed: start.seed,
            tick_rate: start.tick_rate,
            input_delay: start.input_delay,
            hash_interval: start.hash_interval,
            balls: start.balls,
            roster: start.roster.clone(),
        }
    }

    /// A header for solo play.
    pub fn header_for_solo(config: WorldConfig, roster: Vec<RosterEntry>) -> ReplayHeader {
        ReplayHeader {
            protocol_version: PROTOCOL_VERSION,
            build: concat!("lockstep-client ", env!("CARGO_PKG_VERSION")).to_string(),
            recorder: "solo".into(),
            started_unix: crate::clock::unix_seconds(),
            seed: config.seed,
            tick_rate: config.tick_rate,
            input_delay: 0,
            hash_interval: 15,
            balls: config.balls,
            roster,
        }
    }

    /// Records the bundle that took `world` to its current tick, and the
    /// world's hash on report ticks. A write failure stops the recording
    /// with one message; the game goes on.
    pub fn tick(&mut self, bundle: &Bundle, world: &World) {
        let Some(writer) = &mut self.writer else {
            return;
        };
        let now = world.tick();
        let mut result = writer.write(&Record::Bundle {
            tick: Tick(now.0.saturating_sub(1)),
            bundle: bundle.clone(),
        });
        if result.is_ok() && now.0.is_multiple_of(self.hash_interval) {
            result = writer.write(&Record::Hash {
                tick: now,
                player: self.me,
                hash: world.hash(),
            });
        }
        if let Err(e) = result {
            eprintln!(
                "lockstep-client: recording to {} stopped: {e}",
                self.path.display()
            );
            self.writer = None;
        }
    }

    /// Writes the End record.
    pub fn finish(mut self, reason: &str) {
        if let Some(writer) = self.writer.take() {
            if let Err(e) = writer.finish(reason) {
                eprintln!(
                    "lockstep-client: recording to {} not finished: {e}",
                    self.path.display()
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockstep_sim::bot::Bots;

    /// A recorded solo game of `ticks` ticks, hashes every 15.
    fn recorded(ticks: u32) -> Vec<u8> {
        let players = [PlayerId(0), PlayerId(1)];
        let config = WorldConfig::new(3, 60);
        let roster = players
            .iter()
            .map(|&id| RosterEntry {
                id,
                name: format!("p{id}"),
            })
            .collect();
        let header = ClientRecorder::header_for_solo(config, roster);
        let mut writer = ReplayWriter::new(Vec::new(), &header).unwrap();
        let mut world = World::new(config, &players);
        let mut bots = Bots::new(3, &players);
        for t in 0..ticks {
            let bundle = Bundle {
                inputs: bots.inputs(&world),
                ..Bundle::default()
            };
            apply(&mut world, &bundle);
            writer
                .write(&Record::Bundle {
                    tick: Tick(t),
                    bundle,
                })
                .unwrap();
            if world.tick().0.is_multiple_of(15) {
                writer
                    .write(&Record::Hash {
                        tick: world.tick(),
                        player: PlayerId(0),
                        hash: world.hash(),
                    })
                    .unwrap();
            }
        }
        writer.finish("done").unwrap()
    }

    fn read(bytes: &[u8]) -> Replay {
        Replay::read(bytes).unwrap().replay
    }

    #[test]
    fn verification_reproduces_every_recorded_hash() {
        let verified = verify(read(&recorded(900)), None, |_, _| {});
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
            buttons: lockstep_protocol::Buttons::RIGHT.with(lockstep_protocol::Buttons::BOOST),
            axes: Some([127, 0]),
        };
        assert_ne!(*input, changed);
        *input = changed;
        let verified = verify(replay, None, |_, _| {});
        let mismatch = verified.mismatch.unwrap();
        assert_eq!(mismatch.tick, Tick(405));
        assert_ne!(mismatch.recorded, mismatch.actual);
    }

    #[test]
    fn playback_and_seeking_reach_the_same_worlds_as_a_straight_run() {
        let replay = read(&recorded(1000));
        let straight = verify(replay.clone(), None, |_, _| {});
        let mut playback = Playback::new(replay);
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
