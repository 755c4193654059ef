//! Reading a replay: record by record, or whole, keeping the records
//! before any damage and saying what follows it (`damage.rs`).

use std::io::{self, Read};

use super::damage::{survey, After, Damage};
use super::{
    decode_record, GameEvent, PlayerStatus, Record, ReplayError, ReplayHeader, MAX_RECORD_SIZE,
    OLDEST_REPLAY_FORMAT, REPLAY_FORMAT, REPLAY_MAGIC,
};
use crate::{Bundle, PlayerId, Tick};

/// A replay read into memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replay {
    /// The header.
    pub header: ReplayHeader,
    /// Bundles of ticks 0, 1, 2, ...
    pub bundles: Vec<Bundle>,
    /// Hash reports, in file order.
    pub hashes: Vec<(Tick, PlayerId, u64)>,
    /// Departures, in file order.
    pub departures: Vec<(Tick, PlayerId, String)>,
    /// The End record, if the recording ended normally.
    pub end: Option<(u32, String)>,
    /// The file's format number.
    pub format: u16,
    /// Status samples ([`Record::Status`]), in file order.
    pub statuses: Vec<(Tick, Vec<PlayerStatus>)>,
    /// Events ([`Record::Event`]), in file order.
    pub events: Vec<(Tick, GameEvent)>,
}

/// Reads records one at a time.
#[derive(Debug)]
pub struct ReplayReader<R: Read> {
    input: R,
    /// Bytes read so far: where the next record starts.
    pub(super) offset: u64,
    /// The bytes of the last record read, as far as they were read
    /// (`length | body | CRC`, or less where it failed): where a survey
    /// of the damage starts.
    raw: Vec<u8>,
    record: u64,
    format: u16,
}

impl<R: Read> ReplayReader<R> {
    /// Checks the magic and the format.
    pub fn new(mut input: R) -> Result<Self, ReplayError> {
        let mut start = [0u8; 10];
        let got = read_full(&mut input, &mut start)?;
        if got < REPLAY_MAGIC.len() || &start[..8] != REPLAY_MAGIC {
            return Err(ReplayError::NotAReplay);
        }
        if got < start.len() {
            return Err(ReplayError::Truncated {
                offset: got as u64,
                record: 0,
            });
        }
        let found = u16::from_le_bytes([start[8], start[9]]);
        if !(OLDEST_REPLAY_FORMAT..=REPLAY_FORMAT).contains(&found) {
            return Err(ReplayError::Format { found });
        }
        Ok(ReplayReader {
            input,
            offset: start.len() as u64,
            raw: Vec::new(),
            record: 0,
            format: found,
        })
    }

    /// The file's format number.
    pub fn format(&self) -> u16 {
        self.format
    }

    /// The next record, `Ok(None)` at a clean end of file.
    pub fn next_record(&mut self) -> Result<Option<Record>, ReplayError> {
        let start = self.offset;
        let truncated = ReplayError::Truncated {
            offset: start,
            record: self.record,
        };
        self.raw.clear();
        self.raw.resize(4, 0);
        let got = read_full(&mut self.input, &mut self.raw)?;
        self.raw.truncate(got);
        match got {
            0 => return Ok(None),
            4 => {}
            _ => return Err(truncated),
        }
        let len = u32::from_le_bytes([self.raw[0], self.raw[1], self.raw[2], self.raw[3]]) as usize;
        if len > MAX_RECORD_SIZE {
            return Err(self.corrupt(
                start,
                format!("record length {len} exceeds {MAX_RECORD_SIZE}"),
            ));
        }
        self.raw.resize(4 + len + 4, 0);
        let got = read_full(&mut self.input, &mut self.raw[4..])?;
        if got < len + 4 {
            self.raw.truncate(4 + got);
            return Err(truncated);
        }
        let (body, crc) = self.raw[4..].split_at(len);
        let crc = u32::from_le_bytes([crc[0], crc[1], crc[2], crc[3]]);
        if crc32fast::hash(body) != crc {
            return Err(self.corrupt(start, "checksum mismatch".into()));
        }
        let record = decode_record(self.format, body)
            .map_err(|e| self.corrupt(start, format!("undecodable record: {e}")))?;
        self.offset = start + 4 + len as u64 + 4;
        self.record += 1;
        Ok(Some(record))
    }

    fn corrupt(&self, offset: u64, what: String) -> ReplayError {
        ReplayError::Corrupt {
            offset,
            record: self.record,
            what,
        }
    }

