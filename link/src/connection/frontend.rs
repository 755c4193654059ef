//! What the frontend and the connection say to each other: the
//! [`NetCommand`]s the frontend sends, the [`NetEvent`]s it receives, and
//! the figures and endings those carry.

use std::time::Duration;

use web_time::Instant;

use lockstep_engine::lockstep::input_delay::LinkFigures;
use lockstep_protocol::{
    Bundle, DesyncNotice, Input, Lobby, PeerStatus, Percent, PlayerId, Start, Tick, TraceReport,
};

use crate::datagrams::NewBundles;
use crate::input_schedule::Schedule;

/// Frontend → network.
#[derive(Debug)]
pub enum NetCommand {
    /// The local input for a tick.
    Input(Tick, Input),
    /// The input the local player holds now: what the ticks that fall due
    /// before the frontend samples them get.
    Hold(Input),
    /// Where the game's fixed-step clock stood at the instant given: when
    /// the next ticks fall due.
    Schedule(Schedule, Instant),
    /// Answer the desync notice of the first tick with the world hashes
    /// from the second tick on.
    TickHashes(Tick, Tick, Vec<u64>),
    /// Report the world hash at a tick to the server.
    Report(Tick, u64),
    /// Report what this machine sustains, and how late it was at a tick.
    Capacity(Percent, Tick, Duration),
    /// Tell the server we are ready for the next game, or not.
    Ready(bool),
    /// Tell the server we are done with this game and stay for the next;
    /// the datagram exchange starts afresh with the next Start.
    GameDone,
    /// Leave the game and close the connection.
    Leave,
    /// Send the server our world state after a tick (the postcard of the
    /// world), as it asked.
    Snapshot(Tick, Vec<u8>),
    /// Our game refuses the settings of the hosted game, for this reason:
    /// tell the server why, and leave.
    CannotPlay(String),
    /// The snapshot of this tick, which the game was started from, is not
    /// the majority's world, for this reason: tell the server, which
    /// starts the game again from another.
    BadSnapshot(Tick, String),
    /// Send the server the sync trace of a tick (the first divergent tick
    /// of a desync it pinpointed).
    Trace(Tick, TraceReport),
}

/// Link figures for the HUD and the end-of-game report.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LinkStats {
    /// Smoothed round-trip time.
    pub rtt: Duration,
    /// UDP bytes sent so far.
    pub tx_bytes: u64,
    /// UDP bytes received so far.
    pub rx_bytes: u64,
    /// How irregularly the game's bundles reach us: the smoothed deviation
    /// of their spacing from the tick period.
    pub jitter: Duration,
    /// The jitter, or three quarters of the recent longest wait for news
    /// (a burst of losses), whichever is larger.
    pub irregularity: Duration,
    /// Ticks whose input was sent on schedule, before the frontend's own
    /// sample for them arrived (its frame was late).
    pub inputs_on_schedule: u64,
}

impl LinkStats {
    /// What the input delay controller needs of them.
    pub fn figures(&self) -> LinkFigures {
        LinkFigures {
            rtt: self.rtt,
            jitter: self.jitter,
            irregularity: self.irregularity,
        }
    }
}

/// How the connection ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Closed {
    /// We left on purpose.
    Left,
    /// The server refused us (one readable sentence).
    Refused(String),
    /// Our game refuses the settings of the hosted game, for this reason
    /// ([`NetCommand::CannotPlay`]); the server was told.
    CannotPlay(String),
    /// The server ended the game or shut down.
    Ended(String),
    /// The connection failed or was lost.
    Lost(String),
}

/// A game's start as the frontend takes it ([`NetEvent::Started`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Started {
    /// Game parameters and roster.
    pub start: Start,
    /// When the network thread received it: every client starts its game
    /// clock from that moment, however long its frontend takes to notice,
    /// so the clients' clocks agree to within the network delay.
    pub at: Instant,
    /// The snapshot the game starts from ([`Start::snapshot`]), once all
    /// of it arrived: the bytes as the server sent them, in order and of
    /// the announced length. The connection knows no game, so the frontend
    /// decodes them and checks they are a world of that tick. `None`: from
    /// tick 0.
    pub snapshot: Option<Vec<u8>>,
}

/// Network → frontend.
#[derive(Debug, Clone, PartialEq)]
pub enum NetEvent {
    /// Connected; the server verified our Hello and we wait in the lobby.
    Welcome {
        /// Our slot.
        player: PlayerId,
        /// Players the game waits for.
        players_needed: u8,
        /// Set when this server was trusted for the first time: says which
        /// fingerprint was recorded where (the frontend shows it).
        first_use: Option<String>,
        /// The fingerprint of the certificate the server presented: the
        /// lobby shows its verification code.
        fingerprint: Option<String>,
    },
    /// The lobby as the server sees it (between games).
    Lobby(Lobby),
    /// The game starts.
    Started(Started),
    /// The server asks for our world after this tick, to check it against
    /// the hash the majority reported and keep it for joins.
    SnapshotRequest(Tick),
    /// New bundles, each delivered once, contiguous from `first_tick`.
    Bundles {
        /// Tick of `bundles[0]`.
        first_tick: Tick,
        /// The bundles.
        bundles: Vec<Bundle>,
    },
    /// Fresh link statistics.
    Stats(LinkStats),
    /// The server found that peers' hashes differ.
    Desync(DesyncNotice),
    /// The server found where the desync of `tick` began.
    Pinpointed {
        /// The desync's tick.
        tick: Tick,
        /// The first tick whose hashes differ.
        first: Tick,
    },
    /// The server compared a diverged and a majority player's sync traces
    /// of `tick`: the first value computed differently, and around it.
    TraceDiff {
        /// The tick the traces are of.
        tick: Tick,
        /// The diverged player compared.
        diverged: String,
        /// The majority player it was compared with.
        majority: String,
        /// The report's lines.
        lines: Vec<String>,
    },
    /// The server's lag indicator.
    Peers(PeerStatus),
    /// The game speed changes from `from_tick` on.
    Speed {
        /// First tick at the new speed.
        from_tick: Tick,
        /// The new speed.
        percent: Percent,
        /// How much later than scheduled the ticks from `from_tick` on
        /// are due.
        postpone: Duration,
    },
    /// The server was lost during the game: the network thread tries to
    /// reconnect, keeping what the game has, for up to `for_secs`.
    Reconnecting {
        /// How it was lost, in words.
        reason: String,
        /// How long it keeps trying.
        for_secs: u64,
    },
    /// Reconnected, and the server lets the game go on from the world we
    /// kept: `start.resume` is the first bundle we lacked, the History
    /// up to `start.history` follows, and our inputs start at
    /// `start.first_input_tick`.
    Resumed {
        /// The server's Start for the reconnection.
        start: Start,
        /// When it arrived.
        at: Instant,
    },
    /// The connection is over; no more events follow.
    Closed(Closed),
}

impl From<NewBundles> for NetEvent {
    fn from(new: NewBundles) -> Self {
        NetEvent::Bundles {
            first_tick: new.first_tick,
            bundles: new.bundles,
        }
    }
}
