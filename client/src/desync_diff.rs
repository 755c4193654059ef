//! `desync-diff A B`: compares two desync dumps of the game's world, like
//! diff(1): the differing fields are the output, and dumps that differ are
//! a failure, so a script can test the exit status.

use std::path::Path;

use lockstep_engine::desync::DumpError;
use lockstep_engine::diff::compare_dumps;
use lockstep_sim::World;

/// Why `desync-diff` failed.
#[derive(Debug, thiserror::Error)]
pub enum DesyncDiffError {
    /// A dump could not be read.
    #[error(transparent)]
    Dump(#[from] DumpError),
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

/// Compares the worlds of dumps `a` and `b`, listing at most `max`
/// differing fields; the report's lines when the worlds are the same.
pub fn compare(a: &Path, b: &Path, max: usize) -> Result<Vec<String>, DesyncDiffError> {
    let report = compare_dumps::<World>(a, b, max)?;
    if report.differing == 0 {
        return Ok(report.lines);
    }
    Err(DesyncDiffError::Differ {
        lines: report.lines,
        differing: report.differing,
    })
}
