//! Reading a replay: record by record, or whole, keeping the records
//! before a damaged tail.

use std::io::{self, Read};

use super::{
    BallsHeaderRecord, GameEvent, PlayerStatus, Record, ReplayError, ReplayHeader, MAX_RECORD_SIZE,
    NAMED_GAME_FORMAT, OLDEST_REPLAY_FORMAT, REPLAY_FORMAT, REPLAY_MAGIC,
};
use crate::{decode, Bundle, PlayerId, Tick};

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
        let mut len = [0u8; 4];
        match read_full(&mut self.input, &mut len)? {
            0 => return Ok(None),
            4 => {}
            _ => return Err(truncated),
        }
        let len = u32::from_le_bytes(len) as usize;
        if len > MAX_RECORD_SIZE {
            return Err(self.corrupt(
                start,
                format!("record length {len} exceeds {MAX_RECORD_SIZE}"),
            ));
        }
        let mut body = vec![0u8; len + 4];
        if read_full(&mut self.input, &mut body)? < body.len() {
            return Err(truncated);
        }
        let (body, crc) = body.split_at(len);
        let crc = u32::from_le_bytes([crc[0], crc[1], crc[2], crc[3]]);
        if crc32fast::hash(body) != crc {
            return Err(self.corrupt(start, "checksum mismatch".into()));
        }
        // `decode`, not `postcard::from_bytes`, which would ignore bytes
        // after the record: a body is exactly one record.
        let record = self
            .decode_record(body)
            .map_err(|e| self.corrupt(start, format!("undecodable record: {e}")))?;
        self.offset = start + 4 + len as u64 + 4;
        self.record += 1;
        Ok(Some(record))
    }

    /// One record's body in this file's format: a header before format 5
    /// is the ball game's.
    fn decode_record(&self, body: &[u8]) -> Result<Record, crate::DecodeError> {
        // Variant 0, the header, is the varint 0.
        if self.format < NAMED_GAME_FORMAT && body.first() == Some(&0) {
            let BallsHeaderRecord::Header(old) = decode(body, MAX_RECORD_SIZE)?;
            return Ok(Record::Header(old.into()));
        }
        decode::<Record>(body, MAX_RECORD_SIZE)
    }

    fn corrupt(&self, offset: u64, what: String) -> ReplayError {
        ReplayError::Corrupt {
            offset,
            record: self.record,
            what,
        }
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
    /// The problem that stopped reading, if any (truncation, corruption).
    pub problem: Option<ReplayError>,
    /// Bytes from the start of the file to the end of the last record
    /// read into `replay`: what a recorder that goes on with the file
    /// ([`ReplayWriter::resume`](super::ReplayWriter::resume)) keeps, cutting off a damaged tail.
    pub valid_len: u64,
}

impl Replay {
    /// Reads a whole replay. A damaged or truncated tail does not lose the
    /// records before it: they are returned with the problem.
    pub fn read(input: impl Read) -> Result<ReadOutcome, ReplayError> {
        let mut reader = ReplayReader::new(input)?;
        let header = match reader.next_record()? {
            Some(Record::Header(header)) => header,
            Some(_) => {
                return Err(ReplayError::Invalid {
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
        let mut valid_len;
        let problem = loop {
            let index = reader.record;
            // A record found invalid below was read whole: it is cut off
            // too.
            valid_len = reader.offset;
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
                        break Some(ReplayError::Invalid {
                            record: index,
                            what: format!(
                                "bundle for tick {tick} where tick {expected} was expected"
                            ),
                        });
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
                    break Some(ReplayError::Invalid {
                        record: index,
                        what: format!("a format 4 record in a format {} file", replay.format),
                    })
                }
                Record::Status { tick, players } => replay.statuses.push((tick, players)),
                Record::Event { tick, event } => replay.events.push((tick, event)),
                Record::Header(_) => {
                    break Some(ReplayError::Invalid {
                        record: index,
                        what: "a second header".into(),
                    })
                }
            }
        };
        if problem.is_none() {
            valid_len = reader.offset;
        }
        Ok(ReadOutcome {
            replay,
            problem,
            valid_len,
        })
    }
}
