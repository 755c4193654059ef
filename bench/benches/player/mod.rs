//! The relay benchmark's players: lightweight clients that live in the
//! benchmark's process, each a tokio task with its own UDP socket, quinn
//! endpoint and connection, speaking the protocol but simulating nothing.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use bytes::Bytes;
use lockstep_client::io::clock;
use lockstep_conditioner::LinkConfig;
use lockstep_protocol::quic::FingerprintVerifier;
use lockstep_protocol::{
    decode, encode, encode_frame, BundleDatagram, ClientDatagram, ClientMessage, FrameReader,
    Hello, Input, InputDatagram, Platform, ServerDatagram, ServerMessage, Start, Tick, ALPN,
    MAX_DATAGRAM_SIZE, PROTOCOL_VERSION,
};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use crate::SETUP_TIMEOUT;

/// How a lightweight client sends its inputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Transport {
    /// A datagram per step with every input the server has not
    /// acknowledged: a lost datagram is repaired by the next one.
    Datagram,
    /// A control-stream frame per input: QUIC retransmits a loss, and
    /// everything behind it waits (head-of-line blocking).
    Stream,
}

impl std::str::FromStr for Transport {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "datagram" => Ok(Transport::Datagram),
            "stream" => Ok(Transport::Stream),
            other => Err(format!("unknown transport {other:?}")),
        }
    }
}

impl std::fmt::Display for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Transport::Datagram => "datagram",
            Transport::Stream => "stream",
        })
    }
}

/// What the clients of a game talk to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Subject {
    /// The real `lockstep-server`, sent inputs this way.
    Relay(Transport),
    /// The bare forwarder of module `floor`.
    Floor,
}

impl std::fmt::Display for Subject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Subject::Relay(transport) => write!(f, "relay, {transport}"),
            Subject::Floor => f.write_str("floor"),
        }
    }
}

/// What the pacing clock tells every client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pace {
    /// The game has not started.
    Lobby,
    /// Step `k`: send the inputs through tick `k + input_delay`.
    Step(u32),
    /// The measurement is over: leave.
    Done,
}

/// The game's clock, as the server's Start gives it; the floor game plays
/// the relay game's.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Schedule {
    /// Ticks per second.
    pub(crate) tick_rate: u32,
    /// Ticks between sampling an input and simulating it.
    pub(crate) input_delay: u32,
}

impl Schedule {
    pub(crate) fn of(start: &Start) -> Schedule {
        Schedule {
            tick_rate: u32::from(start.tick_rate),
            input_delay: u32::from(start.input_delay),
        }
    }

    pub(crate) fn period(self) -> Duration {
        Duration::from_secs(1) / self.tick_rate
    }

    /// The latency a client with the delay pinned absorbs without waiting.
    pub(crate) fn budget(self) -> Duration {
        self.period() * self.input_delay
    }

    /// The first tick whose input is sampled at a step; earlier ones are
    /// sent neutral at the start, as the real client sends them.
    pub(crate) fn first_sampled(self) -> Tick {
        Tick(self.input_delay)
    }
}

/// One client's view of the game, as offsets from the benchmark's epoch:
/// when it first handed its input for each tick to QUIC, and when it had
/// every input of each tick (relay: the bundle arrived; floor: the last
/// other client's input arrived). Indexed by tick.
#[derive(Debug, Default)]
pub(crate) struct Timeline {
    pub(crate) sent: Vec<Option<Duration>>,
    pub(crate) arrived: Vec<Option<Duration>>,
}

/// Sets `times[tick]` unless it is already set (a repeat is not news).
pub(crate) fn record_first(times: &mut Vec<Option<Duration>>, tick: Tick, at: Duration) {
    let index = tick.0 as usize;
    if times.len() <= index {
        times.resize(index + 1, None);
    }
    times[index].get_or_insert(at);
}

/// The latest of the clients' times for `tick`; `None` unless every
/// client has one.
pub(crate) fn latest<'a>(
    clients: impl Iterator<Item = &'a Vec<Option<Duration>>>,
    tick: usize,
) -> Option<Duration> {
    clients
        .map(|times| times.get(tick).copied().flatten())
        .try_fold(Duration::ZERO, |latest, at| Some(latest.max(at?)))
}

