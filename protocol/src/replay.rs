//! The replay file: everything needed to re-simulate a game, recorded by
//! the server (and optionally by a client) as the game runs.
//!
//! Layout (all integers little-endian), documented for other tools in
//! `docs/replay-format.md`:
//!
//! ```text
//! magic    8 bytes  "LOCKSTEP"
//! format   u16      REPLAY_FORMAT
//! record*  u32 body length | body (postcard `Record`) | u32 CRC-32 of body
//! ```
//!
//! The first record is always [`Record::Header`]. Format 4 added the
//! [`Record::Status`] samples and the [`Record::Event`]s: what the game
//! looked like to the server as it ran, for the report picture. They come
//! after the variants of format 3 so every format 3 record has the same
//! bytes in format 4, and the reader reads both. Format 5 names the game
//! in the header ([`ReplayHeader::spec`]) where formats 3 and 4, written
//! by the ball game only, had its ball count: the reader reads their
//! header as the ball game with that count ([`GameSpec::balls`]).
//!
//! The file is append-only
//! and records are written whole with one `write` call per flush, so a
//! recorder killed at any moment leaves every flushed record intact;
//! the reader reports a cut-off last record as [`ReplayError::Truncated`]
//! with its byte offset, and a damaged one as [`ReplayError::Corrupt`].

use std::io::{self, Read, Write};

use serde::{Deserialize, Serialize};

use crate::{decode, Bundle, GameSpec, Percent, Platform, PlayerId, RosterEntry, Slack, Tick};

/// First bytes of every replay file.
pub const REPLAY_MAGIC: &[u8; 8] = b"LOCKSTEP";

/// Version of the replay layout written; readers refuse other versions
/// than this one and [`OLDEST_REPLAY_FORMAT`] and those between.
pub const REPLAY_FORMAT: u16 = 5;

/// The oldest format still read: format 4 only added records, so a
/// format 3 file is a format 4 file that happens to hold none of them;
/// format 5 changed only the header. Format 2 bundles lack `substituted`
/// and would decode wrongly.
pub const OLDEST_REPLAY_FORMAT: u16 = 3;

/// The first format whose header names the game.
const NAMED_GAME_FORMAT: u16 = 5;

/// Largest record accepted: a header with a full roster is a few KB; a
/// larger length means the file is damaged.
pub const MAX_RECORD_SIZE: usize = 1 << 20;

/// One entry of a replay.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Record {
    /// Always first: what the world is built from.
    Header(ReplayHeader),
    /// The bundle of `tick`, as relayed (ticks are consecutive from 0).
    Bundle {
        /// The bundle's tick: applying it takes the world to `tick + 1`.
        tick: Tick,
        /// Inputs and departures of that tick.
        bundle: Bundle,
    },
    /// A player's world hash after `tick` ticks.
    Hash {
        /// World tick (number of ticks simulated).
        tick: Tick,
        /// Who reported it.
        player: PlayerId,
        /// The hash.
        hash: u64,
    },
    /// A player left; the same departure is in the bundle of `tick`.
    Left {
        /// First tick simulated without the player.
        tick: Tick,
        /// Who.
        player: PlayerId,
        /// Why, in words.
        reason: String,
    },
    /// The recording ended normally.
    End {
        /// Ticks recorded.
        ticks: u32,
        /// Why it ended.
        reason: String,
    },
    /// What the server saw of every player at one moment (format 4 on): a
    /// few samples a second, when it sends the lag indicator. Only for
    /// pictures of the game; verification ignores them.
    Status {
        /// The next tick the server was to bundle when it took the sample.
        tick: Tick,
        /// One entry per player in the game, ascending.
        players: Vec<PlayerStatus>,
    },
    /// Something the server decided that no other record shows (format 4
    /// on). Drops, rejoins and stand-ins are not repeated here: the
    /// [`Record::Left`] records and the bundles' `left`, `joined` and
    /// `substituted` already hold them, at their exact ticks.
    Event {
        /// The tick it happened at (see [`GameEvent`] for each kind).
        tick: Tick,
        /// What happened.
        event: GameEvent,
    },
}

