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
