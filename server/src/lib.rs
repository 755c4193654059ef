//! The lockstep relay server.
//!
//! # How it works
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
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod advertise;
mod advertiser;
pub mod clock;
mod desync_check;
mod driver;
mod identity;
mod recording;
mod relay;
mod resume;
mod server;
pub mod session;
mod slack;
mod snapshots;
mod speed;
#[cfg(test)]
mod testing;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use lockstep_engine::HostedGame;
use lockstep_protocol::{GameSpec, Percent, Platform, PlayerId, Tick, ALPN};
use tokio::sync::mpsc;
use tracing::{info, warn, Instrument};

pub use advertise::Occupancy;
pub use advertiser::AdvertiseOptions;
pub use desync_check::{Desync, DesyncCheck, MAX_PENDING_TICKS};
pub use identity::{Identity, IdentityError};
pub use relay::{
    Departure, DropReason, InputOutcome, Relay, Standing, Substitution, INPUT_WINDOW,
    MAX_UNACKED_BUNDLES,
};
pub use resume::{ResumeError, ResumedGame};
pub use server::{MAX_DATAGRAMS_PER_SECOND, MAX_UNAUTHENTICATED};
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
    /// snapshots) without simulating it.
    pub game: &'static dyn HostedGame,
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
    /// whose machine or build computes another would desync.
    pub self_test: u64,
    /// Slow the game down for everyone while a player's machine cannot
    /// keep up, and speed it up again once it can (see [`SpeedControl`]).
    pub speed_control: bool,
    /// Advertise the server on the LAN (see `advertise.rs`); `None`
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
            players: 2,
            tick_rate: 60,
            input_delay: 3,
            seed: 1,
            game,
            spec: game.default_spec(),
            drop_timeout: Duration::from_secs(2),
            laggard_tolerance: Some(DEFAULT_LAGGARD_TOLERANCE),
            hello_timeout: Duration::from_secs(5),
            hash_interval: 15,
            on_desync: OnDesync::Continue,
            replay_dir: None,
            password: None,
            self_test: game.self_test(),
            speed_control: true,
            advertise: None,
            snapshot_secs: snapshots::DEFAULT_INTERVAL_SECS,
            resume: None,
            resume_wait: DEFAULT_RESUME_WAIT,
        }
    }
}

