//! The web door: a TCP listener on the server's port that serves the
//! browser's page from memory and, at
//! [`WEB_SOCKET_PATH`](lockstep_protocol::WEB_SOCKET_PATH), a WebSocket
//! that speaks the QUIC protocol's messages (`lockstep_protocol::web`).
//!
//! Each TCP connection gets a task: it reads one request head within
//! [`HEAD_DEADLINE`], answers what `web.rs` decides and closes, or turns
//! into a WebSocket. A WebSocket takes a place among the connections
//! without a Hello (`admission.rs`), says its Hello within the same
//! deadline as a QUIC client, and from then on is a [`Peer`] of the
//! session like any other: its control messages and datagrams go through
//! the same rate limits (`intake.rs`). At most [`MAX_WEB_CONNECTIONS`]
//! are open at once; beyond that a new one is closed at once.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use lockstep_protocol::{
    decode, ClientMessage, Refusal, ServerMessage, WebMessage, FRAME_HEADER_LEN, MAX_MESSAGE_SIZE,
    MAX_WEB_MESSAGE, WEB_CLOSE_BASE,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch, Semaphore};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode as WsCloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::WebSocketStream;
use tracing::{debug, info, warn, Instrument};

use super::admission::{read_hello, report_refusal, Admission, Ticket, Verdict};
use super::clock;
use super::intake::{ControlIntake, DatagramIntake};
use super::peer::{Abort, Peer, WebOut, WebPeer};
use super::session::ConnEvent;
use crate::session::{ConnId, Event};
use crate::web::{parse_head, refuse_head, route, HeadError, Request, WebFiles};
use crate::{ServerEvent, CLOSE_PROTOCOL, CLOSE_REFUSED};

/// Web connections open at once, pages and WebSockets together: twice
/// the largest game's clients. Beyond it a new connection is closed at
/// once, so idle sockets cannot exhaust the server's file descriptors.
pub const MAX_WEB_CONNECTIONS: usize = 128;

/// Time a connection has to send its request head: a browser sends it at
/// once; a slow or silent peer is closed.
const HEAD_DEADLINE: Duration = Duration::from_secs(5);

/// Time a write may wait on a peer that does not read.
const WRITE_DEADLINE: Duration = Duration::from_secs(10);

/// How often a WebSocket peer is pinged; its pongs measure its RTT.
const PING_EVERY: Duration = Duration::from_secs(1);

/// Messages waiting for a WebSocket's writer: a few seconds of bundles at
/// 60 Hz and the control messages between them. A browser that lets it
/// fill has stopped reading and is closed (`peer.rs`).
const WEB_QUEUE: usize = 1024;

/// Time a refused or closing peer gets to read the close and answer it.
const CLOSE_WAIT: Duration = Duration::from_secs(2);

/// Why the web door could not open.
#[derive(Debug, thiserror::Error)]
pub enum WebDoorError {
    /// Binding the TCP port failed.
    #[error("cannot listen on TCP {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The page's directory or one of its files could not be read.
    #[error("cannot read the web page's files in {dir}: {source}")]
    Read {
        /// The directory.
        dir: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}

/// The web door: its listener and the page it serves, loaded at startup.
#[derive(Debug)]
pub struct WebDoor {
    listener: TcpListener,
    files: WebFiles,
}

impl WebDoor {
    /// Listens on TCP `addr` and loads the page from `dir`: every regular
    /// file directly in it whose name is plain (letters, digits, `.`, `_`,
    /// `-`). A missing directory serves no page (the WebSocket still
    /// works). Call it inside the tokio runtime.
    pub fn bind(addr: SocketAddr, dir: &Path) -> Result<WebDoor, WebDoorError> {
        let files = load(dir).map_err(|source| WebDoorError::Read {
            dir: dir.to_path_buf(),
            source,
        })?;
        let bind = |source| WebDoorError::Bind { addr, source };
        let listener = std::net::TcpListener::bind(addr).map_err(bind)?;
        listener.set_nonblocking(true).map_err(bind)?;
        let listener = TcpListener::from_std(listener).map_err(bind)?;
        Ok(WebDoor { listener, files })
    }

