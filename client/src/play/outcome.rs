//! How a networked game ended: [`GameOutcome`] for the last lines of
//! stdout, or [`PlayError`] when it ended other than by its last tick.

use std::time::Duration;

use lockstep_engine::lockstep::net_game::NetGame;
use lockstep_protocol::Percent;

use crate::io::link::{Closed, LinkStats};

/// Why a networked game ended other than by reaching `--ticks` or leaving.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PlayError {
    /// The server refused to let us join.
    #[error("the server refused to let us join: {0}")]
    Refused(String),
    /// This client's game refuses the settings of the server's game; the
    /// server and its lobby were told.
    #[error("cannot play the server's game: {0}; the server and its lobby were told")]
    CannotPlay(String),
    /// The server ended the game.
    #[error("the server ended the game: {0}")]
    Ended(String),
    /// The connection failed or was lost.
    #[error("{0}")]
    Lost(String),
    /// SIGTERM or SIGINT asked us to leave; we left.
    #[error("stopped by a signal: left the game")]
    Stopped,
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
            Closed::CannotPlay(reason) => PlayError::CannotPlay(reason),
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
    /// Ticks the clock caught up because the others were ahead of it.
    pub caught_up: u64,
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
            caught_up: game.stats().caught_up_ticks,
        }
    }
}
