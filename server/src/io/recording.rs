//! Server-side recording: one replay file per game in the replay
//! directory, named after the game's start time (UTC).
//!
//! Recording must never stop the game: if the disk fails, the recorder logs
//! one warning and goes quiet.

use std::fs::{File, OpenOptions};
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use lockstep_protocol::{
    Bundle, GameEvent, Peer, PlayerId, PlayerStatus, Record, ReplayError, ReplayHeader,
    ReplayWriter, Tick,
};
use tracing::warn;

/// An open recording.
#[derive(Debug)]
pub(crate) struct Recorder {
    writer: Option<ReplayWriter<BufWriter<File>>>,
    path: PathBuf,
}

impl Recorder {
    /// Creates `DIR/<start time>.lsreplay` (with a numeric suffix if that
    /// name exists) and writes the header.
    pub(crate) fn create(dir: &Path, header: &ReplayHeader) -> std::io::Result<Recorder> {
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
        Ok(Recorder {
            writer: Some(writer),
            path,
        })
    }

    /// Goes on with the recording at `path` of a game resumed after a
    /// crash: cuts it to `valid_len` (the end of its last whole record; a
    /// record the crash cut short goes) and appends from the bundle of
    /// `next_tick` on, so the one file holds the whole game.
    pub(crate) fn append(
        path: &Path,
        valid_len: u64,
        next_tick: Tick,
    ) -> std::io::Result<Recorder> {
        let file = OpenOptions::new().write(true).open(path)?;
        file.set_len(valid_len)?;
        let mut file = file;
        std::io::Seek::seek(&mut file, std::io::SeekFrom::End(0))?;
        Ok(Recorder {
            writer: Some(ReplayWriter::resume(BufWriter::new(file), next_tick)),
            path: path.to_path_buf(),
        })
    }

    /// The file being written.
    pub(crate) fn path(&self) -> &Path {
        &self.path
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

    /// Records the bundle of `tick`, on disk before the function returns
    /// (and so before anyone is sent the bundle).
    pub(crate) fn bundle(&mut self, tick: Tick, bundle: &Bundle) {
        self.run(|w| w.write_bundle(tick, bundle));
    }

    /// Records a hash report. It reaches the disk with the next bundle: a
    /// crash loses at most the reports of the last tick.
    pub(crate) fn hash(&mut self, tick: Tick, player: PlayerId, hash: u64) {
        self.run(|w| w.append(&Record::Hash { tick, player, hash }));
    }

    /// Records a departure.
    pub(crate) fn left(&mut self, tick: Tick, player: PlayerId, reason: &str) {
        self.run(|w| {
            w.write(&Record::Left {
                tick,
                player,
                reason: reason.to_string(),
            })
        });
    }

    /// Records what the lag indicator says of every player at `tick`, for
    /// the report picture. Appended like a hash report: a crash loses at
    /// most the last tick's sample.
    pub(crate) fn status(&mut self, tick: Tick, peers: &[Peer]) {
        let players = peers
            .iter()
            .map(|p| PlayerStatus {
                player: p.player,
                ping_ms: p.ping_ms,
                slack: p.slack,
                waited_for: p.waited_for,
                ticks_behind: p.ticks_behind,
            })
            .collect();
        self.run(|w| w.append(&Record::Status { tick, players }));
    }

    /// Records a speed change or a desync, on disk at once.
    pub(crate) fn event(&mut self, tick: Tick, event: GameEvent) {
        self.run(|w| w.write(&Record::Event { tick, event }));
    }

    /// Writes the End record and closes the file.
    pub(crate) fn finish(mut self, reason: &str) {
        if let Some(writer) = self.writer.take() {
            if let Err(e) = writer.finish(reason) {
                warn!(path = %self.path.display(), error = %e, "recording not finished");
            }
        }
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
