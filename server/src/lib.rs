//! The lockstep relay server.
//!
//! # How it works
//!
//! Everything under `io/` owns sockets, tasks, files or the clock;
//! everything else is a pure state machine driven with explicit time. A
//! module in `io/` named like a pure one drives it, as quinn drives
//! quinn-proto: `io/session.rs` drives `session/`, `io/beacon.rs` drives
//! `beacon.rs`, `io/recording.rs` writes what `recording.rs` asks for, and
//! `io/resume.rs` reads the replay `resume.rs` goes on from.
//!
//! [`run`] accepts QUIC connections on an [`quinn::Endpoint`] (built by
//! [`endpoint`] with the on-disk [`Identity`]). Each connection gets a task
//! that reads the client's Hello and then forwards its traffic to one
//! driver task, which owns the connections and the clock and runs the
//! session: a pure state machine that keeps the lobby until at least
//! `players` clients have joined and all of them are ready, sends them
//! Start, and from then on feeds every
//! input to the [`Relay`], itself a pure state machine that bundles tick
//! `t` once every active player's input for `t` is in. Complete bundles go
//! back to every client as datagrams that repeat whatever the client has
//! not acknowledged.
//!
//! The server never simulates. A player that leaves, disconnects or stays
//! silent past the drop timeout is removed at a tick the relay picks and
//! announces inside the bundle stream, so the game goes on for the others.
//! A player whose input for a tick is still missing the laggard tolerance
//! after everyone else's arrived gets its previous input repeated in its
//! place, marked in the bundle, so one slow machine does not stall the rest.
//!
//! # Where things are
//!
//! Outside `io/`, the pure code:
//! - `session/`: the lobby and the running game, every client of the
//!   server; events in with `now`, actions out.
//! - `relay/`: the running game's inputs, bundled tick by tick.
//! - `desync_check.rs`: compares the hashes the players report to find
//!   the players whose game diverged.
//! - `snapshots.rs`: verified snapshots that joins start from.
//! - `speed.rs`: the game speed the slowest machine sustains; `slack.rs`:
//!   how early each input arrived.
//! - `beacon.rs`: what the LAN beacon says, to whom and when.
//! - `recording.rs`: what a game's replay gets, and when.
//! - `resume.rs`: the game a replay says a server that died was running.
//! - `events.rs`: what the server tells whoever runs it.
//! - `web.rs`: the web door's HTTP (request heads, the page's files, the
//!   WebSocket upgrade).
//!
//! The I/O, in `io/`: `server.rs` (the endpoint and the accept loop),
//! `connection.rs` (one task per QUIC connection), `web.rs` (the web
//! door: the page and the WebSocket for browsers), `admission.rs` (the
//! Hello checks and the join both transports share), `intake.rs` (their
//! rate limits), `peer.rs` (a joined client's transport, as the driver
//! sees it), `session.rs` (the session's driver), `beacon.rs` (the
//! beacon's socket), `recording.rs` (the replay files), `resume.rs`
//! (reading one back), `identity.rs` (the certificate on disk) and
//! `clock.rs` (the one place the clock is read).
//!
//! The session writes nothing itself: it asks for each write to the
//! game's replay among its other actions, and the driver carries them out
//! in order, so a bundle is on disk before anyone is sent it.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod beacon;
mod desync_check;
mod events;
mod io;
mod recording;
mod relay;
mod resume;
pub mod session;
mod slack;
mod snapshots;
mod speed;
#[cfg(test)]
mod testing;
mod web;

use std::time::Duration;

use lockstep_engine::HostedGame;
use lockstep_protocol::GameSpec;

pub use beacon::Occupancy;
pub use desync_check::{Desync, DesyncCheck, MAX_PENDING_TICKS};
pub use events::ServerEvent;
pub use io::admission::MAX_UNAUTHENTICATED;
pub use io::beacon::AdvertiseOptions;
pub use io::clock;
pub use io::command_line::main;
pub use io::identity::{Identity, IdentityError, IdentityFlaw};
pub use io::recording::Recorder;
pub use io::server::{endpoint, idle_timeout, run, transport_config, EndpointError};
pub use io::web::{WebDoor, WebDoorError, MAX_WEB_CONNECTIONS};
pub use recording::Recording;
pub use relay::{
    Departure, DropReason, InputOutcome, Relay, Standing, Substitution, INPUT_WINDOW,
    MAX_UNACKED_BUNDLES,
};
pub use resume::{ResumeError, ResumedGame};
pub use session::MAX_NAME_CHARS;
pub use snapshots::DEFAULT_INTERVAL_SECS as DEFAULT_SNAPSHOT_SECS;
pub use speed::{CapacityReport, SpeedChange, SpeedControl, SpeedReason};

/// How long a tick waits by default for a late player's input once every
/// other input of the tick is in, before the relay repeats that player's
/// previous input instead (`--laggard-ms`).
///
/// A stand-in never comes before half a tick before its tick is needed
/// (`Relay::poll_laggards`), so an input on time is never
/// replaced, whatever the tolerance. The tolerance only decides how long a
/// tick waits beyond that when the others' inputs came late themselves, and
/// then every millisecond more is a millisecond every other player stalls:
/// at the delays of a LAN (one to three ticks) the others' inputs reach the
/// server only 16 to 50 ms before the tick is needed. The inputs of one
/// tick arrive within a millisecond or two of each other (each client's
/// network thread sends them on its clock, whatever its frames do), so
/// 8 ms, half a tick at 60 Hz, covers their spread and no more. Measured:
/// with 50 ms, a client frozen for 300 ms at delay 3 stalled the others on
/// every tick of the freeze (see BENCHMARKS.md, "Feel").
pub const DEFAULT_LAGGARD_TOLERANCE: Duration = Duration::from_millis(8);

