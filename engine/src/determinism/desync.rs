//! Desync dumps: what a client writes when the server reports that tick
//! `T` diverged, twice: as JSON to read, and as postcard bytes that keep
//! every float bit. `lockstep-client desync-diff A B` compares two of them
//! field by field ([`crate::determinism::diff`]).

use std::path::{Path, PathBuf};

use lockstep_protocol::{Bundle, GameSpec, PlayerId, Tick};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::game::Game;
use crate::trace::Trace;

/// Version of the dump layout, stored in every dump. 2: a spectator's dump
/// has no player (format 1 wrote slot 255). 3: the hash after each phase
/// of the tick's step. 4: the game's name, second, so a tool reads which
/// game a dump is of before it decodes the state ([`dump_game`]). 5: the
/// sync trace of the tick's step, last ([`DesyncDump::trace`]); a format
/// 4 dump is still read, without one.
pub const DUMP_FORMAT: u32 = 5;

/// The oldest dump format this program reads.
pub const OLDEST_DUMP_FORMAT: u32 = 4;

/// Everything one client knew about a diverged tick.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(bound = "G: Game")]
pub struct DesyncDump<G> {
    /// [`DUMP_FORMAT`] of the writer.
    pub format: u32,
    /// The game and its settings, as the Start gave them.
    pub game: GameSpec,
    /// The writing client's slot; `None` for a spectator.
    pub player: Option<PlayerId>,
    /// The writing client's name.
    pub name: String,
    /// The diverged tick.
    pub tick: Tick,
    /// `world.hash()` as 16 hex digits.
    pub hash: String,
    /// The state after `tick`.
    pub world: G,
    /// The bundles of the ticks before it that were still kept, with the
    /// tick each one produced.
    pub inputs: Vec<(Tick, Bundle)>,
    /// The tick's step done again from the state before it, hashed after
    /// each phase: `before` (that state), `roster` (departures and
    /// returns applied), then the game's own phases
    /// ([`Game::step_phases`]). Empty when the tick before has left the
    /// history. The last hash equals [`DesyncDump::hash`] unless the state
    /// was changed outside the step.
    pub phases: Vec<PhaseHash>,
    /// The values the game traced ([`crate::trace`]) while the tick's step
    /// was redone for [`DesyncDump::phases`]; `None` in a dump of format
    /// 4, or when the tick before had left the history.
    pub trace: Option<Trace>,
}

/// A dump of format 4: the same fields but the trace.
#[derive(Deserialize)]
#[serde(bound = "G: Game")]
struct DumpWithoutTrace<G> {
    format: u32,
    game: GameSpec,
    player: Option<PlayerId>,
    name: String,
    tick: Tick,
    hash: String,
    world: G,
    inputs: Vec<(Tick, Bundle)>,
    phases: Vec<PhaseHash>,
}

impl<G> From<DumpWithoutTrace<G>> for DesyncDump<G> {
    fn from(old: DumpWithoutTrace<G>) -> DesyncDump<G> {
        DesyncDump {
            format: old.format,
            game: old.game,
            player: old.player,
            name: old.name,
            tick: old.tick,
            hash: old.hash,
            world: old.world,
            inputs: old.inputs,
            phases: old.phases,
            trace: None,
        }
    }
}

/// The state's hash after one phase of a step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhaseHash {
    /// The phase's name, as the game calls it.
    pub phase: String,
    /// `hash()` after it, as 16 hex digits.
    pub hash: String,
}

impl PhaseHash {
    /// The entry for `phase` with state hash `hash`.
    pub fn new(phase: &str, hash: u64) -> PhaseHash {
        PhaseHash {
            phase: phase.to_string(),
            hash: format!("{hash:016x}"),
        }
    }
}

