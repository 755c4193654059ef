//! What a game's replay gets, and when: the session asks for each write
//! with an [`Action::Record`](crate::session::Action::Record), in order
//! with everything else it asks for, and its driver carries it out with
//! a [`Recorder`](crate::Recorder) (`io/recording.rs`, which owns the
//! files).
//!
//! A bundle's record comes before the datagrams that carry the bundle, so
//! a driver that carries out actions in order has it on disk before anyone
//! is sent it: a server that dies never leaves a client holding a bundle
//! its replay lacks, and `--resume` goes on from the replay's last bundle.
//! Only a write that fails (a full disk) breaks that: the recording stops
//! there and the game goes on without it (`io/recording.rs`).

use std::path::PathBuf;

use lockstep_protocol::{Bundle, GameEvent, Peer, PlayerId, ReplayHeader, Tick};

use crate::DropReason;

/// One write to the running game's replay.
#[derive(Debug, Clone, PartialEq)]
pub enum Recording {
    /// A game starts: a new replay in `dir`, named after the game's start
    /// (UTC), beginning with `header`.
    Create {
        /// The replay directory.
        dir: PathBuf,
        /// The game's settings, roster and machines (boxed: the other
        /// writes are small and come once a tick).
        header: Box<ReplayHeader>,
    },
    /// A game resumed after a crash goes on in its replay: cut to
    /// `valid_len` (the end of its last whole record) and appended to from
    /// the bundle of `next_tick` on.
    Resume {
        /// The replay the game was read from.
        path: PathBuf,
        /// Where its last whole record ends.
        valid_len: u64,
        /// The first tick without a bundle.
        next_tick: Tick,
    },
    /// The bundle of a tick, on disk before the next action is carried
    /// out.
    Bundle(Tick, Bundle),
    /// A player's hash report; it reaches the disk with the next bundle.
    Hash {
        /// The tick hashed.
        tick: Tick,
        /// Whose report.
        player: PlayerId,
        /// The hash.
        hash: u64,
    },
    /// A player's departure, decided for `tick`.
    Left {
        /// The first tick without the player.
        tick: Tick,
        /// Who.
        player: PlayerId,
        /// Why.
        reason: DropReason,
    },
    /// What the lag indicator said of every player at `tick`, for the
    /// report picture; it reaches the disk with the next bundle.
    Status {
        /// The next tick to bundle.
        tick: Tick,
        /// Every player's standing.
        peers: Vec<Peer>,
    },
    /// A speed change or a desync, from `tick`.
    Event(Tick, GameEvent),
    /// The game is over: the End record, with why, and the file closes.
    Finish(String),
}
