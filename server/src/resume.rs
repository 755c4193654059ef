//! Resuming a game after the server died (`lockstep-server --resume
//! REPLAY`).
//!
//! Everything needed is already on disk: each bundle is written to the
//! replay before anyone is sent it (`recording.rs`), so no client
//! can hold a bundle the file lacks, and the file's last whole bundle is
//! the last one anybody may have played. The exception is a recording a
//! full disk stopped while the game went on: a player that played past
//! the file's end is sent the game afresh from tick 0, as a join would,
//! and plays on from the file's end. [`ResumedGame::load`]
//! (`io/resume.rs`) reads the file up to its last whole record and
//! [`ResumedGame::from_replay`] works out who was still playing; the
//! session then rebuilds the relay from those bundles, waits for the
//! players to reconnect (each keeps its world and is sent only the bundles
//! it lacks), and goes on writing the same file from its last whole
//! record. The hash reports and desyncs the file holds rebuild what the
//! server knew of the game's agreement, so its verdict at the end names
//! the players that diverged before the restart too.
//!
//! Only a torn tail is cut off. Damage with intact records after it is not
//! what a crash leaves, and cutting there would lose them: such a file is
//! refused ([`ResumeError::DamagedMidFile`]) and left untouched.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use lockstep_protocol::{
    Bundle, Damage, GameEvent, PlayerId, ReadOutcome, Replay, ReplayError, ReplayHeader, Tick,
};

/// A game read back from its replay, ready to go on.
#[derive(Debug, Clone)]
pub struct ResumedGame {
    /// The replay file, appended to from `valid_len` on.
    pub(crate) path: PathBuf,
    /// Where the whole records end: anything after is cut off.
    pub(crate) valid_len: u64,
    /// The game's header: seed, tick rate, roster.
    pub(crate) header: ReplayHeader,
    /// Every bundle recorded, ticks `0..len`.
    pub(crate) bundles: Vec<Bundle>,
    /// The players still taking part after the last bundle, with the
    /// first tick each plays (0, or when its rejoin was bundled).
    pub(crate) players: Vec<(PlayerId, Tick)>,
    /// Players whose departure was decided (and recorded) but not yet
    /// bundled: they are dropped again at once.
    pub(crate) leaving: Vec<PlayerId>,
    /// Every hash report recorded (tick, player, hash), judged again so
    /// the desync check knows what it knew before the restart.
    pub(crate) reports: Vec<(Tick, PlayerId, u64)>,
    /// The ticks of the desyncs recorded: announced before the restart,
    /// so not again.
    pub(crate) announced: BTreeSet<Tick>,
    /// What was wrong with the file's tail, if anything (the record the
    /// crash cut short): cut off, as nothing intact follows it.
    pub(crate) damaged_tail: Option<String>,
}

/// Why a replay cannot be resumed.
#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    /// The file cannot be opened or is not a replay this build reads.
    #[error("cannot resume {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: ReplayError,
    },
    /// The game ended normally: there is nothing to go on with.
    #[error("cannot resume {}: that game is over ({reason}); start a new one without --resume", path.display())]
    Ended {
        /// The file.
        path: PathBuf,
        /// Why it ended, as recorded.
        reason: String,
    },
    /// A client's recording, not the server's.
    #[error("cannot resume {}: it was recorded by {recorder}, not by a server", path.display())]
    NotServer {
        /// The file.
        path: PathBuf,
        /// Who recorded it.
        recorder: String,
    },
    /// The game had no player left when the file ends.
    #[error("cannot resume {}: no player was left in that game", path.display())]
    Empty {
        /// The file.
        path: PathBuf,
    },
    /// The file is damaged before its end, and intact records follow the
    /// damage: a crash leaves only a torn tail, and going on from the last
    /// good record would cut them off, so the file is left untouched.
    #[error(
        "cannot resume {file}: {damage}; resuming would cut that off, so the file is left \
         untouched. To go on from tick {tick} anyway, resume a copy cut at byte {cut} \
         (cp {file} COPY; truncate -s {cut} COPY; lockstep-server --resume COPY)",
        file = path.display(),
        tick = damage.ticks,
        cut = damage.offset
    )]
    DamagedMidFile {
        /// The file.
        path: PathBuf,
        /// Where it is damaged, and the records after it.
        damage: Box<Damage>,
    },
}

