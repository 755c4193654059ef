//! The client's network side: a QUIC connection driven on its own thread.
//!
//! The game loop must not block on the network, and the simulation must not
//! see tokio. So [`NetClient::connect`] starts a thread with a small tokio
//! runtime that owns the connection; the frontend talks to it through two
//! channels: [`NetCommand`]s in, [`NetEvent`]s out.
//!
//! The datagram exchange itself (redundant inputs, acknowledgements, the
//! arrival estimate) is the pure [`Link`]. The task here is its driver: it
//! owns the connection, reads the clock, feeds the link what arrives, sends
//! the bytes the link returns and forwards each newly received bundle
//! exactly once.
//!
//! It also keeps the local player's inputs on time when the frontend is
//! not: with the held input and the game's schedule the frontend publishes
//! ([`InputSchedule`]), it queues the inputs of every tick due by the
//! schedule that the frontend has not sent yet, so a slow frame delays no
//! input. The link keeps the first input queued for a tick, so the
//! frontend's later sample for it is ignored.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bytes::Bytes;
use lockstep_engine::input_delay::LinkFigures;
use lockstep_protocol::verification_code;
use lockstep_protocol::{
    decode, encode_frame, Bundle, ClientMessage, DesyncNotice, FrameReader, Hello, Input,
    InputDatagram, Lobby, PeerStatus, Percent, Platform, PlayerId, Resume, ServerDatagram,
    ServerMessage, SnapshotChunk, Start, Tick, ALPN, MAX_DATAGRAM_SIZE, MAX_SNAPSHOT_SIZE,
};
use tokio::sync::mpsc;
use tracing::debug;

use crate::clock;
use crate::input_schedule::{InputSchedule, Schedule};
use crate::known_servers;
use crate::link::{Link, NewBundles, RESEND_AFTER};
use crate::tls::FingerprintVerifier;

/// How often link statistics go to the frontend (HUD refresh rate).
const STATS_EVERY: Duration = Duration::from_millis(250);

/// Time allowed for the server to acknowledge our Leave before we close.
const LEAVE_GRACE: Duration = Duration::from_millis(500);

/// Silence after which the server counts as lost: the server sends the
/// lag indicator four times a second and QUIC keep-alives every second, so
/// five quiet seconds mean it is gone, not busy.
const LOST_SERVER_AFTER_MS: u32 = 5_000;

/// How long a client that lost the server keeps trying to reconnect by
/// default (`--reconnect-secs`): long enough for someone to start the
/// server again by hand with `--resume`, short enough that a server that
/// is gone for good does not hold the player for long.
pub const DEFAULT_RECONNECT: Duration = Duration::from_secs(60);

/// Pause between two attempts to reconnect.
const RECONNECT_EVERY: Duration = Duration::from_millis(100);

/// How long one attempt to reconnect waits for the server to answer: on a
/// LAN it answers in milliseconds, or it is not there yet. With the pause,
/// a server started again is found within 0.6 s (QUIC would send the
/// attempt's first packet again only after a second).
const RECONNECT_ATTEMPT: Duration = Duration::from_millis(500);

/// QUIC close code the client uses when it leaves on purpose.
const CLOSE_LEAVE: quinn::VarInt = quinn::VarInt::from_u32(0);

/// Where and as whom to connect.
#[derive(Debug, Clone)]
pub struct NetOptions {
    /// Server address.
    pub server: SocketAddr,
    /// Player name.
    pub name: String,
    /// How the server's certificate is checked.
    pub trust: Trust,
    /// The session password, if the server has one.
    pub password: Option<String>,
    /// Protocol version to announce (the real one except in tests).
    pub protocol_version: u16,
    /// Watch without playing.
    pub spectate: bool,
    /// Join ready for the game (bots, headless clients, `--ready`); a
    /// person in a window says so in the lobby instead.
    pub ready: bool,
    /// This machine and build, for the server to show and record.
    pub platform: Platform,
    /// The self-test hash of every game this client plays, to announce
    /// (each game's own, except in tests of the refusal).
    pub self_tests: Vec<lockstep_protocol::SelfTest>,
    /// Send inputs on the reliable control stream instead of as datagrams
    /// (to compare the transports; datagrams with redundancy are better).
    /// Inputs then go only as the frontend sends them, never on schedule.
    pub inputs_over_stream: bool,
    /// Hold every local input this long before it goes to the link, as a
    /// machine too slow to keep up would: only for testing the server's
    /// laggard tolerance. Zero in real play.
    pub send_delay: Duration,
    /// How long to keep trying to reconnect when the server is lost during
    /// a game, keeping the world; zero ends the game instead.
    pub reconnect: Duration,
    /// Impairment of this client's path (both directions), for testing bad
    /// networks; clean by default.
    pub link: lockstep_conditioner::LinkConfig,
}

