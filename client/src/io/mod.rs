//! Everything in this crate that owns a socket, a thread, a file or the
//! clock; everything outside `io/` is pure, given time and bytes as
//! values. A module here named like a pure one drives it, as quinn drives
//! quinn-proto (and as the server's `io/` does): [`link`] is the network
//! thread that drives the pure [`crate::link`] (its
//! [`crate::link::connection::Connection`]), and [`discovery`] probes and
//! listens for servers on the LAN for the pure [`crate::discovery`] table;
//! [`known_servers`] and [`recording`] are files; [`platform`] reads the
//! CPU; [`trust`] checks the server against the known-servers file;
//! [`clock`] is the one place the wall clock is read; [`stop`] turns
//! SIGTERM and SIGINT into a request to leave.

pub mod clock;
pub mod discovery;
pub mod known_servers;
pub mod link;
pub mod platform;
pub mod recording;
pub mod stop;
pub mod trust;
