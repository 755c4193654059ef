//! `lockstep-client report REPLAY --out FILE.png`: what a whole game looked
//! like, from its replay, as one picture anyone can attach to a bug report.
//!
//! This module reads the replay into a [`GameReport`]: it re-simulates the
//! game, whichever it is (which verifies the recorded hashes, as `replay
//! --verify` does, and finds the goals: a score that goes up in the state
//! is a goal, [`View::scores`](lockstep_engine::View::scores)), and gathers what the
//! file says happened: the hash checks, drops, rejoins, stand-ins, and the
//! server's status samples and events (replay format 4; an older file
//! simply has none). `report_picture.rs` draws it; it needs SDL2 but no
//! display.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use lockstep_engine::replay::expected_hashes::{Diverged, ExpectedHashes};
use lockstep_engine::replay::playback as replay;
use lockstep_engine::{apply, Setup, SetupError};
use lockstep_protocol::{GameEvent, Platform, PlayerId, PlayerStatus, Replay, Tick};

use crate::games::{ForGame, Games, Playable};

/// What `report` was asked to do.
#[derive(Debug, Clone)]
pub struct ReportOptions {
    /// The replay file.
    pub replay: PathBuf,
    /// The PNG to write.
    pub out: PathBuf,
    /// The picture's width in pixels; the height follows from the players.
    pub width: u32,
}

/// One player of the game, as the report shows them.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportPlayer {
    /// Slot.
    pub id: PlayerId,
    /// Name from the roster.
    pub name: String,
    /// The machine its client reported, if the replay has it.
    pub platform: Option<Platform>,
    /// Goals at the end.
    pub goals: u32,
    /// Ticks whose input the server stood in for.
    pub substituted: Vec<Tick>,
    /// Status samples: (tick, what the server saw).
    pub samples: Vec<(Tick, PlayerStatus)>,
}

/// One comparison of the hashes reported for a tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HashCheck {
    /// The tick the hashes are of.
    pub tick: Tick,
    /// Whether every report for the tick was the same hash.
    pub agreed: bool,
}

/// A whole game, ready to draw.
#[derive(Debug, Clone)]
pub struct GameReport {
    /// The file's name, for the title.
    pub file: String,
    /// Ticks in the replay.
    pub ticks: u32,
    /// Ticks per second.
    pub tick_rate: u16,
    /// Replay format of the file.
    pub format: u16,
    /// Who recorded it.
    pub recorder: String,
    /// The game, as its name.
    pub game: String,
    /// The players, by slot.
    pub players: Vec<ReportPlayer>,
    /// Every tick with more than one hash report, in tick order.
    pub checks: Vec<HashCheck>,
    /// Goals: (tick, scorer).
    pub goals: Vec<(Tick, PlayerId)>,
    /// Drops: (first tick without the player, player, why), for every
    /// departure that was not the player's own choice.
    pub drops: Vec<(Tick, PlayerId, String)>,
    /// Players who left on their own ("left", or "finished" their game).
    pub leaves: Vec<(Tick, PlayerId)>,
    /// Rejoins: (tick, player).
    pub rejoins: Vec<(Tick, PlayerId)>,
    /// Desyncs: the tick whose hashes differed first, and the first
    /// divergent tick when the server pinpointed it or the re-simulation
    /// found it.
    pub desyncs: Vec<Tick>,
    /// Speed changes: (tick, percent).
    pub speeds: Vec<(Tick, u16)>,
    /// The players the server named diverged and the re-simulation
    /// confirmed, by the tick that named them (the rules of `replay
    /// --verify`, `lockstep_engine::replay::expected_hashes`).
    pub diverged: Vec<Diverged>,
    /// The one-line verdict: verified, desync, diverged, damaged.
    pub verdict: String,
    /// What the verdict says, in a word.
    pub outcome: Outcome,
    /// Whether the verdict is good news: the file verifies and nobody
    /// diverged.
    pub verified: bool,
}

/// What a report found, in a word for the command's line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Every recorded hash reproduced, nobody diverged, the game ended.
    Verified,
    /// The file verifies, but the server named players whose worlds
    /// diverged, and the re-simulation agrees.
    Desync,
    /// The bundles do not give the game the players agreed on.
    Diverged,
    /// The file is damaged after what was read.
    Damaged,
    /// The recording has no end record (the server stopped first).
    Unfinished,
}

impl Outcome {
    /// The word `report` prints.
    pub fn word(self) -> &'static str {
        match self {
            Outcome::Verified => "verified",
            Outcome::Desync => "desync",
            Outcome::Diverged => "diverged",
            Outcome::Damaged => "damaged",
            Outcome::Unfinished => "unfinished",
        }
    }
}