/// One player's link and timing as the server saw it, in a
/// [`Record::Status`]. The server does not know a client's input delay;
/// the slack is what the client sets it from, so the two move together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayerStatus {
    /// Who.
    pub player: PlayerId,
    /// QUIC's smoothed round-trip time to the player, milliseconds.
    pub ping_ms: u16,
    /// How early the player's recent inputs arrived (see [`Slack`]);
    /// `None` before the server had timed any.
    pub slack: Option<Slack>,
    /// Whether the next tick was waiting for this player's input.
    pub waited_for: bool,
    /// How many ticks this player's inputs trailed the furthest ahead.
    pub ticks_behind: u16,
}

/// A decision of the server worth marking on a picture of the game.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum GameEvent {
    /// The game speed changes at the record's tick (the tick announced,
    /// not the tick the announcement went out at).
    Speed {
        /// The new speed.
        percent: Percent,
    },
    /// The hashes reported for the record's tick differ.
    Desync {
        /// The players whose hash differed from the majority.
        diverged: Vec<PlayerId>,
        /// The first tick whose per-tick hashes differed, when the
        /// players' answers pinpointed it.
        first: Option<Tick>,
    },
}

/// Everything needed to build the starting world and know who played.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplayHeader {
    /// Wire protocol version of the recorder.
    pub protocol_version: u16,
    /// Program and version that wrote the file.
    pub build: String,
    /// Who recorded: "server", "client NAME" or "solo".
    pub recorder: String,
    /// Start of the game, seconds since the Unix epoch (UTC).
    pub started_unix: u64,
    /// World seed.
    pub seed: u64,
    /// Ticks per second.
    pub tick_rate: u16,
    /// Input delay in ticks.
    pub input_delay: u8,
    /// Hash report interval in ticks.
    pub hash_interval: u16,
    /// Which game, with its settings (format 5 on; read from the ball
    /// count of formats 3 and 4).
    pub spec: GameSpec,
    /// Players in slot order.
    pub roster: Vec<RosterEntry>,
    /// The machines the game ran on, as their clients reported them (see
    /// [`Platform`]), by slot: what a replay that verifies, or not, says
    /// about cross-machine determinism. The server fills in every player
    /// of the starting roster; a client's own recording only itself.
    pub platforms: Vec<(PlayerId, Platform)>,
}

/// The header of formats 3 and 4: [`ReplayHeader`] with the ball game's
/// ball count where format 5 has [`ReplayHeader::spec`].
#[derive(Deserialize)]
#[cfg_attr(test, derive(Serialize))]
struct BallsHeader {
    protocol_version: u16,
    build: String,
    recorder: String,
    started_unix: u64,
    seed: u64,
    tick_rate: u16,
    input_delay: u8,
    hash_interval: u16,
    balls: u16,
    roster: Vec<RosterEntry>,
    platforms: Vec<(PlayerId, Platform)>,
}

/// [`Record`] as formats 3 and 4 wrote its first variant.
#[derive(Deserialize)]
#[cfg_attr(test, derive(Serialize))]
enum BallsHeaderRecord {
    Header(BallsHeader),
}

impl From<BallsHeader> for ReplayHeader {
    fn from(old: BallsHeader) -> ReplayHeader {
        ReplayHeader {
            protocol_version: old.protocol_version,
            build: old.build,
            recorder: old.recorder,
            started_unix: old.started_unix,
            seed: old.seed,
            tick_rate: old.tick_rate,
            input_delay: old.input_delay,
            hash_interval: old.hash_interval,
            spec: GameSpec::balls(old.balls),
            roster: old.roster,
            platforms: old.platforms,
        }
    }
}

