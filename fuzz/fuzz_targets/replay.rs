//! Replay files as a user may hand them to `lockstep-client replay`: cut
//! off, damaged, or not replays at all.
//!
//! Input layout: byte 0 is a switch, the rest is the file. With bit 0 set
//! the target first rewrites every record's CRC to match its body, so that
//! mutated bodies reach the record decoder and the ordering rules instead
//! of stopping at a checksum libFuzzer would rarely guess. With bit 0 clear
//! the file is read exactly as given (reproduce a finding of that kind with
//! `lockstep-client replay` on the input minus its first byte).
//!
//! Properties, against the layout in `docs/design/replay-format.md`:
//! - reading never panics and fails only with a typed error that says
//!   where (offsets inside the file), and so does the damage it reports
//!   with what it read (the intact records it says follow the damage);
//! - in the current format, `problem` is `None` exactly when the file is
//!   valid: framed records to the last byte, each body one whole `Record`
//!   with a matching CRC, one header first, bundles for ticks 0, 1, 2, ...;
//!   then the replay holds every record of the file (a file of an older
//!   format the reader still takes has its problems located, but this
//!   independent reading knows only the current layout);
//! - whatever was read (the whole replay, or what came before a problem)
//!   is itself a valid replay: written back with `ReplayWriter`, in the
//!   current format, it reads back equal but for the format and without
//!   a problem;
//! - a reader that returns a few bytes at a time and is sometimes
//!   interrupted reads the same.
#![no_main]

use std::io::{self, Read};

use libfuzzer_sys::fuzz_target;
use lockstep_protocol::{
    decode, After, Damage, ReadOutcome, Record, Replay, ReplayError, ReplayWriter, Tick,
    MAX_RECORD_SIZE, REPLAY_FORMAT, REPLAY_MAGIC,
};

/// Magic and format.
const START_LEN: usize = 10;
/// The `u32` length in front of each record body.
const LEN_LEN: usize = 4;
/// The `u32` CRC behind each record body.
const CRC_LEN: usize = 4;

fuzz_target!(|data: &[u8]| {
    let Some((switch, file)) = data.split_first() else {
        return;
    };
    let mut file = file.to_vec();
    if switch & 1 == 1 {
        fix_checksums(&mut file);
    }

    let read = Replay::read(&file[..]);
    let dribbled = Replay::read(Dribble::new(&file));
    assert_eq!(
        format!("{read:?}"),
        format!("{dribbled:?}"),
        "reading in small pieces changed the outcome"
    );

    let valid = valid_records(&file);
    match read {
        Err(error) => {
            assert!(valid.is_none(), "a valid file was refused: {error}");
            assert_located(&error, &file);
        }
        Ok(ReadOutcome {
            replay, problem, ..
        }) => {
            match (&problem, valid) {
                (Some(problem), _) if replay.format < REPLAY_FORMAT => {
                    assert_damage_located(problem, &file)
                }
                (None, _) if replay.format < REPLAY_FORMAT => {}
                (None, Some(records)) => assert_holds_every_record(&replay, &records),
                (Some(problem), None) => assert_damage_located(problem, &file),
                (None, None) => panic!("an invalid file was read without a problem"),
                (Some(problem), Some(_)) => panic!("a valid file was reported: {problem}"),
            }
            assert_eq!(
                rewrite(&replay),
                Replay {
                    format: REPLAY_FORMAT,
                    ..replay
                },
                "what was read does not round-trip"
            );
        }
    }
});

/// Sets every record's CRC to the CRC of its body, as far as the framing
/// goes.
fn fix_checksums(file: &mut [u8]) {
    let mut at = START_LEN;
    while let Some(len) = file
        .get(at..)
        .and_then(|rest| rest.first_chunk::<LEN_LEN>())
    {
        let body = at + LEN_LEN..at + LEN_LEN + u32::from_le_bytes(*len) as usize;
        let crc = body.end..body.end + CRC_LEN;
        if crc.end > file.len() {
            return;
        }
        let sum = crc32fast::hash(&file[body]);
        file[crc.clone()].copy_from_slice(&sum.to_le_bytes());
        at = crc.end;
    }
}

/// The records of `file` if it is a valid replay by the letter of
/// `docs/design/replay-format.md`, read without the crate's reader: each body must
/// decode as exactly one `Record` (`decode` refuses trailing bytes).
fn valid_records(file: &[u8]) -> Option<Vec<Record>> {
    let (start, mut rest) = file.split_first_chunk::<START_LEN>()?;
    if start[..8] != REPLAY_MAGIC[..] || start[8..] != REPLAY_FORMAT.to_le_bytes() {
        return None;
    }
    let mut records = Vec::new();
    while !rest.is_empty() {
        let (len, tail) = rest.split_first_chunk::<LEN_LEN>()?;
        let len = u32::from_le_bytes(*len) as usize;
        if len > MAX_RECORD_SIZE || tail.len() < len + CRC_LEN {
            return None;
        }
        let (body, tail) = tail.split_at(len);
        let (crc, tail) = tail.split_first_chunk::<CRC_LEN>()?;
        if crc32fast::hash(body) != u32::from_le_bytes(*crc) {
            return None;
        }
        records.push(decode::<Record>(body, MAX_RECORD_SIZE).ok()?);
        rest = tail;
    }
    let (Record::Header(_), others) = records.split_first()? else {
        return None;
    };
    let mut next_tick = 0;
    for record in others {
        match record {
            Record::Header(_) => return None,
            Record::Bundle { tick, .. } if tick.0 != next_tick => return None,
            Record::Bundle { .. } => next_tick += 1,
            Record::Hash { .. }
            | Record::Left { .. }
            | Record::End { .. }
            | Record::Status { .. }
            | Record::Event { .. } => {}
        }
    }
    Some(records)
}