    /// `error`, found in record `record` starting at byte `offset` after
    /// `ticks` bundles, with what the rest of the input holds: reads it to
    /// the end.
    fn damage(
        &mut self,
        error: ReplayError,
        offset: u64,
        record: u64,
        ticks: u32,
    ) -> io::Result<Damage> {
        let mut rest = std::mem::take(&mut self.raw);
        // The record was read whole when its bytes are as many as its
        // length says: the next one may start right after it.
        let whole = rest
            .first_chunk::<4>()
            .map(|len| 4 + u32::from_le_bytes(*len) as usize + 4)
            .filter(|&end| end == rest.len());
        let declared = rest.first_chunk::<4>().map(|len| u32::from_le_bytes(*len));
        self.input.read_to_end(&mut rest)?;
        let after = survey(&rest, offset, whole, self.format);
        // A record running past the end of the file with intact records
        // after its start is not cut short: its length is damaged.
        let error = match (error, declared) {
            (ReplayError::Truncated { offset, record }, Some(len))
                if matches!(after, After::Records { .. }) =>
            {
                ReplayError::Corrupt {
                    offset,
                    record,
                    what: format!("record length {len} runs past the end of the file"),
                }
            }
            (error, _) => error,
        };
        Ok(Damage {
            error,
            offset,
            record,
            ticks,
            bytes: rest.len() as u64,
            after,
        })
    }
}

/// Reads into `buf` until it is full or the input ends; returns the count.
fn read_full(input: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match input.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// What [`Replay::read`] found after the last good record.
#[derive(Debug)]
pub struct ReadOutcome {
    /// Everything up to the first problem.
    pub replay: Replay,
    /// The problem that stopped reading, if any (truncation, corruption,
    /// records out of order), with where it is and what follows it.
    pub problem: Option<Damage>,
    /// Bytes from the start of the file to the end of the last record
    /// read into `replay`: what a recorder that goes on with the file
    /// ([`ReplayWriter::resume`](super::ReplayWriter::resume)) keeps,
    /// cutting off a damaged tail ([`Damage::is_tail`]).
    pub valid_len: u64,
}

impl Replay {
    /// Reads a whole replay. Damage does not lose the records before it:
    /// they are returned with the problem, which says where it is and
    /// whether intact records follow it (the rest of the input is read
    /// to find out).
    pub fn read(input: impl Read) -> Result<ReadOutcome, ReplayError> {
        let mut reader = ReplayReader::new(input)?;
        let header = match reader.next_record()? {
            Some(Record::Header(header)) => header,
            Some(_) => {
                return Err(ReplayError::Invalid {
                    offset: 10,
                    record: 0,
                    what: "the first record is not the header".into(),
                })
            }
            None => {
                return Err(ReplayError::Truncated {
                    offset: 10,
                    record: 0,
                })
            }
        };
        let mut replay = Replay {
            header,
            bundles: Vec::new(),
            hashes: Vec::new(),
            departures: Vec::new(),
            end: None,
            format: reader.format,
            statuses: Vec::new(),
            events: Vec::new(),
        };
        let (mut start, mut index);
        let problem = loop {
            (start, index) = (reader.offset, reader.record);
            // A record found invalid below was read whole: it is cut off
            // too.
            let invalid = |what| ReplayError::Invalid {
                offset: start,
                record: index,
                what,
            };
            let record = match reader.next_record() {
                Ok(Some(record)) => record,
                Ok(None) => break None,
                Err(e @ (ReplayError::Truncated { .. } | ReplayError::Corrupt { .. })) => {
                    break Some(e)
                }
                Err(e) => return Err(e),
            };
            match record {
                Record::Bundle { tick, bundle } => {
                    let expected = replay.bundles.len() as u32;
                    if tick.0 != expected {
                        break Some(invalid(format!(
                            "bundle for tick {tick} where tick {expected} was expected"
                        )));
                    }
                    replay.bundles.push(bundle);
                }
                Record::Hash { tick, player, hash } => replay.hashes.push((tick, player, hash)),
                Record::Left {
                    tick,
                    player,
                    reason,
                } => replay.departures.push((tick, player, reason)),
                Record::End { ticks, reason } => replay.end = Some((ticks, reason)),
                Record::Status { .. } | Record::Event { .. } if replay.format < 4 => {
                    break Some(invalid(format!(
                        "a format 4 record in a format {} file",
                        replay.format
                    )))
                }
                Record::Status { tick, players } => replay.statuses.push((tick, players)),
                Record::Event { tick, event } => replay.events.push((tick, event)),
                Record::Header(_) => break Some(invalid("a second header".into())),
            }
        };
        let ticks = replay.bundles.len() as u32;
        let problem = problem
            .map(|error| reader.damage(error, start, index, ticks))
            .transpose()?;
        Ok(ReadOutcome {
            replay,
            problem,
            valid_len: start,
        })
    }
}
