//! One task per connection, and the admission of new ones.
//!
//! A connection task turns the QUIC connection into [`ConnEvent`]s for the
//! session's driver (`session.rs`): it waits (with a deadline) for the
//! Hello on the control stream, refuses bad versions and passwords itself,
//! then forwards decoded datagrams and control messages stamped with its
//! own connection id, within a rate limit.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use lockstep_protocol::{
    decode, encode_frame, hello_version, ClientDatagram, ClientMessage, FrameReader, Hello,
    Refusal, ServerMessage, MAX_DATAGRAM_SIZE, MAX_MESSAGE_SIZE, PROTOCOL_VERSION,
};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tracing::{debug, info, warn, Instrument};

use super::clock;
use super::session::ConnEvent;
use crate::session::{ConnId, Event, Outgoing};
use crate::{ServerEvent, CLOSE_PROTOCOL, CLOSE_REFUSED};

/// Control messages waiting for one client's writer task: Welcome, Start,
/// a history, Ended, and four lag-indicator updates a second. An honest
/// client reads them as they come; one that stops reading loses status
/// updates, never bundles (those are datagrams).
const CONTROL_QUEUE: usize = 64;

/// Size of one read from the control stream.
const READ_CHUNK: usize = 4096;

/// Datagrams a client may send per second on average. An honest client
/// sends one per tick plus a few repeats and heartbeats: at 60 Hz about 70.
/// Four times the fastest tick rate's need leaves room for bursts after a
/// stall and keeps a flood from costing the server more than a player.
pub const MAX_DATAGRAMS_PER_SECOND: u32 = 240;

/// Datagrams a client may send in a burst beyond the average rate.
const DATAGRAM_BURST: u32 = 120;

/// Control messages a client may send per second on average (hash reports,
/// Leave, inputs over the stream when measuring): the same budget.
const CONTROL_PER_SECOND: u32 = 240;

/// Connections allowed between the QUIC handshake and a decided Hello. More
/// than a LAN lobby ever needs at once; beyond it new connections are
/// refused, so half-open connections cannot exhaust the server.
pub const MAX_UNAUTHENTICATED: usize = 64;

/// Admission control: counts connections that have not finished saying
/// Hello, and holds what Hello is checked against.
#[derive(Debug)]
pub(crate) struct Admission {
    pending: AtomicUsize,
    hello_timeout: Duration,
    /// SHA-256 of the session password, if there is one. Compared as
    /// digests so the comparison's timing says nothing about the password.
    password: Option<Vec<u8>>,
}

/// A place among the unauthenticated connections; released when dropped.
#[derive(Debug)]
pub(crate) struct Ticket(Arc<Admission>);

impl Drop for Ticket {
    fn drop(&mut self) {
        self.0.pending.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Admission {
    pub(crate) fn new(hello_timeout: Duration, password: Option<&str>) -> Arc<Admission> {
        Arc::new(Admission {
            pending: AtomicUsize::new(0),
            hello_timeout,
            password: password.map(digest),
        })
    }

    /// A ticket if fewer than [`MAX_UNAUTHENTICATED`] connections wait.
    pub(crate) fn try_enter(self: &Arc<Self>) -> Option<Ticket> {
        let before = self.pending.fetch_add(1, Ordering::AcqRel);
        let ticket = Ticket(self.clone());
        (before < MAX_UNAUTHENTICATED).then_some(ticket)
    }

    /// Connections currently between handshake and Hello.
    pub(crate) fn pending(&self) -> usize {
        self.pending.load(Ordering::Acquire)
    }

    /// Why a Hello's password is not accepted, if it is not.
    fn check_password(&self, given: Option<&str>) -> Option<&'static str> {
        let expected = self.password.as_ref()?;
        match given {
            None => Some("this server needs a password: pass --password or set LOCKSTEP_PASSWORD"),
            Some(given) if digest(given) != *expected => Some("wrong password"),
            Some(_) => None,
        }
    }
}

fn digest(password: &str) -> Vec<u8> {
    ring::digest::digest(&ring::digest::SHA256, password.as_bytes())
        .as_ref()
        .to_vec()
}

/// A token bucket: `rate` tokens a second, at most `burst` saved up.
#[derive(Debug)]
struct Budget {
    tokens: f64,
    rate: f64,
    burst: f64,
    last: Instant,
}

impl Budget {
    fn new(rate: u32, burst: u32) -> Self {
        Budget {
            tokens: f64::from(burst),
            rate: f64::from(rate),
            burst: f64::from(burst),
            last: clock::now(),
        }
    }