impl ResumedGame {
    /// The game in `outcome`, the replay at `path` read up to its last
    /// whole record (`io/resume.rs` reads it: [`ResumedGame::load`]).
    /// Damage is cut off only when it is the file's tail.
    pub(crate) fn from_replay(
        path: &Path,
        outcome: ReadOutcome,
    ) -> Result<ResumedGame, ResumeError> {
        let damaged_tail = match outcome.problem {
            Some(damage) if !damage.is_tail() => {
                return Err(ResumeError::DamagedMidFile {
                    path: path.to_path_buf(),
                    damage: Box::new(damage),
                })
            }
            problem => problem.map(|damage| damage.to_string()),
        };
        let replay = outcome.replay;
        if let Some((_, reason)) = replay.end {
            return Err(ResumeError::Ended {
                path: path.to_path_buf(),
                reason,
            });
        }
        if replay.header.recorder != "server" {
            return Err(ResumeError::NotServer {
                path: path.to_path_buf(),
                recorder: replay.header.recorder,
            });
        }
        let players = players_after(&replay);
        if players.is_empty() {
            return Err(ResumeError::Empty {
                path: path.to_path_buf(),
            });
        }
        let next = Tick(replay.bundles.len() as u32);
        let leaving = replay
            .departures
            .iter()
            .filter(|(tick, player, _)| *tick >= next && players.iter().any(|(id, _)| id == player))
            .map(|&(_, player, _)| player)
            .collect();
        let announced = replay
            .events
            .iter()
            .filter(|(_, event)| matches!(event, GameEvent::Desync { .. }))
            .map(|&(tick, _)| tick)
            .collect();
        Ok(ResumedGame {
            path: path.to_path_buf(),
            valid_len: outcome.valid_len,
            header: replay.header,
            bundles: replay.bundles,
            players,
            leaving,
            reports: replay.hashes,
            announced,
            damaged_tail,
        })
    }

    /// The first tick without a bundle: where the game goes on.
    pub fn next_tick(&self) -> Tick {
        Tick(self.bundles.len() as u32)
    }

    /// The recorded game's header.
    pub fn header(&self) -> &ReplayHeader {
        &self.header
    }

    /// The replay file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What was cut off the file's end, if anything.
    pub fn damaged_tail(&self) -> Option<&str> {
        self.damaged_tail.as_deref()
    }
}

