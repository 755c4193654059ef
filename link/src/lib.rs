//! The link to the server, as pure state machines (events in with `now`,
//! actions out; the native client's network thread and the browser peer
//! drive them):
//! [`connection`] is the client's control protocol (the Hello, the lobby,
//! the Start and the snapshot a game is joined from, reconnecting to a
//! lost server), [`datagrams`] the exchange of input and bundle datagrams
//! (acks, redundancy, jitter), [`input_schedule`] sends the local
//! player's inputs on the game's schedule when a frame is late, and
//! [`play`] is networked play of a game on top of them, one loop for
//! every frontend.

pub mod connection;
pub mod datagrams;
pub mod input_schedule;
pub mod play;