/// How the client authenticates the server.
#[derive(Debug, Clone)]
pub enum Trust {
    /// The fingerprint given with `--fingerprint`.
    Pinned(String),
    /// Trust on first use: the fingerprint recorded for `address` in the
    /// known-servers file, or record it now if there is none.
    FirstUse {
        /// The known-servers file.
        file: PathBuf,
        /// The server address as the user gave it.
        address: String,
    },
    /// A server found on the LAN: it must present the fingerprint it
    /// advertised, unless the known-servers file holds another one for its
    /// address or its name (then it is refused before connecting); if the
    /// file holds neither, the fingerprint is recorded under both.
    Advertised {
        /// The known-servers file.
        file: PathBuf,
        /// The address it advertised, HOST:PORT.
        address: String,
        /// The name it advertised.
        name: String,
        /// The fingerprint it advertised.
        fingerprint: String,
    },
}

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
    /// The server ended the game or shut down.
    Ended(String),
    /// The connection failed or was lost.
    Lost(String),
}

/// A game's start as the frontend takes it: the server's Start, when it
/// arrived, and the snapshot it is joined from (see [`NetEvent::Started`]).
pub type Started = (Start, std::time::Instant, Option<Vec<u8>>);

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
    /// The game starts. `at` is when Start arrived: every client starts its
    /// game clock from that moment, however long its frontend takes to
    /// notice, so the clients' clocks agree to within the network delay.
    Started {
        /// Game parameters and roster.
        start: Start,
        /// When the network thread received it.
        at: std::time::Instant,
        /// The verified state the game starts from ([`Start::snapshot`]),
        /// encoded as the game encodes it, once all of it arrived; `None`:
        /// from tick 0. The frontend, which knows the game, decodes it.
        snapshot: Option<Vec<u8>>,
    },
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
        at: std::time::Instant,
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

/// Handle to the network thread.
#[derive(Debug)]
pub struct NetClient {
    commands: mpsc::UnboundedSender<NetCommand>,
    events: std::sync::mpsc::Receiver<NetEvent>,
    thread: Option<JoinHandle<()>>,
}

impl NetClient {
    /// Starts connecting in the background; progress arrives as events.
    pub fn connect(options: NetOptions) -> std::io::Result<NetClient> {
        let (commands, command_rx) = mpsc::unbounded_channel();
        let (event_tx, events) = std::sync::mpsc::channel();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let thread = std::thread::Builder::new()
            .name("lockstep-net".into())
            .spawn(move || {
                let closed = runtime.block_on(connection(options, command_rx, event_tx.clone()));
                let _ = event_tx.send(NetEvent::Closed(closed));
            })?;
        Ok(NetClient {
            commands,
            events,
            thread: Some(thread),
        })
    }

    /// Queues a hash report for the server.
    pub fn report_hash(&self, tick: Tick, hash: u64) {
        let _ = self.commands.send(NetCommand::Report(tick, hash));
    }

    /// Queues a report for the server: this machine sustains `capacity`,
    /// and was `behind` its schedule at `tick`.
    pub fn report_capacity(&self, capacity: Percent, tick: Tick, behind: Duration) {
        let _ = self
            .commands
            .send(NetCommand::Capacity(capacity, tick, behind));
    }

    /// Answers the desync notice of `tick` with the hashes of the ticks
    /// from `first_tick` on.
    pub fn send_tick_hashes(&self, tick: Tick, first_tick: Tick, hashes: Vec<u64>) {
        let _ = self
            .commands
            .send(NetCommand::TickHashes(tick, first_tick, hashes));
    }

    /// Sends the server our world after `tick` ticks (its postcard).
    pub fn send_snapshot(&self, tick: Tick, bytes: Vec<u8>) {
        let _ = self.commands.send(NetCommand::Snapshot(tick, bytes));
    }

    /// Tells the server we are ready for the next game, or not.
    pub fn ready(&self, ready: bool) {
        let _ = self.commands.send(NetCommand::Ready(ready));
    }