impl GameReport {
    /// The name of player `id` in the roster, or its number.
    fn name_of(&self, id: PlayerId) -> String {
        self.players
            .iter()
            .find(|p| p.id == id)
            .map_or_else(|| id.to_string(), |p| p.name.clone())
    }

    /// One line per desync the re-simulation confirmed: who diverged, at
    /// which tick (and the first tick its world differed at, when the
    /// server pinpointed it), against whom (everyone else in the roster).
    pub fn desync_lines(&self) -> Vec<String> {
        self.diverged
            .iter()
            .map(|d| {
                let others: Vec<String> = self
                    .players
                    .iter()
                    .filter(|p| !self.diverged.iter().any(|o| o.player == p.id))
                    .map(|p| p.name.clone())
                    .collect();
                let first = d.first.map_or_else(|| "unknown".into(), |f| f.to_string());
                format!(
                    "desync tick={} first={first} diverged={} against={} unreproduced={}",
                    d.tick,
                    self.name_of(d.player),
                    if others.is_empty() {
                        "-".to_string()
                    } else {
                        others.join(",")
                    },
                    d.unreproduced
                )
            })
            .collect()
    }
}

/// Why a replay could not be read into a report.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read as a replay.
    #[error(transparent)]
    Replay(#[from] replay::PlaybackError),
    /// The replay is of a game this client does not have.
    #[error("{}: {source}", path.display())]
    Unknown {
        /// The file.
        path: PathBuf,
        /// Which game, and the games this client has.
        source: lockstep_engine::UnknownGame,
    },
}

/// Reads `path` and re-simulates it, as whichever of `games` it recorded,
/// into a report. A damaged tail is reported in the verdict, like `replay
/// --verify` does, not an error: the picture of what could be read is
/// still worth having.
pub fn load(games: &impl Games, path: &Path) -> Result<GameReport, LoadError> {
    let (replay, problem) = replay::open(path)?;
    let file = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into(),
    );
    let name = replay.header.spec.name.clone();
    let analysis = Analysis {
        file,
        replay,
        problem: problem.map(|p| p.to_string()),
    };
    let analysed = games
        .run(&name, analysis)
        .map_err(|source| LoadError::Unknown {
            path: path.to_path_buf(),
            source,
        })?;
    analysed.map_err(|source| {
        LoadError::Replay(replay::PlaybackError::Game {
            path: path.to_path_buf(),
            source,
        })
    })
}

/// [`analyse`] for the game a replay names.
pub struct Analysis {
    /// The file's name, for the report's title.
    pub file: String,
    /// The replay.
    pub replay: Replay,
    /// What was wrong with the file after the records read.
    pub problem: Option<String>,
}

impl ForGame for Analysis {
    type Output = Result<GameReport, SetupError>;

    fn run<G: Playable>(self) -> Self::Output {
        analyse::<G>(&self.file, self.replay, self.problem)
    }
}

