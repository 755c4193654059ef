//! `--record FILE`: the client's own recording of the game it plays,
//! written with the engine's [`Recorder`] to a file. A write failure stops
//! the recording with one message; the game goes on.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use lockstep_engine::replay::playback::PlaybackError;
use lockstep_engine::replay::recorder::Recorder;
use lockstep_engine::Game;
use lockstep_protocol::{Bundle, PlayerId, ReplayHeader};

/// A recording in progress.
#[derive(Debug)]
pub struct FileRecorder {
    recorder: Option<Recorder<BufWriter<File>>>,
    path: PathBuf,
}

impl FileRecorder {
    /// Creates (or replaces) `path`, with its directory, and writes the
    /// header; hash reports are filed under `reporter`.
    pub fn create(
        path: &Path,
        header: &ReplayHeader,
        reporter: PlayerId,
    ) -> Result<Self, PlaybackError> {
        let open_error = |source| PlaybackError::Open {
            path: path.to_path_buf(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(open_error)?;
        }
        let file = File::create(path).map_err(open_error)?;
        let recorder = Recorder::new(BufWriter::new(file), header, reporter).map_err(|source| {
            PlaybackError::Read {
                path: path.to_path_buf(),
                source,
            }
        })?;
        Ok(FileRecorder {
            recorder: Some(recorder),
            path: path.to_path_buf(),
        })
    }

    /// Records the bundle that took `game` to its current tick. A write
    /// that fails stops the recording; the error says so, once.
    pub fn tick<G: Game>(&mut self, bundle: &Bundle, game: &G) -> Result<(), String> {
        let Some(recorder) = &mut self.recorder else {
            return Ok(());
        };
        recorder.tick(bundle, game).map_err(|e| {
            self.recorder = None;
            format!("recording to {} stopped: {e}", self.path.display())
        })
    }

    /// Writes the End record; the error says why it could not.
    pub fn finish(mut self, reason: &str) -> Result<(), String> {
        match self.recorder.take() {
            Some(recorder) => recorder
                .finish(reason)
                .map(drop)
                .map_err(|e| format!("recording to {} not finished: {e}", self.path.display())),
            None => Ok(()),
        }
    }
}
