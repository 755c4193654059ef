//! The lockstep core: everything between the wire messages and the screen,
//! with no sockets, no window and no clock, so it runs the same in a
//! client, a test or a benchmark, driven by explicit time.
//!
//! # How it works
//!
//! The files are grouped by job, one folder each:
//!
//! - At the root, [`Game`] is the seam: any deterministic game that can
//!   start from a [`Setup`], step with one input per player, hash and
//!   snapshot itself plugs in (ggrs's `Config`). The ball game of
//!   `lockstep-balls` does; so does the Tally of `games/tally`. [`HasBots`]
//!   adds seeded computer players, and [`host`] is what a server or a tool
//!   needs of a game it takes by name at run time ([`HostedGame`]).
//!   [`solo`] is the game against the computer.
//! - [`lockstep`]: the networked game. Its [`gate`](lockstep::gate) runs
//!   tick `t` only once the bundle for `t` (every player's input) has
//!   arrived and schedules the local inputs `input_delay` ticks ahead;
//!   [`input_delay`](lockstep::input_delay) picks the smallest delay that
//!   keeps the game from waiting; [`playout`](lockstep::playout) holds a
//!   few bundles in hand when this client's own link is bursty; and
//!   [`net_game`](lockstep::net_game) glues them to the game and the clock.
//! - [`timing`]: real time into ticks. The flipcode tip's fixed-step
//!   [`accumulator`](timing::accumulator) says how many ticks a frame's
//!   real time makes due and the interpolation alpha (MAX_LOOPS and
//!   discarding in solo play only); [`speed`](timing::speed) is the game
//!   speed the server announces, the accumulator's tick length from an
//!   announced tick on; [`capacity`](timing::capacity) measures what this
//!   machine sustains, for the server to choose it; and
//!   [`loops`](timing::loops) holds every game loop strategy of the seed
//!   articles as a pure state machine over the same accumulator.
//! - [`determinism`]: proving and diagnosing it. The
//!   [`history`](determinism::history) keeps the last ticks for
//!   [`desync`](determinism::desync) dumps, which
//!   [`diff`](determinism::diff) compares field by field;
//!   [`synctest`](determinism::synctest) proves the snapshot and the hash
//!   cover the whole state.
//! - [`replay`]: [`recorder`](replay::recorder) writes a game as its
//!   bundles, and [`playback`](replay::playback) plays it back and
//!   verifies it.
//! - [`view`]: what a game looks like, as plain shapes ([`Picture`]) its
//!   [`View`] draws between two ticks, for the window and the page to
//!   draw alike.
//!
//! The networked game and solo play only answer "what now"; the frontend
//! carries it out.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

// The example game's source is shared with the unit tests, and names this
// crate the way an outside game would.
#[cfg(test)]
extern crate self as lockstep_engine;

pub mod determinism;
mod game;
pub mod games;
pub mod golden;
pub mod host;
pub mod lockstep;
pub mod offline_tool;
pub mod replay;
pub mod solo;
#[cfg(test)]
mod testing;
pub mod timing;
pub mod trace;
pub mod view;

pub use game::{
    apply, apply_phases, offline, offline_traced, offline_variable, settings_of, spec_of, Bots,
    FixedStepOnly, Game, HasBots, Setup, SetupError,
};
pub use host::{describe_games, find_game, parse_setting, Hosted, HostedGame, UnknownGame};
pub use view::{Picture, View};

/// The contract's last stdout line of every mode that ends on a state
/// (`sim`, `synctest`, a played game, a verified replay), on every target:
/// `final tick=N hash=<16 hex digits>`. Scripts and tests compare it.
pub fn final_line(tick: u32, hash: u64) -> String {
    format!("final tick={tick} hash={hash:016x}")
}

/// What a networked game cost, as the line before the `final` one of a
/// played game says it, in the native client and the browser peer alike:
/// `stats stalled_ticks=N tx_bytes=N rx_bytes=N rtt_us=N delay=N
/// playout=N input_lag_ms=N replaced=N speed_pct=N inputs_on_schedule=N
/// caught_up=N`.
/// Scripts read the link's cost from it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StatsLine {
    /// Ticks that had to wait for their bundle.
    pub stalled_ticks: u64,
    /// Bytes sent.
    pub tx_bytes: u64,
    /// Bytes received.
    pub rx_bytes: u64,
    /// The last round-trip time, in microseconds.
    pub rtt_us: u64,
    /// The input delay at the end, in ticks.
    pub delay: u32,
    /// The playout delay at the end, in ticks.
    pub playout: u32,
    /// From sampling an input to its tick, in milliseconds.
    pub input_lag_ms: u64,
    /// This player's inputs the server stood in for.
    pub replaced: u64,
    /// The slowest game speed of the game, in percent.
    pub speed_pct: u16,
    /// Ticks whose input was sent on schedule.
    pub inputs_on_schedule: u64,
    /// Ticks the clock took as due at once because the others were
    /// ahead of it (after a resume, say).
    pub caught_up: u64,
}

impl std::fmt::Display for StatsLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "stats stalled_ticks={} tx_bytes={} rx_bytes={} rtt_us={} delay={} playout={} \
             input_lag_ms={} replaced={} speed_pct={} inputs_on_schedule={} caught_up={}",
            self.stalled_ticks,
            self.tx_bytes,
            self.rx_bytes,
            self.rtt_us,
            self.delay,
            self.playout,
            self.input_lag_ms,
            self.replaced,
            self.speed_pct,
            self.inputs_on_schedule,
            self.caught_up
        )
    }
}