/// The report of `replay`, a game of `G`; `problem` is what was wrong
/// with the file after the records read.
pub fn analyse<G: Playable>(
    file: &str,
    replay: Replay,
    problem: Option<String>,
) -> Result<GameReport, SetupError> {
    let header = &replay.header;
    let mut world = G::start(&Setup::from_header::<G>(header)?);
    let mut expected = ExpectedHashes::new(&replay);
    let mut goals = Vec::new();
    let mut rejoins = Vec::new();
    let mut substituted: BTreeMap<PlayerId, Vec<Tick>> = BTreeMap::new();
    let mut first_mismatch: Option<Tick> = None;
    let mut scores: Vec<(PlayerId, u32)> = world.scores();
    for (tick, bundle) in (0u32..).zip(&replay.bundles) {
        for &player in &bundle.joined {
            rejoins.push((Tick(tick), player));
        }
        for &player in &bundle.substituted {
            substituted.entry(player).or_default().push(Tick(tick));
        }
        apply(&mut world, bundle);
        let now = world.scores();
        for &(player, goals_now) in &now {
            let before = scores
                .iter()
                .find(|(p, _)| *p == player)
                .map_or(0, |(_, g)| *g);
            for _ in before..goals_now {
                goals.push((world.tick(), player));
            }
        }
        scores = now;
        if let Some(mismatch) = expected.check(world.tick(), || world.hash()) {
            first_mismatch.get_or_insert(mismatch.tick);
        }
    }
    let checks = hash_checks(&replay.hashes);
    let mut desyncs: Vec<Tick> = Vec::new();
    let mut speeds = Vec::new();
    for (tick, event) in &replay.events {
        match event {
            GameEvent::Desync { first, .. } => desyncs.push(first.unwrap_or(*tick)),
            GameEvent::Speed { percent } => speeds.push((*tick, percent.0)),
        }
    }
    if desyncs.is_empty() {
        // An older file, or a server that ended before pinpointing: the
        // first tick whose reports disagreed.
        desyncs.extend(checks.iter().find(|c| !c.agreed).map(|c| c.tick));
    }
    let ticks = replay.bundles.len() as u32;
    let checked = expected.checked();
    let diverged = expected.diverged();
    let (verdict, outcome) = match (&first_mismatch, &problem) {
        (Some(tick), _) => (
            format!("DIVERGED: the re-simulation differs from a recorded hash at tick {tick}"),
            Outcome::Diverged,
        ),
        (None, Some(problem)) => (
            format!("verified {checked} hash reports up to tick {ticks}, but {problem}"),
            Outcome::Damaged,
        ),
        (None, None) if replay.end.is_none() => (
            format!("verified {checked} hash reports; the recording has no end record"),
            Outcome::Unfinished,
        ),
        (None, None) if !diverged.is_empty() => {
            let named: Vec<String> = diverged
                .iter()
                .map(|d| format!("{} diverged at tick {}", d.name, d.tick))
                .collect();
            (
                format!(
                    "verified {checked} hash reports over {ticks} ticks; a desync: {}",
                    named.join(", ")
                ),
                Outcome::Desync,
            )
        }
        (None, None) => (
            format!("verified: {checked} hash reports over {ticks} ticks agree"),
            Outcome::Verified,
        ),
    };
    let verified = outcome == Outcome::Verified;
    let platforms: BTreeMap<PlayerId, Platform> = header.platforms.iter().cloned().collect();
    let mut samples: BTreeMap<PlayerId, Vec<(Tick, PlayerStatus)>> = BTreeMap::new();
    for (tick, players) in &replay.statuses {
        for status in players {
            samples
                .entry(status.player)
                .or_default()
                .push((*tick, *status));
        }
    }
    let players = header
        .roster
        .iter()
        .map(|entry| ReportPlayer {
            id: entry.id,
            name: entry.name.clone(),
            platform: platforms.get(&entry.id).cloned(),
            goals: scores
                .iter()
                .find(|(p, _)| *p == entry.id)
                .map_or(0, |(_, g)| *g),
            substituted: substituted.remove(&entry.id).unwrap_or_default(),
            samples: samples.remove(&entry.id).unwrap_or_default(),
        })
        .collect();
    Ok(GameReport {
        file: file.to_string(),
        ticks,
        tick_rate: header.tick_rate,
        format: replay.format,
        recorder: header.recorder.clone(),
        game: header.spec.name.clone(),
        players,
        checks,
        goals,
        drops: replay
            .departures
            .iter()
            .filter(|(_, _, why)| !chosen(why))
            .cloned()
            .collect(),
        leaves: replay
            .departures
            .iter()
            .filter(|(_, _, why)| chosen(why))
            .map(|(tick, player, _)| (*tick, *player))
            .collect(),
        rejoins,
        desyncs,
        speeds,
        diverged,
        verdict,
        outcome,
        verified,
    })
}

/// Whether a departure's reason (the server's words in the `Left`
/// record) is the player's own choice rather than a drop.
fn chosen(reason: &str) -> bool {
    matches!(reason, "left" | "finished")
}

