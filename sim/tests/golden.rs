//! The golden table, `sim/golden-hashes.txt`: every pinned offline game
//! must still end on its pinned hash, so that a change in what the
//! simulation computes never goes unnoticed or unreviewed.

use std::fmt;

use lockstep_sim::offline::{self, SimOptions};
use lockstep_sim::WorldConfig;

/// The committed table, compiled in so the test cannot read a stale copy.
const TABLE: &str = include_str!("../golden-hashes.txt");

/// The table's games run at `lockstep-client sim`'s default tick rate.
const TICK_RATE: u16 = 60;

/// The table must hold a game at least this long, with at least one
/// collision a tick on average: a difference too small to show in a short
/// game grows with every collision it takes part in.
const LONG_GAME_TICKS: u32 = 20_000;

/// One row of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Scenario {
    players: u8,
    seed: u64,
    balls: u16,
    ticks: u32,
    hash: u64,
}

impl Scenario {
    fn options(&self) -> SimOptions {
        SimOptions {
            players: self.players,
            seed: self.seed,
            ticks: self.ticks,
            balls: self.balls,
            tick_rate: TICK_RATE,
        }
    }
}

/// A line of the table that is not a comment, a blank or a valid row.
#[derive(Debug, PartialEq, Eq)]
struct ParseError {
    /// 1-based, as an editor shows it.
    line: usize,
    reason: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "golden-hashes.txt line {}: {}", self.line, self.reason)
    }
}

/// The rows of `table`; `#` lines and blank lines are skipped.
fn parse(table: &str) -> Result<Vec<Scenario>, ParseError> {
    let mut scenarios = Vec::new();
    for (index, line) in table.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let scenario = parse_row(line).map_err(|reason| ParseError {
            line: index + 1,
            reason: format!("{reason} in {line:?}"),
        })?;
        scenarios.push(scenario);
    }
    Ok(scenarios)
}

fn parse_row(line: &str) -> Result<Scenario, String> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let [players, seed, balls, ticks, hash] = fields[..] else {
        return Err(format!(
            "expected 5 columns (players seed balls ticks hash), found {}",
            fields.len()
        ));
    };
    let number = |name: &str, text: &str| format!("{name} {text:?} is not a valid number");
    Ok(Scenario {
        players: players.parse().map_err(|_| number("players", players))?,
        seed: seed.parse().map_err(|_| number("seed", seed))?,
        balls: balls.parse().map_err(|_| number("balls", balls))?,
        ticks: ticks.parse().map_err(|_| number("ticks", ticks))?,
        hash: parse_hash(hash)?,
    })
}

/// Exactly the form `sim` prints, so rows can be pasted both ways and a
/// typo such as a dropped digit cannot pass as a different hash.
fn parse_hash(text: &str) -> Result<u64, String> {
    let well_formed =
        text.len() == 16 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    let invalid = || format!("hash {text:?} is not 16 lower-case hex digits");
    if !well_formed {
        return Err(invalid());
    }
    u64::from_str_radix(text, 16).map_err(|_| invalid())
}

fn golden_table() -> Vec<Scenario> {
    parse(TABLE).unwrap_or_else(|error| panic!("{error}"))
}

#[test]
fn every_golden_scenario_reproduces_its_pinned_hash() {
    let results: Vec<(Scenario, u64)> = golden_table()
        .into_iter()
        .map(|scenario| (scenario, offline::run(scenario.options()).hash()))
        .collect();
    let differing = results
        .iter()
        .filter(|(scenario, actual)| scenario.hash != *actual)
        .count();
    if differing == 0 {
        return;
    }
    let mut report = format!(
        "{differing} of {} golden scenarios end on another hash: the simulation's behaviour \
         changed.\n\n{:>7} {:>20} {:>5} {:>6}  {:16}  {:16}\n",
        results.len(),
        "players",
        "seed",
        "balls",
        "ticks",
        "expected",
        "actual"
    );
    for (scenario, actual) in &results {
        let mark = if scenario.hash == *actual {
            ""
        } else {
            "  <- differs"
        };
        report.push_str(&format!(
            "{:>7} {:>20} {:>5} {:>6}  {:016x}  {actual:016x}{mark}\n",
            scenario.players, scenario.seed, scenario.balls, scenario.ticks, scenario.hash
        ));
    }
    report.push_str(
        "\nIf the change is intended, review it and replace the rows of \
         sim/golden-hashes.txt with:\n",
    );
    for (scenario, actual) in &results {
        report.push_str(&format!(
            "{:<10} {:<21} {:<6} {:<6} {actual:016x}\n",
            scenario.players, scenario.seed, scenario.balls, scenario.ticks
        ));
    }
    panic!("{report}");
}

#[test]
fn the_table_spans_player_and_ball_counts_and_a_long_game_full_of_collisions() {
    let table = golden_table();
    for players in [1, 2, 4, 8] {
        assert!(
            table.iter().any(|s| s.players == players),
            "no row with {players} players"
        );
    }
    for balls in [0, WorldConfig::DEFAULT_BALLS, 96] {
        assert!(
            table.iter().any(|s| s.balls == balls),
            "no row with {balls} balls"
        );
    }
    let long = table
        .iter()
        .filter(|s| s.ticks >= LONG_GAME_TICKS)
        .max_by_key(|s| s.balls)
        .unwrap_or_else(|| panic!("no game of {LONG_GAME_TICKS}+ ticks"));
    let collisions = offline::run(long.options()).collisions();
    assert!(
        collisions >= u64::from(long.ticks),
        "the long game {long:?} has only {collisions} collisions: fewer than one a tick"
    );
}

#[test]
fn rows_are_read_between_comments_and_blank_lines() {
    let table = "# players seed balls ticks hash\n\n  4 1 24 600 5b2ebfd7d198f54b  \n# end\n";
    assert_eq!(
        parse(table),
        Ok(vec![Scenario {
            players: 4,
            seed: 1,
            balls: 24,
            ticks: 600,
            hash: 0x5b2e_bfd7_d198_f54b,
        }])
    );
}

#[test]
fn a_malformed_line_fails_with_its_line_number() {
    let table = "# header\n4 1 24 600 5b2ebfd7d198f54b\n4 1 24 600\n";
    let error = parse(table).expect_err("line 3 has no hash");
    assert_eq!(error.line, 3);
    assert!(error.to_string().contains("line 3"), "{error}");
    assert!(error.reason.contains("expected 5 columns"), "{error}");
}

#[test]
fn a_field_that_is_not_a_number_fails_naming_its_column() {
    let error = parse("4 one 24 600 5b2ebfd7d198f54b").expect_err("the seed is a word");
    assert_eq!(error.line, 1);
    assert!(error.reason.contains("seed \"one\""), "{error}");
}

#[test]
fn hashes_must_be_16_lower_case_hex_digits_as_sim_prints_them() {
    for hash in [
        "5B2EBFD7D198F54B",
        "5b2ebfd7d198f54",
        "0x5b2ebfd7d198f5",
        "+b2ebfd7d198f54b",
    ] {
        let error = parse(&format!("4 1 24 600 {hash}")).expect_err(hash);
        assert!(error.reason.contains("16 lower-case hex digits"), "{error}");
    }
}