/// Why a replay could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// Reading or writing the file failed.
    #[error("replay I/O failed: {0}")]
    Io(#[from] io::Error),
    /// The file does not start with the replay magic.
    #[error("not a lockstep replay (the first bytes are not \"LOCKSTEP\")")]
    NotAReplay,
    /// Written by a format this program does not read.
    #[error("replay format {found} is not supported (this program reads formats {OLDEST_REPLAY_FORMAT} to {REPLAY_FORMAT})")]
    Format {
        /// The file's format number.
        found: u16,
    },
    /// The file ends inside a record: the recorder stopped mid-write.
    #[error("the replay is truncated at byte {offset}, inside record {record}")]
    Truncated {
        /// Byte offset where the incomplete record starts.
        offset: u64,
        /// Index of the incomplete record (0 = header).
        record: u64,
    },
    /// A record's checksum or encoding is wrong.
    #[error("the replay is corrupt at byte {offset} (record {record}): {what}")]
    Corrupt {
        /// Byte offset of the damaged record.
        offset: u64,
        /// Index of the damaged record.
        record: u64,
        /// What is wrong with it.
        what: String,
    },
    /// The records are valid but do not make a replay (no header first,
    /// bundles out of order).
    #[error("the replay is invalid at record {record}: {what}")]
    Invalid {
        /// Index of the offending record.
        record: u64,
        /// What is wrong.
        what: String,
    },
    /// A record could not be encoded.
    #[error("cannot encode a replay record: {0}")]
    Encode(postcard::Error),
}

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
    out: W,
    buf: Vec<u8>,
    next_tick: Tick,
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
        };
        writer.write(&Record::Header(header.clone()))?;
        Ok(writer)
    }

    /// Goes on with a replay whose records up to the bundle of
    /// `next_tick - 1` are already in `out` (opened for appending, cut to
    /// [`ReadOutcome::valid_len`]): writes no magic and no header, and
    /// expects the bundle of `next_tick` next.
    pub fn resume(out: W, next_tick: Tick) -> Self {
        ReplayWriter {
            out,
            buf: Vec::new(),
            next_tick,
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
        if let Record::Bundle { tick, .. } = record {
            self.next_tick = tick.next();
        }
        self.put(record)
    }

    /// Writes the bundle of `tick` and flushes, like `write` with a
    /// [`Record::Bundle`] (the same bytes) but without copying the bundle.
    pub fn write_bundle(&mut self, tick: Tick, bundle: &Bundle) -> Result<(), ReplayError> {
        self.next_tick = tick.next();
        self.put(&BundleRecordRef::Bundle { tick, bundle })?;
        self.flush()
    }

    /// Hands everything appended so far to the file in one write.
    pub fn flush(&mut self) -> Result<(), ReplayError> {
        self.out.write_all(&self.buf)?;
        self.buf.clear();
        self.out.flush()?;
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
    offset: u64,
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
    /// ([`ReplayWriter::resume`]) keeps, cutting off a damaged tail.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Buttons, Input, PlayerInput};

    fn header() -> ReplayHeader {
        ReplayHeader {
            protocol_version: crate::PROTOCOL_VERSION,
            build: "test".into(),
            recorder: "server".into(),
            started_unix: 1_800_000_000,
            seed: 7,
            tick_rate: 60,
            input_delay: 3,
            hash_interval: 15,
            spec: GameSpec::balls(24),
            roster: vec![RosterEntry {
                id: PlayerId(0),
                name: "ada".into(),
            }],
            platforms: vec![(
                PlayerId(0),
                Platform {
                    target: "x86_64-unknown-linux-gnu".into(),
                    ..Platform::default()
                },
            )],
        }
    }

    fn bundle(b: u8) -> Bundle {
        Bundle {
            left: vec![],
            joined: vec![],
            inputs: vec![PlayerInput {
                player: PlayerId(0),
                input: Input {
                    buttons: Buttons(b),
                    axes: None,
                },
            }],
            substituted: vec![],
        }
    }

    fn sample(ticks: u32) -> Vec<u8> {
        let mut writer = ReplayWriter::new(Vec::new(), &header()).unwrap();
        for t in 0..ticks {
            writer
                .write(&Record::Bundle {
                    tick: Tick(t),
                    bundle: bundle(t as u8),
                })
                .unwrap();
        }
        writer
            .write(&Record::Hash {
                tick: Tick(ticks),
                player: PlayerId(0),
                hash: 42,
            })
            .unwrap();
        writer.finish("game over").unwrap()
    }

    #[test]
    fn borrowed_bundles_and_appended_records_write_the_same_file() {
        let mut writer = ReplayWriter::new(Vec::new(), &header()).unwrap();
        for t in 0..5 {
            writer.write_bundle(Tick(t), &bundle(t as u8)).unwrap();
        }
        let flushed = writer.out.len();
        writer
            .append(&Record::Hash {
                tick: Tick(5),
                player: PlayerId(0),
                hash: 42,
            })
            .unwrap();
        // Appended, not yet handed to the file.
        assert_eq!(writer.out.len(), flushed);
        assert_eq!(writer.ticks(), 5);
        assert_eq!(writer.finish("game over").unwrap(), sample(5));
    }

    #[test]
    fn a_recording_cut_mid_record_goes_on_after_its_last_whole_record() {
        let mut writer = ReplayWriter::new(Vec::new(), &header()).unwrap();
        for t in 0..4 {
            writer.write_bundle(Tick(t), &bundle(t as u8)).unwrap();
        }
        let whole = writer.out.len();
        writer.write_bundle(Tick(4), &bundle(4)).unwrap();
        // Killed in the middle of tick 4's record.
        let mut file = writer.out;
        file.truncate(whole + 3);
        let outcome = Replay::read(file.as_slice()).unwrap();
        assert!(matches!(
            outcome.problem,
            Some(ReplayError::Truncated { offset, .. }) if offset == whole as u64
        ));
        assert_eq!(outcome.valid_len, whole as u64);
        assert_eq!(outcome.replay.bundles.len(), 4);

        file.truncate(outcome.valid_len as usize);
        let mut writer = ReplayWriter::resume(file, Tick(4));
        for t in 4..6 {
            writer.write_bundle(Tick(t), &bundle(t as u8 + 10)).unwrap();
        }
        assert_eq!(writer.ticks(), 6);
        let file = writer.finish("resumed and over").unwrap();
        let outcome = Replay::read(file.as_slice()).unwrap();
        assert!(outcome.problem.is_none(), "{:?}", outcome.problem);
        assert_eq!(outcome.valid_len, file.len() as u64);
        let marks: Vec<u8> = outcome
            .replay
            .bundles
            .iter()
            .map(|b| b.inputs[0].input.buttons.0)
            .collect();
        assert_eq!(marks, [0, 1, 2, 3, 14, 15]);
        assert_eq!(outcome.replay.end, Some((6, "resumed and over".into())));
    }

    /// The file layout is pinned: if this fails, the change needs a new
    /// REPLAY_FORMAT and docs/replay-format.md says what changed.
    #[test]
    fn golden_bytes_pin_the_format_and_the_bundle_record() {
        assert_eq!(sample(0)[..10], *b"LOCKSTEP\x05\x00");
        let record = Record::Bundle {
            tick: Tick(300),
            bundle: Bundle {
                inputs: vec![
                    PlayerInput {
                        player: PlayerId(0),
                        input: Input {
                            buttons: Buttons(1),
                            axes: None,
                        },
                    },
                    PlayerInput {
                        player: PlayerId(1),
                        input: Input::default(),
                    },
                ],
                substituted: vec![PlayerId(1)],
                ..Bundle::default()
            },
        };
        // Bundle, tick 300, nobody left or joined, two inputs, then the
        // stand-ins: player 1.
        assert_eq!(
            crate::encode(&record, MAX_RECORD_SIZE).unwrap(),
            [0x01, 0xac, 0x02, 0x00, 0x00, 0x02, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x01, 0x01]
        );
    }

    /// The format 4 records are pinned like the bundle: the table in
    /// docs/replay-format.md describes these bytes.
    #[test]
    fn golden_bytes_pin_the_status_and_event_records() {
        let status = Record::Status {
            tick: Tick(300),
            players: vec![PlayerStatus {
                player: PlayerId(1),
                ping_ms: 40,
                slack: Some(Slack {
                    from: Tick(60),
                    p1_ms: -3,
                    p10_ms: 12,
                }),
                waited_for: true,
                ticks_behind: 2,
            }],
        };
        // Status, tick 300, one player: 1, ping 40, slack from 60, -3
        // and 12 (zigzag), waited for, 2 behind.
        assert_eq!(
            crate::encode(&status, MAX_RECORD_SIZE).unwrap(),
            [0x05, 0xac, 0x02, 0x01, 0x01, 0x28, 0x01, 0x3c, 0x05, 0x18, 0x01, 0x02]
        );
        let desync = Record::Event {
            tick: Tick(300),
            event: GameEvent::Desync {
                diverged: vec![PlayerId(2)],
                first: Some(Tick(293)),
            },
        };
        assert_eq!(
            crate::encode(&desync, MAX_RECORD_SIZE).unwrap(),
            [0x06, 0xac, 0x02, 0x01, 0x01, 0x02, 0x01, 0xa5, 0x02]
        );
        let speed = Record::Event {
            tick: Tick(10),
            event: GameEvent::Speed {
                percent: Percent(50),
            },
        };
        assert_eq!(
            crate::encode(&speed, MAX_RECORD_SIZE).unwrap(),
            [0x06, 0x0a, 0x00, 0x32]
        );
    }

    #[test]
    fn a_replay_round_trips() {
        let outcome = Replay::read(&sample(5)[..]).unwrap();
        assert!(outcome.problem.is_none());
        let replay = outcome.replay;
        assert_eq!(replay.header, header());
        assert_eq!(replay.bundles.len(), 5);
        assert_eq!(replay.bundles[3], bundle(3));
        assert_eq!(replay.hashes, vec![(Tick(5), PlayerId(0), 42)]);
        assert_eq!(replay.end, Some((5, "game over".into())));
    }

    #[test]
    fn every_cut_keeps_the_records_before_it_and_says_where() {
        let bytes = sample(5);
        for cut in 10..bytes.len() {
            match Replay::read(&bytes[..cut]) {
                Ok(outcome) => {
                    // A cut on a record boundary is a clean (early) end; a
                    // cut inside one is reported with its offset.
                    if let Some(problem) = outcome.problem {
                        let ReplayError::Truncated { offset, .. } = problem else {
                            panic!("cut at {cut}: {problem}");
                        };
                        assert!(offset < cut as u64);
                    }
                    assert!(outcome.replay.bundles.len() <= 5);
                }
                Err(ReplayError::Truncated { .. }) => {}
                Err(e) => panic!("cut at {cut}: {e}"),
            }
        }
    }

    #[test]
    fn a_flipped_byte_is_reported_as_corruption_at_its_record() {
        let bytes = sample(5);
        let mut damaged = bytes.clone();
        // Inside the body of the third record (header, bundle 0, bundle 1).
        let target = damaged.len() - 40;
        damaged[target] ^= 0x55;
        let outcome = Replay::read(&damaged[..]).unwrap();
        let Some(ReplayError::Corrupt { record, offset, .. }) = outcome.problem else {
            panic!("{:?}", outcome.problem);
        };
        assert!(offset <= target as u64);
        assert_eq!(outcome.replay.bundles.len() as u64, record - 1);
    }

    #[test]
    fn other_files_and_formats_are_refused_clearly() {
        assert!(matches!(
            Replay::read(&b"PNG\x89 not a replay"[..]),
            Err(ReplayError::NotAReplay)
        ));
        let mut other = sample(1);
        other[8] = 9;
        let err = Replay::read(&other[..]).unwrap_err();
        assert!(matches!(err, ReplayError::Format { found: 9 }));
        assert!(err.to_string().contains("format 9"));
    }

    #[test]
    fn a_huge_length_is_corruption_not_an_allocation() {
        let mut bytes = sample(0);
        bytes.truncate(10);
        bytes.extend_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(
            Replay::read(&bytes[..]),
            Err(ReplayError::Corrupt { .. })
        ));
    }

    /// Found by the `replay` fuzz target: a body holding a valid record and
    /// then more bytes, under a matching CRC, was read as that record.
    #[test]
    fn bytes_after_a_record_inside_its_body_are_corruption() {
        let mut bytes = sample(0);
        let len = u32::from_le_bytes([bytes[10], bytes[11], bytes[12], bytes[13]]) as usize;
        let mut body = bytes[14..14 + len].to_vec();
        body.push(0);
        let mut padded = bytes[..10].to_vec();
        padded.extend_from_slice(&(body.len() as u32).to_le_bytes());
        padded.extend_from_slice(&body);
        padded.extend_from_slice(&crc32fast::hash(&body).to_le_bytes());
        bytes.splice(..14 + len + 4, padded);

        let Err(ReplayError::Corrupt {
            offset: 10,
            record: 0,
            what,
        }) = Replay::read(&bytes[..])
        else {
            panic!("a padded header was accepted");
        };
        assert!(what.contains("1 unexpected bytes"), "{what}");
    }

    fn status_and_events(ticks: u32) -> Vec<u8> {
        let mut writer = ReplayWriter::new(Vec::new(), &header()).unwrap();
        for t in 0..ticks {
            writer.write_bundle(Tick(t), &bundle(t as u8)).unwrap();
            writer
                .append(&Record::Status {
                    tick: Tick(t),
                    players: vec![PlayerStatus {
                        player: PlayerId(0),
                        ping_ms: 40 + t as u16,
                        slack: Some(Slack {
                            from: Tick(0),
                            p1_ms: -3,
                            p10_ms: 12,
                        }),
                        waited_for: t % 2 == 0,
                        ticks_behind: 1,
                    }],
                })
                .unwrap();
        }
        writer
            .write(&Record::Event {
                tick: Tick(2),
                event: GameEvent::Speed {
                    percent: Percent(50),
                },
            })
            .unwrap();
        writer
            .write(&Record::Event {
                tick: Tick(3),
                event: GameEvent::Desync {
                    diverged: vec![PlayerId(0)],
                    first: Some(Tick(1)),
                },
            })
            .unwrap();
        writer.finish("game over").unwrap()
    }

    #[test]
    fn status_samples_and_events_round_trip() {
        let outcome = Replay::read(&status_and_events(4)[..]).unwrap();
        assert!(outcome.problem.is_none(), "{:?}", outcome.problem);
        let replay = outcome.replay;
        assert_eq!(replay.format, REPLAY_FORMAT);
        assert_eq!(replay.bundles.len(), 4);
        assert_eq!(replay.statuses.len(), 4);
        assert_eq!(replay.statuses[3].0, Tick(3));
        assert_eq!(replay.statuses[3].1[0].ping_ms, 43);
        assert_eq!(replay.statuses[3].1[0].slack.map(|s| s.p1_ms), Some(-3));
        assert_eq!(
            replay.events,
            vec![
                (
                    Tick(2),
                    GameEvent::Speed {
                        percent: Percent(50)
                    }
                ),
                (
                    Tick(3),
                    GameEvent::Desync {
                        diverged: vec![PlayerId(0)],
                        first: Some(Tick(1)),
                    }
                ),
            ]
        );
    }

    /// `file` (format 5) as formats 3 and 4 wrote it: the same records,
    /// with the ball count in the header.
    fn in_format(file: &[u8], format: u16) -> Vec<u8> {
        let mut reader = ReplayReader::new(file).unwrap();
        let Some(Record::Header(header)) = reader.next_record().unwrap() else {
            panic!("the sample starts with its header");
        };
        let rest = &file[reader.offset as usize..];
        let balls: u16 = postcard::from_bytes(&header.spec.settings).unwrap();
        let old = BallsHeaderRecord::Header(BallsHeader {
            protocol_version: header.protocol_version,
            build: header.build,
            recorder: header.recorder,
            started_unix: header.started_unix,
            seed: header.seed,
            tick_rate: header.tick_rate,
            input_delay: header.input_delay,
            hash_interval: header.hash_interval,
            balls,
            roster: header.roster,
            platforms: header.platforms,
        });
        let body = postcard::to_stdvec(&old).unwrap();
        let mut out = REPLAY_MAGIC.to_vec();
        out.extend_from_slice(&format.to_le_bytes());
        out.extend_from_slice(&(body.len() as u32).to_le_bytes());
        out.extend_from_slice(&body);
        out.extend_from_slice(&crc32fast::hash(&body).to_le_bytes());
        out.extend_from_slice(rest);
        out
    }

    /// Formats 3 and 4 were written by the ball game alone: their header's
    /// ball count reads as the ball game with that many balls, and every
    /// other record as it always did.
    #[test]
    fn a_format_4_header_reads_as_the_ball_game() {
        let old = in_format(&status_and_events(3), 4);
        let outcome = Replay::read(&old[..]).unwrap();
        assert!(outcome.problem.is_none(), "{:?}", outcome.problem);
        assert_eq!(outcome.replay.format, 4);
        assert_eq!(outcome.replay.header, header());
        assert_eq!(outcome.replay.header.spec, GameSpec::balls(24));
        assert_eq!(outcome.replay.bundles.len(), 3);
        assert_eq!(outcome.valid_len, old.len() as u64);
        // Read as format 5, the old header is not a header.
        let mut misread = old.clone();
        misread[8] = 5;
        assert!(matches!(
            Replay::read(&misread[..]),
            Err(ReplayError::Corrupt { record: 0, .. })
        ));
    }

    /// Format 4 only added records after the old ones: a format 3 file is
    /// read as it always was.
    #[test]
    fn format_3_files_are_still_read() {
        let old = in_format(&sample(5), 3);
        let outcome = Replay::read(&old[..]).unwrap();
        assert!(outcome.problem.is_none());
        assert_eq!(outcome.replay.format, 3);
        assert_eq!(outcome.replay.bundles.len(), 5);
        assert!(outcome.replay.statuses.is_empty());
        assert!(outcome.replay.events.is_empty());
        let mut older = sample(1);
        older[8] = 2;
        assert!(matches!(
            Replay::read(&older[..]),
            Err(ReplayError::Format { found: 2 })
        ));
    }

    #[test]
    fn a_status_record_in_a_format_3_file_is_invalid() {
        let bytes = in_format(&status_and_events(2), 3);
        let outcome = Replay::read(&bytes[..]).unwrap();
        assert!(matches!(
            outcome.problem,
            Some(ReplayError::Invalid { record: 2, .. })
        ));
        assert_eq!(outcome.replay.bundles.len(), 1);
    }

    /// Every single-byte change and every cut of a file with the new
    /// records is an error or a clean early end, never a panic.
    #[test]
    fn damaged_status_and_event_records_are_errors() {
        let bytes = status_and_events(3);
        for at in 10..bytes.len() {
            for flip in [0x01u8, 0x80, 0xff] {
                let mut damaged = bytes.clone();
                damaged[at] ^= flip;
                if let Ok(outcome) = Replay::read(&damaged[..]) {
                    assert!(outcome.replay.statuses.len() <= 3);
                }
            }
            let _ = Replay::read(&bytes[..at]);
        }
    }

    #[test]
    fn bundles_out_of_order_are_invalid() {
        let mut writer = ReplayWriter::new(Vec::new(), &header()).unwrap();
        writer
            .write(&Record::Bundle {
                tick: Tick(1),
                bundle: bundle(1),
            })
            .unwrap();
        let outcome = Replay::read(&writer.finish("x").unwrap()[..]).unwrap();
        assert!(matches!(
            outcome.problem,
            Some(ReplayError::Invalid { record: 1, .. })
        ));
    }
}