/// The ticks with more than one hash report, and whether the reports of
/// each agreed. A tick one player alone reported proves nothing either way.
pub fn hash_checks(hashes: &[(Tick, PlayerId, u64)]) -> Vec<HashCheck> {
    let mut by_tick: BTreeMap<Tick, Vec<u64>> = BTreeMap::new();
    for &(tick, _, hash) in hashes {
        by_tick.entry(tick).or_default().push(hash);
    }
    by_tick
        .into_iter()
        .filter(|(_, reports)| reports.len() > 1)
        .map(|(tick, reports)| HashCheck {
            tick,
            agreed: reports.windows(2).all(|w| w[0] == w[1]),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockstep_balls::World;
    use lockstep_engine::replay::recorder::solo_header;
    use lockstep_engine::Bots;
    use lockstep_engine::Game;
    use lockstep_protocol::{Bundle, RosterEntry};

    /// A bot game of `ticks` ticks as a replay, with both players'
    /// hash report every 60 ticks; the world at its end.
    fn bot_game(ticks: u32) -> (Replay, World) {
        let players = [PlayerId(0), PlayerId(1)];
        let setup = Setup {
            seed: 3,
            tick_rate: 60,
            settings: lockstep_balls::engine::BallSettings { balls: 24 },
            players: players.to_vec(),
        };
        let roster = players
            .iter()
            .map(|&id| RosterEntry {
                id,
                name: format!("p{}", id.0),
            })
            .collect();
        let header = solo_header::<World>(&setup, roster, 0);
        let mut world = World::start(&setup);
        let mut bots = Bots::<World>::new(3, &players);
        let mut replay = Replay {
            header,
            bundles: Vec::new(),
            hashes: Vec::new(),
            departures: Vec::new(),
            end: Some((ticks, "over".into())),
            format: lockstep_protocol::REPLAY_FORMAT,
            statuses: Vec::new(),
            events: Vec::new(),
        };
        for _ in 0..ticks {
            let bundle = Bundle {
                inputs: bots.inputs(&world),
                ..Bundle::default()
            };
            apply(&mut world, &bundle);
            replay.bundles.push(bundle);
            if world.tick().0 % 60 == 0 {
                for &p in &players {
                    replay.hashes.push((world.tick(), p, world.hash()));
                }
            }
        }
        (replay, world)
    }

    #[test]
    fn the_report_finds_every_goal_and_verifies_the_hashes() {
        let (replay, world) = bot_game(3_000);
        let report = analyse::<World>("game", replay, None).unwrap();
        assert!(report.verified, "{}", report.verdict);
        assert_eq!(report.outcome, Outcome::Verified);
        assert_eq!(report.checks.len(), 50);
        assert!(report.checks.iter().all(|c| c.agreed));
        let scored: u32 = world.scores().iter().map(|s| s.goals).sum();
        assert!(scored > 0, "the bots scored no goal in 3000 ticks");
        assert_eq!(report.goals.len() as u32, scored);
        for player in &report.players {
            let goals = report.goals.iter().filter(|(_, p)| *p == player.id).count();
            assert_eq!(goals as u32, player.goals);
        }
        assert!(report.desyncs.is_empty());
    }

    #[test]
    fn a_wrong_recorded_hash_is_a_divergence_at_its_tick() {
        let (mut replay, _) = bot_game(300);
        replay.hashes[4].2 ^= 1;
        let tick = replay.hashes[4].0;
        let report = analyse::<World>("game", replay, None).unwrap();
        assert!(!report.verified);
        assert_eq!(report.outcome, Outcome::Diverged);
        assert!(report.desync_lines().is_empty());
        assert!(
            report.verdict.contains(&format!("tick {tick}")),
            "{}",
            report.verdict
        );
        assert_eq!(report.desyncs, vec![tick]);
    }

    #[test]
    fn a_desync_the_server_named_is_said_with_who_diverged_against_whom() {
        let (mut replay, _) = bot_game(600);
        // p1's world went its own way before tick 240: its reports from
        // there on are wrong, and the server named it, pinpointing 231.
        for report in replay.hashes.iter_mut() {
            if report.1 == PlayerId(1) && report.0 >= Tick(240) {
                report.2 ^= 1;
            }
        }
        replay.events.push((
            Tick(240),
            GameEvent::Desync {
                diverged: vec![PlayerId(1)],
                first: Some(Tick(231)),
            },
        ));
        let report = analyse::<World>("game", replay, None).unwrap();
        assert_eq!(report.outcome, Outcome::Desync, "{}", report.verdict);
        assert!(!report.verified);
        assert!(
            report.verdict.contains("a desync: p1 diverged at tick 240"),
            "{}",
            report.verdict
        );
        assert_eq!(report.desyncs, vec![Tick(231)]);
        assert_eq!(
            report.desync_lines(),
            ["desync tick=240 first=231 diverged=p1 against=p0 unreproduced=7"]
        );
    }

    #[test]
    fn hash_checks_need_two_reports_and_agree_only_when_equal() {
        let hashes = [
            (Tick(15), PlayerId(0), 1),
            (Tick(15), PlayerId(1), 1),
            (Tick(30), PlayerId(0), 2),
            (Tick(30), PlayerId(1), 3),
            (Tick(45), PlayerId(0), 4),
        ];
        assert_eq!(
            hash_checks(&hashes),
            vec![
                HashCheck {
                    tick: Tick(15),
                    agreed: true
                },
                HashCheck {
                    tick: Tick(30),
                    agreed: false
                },
            ]
        );
    }
}
