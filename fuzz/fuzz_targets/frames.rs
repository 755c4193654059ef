//! A control stream as QUIC delivers it: any bytes, cut into any chunks,
//! fed to a `FrameReader`.
//!
//! Input layout, so that libFuzzer mutates the stream and its cuts alike:
//!
//! ```text
//! byte 0      bit 0: 0 = client → server (ClientMessage), 1 = server → client
//! byte 1      n, the number of chunk lengths that follow
//! n bytes     chunk lengths (0 = an empty push); the rest is the last chunk
//! the rest    the stream
//! ```
//!
//! Properties: the reader never panics; it agrees with the framing rule
//! (it returns a message for each whole frame, waits only while a frame
//! is incomplete, refuses an oversized length as soon as the header is in,
//! and reports an undecodable body only once it is complete); it holds
//! exactly the bytes pushed and not yet consumed, so never more than one
//! largest frame after returning what it could; every message it returns
//! re-encodes as a frame that reads back equal; and the cuts change
//! nothing: the messages and the error are those of the whole stream
//! pushed at once.
#![no_main]

use std::fmt::Debug;

use libfuzzer_sys::fuzz_target;
use lockstep_fuzz::assert_round_trips;
use lockstep_protocol::{
    encode_frame, ClientMessage, DecodeError, FrameReader, ServerMessage, FRAME_HEADER_LEN,
    MAX_MESSAGE_SIZE,
};
use serde::{de::DeserializeOwned, Serialize};

fuzz_target!(|data: &[u8]| {
    let [direction, count, rest @ ..] = data else {
        return;
    };
    let (lengths, stream) = rest.split_at(usize::from(*count).min(rest.len()));
    let chunks = cut(stream, lengths);
    if direction & 1 == 0 {
        check::<ClientMessage>(stream, &chunks);
    } else {
        check::<ServerMessage>(stream, &chunks);
    }
});

/// `stream` cut at the given lengths, as far as it reaches; whatever is left
/// is the last chunk.
fn cut<'a>(mut stream: &'a [u8], lengths: &[u8]) -> Vec<&'a [u8]> {
    let mut chunks = Vec::with_capacity(lengths.len() + 1);
    for &length in lengths {
        let (chunk, rest) = stream.split_at(usize::from(length).min(stream.len()));
        chunks.push(chunk);
        stream = rest;
    }
    chunks.push(stream);
    chunks
}

/// What a reader returns until the first error, which ends the stream.
type Outcome<T> = (Vec<T>, Option<DecodeError>);

fn check<T>(stream: &[u8], chunks: &[&[u8]])
where
    T: Serialize + DeserializeOwned + PartialEq + Debug,
{
    let chunked = read(chunks);
    assert_eq!(
        chunked,
        read::<T>(&[stream]),
        "the cuts changed the outcome"
    );
    for message in &chunked.0 {
        let frame = encode_frame(message).expect("a message read from a frame re-encodes");
        assert_round_trips(message, &frame[FRAME_HEADER_LEN..], MAX_MESSAGE_SIZE);
    }
}

/// Pushes each chunk and takes every complete message after each push, as
/// the server and the client do, checking the reader against the framing
/// rule (a `u32` little-endian length, then that many bytes of body).
fn read<T: DeserializeOwned>(chunks: &[&[u8]]) -> Outcome<T> {
    let mut reader = FrameReader::new();
    let mut messages = Vec::new();
    let mut received = Vec::new();
    let mut consumed = 0;
    for chunk in chunks {
        reader.push(chunk);
        received.extend_from_slice(chunk);
        loop {
            let unread = &received[consumed..];
            let announced = unread
                .first_chunk::<FRAME_HEADER_LEN>()
                .map(|header| u32::from_le_bytes(*header) as usize);
            match reader.next_message::<T>() {
                Ok(Some(message)) => messages.push(message),
                Ok(None) => {
                    // Waiting is right only for a short header or a body
                    // still arriving; an oversized length is refused as
                    // soon as the header is complete, before its body
                    // is buffered.
                    if let Some(len) = announced {
                        assert!(len <= MAX_MESSAGE_SIZE, "waited for a {len}-byte body");
                        assert!(unread.len() < FRAME_HEADER_LEN + len);
                    }
                    break;
                }
                Err(error) => {
                    let len = announced.expect("an error needs at least a header");
                    if len > MAX_MESSAGE_SIZE {
                        let oversized = DecodeError::Oversized {
                            size: len,
                            limit: MAX_MESSAGE_SIZE,
                        };
                        assert_eq!(error, oversized);
                    } else {
                        assert!(
                            unread.len() >= FRAME_HEADER_LEN + len,
                            "{error} before the body"
                        );
                        assert!(matches!(
                            error,
                            DecodeError::Malformed(_) | DecodeError::TrailingBytes(_)
                        ));
                    }
                    return (messages, Some(error));
                }
            }
            let len = announced.expect("a message came from a whole header");
            consumed += FRAME_HEADER_LEN + len;
            assert!(consumed <= received.len(), "a message from a partial frame");
        }
        assert_eq!(reader.buffered(), received.len() - consumed);
    }
    (messages, None)
}
