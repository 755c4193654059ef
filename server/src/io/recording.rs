//! Server-side recording: one replay file per game in the replay
//! directory, named after the game's start time (UTC), written as the
//! session asks ([`Recording`], `recording.rs`).
//!
//! Recording must never stop the game. When a write fails (the disk is
//! full, say), the recorder cuts the file back to the end of its last whole
//! record, so that it ends cleanly after a bundle instead of inside a
//! record, says so once ([`ServerEvent::RecordingStopped`]), and writes
//! nothing more of that game, which goes on unrecorded.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use lockstep_protocol::{
    Peer, PlayerStatus, Record, ReplayError, ReplayHeader, ReplayWriter, Tick,
};
use tracing::{info, warn};

use crate::recording::Recording;
use crate::ServerEvent;

/// Writes the replays a session asks for
/// ([`Action::Record`](crate::session::Action::Record)): the driver of a
/// session hands it every such action, in order with the others.
#[derive(Debug, Default)]
pub struct Recorder {
    /// The running game's replay, if one is open.
    file: Option<ReplayFile>,
}

impl Recorder {
    /// A recorder with no replay open.
    pub fn new() -> Recorder {
        Recorder::default()
    }

    /// Carries out one write. Returns what to tell whoever runs the
    /// server: that a replay was opened ([`ServerEvent::Recording`]), or
    /// that the first write that failed stopped it
    /// ([`ServerEvent::RecordingStopped`]). A replay that cannot be opened
    /// costs a warning, and the game goes on unrecorded.
    pub fn record(&mut self, recording: Recording) -> Option<ServerEvent> {
        match recording {
            Recording::Create { dir, header } => match ReplayFile::create(&dir, &header) {
                Ok(file) => self.opened(file),
                Err(e) => {
                    warn!(dir = %dir.display(), error = %e, "cannot record this game");
                    None
                }
            },
            Recording::Resume {
                path,
                valid_len,
                next_tick,
            } => match ReplayFile::append(&path, valid_len, next_tick) {
                Ok(file) => self.opened(file),
                Err(e) => {
                    warn!(path = %path.display(), error = %e, "cannot go on recording the resumed game");
                    None
                }
            },
            Recording::Finish(reason) => self.file.take()?.finish(&reason),
            write => self.file.as_mut()?.write(write),
        }
    }

    fn opened(&mut self, file: ReplayFile) -> Option<ServerEvent> {
        let path = file.path.clone();
        info!(path = %path.display(), "recording");
        self.file = Some(file);
        Some(ServerEvent::Recording { path })
    }
}

/// What a replay is written to: a file, which a write that failed halfway
/// leaves holding part of a record.
trait Storage: Write {
    /// Keeps the first `len` bytes written and drops the rest.
    fn cut(&mut self, len: u64) -> io::Result<()>;
}

impl Storage for File {
    fn cut(&mut self, len: u64) -> io::Result<()> {
        self.set_len(len)
    }
}

/// An open replay file. Records go straight to the file, one `write` per
/// flush, with no buffer between: a buffer that kept the bytes of a failed
/// write would try them again when dropped, after the file was cut.
#[derive(Debug)]
struct ReplayFile<S: Write = File> {
    /// `None` once a write failed: the rest of the game goes unrecorded.
    writer: Option<ReplayWriter<S>>,
    path: PathBuf,
}

impl ReplayFile {
    /// Creates `DIR/<start time>.lsreplay` (with a numeric suffix if that
    /// name exists) and writes the header. A file that cannot take its
    /// header is removed: it would hold no game.
    fn create(dir: &Path, header: &ReplayHeader) -> io::Result<ReplayFile> {
        std::fs::create_dir_all(dir)?;
        let stem = utc_stamp(header.started_unix);
        let (file, path) = (0..1000)
            .map(|n| {
                let name = match n {
                    0 => format!("{stem}.lsreplay"),
                    n => format!("{stem}-{n}.lsreplay"),
                };
                dir.join(name)
            })
            .find_map(|path| {
                OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&path)
                    .ok()
                    .map(|file| (file, path))
            })
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    format!("no free replay file name for {stem} in {}", dir.display()),
                )
            })?;
        match ReplayWriter::new(file, header) {
            Ok(writer) => Ok(ReplayFile {
                writer: Some(writer),
                path,
            }),
            Err(e) => {
                // The error that matters is the write's.
                let _ = std::fs::remove_file(&path);
                Err(io::Error::other(e.to_string()))
            }
        }
    }

    /// Goes on with the recording at `path` of a game resumed after a
    /// crash: cuts it to `valid_len` (the end of its last whole record; a
    /// record the crash cut short goes) and appends from the bundle of
    /// `next_tick` on, so the one file holds the whole game.
    fn append(path: &Path, valid_len: u64, next_tick: Tick) -> io::Result<ReplayFile> {
        let mut file = OpenOptions::new().write(true).open(path)?;
        file.set_len(valid_len)?;
        io::Seek::seek(&mut file, io::SeekFrom::End(0))?;
        Ok(ReplayFile {
            writer: Some(ReplayWriter::resume(file, valid_len, next_tick)),
            path: path.to_path_buf(),
        })
    }
}

