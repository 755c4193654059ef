//! What the connection and its driver tell each other: the [`Config`]
//! it is given once, the [`PathStats`] and [`Failure`]s the driver reports,
//! and the [`Action`]s it asks the driver to carry out. (What it tells the
//! frontend is `frontend.rs`.)

use std::time::Duration;

use lockstep_protocol::{ClientMessage, Hello, PlayerId};

use super::{Closed, Hooks, NetEvent};

/// What the connection is told once, for its whole life.
#[derive(Debug, Clone)]
pub struct Config {
    /// The Hello every QUIC connection begins with; its `resume` is filled
    /// in with the game kept through a lost connection.
    pub hello: Hello,
    /// Departures from real play for tests and measurements (none by
    /// default).
    pub hooks: Hooks,
    /// The transport delivers everything in order (the browser's
    /// WebSocket): inputs go out once, never repeated.
    pub reliable: bool,
    /// How long to keep trying to reconnect when the server is lost during
    /// a game, keeping the world; zero ends the game instead.
    pub reconnect: Duration,
}

/// What QUIC knows of the path now. The driver reads it for every command
/// and timeout: an input datagram is cut to the path's size, and the
/// statistics report its round trip and bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PathStats {
    /// Smoothed round-trip time.
    pub rtt: Duration,
    /// UDP bytes sent so far.
    pub tx_bytes: u64,
    /// UDP bytes received so far.
    pub rx_bytes: u64,
    /// Largest datagram the path carries now (0 if the server takes none).
    pub max_datagram_size: usize,
}

/// How a QUIC connection failed, as the driver classifies quinn's error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// The server went away (silent past the idle timeout, or reset): worth
    /// reconnecting to during a game.
    ServerLost,
    /// An attempt found no server (yet): nobody answered, the connection
    /// could not start or was closed at once, or the control stream ended.
    NoServer,
    /// Anything else (a certificate refused, a malformed message): trying
    /// again would fail again.
    Other,
}

/// How the driver ends the QUIC connection in use, if there is one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// Close it now with this reason.
    Close(&'static str),
    /// Finish the control stream and give the server a moment to close
    /// first, so the Leave just written arrives; then close with this
    /// reason.
    Linger(&'static str),
    /// Let it go without a reason: the server ended it, or it broke.
    Release,
}

/// What the connection asks the driver to do, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Open a QUIC connection to the server and its control stream, then
    /// say how it went ([`super::Connection::handle_connected`] or
    /// [`super::Connection::handle_failure`]).
    Connect {
        /// Give up on a server that has not answered by then: a
        /// reconnection tries again soon rather than wait for QUIC's idle
        /// timeout. `None`: as long as QUIC waits.
        answer_within: Option<Duration>,
    },
    /// Write one message on the control stream.
    Send(ClientMessage),
    /// Send one input datagram.
    Datagram(Vec<u8>),
    /// The server verified our Hello: record a server trusted on first use,
    /// then tell the frontend ([`NetEvent::Welcome`]). Only the driver
    /// knows the certificate and the known-servers file.
    Welcome {
        /// Our slot.
        player: PlayerId,
        /// Players the game waits for.
        players_needed: u8,
    },
    /// Tell the frontend.
    Event(NetEvent),
    /// The connection is over: end the QUIC connection in use as `ending`
    /// says, and report `closed`. Nothing follows.
    Close {
        /// How it ended, for the frontend.
        closed: Closed,
        /// What becomes of the QUIC connection.
        ending: Ending,
    },
}
