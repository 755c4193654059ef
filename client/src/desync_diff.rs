//! `desync-diff A B`: compares two desync dumps of a game's state, like
//! diff(1): the differing fields are the output, and dumps that differ are
//! a failure, so a script can test the exit status. The dumps say which
//! game they are of.

use std::path::Path;

use lockstep_engine::determinism::desync::{dump_game, DumpError};
use lockstep_engine::UnknownGame;

use crate::games::Games;

/// Why `desync-diff` failed.
#[derive(Debug, thiserror::Error)]
pub enum DesyncDiffError {
    /// A dump could not be read.
    #[error(transparent)]
    Dump(#[from] DumpError),
    /// The dumps are of a game this client does not have.
    #[error(transparent)]
    Unknown(#[from] UnknownGame),
    /// The worlds differ.
    #[error("the dumps differ (differing fields: {differing})")]
    Differ {
        /// The report, one line each: which dumps, and the fields that
        /// differ with both values and their bits. It belongs on stdout
        /// like a success's.
        lines: Vec<String>,
        /// Number of differing fields.
        differing: usize,
    },
}

/// Compares the states of dumps `a` and `b`, of the game `a` names,
/// listing at most `max` differing fields; the report's lines when the
/// states are the same.
pub fn compare(
    games: &impl Games,
    a: &Path,
    b: &Path,
    max: usize,
) -> Result<Vec<String>, DesyncDiffError> {
    let game = games.find(&dump_game(a)?.name)?;
    let report = game.compare_dumps(a, b, max)?;
    if report.differing == 0 {
        return Ok(report.lines);
    }
    Err(DesyncDiffError::Differ {
        lines: report.lines,
        differing: report.differing,
    })
}