/// Who takes part after the last bundle of `replay`: the roster, less
/// every player a bundle removed, plus every player a bundle brought back
/// (from that tick), ascending by id.
fn players_after(replay: &Replay) -> Vec<(PlayerId, Tick)> {
    let mut players: std::collections::BTreeMap<PlayerId, Tick> = replay
        .header
        .roster
        .iter()
        .map(|r| (r.id, Tick(0)))
        .collect();
    for (tick, bundle) in replay.bundles.iter().enumerate() {
        for player in &bundle.left {
            players.remove(player);
        }
        for &player in &bundle.joined {
            players.insert(player, Tick(tick as u32));
        }
    }
    players.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use lockstep_protocol::{
        Platform, PlayerInput, Record, ReplayWriter, RosterEntry, PROTOCOL_VERSION,
    };

    use super::*;

    fn header(recorder: &str) -> ReplayHeader {
        ReplayHeader {
            protocol_version: PROTOCOL_VERSION,
            build: "test".into(),
            recorder: recorder.into(),
            started_unix: 0,
            seed: 5,
            tick_rate: 60,
            input_delay: 3,
            hash_interval: 15,
            spec: lockstep_protocol::GameSpec::balls(24),
            roster: ["ann", "bob", "cy"]
                .iter()
                .enumerate()
                .map(|(i, name)| RosterEntry {
                    id: PlayerId(i as u8),
                    name: (*name).into(),
                })
                .collect(),
            platforms: vec![(PlayerId(0), Platform::default())],
        }
    }

    fn bundle(players: &[u8]) -> Bundle {
        Bundle {
            inputs: players
                .iter()
                .map(|&p| PlayerInput {
                    player: PlayerId(p),
                    input: Default::default(),
                })
                .collect(),
            ..Bundle::default()
        }
    }

    /// A recording of 6 ticks: bob leaves at tick 2 and is back at 4; cy's
    /// hash of tick 5 differs from ann's and the desync is recorded; cy's
    /// departure is decided at tick 6 but not yet bundled; then the file
    /// ends inside a record.
    fn crashed_recording(dir: &Path) -> PathBuf {
        let path = dir.join("game.lsreplay");
        let file = std::fs::File::create(&path).unwrap();
        let mut writer = ReplayWriter::new(file, &header("server")).unwrap();
        for tick in 0..6u32 {
            let mut b = bundle(&[0, 1, 2]);
            match tick {
                2 => {
                    b = bundle(&[0, 2]);
                    b.left = vec![PlayerId(1)];
                }
                3 => b = bundle(&[0, 2]),
                4 => b.joined = vec![PlayerId(1)],
                _ => {}
            }
            writer.write_bundle(Tick(tick), &b).unwrap();
        }
        for (player, hash) in [(0, 7), (2, 8)] {
            let player = PlayerId(player);
            let tick = Tick(5);
            writer.write(&Record::Hash { tick, player, hash }).unwrap();
        }
        let event = GameEvent::Desync {
            diverged: vec![PlayerId(0), PlayerId(2)],
            first: None,
        };
        writer
            .write(&Record::Event {
                tick: Tick(5),
                event,
            })
            .unwrap();
        writer
            .write(&Record::Left {
                tick: Tick(6),
                player: PlayerId(2),
                reason: "left".into(),
            })
            .unwrap();
        drop(writer);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.extend_from_slice(&[9, 0, 0, 0, 1]);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    fn temp_dir(label: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("lockstep-resume-{label}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_crashed_recording_resumes_after_its_last_bundle_with_whoever_still_played() {
        let dir = temp_dir("crashed");
        let path = crashed_recording(&dir);
        let game = ResumedGame::load(&path).unwrap();
        assert_eq!(game.next_tick(), Tick(6));
        assert_eq!(
            game.players,
            [
                (PlayerId(0), Tick(0)),
                (PlayerId(1), Tick(4)),
                (PlayerId(2), Tick(0))
            ]
        );
        assert_eq!(game.leaving, [PlayerId(2)]);
        assert_eq!(
            game.reports,
            [(Tick(5), PlayerId(0), 7), (Tick(5), PlayerId(2), 8)]
        );
        assert_eq!(
            game.announced.iter().copied().collect::<Vec<_>>(),
            [Tick(5)]
        );
        let tail = game.damaged_tail().unwrap();
        assert!(tail.contains("truncated"), "{tail}");
        assert_eq!(game.valid_len, std::fs::metadata(&path).unwrap().len() - 5);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Damage in the middle of the file, with the game's later records
    /// after it: going on from the last good record would cut them off.
    #[test]
    fn a_recording_damaged_mid_file_is_refused_saying_what_to_do() {
        let dir = temp_dir("mid-file");
        let path = crashed_recording(&dir);
        let mut bytes = std::fs::read(&path).unwrap();
        // Record 3, the bundle of tick 2, after the header and ticks 0, 1.
        let mut start = 10;
        for _ in 0..3 {
            let len: [u8; 4] = bytes[start..start + 4].try_into().unwrap();
            start += 4 + u32::from_le_bytes(len) as usize + 4;
        }
        bytes[start + 5] ^= 0x20;
        std::fs::write(&path, &bytes).unwrap();
        let error = ResumedGame::load(&path).unwrap_err();
        assert!(
            matches!(&error, ResumeError::DamagedMidFile { damage, .. } if !damage.is_tail()),
            "{error:?}"
        );
        let said = error.to_string();
        for part in [
            format!("cannot resume {}: ", path.display()),
            format!("corrupt at byte {start} (record 3): checksum mismatch"),
            "the last good tick before it is 1; it is mid-file".into(),
            "(bundles of ticks 3 to 5)".into(),
            format!("To go on from tick 2 anyway, resume a copy cut at byte {start}"),
        ] {
            assert!(said.contains(&part), "{part:?} not in {said}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_finished_game_or_a_clients_recording_is_refused_with_the_reason() {
        let dir = temp_dir("refused");
        let over = dir.join("over.lsreplay");
        let writer =
            ReplayWriter::new(std::fs::File::create(&over).unwrap(), &header("server")).unwrap();
        writer.finish("every player left").unwrap();
        let error = ResumedGame::load(&over).unwrap_err().to_string();
        assert!(
            error.contains("that game is over (every player left)"),
            "{error}"
        );

        let client = dir.join("client.lsreplay");
        let mut writer = ReplayWriter::new(
            std::fs::File::create(&client).unwrap(),
            &header("client ann"),
        )
        .unwrap();
        writer.write_bundle(Tick(0), &bundle(&[0])).unwrap();
        drop(writer);
        let error = ResumedGame::load(&client).unwrap_err().to_string();
        assert!(error.contains("recorded by client ann"), "{error}");

        let missing = ResumedGame::load(&dir.join("none.lsreplay"))
            .unwrap_err()
            .to_string();
        assert!(missing.contains("cannot resume"), "{missing}");
        std::fs::write(dir.join("junk"), b"not a replay").unwrap();
        let junk = ResumedGame::load(&dir.join("junk"))
            .unwrap_err()
            .to_string();
        assert!(junk.contains("not a lockstep replay"), "{junk}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
