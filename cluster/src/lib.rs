//! The whole lockstep system in memory: a server [`Session`] and N
//! clients, each a [`Connection`] playing a [`NetGame`] with a bot, wired
//! together on one simulated clock with seeded network impairment between
//! them. No sockets, no threads, no real clock: a minute of a four-player
//! game runs in about half a second, and runs the same every time.
//!
//! The model is quinn-proto's test `Pair` (two endpoints exchanging
//! packets in memory with explicit time) and FoundationDB's simulation
//! (the real code, every source of nondeterminism replaced by one seed).
//!
//! # What is real and what is simulated
//! - Real: the server's [`Session`] (lobby, relay, stand-ins, drops, hash
//!   checks and pinpointing, snapshots, replays and resuming), each
//!   client's control protocol ([`Connection`]: link, reconnection,
//!   snapshot joins), the game and its engine ([`NetGame`]: gate, clock,
//!   adaptive input delay), and the wire format: every message is encoded
//!   and decoded with the protocol's codec, frames through a
//!   [`lockstep_protocol::FrameReader`].
//! - Simulated: the network (the seeded [`lockstep_conditioner::Impairment`]
//!   per direction and client for datagrams; the control stream delivered
//!   in order after the path's latency, as QUIC's retransmissions would),
//!   QUIC's connection setup (one round trip) and its notice of a dead
//!   server ([`SERVER_LOST_AFTER`]), the wall clock that names replays, and
//!   the frontend: a bot plays every player through the play loop the
//!   native client and the page drive (`lockstep_link::play`), minus what
//!   measures the real machine (capacity reports, recordings, dumps).
//! - Left to the process tests: sockets, TLS, signals, the handshake's
//!   checks and rate limits in the server's `io/connection.rs`, the window.
//!
//! # How time and delivery work
//! The clock advances in fixed [`STEP`]s of a millisecond. In each step,
//! first everything on the wire that has arrived by then is delivered, in
//! order of arrival, then of sending; then the server polls (every
//! [`lockstep_server::session::POLL_INTERVAL`], and at the session's own
//! deadlines); then each client, in join order, fires its connection's
//! timer if due and runs one frame of its game. Whatever a call asks for
//! is carried out at once and put on the wire with its arrival time.
//! Everything is kept in ordered maps and seeded: the same seed and the
//! same calls give the same [`Log`], entry for entry.
//!
//! ```text
//! let mut cluster = Cluster::<Tally>::new(config, seed);
//! let ann = cluster.join(ClientSpec::player("ann", 600).on(link));
//! cluster.run_until_closed(Duration::from_secs(30));
//! assert!(cluster.log().lines("ann", "final").len() == 1);
//! ```
//!
//! [`Session`]: lockstep_server::session::Session
//! [`Connection`]: lockstep_client::link::connection::Connection
//! [`NetGame`]: lockstep_engine::lockstep::net_game::NetGame
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod cluster;
mod frontend;
mod host;
mod log;
mod network;

pub use cluster::{ClientId, ClientSpec, Cluster, SERVER_LOST_AFTER, STEP};
pub use log::{field, Entry, Log, SERVER};
