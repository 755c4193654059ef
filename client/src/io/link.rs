//! The client's network side: the driver of the pure [`Connection`], on
//! its own thread.
//!
//! The game loop must not block on the network, and the simulation must not
//! see tokio. So [`NetClient::connect`] starts a thread with a small tokio
//! runtime that owns the QUIC endpoint; the frontend talks to it through two
//! channels: [`NetCommand`]s in, [`NetEvent`]s out.
//!
//! What the client says and when is the pure [`Connection`]: the Hello,
//! the datagram exchange (the [`Link`](crate::link::datagrams::Link)), the local
//! inputs on the game's schedule when the frontend is late, the snapshot a
//! game is joined from, and reconnecting to a server lost during a game.
//! This module is its driver. It owns the endpoint, the TLS setup and the
//! trust in the server's certificate (a pinned fingerprint, the
//! known-servers file, a LAN advertisement) and the clock; it connects when
//! the connection asks, feeds it in one `select!` the control stream's
//! messages, the datagrams, the frontend's commands and its timer, each
//! with the time since the thread's epoch, and carries out the
//! [`Action`]s it answers with.

use std::net::SocketAddr;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use bytes::Bytes;
use lockstep_protocol::{
    encode_frame, FrameReader, Hello, Platform, ServerMessage, ALPN, PROTOCOL_VERSION,
};
use tokio::sync::mpsc;

use super::trust::{remember_first_use, Certificates, Trust, TrustError};
use crate::hooks::TestHooks;
use crate::io::clock;
use crate::link::connection::{self, Action, Connection, Ending, Failure, PathStats};
pub use crate::link::connection::{Closed, LinkStats, NetCommand, NetEvent, Started};
use lockstep_protocol::quic::FingerprintVerifier;

/// Time allowed for the server to acknowledge our Leave before we close.
const LEAVE_GRACE: Duration = Duration::from_millis(500);

/// How long a first connection waits for the server to answer (a
/// reconnection waits what its `Connect` says). Once connected, the
/// server's idle timeout decides when silence means it is lost: the
/// client sets none of its own ([`transport_config`]).
const ANSWER_WITHIN: Duration = Duration::from_secs(5);

/// How long a client that lost the server keeps trying to reconnect by
/// default (`--reconnect-secs`): long enough for someone to start the
/// server again by hand with `--resume`, short enough that a server that
/// is gone for good does not hold the player for long.
pub const DEFAULT_RECONNECT: Duration = Duration::from_secs(60);

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
    /// Departures from real play, for tests (none by default).
    pub hooks: TestHooks,
    /// How long to keep trying to reconnect when the server is lost during
    /// a game, keeping the world; zero ends the game instead.
    pub reconnect: Duration,
    /// Impairment of this client's path (both directions), for testing bad
    /// networks; clean by default.
    pub link: lockstep_conditioner::LinkConfig,
}

/// Handle to the network thread.
#[derive(Debug)]
pub struct NetClient {
    server: SocketAddr,
    commands: mpsc::UnboundedSender<NetCommand>,
    events: std::sync::mpsc::Receiver<NetEvent>,
    thread: Option<JoinHandle<()>>,
}