impl<S: Storage> ReplayFile<S> {
    /// Runs one write; the first failure stops the recording, and is the
    /// one thing said about it.
    fn run(
        &mut self,
        write: impl FnOnce(&mut ReplayWriter<S>) -> Result<(), ReplayError>,
    ) -> Option<ServerEvent> {
        let error = write(self.writer.as_mut()?).err()?;
        let writer = self.writer.take()?;
        let ticks = writer.flushed_ticks();
        let len = writer.flushed_len();
        if let Err(e) = writer.into_inner().cut(len) {
            // Readers take the part of a record after `len` for a
            // cut-off tail, as after a crash.
            warn!(path = %self.path.display(), error = %e, len, "cannot cut the replay back to its last whole record");
        }
        let error = match error {
            ReplayError::Io(e) => e.to_string(),
            e => e.to_string(),
        };
        warn!(path = %self.path.display(), %error, %ticks, "recording stopped");
        Some(ServerEvent::RecordingStopped {
            path: self.path.clone(),
            ticks,
            error,
        })
    }

    /// Writes one record. A bundle is on disk before this returns (and so
    /// before anyone is sent it), as are a departure and an event; a hash
    /// report or a status is appended and reaches the disk with the next
    /// bundle, so a crash loses at most the last tick's.
    fn write(&mut self, recording: Recording) -> Option<ServerEvent> {
        match recording {
            Recording::Bundle(tick, bundle) => self.run(|w| w.write_bundle(tick, &bundle)),
            Recording::Hash { tick, player, hash } => {
                self.run(|w| w.append(&Record::Hash { tick, player, hash }))
            }
            Recording::Left {
                tick,
                player,
                reason,
            } => self.run(|w| {
                w.write(&Record::Left {
                    tick,
                    player,
                    reason: reason.as_str().to_string(),
                })
            }),
            Recording::Status { tick, peers } => {
                let players = peers.iter().map(status_of).collect();
                self.run(|w| w.append(&Record::Status { tick, players }))
            }
            Recording::Event(tick, event) => self.run(|w| w.write(&Record::Event { tick, event })),
            Recording::Create { .. } | Recording::Resume { .. } | Recording::Finish(_) => None,
        }
    }

    /// Writes the End record and closes the file.
    fn finish(mut self, reason: &str) -> Option<ServerEvent> {
        self.run(|w| {
            w.write(&Record::End {
                ticks: w.ticks(),
                reason: reason.to_string(),
            })
        })
    }
}

/// What the lag indicator said of one player, as the replay keeps it.
fn status_of(peer: &Peer) -> PlayerStatus {
    PlayerStatus {
        player: peer.player,
        ping_ms: peer.ping_ms,
        slack: peer.slack,
        waited_for: peer.waited_for,
        ticks_behind: peer.ticks_behind,
    }
}

/// `YYYY-MM-DDTHH-MM-SSZ` for a Unix time (UTC; colons avoided so the name
/// is valid on every file system).
pub(crate) fn utc_stamp(unix: u64) -> String {
    let days = (unix / 86_400) as i64;
    let secs = unix % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}-{:02}-{:02}Z",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

#[cfg(test)]
mod tests {
    use lockstep_protocol::{Bundle, PlayerId, Replay, RosterEntry, PROTOCOL_VERSION};

    use super::*;

    /// A disk with room for `room` bytes. A write that does not fit writes
    /// what fits, as a file system does, and the next one fails with
    /// `StorageFull`.
    #[derive(Debug)]
    struct FillingDisk {
        bytes: Vec<u8>,
        room: usize,
        /// Whether cutting the file fails too.
        cut_fails: bool,
    }

    impl FillingDisk {
        fn new(room: usize) -> FillingDisk {
            FillingDisk {
                bytes: Vec::new(),
                room,
                cut_fails: false,
            }
        }
    }

    impl Write for FillingDisk {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let fits = buf.len().min(self.room - self.bytes.len());
            if fits == 0 && !buf.is_empty() {
                return Err(io::ErrorKind::StorageFull.into());
            }
            self.bytes.extend_from_slice(&buf[..fits]);
            Ok(fits)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Storage for &mut FillingDisk {
        fn cut(&mut self, len: u64) -> io::Result<()> {
            if self.cut_fails {
                return Err(io::ErrorKind::StorageFull.into());
            }
            self.bytes.truncate(len as usize);
            Ok(())
        }
    }

