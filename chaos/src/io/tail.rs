//! Files that grow while the run reads them: a process's output, line by
//! line, and the server's replay, record by record. Each read picks up
//! where the last one stopped, so following a long game costs what it
//! adds, not what it holds.

use std::cell::Cell;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use lockstep_protocol::{Bundle, PlayerId, Record, ReplayError, ReplayHeader, ReplayReader};

/// The complete lines a growing text file gained since the last read.
#[derive(Debug)]
pub struct LineTail {
    path: PathBuf,
    offset: u64,
    /// The start of a line whose end is not written yet.
    partial: Vec<u8>,
}

impl LineTail {
    /// Follows `path` from its start (it need not exist yet).
    pub fn new(path: &Path) -> LineTail {
        LineTail {
            path: path.to_path_buf(),
            offset: 0,
            partial: Vec::new(),
        }
    }

    /// The lines completed since the last call.
    pub fn poll(&mut self) -> Vec<String> {
        let mut added = Vec::new();
        if let Ok(mut file) = File::open(&self.path) {
            if file.seek(SeekFrom::Start(self.offset)).is_ok() {
                let _ = file.read_to_end(&mut added);
            }
        }
        self.offset += added.len() as u64;
        self.partial.extend(added);
        let Some(end) = self.partial.iter().rposition(|&b| b == b'\n') else {
            return Vec::new();
        };
        let rest = self.partial.split_off(end + 1);
        let complete = std::mem::replace(&mut self.partial, rest);
        String::from_utf8_lossy(&complete)
            .lines()
            .map(|line| line.trim_end_matches('\r').to_string())
            .collect()
    }
}

/// Counts the bytes read through it.
struct Counted<'a, R> {
    inner: R,
    read: &'a Cell<u64>,
}

impl<R: Read> Read for Counted<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.set(self.read.get() + n as u64);
        Ok(n)
    }
}

/// Bytes of the magic and the format number every replay starts with.
const PREFIX: usize = 10;

/// The server's replay as far as it is written: its header, and every
/// bundle so far (the game's tick is their count). A half-written record
/// at the end is read again once it is whole; a resumed server that cuts
/// one off goes on where the last whole one ended, which is where this
/// reads on.
#[derive(Debug)]
pub struct ReplayTail {
    path: PathBuf,
    /// The file's first bytes, put before each read from `offset`.
    prefix: Option<Vec<u8>>,
    /// Where the next unread record starts.
    offset: u64,
    /// The header, once read.
    pub header: Option<ReplayHeader>,
    /// Every bundle read, tick 0 first.
    pub bundles: Vec<Bundle>,
    /// The End record, if the last server ended the file.
    pub end: Option<(u32, String)>,
}

impl ReplayTail {
    /// Follows the replay at `path`.
    pub fn new(path: &Path) -> ReplayTail {
        ReplayTail {
            path: path.to_path_buf(),
            prefix: None,
            offset: PREFIX as u64,
            header: None,
            bundles: Vec::new(),
            end: None,
        }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Ticks bundled so far.
    pub fn ticks(&self) -> u32 {
        u32::try_from(self.bundles.len()).unwrap_or(u32::MAX)
    }

    /// Reads what was added since the last call. A damaged record stops
    /// the reading until it is whole or replaced; anything else wrong
    /// with the file is the error.
    pub fn poll(&mut self) -> Result<(), ReplayError> {
        let mut file = File::open(&self.path)?;
        let prefix = match &self.prefix {
            Some(prefix) => prefix.clone(),
            None => {
                let mut prefix = vec![0u8; PREFIX];
                if file.read_exact(&mut prefix).is_err() {
                    // Not even the magic yet.
                    return Ok(());
                }
                self.prefix = Some(prefix.clone());
                prefix
            }
        };
        file.seek(SeekFrom::Start(self.offset))?;
        let read = Cell::new(0u64);
        let input = Counted {
            inner: prefix.as_slice().chain(BufReader::new(file)),
            read: &read,
        };
        let mut reader = ReplayReader::new(input)?;
        loop {
            match reader.next_record() {
                Ok(Some(record)) => {
                    self.offset += read.get() - PREFIX as u64;
                    read.set(PREFIX as u64);
                    self.take(record);
                }
                Ok(None) | Err(ReplayError::Truncated { .. } | ReplayError::Corrupt { .. }) => {
                    return Ok(())
                }
                Err(e) => return Err(e),
            }
        }
    }

    fn take(&mut self, record: Record) {
        match record {
            Record::Header(header) => self.header = Some(header),
            Record::Bundle { bundle, .. } => self.bundles.push(bundle),
            Record::End { ticks, reason } => self.end = Some((ticks, reason)),
            _ => {}
        }
    }

    /// The slot of the player called `name`.
    pub fn slot(&self, name: &str) -> Option<PlayerId> {
        let header = self.header.as_ref()?;
        header.roster.iter().find(|r| r.name == name).map(|r| r.id)
    }

    /// The first tick at or after `from` that starts `len` ticks in a row
    /// whose bundles hold `player`'s own input, not a stand-in: the player
    /// is back in the game.
    pub fn own_run_from(&self, player: PlayerId, from: u32, len: u32) -> Option<u32> {
        let own = |b: &Bundle| {
            b.inputs.iter().any(|i| i.player == player) && !b.substituted.contains(&player)
        };
        let mut run = 0;
        for (tick, bundle) in self.bundles.iter().enumerate().skip(from as usize) {
            run = if own(bundle) { run + 1 } else { 0 };
            if run == len {
                let first = tick + 1 - len as usize;
                return u32::try_from(first).ok();
            }
        }
        None
    }

    /// Stand-ins for `player` in the bundles of ticks `from..to`.
    pub fn stand_ins(&self, player: PlayerId, from: u32, to: u32) -> usize {
        let (from, to) = (from as usize, (to as usize).min(self.bundles.len()));
        self.bundles.get(from..to).map_or(0, |b| {
            b.iter().filter(|b| b.substituted.contains(&player)).count()
        })
    }
}
