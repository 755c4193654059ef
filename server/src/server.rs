//! The accept loop and one task per connection.
//!
//! A connection task turns the QUIC connection into [`SessionEvent`]s: it
//! waits (with a deadline) for the Hello on the control stream, refuses bad
//! versions itself, then forwards decoded datagrams and control messages
//! stamped with its own connection id.

use std::time::Duration;

use lockstep_protocol::{
    decode, encode_frame, Bundle, ClientDatagram, ClientMessage, FrameReader, Hello, Refusal,
    ServerMessage, Tick, MAX_DATAGRAM_SIZE, PROTOCOL_VERSION,
};
use tokio::sync::{mpsc, oneshot};
use tracing::{debug, info, warn, Instrument};

use crate::session::{ConnId, Outgoing, SessionEvent};
use crate::{ServerEvent, CLOSE_PROTOCOL, CLOSE_REFUSED};

/// Control messages waiting for one client's writer task: Welcome, Start,
/// a history, Ended, and four lag-indicator updates a second. An honest
/// client reads them as they come; one that stops reading loses status
/// updates, never bundles (those are datagrams).
const CONTROL_QUEUE: usize = 64;

/// Bundles per History message: about 14 bytes each with four players,
/// so a chunk stays far below the message size limit; bigger bundles are
/// split further by the writer.
const HISTORY_CHUNK: usize = 2048;

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
    #[error("first message was not Hello")]
    NotHello,
    #[error("malformed control message: {0}")]
    Decode(#[from] lockstep_protocol::DecodeError),
}

pub(crate) async fn handle_connection(
    incoming: quinn::Incoming,
    session: mpsc::Sender<SessionEvent>,
    hello_timeout: Duration,
    events: Option<mpsc::UnboundedSender<ServerEvent>>,
) {
    let remote = incoming.remote_address();
    let conn = match incoming.await {
        Ok(conn) => conn,
        Err(e) => {
            debug!(%remote, error = %e, "handshake failed");
            return;
        }
    };
    let conn_id = ConnId(conn.stable_id());
    let span = tracing::info_span!("connection", %remote, id = conn_id.0);
    async move {
        let (send, recv, mut reader, hello) =
            match tokio::time::timeout(hello_timeout, read_hello(&conn)).await {
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
        if hello.protocol_version != PROTOCOL_VERSION {
            let reason = format!(
                "protocol version mismatch: this server speaks version {PROTOCOL_VERSION}, \
                 the client speaks version {}; use matching builds",
                hello.protocol_version
            );
            refuse(&conn, send, &reason, &events).await;
            return;
        }
        let (control_tx, control_rx) = mpsc::channel(CONTROL_QUEUE);
        let (reply_tx, reply_rx) = oneshot::channel();
        let join = SessionEvent::Join {
            conn_id,
            name: hello.name.clone(),
            spectate: hello.spectate,
            conn: conn.clone(),
            control: control_tx,
            reply: reply_tx,
        };
        if session.send(join).await.is_err() {
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
        let writer = tokio::spawn(write_control(send, control_rx).in_current_span());
        let why = relay_traffic(&conn, conn_id, recv, &mut reader, &session).await;
        info!(name = %hello.name, reason = %why, "connection ended");
        let _ = session.send(SessionEvent::Disconnected(conn_id, why)).await;
        writer.abort();
    }
    .instrument(span)
    .await;
}

async fn read_hello(
    conn: &quinn::Connection,
) -> Result<(quinn::SendStream, quinn::RecvStream, FrameReader, Hello), HandshakeError> {
    let (send, mut recv) = conn.accept_bi().await?;
    let mut reader = FrameReader::new();
    let mut chunk = [0u8; READ_CHUNK];
    loop {
        if let Some(message) = reader.next_message::<ClientMessage>()? {
            return match message {
                ClientMessage::Hello(hello) => Ok((send, recv, reader, hello)),
                _ => Err(HandshakeError::NotHello),
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

async fn write_control(mut send: quinn::SendStream, mut rx: mpsc::Receiver<Outgoing>) {
    while let Some(outgoing) = rx.recv().await {
        let frames = match outgoing {
            Outgoing::Message(message) => encode_frame(&message).map(|frame| vec![frame]),
            Outgoing::History {
                first_tick,
                bundles,
            } => history_frames(first_tick, &bundles),
        };
        let frames = match frames {
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

/// Cuts a history into History frames that each fit the message limit.
fn history_frames(
    first_tick: Tick,
    bundles: &[Bundle],
) -> Result<Vec<Vec<u8>>, lockstep_protocol::EncodeError> {
    let mut frames = Vec::new();
    let mut start = 0;
    while start < bundles.len() {
        let mut len = HISTORY_CHUNK.min(bundles.len() - start);
        loop {
            let message = ServerMessage::History {
                first_tick: first_tick.plus(start as u32),
                bundles: bundles[start..start + len].to_vec(),
            };
            match encode_frame(&message) {
                Ok(frame) => {
                    frames.push(frame);
                    break;
                }
                Err(_) if len > 1 => len /= 2,
                Err(e) => return Err(e),
            }
        }
        start += len;
    }
    Ok(frames)
}

/// Forwards datagrams and control messages until the connection ends;
/// returns why it ended.
async fn relay_traffic(
    conn: &quinn::Connection,
    conn_id: ConnId,
    mut recv: quinn::RecvStream,
    reader: &mut FrameReader,
    session: &mpsc::Sender<SessionEvent>,
) -> String {
    let mut chunk = [0u8; READ_CHUNK];
    let mut stream_open = true;
    loop {
        tokio::select! {
            datagram = conn.read_datagram() => match datagram {
                Ok(bytes) => match decode::<ClientDatagram>(&bytes, MAX_DATAGRAM_SIZE) {
                    Ok(ClientDatagram::Inputs(inputs)) => {
                        if session.send(SessionEvent::Inputs(conn_id, inputs)).await.is_err() {
                            return "server stopping".into();
                        }
                    }
                    Err(e) => debug!(error = %e, len = bytes.len(), "malformed datagram ignored"),
                },
                Err(e) => return format!("connection lost: {e}"),
            },
            read = recv.read(&mut chunk), if stream_open => match read {
                Ok(Some(n)) => {
                    reader.push(&chunk[..n]);
                    loop {
                        match reader.next_message::<ClientMessage>() {
                            Ok(Some(ClientMessage::Leave)) => {
                                if session.send(SessionEvent::Leave(conn_id)).await.is_err() {
                                    return "server stopping".into();
                                }
                            }
                            Ok(Some(ClientMessage::HashReport { tick, hash })) => {
                                let report = SessionEvent::HashReport(conn_id, tick, hash);
                                if session.send(report).await.is_err() {
                                    return "server stopping".into();
                                }
                            }
                            Ok(Some(ClientMessage::Inputs(inputs))) => {
                                if session.send(SessionEvent::Inputs(conn_id, inputs)).await.is_err() {
                                    return "server stopping".into();
                                }
                            }
                            Ok(Some(ClientMessage::Hello(_))) => debug!("repeated Hello ignored"),
                            Ok(None) => break,
                            Err(e) => {
                                let why = format!("malformed control message: {e}");
                                conn.close(CLOSE_PROTOCOL, why.as_bytes());
                                return why;
                            }
                        }
                    }
                }
                Ok(None) => stream_open = false,
                Err(e) => return format!("control stream failed: {e}"),
            },
        }
    }
}
