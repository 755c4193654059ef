//! The golden table, `games/balls/golden-hashes.txt`: every pinned offline game
//! must still end on its pinned hash, so that a change in what the
//! simulation computes never goes unnoticed or unreviewed.

use lockstep_balls::engine::setup;
use lockstep_balls::{World, WorldConfig};
use lockstep_engine::golden::{self, Row};

/// The committed table, compiled in so the test cannot read a stale copy.
const TABLE: &str = include_str!("../golden-hashes.txt");

/// The table's games run at `lockstep-client sim`'s default tick rate.
const TICK_RATE: u16 = 60;

/// The table must hold a game at least this long, with at least one
/// collision a tick on average: a difference too small to show in a short
/// game grows with every collision it takes part in.
const LONG_GAME_TICKS: u32 = 20_000;

/// The row's offline game, played to its end.
fn play(row: &Row) -> World {
    let setup = setup(row.players, row.seed, row.setting, TICK_RATE);
    lockstep_engine::offline(&setup, row.ticks)
}

fn golden_table() -> Vec<Row> {
    golden::parse(TABLE, "balls").unwrap_or_else(|error| panic!("{error}"))
}

#[test]
fn every_golden_scenario_reproduces_its_pinned_hash() {
    let rows = golden_table();
    let checked = golden::check(&rows, "games/balls/golden-hashes.txt", "balls", |row| {
        play(row).hash()
    });
    if let Err(report) = checked {
        panic!("{report}");
    }
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
            table.iter().any(|s| s.setting == balls),
            "no row with {balls} balls"
        );
    }
    let long = table
        .iter()
        .filter(|s| s.ticks >= LONG_GAME_TICKS)
        .max_by_key(|s| s.setting)
        .unwrap_or_else(|| panic!("no game of {LONG_GAME_TICKS}+ ticks"));
    let collisions = play(long).collisions();
    assert!(
        collisions >= u64::from(long.ticks),
        "the long game {long:?} has only {collisions} collisions: fewer than one a tick"
    );
}
