//! `trace-diff A B`: compares the sync traces two runs of `sim --trace`
//! printed (two builds, or two targets), like diff(1): the first value
//! computed differently, named by its file and line, is the output, and
//! traces that differ are a failure. Game-free: a trace is values with
//! their places, whatever the game.

use std::path::{Path, PathBuf};

/// Why `trace-diff` failed.
#[derive(Debug, thiserror::Error)]
pub enum TraceDiffError {
    /// A file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// A file holds no trace, or a trace line that does not parse.
    #[error("{0}")]
    Bad(String),
    /// The traces differ.
    #[error("the traces differ")]
    Differ {
        /// The report, one line each; it belongs on stdout like a
        /// success's.
        lines: Vec<String>,
    },
}

/// Compares the traces in the outputs `a` and `b`, with `context` entries
/// either side of the first difference; the report's lines when they
/// agree.
pub fn compare(a: &Path, b: &Path, context: usize) -> Result<Vec<String>, TraceDiffError> {
    let read = |path: &Path| {
        std::fs::read(path)
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .map_err(|source| TraceDiffError::Read {
                path: path.to_path_buf(),
                source,
            })
    };
    let (a_text, b_text) = (read(a)?, read(b)?);
    let (a_name, b_name) = (a.display().to_string(), b.display().to_string());
    let (lines, differ) =
        lockstep_engine::trace::diff_outputs((&a_name, &a_text), (&b_name, &b_text), context)
            .map_err(TraceDiffError::Bad)?;
    if differ {
        return Err(TraceDiffError::Differ { lines });
    }
    Ok(lines)
}