    /// Tells the server we are done with the running game and stay for the
    /// next one.
    pub fn game_done(&self) {
        let _ = self.commands.send(NetCommand::GameDone);
    }

    /// Queues the local input for `tick`.
    pub fn send_input(&self, tick: Tick, input: Input) {
        // If the network thread is gone, a Closed event says why.
        let _ = self.commands.send(NetCommand::Input(tick, input));
    }

    /// Tells the network thread the input the local player holds now.
    pub fn hold(&self, input: Input) {
        let _ = self.commands.send(NetCommand::Hold(input));
    }

    /// Tells the network thread where the game's clock stood at `at`.
    pub fn publish_schedule(&self, schedule: Schedule, at: Instant) {
        let _ = self.commands.send(NetCommand::Schedule(schedule, at));
    }

    /// The event channel.
    pub fn events(&self) -> &std::sync::mpsc::Receiver<NetEvent> {
        &self.events
    }

    /// Tells the server we leave, then waits for the thread to close the
    /// connection (bounded by the leave grace period).
    pub fn leave(&mut self) {
        let _ = self.commands.send(NetCommand::Leave);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for NetClient {
    fn drop(&mut self) {
        self.leave();
    }
}

/// Adds `chunk` to the snapshot of tick `expected` assembled in `bytes`;
/// `true` once the last chunk is in. A chunk of another tick, out of
/// order, past its length or oversized ends the connection with a clear
/// error; whether the bytes are a state of that tick is for the frontend,
/// which knows the game.
fn take_snapshot_chunk(
    expected: Option<Tick>,
    bytes: &mut Vec<u8>,
    chunk: SnapshotChunk,
) -> Result<bool, NetError> {
    let bad = |why: String| Err(NetError::Snapshot(why));
    let total = chunk.total_len as usize;
    if Some(chunk.tick) != expected {
        return bad(format!(
            "a chunk of tick {} for a Start from {expected:?}",
            chunk.tick
        ));
    }
    if chunk.total_len > MAX_SNAPSHOT_SIZE || chunk.offset as usize != bytes.len() {
        return bad(format!(
            "chunk at {} of {} bytes after {} bytes",
            chunk.offset,
            chunk.total_len,
            bytes.len()
        ));
    }
    if bytes.len() + chunk.bytes.len() > total {
        return bad(format!("chunks longer than the announced {total} bytes"));
    }
    bytes.extend_from_slice(&chunk.bytes);
    Ok(bytes.len() == total)
}

/// Error while running the connection, turned into [`Closed::Lost`].
#[derive(Debug, thiserror::Error)]
enum NetError {
    #[error("cannot open a UDP socket: {0}")]
    Socket(std::io::Error),
    #[error("TLS setup failed: {0}")]
    Tls(String),
    #[error("cannot connect to {0}: {1}")]
    Connect(SocketAddr, quinn::ConnectError),
    #[error("no lockstep server answered at {0} (is lockstep-server running there, and is its UDP port open?)")]
    NoAnswer(SocketAddr),
    #[error("the server's certificate fingerprint is {seen}, not {expected} as given with --fingerprint; refusing to connect")]
    FingerprintMismatch { seen: String, expected: String },
    #[error("refusing to connect: the server at {address} presented certificate {seen}, but {expected} was trusted on first use (see {}); if the server's identity changed on purpose, delete its line there", file.display())]
    KnownServerChanged {
        address: String,
        seen: String,
        expected: String,
        file: PathBuf,
    },
    #[error("refusing to join {name}: it advertises certificate {seen} (code {}), but {expected} (code {}) is on file for {under} in {}; if the server's identity changed on purpose, delete that line", verification_code(seen), verification_code(expected), file.display())]
    AdvertisedChanged {
        name: String,
        seen: String,
        expected: String,
        under: String,
        file: PathBuf,
    },
    #[error("the server at {address} presented certificate {seen}, not {expected} as it advertised on the LAN; refusing to connect")]
    AdvertisedMismatch {
        address: String,
        seen: String,
        expected: String,
    },
    #[error("cannot use the known-servers file {}: {source}", file.display())]
    KnownServers {
        file: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    Connection(#[from] quinn::ConnectionError),
    #[error("control stream failed: {0}")]
    Write(#[from] quinn::WriteError),
    #[error("control stream failed: {0}")]
    Read(#[from] quinn::ReadError),
    #[error("the server closed the control stream")]
    StreamEnded,
    #[error("the server sent a malformed message: {0}")]
    Decode(#[from] lockstep_protocol::DecodeError),
    #[error("the server's snapshot is unusable: {0}")]
    Snapshot(String),
    #[error("cannot encode a message: {0}")]
    Encode(#[from] lockstep_protocol::EncodeError),
}

fn client_config(
    fingerprint: Option<&str>,
) -> Result<(quinn::ClientConfig, Arc<FingerprintVerifier>), NetError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = Arc::new(FingerprintVerifier::new(fingerprint, provider.clone()));
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| NetError::Tls(e.to_string()))?
        .dangerous()
        .with_custom_certificate_verifier(verifier.clone())
        .with_no_client_auth();
    tls.alpn_protocols = vec![ALPN.to_vec()];
    let crypto = quinn::crypto::rustls::QuicClientConfig::try_from(tls)
        .map_err(|e| NetError::Tls(e.to_string()))?;
    let mut config = quinn::ClientConfig::new(Arc::new(crypto));
    config.transport_config(Arc::new(transport_config()));
    Ok((config, verifier))
}

/// The client's QUIC settings: the shared ones, giving up on the server
/// after `LOST_SERVER_AFTER_MS` of silence.
pub fn transport_config() -> quinn::TransportConfig {
    lockstep_protocol::quic::transport_config(LOST_SERVER_AFTER_MS)
}

/// Records a server trusted for the first time; returns what to tell the
/// user about it.
fn remember_first_use(
    trust: &Trust,
    expected: Option<&str>,
    seen: Option<String>,
) -> Option<String> {
    if let Trust::Advertised {
        file,
        address,
        name,
        fingerprint,
    } = trust
    {
        return remember_advertised(file, address, name, fingerprint);
    }
    let (Trust::FirstUse { file, address }, None, Some(seen)) = (trust, expected, seen) else {
        return None;
    };
    Some(match known_servers::remember(file, address, &seen) {
        Ok(()) => format!(
            "trusting the server at {address} on first use: its certificate fingerprint {seen} \
             is now recorded in {}; compare it with the one the server printed",
            file.display()
        ),
        Err(e) => format!(
            "the server at {address} is not authenticated (certificate fingerprint {seen}) and \
             could not be recorded in {}: {e}",
            file.display()
        ),
    })
}

/// Records a server found on the LAN under its address and its name,
/// where the file does not have it yet; returns what to tell the user.
fn remember_advertised(
    file: &std::path::Path,
    address: &str,
    name: &str,
    fingerprint: &str,
) -> Option<String> {
    let mut recorded = Vec::new();
    for key in [address.to_string(), known_servers::name_key(name)] {
        match known_servers::lookup(file, &key) {
            Ok(Some(_)) => {}
            Ok(None) => match known_servers::remember(file, &key, fingerprint) {
                Ok(()) => recorded.push(key),
                Err(e) => {
                    return Some(format!(
                        "the server {name} at {address} (code {}) could not be recorded in {}: {e}",
                        verification_code(fingerprint),
                        file.display()
                    ))
                }
            },
            Err(e) => {
                return Some(format!("cannot read {}: {e}", file.display()));
            }
        }
    }
    (!recorded.is_empty()).then(|| {
        format!(
            "trusting the server {name} at {address} on first use: its certificate fingerprint \
             {fingerprint} (code {}) is now recorded in {} as {}; compare the code with the one \
             the server printed",
            verification_code(fingerprint),
            file.display(),
            recorded.join(" and ")
        )
    })
}

/// Readable reason for a lost connection; uses the server's close reason
/// when it gave one.
fn describe(error: &quinn::ConnectionError) -> String {
    match error {
        quinn::ConnectionError::ApplicationClosed(close) => format!(
            "the server closed the connection: {}",
            String::from_utf8_lossy(&close.reason)
        ),
        quinn::ConnectionError::TimedOut => format!(
            "lost the server: nothing heard from it for {} s",
            LOST_SERVER_AFTER_MS / 1000
        ),
        other => format!("connection lost: {other}"),
    }
}

async fn connection(
    options: NetOptions,
    mut commands: mpsc::UnboundedReceiver<NetCommand>,
    events: std::sync::mpsc::Sender<NetEvent>,
) -> Closed {
    let bind: SocketAddr = if options.server.is_ipv6() {
        (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
    } else {
        (std::net::Ipv4Addr::UNSPECIFIED, 0).into()
    };
    let endpoint = match lockstep_conditioner::endpoint(
        quinn::EndpointConfig::default(),
        None,
        bind,
        options.link,
        options.link,
    ) {
        Ok((endpoint, _)) => endpoint,
        Err(e) => return Closed::Lost(NetError::Socket(e).to_string()),
    };
    let mut kept = Kept::default();
    // How the server was lost and when to give up on it, while
    // reconnecting.
    let mut lost: Option<(String, tokio::time::Instant)> = None;
    let closed = loop {
        let error = match play(&endpoint, &options, &mut commands, &events, &mut kept).await {
            Ok(closed) => break closed,
            Err(error) => error,
        };
        if std::mem::take(&mut kept.live) {
            // This connection got back into the game: a later loss has
            // the whole time again.
            lost = None;
        }
        let retry = !options.reconnect.is_zero()
            && kept.game.is_some()
            && (is_loss(&error) || (lost.is_some() && is_no_server(&error)));
        if !retry {
            break Closed::Lost(explain(error));
        }
        let now = clock::tokio_now();
        let (reason, give_up) = lost.get_or_insert_with(|| {
            let reason = explain(error);
            let _ = events.send(NetEvent::Reconnecting {
                reason: reason.clone(),
                for_secs: options.reconnect.as_secs(),
            });
            (reason, now + options.reconnect)
        });
        if now >= *give_up {
            break Closed::Lost(format!(
                "{reason}; no server to reconnect to in {} s",
                options.reconnect.as_secs()
            ));
        }
        if wait_or_leave(&mut commands, now + RECONNECT_EVERY).await {
            break Closed::Left;
        }
    };
    endpoint.close(CLOSE_LEAVE, b"client closed");
    let _ = tokio::time::timeout(LEAVE_GRACE, endpoint.wait_idle()).await;
    closed
}

/// What one connection leaves to the next after the server is lost.
#[derive(Debug, Default)]
struct Kept {
    /// The game we are in, and the first bundle we lack: a reconnection
    /// asks to go on from there ([`Hello::resume`]).
    game: Option<Resume>,
    /// Set when the server let this connection into the game.
    live: bool,
}

/// Whether `error` means the server went away (died, or the path to it
/// failed), not that it ended the game or refused us: worth reconnecting.
fn is_loss(error: &NetError) -> bool {
    match error {
        NetError::Connection(e)
        | NetError::Read(quinn::ReadError::ConnectionLost(e))
        | NetError::Write(quinn::WriteError::ConnectionLost(e)) => matches!(
            e,
            quinn::ConnectionError::TimedOut | quinn::ConnectionError::Reset
        ),
        _ => false,
    }
}

/// Whether an attempt to reconnect found no server (yet).
fn is_no_server(error: &NetError) -> bool {
    matches!(
        error,
        NetError::NoAnswer(_) | NetError::Connect(..) | NetError::StreamEnded
    ) || is_loss(error)
        || matches!(
            error,
            NetError::Connection(quinn::ConnectionError::ConnectionClosed(_))
        )
}

/// The sentence for a connection that ended with `error`.
fn explain(error: NetError) -> String {
    match error {
        NetError::Connection(e)
        | NetError::Read(quinn::ReadError::ConnectionLost(e))
        | NetError::Write(quinn::WriteError::ConnectionLost(e)) => describe(&e),
        e => e.to_string(),
    }
}

/// Waits until `until` between two attempts to reconnect, dropping what
/// the frontend sends meanwhile (the server that comes back will not
/// want it); `true` if the player left.
async fn wait_or_leave(
    commands: &mut mpsc::UnboundedReceiver<NetCommand>,
    until: tokio::time::Instant,
) -> bool {
    loop {
        tokio::select! {
            _ = tokio::time::sleep_until(until) => return false,
            command = commands.recv() => {
                if matches!(command, Some(NetCommand::Leave) | None) {
                    return true;
                }
            }
        }
    }
}

async fn play(
    endpoint: &quinn::Endpoint,
    options: &NetOptions,
    commands: &mut mpsc::UnboundedReceiver<NetCommand>,
    events: &std::sync::mpsc::Sender<NetEvent>,
    kept: &mut Kept,
) -> Result<Closed, NetError> {
    let expected = match &options.trust {
        Trust::Pinned(fingerprint) => Some(fingerprint.clone()),
        Trust::FirstUse { file, address } => {
            known_servers::lookup(file, address).map_err(|source| NetError::KnownServers {
                file: file.clone(),
                source,
            })?
        }
        Trust::Advertised {
            file,
            address,
            name,
            fingerprint,
        } => {
            let standing =
                known_servers::standing(file, address, name, fingerprint).map_err(|source| {
                    NetError::KnownServers {
                        file: file.clone(),
                        source,
                    }
                })?;
            if let known_servers::Standing::Changed { expected, under } = standing {
                return Err(NetError::AdvertisedChanged {
                    name: name.clone(),
                    seen: fingerprint.clone(),
                    expected,
                    under,
                    file: file.clone(),
                });
            }
            Some(fingerprint.clone())
        }
    };
    let (config, verifier) = client_config(expected.as_deref())?;
    let connecting = endpoint
        .connect_with(config, options.server, "lockstep")
        .map_err(|e| NetError::Connect(options.server, e))?;
    // A reconnection gives up on a silent server soon and tries again.
    let connected = match kept.game {
        Some(_) => tokio::time::timeout(RECONNECT_ATTEMPT, connecting)
            .await
            .map_err(|_| NetError::NoAnswer(options.server))?,
        None => connecting.await,
    };
    let conn = connected.map_err(|e| match (&e, &expected, verifier.seen()) {
        (quinn::ConnectionError::TransportError(_), Some(expected), Some(seen))
            if !verifier.matches(&seen) =>
        {
            match &options.trust {
                Trust::Pinned(_) => NetError::FingerprintMismatch {
                    seen,
                    expected: expected.clone(),
                },
                Trust::FirstUse { file, address } => NetError::KnownServerChanged {
                    address: address.clone(),
                    seen,
                    expected: expected.clone(),
                    file: file.clone(),
                },
                Trust::Advertised { address, .. } => NetError::AdvertisedMismatch {
                    address: address.clone(),
                    seen,
                    expected: expected.clone(),
                },
            }
        }
        (quinn::ConnectionError::TimedOut, _, _) => NetError::NoAnswer(options.server),
        _ => NetError::Connection(e),
    })?;
    let (mut send, mut recv) = conn.open_bi().await?;
    let hello = ClientMessage::Hello(Hello {
        protocol_version: options.protocol_version,
        name: options.name.clone(),
        spectate: options.spectate,
        password: options.password.clone(),
        platform: options.platform.clone(),
        self_tests: options.self_tests.clone(),
        ready: options.ready,
        resume: kept.game,
    });
    send.write_all(&encode_frame(&hello)?).await?;

    let mut reader = FrameReader::new();
    let mut chunk = [0u8; 4096];
    // The link's clock: it is given the time since it was created.
    let epoch = clock::tokio_now();
    let mut link = Link::default();
    let mut on_schedule = InputSchedule::default();
    let mut inputs_on_schedule = 0;
    // Inputs held back by `send_delay`, with when they may go.
    let mut held: VecDeque<(Duration, Tick, Input)> = VecDeque::new();
    let mut stats = tokio::time::interval(STATS_EVERY);
    // A Start from a snapshot, its arrival, and the snapshot's bytes so
    // far: the game starts once they are all in.
    let mut joining: Option<(Start, tokio::time::Instant, Vec<u8>)> = None;
    let mut resend = tokio::time::interval(RESEND_AFTER / 3);
    resend.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        if link.started() {
            if let Some(game) = &mut kept.game {
                game.next_bundle = link.received_through();
            }
        }
        let next_due = on_schedule.next_due(clock::tokio_since(epoch));
        tokio::select! {
            read = recv.read(&mut chunk) => {
                let Some(n) = read? else {
                    return Err(NetError::StreamEnded);
                };
                reader.push(&chunk[..n]);
                while let Some(message) = reader.next_message::<ServerMessage>()? {
                    match message {
                        ServerMessage::Refused(refusal) => {
                            conn.close(CLOSE_LEAVE, b"refused");
                            return Ok(Closed::Refused(refusal.reason));
                        }
                        ServerMessage::Welcome { .. } if kept.game.is_some() => {
                            // Reconnected to a server back in its lobby: it
                            // was started again without the game.
                            conn.close(CLOSE_LEAVE, b"the game is gone");
                            return Ok(Closed::Ended(
                                "the server came back without the game (it was started again \
                                 without --resume)"
                                    .into(),
                            ));
                        }
                        ServerMessage::Welcome { player, players_needed } => {
                            let first_use = remember_first_use(&options.trust, expected.as_deref(), verifier.seen());
                            let _ = events.send(NetEvent::Welcome {
                                player,
                                players_needed,
                                first_use,
                                fingerprint: verifier.seen(),
                            });
                        }
                        ServerMessage::Start(start) => {
                            let at = clock::tokio_now();
                            // Every game's exchange starts from tick 0 (a
                            // rematch after GameDone, too), from the
                            // snapshot the game is joined from, or, for
                            // the game this client kept while the server
                            // was gone, from the tick it resumes at.
                            link = Link::default();
                            on_schedule = InputSchedule::default();
                            held.clear();
                            link.start(start.tick_rate, at.duration_since(epoch));
                            kept.live = true;
                            let resumed = start.resume.filter(|&tick| {
                                kept.game == Some(Resume { seed: start.seed, next_bundle: tick })
                            });
                            kept.game = Some(Resume {
                                seed: start.seed,
                                next_bundle: start.resume.or(start.snapshot).unwrap_or_default(),
                            });
                            match (resumed, start.snapshot) {
                                (Some(tick), _) => {
                                    link.start_at(tick);
                                    let _ = events.send(NetEvent::Resumed {
                                        start,
                                        at: at.into_std(),
                                    });
                                }
                                (None, Some(tick)) => {
                                    link.start_at(tick);
                                    joining = Some((start, at, Vec::new()));
                                }
                                (None, None) => {
                                    let _ = events.send(NetEvent::Started {
                                        start,
                                        at: at.into_std(),
                                        snapshot: None,
                                    });
                                }
                            }
                        }
                        ServerMessage::Snapshot(chunk) => {
                            let Some((start, _, bytes)) = &mut joining else {
                                debug!(tick = %chunk.tick, "snapshot without a Start ignored");
                                continue;
                            };
                            if take_snapshot_chunk(start.snapshot, bytes, chunk)? {
                                let (start, at, bytes) = joining.take().ok_or(NetError::StreamEnded)?;
                                let _ = events.send(NetEvent::Started {
                                    start,
                                    at: at.into_std(),
                                    snapshot: Some(bytes),
                                });
                            }
                        }
                        ServerMessage::SnapshotRequest { tick } => {
                            let _ = events.send(NetEvent::SnapshotRequest(tick));
                        }
                        ServerMessage::Ended { reason } => return Ok(Closed::Ended(reason)),
                        ServerMessage::Desync(notice) => {
                            let _ = events.send(NetEvent::Desync(notice));
                        }
                        ServerMessage::History { first_tick, bundles } => {
                            if let Some(new) = link.take_history(first_tick, bundles) {
                                let _ = events.send(new.into());
                            }
                        }
                        ServerMessage::PeerStatus(status) => {
                            let _ = events.send(NetEvent::Peers(status));
                        }
                        ServerMessage::Pinpointed { tick, first } => {
                            let _ = events.send(NetEvent::Pinpointed { tick, first });
                        }
                        ServerMessage::Speed { from_tick, percent, postpone_us } => {
                            link.set_speed(from_tick, percent);
                            let postpone = Duration::from_micros(u64::from(postpone_us));
                            let _ = events.send(NetEvent::Speed { from_tick, percent, postpone });
                        }
                        ServerMessage::Lobby(lobby) => {
                            let _ = events.send(NetEvent::Lobby(lobby));
                        }
                    }
                }
            }
            datagram = conn.read_datagram() => {
                let bytes = datagram?;
                // A malformed datagram is dropped; the next one repeats it.
                if let Ok(ServerDatagram::Bundles(d)) = decode(&bytes, MAX_DATAGRAM_SIZE) {
                    if let Some(new) = link.receive(d, clock::tokio_since(epoch)) {
                        let _ = events.send(new.into());
                    }
                }
            }
            command = commands.recv() => match command {
                Some(NetCommand::Input(tick, input)) if options.inputs_over_stream => {
                    let inputs = ClientMessage::Inputs(InputDatagram {
                        bundles_ack: link.received_through(),
                        first_tick: tick,
                        inputs: vec![input],
                    });
                    send.write_all(&encode_frame(&inputs)?).await?;
                }
                Some(NetCommand::Input(tick, input)) if options.send_delay.is_zero() => {
                    if !link.queue_input(tick, input).is_empty() {
                        send_inputs(&mut link, &conn, clock::tokio_since(epoch));
                    }
                }
                Some(NetCommand::Input(tick, input)) => {
                    held.push_back((clock::tokio_since(epoch) + options.send_delay, tick, input));
                }
                Some(NetCommand::Hold(_) | NetCommand::Schedule(..)) if options.inputs_over_stream => {}
                Some(NetCommand::Hold(input)) => on_schedule.hold(input),
                Some(NetCommand::Schedule(schedule, at)) => {
                    let at = tokio::time::Instant::from_std(at).saturating_duration_since(epoch);
                    on_schedule.publish(schedule, at);
                }
                Some(NetCommand::Report(tick, hash)) => {
                    send.write_all(&encode_frame(&ClientMessage::HashReport { tick, hash })?).await?;
                }
                Some(NetCommand::Capacity(percent, tick, behind)) => {
                    let behind_us = behind.as_micros().min(u128::from(u32::MAX)) as u32;
                    let report = ClientMessage::Capacity { percent, tick, behind_us };
                    send.write_all(&encode_frame(&report)?).await?;
                }
                Some(NetCommand::Snapshot(tick, bytes)) => {
                    for chunk in SnapshotChunk::split(tick, &bytes) {
                        send.write_all(&encode_frame(&ClientMessage::Snapshot(chunk))?).await?;
                    }
                }
                Some(NetCommand::Ready(ready)) => {
                    send.write_all(&encode_frame(&ClientMessage::Ready(ready))?).await?;
                }
                Some(NetCommand::GameDone) => {
                    send.write_all(&encode_frame(&ClientMessage::GameDone)?).await?;
                    // Out of this game: a loss now has nothing to keep.
                    kept.game = None;
                    // Nothing more to send or repeat for this game; a
                    // straggling bundle of it starts past a fresh link's
                    // tick 0 and is ignored.
                    link = Link::default();
                    on_schedule = InputSchedule::default();
                    held.clear();
                }
                Some(NetCommand::TickHashes(tick, first_tick, hashes)) => {
                    let answer = ClientMessage::TickHashes { tick, first_tick, hashes };
                    send.write_all(&encode_frame(&answer)?).await?;
                }
                Some(NetCommand::Leave) | None => {
                    let _ = send.write_all(&encode_frame(&ClientMessage::Leave)?).await;
                    let _ = send.finish();
                    let _ = tokio::time::timeout(LEAVE_GRACE, conn.closed()).await;
                    conn.close(CLOSE_LEAVE, b"player left");
                    return Ok(Closed::Left);
                }
            },
            _ = tokio::time::sleep_until(epoch + next_due.unwrap_or_default()), if next_due.is_some() => {
                let now = clock::tokio_since(epoch);
                if let Some((tick, input)) = on_schedule.due(now) {
                    let given = link.queue_input(tick, input);
                    if !given.is_empty() {
                        inputs_on_schedule += u64::from(given.end.since(given.start));
                        debug!(first = %given.start, last = %tick, "inputs sent on schedule before the frame sampled them");
                        send_inputs(&mut link, &conn, now);
                    }
                }
            }
            _ = resend.tick(), if link.started() => {
                let now = clock::tokio_since(epoch);
                let mut released = false;
                while let Some((_, tick, input)) = held.pop_front_if(|(at, _, _)| *at <= now) {
                    link.queue_input(tick, input);
                    released = true;
                }
                if released || link.due(now) {
                    send_inputs(&mut link, &conn, now);
                }
            }
            _ = stats.tick() => {
                let s = conn.stats();
                let _ = events.send(NetEvent::Stats(LinkStats {
                    rtt: conn.rtt(),
                    tx_bytes: s.udp_tx.bytes,
                    rx_bytes: s.udp_rx.bytes,
                    jitter: link.jitter(),
                    irregularity: link.irregularity(),
                    inputs_on_schedule,
                }));
            }
        }
    }
}

/// Sends the link's input datagram for `now`, if one fits the connection.
fn send_inputs(link: &mut Link, conn: &quinn::Connection, now: Duration) {
    let max_size = conn.max_datagram_size().unwrap_or(0);
    if let Some(bytes) = link.next_datagram(now, max_size) {
        // Failure means the connection is closing; its error arrives on
        // read_datagram.
        let _ = conn.send_datagram(Bytes::from(bytes));
    }
}