/// Why a dump could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum DumpError {
    /// The file system refused.
    #[error("cannot access {}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The JSON form could not be produced or parsed.
    #[error("{} is not a readable desync dump: {source}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// The parser's complaint.
        source: serde_json::Error,
    },
    /// The binary form could not be produced or parsed.
    #[error("{} is not a binary desync dump: {source}", path.display())]
    Binary {
        /// The file.
        path: PathBuf,
        /// The decoder's complaint.
        source: postcard::Error,
    },
    /// A dump written by another version of this program.
    #[error(
        "{} has dump format {found}; this program reads formats {OLDEST_DUMP_FORMAT} to {DUMP_FORMAT}",
        path.display()
    )]
    Format {
        /// The file.
        path: PathBuf,
        /// Its format number.
        found: u32,
    },
    /// A dump of another game than the one asked for.
    #[error("{} is a dump of the game {found}, not of {expected}", path.display())]
    Game {
        /// The file.
        path: PathBuf,
        /// The game it is of.
        found: String,
        /// The game asked for.
        expected: &'static str,
    },
}

/// The first two fields of every dump: enough to know which game's state
/// follows.
#[derive(Deserialize)]
struct DumpHead {
    format: u32,
    game: GameSpec,
}

/// Which game, with which settings, the dump at `path` is of (`.json` as
/// JSON, anything else as the binary form), without decoding its state.
pub fn dump_game(path: &Path) -> Result<GameSpec, DumpError> {
    Ok(head(path, &read(path)?)?.game)
}

/// The head of the dump at `path`, whose bytes are `bytes`, of a format
/// this program reads.
fn head(path: &Path, bytes: &[u8]) -> Result<DumpHead, DumpError> {
    let head: DumpHead = parse(path, bytes, false)?;
    if !(OLDEST_DUMP_FORMAT..=DUMP_FORMAT).contains(&head.format) {
        return Err(DumpError::Format {
            path: path.to_path_buf(),
            found: head.format,
        });
    }
    Ok(head)
}