    /// The address the door listens on.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Whether the page itself (`index.html`) was found.
    pub fn has_page(&self) -> bool {
        self.files.has_page()
    }

    /// The door serving the name of the hosted `game` beside the page's
    /// files (`hosted-game.txt`): the page reads it to load the lightest
    /// wasm module that has the game.
    pub(crate) fn hosting(mut self, game: &str) -> WebDoor {
        self.files.host(game);
        self
    }
}

/// The page's files in `dir`, read into memory.
fn load(dir: &Path) -> std::io::Result<WebFiles> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(WebFiles::default()),
        Err(e) => return Err(e),
    };
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry?;
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        if crate::web::is_servable(&name) && entry.file_type()?.is_file() {
            files.push((name, std::fs::read(entry.path())?));
        }
    }
    Ok(WebFiles::new(files))
}

/// Accepts web connections until the task is dropped.
pub(crate) async fn serve(
    door: WebDoor,
    admission: Arc<Admission>,
    driver: mpsc::Sender<ConnEvent>,
    events: Option<mpsc::UnboundedSender<ServerEvent>>,
) {
    let open = Arc::new(Semaphore::new(MAX_WEB_CONNECTIONS));
    let files = Arc::new(door.files);
    loop {
        let (stream, remote) = match door.listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                // Out of file descriptors, or a connection reset before it
                // was accepted: wait a moment instead of spinning.
                debug!(error = %e, "web accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Ok(permit) = open.clone().try_acquire_owned() else {
            warn!(%remote, "too many web connections; closing a new one");
            continue;
        };
        let connection = Connection {
            files: files.clone(),
            admission: admission.clone(),
            driver: driver.clone(),
            events: events.clone(),
            remote,
        };
        let span = tracing::info_span!("web", %remote);
        tokio::spawn(
            async move {
                connection.handle(stream).await;
                drop(permit);
            }
            .instrument(span),
        );
    }
}

/// What one web connection's task needs.
struct Connection {
    files: Arc<WebFiles>,
    admission: Arc<Admission>,
    driver: mpsc::Sender<ConnEvent>,
    events: Option<mpsc::UnboundedSender<ServerEvent>>,
    remote: SocketAddr,
}

impl Connection {
    /// One request: answered and closed, or upgraded to a WebSocket.
    async fn handle(self, mut stream: TcpStream) {
        let _ = stream.set_nodelay(true);
        let mut received = Vec::new();
        let head = tokio::time::timeout(HEAD_DEADLINE, read_head(&mut stream, &mut received));
        let reply = match head.await {
            Ok(HeadRead::Request(request)) => route(&request, &self.files),
            Ok(HeadRead::Refused(e)) => refuse_head(e),
            Ok(HeadRead::Closed) => return,
            Err(_) => {
                debug!("no request head within {HEAD_DEADLINE:?}; closed");
                return;
            }
        };
        let written = tokio::time::timeout(WRITE_DEADLINE, async {
            stream.write_all(reply.head.as_bytes()).await?;
            stream.write_all(&reply.body).await?;
            stream.flush().await
        });
        if !matches!(written.await, Ok(Ok(()))) {
            return;
        }
        if !reply.upgrade {
            linger(stream).await;
            return;
        }
        let Some(ticket) = self.admission.try_enter() else {
            warn!(
                waiting = self.admission.pending(),
                "too many connections without a Hello; closing a new WebSocket"
            );
            return;
        };
        // What the browser sent after the head is already WebSocket.
        let rest = received
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .map_or_else(Vec::new, |end| received[end + 4..].to_vec());
        let config = WebSocketConfig::default()
            .max_message_size(Some(MAX_WEB_MESSAGE))
            .max_frame_size(Some(MAX_WEB_MESSAGE));
        let socket =
            WebSocketStream::from_partially_read(stream, rest, Role::Server, Some(config)).await;
        self.play(socket, ticket).await;
    }

