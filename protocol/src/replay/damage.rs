//! Damage to a replay and what follows it: a torn tail, or damage in the
//! middle of the file with intact records after it.
//!
//! A recorder killed mid-write leaves a torn tail: the end of the file is
//! part of one record, and nothing intact comes after it. Cutting it off
//! loses nothing (`lockstep-server --resume` does). A disk, a copy or an
//! editor can damage any byte instead, and then the records after the
//! damage are still there: cutting the file there would throw them away.
//! So the reader looks at what follows the damage ([`survey`]):
//!
//! - the record after a damaged one starts where the damaged record's
//!   length says, if only its body was hit (a checksum mismatch): one
//!   check finds it;
//! - otherwise (a damaged length, bytes missing or added) the next intact
//!   record is searched for at every byte after the damage;
//! - from the first intact record found, the records are followed by
//!   their lengths to the end of the file or to more damage.
//!
//! An intact record is one that is framed within the file, has a matching
//! CRC-32 and decodes: a chance match needs the 32-bit checksum to agree
//! as well, so records found are real. The records after damage are only
//! counted, never read into the replay: a verification stops at the
//! damage, since what the damaged record held is unknown.

use std::fmt;

use super::{decode_record, Record, ReplayError, MAX_RECORD_SIZE};
use crate::Tick;

/// Bytes the search for the first intact record after damage may
/// checksum. A torn tail is shorter than one record, and after damage in
/// the middle the next record starts within one record of it, so a real
/// file needs little of this; it bounds what a crafted file costs (every
/// byte position a plausible length).
const SEARCH_BUDGET: usize = 64 << 20;

/// Where a replay is damaged and what the file holds after the damage.
#[derive(Debug)]
pub struct Damage {
    /// What is wrong: [`ReplayError::Truncated`], [`ReplayError::Corrupt`]
    /// or [`ReplayError::Invalid`].
    pub error: ReplayError,
    /// Byte offset where the damaged record starts: the end of the last
    /// good one.
    pub offset: u64,
    /// Index of the damaged record (0 = header).
    pub record: u64,
    /// Bundles read before the damage: ticks `0..ticks` are good.
    pub ticks: u32,
    /// Bytes from `offset` to the end of the file.
    pub bytes: u64,
    /// What those bytes hold.
    pub after: After,
}

/// What a replay holds after its damage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum After {
    /// No intact record starts anywhere after the damage: the file's
    /// tail is damaged, as a recorder killed mid-write leaves it.
    Nothing,
    /// Intact records follow: the damage is in the middle of the file.
    Records {
        /// Byte offset of the first intact record after the damage.
        from: u64,
        /// Intact records from there on, one after another.
        count: u64,
        /// Where they stop, if not at the end of the file: more damage.
        until: Option<u64>,
        /// The ticks of the first and the last bundle among them, if they
        /// hold any: what a reader that stops at the damage leaves out.
        bundles: Option<(Tick, Tick)>,
    },
    /// The search for an intact record was given up ([`SEARCH_BUDGET`]):
    /// records may follow.
    Unsearched,
}

impl Damage {
    /// Whether the damage is only the file's tail: nothing intact follows
    /// it, so cutting the file at [`Damage::offset`] loses no record.
    pub fn is_tail(&self) -> bool {
        self.after == After::Nothing
    }

    /// The last tick whose bundle was read before the damage.
    pub fn last_good_tick(&self) -> Option<Tick> {
        self.ticks.checked_sub(1).map(Tick)
    }
}

impl fmt::Display for Damage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}; ", self.error)?;
        match self.last_good_tick() {
            Some(tick) => write!(f, "the last good tick before it is {tick}; ")?,
            None => write!(f, "no whole tick before it; ")?,
        }
        let bytes = self.bytes;
        match self.after {
            After::Nothing => write!(
                f,
                "it is the file's tail: no intact record in its last {bytes} bytes"
            ),
            After::Records {
                from,
                count,
                until,
                bundles,
            } => {
                let records = if count == 1 {
                    "1 intact record follows".to_string()
                } else {
                    format!("{count} intact records follow")
                };
                write!(
                    f,
                    "it is mid-file, {bytes} bytes before the end: {records} from byte {from}"
                )?;
                match until {
                    None => write!(f, " to the end")?,
                    Some(at) => write!(f, ", up to more damage at byte {at}")?,
                }
                match bundles {
                    Some((first, last)) if first == last => {
                        write!(f, " (the bundle of tick {first})")
                    }
                    Some((first, last)) => write!(f, " (bundles of ticks {first} to {last})"),
                    None => write!(f, " (no bundle)"),
                }
            }
            After::Unsearched => write!(
                f,
                "it is {bytes} bytes before the end, too costly to search for intact records"
            ),
        }
    }
}

impl std::error::Error for Damage {}

/// What `bytes`, a file of `format` from byte `offset` on where its
/// damaged record starts, holds after the damage. `whole` is the damaged
/// record's length in bytes when it was read whole (a checksum or content
/// failed, not its length): the next record should start there.
pub(super) fn survey(bytes: &[u8], offset: u64, whole: Option<usize>, format: u16) -> After {
    let mut unbounded = usize::MAX;
    let next = whole.filter(|&at| intact(bytes, at, format, &mut unbounded).is_some());
    let first = match next {
        Some(at) => at,
        None => {
            let mut budget = SEARCH_BUDGET;
            let mut search = 1..bytes.len();
            loop {
                let Some(at) = search.next() else {
                    return After::Nothing;
                };
                if intact(bytes, at, format, &mut budget).is_some() {
                    break at;
                }
                if budget == 0 {
                    return After::Unsearched;
                }
            }
        }
    };
    let (mut at, mut count, mut bundles) = (first, 0, None);
    while let Some((end, record)) = intact(bytes, at, format, &mut unbounded) {
        if let Record::Bundle { tick, .. } = record {
            bundles = Some(bundles.map_or((tick, tick), |(first, _)| (first, tick)));
        }
        count += 1;
        at = end;
    }
    After::Records {
        from: offset + first as u64,
        count,
        until: (at < bytes.len()).then_some(offset + at as u64),
        bundles,
    }
}

/// Where the intact record starting at `at` in `bytes` ends, and the
/// record, if one starts there; its body's length is taken from `budget`
/// before it is checksummed, and none is checked once the budget cannot
/// pay for it.
fn intact(bytes: &[u8], at: usize, format: u16, budget: &mut usize) -> Option<(usize, Record)> {
    let (len, rest) = bytes.get(at..)?.split_first_chunk::<4>()?;
    let len = u32::from_le_bytes(*len) as usize;
    if len == 0 || len > MAX_RECORD_SIZE || rest.len() < len + 4 {
        return None;
    }
    let Some(left) = budget.checked_sub(len) else {
        *budget = 0;
        return None;
    };
    *budget = left;
    let (body, rest) = rest.split_at(len);
    let crc = rest.first_chunk::<4>()?;
    if crc32fast::hash(body) != u32::from_le_bytes(*crc) {
        return None;
    }
    let record = decode_record(format, body).ok()?;
    Some((at + 4 + len + 4, record))
}
