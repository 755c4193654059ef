//! `replay FILE`: checks a replay against the world hashes recorded in it,
//! either headless as fast as possible with a progress bar on the terminal
//! (`--verify --headless`), or while showing it in the replay window.
//!
//! A damaged file is still checked up to the damage: what is wrong with it
//! is said first on stderr, and fails the command at the end even if every
//! tick before it verified, so a truncated recording never passes as a
//! good one.

use std::io::IsTerminal;
use std::path::PathBuf;

use lockstep_engine::replay;
use lockstep_sim::World;

use crate::window_modes::{self, ViewOptions, WindowOptions};

/// What `replay` was asked to do.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// The replay file.
    pub file: PathBuf,
    /// Verify without a window.
    pub headless: bool,
    /// Speed, first tick and verification of the replay window.
    pub view: ViewOptions,
    /// The replay window; its `ticks` also ends a headless verification
    /// early (to compare with a client that left at that tick).
    pub window: WindowOptions,
}

/// Plays or verifies a replay file: on success the `verified ticks=N
/// checks=C` summary and the final line; a divergence, or damage to the
/// file, is the error.
pub fn run(options: ReplayOptions) -> anyhow::Result<Vec<String>> {
    let file = options.file;
    let (recording, problem) = replay::open(&file)?;
    let note = match (&problem, &recording.end) {
        (Some(problem), _) => Some(problem.to_string()),
        (None, None) => {
            Some("the recording has no end record: the recorder stopped abruptly".into())
        }
        (None, Some(_)) => None,
    };
    if let Some(note) = &note {
        eprintln!("lockstep-client: {}: {note}", file.display());
    }
    let verified = if options.headless {
        let bar = ProgressBar::new(std::io::stderr().is_terminal());
        let verified = replay::verify::<World>(recording, options.window.ticks, |done, total| {
            bar.show(done, total)
        });
        bar.done();
        verified.map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?
    } else {
        let window = WindowOptions {
            title: format!("replay {}", file.display()),
            ..options.window
        };
        window_modes::replay(recording, note, window, options.view)?
    };
    Ok(verified.conclude(&file, problem)?.to_vec())
}

/// A one-line progress bar on stderr, drawn only on a terminal (a log file
/// or a test's pipe would fill with carriage returns).
struct ProgressBar {
    enabled: bool,
}

impl ProgressBar {
    /// Characters between the brackets.
    const WIDTH: u64 = 40;

    fn new(enabled: bool) -> Self {
        ProgressBar { enabled }
    }

    fn show(&self, done: u32, total: u32) {
        if !self.enabled || total == 0 {
            return;
        }
        let filled = (u64::from(done) * Self::WIDTH / u64::from(total)) as usize;
        eprint!(
            "\rverifying [{}{}] {done}/{total} ticks",
            "#".repeat(filled),
            ".".repeat(Self::WIDTH as usize - filled)
        );
    }

    /// Ends the bar's line, so what follows on stderr starts on its own.
    fn done(&self) {
        if self.enabled {
            eprintln!();
        }
    }
}