/// Things worth telling whoever runs the server (the binary prints them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerEvent {
    /// A client took a lobby slot.
    Joined {
        /// Its slot.
        player: PlayerId,
        /// Its name.
        name: String,
    },
    /// The machine a client that took a lobby slot runs on, as it claims
    /// (a line of its own after [`ServerEvent::Joined`]).
    Platform {
        /// Its slot.
        player: PlayerId,
        /// Its name.
        name: String,
        /// Its machine and build.
        platform: Platform,
    },
    /// A player in the lobby said it is ready for the next game, or not
    /// (not printed for the state a player joins with).
    Ready {
        /// Its slot.
        player: PlayerId,
        /// Its name.
        name: String,
        /// Ready or not.
        ready: bool,
    },
    /// A client was turned away.
    Refused {
        /// Its address.
        remote: SocketAddr,
        /// The sentence it was sent.
        reason: String,
    },
    /// Everyone in the lobby was ready, enough players were there, and a
    /// game began.
    Started {
        /// Names in slot order.
        players: Vec<String>,
        /// The game's world seed (each rematch gets a new one).
        seed: u64,
    },
    /// A player was removed from the running game.
    Dropped {
        /// Its slot.
        player: PlayerId,
        /// Its name.
        name: String,
        /// First tick simulated without it.
        tick: Tick,
        /// Why.
        reason: DropReason,
    },
    /// The relay stood in for a late player's inputs
    /// ([`lockstep_protocol::Bundle::substituted`]). One event reports
    /// `count` stand-ins for the player since its previous one: the first
    /// after a quiet while at once, then at most one every few seconds, so a
    /// player late on every tick does not fill the output.
    Substituted {
        /// Its slot.
        player: PlayerId,
        /// Its name.
        name: String,
        /// The tick of the first stand-in reported.
        tick: Tick,
        /// The longest any of them waited for the player's input after
        /// the other inputs of its tick arrived.
        waited: Duration,
        /// How many stand-ins this reports.
        count: u32,
    },
    /// A player came back and takes part again from `tick`.
    Rejoined {
        /// Its slot.
        player: PlayerId,
        /// Its name.
        name: String,
        /// First tick it plays again.
        tick: Tick,
    },
    /// Peers reported different hashes.
    Desync {
        /// The first tick whose hashes differ.
        tick: Tick,
        /// Names of the players newly found diverged.
        diverged: Vec<String>,
        /// The first tick whose hashes differ, from the players' per-tick
        /// hashes; `None` when too few players answered to tell.
        first: Option<Tick>,
    },
    /// A game is being recorded.
    Recording {
        /// The replay file.
        path: std::path::PathBuf,
    },
    /// What the game showed about determinism, once it is over (however
    /// it ended): whether every machine computed the same hashes.
    Verdict {
        /// Ticks bundled.
        ticks: Tick,
        /// Hash reports compared.
        checks: u64,
        /// Target triples of the roster players that never diverged, in
        /// slot order (the whole roster when the game agreed).
        agreed: Vec<String>,
        /// `name@triple` of every player found diverged, in slot order;
        /// empty when the game agreed.
        diverged: Vec<String>,
    },
    /// The game speed changes for everyone from `from_tick` on.
    Speed {
        /// The new speed.
        percent: Percent,
        /// First tick paced at it.
        from_tick: Tick,
        /// Why it changed.
        reason: SpeedReason,
        /// Name of the slowest machine's player.
        slowest: String,
        /// That machine's capacity, as it last reported it.
        capacity: Percent,
        /// How far behind its schedule the game is at `from_tick`, time
        /// every client forgives there.
        postpone: Duration,
    },
    /// The server advertises itself on the LAN.
    Advertising {
        /// The name it advertises.
        name: String,
        /// The networks it advertises on, `interface:address` each.
        networks: Vec<String>,
        /// The UDP port it answers probes on.
        discovery_port: u16,
    },
    /// The server goes on with a game it was running when it died (read
    /// from its replay) and waits for its players to reconnect.
    Resuming {
        /// The first tick of the resumed game.
        tick: Tick,
        /// Names of the players it waits for, in slot order.
        waiting: Vec<String>,
    },
    /// A player of a resumed game reconnected and keeps its slot.
    Reconnected {
        /// Its slot.
        player: PlayerId,
        /// Its name.
        name: String,
        /// The tick the resumed game goes on from.
        tick: Tick,
    },
    /// The resumed game runs again: its first tick is bundled.
    Resumed {
        /// That tick.
        tick: Tick,
    },
    /// Every player left or was done with the game; the server is back
    /// in the lobby.
    GameOver {
        /// First tick that was never bundled.
        tick: Tick,
    },
}

