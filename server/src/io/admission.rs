//! Who gets past the door, whatever the transport: the cap on connections
//! that have not said Hello yet, the Hello's version and password checks,
//! and the join the session answers.
//!
//! A QUIC connection (`connection.rs`) and a WebSocket (`web.rs`) each
//! read their first control message their own way, then hand it here:
//! [`read_hello`] decodes it, [`Admission::join`] checks it and asks the
//! session, and the transport only carries out the verdict.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use lockstep_protocol::{
    decode, hello_version, ClientMessage, DecodeError, Hello, MAX_MESSAGE_SIZE, PROTOCOL_VERSION,
};
use tokio::sync::{mpsc, oneshot};
use tracing::info;

use super::peer::Peer;
use super::session::ConnEvent;
use crate::session::ConnId;
use crate::ServerEvent;

/// Connections allowed between the transport's handshake and a decided
/// Hello, QUIC and WebSocket together. More than a LAN lobby ever needs at
/// once; beyond it new connections are refused, so half-open connections
/// cannot exhaust the server.
pub const MAX_UNAUTHENTICATED: usize = 64;

/// Admission control: counts connections that have not finished saying
/// Hello, and holds what Hello is checked against.
#[derive(Debug)]
pub(crate) struct Admission {
    pending: AtomicUsize,
    /// Time a new connection has to finish its handshake and say Hello.
    pub(crate) hello_timeout: Duration,
    /// SHA-256 of the session password, if there is one. Compared as
    /// digests so the comparison's timing says nothing about the password.
    password: Option<Vec<u8>>,
}

/// A place among the unauthenticated connections; released when dropped.
#[derive(Debug)]
pub(crate) struct Ticket(Arc<Admission>);

impl Ticket {
    /// The admission this ticket was taken from.
    pub(crate) fn admission(&self) -> Arc<Admission> {
        self.0.clone()
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.0.pending.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The first control message of a connection: a Hello of this version,
/// or the version of a Hello this build cannot decode (`Err(version)`).
pub(crate) type HelloOrVersion = Result<Hello, u16>;

/// Why a connection's first control message is no Hello at all.
#[derive(Debug, thiserror::Error)]
pub(crate) enum HelloError {
    /// It decoded as another message.
    #[error("first message was not Hello")]
    NotHello,
    /// It did not decode, and is no Hello of another version either.
    #[error("malformed control message: {0}")]
    Decode(#[from] DecodeError),
}

/// Reads the body of a connection's first control message.
pub(crate) fn read_hello(body: &[u8]) -> Result<HelloOrVersion, HelloError> {
    match decode::<ClientMessage>(body, MAX_MESSAGE_SIZE) {
        Ok(ClientMessage::Hello(hello)) => Ok(Ok(hello)),
        Ok(_) => Err(HelloError::NotHello),
        Err(e) => match hello_version(body) {
            Some(version) if version != PROTOCOL_VERSION => Ok(Err(version)),
            _ => Err(HelloError::Decode(e)),
        },
    }
}

/// What became of a Hello.
#[derive(Debug)]
pub(crate) enum Verdict {
    /// The session took the client in, under this name.
    Joined(String),
    /// The client is refused, for this reason (sent to it, then closed).
    Refused(String),
    /// The server is stopping: nobody answers.
    Gone,
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

    /// Checks `hello`'s version and password, then asks the session to
    /// let `peer` in as `conn_id`.
    pub(crate) async fn join(
        &self,
        hello: HelloOrVersion,
        conn_id: ConnId,
        peer: Peer,
        driver: &mpsc::Sender<ConnEvent>,
    ) -> Verdict {
        let hello = match hello {
            Ok(hello) if hello.protocol_version == PROTOCOL_VERSION => hello,
            Ok(Hello {
                protocol_version: version,
                ..
            })
            | Err(version) => {
                return Verdict::Refused(format!(
                    "protocol version mismatch: this server speaks version {PROTOCOL_VERSION}, \
                     the client speaks version {version}; use matching builds"
                ));
            }
        };
        if let Some(reason) = self.check_password(hello.password.as_deref()) {
            return Verdict::Refused(reason.to_string());
        }
        let (reply_tx, reply_rx) = oneshot::channel();
        let join = ConnEvent::Join {
            conn_id,
            name: hello.name.clone(),
            spectate: hello.spectate,
            ready: hello.ready,
            platform: Box::new(hello.platform.sanitized()),
            self_tests: hello.self_tests,
            resume: hello.resume,
            peer,
            reply: reply_tx,
        };
        if driver.send(join).await.is_err() {
            return Verdict::Gone;
        }
        match reply_rx.await {
            Ok(Ok(())) => Verdict::Joined(hello.name),
            Ok(Err(refusal)) => Verdict::Refused(refusal.reason),
            Err(_) => Verdict::Gone,
        }
    }
}

/// Logs a refusal and tells whoever runs the server.
pub(crate) fn report_refusal(
    remote: SocketAddr,
    reason: &str,
    events: &Option<mpsc::UnboundedSender<ServerEvent>>,
) {
    info!(%reason, "refused");
    if let Some(events) = events {
        let _ = events.send(ServerEvent::Refused {
            remote,
            reason: reason.to_string(),
        });
    }
}

fn digest(password: &str) -> Vec<u8> {
    ring::digest::digest(&ring::digest::SHA256, password.as_bytes())
        .as_ref()
        .to_vec()
}
