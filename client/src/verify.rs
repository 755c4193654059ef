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

use lockstep_engine::replay::playback::{self as replay, Verified};
use lockstep_protocol::Replay;

use crate::games::{ClientGame, ForGame, Games};
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

/// Plays or verifies a replay file, as whichever of `games` it recorded:
/// on success the `verified ticks=N checks=C` summary and the final line;
/// a divergence, damage to the file, or a game this client does not have
/// is the error.
pub fn run(games: &impl Games, options: ReplayOptions) -> anyhow::Result<Vec<String>> {
    let file = options.file.clone();
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
    let name = recording.header.spec.name.clone();
    let title = format!("replay {}", file.display());
    let check = Check {
        recording,
        note,
        options,
        title,
    };
    let verified = games
        .run(&name, check)
        .map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))??;
    Ok(verified.conclude(&file, problem)?.to_vec())
}

/// One replay checked as the game it recorded.
struct Check {
    recording: Replay,
    note: Option<String>,
    options: ReplayOptions,
    /// The replay window's title.
    title: String,
}

impl ForGame for Check {
    type Output = anyhow::Result<Verified>;

    fn run<G: ClientGame>(self) -> Self::Output {
        let Check {
            recording,
            note,
            options,
            title,
        } = self;
        if options.headless {
            let bar = ProgressBar::new(std::io::stderr().is_terminal());
            let verified = replay::verify::<G>(recording, options.window.ticks, |done, total| {
                bar.show(done, total)
            });
            bar.done();
            return verified.map_err(|e| anyhow::anyhow!("{}: {e}", options.file.display()));
        }
        let window = WindowOptions {
            title,
            ..options.window
        };
        window_modes::replay::<G>(recording, note, window, options.view)
    }
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
