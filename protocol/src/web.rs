//! The browser's transport: what QUIC carries, in WebSocket messages.
//!
//! A browser cannot open a QUIC connection to a server on the LAN (a page
//! served over plain `http://` has no WebTransport), so the server also
//! speaks the same messages over a WebSocket at [`WEB_SOCKET_PATH`]. Each
//! binary WebSocket message is one [`WebMessage`]: a kind byte, then
//!
//! - [`WebMessage::Control`]: the postcard body of one control message
//!   (a `ClientMessage` or `ServerMessage`), what one frame of the QUIC
//!   control stream carries without its length prefix (the WebSocket
//!   message has a length of its own);
//! - [`WebMessage::Datagram`]: one datagram (`ClientDatagram` or
//!   `ServerDatagram`), byte for byte as QUIC sends it.
//!
//! Everything else (admission, the lobby, the game, snapshots, resume,
//! desync checks) is the QUIC protocol's. The transport is reliable and
//! ordered, so neither end repeats what the other has not acknowledged.
//! A connection ends with a WebSocket close frame whose code is
//! [`WEB_CLOSE_BASE`] plus the QUIC close code and whose reason is the
//! QUIC close reason.

use crate::codec::{DecodeError, MAX_DATAGRAM_SIZE, MAX_MESSAGE_SIZE};

/// The path of the WebSocket endpoint on the server's web port.
pub const WEB_SOCKET_PATH: &str = "/ws";

/// The largest WebSocket message either end accepts: a kind byte and the
/// largest control message. Anything longer closes the connection.
pub const MAX_WEB_MESSAGE: usize = 1 + MAX_MESSAGE_SIZE;

/// Close codes: the QUIC close code plus this (4000-4999 is the range
/// RFC 6455 leaves to applications).
pub const WEB_CLOSE_BASE: u16 = 4000;

const CONTROL: u8 = 0;
const DATAGRAM: u8 = 1;

/// One WebSocket message of the lockstep protocol, borrowed from the bytes
/// it was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WebMessage<'a> {
    /// The postcard body of one control message.
    Control(&'a [u8]),
    /// One datagram.
    Datagram(&'a [u8]),
}

impl<'a> WebMessage<'a> {
    /// Reads one WebSocket message; an empty one, an unknown kind or a
    /// body over its kind's limit is an error.
    pub fn parse(bytes: &'a [u8]) -> Result<WebMessage<'a>, DecodeError> {
        let Some((&kind, body)) = bytes.split_first() else {
            return Err(DecodeError::Truncated);
        };
        let (message, limit) = match kind {
            CONTROL => (WebMessage::Control(body), MAX_MESSAGE_SIZE),
            DATAGRAM => (WebMessage::Datagram(body), MAX_DATAGRAM_SIZE),
            other => return Err(DecodeError::UnknownKind(other)),
        };
        if body.len() > limit {
            return Err(DecodeError::Oversized {
                size: body.len(),
                limit,
            });
        }
        Ok(message)
    }

    /// The bytes of this message as one WebSocket message.
    pub fn to_bytes(self) -> Vec<u8> {
        let (kind, body) = match self {
            WebMessage::Control(body) => (CONTROL, body),
            WebMessage::Datagram(body) => (DATAGRAM, body),
        };
        let mut bytes = Vec::with_capacity(1 + body.len());
        bytes.push(kind);
        bytes.extend_from_slice(body);
        bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{decode, encode, ClientMessage};

    #[test]
    fn a_message_comes_back_as_it_went() {
        let body = encode(&ClientMessage::Ready(true), MAX_MESSAGE_SIZE).unwrap();
        let bytes = WebMessage::Control(&body).to_bytes();
        assert_eq!(bytes[0], 0);
        let WebMessage::Control(back) = WebMessage::parse(&bytes).unwrap() else {
            panic!("not a control message");
        };
        let message: ClientMessage = decode(back, MAX_MESSAGE_SIZE).unwrap();
        assert_eq!(message, ClientMessage::Ready(true));
        let datagram = WebMessage::Datagram(&[7, 8, 9]).to_bytes();
        assert_eq!(datagram, [1, 7, 8, 9]);
        assert_eq!(
            WebMessage::parse(&datagram).unwrap(),
            WebMessage::Datagram(&[7, 8, 9])
        );
    }

    #[test]
    fn empty_unknown_and_oversized_messages_are_refused() {
        assert_eq!(WebMessage::parse(&[]), Err(DecodeError::Truncated));
        assert_eq!(WebMessage::parse(&[9, 1]), Err(DecodeError::UnknownKind(9)));
        let mut long = vec![1u8];
        long.resize(2 + MAX_DATAGRAM_SIZE, 0);
        assert!(matches!(
            WebMessage::parse(&long),
            Err(DecodeError::Oversized { .. })
        ));
        long[0] = 0;
        assert!(WebMessage::parse(&long).is_ok());
    }
}