/// A lightweight client in the game: its acknowledgement state and timeline.
pub(crate) struct Player {
    pub(crate) transport: Transport,
    pub(crate) hash_interval: u32,
    /// Inputs the server has not acknowledged (datagram transport).
    pub(crate) unacked: BTreeMap<Tick, Input>,
    /// First tick without a local input.
    pub(crate) next_local: Tick,
    /// First bundle tick not received.
    pub(crate) received: Tick,
    pub(crate) epoch: Instant,
    pub(crate) timeline: Timeline,
}

impl Player {
    pub(crate) fn new(start: &Start, transport: Transport, epoch: Instant) -> Player {
        Player {
            transport,
            hash_interval: u32::from(start.hash_interval.max(1)),
            unacked: BTreeMap::new(),
            next_local: Tick(0),
            received: Tick(0),
            epoch,
            timeline: Timeline::default(),
        }
    }

    /// Sends the inputs for every tick through `through` not sent yet (the
    /// content of an input does not change the relay's work, so all are
    /// neutral).
    pub(crate) async fn send_through(
        &mut self,
        through: Tick,
        conn: &quinn::Connection,
        control: &mut quinn::SendStream,
    ) -> anyhow::Result<()> {
        let now = clock::tokio_since(self.epoch);
        while self.next_local <= through {
            let tick = self.next_local;
            record_first(&mut self.timeline.sent, tick, now);
            match self.transport {
                Transport::Datagram => {
                    self.unacked.insert(tick, Input::default());
                }
                Transport::Stream => {
                    let frame = encode_frame(&ClientMessage::Inputs(InputDatagram {
                        bundles_ack: self.received,
                        first_tick: tick,
                        inputs: vec![Input::default()],
                    }))?;
                    control.write_all(&frame).await?;
                }
            }
            self.next_local = tick.next();
        }
        if self.transport == Transport::Datagram {
            let datagram = ClientDatagram::Inputs(InputDatagram {
                bundles_ack: self.received,
                first_tick: self.unacked.keys().next().copied().unwrap_or(self.received),
                inputs: self.unacked.values().copied().collect(),
            });
            let bytes = encode(&datagram, MAX_DATAGRAM_SIZE)
                .context("too many unacknowledged inputs for one datagram")?;
            conn.send_datagram(Bytes::from(bytes))?;
        }
        Ok(())
    }

    /// Takes a bundle datagram; returns the ticks whose world hash a real
    /// client would now report.
    pub(crate) fn receive(&mut self, datagram: BundleDatagram) -> Vec<Tick> {
        self.unacked = self.unacked.split_off(&datagram.inputs_ack);
        if datagram.first_tick > self.received {
            return Vec::new();
        }
        let now = clock::tokio_since(self.epoch);
        let skip = self.received.since(datagram.first_tick) as usize;
        let mut reports = Vec::new();
        for _ in datagram.bundles.iter().skip(skip) {
            record_first(&mut self.timeline.arrived, self.received, now);
            self.received = self.received.next();
            if self.received.0.is_multiple_of(self.hash_interval) {
                reports.push(self.received);
            }
        }
        reports
    }
}

/// How every lightweight client connects: TLS 1.3 pinned to the server's
/// certificate fingerprint, as `lockstep-client --fingerprint` does, and
/// the transport settings the server uses.
pub(crate) fn client_config(fingerprint: &str) -> anyhow::Result<quinn::ClientConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = Arc::new(FingerprintVerifier::new(
        Some(fingerprint),
        provider.clone(),
    ));
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    tls.alpn_protocols = vec![ALPN.to_vec()];
    let crypto = quinn::crypto::rustls::QuicClientConfig::try_from(tls)?;
    let mut config = quinn::ClientConfig::new(Arc::new(crypto));
    config.transport_config(Arc::new(lockstep_client::io::link::transport_config()));
    Ok(config)
}

/// Everything one lightweight client needs to connect.
pub(crate) struct Join {
    pub(crate) index: u32,
    pub(crate) server: SocketAddr,
    pub(crate) config: quinn::ClientConfig,
    pub(crate) link: LinkConfig,
    pub(crate) epoch: Instant,
}

impl Join {
    /// Client `index` of a game: its link is `link` with a seed of its own.
    pub(crate) fn new(
        index: u32,
        server: SocketAddr,
        config: &quinn::ClientConfig,
        link: LinkConfig,
        epoch: Instant,
    ) -> Join {
        Join {
            index,
            server,
            config: config.clone(),
            link: LinkConfig {
                seed: u64::from(index) + 1,
                ..link
            },
            epoch,
        }
    }