    /// A WebSocket from its Hello to its end.
    async fn play(self, socket: WebSocketStream<TcpStream>, ticket: Ticket) {
        let conn_id = next_web_id();
        let span = tracing::info_span!("connection", id = conn_id.0);
        async move {
            let (mut sink, mut stream) = socket.split();
            let deadline = clock::now() + self.admission.hello_timeout;
            let first = tokio::time::timeout_at(deadline, first_control(&mut stream)).await;
            let hello = match first
                .unwrap_or_else(|_| {
                    Err(format!(
                        "no Hello within {:?}",
                        self.admission.hello_timeout
                    ))
                })
                .and_then(|body| read_hello(&body).map_err(|e| e.to_string()))
            {
                Ok(hello) => hello,
                Err(why) => {
                    info!(error = %why, "closing before joining");
                    let _ = close(&mut sink, CLOSE_PROTOCOL, &why).await;
                    return;
                }
            };
            let (out_tx, out_rx) = mpsc::channel(WEB_QUEUE);
            let (rtt_tx, rtt_rx) = watch::channel(Duration::ZERO);
            let abort = Arc::new(watch::channel(None).0);
            let peer = Peer::Web(WebPeer {
                out: out_tx,
                rtt: rtt_rx,
                abort: abort.clone(),
            });
            let name = match self
                .admission
                .join(hello, conn_id, peer, &self.driver)
                .await
            {
                Verdict::Joined(name) => name,
                Verdict::Refused(reason) => {
                    report_refusal(self.remote, &reason, &self.events);
                    let refusal = ServerMessage::Refused(Refusal {
                        reason: reason.clone(),
                    });
                    let queued = control_messages(crate::session::Outgoing::Message(refusal));
                    for message in queued {
                        let _ = sink.send(message).await;
                    }
                    let _ = close(&mut sink, CLOSE_REFUSED, &reason).await;
                    let _ = tokio::time::timeout(CLOSE_WAIT, stream.next()).await;
                    return;
                }
                Verdict::Gone => return,
            };
            // Joined: no longer counts against the unauthenticated cap.
            drop(ticket);
            let started = clock::now();
            let mut writer =
                tokio::spawn(write(sink, out_rx, abort.subscribe(), started).in_current_span());
            let why = tokio::select! {
                (why, close) = read(stream, conn_id, &self.driver, rtt_tx, started) => {
                    if let Some(close) = close {
                        abort.send_replace(Some(close));
                        let _ = tokio::time::timeout(CLOSE_WAIT, &mut writer).await;
                    }
                    why
                }
                why = &mut writer => why.unwrap_or_else(|e| format!("writer failed: {e}")),
            };
            writer.abort();
            info!(name = %name, reason = %why, "connection ended");
            let _ = self
                .driver
                .send(ConnEvent::Session(Event::Disconnected(conn_id, why)))
                .await;
        }
        .instrument(span)
        .await;
    }
}

/// Bytes a closing connection may still send that are read and dropped.
const LINGER_BYTES: usize = 256 * 1024;

/// Ends a connection that was answered: says it is done writing, then
/// reads and drops what the peer still sends for a moment (bounded), so
/// the close does not reset the connection before the peer has read the
/// answer (a request longer than the head limit leaves bytes unread).
async fn linger(mut stream: TcpStream) {
    let _ = stream.shutdown().await;
    let drain = async {
        let mut chunk = [0u8; 4096];
        let mut dropped = 0;
        while dropped < LINGER_BYTES {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => dropped += n,
            }
        }
    };
    let _ = tokio::time::timeout(CLOSE_WAIT, drain).await;
}

/// How reading a request head ended.
enum HeadRead {
    Request(Request),
    Refused(HeadError),
    /// The peer closed or the socket failed first.
    Closed,
}

