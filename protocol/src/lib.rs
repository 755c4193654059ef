//! The wire protocol spoken by `lockstep-server` and `lockstep-client`.
//!
//! # How it works
//!
//! A client opens one QUIC connection (ALPN [`ALPN`]) and one bidirectional
//! stream on it, the *control stream*. Both directions of that stream carry
//! length-prefixed [postcard] frames ([`FrameReader`], [`encode_frame`]):
//! [`ClientMessage`] upwards, [`ServerMessage`] downwards. The first frame a
//! client sends is always [`ClientMessage::Hello`], whose first field is the
//! protocol version, so a server can refuse any client with a clear message
//! however the rest of the protocol has changed.
//!
//! Between games the players wait in the lobby: the server sends
//! [`ServerMessage::Lobby`] whenever it changes, each player says
//! [`ClientMessage::Ready`] (or joins ready, [`Hello::ready`]), and the
//! server sends [`ServerMessage::Start`] once all are ready and enough are
//! there. A player done with a game says [`ClientMessage::GameDone`] and
//! stays connected; when the game is over the lobby opens again for a
//! rematch on the same connections.
//!
//! Once the game starts, inputs and bundles travel as unreliable QUIC
//! datagrams ([`ClientDatagram`], [`ServerDatagram`]). Each datagram repeats
//! everything the receiver has not yet acknowledged, so a lost datagram
//! stalls nobody: the next one carries the same data.
//!
//! Before any of that, a client may find the server on the LAN: a
//! [`Beacon`] (its own UDP datagram on [`DISCOVERY_PORT`], versioned apart
//! from the game protocol) carries the server's name, address, players and
//! fingerprint; see `beacon.rs`.
//!
//! Every decode path returns a [`DecodeError`] (a beacon's, a
//! [`BeaconError`]); nothing here panics on bad bytes.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod beacon;
mod codec;
mod game;
#[cfg(feature = "lan")]
pub mod lan;
mod message;
mod platform;
#[cfg(feature = "quic")]
pub mod quic;
mod replay;
mod trace;
mod types;
mod verification;
mod web;

pub use beacon::{
    check_server_name, decode_beacon, encode_beacon, fingerprint_bytes, Announcement, Beacon,
    BeaconError, NameError, BEACON_FORMAT, BEACON_MAGIC, DISCOVERY_PORT, MAX_BEACON_SIZE,
    MAX_SERVER_NAME_CHARS,
};
pub use codec::{
    decode, encode, encode_bundles, encode_frame, hello_version, DecodeError, EncodeError,
    FrameReader, FRAME_HEADER_LEN, MAX_DATAGRAMS_PER_SECOND, MAX_DATAGRAM_SIZE, MAX_MESSAGE_SIZE,
};
pub use game::{
    check_game_name, check_given, GameSpec, GameSpecError, Settings, BALLS_GAME, MAX_GAME_NAME_LEN,
    MAX_GAME_SETTINGS_LEN, MAX_GIVEN_SETTINGS,
};
pub use message::{
    Bundle, BundleDatagram, ClientDatagram, ClientMessage, DesyncNotice, GameSettings, GameSummary,
    Hello, InputDatagram, Lobby, LobbyPlayer, Peer, PeerStatus, PlayerInput, Refusal, Resume,
    RosterEntry, SelfTest, ServerDatagram, ServerMessage, Slack, SnapshotChunk, Start,
    MAX_REASON_CHARS, MAX_SELF_TESTS, MAX_SNAPSHOT_SIZE, MAX_TICK_HASHES, SNAPSHOT_CHUNK_BYTES,
};
pub use platform::{Platform, MAX_PLATFORM_CHARS, MAX_PLATFORM_FEATURES};
pub use replay::{
    After, Damage, GameEvent, PlayerStatus, ReadOutcome, Record, Replay, ReplayError, ReplayHeader,
    ReplayReader, ReplayWriter, MAX_RECORD_SIZE, OLDEST_REPLAY_FORMAT, REPLAY_FORMAT, REPLAY_MAGIC,
};
pub use trace::{
    TracePlace, TraceReport, TracedValue, MAX_TRACE_LINES, MAX_TRACE_LINE_CHARS, MAX_TRACE_PLACES,
    MAX_TRACE_TEXT, MAX_TRACE_VALUES, MAX_TRACE_WORDS,
};
pub use types::{Buttons, Input, Percent, PlayerId, Tick};
pub use verification::verification_code;
pub use web::{WebMessage, MAX_WEB_MESSAGE, WEB_CLOSE_BASE, WEB_SOCKET_PATH};

/// Version of everything in this crate that reaches the wire.
///
/// Bump it on any change to a message's layout; the golden-bytes tests in
/// this crate fail until it is bumped and the pinned bytes are updated.
pub const PROTOCOL_VERSION: u16 = 12;

/// How both binaries print an error: its message, then each of its causes
/// that the message does not already say, so a library error that says
/// its source, wrapped in context, is said once ("cannot open F: No such
/// file or directory", not the cause twice), also when the message goes
/// on after it with what to do ("cannot read F: Is a directory; remove
/// it").
pub fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut said = error.to_string();
    let causes = std::iter::successors(error.source(), |cause| cause.source());
    for cause in causes.map(ToString::to_string) {
        if !said.contains(&cause) {
            said = format!("{said}: {cause}");
        }
    }
    said
}

/// ALPN identifier for the QUIC handshake. It names the protocol family, not
/// its version: a version mismatch is answered with a readable
/// [`ServerMessage::Refused`] instead of an opaque TLS alert.
pub const ALPN: &[u8] = b"lockstep";

/// Environment variable naming the file in which a client keeps the
/// certificate fingerprints of the servers it trusts (trust on first use,
/// `lockstep-client`'s `known_servers`). Not part of the wire: it is
/// defined here, where the client and the test kit both see it, so that
/// the end-to-end tests, which give every client they start a file of its
/// own, set the very variable the client reads.
pub const KNOWN_SERVERS_ENV: &str = "LOCKSTEP_KNOWN_SERVERS";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_that_says_its_cause_is_printed_with_the_cause_once() {
        #[derive(Debug, thiserror::Error)]
        #[error("{said}")]
        struct Wrapped {
            said: String,
            source: std::io::Error,
        }
        let io = || std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let says_it = Wrapped {
            said: "cannot open x: no such file".into(),
            source: io(),
        };
        assert_eq!(error_chain(&says_it), "cannot open x: no such file");
        let says_it_then_what_to_do = Wrapped {
            said: "cannot open x: no such file; create it".into(),
            source: io(),
        };
        assert_eq!(
            error_chain(&says_it_then_what_to_do),
            "cannot open x: no such file; create it"
        );
        let does_not = Wrapped {
            said: "cannot open x".into(),
            source: io(),
        };
        assert_eq!(error_chain(&does_not), "cannot open x: no such file");
    }
}
