//! What is on the wire: every packet and stream frame in flight, ordered
//! by when it arrives, and each client's path to the server.
//!
//! A path has two directions, each with its own seeded [`Impairment`]:
//! datagrams meet its loss, bursts, jitter, duplication and reordering. The
//! control stream is QUIC's: reliable and ordered, so its frames arrive
//! once, in order, after the path's one-way latency (the retransmissions
//! that make it so are not simulated). Connection setup and teardown
//! travel as packets of their own on the same schedule.

use std::collections::BTreeMap;
use std::time::Duration;

use bytes::Bytes;
use lockstep_client::link::connection::{Failure, PathStats};
use lockstep_conditioner::{Impairment, LinkConfig};
use lockstep_protocol::MAX_DATAGRAM_SIZE;
use lockstep_server::session::{ConnId, LinkStats};

/// What reaches the server.
#[derive(Debug)]
pub(crate) enum ToServer {
    /// A frame of the client's control stream.
    Frame(Bytes),
    /// An input datagram.
    Datagram(Bytes),
    /// The client closed the connection, saying why.
    Closed(String),
}

/// What reaches a client.
#[derive(Debug)]
pub(crate) enum ToClient {
    /// The QUIC handshake finished: the connection and its control stream
    /// are up.
    Connected,
    /// A frame of the server's control stream.
    Frame(Bytes),
    /// A bundle datagram.
    Datagram(Bytes),
    /// The server finished its control stream (after an Ended or a
    /// Refused, which the frames before this carried).
    StreamEnd,
    /// The connection failed, as the client's QUIC driver would classify
    /// it.
    Failed(Failure, String),
}

/// One delivery: what, to whom, on which connection.
#[derive(Debug)]
pub(crate) enum Delivery {
    /// To the server, on a connection of a client.
    Up(ConnId, ToServer),
    /// To client `client`, on its connection `ConnId`.
    Down(usize, ConnId, ToClient),
}

/// Everything in flight, by arrival time, then by sending order: two
/// deliveries due at once arrive in the order they were sent.
#[derive(Debug, Default)]
pub(crate) struct Wire {
    in_flight: BTreeMap<(Duration, u64), Delivery>,
    sent: u64,
}

impl Wire {
    /// Puts `delivery` on the wire, to arrive at `at`.
    pub(crate) fn schedule(&mut self, at: Duration, delivery: Delivery) {
        self.sent += 1;
        self.in_flight.insert((at, self.sent), delivery);
    }

    /// Whether nothing is in flight.
    pub(crate) fn is_empty(&self) -> bool {
        self.in_flight.is_empty()
    }

    /// The next delivery that has arrived by `now`, if any.
    pub(crate) fn next_arrived(&mut self, now: Duration) -> Option<Delivery> {
        let entry = self.in_flight.first_entry()?;
        if entry.key().0 > now {
            return None;
        }
        Some(entry.remove())
    }
}

/// One client's path to the server: the link, its two impaired
/// directions, and the bytes each side has sent.
#[derive(Debug)]
pub(crate) struct Path {
    link: LinkConfig,
    up: Impairment,
    down: Impairment,
    tx_bytes: u64,
    rx_bytes: u64,
}

impl Path {
    /// The path of client `index`, impaired as `link` says; `seed` replaces
    /// the link's own, and each direction of each client gets a random
    /// sequence of its own.
    pub(crate) fn new(link: LinkConfig, seed: u64, index: usize) -> Path {
        let link = LinkConfig { seed, ..link };
        let stream = 2 * index as u64;
        Path {
            link,
            up: Impairment::new(link, stream),
            down: Impairment::new(link, stream + 1),
            tx_bytes: 0,
            rx_bytes: 0,
        }
    }

    /// When a control frame sent now arrives at the other end.
    pub(crate) fn stream_arrival(&self, now: Duration) -> Duration {
        now + self.link.latency
    }

    /// The round trip, as QUIC would estimate it on this path.
    pub(crate) fn rtt(&self) -> Duration {
        2 * self.link.latency
    }

    /// When the copies of a datagram the client sends now arrive (none if
    /// it is lost).
    pub(crate) fn send_up(&mut self, now: Duration, len: usize) -> Vec<Duration> {
        self.tx_bytes += len as u64;
        self.up.decide(now).arrivals().collect()
    }

    /// When the copies of a datagram the server sends now arrive.
    pub(crate) fn send_down(&mut self, now: Duration, len: usize) -> Vec<Duration> {
        let arrivals: Vec<Duration> = self.down.decide(now).arrivals().collect();
        self.rx_bytes += (len * arrivals.len()) as u64;
        arrivals
    }

    /// Counts a control frame the client sends (`up`) or receives.
    pub(crate) fn count_frame(&mut self, up: bool, len: usize) {
        if up {
            self.tx_bytes += len as u64;
        } else {
            self.rx_bytes += len as u64;
        }
    }

    /// The path as the client's connection sees it.
    pub(crate) fn client_stats(&self) -> PathStats {
        PathStats {
            rtt: self.rtt(),
            tx_bytes: self.tx_bytes,
            rx_bytes: self.rx_bytes,
            max_datagram_size: MAX_DATAGRAM_SIZE,
        }
    }

    /// The path as the server's session sees it.
    pub(crate) fn server_stats(&self) -> LinkStats {
        LinkStats {
            rtt: self.rtt(),
            max_datagram_size: MAX_DATAGRAM_SIZE,
            reliable: false,
        }
    }
}
