//! The lockstep client without a screen: the link to the server, LAN
//! discovery, driving a networked game, and the offline tools. It links
//! no SDL2: the screens are the `lockstep-window` crate, and the
//! `lockstep-client` binary (`lockstep-cli`) is built with or without it.
//!
//! # How it works
//!
//! - The games are crates of their own (`lockstep-sim`'s ball game,
//!   `lockstep-tally`); [`games`] is what this side needs of one (its
//!   scores), one file per game, and the dispatch that runs code generic
//!   over the game a server, a replay or the command line names. Only the
//!   binary lists the games it offers.
//! - The lockstep core is the `lockstep-engine` crate: the gate, the
//!   fixed-step accumulator, the input delay, the networked and solo game
//!   drivers, desync history, replays and the loop strategies. It never
//!   reads a clock or touches a socket.
//! - [`connection`] is the client's control protocol as a pure state
//!   machine (events in with `now`, actions out, no socket or clock): the
//!   Hello, the datagram [`link`] (acks, redundancy, jitter), the local
//!   player's inputs on the game's schedule when a frame is late
//!   ([`input_schedule`]), the snapshot a game is joined from (as bytes:
//!   it knows no game) and reconnecting to a lost server. [`net`] is its
//!   driver: the QUIC endpoint, TLS and the trust in the server, and one
//!   `select!` on its own thread that feeds the connection and carries out
//!   its actions. [`play`] carries out what the engine's networked game
//!   asks for, and decodes a snapshot into the game's state ([`replaced`]
//!   tells a late player the server stood in for its inputs), and says
//!   what is worth telling as [`notice`]s the binary prints. [`connect`]
//!   joins a server and plays in a [`connect::Frontend`]: [`headless`], or
//!   the window crate's.
//! - [`discovery`] is the table of servers heard on the LAN (pure),
//!   [`finder`] probes and listens for it, [`list`] prints it, and
//!   [`browser`] (pure) is the model of the server browser the window
//!   crate draws.
//! - The offline tools return their stdout lines, so the binary only
//!   parses and prints: [`report`] reads a whole game out of its replay
//!   (re-simulating it for the verdict and the goals), [`verify`] checks a
//!   replay, [`desync_diff`] compares two desync dumps.
//! - [`window_options`] is what the windowed modes are asked to do, as
//!   plain data, so the binary parses the same command line whether or not
//!   it has the window.
#![forbid(unsafe_code)]

pub mod browser;
pub mod clock;
pub mod connect;
pub mod connection;
pub mod desync_diff;
pub mod discovery;
pub mod finder;
pub mod games;
pub mod headless;
pub mod input_schedule;
pub mod known_servers;
pub mod link;
pub mod list;
pub mod net;
pub mod notice;
pub mod platform;
pub mod play;
pub mod recording;
pub mod replaced;
pub mod report;
pub mod verify;
pub mod window_options;

use std::time::Duration;

use lockstep_engine::net_game::NetGame;
use lockstep_protocol::Percent;
use net::{Closed, LinkStats};

/// Why a networked game ended other than by reaching `--ticks` or leaving.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PlayError {
    /// The server refused to let us join.
    #[error("the server refused to let us join: {0}")]
    Refused(String),
    /// The server ended the game.
    #[error("the server ended the game: {0}")]
    Ended(String),
    /// The connection failed or was lost.
    #[error("{0}")]
    Lost(String),
    /// The server removed us from the game (we were too slow or silent).
    #[error("the server removed this player from the game")]
    Dropped,
    /// The server's game is not one this client can play.
    #[error("cannot play the server's game: {0}")]
    Game(#[from] lockstep_engine::SetupError),
    /// The server's game is not one this client has.
    #[error("cannot play the server's game: {0}")]
    UnknownGame(#[from] lockstep_engine::UnknownGame),
}

impl From<Closed> for PlayError {
    fn from(closed: Closed) -> Self {
        match closed {
            Closed::Refused(reason) => PlayError::Refused(reason),
            Closed::Ended(reason) => PlayError::Ended(reason),
            Closed::Lost(reason) => PlayError::Lost(reason),
            Closed::Left => PlayError::Lost("the connection was closed".into()),
        }
    }
}

/// How a finished game ended, for the last lines of stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GameOutcome {
    /// Ticks simulated.
    pub tick: u32,
    /// World hash after the last tick.
    pub hash: u64,
    /// Distinct ticks that waited for their bundle.
    pub stalled_ticks: u64,
    /// Ticks played with the server's stand-in for our input: it arrived
    /// too late (the server's `--laggard-ms`).
    pub replaced: u64,
    /// The lowest game speed any tick ran at (the server slows the game
    /// while a machine cannot keep up).
    pub slowest_speed: Percent,
    /// UDP bytes sent and received, from QUIC's statistics.
    pub tx_bytes: u64,
    /// See `tx_bytes`.
    pub rx_bytes: u64,
    /// Last smoothed round-trip time in microseconds.
    pub rtt_us: u64,
    /// The input delay in force at the end, ticks (the playout's
    /// included).
    pub delay: u32,
    /// Of that delay, the ticks this client steps behind the schedule to
    /// hold more bundles against its own link's gaps.
    pub playout: u8,
    /// The input lag at the end ([`NetGame::input_lag`]), milliseconds.
    pub input_lag_ms: u64,
    /// Ticks whose input the network thread sent on schedule, before the
    /// frontend's own sample for them arrived.
    pub inputs_on_schedule: u64,
}

impl GameOutcome {
    /// The outcome of `game` with the last link statistics, drawn with
    /// frames of `frame` (`None`: headless).
    pub fn new<G: lockstep_engine::Game>(
        game: &NetGame<G>,
        link: LinkStats,
        frame: Option<Duration>,
    ) -> Self {
        GameOutcome {
            tick: game.current.tick().0,
            hash: game.current.hash(),
            stalled_ticks: game.stats().stalled_ticks,
            replaced: game.stats().replaced_inputs,
            slowest_speed: game.slowest_speed(),
            tx_bytes: link.tx_bytes,
            rx_bytes: link.rx_bytes,
            rtt_us: link.rtt.as_micros() as u64,
            delay: game.input_delay(),
            playout: game.playout(),
            input_lag_ms: game.input_lag(frame).as_millis() as u64,
            inputs_on_schedule: link.inputs_on_schedule,
        }
    }
}

pub use lockstep_engine::final_line;