fn read(path: &Path) -> Result<Vec<u8>, DumpError> {
    std::fs::read(path).map_err(|source| DumpError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// `bytes` of the dump at `path` as a `T`: `.json` as JSON, anything else
/// as the binary form, `whole` or only its first fields.
fn parse<T: DeserializeOwned>(path: &Path, bytes: &[u8], whole: bool) -> Result<T, DumpError> {
    if path.extension().is_some_and(|e| e == "json") {
        return serde_json::from_slice(bytes).map_err(|source| DumpError::Json {
            path: path.to_path_buf(),
            source,
        });
    }
    let parsed = if whole {
        postcard::from_bytes(bytes)
    } else {
        postcard::take_from_bytes(bytes).map(|(head, _)| head)
    };
    parsed.map_err(|source| DumpError::Binary {
        path: path.to_path_buf(),
        source,
    })
}

impl<G: Game> DesyncDump<G> {
    /// Writes `DIR/desync-tT-NAME.json` and `.bin`; returns both paths.
    pub fn write(&self, dir: &Path) -> Result<(PathBuf, PathBuf), DumpError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| DumpError::Io { path, source }
        };
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let safe: String = self
            .name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let stem = format!("desync-t{}-{}", self.tick, safe);
        let json_path = dir.join(format!("{stem}.json"));
        let bin_path = dir.join(format!("{stem}.bin"));
        let json = serde_json::to_vec_pretty(self).map_err(|source| DumpError::Json {
            path: json_path.clone(),
            source,
        })?;
        std::fs::write(&json_path, json).map_err(io(&json_path))?;
        let bin = postcard::to_stdvec(self).map_err(|source| DumpError::Binary {
            path: bin_path.clone(),
            source,
        })?;
        std::fs::write(&bin_path, bin).map_err(io(&bin_path))?;
        Ok((json_path, bin_path))
    }

    /// Reads a dump of `G`: `.json` as JSON, anything else as the binary
    /// form.
    pub fn load(path: &Path) -> Result<DesyncDump<G>, DumpError> {
        let bytes = read(path)?;
        let head = head(path, &bytes)?;
        if head.game.name != G::NAME {
            return Err(DumpError::Game {
                path: path.to_path_buf(),
                found: head.game.name,
                expected: G::NAME,
            });
        }
        if head.format < DUMP_FORMAT {
            let old: DumpWithoutTrace<G> = parse(path, &bytes, true)?;
            return Ok(old.into());
        }
        parse(path, &bytes, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::determinism::history::History;
    use crate::testing::{play, Tally};

    #[test]
    fn dumps_round_trip_through_both_files_and_refuse_other_formats() {
        let mut history = History::new(8);
        let game: Tally = play(3, 120);
        history.record(&Bundle::default(), &game, game.hash());
        let dump = history
            .dump(
                game.tick(),
                &crate::testing::spec(),
                Some(PlayerId(1)),
                "b/o b",
            )
            .unwrap();
        let dir = std::env::temp_dir().join(format!("lockstep-dump-{}", std::process::id()));
        let (json, bin) = dump.write(&dir).unwrap();
        assert!(json.ends_with("desync-t120-b_o_b.json"), "{json:?}");
        assert_eq!(DesyncDump::load(&json).unwrap(), dump);
        assert_eq!(DesyncDump::load(&bin).unwrap(), dump);
        assert_eq!(dump_game(&json).unwrap(), crate::testing::spec());
        assert_eq!(dump_game(&bin).unwrap(), crate::testing::spec());
        let mut other = dump.clone();
        other.format = 99;
        std::fs::write(&bin, postcard::to_stdvec(&other).unwrap()).unwrap();
        assert!(matches!(
            DesyncDump::<Tally>::load(&bin),
            Err(DumpError::Format { found: 99, .. })
        ));
        let mut balls = dump.clone();
        balls.game = GameSpec::balls(24);
        std::fs::write(&bin, postcard::to_stdvec(&balls).unwrap()).unwrap();
        assert!(matches!(
            DesyncDump::<Tally>::load(&bin),
            Err(DumpError::Game {
                expected: "tally",
                ..
            })
        ));
        std::fs::write(&bin, b"garbage").unwrap();
        assert!(matches!(
            DesyncDump::<Tally>::load(&bin),
            Err(DumpError::Binary { .. })
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_dump_of_format_4_is_read_without_a_trace() {
        /// A dump as format 4 wrote it: every field but the trace.
        #[derive(Serialize)]
        struct Old<'a> {
            format: u32,
            game: &'a GameSpec,
            player: Option<PlayerId>,
            name: &'a str,
            tick: Tick,
            hash: &'a str,
            world: &'a Tally,
            inputs: &'a [(Tick, Bundle)],
            phases: &'a [PhaseHash],
        }
        let mut history = History::new(4);
        let game: Tally = play(2, 6);
        history.record(&Bundle::default(), &game, game.hash());
        let dump = history
            .dump(game.tick(), &crate::testing::spec(), None, "old")
            .unwrap();
        let old = Old {
            format: 4,
            game: &dump.game,
            player: dump.player,
            name: &dump.name,
            tick: dump.tick,
            hash: &dump.hash,
            world: &dump.world,
            inputs: &dump.inputs,
            phases: &dump.phases,
        };
        let dir = std::env::temp_dir().join(format!("lockstep-dump4-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (bin, json) = (dir.join("old.bin"), dir.join("old.json"));
        std::fs::write(&bin, postcard::to_stdvec(&old).unwrap()).unwrap();
        std::fs::write(&json, serde_json::to_vec(&old).unwrap()).unwrap();
        for path in [&bin, &json] {
            let read = DesyncDump::<Tally>::load(path).unwrap();
            assert_eq!((read.format, read.trace.as_ref()), (4, None));
            assert_eq!(read.world, dump.world);
        }
        let mut older = old;
        older.format = 3;
        std::fs::write(&bin, postcard::to_stdvec(&older).unwrap()).unwrap();
        let refused = DesyncDump::<Tally>::load(&bin).unwrap_err().to_string();
        assert!(
            refused.ends_with("has dump format 3; this program reads formats 4 to 5"),
            "{refused}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_spectators_dump_names_no_player() {
        let mut history = History::new(2);
        let game: Tally = play(2, 3);
        history.record(&Bundle::default(), &game, game.hash());
        let dump = history
            .dump(Tick(3), &crate::testing::spec(), None, "spectator")
            .unwrap();
        let json = serde_json::to_string(&dump).unwrap();
        assert!(json.contains("\"player\":null"), "{json}");
    }
}
