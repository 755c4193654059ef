//! Reads the replay a resumed game goes on from (`resume.rs` works out
//! the game from what is read).

use std::path::Path;

use lockstep_protocol::{Replay, ReplayError};

use crate::resume::{ResumeError, ResumedGame};

impl ResumedGame {
    /// Reads the game recorded in `path` up to its last whole record.
    pub fn load(path: &Path) -> Result<ResumedGame, ResumeError> {
        let read_error = |source| ResumeError::Read {
            path: path.to_path_buf(),
            source,
        };
        let file = std::fs::File::open(path).map_err(|e| read_error(ReplayError::Io(e)))?;
        let outcome = Replay::read(std::io::BufReader::new(file)).map_err(read_error)?;
        ResumedGame::from_replay(path, outcome)
    }
}