/// How long a silent player is waited for before it is dropped, by
/// default (`--drop-timeout-ms`). A player whose machine stopped for less
/// comes back on the same connection (QUIC's idle timeout is longer,
/// [`idle_timeout`]).
pub const DEFAULT_DROP_TIMEOUT: Duration = Duration::from_secs(2);

/// QUIC close code: the server is shutting down.
pub const CLOSE_SHUTDOWN: quinn::VarInt = quinn::VarInt::from_u32(1);
/// QUIC close code: the client was refused (reason in the close frame).
pub const CLOSE_REFUSED: quinn::VarInt = quinn::VarInt::from_u32(2);
/// QUIC close code: the client broke the protocol.
pub const CLOSE_PROTOCOL: quinn::VarInt = quinn::VarInt::from_u32(3);
/// QUIC close code: the player was removed from the game.
pub const CLOSE_DROPPED: quinn::VarInt = quinn::VarInt::from_u32(4);

/// Game settings chosen by whoever starts the server.
#[derive(Debug, Clone)]
pub struct Config {
    /// Players needed before the game starts.
    pub players: u8,
    /// Simulation ticks per second.
    pub tick_rate: u16,
    /// Ticks between sampling an input and simulating it.
    pub input_delay: u8,
    /// World seed sent to every client.
    pub seed: u64,
    /// The game hosted: what the server checks of it (its preflight, its
    /// snapshots) without simulating it; `None` for a game this server was
    /// not built with, known only by its [`Config::spec`]: the players'
    /// clients check what the server cannot (see [`Config::self_test`]).
    pub game: Option<&'static dyn HostedGame>,
    /// Which game, with its settings, sent to every client.
    pub spec: GameSpec,
    /// Silence after which a player is dropped.
    pub drop_timeout: Duration,
    /// How long a tick waits for a late player's input once every other
    /// input of the tick is in, before the relay stands in for it with the
    /// player's previous input; `None` waits for ever (up to the drop
    /// timeout).
    pub laggard_tolerance: Option<Duration>,
    /// Time a new connection has to say Hello.
    pub hello_timeout: Duration,
    /// Clients report their world hash every this many ticks.
    pub hash_interval: u16,
    /// What a detected desync does to the game.
    pub on_desync: OnDesync,
    /// Directory for replay files, one per game; `None` records nothing.
    pub replay_dir: Option<std::path::PathBuf>,
    /// Session password checked before a client takes a slot; `None`
    /// admits anyone who reaches the port.
    pub password: Option<String>,
    /// The game's self-test hash every client must have computed (the
    /// game's own, computed by this server's build, by default): a client
    /// whose machine or build computes another would desync. `None` for a
    /// game the server was not built with: a client must then compute the
    /// hash its game pins, if it pins one, and the players must agree
    /// before a game starts (a minority is refused; with no majority,
    /// nobody's is trusted and the game waits).
    pub self_test: Option<u64>,
    /// Slow the game down for everyone while a player's machine cannot
    /// keep up, and speed it up again once it can (see [`SpeedControl`]).
    pub speed_control: bool,
    /// Advertise the server on the LAN (see `beacon.rs`); `None`
    /// keeps it quiet, and players connect by address.
    pub advertise: Option<AdvertiseOptions>,
    /// Seconds of game time between two verified snapshots (see
    /// `snapshots.rs`); 0 keeps every bundle for joins instead.
    pub snapshot_secs: u16,
    /// A game to go on with instead of opening the lobby: the one a
    /// server that died was running, read from its replay (`--resume`).
    /// Its settings replace the ones above that a game's Start carries.
    pub resume: Option<ResumedGame>,
    /// How long a resumed game waits for its players to reconnect before
    /// it drops those still missing and goes on without them.
    pub resume_wait: Duration,
}

/// How long a resumed game waits for its players by default
/// (`--resume-wait-secs`). Clients that lost the server keep trying for
/// `--reconnect-secs` (60 by default), twice a second, so those still
/// running are back within a second of the restart; the rest of the wait
/// is for a player whose client had to be started again by hand.
pub const DEFAULT_RESUME_WAIT: Duration = Duration::from_secs(30);

#[cfg(test)]
pub(crate) use testing::TEST_GAME;

/// What the server does when peers' hashes differ.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OnDesync {
    /// Announce it and keep playing (the diverged clients keep running, so
    /// their later reports and dumps can still be studied).
    #[default]
    Continue,
    /// Announce it and end the game for everyone.
    Stop,
}

impl Config {
    /// The default settings for hosting `game` (with its default
    /// settings); computes the game's self-test (a few milliseconds).
    pub fn new(game: &'static dyn HostedGame) -> Self {
        Config {
            game: Some(game),
            self_test: Some(game.self_test()),
            ..Config::without_game(game.default_spec())
        }
    }

    /// The default settings for hosting the game and settings of `spec`
    /// with a server built without that game: the server relays it and
    /// the players' clients check what it cannot. No snapshots: a joiner
    /// catches up from the game's first tick.
    pub fn without_game(spec: GameSpec) -> Self {
        Config {
            players: 2,
            tick_rate: 60,
            input_delay: 3,
            seed: 1,
            game: None,
            spec,
            drop_timeout: DEFAULT_DROP_TIMEOUT,
            laggard_tolerance: Some(DEFAULT_LAGGARD_TOLERANCE),
            hello_timeout: Duration::from_secs(5),
            hash_interval: 15,
            on_desync: OnDesync::Continue,
            replay_dir: None,
            password: None,
            self_test: None,
            speed_control: true,
            advertise: None,
            snapshot_secs: snapshots::DEFAULT_INTERVAL_SECS,
            resume: None,
            resume_wait: DEFAULT_RESUME_WAIT,
        }
    }
}
