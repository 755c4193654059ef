//! What a joined client sends, checked the same way whatever the
//! transport: the rate limits, the decoding, and the session event each
//! message becomes. A QUIC connection (`connection.rs`) and a WebSocket
//! (`web.rs`) read their bytes their own way and hand them here.

use lockstep_protocol::{
    decode, ClientDatagram, ClientMessage, MAX_DATAGRAMS_PER_SECOND, MAX_DATAGRAM_SIZE,
};
use tokio::time::Instant;
use tracing::{debug, warn};

use super::clock;
use crate::session::{ConnId, Event};

/// Datagrams (or control messages) a client may send in a burst beyond
/// the average rate.
const BURST: u32 = 120;

/// Control messages a client may send per second on average (hash reports,
/// Leave, inputs over the stream when measuring): the same budget.
const CONTROL_PER_SECOND: u32 = 240;

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

/// One client's datagrams: within the rate limit, decoded, as inputs for
/// the session.
#[derive(Debug)]
pub(crate) struct DatagramIntake {
    conn_id: ConnId,
    budget: Budget,
    /// Malformed datagrams so far (ignored, and logged sparingly).
    malformed: u64,
}

impl DatagramIntake {
    pub(crate) fn new(conn_id: ConnId) -> Self {
        DatagramIntake {
            conn_id,
            budget: Budget::new(MAX_DATAGRAMS_PER_SECOND, BURST),
            malformed: 0,
        }
    }

    /// The event a datagram becomes (`None` for a malformed one, which is
    /// ignored), or why the connection must close (a flood).
    pub(crate) fn take(&mut self, bytes: &[u8]) -> Result<Option<Event>, String> {
        if !self.budget.take() {
            let why = format!("too many datagrams (more than {MAX_DATAGRAMS_PER_SECOND} a second)");
            warn!(reason = %why, "disconnecting a flooding client");
            return Err(why);
        }
        match decode::<ClientDatagram>(bytes, MAX_DATAGRAM_SIZE) {
            Ok(ClientDatagram::Inputs(inputs)) => Ok(Some(Event::Inputs(self.conn_id, inputs))),
            Err(e) => {
                self.malformed += 1;
                // Log the first, then every thousandth: a broken client
                // must not flood the log either.
                let malformed = self.malformed;
                if malformed == 1 || malformed.is_multiple_of(1000) {
                    warn!(error = %e, len = bytes.len(), malformed, "malformed datagrams ignored");
                }
                Ok(None)
            }
        }
    }
}

/// One client's control messages: within the rate limit, as session
/// events.
#[derive(Debug)]
pub(crate) struct ControlIntake {
    conn_id: ConnId,
    budget: Budget,
}

impl ControlIntake {
    pub(crate) fn new(conn_id: ConnId) -> Self {
        ControlIntake {
            conn_id,
            budget: Budget::new(CONTROL_PER_SECOND, BURST),
        }
    }

    /// The event a control message becomes (`None` for one the session
    /// has no use for, such as a repeated Hello), or why the connection
    /// must close (a flood).
    pub(crate) fn take(&mut self, message: ClientMessage) -> Result<Option<Event>, String> {
        if !self.budget.take() {
            let why =
                format!("too many control messages (more than {CONTROL_PER_SECOND} a second)");
            warn!(reason = %why, "disconnecting a flooding client");
            return Err(why);
        }
        let event = Event::from_message(self.conn_id, message, clock::unix_seconds());
        if event.is_none() {
            debug!("repeated Hello ignored");
        }
        Ok(event)
    }
}