/// Reads until `received` holds a whole request head (at most one read
/// past [`MAX_HEAD`]).
async fn read_head(stream: &mut TcpStream, received: &mut Vec<u8>) -> HeadRead {
    let mut chunk = [0u8; 2048];
    loop {
        match parse_head(received) {
            Ok(Some(request)) => return HeadRead::Request(request),
            Ok(None) => {}
            Err(e) => return HeadRead::Refused(e),
        }
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return HeadRead::Closed,
            Ok(n) => received.extend_from_slice(&chunk[..n]),
        }
    }
}

/// A number for a WebSocket connection: the top bit set, so it never
/// equals a QUIC connection's `stable_id` (an address in the heap).
fn next_web_id() -> ConnId {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    ConnId(NEXT.fetch_add(1, Ordering::Relaxed) | (1 << (usize::BITS - 1)))
}

type Sink = futures_util::stream::SplitSink<WebSocketStream<TcpStream>, Message>;
type Stream = futures_util::stream::SplitStream<WebSocketStream<TcpStream>>;

/// The body of the first control message, which should be a Hello.
async fn first_control(stream: &mut Stream) -> Result<Vec<u8>, String> {
    loop {
        match stream.next().await {
            Some(Ok(Message::Binary(bytes))) => {
                return match WebMessage::parse(&bytes) {
                    Ok(WebMessage::Control(body)) => Ok(body.to_vec()),
                    Ok(WebMessage::Datagram(_)) => Err("a datagram before Hello".into()),
                    Err(e) => Err(format!("malformed web message: {e}")),
                };
            }
            Some(Ok(Message::Text(_))) => return Err(TEXT_REFUSED.into()),
            Some(Ok(Message::Close(_))) | None => return Err("closed before Hello".into()),
            Some(Ok(_)) => {}
            Some(Err(e)) => return Err(read_error(&e)),
        }
    }
}

/// Why a text message closes the connection.
const TEXT_REFUSED: &str = "text messages are not part of the protocol";

fn read_error(e: &WsError) -> String {
    match e {
        WsError::Capacity(e) => format!("message too large (over {MAX_WEB_MESSAGE} bytes): {e}"),
        e => format!("connection lost: {e}"),
    }
}

/// Hands the session every control message and datagram, within the rate
/// limits, and measures the RTT from the pongs. Returns why the
/// connection ended, and the close to send if the server ends it.
async fn read(
    mut stream: Stream,
    conn_id: ConnId,
    driver: &mpsc::Sender<ConnEvent>,
    rtt: watch::Sender<Duration>,
    started: Instant,
) -> (String, Abort) {
    let mut control = ControlIntake::new(conn_id);
    let mut datagrams = DatagramIntake::new(conn_id);
    let protocol = |why: String| (why.clone(), Some((CLOSE_PROTOCOL, why)));
    loop {
        let bytes = match stream.next().await {
            Some(Ok(Message::Binary(bytes))) => bytes,
            Some(Ok(Message::Pong(payload))) => {
                if let Some(sample) = pong_rtt(&payload, started) {
                    rtt.send_modify(|rtt| *rtt = smooth(*rtt, sample));
                }
                continue;
            }
            Some(Ok(Message::Text(_))) => return protocol(TEXT_REFUSED.into()),
            Some(Ok(Message::Close(_))) | None => return ("the browser closed".into(), None),
            Some(Ok(_)) => continue,
            Some(Err(e @ WsError::Capacity(_))) => return protocol(read_error(&e)),
            Some(Err(e)) => return (read_error(&e), None),
        };
        let taken = match WebMessage::parse(&bytes) {
            Ok(WebMessage::Datagram(datagram)) => datagrams.take(datagram),
            Ok(WebMessage::Control(body)) => {
                match decode::<ClientMessage>(body, MAX_MESSAGE_SIZE) {
                    Ok(message) => control.take(message),
                    Err(e) => return protocol(format!("malformed control message: {e}")),
                }
            }
            Err(e) => return protocol(format!("malformed web message: {e}")),
        };
        match taken {
            Ok(Some(event)) => {
                if driver.send(ConnEvent::Session(event)).await.is_err() {
                    return ("server stopping".into(), None);
                }
            }
            Ok(None) => {}
            Err(why) => return protocol(why),
        }
    }
}

