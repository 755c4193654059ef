//! The golden table, `games/topple/golden-hashes.txt`: every pinned
//! offline game of Topple must still end on its pinned hash, so a change in
//! what rapier or the game computes never goes unnoticed or unreviewed.

use lockstep_engine::golden::{self, Row};
use lockstep_engine::{offline, Game, Setup};
use lockstep_protocol::PlayerId;
use lockstep_topple::{Physics, PhysicsSettings};

/// The committed table, compiled in so the test cannot read a stale copy.
const TABLE: &str = include_str!("../golden-hashes.txt");

fn game(row: &Row) -> Physics {
    let setup = Setup {
        seed: row.seed,
        tick_rate: 60,
        settings: PhysicsSettings {
            bodies: row.setting,
        },
        players: (0..row.players).map(PlayerId).collect(),
    };
    offline::<Physics>(&setup, row.ticks)
}

fn table() -> Vec<Row> {
    golden::parse(TABLE, "bodies").unwrap_or_else(|error| panic!("{error}"))
}

#[test]
fn every_golden_scenario_reproduces_its_pinned_hash() {
    let checked = golden::check(
        &table(),
        "games/topple/golden-hashes.txt",
        "bodies",
        |row| game(row).hash(),
    );
    if let Err(report) = checked {
        panic!("{report}");
    }
}

#[test]
fn the_table_spans_players_body_counts_and_a_minute_of_contacts_and_scores() {
    let table = table();
    for players in [1, 2, 4, 8] {
        assert!(
            table.iter().any(|r| r.players == players),
            "no row with {players} players"
        );
    }
    for bodies in [0, PhysicsSettings::default().bodies, 300] {
        assert!(
            table.iter().any(|r| r.setting == bodies),
            "no row with {bodies} bodies"
        );
    }
    let long = table
        .iter()
        .filter(|r| r.ticks >= 3600 && r.setting >= 160)
        .max_by_key(|r| r.ticks)
        .expect("a game of a minute or more with 160 bodies");
    let end = game(long);
    let scored: u32 = end.rams().iter().map(|r| r.score).sum();
    assert!(scored >= 20, "the long game scores only {scored}");
    assert!(
        end.touching_pairs() >= 150,
        "{} contacts",
        end.touching_pairs()
    );
}
