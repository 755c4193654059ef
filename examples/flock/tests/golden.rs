//! The flock's golden table, `golden-hashes.txt`: every pinned offline
//! game must still end on its pinned hash, here and on every target and
//! build lockstep's scripts run it on. And the self-test the game pins.

use flock::{Flock, FlockSettings, SELF_TEST};
use lockstep_engine::golden::{self, Row};
use lockstep_engine::{offline, Game, HasBots, Setup};
use lockstep_protocol::PlayerId;

/// The committed table, compiled in so the test cannot read a stale copy.
const TABLE: &str = include_str!("../golden-hashes.txt");

fn game(row: &Row) -> Flock {
    let setup = Setup {
        seed: row.seed,
        tick_rate: 60,
        settings: FlockSettings { boids: row.setting },
        players: (0..row.players).map(PlayerId).collect(),
    };
    offline::<Flock>(&setup, row.ticks)
}

#[test]
fn every_golden_scenario_reproduces_its_pinned_hash() {
    let table = golden::parse(TABLE, "boids").unwrap_or_else(|error| panic!("{error}"));
    assert!(table.len() >= 4, "a table of a few rows");
    let checked = golden::check(&table, "examples/flock/golden-hashes.txt", "boids", |row| {
        game(row).hash()
    });
    if let Err(report) = checked {
        panic!("{report}");
    }
}

#[test]
fn the_self_test_is_the_pinned_one() {
    assert_eq!(
        Flock::self_test(),
        SELF_TEST,
        "the self-test is {:016x}; pin it in src/lib.rs only in a reviewed change",
        Flock::self_test()
    );
    assert_eq!(Flock::SELF_TEST_PIN, Some(SELF_TEST));
}
