//! One task per QUIC connection.
//!
//! A connection task turns the QUIC connection into [`ConnEvent`]s for the
//! session's driver (`session.rs`): it waits (with a deadline) for the
//! Hello on the control stream, has it checked (`admission.rs`), then
//! forwards datagrams and control messages stamped with its own
//! connection id, within the rate limits (`intake.rs`).

use std::time::Duration;

use lockstep_protocol::{encode_frame, FrameReader, Refusal, ServerMessage};
use tokio::sync::mpsc;
use tracing::{debug, info, warn, Instrument};

use super::admission::{read_hello, report_refusal, HelloError, HelloOrVersion, Ticket, Verdict};
use super::clock;
use super::intake::{ControlIntake, DatagramIntake};
use super::peer::Peer;
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
    #[error(transparent)]
    Hello(#[from] HelloError),
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
    let admission = ticket.admission();
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
            match tokio::time::timeout_at(deadline, read_first(&conn)).await {
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
        let (control_tx, control_rx) = mpsc::channel(CONTROL_QUEUE);
        let peer = Peer::Quic {
            conn: conn.clone(),
            control: control_tx,
        };
        let name = match admission.join(hello, conn_id, peer, &driver).await {
            Verdict::Joined(name) => name,
            Verdict::Refused(reason) => {
                refuse(&conn, send, &reason, &events).await;
                return;
            }
            Verdict::Gone => return,
        };
        // Joined: no longer counts against the unauthenticated cap.
        drop(ticket);
        let writer = tokio::spawn(write_control(send, control_rx).in_current_span());
        let why = relay_traffic(&conn, conn_id, recv, &mut reader, &driver).await;
        info!(name = %name, reason = %why, "connection ended");
        let _ = driver
            .send(ConnEvent::Session(Event::Disconnected(conn_id, why)))
            .await;
        writer.abort();
    }
    .instrument(span)
    .await;
}

/// The control stream and the first frame of a connection, read as a
/// Hello.
async fn read_first(
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
            let hello = read_hello(&body)?;
            return Ok((send, recv, reader, hello));
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
    report_refusal(conn.remote_address(), reason, events);
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
    let mut intake = DatagramIntake::new(conn_id);
    loop {
        let bytes = match conn.read_datagram().await {
            Ok(bytes) => bytes,
            Err(e) => return format!("connection lost: {e}"),
        };
        match intake.take(&bytes) {
            Ok(Some(event)) => {
                if driver.send(ConnEvent::Session(event)).await.is_err() {
                    return "server stopping".into();
                }
            }
            Ok(None) => {}
            Err(why) => {
                conn.close(CLOSE_PROTOCOL, why.as_bytes());
                return why;
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
    let mut intake = ControlIntake::new(conn_id);
    loop {
        let n = match recv.read(&mut chunk).await {
            Ok(Some(n)) => n,
            Ok(None) => return std::future::pending().await,
            Err(e) => return format!("control stream failed: {e}"),
        };
        reader.push(&chunk[..n]);
        loop {
            let event = match reader.next_message() {
                Ok(Some(message)) => match intake.take(message) {
                    Ok(Some(event)) => event,
                    Ok(None) => continue,
                    Err(why) => {
                        conn.close(CLOSE_PROTOCOL, why.as_bytes());
                        return why;
                    }
                },
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