    /// A connection to the server from a socket of the client's own, on its
    /// conditioned link.
    pub(crate) async fn connect(&self) -> anyhow::Result<(quinn::Endpoint, quinn::Connection)> {
        let bind: SocketAddr = (std::net::Ipv4Addr::LOCALHOST, 0).into();
        let (endpoint, _) = lockstep_conditioner::endpoint(
            quinn::EndpointConfig::default(),
            None,
            bind,
            self.link,
            self.link,
        )?;
        let conn = endpoint
            .connect_with(self.config.clone(), self.server, "lockstep")?
            .await?;
        Ok((endpoint, conn))
    }
}

/// One lightweight client: joins, reports Start, follows the pacing clock
/// until [`Pace::Done`], leaves, and returns its timeline.
pub(crate) async fn client(
    join: Join,
    transport: Transport,
    started: mpsc::Sender<Start>,
    mut pace: watch::Receiver<Pace>,
) -> anyhow::Result<Timeline> {
    let (endpoint, conn) = join.connect().await?;
    let (mut control, mut recv) = conn.open_bi().await?;
    let hello = ClientMessage::Hello(Hello {
        protocol_version: PROTOCOL_VERSION,
        name: format!("c{}", join.index),
        spectate: false,
        password: None,
        platform: Platform::default(),
        self_tests: vec![lockstep_protocol::SelfTest {
            game: "balls".into(),
            hash: lockstep_balls::self_test(),
            pinned: None,
        }],
        ready: true,
        resume: None,
    });
    control.write_all(&encode_frame(&hello)?).await?;
    let mut reader = FrameReader::new();
    let mut chunk = [0u8; 4096];
    // Welcome and Start may arrive in one read: look at every message.
    let start = 'lobby: loop {
        let Some(n) = recv.read(&mut chunk).await? else {
            bail!("the server closed the control stream in the lobby");
        };
        reader.push(&chunk[..n]);
        while let Some(message) = reader.next_message::<ServerMessage>()? {
            match message {
                ServerMessage::Start(start) => break 'lobby start,
                ServerMessage::Refused(refusal) => bail!("refused: {}", refusal.reason),
                _ => {}
            }
        }
    };
    let mut player = Player::new(&start, transport, join.epoch);
    let first_sampled = Schedule::of(&start).first_sampled();
    player
        .send_through(Tick(first_sampled.0 - 1), &conn, &mut control)
        .await?;
    started.send(start).await?;
    loop {
        tokio::select! {
            changed = pace.changed() => {
                changed?;
                let current = *pace.borrow_and_update();
                match current {
                    Pace::Step(k) => {
                        player.send_through(first_sampled.plus(k), &conn, &mut control).await?;
                    }
                    Pace::Done => break,
                    Pace::Lobby => {}
                }
            }
            datagram = conn.read_datagram() => {
                if let Ok(ServerDatagram::Bundles(d)) = decode(&datagram?, MAX_DATAGRAM_SIZE) {
                    for tick in player.receive(d) {
                        // Every client reports the same hash: no desync,
                        // but the server does the work of comparing.
                        let report = ClientMessage::HashReport { tick, hash: 0 };
                        control.write_all(&encode_frame(&report)?).await?;
                    }
                }
            }
            read = recv.read(&mut chunk) => {
                let Some(n) = read? else {
                    bail!("the server closed the control stream");
                };
                reader.push(&chunk[..n]);
                while let Some(message) = reader.next_message::<ServerMessage>()? {
                    if let ServerMessage::Ended { reason } = message {
                        bail!("the server ended the game: {reason}");
                    }
                }
            }
        }
    }
    control
        .write_all(&encode_frame(&ClientMessage::Leave)?)
        .await?;
    control.finish()?;
    conn.close(quinn::VarInt::from_u32(0), b"benchmark over");
    endpoint.wait_idle().await;
    Ok(player.timeline)
}

/// Waits for a report from each of `clients` clients on `reports`; returns
/// the last one.
pub(crate) async fn every_report<T>(
    reports: &mut mpsc::Receiver<T>,
    clients: u32,
) -> anyhow::Result<T> {
    let mut last = None;
    for _ in 0..clients {
        last = tokio::time::timeout(SETUP_TIMEOUT, reports.recv()).await?;
    }
    last.context("no client reported")
}