impl NetClient {
    /// Starts connecting in the background; progress arrives as events.
    pub fn connect(options: NetOptions) -> std::io::Result<NetClient> {
        let (commands, command_rx) = mpsc::unbounded_channel();
        let (event_tx, events) = std::sync::mpsc::channel();
        let server = options.server;
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
            server,
            commands,
            events,
            thread: Some(thread),
        })
    }

    /// The server's address.
    pub fn server(&self) -> SocketAddr {
        self.server
    }

    /// Queues `command` for the network thread. If the thread is gone, a
    /// [`NetEvent::Closed`] says why.
    pub fn send(&self, command: NetCommand) {
        let _ = self.commands.send(command);
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

/// Error while running the connection, turned into [`Closed::Lost`].
#[derive(Debug, thiserror::Error)]
pub(crate) enum NetError {
    #[error("cannot open a UDP socket: {0}")]
    Socket(std::io::Error),
    #[error("TLS setup failed: {0}")]
    Tls(String),
    #[error("cannot connect to {0}: {1}")]
    Connect(SocketAddr, quinn::ConnectError),
    #[error("no lockstep server answered at {0} (is lockstep-server running there, and is its UDP port open?)")]
    NoAnswer(SocketAddr),
    #[error("refusing to connect: the server's certificate is not the one --fingerprint gives")]
    FingerprintMismatch(#[source] Certificates),
    #[error("refusing to connect: the server at {address} is not the one trusted on first use")]
    KnownServerChanged {
        address: String,
        #[source]
        certificates: Certificates,
    },
    #[error("refusing to connect: the server at {address} is not the one advertised on the LAN")]
    AdvertisedMismatch {
        address: String,
        #[source]
        certificates: Certificates,
    },

    #[error(transparent)]
    Trust(#[from] TrustError),
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

/// The client's QUIC settings: the shared ones, with no idle timeout of
/// the client's own. QUIC ends a connection after the shorter of the two
/// ends' limits, so the server's decides, and it outlasts the server's
/// drop timeout (five seconds at least): a client that was stopped for
/// less than that (a frozen process, a suspended laptop) finds its
/// connection alive and its place in the game kept, and a server that is
/// gone is given up after as long as it would have waited for us.
pub fn transport_config() -> quinn::TransportConfig {
    lockstep_protocol::quic::transport_config(None)
}

/// Readable reason for a lost connection; uses the server's close reason
/// when it gave one. `silence` is how long nothing had been heard from the
/// server, as the driver saw it: a quarter second early at worst (it looks
/// at least that often), so it is rounded down after a quarter second's
/// grace.
fn describe(error: &quinn::ConnectionError, silence: Duration) -> String {
    match error {
        quinn::ConnectionError::ApplicationClosed(close) => format!(
            "the server closed the connection: {}",
            String::from_utf8_lossy(&close.reason)
        ),
        quinn::ConnectionError::TimedOut => format!(
            "lost the server: nothing heard from it for {} s",
            (silence + Duration::from_millis(250)).as_secs()
        ),
        quinn::ConnectionError::Reset => {
            "lost the server: it reset the connection (it was restarted, or had closed it)"
                .to_string()
        }
        other => format!("connection lost: {other}"),
    }
}

/// Runs the connection on the thread's runtime until it is over.
async fn connection(
    options: NetOptions,
    commands: mpsc::UnboundedReceiver<NetCommand>,
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
    let epoch = clock::tokio_now();
    let mut connection = Connection::new(config(&options), epoch.into_std());
    let mut driver = Driver {
        endpoint: &endpoint,
        options: &options,
        commands,
        events,
        epoch,
        quic: None,
    };
    let closed = driver.run(&mut connection).await;
    endpoint.close(CLOSE_LEAVE, b"client closed");
    let _ = tokio::time::timeout(LEAVE_GRACE, endpoint.wait_idle()).await;
    closed
}

/// What the connection is told of the options.
fn config(options: &NetOptions) -> connection::Config {
    connection::Config {
        hello: Hello {
            protocol_version: options.hooks.protocol_version.unwrap_or(PROTOCOL_VERSION),
            name: options.name.clone(),
            spectate: options.spectate,
            password: options.password.clone(),
            platform: options.platform.clone(),
            self_tests: options.self_tests.clone(),
            ready: options.ready,
            resume: None,
        },
        hooks: options.hooks.link,
        reliable: false,
        reconnect: options.reconnect,
    }
}

/// The socket side of a [`Connection`]: what it must not own.
struct Driver<'a> {
    endpoint: &'a quinn::Endpoint,
    options: &'a NetOptions,
    commands: mpsc::UnboundedReceiver<NetCommand>,
    events: std::sync::mpsc::Sender<NetEvent>,
    /// The instant the connection's time counts from.
    epoch: tokio::time::Instant,
    /// The QUIC connection in use, while there is one.
    quic: Option<Quic>,
}

/// A QUIC connection, its control stream, and what the driver needs to
/// know of the server's certificate when it welcomes us.
struct Quic {
    conn: quinn::Connection,
    send: quinn::SendStream,
    recv: quinn::RecvStream,
    reader: FrameReader,
    /// The fingerprint the server had to present, if one was known.
    expected: Option<String>,
    verifier: Arc<FingerprintVerifier>,
    /// The bytes received from the server so far, and when their count
    /// was last seen to grow (as of the last look at the path): how long
    /// the server has been silent, keep-alives included.
    heard: (u64, Duration),
}

impl Driver<'_> {
    /// Carries out the connection's actions and feeds it what happens
    /// until it closes; how it ended.
    async fn run(&mut self, connection: &mut Connection) -> Closed {
        let mut buffer = [0u8; 4096];
        loop {
            while let Some(action) = connection.poll_action() {
                match self.carry_out(action, connection).await {
                    Ok(Some(closed)) => return closed,
                    Ok(None) => {}
                    Err(error) => self.fail(connection, error),
                }
            }
            if let Err(error) = self.next(connection, &mut buffer).await {
                self.fail(connection, error);
            }
        }
    }

    fn now(&self) -> Duration {
        clock::tokio_since(self.epoch)
    }

    /// Hands the connection the next thing that happens: a message already
    /// read first, so that what it asks in answer is done before the next
    /// one, as the server meant.
    async fn next(
        &mut self,
        connection: &mut Connection,
        buffer: &mut [u8],
    ) -> Result<(), NetError> {
        let epoch = self.epoch;
        let now = || clock::tokio_since(epoch);
        let timeout = connection.poll_timeout();
        let deadline = epoch + timeout.unwrap_or_default();
        let Some(quic) = &mut self.quic else {
            tokio::select! {
                command = self.commands.recv() => {
                    connection.handle_command(command.unwrap_or(NetCommand::Leave), now(), PathStats::default());
                }
                _ = tokio::time::sleep_until(deadline), if timeout.is_some() => {
                    connection.handle_timeout(now(), PathStats::default());
                }
            }
            return Ok(());
        };
        if let Some(message) = quic.reader.next_message::<ServerMessage>()? {
            connection.handle_message(message, now());
            return Ok(());
        }
        tokio::select! {
            read = quic.recv.read(buffer) => {
                let Some(n) = read? else {
                    return Err(NetError::StreamEnded);
                };
                quic.reader.push(&buffer[..n]);
            }
            datagram = quic.conn.read_datagram() => connection.handle_datagram(&datagram?, now()),
            command = self.commands.recv() => {
                // A frontend gone without a word leaves too.
                let now = now();
                connection.handle_command(command.unwrap_or(NetCommand::Leave), now, quic.path(now));
            }
            _ = tokio::time::sleep_until(deadline), if timeout.is_some() => {
                let now = now();
                connection.handle_timeout(now, quic.path(now));
            }
        }
        Ok(())
    }

    /// Does what the connection asked; how it ended if it closed.
    async fn carry_out(
        &mut self,
        action: Action,
        connection: &mut Connection,
    ) -> Result<Option<Closed>, NetError> {
        match action {
            Action::Connect { answer_within } => {
                let mut quic = connect(self.endpoint, self.options, answer_within).await?;
                let now = self.now();
                quic.path(now);
                self.quic = Some(quic);
                connection.handle_connected(now);
            }
            Action::Event(event) => {
                let _ = self.events.send(event);
            }
            Action::Close { closed, ending } => {
                if let Some(quic) = self.quic.take() {
                    quic.end(ending).await;
                }
                return Ok(Some(closed));
            }
            Action::Send(message) => {
                let Some(quic) = &mut self.quic else {
                    return Ok(None);
                };
                let written = quic.send.write_all(&encode_frame(&message)?).await;
                // Once the connection chose to close, a failed write (a
                // Leave to a server already gone) changes nothing: the
                // close says how it ended.
                if !connection.is_closed() {
                    written?;
                }
            }
            Action::Datagram(bytes) => {
                if let Some(quic) = &self.quic {
                    // Failure means the connection is closing; its error
                    // arrives on read_datagram.
                    let _ = quic.conn.send_datagram(Bytes::from(bytes));
                }
            }
            Action::Welcome {
                player,
                players_needed,
            } => {
                let seen = self.quic.as_ref().and_then(|quic| quic.verifier.seen());
                let expected = self.quic.as_ref().and_then(|quic| quic.expected.as_deref());
                let first_use = remember_first_use(&self.options.trust, expected, seen.clone());
                let _ = self.events.send(NetEvent::Welcome {
                    player,
                    players_needed,
                    first_use,
                    fingerprint: seen,
                });
            }
        }
        Ok(None)
    }

    /// The QUIC connection in use, or the attempt to open one, failed: it
    /// goes without a reason, and the connection decides what next.
    fn fail(&mut self, connection: &mut Connection, error: NetError) {
        let now = self.now();
        let silence = self
            .quic
            .take()
            .map_or(Duration::ZERO, |quic| now.saturating_sub(quic.heard.1));
        connection.handle_failure(failure(&error), explain(error, silence), now);
    }
}

impl Quic {
    /// What QUIC knows of the path at `now`.
    fn path(&mut self, now: Duration) -> PathStats {
        let stats = self.conn.stats();
        if stats.udp_rx.bytes > self.heard.0 {
            self.heard = (stats.udp_rx.bytes, now);
        }
        PathStats {
            rtt: self.conn.rtt(),
            tx_bytes: stats.udp_tx.bytes,
            rx_bytes: stats.udp_rx.bytes,
            max_datagram_size: self.conn.max_datagram_size().unwrap_or(0),
        }
    }

    /// Ends the QUIC connection as the connection asked.
    async fn end(mut self, ending: Ending) {
        match ending {
            Ending::Close(reason) => self.conn.close(CLOSE_LEAVE, reason.as_bytes()),
            Ending::Linger(reason) => {
                let _ = self.send.finish();
                let _ = tokio::time::timeout(LEAVE_GRACE, self.conn.closed()).await;
                self.conn.close(CLOSE_LEAVE, reason.as_bytes());
            }
            Ending::Release => {}
        }
    }
}

/// Opens a QUIC connection to the server, checking its certificate as
/// `options.trust` says, and its control stream.
async fn connect(
    endpoint: &quinn::Endpoint,
    options: &NetOptions,
    answer_within: Option<Duration>,
) -> Result<Quic, NetError> {
    let expected = options.trust.expected()?;
    let (config, verifier) = client_config(expected.as_deref())?;
    let connecting = endpoint
        .connect_with(config, options.server, "lockstep")
        .map_err(|e| NetError::Connect(options.server, e))?;
    let connected = tokio::time::timeout(answer_within.unwrap_or(ANSWER_WITHIN), connecting)
        .await
        .map_err(|_| NetError::NoAnswer(options.server))?;
    let conn = connected.map_err(|e| match (&e, &expected, verifier.seen()) {
        (quinn::ConnectionError::TransportError(_), Some(expected), Some(seen))
            if !verifier.matches(&seen) =>
        {
            match &options.trust {
                Trust::Pinned(_) => NetError::FingerprintMismatch(Certificates {
                    seen,
                    expected: expected.clone(),
                    file: None,
                }),
                Trust::FirstUse { file, address } => NetError::KnownServerChanged {
                    address: address.clone(),
                    certificates: Certificates {
                        seen,
                        expected: expected.clone(),
                        file: Some(file.clone()),
                    },
                },
                Trust::Advertised { address, .. } => NetError::AdvertisedMismatch {
                    address: address.clone(),
                    certificates: Certificates {
                        seen,
                        expected: expected.clone(),
                        file: None,
                    },
                },
            }
        }
        (quinn::ConnectionError::TimedOut, _, _) => NetError::NoAnswer(options.server),
        _ => NetError::Connection(e),
    })?;
    let (send, recv) = conn.open_bi().await?;
    Ok(Quic {
        conn,
        send,
        recv,
        reader: FrameReader::new(),
        expected,
        verifier,
        heard: (0, Duration::ZERO),
    })
}

/// What `error` means for reconnecting.
fn failure(error: &NetError) -> Failure {
    if is_loss(error) {
        Failure::ServerLost
    } else if is_no_server(error) {
        Failure::NoServer
    } else {
        Failure::Other
    }
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

/// The sentence for a connection that ended with `error`, `silence` after
/// the server was last heard.
fn explain(error: NetError, silence: Duration) -> String {
    match error {
        NetError::Connection(e)
        | NetError::Read(quinn::ReadError::ConnectionLost(e))
        | NetError::Write(quinn::WriteError::ConnectionLost(e)) => describe(&e, silence),
        e => lockstep_protocol::error_chain(&e),
    }
}