/// The replay of a valid file is its records, sorted by kind.
fn assert_holds_every_record(replay: &Replay, records: &[Record]) {
    let mut expected = Replay {
        header: replay.header.clone(),
        bundles: Vec::new(),
        hashes: Vec::new(),
        departures: Vec::new(),
        end: None,
        format: replay.format,
        statuses: Vec::new(),
        events: Vec::new(),
    };
    for record in records {
        match record.clone() {
            Record::Header(header) => expected.header = header,
            Record::Bundle { bundle, .. } => expected.bundles.push(bundle),
            Record::Hash { tick, player, hash } => expected.hashes.push((tick, player, hash)),
            Record::Left {
                tick,
                player,
                reason,
            } => expected.departures.push((tick, player, reason)),
            Record::End { ticks, reason } => expected.end = Some((ticks, reason)),
            Record::Status { tick, players } => expected.statuses.push((tick, players)),
            Record::Event { tick, event } => expected.events.push((tick, event)),
        }
    }
    assert_eq!(replay, &expected);
}

/// A problem must point inside the file.
fn assert_located(error: &ReplayError, file: &[u8]) {
    match error {
        ReplayError::NotAReplay | ReplayError::Format { .. } | ReplayError::Invalid { .. } => {}
        ReplayError::Truncated { offset, .. } | ReplayError::Corrupt { offset, .. } => {
            assert!(
                *offset <= file.len() as u64,
                "{error} in {} bytes",
                file.len()
            );
        }
        ReplayError::Io(_) | ReplayError::Encode(_) => panic!("impossible from memory: {error}"),
    }
}

/// Damage must point inside the file, and so must the intact records it
/// says follow it.
fn assert_damage_located(damage: &Damage, file: &[u8]) {
    assert_located(&damage.error, file);
    let len = file.len() as u64;
    assert_eq!(damage.offset + damage.bytes, len, "{damage}");
    if let After::Records { from, until, .. } = damage.after {
        assert!(damage.offset < from && from < len, "{damage}");
        assert!(until.is_none_or(|at| from < at && at < len), "{damage}");
    }
}

/// `replay` written with `ReplayWriter` and read back; it must come back
/// without a problem.
fn rewrite(replay: &Replay) -> Replay {
    let mut bytes = Vec::new();
    let mut writer = ReplayWriter::new(&mut bytes, &replay.header).expect("writes to memory");
    let mut records: Vec<Record> = (0..)
        .zip(&replay.bundles)
        .map(|(tick, bundle)| Record::Bundle {
            tick: Tick(tick),
            bundle: bundle.clone(),
        })
        .collect();
    records.extend(
        replay
            .hashes
            .iter()
            .map(|&(tick, player, hash)| Record::Hash { tick, player, hash }),
    );
    records.extend(
        replay
            .departures
            .iter()
            .map(|(tick, player, reason)| Record::Left {
                tick: *tick,
                player: *player,
                reason: reason.clone(),
            }),
    );
    records.extend(
        replay
            .statuses
            .iter()
            .map(|(tick, players)| Record::Status {
                tick: *tick,
                players: players.clone(),
            }),
    );
    records.extend(replay.events.iter().map(|(tick, event)| Record::Event {
        tick: *tick,
        event: event.clone(),
    }));
    records.extend(
        replay
            .end
            .clone()
            .map(|(ticks, reason)| Record::End { ticks, reason }),
    );
    for record in &records {
        writer.write(record).expect("writes to memory");
    }
    drop(writer);
    let outcome = Replay::read(&bytes[..]).expect("a written replay reads");
    assert!(outcome.problem.is_none(), "{:?}", outcome.problem);
    outcome.replay
}

/// A reader that hands out one to seven bytes per call and is interrupted
/// before every third call, like a slow pipe.
struct Dribble<'a> {
    rest: &'a [u8],
    calls: usize,
}

impl<'a> Dribble<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Dribble {
            rest: bytes,
            calls: 0,
        }
    }
}

impl Read for Dribble<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.calls += 1;
        if self.calls.is_multiple_of(3) {
            return Err(io::ErrorKind::Interrupted.into());
        }
        let n = (self.calls % 7 + 1).min(buf.len()).min(self.rest.len());
        let (now, later) = self.rest.split_at(n);
        buf[..n].copy_from_slice(now);
        self.rest = later;
        Ok(n)
    }
}
