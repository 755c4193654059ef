//! `replay FILE`: checks a replay against the world hashes recorded in it,
//! headless as fast as possible with a progress bar on the terminal
//! (`--verify --headless`), or, through [`Opened`], while the window
//! crate's replay window shows it. A player the server named diverged is
//! expected to differ: it is said on a line of its own, and the replay
//! still verifies ([`lockstep_engine::replay::expected_hashes`]).
//!
//! A damaged file is still checked up to the damage, and fails the command
//! even if every tick before it verified, so a truncated recording never
//! passes as a good one: the one error line says where the damage is,
//! whether intact records follow it (damage mid-file, not a torn tail),
//! and how many ticks before it verified. The replay window says what is
//! wrong with the file as it opens too ([`Opened::warn`]), since it plays
//! for a while before its verdict.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use lockstep_engine::replay::playback::{self as replay, Verified};
use lockstep_protocol::{Damage, Replay};

use crate::games::{ForGame, Games, Playable};

/// What `replay --verify --headless` was asked to do.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// The replay file.
    pub file: PathBuf,
    /// End the verification at this tick (to compare with a client that
    /// left there).
    pub ticks: Option<u32>,
}

/// A replay file, read as far as it reads.
#[derive(Debug)]
pub struct Opened {
    /// The file.
    pub file: PathBuf,
    /// What it holds, up to any damage.
    pub recording: Replay,
    /// What is wrong with the file: damage, or no end record.
    pub note: Option<String>,
    /// The damage, which fails the check at the end.
    problem: Option<Damage>,
}

/// Opens a replay file, read as far as it reads.
pub fn open(file: &Path) -> anyhow::Result<Opened> {
    let (recording, problem) = replay::open(file)?;
    let note = match (&problem, &recording.end) {
        (Some(problem), _) => Some(problem.to_string()),
        (None, None) => {
            Some("the recording has no end record: the recorder stopped abruptly".into())
        }
        (None, Some(_)) => None,
    };
    Ok(Opened {
        file: file.to_path_buf(),
        recording,
        note,
        problem,
    })
}

impl Opened {
    /// Says on stderr what is wrong with the file, if anything.
    pub fn warn(&self) {
        if let Some(note) = &self.note {
            eprintln!("lockstep-client: {}: {note}", self.file.display());
        }
    }

    /// The name of the game it recorded.
    pub fn game(&self) -> &str {
        &self.recording.header.spec.name
    }

    /// Checks the replay with `check`, run for the game it recorded out
    /// of `games` (`run` is [`Games::run`] or the window's own); on
    /// success the `verified ticks=N checks=C` summary, a `diverged` line
    /// for each player the server named, a `last` line for each player's
    /// last report, and the final line.
    /// A divergence, damage to the file, or a game this client does not
    /// have is the error.
    pub fn check<E: std::fmt::Display>(
        self,
        run: impl FnOnce(&str, Replay) -> Result<anyhow::Result<Verified>, E>,
    ) -> anyhow::Result<Vec<String>> {
        let Opened {
            file,
            recording,
            problem,
            ..
        } = self;
        let name = recording.header.spec.name.clone();
        let verified =
            run(&name, recording).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))??;
        Ok(verified.conclude(&file, problem)?)
    }
}

/// Verifies a replay file headless, as whichever of `games` it recorded,
/// as fast as possible: the `verified ticks=N checks=C` summary, a
/// `diverged` line for each player the server named, a `last` line for
/// each player's last report, and the final line;
/// a divergence, damage to the file, or a game this client
/// does not have is the error.
pub fn run(games: &impl Games, options: ReplayOptions) -> anyhow::Result<Vec<String>> {
    let opened = open(&options.file)?;
    // Damage is said once, by the error that ends the check.
    if opened.problem.is_none() {
        opened.warn();
    }
    let file = options.file;
    let ticks = options.ticks;
    opened.check(|name, recording| {
        games.run(
            name,
            Check {
                recording,
                file,
                ticks,
            },
        )
    })
}

/// One replay verified headless as the game it recorded.
struct Check {
    recording: Replay,
    file: PathBuf,
    ticks: Option<u32>,
}

impl ForGame for Check {
    type Output = anyhow::Result<Verified>;

    fn run<G: Playable>(self) -> Self::Output {
        let bar = ProgressBar::new(std::io::stderr().is_terminal());
        let verified = replay::verify::<G>(self.recording, self.ticks, |done, total| {
            bar.show(done, total)
        });
        bar.done();
        verified.map_err(|e| anyhow::anyhow!("{}: {e}", self.file.display()))
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