    fn header() -> ReplayHeader {
        ReplayHeader {
            protocol_version: PROTOCOL_VERSION,
            build: "test".into(),
            recorder: "server".into(),
            started_unix: 0,
            seed: 5,
            tick_rate: 60,
            input_delay: 3,
            hash_interval: 1,
            spec: lockstep_protocol::GameSpec::balls(24),
            roster: vec![RosterEntry {
                id: PlayerId(0),
                name: "ann".into(),
            }],
            platforms: vec![],
        }
    }

    /// A game of `ticks` ticks recorded on `disk`, a hash report before
    /// each bundle, then its end: what the recorder said.
    fn record_game(disk: &mut FillingDisk, ticks: u32) -> Vec<ServerEvent> {
        let mut file = ReplayFile {
            writer: Some(ReplayWriter::new(disk, &header()).unwrap()),
            path: PathBuf::from("replays/game.lsreplay"),
        };
        let mut said: Vec<ServerEvent> = (0..ticks)
            .flat_map(|t| {
                [
                    Recording::Hash {
                        tick: Tick(t),
                        player: PlayerId(0),
                        hash: u64::from(t),
                    },
                    Recording::Bundle(Tick(t), Bundle::default()),
                ]
            })
            .filter_map(|recording| file.write(recording))
            .collect();
        said.extend(file.finish("game over"));
        said
    }

    /// The bytes of the first `ticks` ticks of [`record_game`].
    fn first_ticks(ticks: u32) -> Vec<u8> {
        let mut disk = FillingDisk::new(usize::MAX);
        let mut file = ReplayFile {
            writer: Some(ReplayWriter::new(&mut disk, &header()).unwrap()),
            path: PathBuf::new(),
        };
        for t in 0..ticks {
            file.write(Recording::Hash {
                tick: Tick(t),
                player: PlayerId(0),
                hash: u64::from(t),
            });
            file.write(Recording::Bundle(Tick(t), Bundle::default()));
        }
        drop(file);
        disk.bytes
    }

    #[test]
    fn a_full_disk_stops_the_recording_once_and_the_file_ends_after_its_last_whole_bundle() {
        let three = first_ticks(3);
        // Room for three ticks and a few bytes of the fourth's records.
        let mut disk = FillingDisk::new(three.len() + 5);
        let said = record_game(&mut disk, 20);
        assert_eq!(
            said,
            [ServerEvent::RecordingStopped {
                path: PathBuf::from("replays/game.lsreplay"),
                ticks: Tick(3),
                error: io::Error::from(io::ErrorKind::StorageFull).to_string(),
            }]
        );
        assert_eq!(disk.bytes, three, "cut back to the last whole record");
        let outcome = Replay::read(&disk.bytes[..]).unwrap();
        assert!(outcome.problem.is_none(), "{:?}", outcome.problem);
        assert_eq!(outcome.replay.bundles.len(), 3);
        assert_eq!(outcome.replay.hashes.len(), 3);
        assert_eq!(outcome.replay.end, None);
    }

    #[test]
    fn a_file_that_cannot_be_cut_back_ends_in_a_tail_readers_take_for_cut_off() {
        let three = first_ticks(3);
        let mut disk = FillingDisk::new(three.len() + 5);
        disk.cut_fails = true;
        let said = record_game(&mut disk, 20);
        assert!(
            matches!(
                said[..],
                [ServerEvent::RecordingStopped { ticks: Tick(3), .. }]
            ),
            "{said:?}"
        );
        let outcome = Replay::read(&disk.bytes[..]).unwrap();
        assert!(
            matches!(
                &outcome.problem,
                Some(lockstep_protocol::Damage {
                    error: ReplayError::Truncated { offset, .. },
                    after: lockstep_protocol::After::Nothing,
                    ..
                }) if *offset == three.len() as u64
            ),
            "{:?}",
            outcome.problem
        );
        assert_eq!(outcome.valid_len, three.len() as u64);
        assert_eq!(outcome.replay.bundles.len(), 3);
    }

    #[test]
    fn a_disk_full_at_the_end_record_says_so_once() {
        let all = first_ticks(4);
        let mut disk = FillingDisk::new(all.len() + 2);
        let said = record_game(&mut disk, 4);
        assert!(
            matches!(
                said[..],
                [ServerEvent::RecordingStopped { ticks: Tick(4), .. }]
            ),
            "{said:?}"
        );
        assert_eq!(disk.bytes, all);
    }

    #[test]
    fn file_names_are_the_utc_start_time() {
        assert_eq!(utc_stamp(0), "1970-01-01T00-00-00Z");
        assert_eq!(utc_stamp(951_782_400), "2000-02-29T00-00-00Z");
        assert_eq!(utc_stamp(1_795_268_199), "2026-11-21T13-36-39Z");
    }
}