impl std::fmt::Display for ServerEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServerEvent::Joined { player, name } => write!(f, "joined player={player} name={name}"),
            ServerEvent::Platform {
                player,
                name,
                platform,
            } => write!(f, "platform player={player} name={name} {platform}"),
            ServerEvent::Ready {
                player,
                name,
                ready,
            } => write!(f, "ready player={player} name={name} ready={ready}"),
            ServerEvent::Refused { remote, reason } => {
                write!(f, "refused remote={remote} reason={reason:?}")
            }
            ServerEvent::Started { players, seed } => {
                write!(f, "start players={} seed={seed}", players.join(","))
            }
            ServerEvent::Dropped {
                player,
                name,
                tick,
                reason,
            } => write!(
                f,
                "dropped player={player} name={name} tick={tick} reason={}",
                reason.as_str()
            ),
            ServerEvent::Substituted {
                player,
                name,
                tick,
                waited,
                count,
            } => write!(
                f,
                "substituted player={player} name={name} tick={tick} waited_ms={} count={count}",
                waited.as_millis()
            ),
            ServerEvent::Rejoined { player, name, tick } => {
                write!(f, "rejoined player={player} name={name} tick={tick}")
            }
            ServerEvent::Desync {
                tick,
                diverged,
                first,
            } => {
                write!(
                    f,
                    "desync tick={tick} diverged={} first=",
                    diverged.join(",")
                )?;
                match first {
                    Some(first) => write!(f, "{first}"),
                    None => f.write_str("unknown"),
                }
            }
            ServerEvent::Recording { path } => write!(f, "recording path={}", path.display()),
            ServerEvent::Resuming { tick, waiting } => {
                write!(f, "resuming tick={tick} waiting={}", waiting.join(","))
            }
            ServerEvent::Reconnected { player, name, tick } => {
                write!(f, "reconnected player={player} name={name} tick={tick}")
            }
            ServerEvent::Resumed { tick } => write!(f, "resumed tick={tick}"),
            ServerEvent::Verdict {
                ticks,
                checks,
                agreed,
                diverged,
            } if diverged.is_empty() => write!(
                f,
                "verdict agreed ticks={ticks} checks={checks} platforms={}",
                agreed.join(",")
            ),
            ServerEvent::Verdict {
                ticks,
                checks,
                agreed,
                diverged,
            } => write!(
                f,
                "verdict diverged ticks={ticks} checks={checks} diverged={} majority={}",
                diverged.join(","),
                agreed.join(",")
            ),
            ServerEvent::Speed {
                percent,
                from_tick,
                reason,
                slowest,
                capacity,
                postpone,
            } => write!(
                f,
                "speed percent={} from_tick={from_tick} reason={} slowest={slowest} capacity={} \
                 postpone_ms={}",
                percent.0,
                reason.as_str(),
                capacity.0,
                postpone.as_millis()
            ),
            ServerEvent::Advertising {
                name,
                networks,
                discovery_port,
            } => write!(
                f,
                "advertising name={name} networks={} discovery_port={discovery_port}",
                networks.join(",")
            ),
            ServerEvent::GameOver { tick } => write!(f, "game over tick={tick}"),
        }
    }
}

/// Why the endpoint could not be created.
#[derive(Debug, thiserror::Error)]
pub enum EndpointError {
    /// The certificate or key was rejected by TLS.
    #[error("invalid server identity: {0}")]
    Tls(#[from] rustls::Error),
    /// QUIC rejected the TLS configuration.
    #[error("TLS configuration unusable for QUIC: {0}")]
    Quic(#[from] quinn::crypto::rustls::NoInitialCipherSuite),
    /// Binding the UDP socket failed.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The underlying error.
        source: std::io::Error,
    },
}

/// The server's QUIC settings: the shared ones with an idle timeout well
/// above the drop timeout (the relay decides drops, QUIC only cleans up),
/// one control stream per client and room for a burst of input datagrams.
pub fn transport_config() -> quinn::TransportConfig {
    /// Silence after which QUIC forgets a connection: five drop timeouts.
    const IDLE_TIMEOUT_MS: u32 = 10_000;
    let mut transport = lockstep_protocol::quic::transport_config(IDLE_TIMEOUT_MS);
    transport
        .max_concurrent_bidi_streams(quinn::VarInt::from_u32(1))
        .max_concurrent_uni_streams(quinn::VarInt::from_u32(0))
        .datagram_receive_buffer_size(Some(256 * 1024));
    transport
}

/// A server endpoint bound to `listen` with `identity`, its UDP socket
/// impaired by `link` in both directions (a clean link changes nothing).
pub fn endpoint(
    listen: SocketAddr,
    identity: &Identity,
    link: &lockstep_conditioner::LinkConfig,
) -> Result<quinn::Endpoint, EndpointError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])?
        .with_no_client_auth()
        .with_single_cert(vec![identity.cert.clone()], identity.private_key())?;
    tls.alpn_protocols = vec![ALPN.to_vec()];
    let crypto = quinn::crypto::rustls::QuicServerConfig::try_from(tls)?;
    let mut config = quinn::ServerConfig::with_crypto(Arc::new(crypto));
    config.transport_config(Arc::new(transport_config()));
    let (endpoint, _) = lockstep_conditioner::endpoint(
        quinn::EndpointConfig::default(),
        Some(config),
        listen,
        *link,
        *link,
    )
    .map_err(|source| EndpointError::Bind {
        addr: listen,
        source,
    })?;
    Ok(endpoint)
}

