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
//! header as the ball game with that count ([`GameSpec::balls`]). Format 6
//! lets the header carry the settings as the host gave them
//! ([`Settings::Given`]), for a game the recording server was not built
//! with; a format 5 header reads as the same game with encoded settings.
//!
//! The file is append-only
//! and records are written whole with one `write` call per flush, so a
//! recorder killed at any moment leaves every flushed record intact;
//! the reader reports a cut-off last record as [`ReplayError::Truncated`]
//! with its byte offset, and a damaged one as [`ReplayError::Corrupt`].
//! Damage is not always at the end (a disk or a copy can damage any
//! byte): [`Replay::read`] says with the problem ([`Damage`]) whether
//! intact records follow it, which a torn tail never has.
//!
//! The records are defined here; [`ReplayWriter`] writes them, and
//! [`ReplayReader`] reads them back one at a time ([`Replay::read`] a
//! whole file).

mod damage;
mod reader;
mod writer;

use std::io;

use serde::{Deserialize, Serialize};

use crate::{
    decode, Bundle, GameSpec, Percent, Platform, PlayerId, RosterEntry, Settings, Slack, Tick,
};

pub use damage::{After, Damage};
pub use reader::{ReadOutcome, Replay, ReplayReader};
pub use writer::ReplayWriter;

/// First bytes of every replay file.
pub const REPLAY_MAGIC: &[u8; 8] = b"LOCKSTEP";

/// Version of the replay layout written; readers refuse other versions
/// than this one and [`OLDEST_REPLAY_FORMAT`] and those between.
pub const REPLAY_FORMAT: u16 = 6;

/// The oldest format still read: format 4 only added records, so a
/// format 3 file is a format 4 file that happens to hold none of them;
/// formats 5 and 6 changed only the header. Format 2 bundles lack `substituted`
/// and would decode wrongly.
pub const OLDEST_REPLAY_FORMAT: u16 = 3;

/// The first format whose header names the game.
const NAMED_GAME_FORMAT: u16 = 5;

/// The first format whose header may carry settings as the host gave them
/// ([`Settings::Given`]).
const GIVEN_SETTINGS_FORMAT: u16 = 6;

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

/// The header of formats 3 to 5: [`ReplayHeader`] with what those
/// formats had where format 6 has [`ReplayHeader::spec`]: the ball game's
/// ball count (formats 3 and 4, `u16`), the game's name and encoded
/// settings (format 5, [`EncodedSpec`]).
#[derive(Deserialize)]
#[cfg_attr(test, derive(Serialize))]
struct OldHeader<S> {
    protocol_version: u16,
    build: String,
    recorder: String,
    started_unix: u64,
    seed: u64,
    tick_rate: u16,
    input_delay: u8,
    hash_interval: u16,
    game: S,
    roster: Vec<RosterEntry>,
    platforms: Vec<(PlayerId, Platform)>,
}

/// [`GameSpec`] as format 5 wrote it: always encoded settings.
#[derive(Deserialize)]
#[cfg_attr(test, derive(Serialize))]
struct EncodedSpec {
    name: String,
    settings: Vec<u8>,
}

/// [`Record`] as formats 3 to 5 wrote its first variant.
#[derive(Deserialize)]
#[cfg_attr(test, derive(Serialize))]
enum OldHeaderRecord<S> {
    Header(OldHeader<S>),
}

impl<S> OldHeader<S> {
    fn with_spec(self, spec: GameSpec) -> ReplayHeader {
        ReplayHeader {
            protocol_version: self.protocol_version,
            build: self.build,
            recorder: self.recorder,
            started_unix: self.started_unix,
            seed: self.seed,
            tick_rate: self.tick_rate,
            input_delay: self.input_delay,
            hash_interval: self.hash_interval,
            spec,
            roster: self.roster,
            platforms: self.platforms,
        }
    }
}

/// One record's body in a file of `format`: a header before format 5 is
/// the ball game's, and one of format 5 has encoded settings.
fn decode_record(format: u16, body: &[u8]) -> Result<Record, crate::DecodeError> {
    // Variant 0, the header, is the varint 0.
    if format < GIVEN_SETTINGS_FORMAT && body.first() == Some(&0) {
        let header = if format < NAMED_GAME_FORMAT {
            let OldHeaderRecord::Header(old) =
                decode::<OldHeaderRecord<u16>>(body, MAX_RECORD_SIZE)?;
            let balls = GameSpec::balls(old.game);
            old.with_spec(balls)
        } else {
            let OldHeaderRecord::Header(mut old) =
                decode::<OldHeaderRecord<EncodedSpec>>(body, MAX_RECORD_SIZE)?;
            let spec = GameSpec {
                name: std::mem::take(&mut old.game.name),
                settings: Settings::Encoded(std::mem::take(&mut old.game.settings)),
            };
            old.with_spec(spec)
        };
        return Ok(Record::Header(header));
    }
    // `decode`, not `postcard::from_bytes`, which would ignore bytes after
    // the record: a body is exactly one record.
    decode::<Record>(body, MAX_RECORD_SIZE)
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
    #[error("the replay is invalid at byte {offset} (record {record}): {what}")]
    Invalid {
        /// Byte offset of the offending record.
        offset: u64,
        /// Index of the offending record.
        record: u64,
        /// What is wrong.
        what: String,
    },
    /// A record could not be encoded.
    #[error("cannot encode a replay record: {0}")]
    Encode(postcard::Error),
}

#[cfg(test)]
mod tests;
