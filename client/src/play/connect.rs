//! Joining a server and playing the networked game to its end: who we are
//! and how the server is trusted, the [`Frontend`] that plays (headless,
//! or the window crate's), and the `stats ...` and `final ...` lines a
//! finished game prints.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;

use anyhow::Context;
use lockstep_conditioner::LinkConfig;

use crate::games::Games;
use crate::hooks::TestHooks;
use crate::io::link::{NetClient, NetOptions};
use crate::io::trust::Trust;
use crate::play::PlayOptions;
use lockstep_engine::{final_line, StatsLine};

use super::GameOutcome;

/// What plays the games a connection joins: [`crate::play::headless::Headless`],
/// or the window crate's window.
pub trait Frontend {
    /// Whether this frontend's player joins ready (its Hello says so).
    fn joins_ready(&self, play: &PlayOptions) -> bool;

    /// Plays the games `net` joined as the player `name`; how each ended.
    fn play(
        self,
        net: NetClient,
        name: String,
        play: PlayOptions,
    ) -> anyhow::Result<Vec<GameOutcome>>;
}

/// What `--connect` was asked to do.
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    /// The server, as [`resolve`] found it.
    pub server: SocketAddr,
    /// The server as the user wrote it, HOST:PORT: the name its
    /// certificate is remembered under when it is trusted on first use.
    pub address: String,
    /// Name shown to everyone; `None` is `$USER`, else `player-<pid>`.
    pub name: Option<String>,
    /// The server certificate's expected fingerprint (hex SHA-256);
    /// `None` trusts the server on first use.
    pub fingerprint: Option<String>,
    /// Where servers trusted on first use are remembered.
    pub known_servers: PathBuf,
    /// The server's session password, if it has one.
    pub password: Option<String>,
    /// Watch without playing.
    pub spectate: bool,
    /// How long to keep trying to reconnect to a lost server (zero: not
    /// at all).
    pub reconnect: std::time::Duration,
    /// Impairment of this client's path, for testing bad networks.
    pub link: LinkConfig,
    /// Bot, last tick, desync dumps, game rules and recording.
    pub play: PlayOptions,
    /// Departures from real play, for tests (none by default).
    pub hooks: TestHooks,
    /// Set when the server was found on the LAN (`--join`, the browser):
    /// what it advertised, checked against the known-servers file.
    pub advertised: Option<Advertised>,
}

/// What a server found on the LAN said about itself, for trusting it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Advertised {
    /// Its name.
    pub name: String,
    /// Its certificate's fingerprint, 64 hex digits.
    pub fingerprint: String,
}

impl ConnectOptions {
    /// The options to join `found`, a server on the LAN.
    pub fn found(self, found: &crate::discovery::Found) -> ConnectOptions {
        ConnectOptions {
            server: found.addr(),
            address: found.addr().to_string(),
            advertised: Some(Advertised {
                name: found.name().to_string(),
                fingerprint: found.announcement.fingerprint_hex(),
            }),
            ..self
        }
    }
}

/// The first address `address` (HOST:PORT) resolves to.
pub fn resolve(address: &str) -> anyhow::Result<SocketAddr> {
    address
        .to_socket_addrs()
        .with_context(|| format!("cannot resolve server address {address:?} (expected HOST:PORT)"))?
        .next()
        .with_context(|| format!("server address {address:?} resolves to nothing"))
}

/// Joins the server and plays in `frontend` until the game's end,
/// `play.ticks`, or the window is closed, `play.games` times over; the
/// `stats ...` and `final ...` lines of each game.
pub fn run(
    games: &impl Games,
    options: ConnectOptions,
    frontend: impl Frontend,
) -> anyhow::Result<Vec<String>> {
    let name = options
        .name
        .or_else(|| std::env::var("USER").ok())
        .unwrap_or_else(|| format!("player-{}", std::process::id()));
    let trust = match (options.fingerprint, options.advertised) {
        (Some(fingerprint), _) => Trust::Pinned(fingerprint),
        (None, Some(advertised)) => Trust::Advertised {
            file: options.known_servers,
            address: options.address,
            name: advertised.name,
            fingerprint: advertised.fingerprint,
        },
        (None, None) => Trust::FirstUse {
            file: options.known_servers,
            address: options.address,
        },
    };
    let net = NetClient::connect(NetOptions {
        server: options.server,
        name: name.clone(),
        trust,
        password: options.password,
        spectate: options.spectate,
        ready: frontend.joins_ready(&options.play),
        platform: crate::io::platform::current(),
        self_tests: self_tests(games, options.hooks.perturb_self_test),
        hooks: options.hooks,
        reconnect: options.reconnect,
        link: options.link,
    })
    .context("starting the network thread")?;
    let outcomes = frontend.play(net, name, options.play)?;
    Ok(outcomes.iter().flat_map(report).collect())
}

/// The self-test hashes to announce, one per game: this build's, run
/// before asking for a slot (the server refuses a client that differs for
/// the game it hosts), or, when `perturb`, ones that cannot match.
fn self_tests(games: &impl Games, perturb: bool) -> Vec<lockstep_protocol::SelfTest> {
    let mut tests = games.self_tests();
    if perturb {
        for test in &mut tests {
            test.hash ^= 1;
        }
    }
    tests
}

/// The last lines of a networked game: the scripts read the link's cost
/// from the first and compare the second across clients.
fn report(outcome: &GameOutcome) -> Vec<String> {
    let stats = StatsLine {
        stalled_ticks: outcome.stalled_ticks,
        tx_bytes: outcome.tx_bytes,
        rx_bytes: outcome.rx_bytes,
        rtt_us: outcome.rtt_us,
        delay: outcome.delay,
        playout: u32::from(outcome.playout),
        input_lag_ms: outcome.input_lag_ms,
        replaced: outcome.replaced,
        speed_pct: outcome.slowest_speed.0,
        inputs_on_schedule: outcome.inputs_on_schedule,
        caught_up: outcome.caught_up,
    };
    vec![stats.to_string(), final_line(outcome.tick, outcome.hash)]
}
