//! A joined client's transport, as the session's driver sees it: a QUIC
//! connection or a WebSocket. The driver sends control messages and
//! datagrams, reads the link's facts and closes through a [`Peer`],
//! whichever it is.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use lockstep_protocol::MAX_DATAGRAM_SIZE;
use tokio::sync::{mpsc, watch};
use tracing::debug;

use crate::session::{LinkStats, Outgoing};
use crate::CLOSE_DROPPED;

/// A joined client's transport.
#[derive(Debug)]
pub(crate) enum Peer {
    /// A QUIC connection: datagrams on the connection, control messages
    /// through its control writer's queue.
    Quic {
        /// The connection, for datagrams, link stats and closing.
        conn: quinn::Connection,
        /// Its control writer's queue.
        control: mpsc::Sender<Outgoing>,
    },
    /// A browser's WebSocket (`web.rs`).
    Web(WebPeer),
}

/// What the session's driver queues for a WebSocket's writer, in order:
/// one queue for control messages and datagrams, since the socket carries
/// both in one ordered stream.
#[derive(Debug)]
pub(crate) enum WebOut {
    /// A control message.
    Control(Outgoing),
    /// A bundle datagram.
    Datagram(Bytes),
    /// Close with this QUIC close code and reason, after what is queued.
    Close(quinn::VarInt, String),
}

/// A close that cannot wait behind the queue: a QUIC close code and a
/// reason.
pub(crate) type Abort = Option<(quinn::VarInt, String)>;

/// The driver's end of a WebSocket.
#[derive(Debug)]
pub(crate) struct WebPeer {
    /// The writer's queue.
    pub(crate) out: mpsc::Sender<WebOut>,
    /// The smoothed round-trip time its pings measure.
    pub(crate) rtt: watch::Receiver<Duration>,
    /// Closes at once, past the queue: the queue is full because the
    /// browser stopped reading.
    pub(crate) abort: Arc<watch::Sender<Abort>>,
}

impl WebPeer {
    /// Queues `out`. The transport repeats nothing, so a full queue (a
    /// browser that stopped reading) cannot just lose a bundle: it closes
    /// the connection.
    fn queue(&self, out: WebOut) {
        if self.out.try_send(out).is_err() {
            debug!("web queue full or closed");
            self.abort.send_replace(Some((
                CLOSE_DROPPED,
                "the browser did not read the game's messages in time".to_string(),
            )));
        }
    }
}

impl Peer {
    /// What the session needs to know about the path now.
    pub(crate) fn link(&self) -> LinkStats {
        match self {
            Peer::Quic { conn, .. } => LinkStats {
                rtt: conn.rtt(),
                max_datagram_size: conn.max_datagram_size().unwrap_or(0),
                reliable: false,
            },
            Peer::Web(web) => LinkStats {
                rtt: *web.rtt.borrow(),
                max_datagram_size: MAX_DATAGRAM_SIZE,
                reliable: true,
            },
        }
    }

    /// Queues a control message (dropped, with a debug line, if a QUIC
    /// writer's queue is full).
    pub(crate) fn send_control(&self, outgoing: Outgoing) {
        match self {
            Peer::Quic { control, .. } => {
                if control.try_send(outgoing).is_err() {
                    debug!("control queue full or closed");
                }
            }
            Peer::Web(web) => web.queue(WebOut::Control(outgoing)),
        }
    }

    /// Sends a bundle datagram.
    pub(crate) fn send_datagram(&self, bytes: Bytes) {
        match self {
            Peer::Quic { conn, .. } => {
                if let Err(e) = conn.send_datagram(bytes) {
                    debug!(error = %e, "datagram not sent");
                }
            }
            Peer::Web(web) => web.queue(WebOut::Datagram(bytes)),
        }
    }

    /// Closes the connection with a QUIC close code and a reason.
    pub(crate) fn close(self, code: quinn::VarInt, reason: &str) {
        match self {
            Peer::Quic { conn, .. } => conn.close(code, reason.as_bytes()),
            Peer::Web(web) => web.queue(WebOut::Close(code, reason.to_string())),
        }
    }
}
