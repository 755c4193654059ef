//! Writing a replay: records appended whole, one `write` per flush.

use std::io::Write;

use serde::Serialize;

use super::{Record, ReplayError, ReplayHeader, REPLAY_FORMAT, REPLAY_MAGIC};
use crate::{Bundle, Tick};

/// [`Record::Bundle`] over a borrowed bundle, for writing only: the
/// variants up to `Bundle` in the same order, so postcard writes the same
/// bytes.
#[derive(Serialize)]
enum BundleRecordRef<'a> {
    #[allow(dead_code)]
    Header(&'a ReplayHeader),
    Bundle {
        tick: Tick,
        bundle: &'a Bundle,
    },
}

/// Appends records to a replay: `write` flushes each record, `append`
/// leaves it for the next flush.
#[derive(Debug)]
pub struct ReplayWriter<W: Write> {
    /// The file; the tests read what reached it.
    pub(super) out: W,
    buf: Vec<u8>,
    next_tick: Tick,
    /// Where the file's last whole record ends: a write that fails (a full
    /// disk) may leave part of a record after it, which cutting the file
    /// here removes.
    flushed_len: u64,
    /// Ticks whose bundles reached the file whole.
    flushed_ticks: Tick,
}

impl<W: Write> ReplayWriter<W> {
    /// Writes the magic, the format and the header.
    pub fn new(mut out: W, header: &ReplayHeader) -> Result<Self, ReplayError> {
        let mut start = Vec::with_capacity(10);
        start.extend_from_slice(REPLAY_MAGIC);
        start.extend_from_slice(&REPLAY_FORMAT.to_le_bytes());
        out.write_all(&start)?;
        let mut writer = ReplayWriter {
            out,
            buf: Vec::new(),
            next_tick: Tick(0),
            flushed_len: start.len() as u64,
            flushed_ticks: Tick(0),
        };
        writer.write(&Record::Header(header.clone()))?;
        Ok(writer)
    }

    /// Goes on with a replay whose records up to the bundle of
    /// `next_tick - 1` are already in `out`, `len` bytes (opened for
    /// appending, cut to
    /// [`ReadOutcome::valid_len`](super::ReadOutcome::valid_len)): writes
    /// no magic and no header, and expects the bundle of `next_tick` next.
    pub fn resume(out: W, len: u64, next_tick: Tick) -> Self {
        ReplayWriter {
            out,
            buf: Vec::new(),
            next_tick,
            flushed_len: len,
            flushed_ticks: next_tick,
        }
    }

    /// Appends one record and flushes it to the file.
    pub fn write(&mut self, record: &Record) -> Result<(), ReplayError> {
        self.append(record)?;
        self.flush()
    }

    /// Appends one record without flushing: it reaches the file with the
    /// next flushed record (or [`ReplayWriter::flush`]), in order. For
    /// records a crash may lose without harm, such as hash reports.
    pub fn append(&mut self, record: &Record) -> Result<(), ReplayError> {
        self.put(record)?;
        if let Record::Bundle { tick, .. } = record {
            self.next_tick = tick.next();
        }
        Ok(())
    }

    /// Writes the bundle of `tick` and flushes, like `write` with a
    /// [`Record::Bundle`] (the same bytes) but without copying the bundle.
    pub fn write_bundle(&mut self, tick: Tick, bundle: &Bundle) -> Result<(), ReplayError> {
        self.put(&BundleRecordRef::Bundle { tick, bundle })?;
        self.next_tick = tick.next();
        self.flush()
    }

    /// Hands everything appended so far to the file in one write.
    pub fn flush(&mut self) -> Result<(), ReplayError> {
        self.out.write_all(&self.buf)?;
        self.out.flush()?;
        self.flushed_len += self.buf.len() as u64;
        self.flushed_ticks = self.next_tick;
        self.buf.clear();
        Ok(())
    }

    /// Encodes `length | body | CRC` onto the pending bytes.
    fn put<T: Serialize>(&mut self, record: &T) -> Result<(), ReplayError> {
        let start = self.buf.len();
        self.buf.extend_from_slice(&[0; 4]);
        if let Err(e) = postcard::to_io(record, &mut self.buf) {
            self.buf.truncate(start);
            return Err(ReplayError::Encode(e));
        }
        let body = &self.buf[start + 4..];
        let crc = crc32fast::hash(body);
        // Bodies are far below u32::MAX (MAX_RECORD_SIZE on read).
        let len = (body.len() as u32).to_le_bytes();
        self.buf[start..start + 4].copy_from_slice(&len);
        self.buf.extend_from_slice(&crc.to_le_bytes());
        Ok(())
    }

    /// Ticks whose bundles were written.
    pub fn ticks(&self) -> u32 {
        self.next_tick.0
    }

    /// Bytes from the start of the file to the end of its last whole
    /// record: everything up to the last flush that succeeded. After a
    /// failed write the file may hold part of a record beyond; cut to this
    /// length it reads to its end without a problem.
    pub fn flushed_len(&self) -> u64 {
        self.flushed_len
    }

    /// The first tick whose bundle did not reach the file whole: the file
    /// holds the bundles of the ticks before it.
    pub fn flushed_ticks(&self) -> Tick {
        self.flushed_ticks
    }

    /// The file, as it is: records appended and not flushed are dropped.
    pub fn into_inner(self) -> W {
        self.out
    }

    /// Writes the End record.
    pub fn finish(mut self, reason: &str) -> Result<W, ReplayError> {
        let ticks = self.next_tick.0;
        self.write(&Record::End {
            ticks,
            reason: reason.to_string(),
        })?;
        Ok(self.out)
    }
}
