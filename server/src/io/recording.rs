//! Server-side recording: one replay file per game in the replay
//! directory, named after the game's start time (UTC), written as the
//! session asks ([`Recording`], `recording.rs`).
//!
//! Recording must never stop the game: if the disk fails, the recorder logs
//! one warning and goes quiet.

use std::fs::{File, OpenOptions};
use std::io::BufWriter;
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
    /// server when a replay was opened ([`ServerEvent::Recording`]); a
    /// replay that cannot be opened costs a warning, and the game goes on
    /// unrecorded.
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
            Recording::Finish(reason) => {
                if let Some(file) = self.file.take() {
                    file.finish(&reason);
                }
                None
            }
            write => {
                if let Some(file) = &mut self.file {
                    file.write(write);
                }
                None
            }
        }
    }

    fn opened(&mut self, file: ReplayFile) -> Option<ServerEvent> {
        let path = file.path.clone();
        info!(path = %path.display(), "recording");
        self.file = Some(file);
        Some(ServerEvent::Recording { path })
    }
}

/// An open replay file.
#[derive(Debug)]
struct ReplayFile {
    writer: Option<ReplayWriter<BufWriter<File>>>,
    path: PathBuf,
}

impl ReplayFile {
    /// Creates `DIR/<start time>.lsreplay` (with a numeric suffix if that
    /// name exists) and writes the header.
    fn create(dir: &Path, header: &ReplayHeader) -> std::io::Result<ReplayFile> {
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
                std::io::Error::new(
                    std::io::ErrorKind::AlreadyExists,
                    format!("no free replay file name for {stem} in {}", dir.display()),
                )
            })?;
        let writer = ReplayWriter::new(BufWriter::new(file), header)
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        Ok(ReplayFile {
            writer: Some(writer),
            path,
        })
    }

    /// Goes on with the recording at `path` of a game resumed after a
    /// crash: cuts it to `valid_len` (the end of its last whole record; a
    /// record the crash cut short goes) and appends from the bundle of
    /// `next_tick` on, so the one file holds the whole game.
    fn append(path: &Path, valid_len: u64, next_tick: Tick) -> std::io::Result<ReplayFile> {
        let file = OpenOptions::new().write(true).open(path)?;
        file.set_len(valid_len)?;
        let mut file = file;
        std::io::Seek::seek(&mut file, std::io::SeekFrom::End(0))?;
        Ok(ReplayFile {
            writer: Some(ReplayWriter::resume(BufWriter::new(file), next_tick)),
            path: path.to_path_buf(),
        })
    }

    /// Runs one write; the first failure stops the recording.
    fn run(
        &mut self,
        write: impl FnOnce(&mut ReplayWriter<BufWriter<File>>) -> Result<(), ReplayError>,
    ) {
        let Some(writer) = &mut self.writer else {
            return;
        };
        if let Err(e) = write(writer) {
            warn!(path = %self.path.display(), error = %e, "recording stopped");
            self.writer = None;
        }
    }

    /// Writes one record. A bundle is on disk before this returns (and so
    /// before anyone is sent it), as are a departure and an event; a hash
    /// report or a status is appended and reaches the disk with the next
    /// bundle, so a crash loses at most the last tick's.
    fn write(&mut self, recording: Recording) {
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
            Recording::Create { .. } | Recording::Resume { .. } | Recording::Finish(_) => {}
        }
    }

    /// Writes the End record and closes the file.
    fn finish(mut self, reason: &str) {
        if let Some(writer) = self.writer.take() {
            if let Err(e) = writer.finish(reason) {
                warn!(path = %self.path.display(), error = %e, "recording not finished");
            }
        }
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
    use super::*;

    #[test]
    fn file_names_are_the_utc_start_time() {
        assert_eq!(utc_stamp(0), "1970-01-01T00-00-00Z");
        assert_eq!(utc_stamp(951_782_400), "2000-02-29T00-00-00Z");
        assert_eq!(utc_stamp(1_795_268_199), "2026-11-21T13-36-39Z");
    }
}
