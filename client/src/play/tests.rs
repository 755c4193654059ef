//! A game of a series: its options, its snapshot.

use std::path::PathBuf;

use lockstep_protocol::{encode, Start, Tick, MAX_SNAPSHOT_SIZE};

use super::*;
use crate::hooks::PlayHooks;
use crate::play::notice::Notices;

fn series(record: Option<&str>) -> PlayOptions {
    PlayOptions {
        bot: Some(1),
        ticks: Some(300),
        games: 3,
        auto_ready: true,
        dump_dir: PathBuf::from("desync"),
        game: Default::default(),
        record: record.map(PathBuf::from),
        hooks: PlayHooks::default(),
        notices: Notices::default(),
    }
}

#[test]
fn each_game_of_a_series_records_to_a_file_of_its_own() {
    let options = series(Some("out/ada.lsreplay"));
    let files: Vec<Option<PathBuf>> = (1..=3).map(|g| options.for_game(g).record).collect();
    assert_eq!(
        files,
        [
            Some(PathBuf::from("out/ada.lsreplay")),
            Some(PathBuf::from("out/ada-game2.lsreplay")),
            Some(PathBuf::from("out/ada-game3.lsreplay")),
        ]
    );
    assert_eq!(
        series(Some("plain")).for_game(2).record,
        Some(PathBuf::from("plain-game2"))
    );
    assert_eq!(series(None).for_game(2).record, None);
}

#[test]
fn only_the_last_game_of_a_series_leaves() {
    let options = series(None);
    assert!(!options.is_last(1));
    assert!(!options.is_last(2));
    assert!(options.is_last(3));
}

#[test]
fn snapshot_bytes_that_are_not_the_majoritys_state_of_the_starts_tick_are_refused() {
    use lockstep_engine::{spec_of, Game, Setup};
    use lockstep_tally::Tally;

    let start = |tick: u32, hash: u64| Start {
        seed: 1,
        tick_rate: 60,
        input_delay: 3,
        spec: spec_of::<Tally>(&()),
        roster: Vec::new(),
        hash_interval: 60,
        you: None,
        first_input_tick: Tick(0),
        history: 0,
        snapshot: Some(Tick(tick)),
        snapshot_hash: Some(hash),
        resume: None,
    };
    let state = Tally::start(&Setup {
        seed: 1,
        tick_rate: 60,
        settings: (),
        players: Vec::new(),
    });
    let bytes = encode(&state, MAX_SNAPSHOT_SIZE as usize).unwrap();
    // The play loop's check of the server's snapshot.
    let snapshot_state =
        |start: &Start, bytes: &[u8]| NetGame::<Tally>::snapshot_world(start, bytes);
    let joined: Tally = snapshot_state(&start(0, state.hash()), &bytes).unwrap();
    assert_eq!(joined.hash(), state.hash());
    assert_eq!(
        snapshot_state(&start(30, state.hash()), &bytes).err(),
        Some(
            "the snapshot of tick 30 is not the majority's tally world: it is a state of tick 0"
                .into()
        )
    );
    let off = state.hash() ^ 1;
    assert_eq!(
        snapshot_state(&start(0, off), &bytes).err(),
        Some(format!(
            "the snapshot of tick 0 is not the majority's tally world: it hashes to {:016x}, \
             the majority reported {off:016x}",
            state.hash()
        ))
    );
    let Err(garbage) = snapshot_state(&start(30, off), &[0xff; 8]) else {
        panic!("garbage taken for a state");
    };
    assert!(
        garbage.starts_with("the snapshot of tick 30 is not the majority's tally world: "),
        "{garbage}"
    );
}
