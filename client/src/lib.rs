//! The lockstep client without a screen: the link to the server, LAN
//! discovery, driving a networked game, and the offline tools. It links
//! no SDL2: the screens are the `lockstep-window` crate, and the
//! `lockstep-client` binary (`lockstep-cli`) is built with or without it.
//!
//! # How it works
//!
//! One folder per job; [`io`] holds everything that owns a socket, a
//! thread, a file or the clock, and everything outside it is pure.
//!
//! - [`link`]: the link to the server as pure state machines, the
//!   `lockstep-link` crate (the browser peer drives it too): the control
//!   protocol ([`link::connection`]: events in with `now`, actions out),
//!   the datagram exchange ([`link::datagrams`]: acks, redundancy,
//!   jitter) and the inputs sent on the game's schedule when a frame is
//!   late ([`link::input_schedule`]). [`io::link`] is their driver: the
//!   QUIC endpoint, TLS and the trust in the server, and one `select!` on
//!   its own thread.
//! - [`play`]: driving a networked game. [`play::NetPlay`] drives the
//!   play loop every frontend shares ([`link::play`]) over the network
//!   thread: the clock and the tick budget, the recording, the desync
//!   dumps, and the loop's [`play::notice`]s, which the binary prints; [`play::connect`] joins a server
//!   and plays in a [`play::connect::Frontend`]: [`play::headless`], or
//!   the window crate's.
//! - [`discovery`]: the table of servers heard on the LAN (pure), fed by
//!   [`io::discovery`]; the server browser's model and `list`.
//! - [`tools`]: the offline tools (report, verify, desync-diff), each
//!   returning its stdout lines so the binary only parses and prints.
//! - [`games`]: what this side needs of a game (its scores), one file per
//!   game, and the dispatch that runs code generic over the game a server,
//!   a replay or the command line names. Only the binary lists the games.
//! - [`window_options`]: what the windowed modes are asked to do, as
//!   plain data, so the binary parses the same command line with or
//!   without the window.
//!
//! The lockstep core (the gate, the accumulator, the input delay, the
//! networked and solo game drivers, replays) is the `lockstep-engine`
//! crate, which never reads a clock or touches a socket.
#![forbid(unsafe_code)]

pub mod discovery;
pub mod games;
pub mod hooks;
pub mod io;
pub use lockstep_link as link;
pub mod play;
pub mod tools;
pub mod window_options;
