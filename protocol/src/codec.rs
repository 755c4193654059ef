//! Bytes ⇄ messages: postcard bodies, size limits and stream framing.

use serde::{de::DeserializeOwned, Serialize};

use crate::message::{BundleDatagramRef, ServerDatagramRef};
use crate::{Bundle, Tick};

/// Largest encoded message accepted on the control stream. A roster of 255
/// long names fits many times over; anything larger is hostile or broken.
pub const MAX_MESSAGE_SIZE: usize = 64 * 1024;

/// Largest datagram either side builds or accepts. 1200 bytes is the QUIC
/// minimum path MTU, so a datagram of this size is never refused by the path;
/// senders also respect the connection's own (possibly smaller) limit.
pub const MAX_DATAGRAM_SIZE: usize = 1200;

/// Datagrams a client may send per second on average; the server
/// disconnects one that sends more (beyond a burst). An honest client
/// sends one per tick plus a few repeats and heartbeats: at 60 Hz about
/// 70. Four times that leaves room for bursts after a stall and keeps a
/// flood from costing the server more than a player. Clients pace
/// themselves well below it.
pub const MAX_DATAGRAMS_PER_SECOND: u32 = 240;

/// Bytes of the little-endian `u32` length prefix in front of every
/// control-stream frame.
pub const FRAME_HEADER_LEN: usize = 4;

/// Why bytes could not be turned into a message.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DecodeError {
    /// The message (or the length a frame header announced) exceeds the limit.
    #[error("message of {size} bytes exceeds the limit of {limit} bytes")]
    Oversized {
        /// Announced or actual size.
        size: usize,
        /// The limit that applied.
        limit: usize,
    },
    /// The bytes are not a valid encoding of the expected message.
    #[error("malformed message: {0}")]
    Malformed(postcard::Error),
    /// A valid message was followed by extra bytes.
    #[error("{0} unexpected bytes after the message")]
    TrailingBytes(usize),
    /// A WebSocket message without even its kind byte.
    #[error("empty message")]
    Truncated,
    /// A WebSocket message of a kind this build does not know.
    #[error("unknown message kind {0}")]
    UnknownKind(u8),
}

/// Why a message could not be encoded.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum EncodeError {
    /// The encoded message would exceed the limit.
    #[error("encoded message of {size} bytes exceeds the limit of {limit} bytes")]
    Oversized {
        /// Encoded size.
        size: usize,
        /// The limit that applied.
        limit: usize,
    },
    /// Serialisation failed (a type the format cannot express).
    #[error("cannot encode message: {0}")]
    Serialize(postcard::Error),
}

/// Encodes `message`, refusing results longer than `limit` bytes.
pub fn encode<T: Serialize>(message: &T, limit: usize) -> Result<Vec<u8>, EncodeError> {
    let bytes = postcard::to_stdvec(message).map_err(EncodeError::Serialize)?;
    if bytes.len() > limit {
        return Err(EncodeError::Oversized {
            size: bytes.len(),
            limit,
        });
    }
    Ok(bytes)
}

/// Encodes `ServerDatagram::Bundles` for `bundles` (the bundles of ticks
/// `first_tick`, `first_tick + 1`, ...) without copying them: the bytes are
/// those of encoding the owned [`ServerDatagram`](crate::ServerDatagram).
pub fn encode_bundles(
    inputs_ack: Tick,
    first_tick: Tick,
    bundles: &[Bundle],
    limit: usize,
) -> Result<Vec<u8>, EncodeError> {
    encode(
        &ServerDatagramRef::Bundles(BundleDatagramRef {
            inputs_ack,
            first_tick,
            bundles,
        }),
        limit,
    )
}

/// Decodes exactly one message from `bytes`, which must hold nothing else.
pub fn decode<T: DeserializeOwned>(bytes: &[u8], limit: usize) -> Result<T, DecodeError> {
    if bytes.len() > limit {
        return Err(DecodeError::Oversized {
            size: bytes.len(),
            limit,
        });
    }
    let (message, rest) = postcard::take_from_bytes(bytes).map_err(DecodeError::Malformed)?;
    if !rest.is_empty() {
        return Err(DecodeError::TrailingBytes(rest.len()));
    }
    Ok(message)
}

/// Encodes `message` as one control-stream frame: a `u32` little-endian
/// length, then the postcard body (at most [`MAX_MESSAGE_SIZE`] bytes).
pub fn encode_frame<T: Serialize>(message: &T) -> Result<Vec<u8>, EncodeError> {
    let body = encode(message, MAX_MESSAGE_SIZE)?;
    let mut frame = Vec::with_capacity(FRAME_HEADER_LEN + body.len());
    // The body is at most MAX_MESSAGE_SIZE bytes, far below u32::MAX.
    frame.extend_from_slice(&(body.len() as u32).to_le_bytes());
    frame.extend_from_slice(&body);
    Ok(frame)
}

/// Incremental decoder for control-stream frames: push bytes as they arrive,
/// pop whole messages. Holds at most one frame's worth of unread bytes plus
/// what was pushed since, and rejects an oversized length before buffering it.
#[derive(Debug, Default)]
pub struct FrameReader {
    buf: Vec<u8>,
}

impl FrameReader {
    /// An empty reader.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends bytes received from the stream.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Bytes received but not yet returned as a message.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// The next complete message, `Ok(None)` if more bytes are needed.
    ///
    /// After an error the stream is out of step and should be closed.
    pub fn next_message<T: DeserializeOwned>(&mut self) -> Result<Option<T>, DecodeError> {
        match self.next_frame()? {
            Some(body) => decode(&body, MAX_MESSAGE_SIZE).map(Some),
            None => Ok(None),
        }
    }

    /// The body of the next complete frame, undecoded, `Ok(None)` if more
    /// bytes are needed.
    pub fn next_frame(&mut self) -> Result<Option<Vec<u8>>, DecodeError> {
        let Some(header) = self.buf.first_chunk::<FRAME_HEADER_LEN>() else {
            return Ok(None);
        };
        let len = u32::from_le_bytes(*header) as usize;
        if len > MAX_MESSAGE_SIZE {
            return Err(DecodeError::Oversized {
                size: len,
                limit: MAX_MESSAGE_SIZE,
            });
        }
        let end = FRAME_HEADER_LEN + len;
        if self.buf.len() < end {
            return Ok(None);
        }
        let body = self.buf[FRAME_HEADER_LEN..end].to_vec();
        self.buf.drain(..end);
        Ok(Some(body))
    }
}

/// The protocol version of a Hello frame body, read without decoding the
/// rest: a client of another version may have a Hello this build cannot
/// decode, and still deserves a refusal that says why. `None` if the body
/// is not a Hello.
pub fn hello_version(body: &[u8]) -> Option<u16> {
    let (variant, rest): (u32, &[u8]) = postcard::take_from_bytes(body).ok()?;
    if variant != 0 {
        return None;
    }
    let (version, _): (u16, &[u8]) = postcard::take_from_bytes(rest).ok()?;
    Some(version)
}

#[cfg(test)]
mod tests;
