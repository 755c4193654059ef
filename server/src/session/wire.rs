//! The session's values as they travel: an [`Outgoing`] as the frames a
//! writer puts on the control stream, and a client's control message as
//! the [`Event`] it is. Both drivers (the QUIC one in `io/connection.rs` and any
//! in-memory one) go through here, so they put the same bytes on the wire
//! and hand the session the same events.

use std::time::Duration;

use bytes::Bytes;
use lockstep_protocol::{
    encode_frame, Bundle, ClientMessage, EncodeError, ServerMessage, SnapshotChunk, Tick,
};

use super::{ConnId, Event, Outgoing};
use crate::CapacityReport;

/// Bundles per History message: about 16 bytes each with four players,
/// so a chunk stays far below the message size limit; bigger bundles are
/// split further by the writer.
const HISTORY_CHUNK: usize = 2048;

impl Outgoing {
    /// The frames to write on the control stream, in order: a history and
    /// a snapshot are cut into messages that each fit the message limit.
    pub fn frames(self) -> Result<Vec<Bytes>, EncodeError> {
        match self {
            Outgoing::Frame(frame) => Ok(vec![frame]),
            Outgoing::Message(message) => encode_frame(&message).map(|frame| vec![frame.into()]),
            Outgoing::History {
                first_tick,
                bundles,
            } => history_frames(first_tick, &bundles),
            Outgoing::Snapshot { tick, bytes } => SnapshotChunk::split(tick, &bytes)
                .into_iter()
                .map(|chunk| encode_frame(&ServerMessage::Snapshot(chunk)).map(Bytes::from))
                .collect(),
        }
    }
}

/// Cuts a history into History frames that each fit the message limit.
fn history_frames(first_tick: Tick, bundles: &[Bundle]) -> Result<Vec<Bytes>, EncodeError> {
    let mut frames = Vec::new();
    let mut start = 0;
    while start < bundles.len() {
        let mut len = HISTORY_CHUNK.min(bundles.len() - start);
        loop {
            let message = ServerMessage::History {
                first_tick: first_tick.plus(start as u32),
                bundles: bundles[start..start + len].to_vec(),
            };
            match encode_frame(&message) {
                Ok(frame) => {
                    frames.push(frame.into());
                    break;
                }
                Err(_) if len > 1 => len /= 2,
                Err(e) => return Err(e),
            }
        }
        start += len;
    }
    Ok(frames)
}

impl Event {
    /// What a control message from the joined connection `conn` tells the
    /// session; `unix_time` (seconds since the Unix epoch) names the
    /// replay of a game a Ready starts. `None` for a repeated Hello, which
    /// tells it nothing.
    pub fn from_message(conn: ConnId, message: ClientMessage, unix_time: u64) -> Option<Event> {
        Some(match message {
            ClientMessage::Leave => Event::Leave(conn),
            ClientMessage::HashReport { tick, hash } => Event::HashReport(conn, tick, hash),
            ClientMessage::Inputs(inputs) => Event::Inputs(conn, inputs),
            ClientMessage::TickHashes {
                tick,
                first_tick,
                hashes,
            } => Event::TickHashes(conn, tick, first_tick, hashes),
            ClientMessage::Capacity {
                percent,
                tick,
                behind_us,
            } => Event::Capacity(
                conn,
                CapacityReport {
                    percent,
                    tick,
                    behind: Duration::from_micros(u64::from(behind_us)),
                },
            ),
            ClientMessage::Ready(ready) => Event::Ready {
                conn,
                ready,
                unix_time,
            },
            ClientMessage::GameDone => Event::GameDone(conn),
            ClientMessage::Snapshot(chunk) => Event::Snapshot(conn, chunk),
            ClientMessage::CannotPlay(reason) => Event::CannotPlay(conn, reason),
            ClientMessage::BadSnapshot { tick, reason } => Event::BadSnapshot(conn, tick, reason),
            ClientMessage::Trace { tick, report } => Event::Trace(conn, tick, report),
            ClientMessage::Hello(_) => return None,
        })
    }
}