/// The RTT a pong's payload (the microseconds since `started` its ping
/// left at) measures, if the payload is one of ours.
fn pong_rtt(payload: &[u8], started: Instant) -> Option<Duration> {
    let sent = Duration::from_micros(u64::from_le_bytes(payload.try_into().ok()?));
    clock::now().duration_since(started).checked_sub(sent)
}

/// The smoothed RTT after a new sample, as QUIC smooths it (7/8 old, 1/8
/// new); the first sample stands alone.
fn smooth(rtt: Duration, sample: Duration) -> Duration {
    if rtt.is_zero() {
        sample
    } else {
        (rtt * 7 + sample) / 8
    }
}

/// Writes what the session queues, in order, and pings every
/// [`PING_EVERY`], until a close (queued or aborted) or a failed write.
/// Returns why it stopped.
async fn write(
    mut sink: Sink,
    mut out: mpsc::Receiver<WebOut>,
    mut abort: watch::Receiver<Abort>,
    started: Instant,
) -> String {
    let mut ping = tokio::time::interval(PING_EVERY);
    ping.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut open = true;
    loop {
        let messages = tokio::select! {
            biased;
            changed = abort.changed() => {
                let Ok(()) = changed else {
                    return "server stopping".into();
                };
                let Some((code, reason)) = abort.borrow_and_update().clone() else {
                    continue;
                };
                let _ = close(&mut sink, code, &reason).await;
                return reason;
            }
            item = out.recv(), if open => match item {
                Some(WebOut::Control(outgoing)) => control_messages(outgoing),
                Some(WebOut::Datagram(bytes)) => {
                    vec![Message::Binary(WebMessage::Datagram(&bytes).to_bytes().into())]
                }
                Some(WebOut::Close(code, reason)) => {
                    let _ = close(&mut sink, code, &reason).await;
                    return reason;
                }
                // Released by the session: what was queued is out, and
                // the browser closes.
                None => {
                    open = false;
                    continue;
                }
            },
            _ = ping.tick() => {
                let micros = clock::now().duration_since(started).as_micros() as u64;
                vec![Message::Ping(micros.to_le_bytes().to_vec().into())]
            }
        };
        for message in messages {
            match tokio::time::timeout(WRITE_DEADLINE, sink.send(message)).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return format!("connection lost: {e}"),
                Err(_) => return "the browser stopped reading".into(),
            }
        }
    }
}

/// A control message as WebSocket messages: one per frame, without the
/// frame's length prefix.
fn control_messages(outgoing: crate::session::Outgoing) -> Vec<Message> {
    match outgoing.frames() {
        Ok(frames) => frames
            .iter()
            .map(|frame| {
                let body = frame.get(FRAME_HEADER_LEN..).unwrap_or_default();
                Message::Binary(WebMessage::Control(body).to_bytes().into())
            })
            .collect(),
        Err(e) => {
            warn!(error = %e, "control message not encodable");
            Vec::new()
        }
    }
}

/// Sends the close frame for a QUIC close code and reason (cut to the 123
/// bytes a close frame holds).
async fn close(sink: &mut Sink, code: quinn::VarInt, reason: &str) -> Result<(), WsError> {
    let code = u16::try_from(code.into_inner()).unwrap_or(0);
    let mut end = reason.len().min(123);
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    let frame = CloseFrame {
        code: WsCloseCode::from(WEB_CLOSE_BASE + code),
        reason: reason[..end].to_string().into(),
    };
    let sent = tokio::time::timeout(WRITE_DEADLINE, sink.send(Message::Close(Some(frame))));
    sent.await.unwrap_or(Err(WsError::ConnectionClosed))
}