    /// Takes one token; false when the budget is spent.
    fn take(&mut self) -> bool {
        let now = clock::now();
        let refill = now.duration_since(self.last).as_secs_f64() * self.rate;
        self.last = now;
        self.tokens = if self.tokens + refill > self.burst {
            self.burst
        } else {
            self.tokens + refill
        };
        if self.tokens < 1.0 {
            return false;
        }
        self.tokens -= 1.0;
        true
    }
}

/// Why a connection task ended early.
#[derive(Debug, thiserror::Error)]
enum HandshakeError {
    #[error("no Hello within {0:?}")]
    HelloTimeout(Duration),
    #[error("connection failed: {0}")]
    Connection(#[from] quinn::ConnectionError),
    #[error("control stream failed: {0}")]
    Read(#[from] quinn::ReadError),
    #[error("control stream ended before Hello")]
    StreamEnded,
    #[error("first message was not Hello")]
    NotHello,
    #[error("malformed control message: {0}")]
    Decode(#[from] lockstep_protocol::DecodeError),
}

/// One connection from its QUIC handshake to its end: the Hello within
/// the deadline, the version and password checks, the join the session
/// answers, then its traffic until it ends. `ticket` holds its place
/// among the connections without a Hello until it has joined.
pub(crate) async fn handle_connection(
    incoming: quinn::Incoming,
    ticket: Ticket,
    driver: mpsc::Sender<ConnEvent>,
    events: Option<mpsc::UnboundedSender<ServerEvent>>,
) {
    let admission = ticket.0.clone();
    let hello_timeout = admission.hello_timeout;
    let remote = incoming.remote_address();
    // One deadline for the QUIC handshake and the Hello together, so a
    // peer that never finishes either holds its place for a bounded time.
    let deadline = clock::now() + hello_timeout;
    let conn = match tokio::time::timeout_at(deadline, incoming).await {
        Ok(Ok(conn)) => conn,
        Ok(Err(e)) => {
            info!(%remote, error = %e, "QUIC handshake failed");
            return;
        }
        Err(_) => {
            info!(%remote, "QUIC handshake not finished within {hello_timeout:?}; abandoned");
            return;
        }
    };
    let conn_id = ConnId(conn.stable_id());
    let span = tracing::info_span!("connection", %remote, id = conn_id.0);
    async move {
        let (send, recv, mut reader, hello) =
            match tokio::time::timeout_at(deadline, read_hello(&conn)).await {
                Ok(Ok(parts)) => parts,
                Ok(Err(e)) => {
                    info!(error = %e, "closing before joining");
                    conn.close(CLOSE_PROTOCOL, e.to_string().as_bytes());
                    return;
                }
                Err(_) => {
                    let e = HandshakeError::HelloTimeout(hello_timeout);
                    info!(error = %e, "closing before joining");
                    conn.close(CLOSE_PROTOCOL, e.to_string().as_bytes());
                    return;
                }
            };
        let hello = match hello {
            Ok(hello) if hello.protocol_version == PROTOCOL_VERSION => hello,
            Ok(Hello {
                protocol_version: version,
                ..
            })
            | Err(version) => {
                let reason = format!(
                    "protocol version mismatch: this server speaks version {PROTOCOL_VERSION}, \
                     the client speaks version {version}; use matching builds"
                );
                refuse(&conn, send, &reason, &events).await;
                return;
            }
        };
        if let Some(reason) = admission.check_password(hello.password.as_deref()) {
            refuse(&conn, send, reason, &events).await;
            return;
        }
        let (control_tx, control_rx) = mpsc::channel(CONTROL_QUEUE);
        let (reply_tx, reply_rx) = oneshot::channel();
        let join = ConnEvent::Join {
            conn_id,
            name: hello.name.clone(),
            spectate: hello.spectate,
            ready: hello.ready,
            platform: Box::new(hello.platform.sanitized()),
            self_tests: hello.self_tests.clone(),
            resume: hello.resume,
            conn: conn.clone(),
            control: control_tx,
            reply: reply_tx,
        };
        if driver.send(join).await.is_err() {
            return;
        }
        match reply_rx.await {
            Ok(Ok(())) => {}
            Ok(Err(refusal)) => {
                refuse(&conn, send, &refusal.reason, &events).await;
                return;
            }
            Err(_) => return,
        };
        // Joined: no longer counts against the unauthenticated cap.
        drop(ticket);
        let writer = tokio::spawn(write_control(send, control_rx).in_current_span());
        let why = relay_traffic(&conn, conn_id, recv, &mut reader, &driver).await;
        info!(name = %hello.name, reason = %why, "connection ended");
        let _ = driver
            .send(ConnEvent::Session(Event::Disconnected(conn_id, why)))
            .await;
        writer.abort();
    }
    .instrument(span)
    .await;
}

/// The first frame of a connection: a Hello of this version, or the
/// version of a Hello this build cannot decode (`Err(version)`).
type HelloOrVersion = Result<Hello, u16>;

async fn read_hello(
    conn: &quinn::Connection,
) -> Result<
    (
        quinn::SendStream,
        quinn::RecvStream,
        FrameReader,
        HelloOrVersion,
    ),
    HandshakeError,
> {
    let (send, mut recv) = conn.accept_bi().await?;
    let mut reader = FrameReader::new();
    let mut chunk = [0u8; READ_CHUNK];
    loop {
        if let Some(body) = reader.next_frame()? {
            return match decode::<ClientMessage>(&body, MAX_MESSAGE_SIZE) {
                Ok(ClientMessage::Hello(hello)) => Ok((send, recv, reader, Ok(hello))),
                Ok(_) => Err(HandshakeError::NotHello),
                Err(e) => match hello_version(&body) {
                    Some(version) if version != PROTOCOL_VERSION => {
                        Ok((send, recv, reader, Err(version)))
                    }
                    _ => Err(HandshakeError::Decode(e)),
                },
            };
        }
        match recv.read(&mut chunk).await? {
            Some(n) => reader.push(&chunk[..n]),
            None => return Err(HandshakeError::StreamEnded),
        }
    }
}

/// Sends the refusal, waits briefly for the client to read it and close,
/// then closes the connection with the same reason.
async fn refuse(
    conn: &quinn::Connection,
    mut send: quinn::SendStream,
    reason: &str,
    events: &Option<mpsc::UnboundedSender<ServerEvent>>,
) {
    info!(%reason, "refused");
    if let Some(events) = events {
        let _ = events.send(ServerEvent::Refused {
            remote: conn.remote_address(),
            reason: reason.to_string(),
        });
    }
    let refusal = ServerMessage::Refused(Refusal {
        reason: reason.to_string(),
    });
    if let Ok(frame) = encode_frame(&refusal) {
        if send.write_all(&frame).await.is_ok() && send.finish().is_ok() {
            let _ = tokio::time::timeout(Duration::from_secs(2), conn.closed()).await;
        }
    }
    conn.close(CLOSE_REFUSED, reason.as_bytes());
}

/// Writes what the session queues for this client on its control stream,
/// in order, until the queue closes or the stream fails.
async fn write_control(mut send: quinn::SendStream, mut rx: mpsc::Receiver<Outgoing>) {
    while let Some(outgoing) = rx.recv().await {
        let frames = match outgoing.frames() {
            Ok(frames) => frames,
            Err(e) => {
                warn!(error = %e, "control message not encodable");
                continue;
            }
        };
        for frame in frames {
            if let Err(e) = send.write_all(&frame).await {
                debug!(error = %e, "control stream closed");
                return;
            }
        }
    }
    let _ = send.finish();
}

/// Forwards datagrams and control messages until the connection ends;
/// returns why it ended. Datagrams (one per tick) get a task of their own,
/// so waiting for one never touches the control stream and the reverse.
async fn relay_traffic(
    conn: &quinn::Connection,
    conn_id: ConnId,
    recv: quinn::RecvStream,
    reader: &mut FrameReader,
    driver: &mpsc::Sender<ConnEvent>,
) -> String {
    let mut datagrams =
        tokio::spawn(relay_datagrams(conn.clone(), conn_id, driver.clone()).in_current_span());
    let why = tokio::select! {
        why = relay_control(conn, conn_id, recv, reader, driver) => why,
        why = &mut datagrams => why.unwrap_or_else(|e| format!("datagram task failed: {e}")),
    };
    datagrams.abort();
    why
}

/// Hands the session every input datagram, within the rate limit.
async fn relay_datagrams(
    conn: quinn::Connection,
    conn_id: ConnId,
    driver: mpsc::Sender<ConnEvent>,
) -> String {
    let mut budget = Budget::new(MAX_DATAGRAMS_PER_SECOND, DATAGRAM_BURST);
    let mut malformed = 0u64;
    loop {
        let bytes = match conn.read_datagram().await {
            Ok(bytes) => bytes,
            Err(e) => return format!("connection lost: {e}"),
        };
        if !budget.take() {
            let why = format!("too many datagrams (more than {MAX_DATAGRAMS_PER_SECOND} a second)");
            warn!(reason = %why, "disconnecting a flooding client");
            conn.close(CLOSE_PROTOCOL, why.as_bytes());
            return why;
        }
        match decode::<ClientDatagram>(&bytes, MAX_DATAGRAM_SIZE) {
            Ok(ClientDatagram::Inputs(inputs)) => {
                if driver
                    .send(ConnEvent::Session(Event::Inputs(conn_id, inputs)))
                    .await
                    .is_err()
                {
                    return "server stopping".into();
                }
            }
            Err(e) => {
                malformed += 1;
                // Log the first, then every thousandth: a broken client
                // must not flood the log either.
                if malformed == 1 || malformed.is_multiple_of(1000) {
                    warn!(error = %e, len = bytes.len(), malformed, "malformed datagrams ignored");
                }
            }
        }
    }
}

/// Hands the session every control message, within the rate limit. A
/// client that finishes its stream may still play: then this waits for
/// the datagrams to end the connection.
async fn relay_control(
    conn: &quinn::Connection,
    conn_id: ConnId,
    mut recv: quinn::RecvStream,
    reader: &mut FrameReader,
    driver: &mpsc::Sender<ConnEvent>,
) -> String {
    let mut chunk = [0u8; READ_CHUNK];
    let mut budget = Budget::new(CONTROL_PER_SECOND, DATAGRAM_BURST);
    loop {
        let n = match recv.read(&mut chunk).await {
            Ok(Some(n)) => n,
            Ok(None) => return std::future::pending().await,
            Err(e) => return format!("control stream failed: {e}"),
        };
        reader.push(&chunk[..n]);
        loop {
            let message = reader.next_message::<ClientMessage>();
            if matches!(message, Ok(Some(_))) && !budget.take() {
                let why =
                    format!("too many control messages (more than {CONTROL_PER_SECOND} a second)");
                warn!(reason = %why, "disconnecting a flooding client");
                conn.close(CLOSE_PROTOCOL, why.as_bytes());
                return why;
            }
            let event = match message {
                Ok(Some(message)) => {
                    match Event::from_message(conn_id, message, clock::unix_seconds()) {
                        Some(event) => event,
                        None => {
                            debug!("repeated Hello ignored");
                            continue;
                        }
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    let why = format!("malformed control message: {e}");
                    conn.close(CLOSE_PROTOCOL, why.as_bytes());
                    return why;
                }
            };
            if driver.send(ConnEvent::Session(event)).await.is_err() {
                return "server stopping".into();
            }
        }
    }
}