/// Serves games on `endpoint` until `shutdown` completes, then tells every
/// client, closes every connection with a reason and waits for the
/// endpoint to go idle. `events`, if given, receives what happened.
pub async fn run(
    endpoint: quinn::Endpoint,
    config: Config,
    events: Option<mpsc::UnboundedSender<ServerEvent>>,
    shutdown: impl Future<Output = ()>,
) {
    let (driver_tx, driver_rx) = mpsc::channel(1024);
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let (occupancy_tx, occupancy_rx) = tokio::sync::watch::channel(Occupancy::default());
    let advertiser = advertise(&endpoint, &config, occupancy_rx, events.clone());
    let admission = server::Admission::new(config.hello_timeout, config.password.as_deref());
    let driver_task = tokio::spawn(
        driver::run(
            config,
            events.clone(),
            driver_rx,
            occupancy_tx,
            async move {
                let mut stop_rx = stop_rx;
                let _ = stop_rx.wait_for(|&stop| stop).await;
            },
        )
        .instrument(tracing::info_span!("session")),
    );
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            incoming = endpoint.accept() => match incoming {
                Some(incoming) => match admission.try_enter() {
                    Some(ticket) => {
                        tokio::spawn(server::handle_connection(
                            incoming,
                            ticket,
                            driver_tx.clone(),
                            events.clone(),
                        ));
                    }
                    None => {
                        warn!(
                            remote = %incoming.remote_address(),
                            waiting = admission.pending(),
                            "too many connections without a Hello; refusing a new one"
                        );
                        incoming.refuse();
                    }
                },
                None => break,
            },
            _ = &mut shutdown => break,
        }
    }
    info!("shutting down");
    if let Some(advertiser) = advertiser {
        advertiser.abort();
    }
    let _ = stop_tx.send(true);
    let _ = driver_task.await;
    endpoint.close(CLOSE_SHUTDOWN, b"the server is shutting down");
    let _ = tokio::time::timeout(Duration::from_secs(2), endpoint.wait_idle()).await;
}

/// Starts advertising the server on `endpoint` if `config` asks for it.
fn advertise(
    endpoint: &quinn::Endpoint,
    config: &Config,
    occupancy: tokio::sync::watch::Receiver<Occupancy>,
    events: Option<mpsc::UnboundedSender<ServerEvent>>,
) -> Option<tokio::task::JoinHandle<()>> {
    let options = config.advertise.clone()?;
    let listen = match endpoint.local_addr() {
        Ok(listen) => listen,
        Err(e) => {
            warn!(error = %e, "not advertising on the LAN: the game socket has no address");
            return None;
        }
    };
    let template = lockstep_protocol::Announcement {
        name: options.name.clone(),
        host: listen.ip(),
        port: listen.port(),
        players: 0,
        needed: config.players,
        playing: false,
        tick_rate: config.tick_rate,
        spec: config.spec.clone(),
        input_delay: config.input_delay,
        password: config.password.is_some(),
        protocol_version: lockstep_protocol::PROTOCOL_VERSION,
        fingerprint: options.fingerprint,
        echo: None,
    };
    Some(tokio::spawn(
        advertiser::run(options, template, listen, occupancy, events)
            .instrument(tracing::info_span!("advertiser")),
    ))
}
