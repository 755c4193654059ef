//! Everything that owns a socket, a task, a file or the clock. The pure
//! state machines outside this folder are given the time and the messages
//! as arguments; the modules here measure the time, read the sockets and
//! the files, and carry out what the machines ask for.
//!
//! A module here named like a pure one drives it: `io/session.rs` drives
//! `session/`, `io/beacon.rs` drives `beacon.rs`, `io/recording.rs` writes
//! the replay files `recording.rs` asks for, and `io/resume.rs` reads the
//! replay `resume.rs` goes on from. The others have no machine of their
//! own: `server.rs` (the endpoint and the accept loop), `connection.rs`
//! (one task per QUIC connection), `admission.rs` and `intake.rs` (the
//! Hello checks, the join and the rate limits every transport shares),
//! `peer.rs` (a joined client's transport), `identity.rs` (the
//! certificate on disk) and `clock.rs` (the one place the clock is read).
//! `web.rs` drives the pure `web.rs`: the web door's sockets.

pub(crate) mod admission;
pub(crate) mod beacon;
pub mod clock;
pub mod command_line;
pub(crate) mod connection;
pub(crate) mod identity;
pub(crate) mod intake;
mod peer;
pub(crate) mod recording;
mod resume;
pub(crate) mod server;
pub(crate) mod session;
pub(crate) mod web;
