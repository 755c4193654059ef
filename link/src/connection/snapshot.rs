//! A game joined from the server's snapshot: its Start waits until the
//! snapshot's chunks are all in.
//!
//! The chunks must be of the Start's snapshot tick, in order, within the
//! announced length and [`MAX_SNAPSHOT_SIZE`]; anything else is an error
//! that ends the connection. What the bytes hold is not checked here: the
//! connection knows no game, so the frontend decodes them into its world
//! and checks its tick.

use std::time::Duration;

use lockstep_protocol::{SnapshotChunk, Start, Tick, MAX_SNAPSHOT_SIZE};

/// Why the server's snapshot chunks cannot make a snapshot.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SnapshotError {
    /// A chunk of another tick than the Start's snapshot (`None`: the
    /// Start announced none).
    #[error("a chunk of tick {tick} for a Start from {expected:?}")]
    WrongTick {
        /// The chunk's tick.
        tick: Tick,
        /// The Start's snapshot tick.
        expected: Option<Tick>,
    },
    /// A chunk that does not continue the bytes so far, or announces a
    /// snapshot larger than [`MAX_SNAPSHOT_SIZE`].
    #[error("chunk at {offset} of {total_len} bytes after {received} bytes")]
    OutOfOrder {
        /// Where the chunk says its bytes go.
        offset: u32,
        /// The length of the whole snapshot, as the chunk announces it.
        total_len: u32,
        /// Bytes received before it.
        received: usize,
    },
    /// Chunks that add up to more than the length they announce.
    #[error("chunks longer than the announced {total} bytes")]
    TooLong {
        /// The announced length.
        total: usize,
    },
}

/// A Start from a snapshot, when it arrived, and the snapshot's bytes so
/// far.
#[derive(Debug)]
pub(super) struct Joining {
    pub(super) start: Start,
    /// When the Start arrived (link time): the game's clock starts then,
    /// not when the last chunk is in.
    pub(super) at: Duration,
    pub(super) bytes: Vec<u8>,
}

impl Joining {
    pub(super) fn new(start: Start, at: Duration) -> Joining {
        Joining {
            start,
            at,
            bytes: Vec::new(),
        }
    }

    /// Adds `chunk` to the snapshot; `true` once the last one is in.
    pub(super) fn take(&mut self, chunk: SnapshotChunk) -> Result<bool, SnapshotError> {
        let total = chunk.total_len as usize;
        if Some(chunk.tick) != self.start.snapshot {
            return Err(SnapshotError::WrongTick {
                tick: chunk.tick,
                expected: self.start.snapshot,
            });
        }
        if chunk.total_len > MAX_SNAPSHOT_SIZE || chunk.offset as usize != self.bytes.len() {
            return Err(SnapshotError::OutOfOrder {
                offset: chunk.offset,
                total_len: chunk.total_len,
                received: self.bytes.len(),
            });
        }
        if self.bytes.len() + chunk.bytes.len() > total {
            return Err(SnapshotError::TooLong { total });
        }
        self.bytes.extend_from_slice(&chunk.bytes);
        Ok(self.bytes.len() >= total)
    }
}

#[cfg(test)]
mod tests {
    use lockstep_protocol::{ClientMessage, ServerMessage};

    use super::super::harness::{config, start, Harness};
    use super::super::{Action, NetCommand, NetEvent, Started};
    use super::*;

    fn from_snapshot(tick: u32) -> Start {
        Start {
            snapshot: Some(Tick(tick)),
            snapshot_hash: Some(1),
            ..start(1)
        }
    }

    /// A snapshot the frontend found off the majority's world is reported,
    /// and the server's next Start (here from tick 0) starts the game afresh.
    #[test]
    fn a_refused_snapshot_is_reported_and_the_next_start_begins_afresh() {
        let mut h = Harness::connected(config());
        h.message(ServerMessage::Start(from_snapshot(30)));
        let chunk = SnapshotChunk::split(Tick(30), &[7; 10]).remove(0);
        assert_eq!(h.message(ServerMessage::Snapshot(chunk)).events().len(), 1);
        let out = h.command(NetCommand::BadSnapshot(Tick(30), "off".into()));
        let (tick, reason) = (Tick(30), "off".into());
        assert_eq!(
            out.0,
            [Action::Send(ClientMessage::BadSnapshot { tick, reason })]
        );
        let out = h.message(ServerMessage::Start(start(1)));
        let (start, at) = (start(1), h.instant(h.now));
        let snapshot = None;
        assert_eq!(
            out.events(),
            [NetEvent::Started(Started {
                start,
                at,
                snapshot
            })]
        );
        assert_eq!(h.bundles(0, 2, 0).deliveries(), vec![(0, 2)], "from tick 0");
    }
}
