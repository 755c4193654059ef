//! The lockstep client: a deterministic fixed-step game that runs in a
//! window, headless as a bot, or offline.
//!
//! # How it works
//!
//! - The games are crates of their own (`lockstep-sim`'s ball game,
//!   `lockstep-tally`); [`games`] is what this side needs of one (its
//!   scores, and with the window its `scene`), one file per game, and the
//!   dispatch that runs code generic over the game a server, a replay or
//!   the command line names. Only the binary lists the games it offers.
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
//!   what is worth telling as [`notice`]s the binary prints; [`headless`] and
//!   `window` are the two frontends that drive it; `render` only draws,
//!   with its score strip, HUD and banner placed apart by `overlay`, and
//!   `lobby_screen` draws the lobby between games.
//! - [`discovery`] is the table of servers heard on the LAN (pure),
//!   [`finder`] probes and listens for it, [`list`] prints it, and
//!   [`browser`] (pure) with `browser_window` is the server browser the
//!   windowed client opens when it is given no server.
//! - `lab` shows the engine's game loop strategies side by side in a
//!   window, paced by [`pacing`].
//! - Seeing what happened: `chart` draws the strip charts and event
//!   markers the lab, the in-game `net_graph` (F3), the replay window's
//!   `timeline` and the report picture share; [`report`] reads a whole
//!   game out of its replay (re-simulating it for the verdict and the
//!   goals) and `report_picture` draws it into a PNG without a display.
//! - The modes of the `lockstep-client` binary that are more than one call
//!   into the sim or the engine are functions here that return their
//!   stdout lines, so the binary only parses and prints: [`connect`] joins
//!   a server and plays, [`verify`] checks a replay, [`desync_diff`]
//!   compares two desync dumps, and [`window_modes`] offers solo play and
//!   the lab, and the windows of the others, in every build (without the
//!   `window` feature they fail with [`window_modes::NoWindow`]).
//!
//! `window`, `render`, `scene`, `overlay`, `lobby_screen`, `lab`,
//! `replay_window`, `browser_window`, `chart`, `net_graph`, `timeline`,
//! `report_picture` and `screenshot` exist with the default `window`
//! feature (SDL2) only.
#![forbid(unsafe_code)]

pub mod browser;
#[cfg(feature = "window")]
pub mod browser_window;
#[cfg(feature = "window")]
pub mod chart;
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
#[cfg(feature = "window")]
pub mod lab;
pub mod link;
pub mod list;
#[cfg(feature = "window")]
pub mod lobby_screen;
pub mod net;
#[cfg(feature = "window")]
pub mod net_graph;
pub mod notice;
#[cfg(feature = "window")]
mod overlay;
pub mod pacing;
pub mod platform;
pub mod play;
pub mod recording;
#[cfg(feature = "window")]
pub mod render;
pub mod replaced;
#[cfg(feature = "window")]
pub mod replay_window;
pub mod report;
#[cfg(feature = "window")]
pub mod report_picture;
#[cfg(feature = "window")]
pub mod scene;
#[cfg(feature = "window")]
pub mod screenshot;
#[cfg(feature = "window")]
pub mod timeline;
pub mod verify;
#[cfg(feature = "window")]
pub mod window;
pub mod window_modes;

use std::time::Duration;

use lockstep_engine::lockstep::net_game::NetGame;
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
