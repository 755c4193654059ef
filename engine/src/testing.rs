//! The second shipped game, shared by the engine's unit tests: the tests
//! drive the same Tally that `games/tally` ships.

use lockstep_protocol::{Buttons, Input, PlayerId, PlayerInput, Replay, RosterEntry, Tick};

pub(crate) use tally::Tally;

use crate::game::{Game, Setup};

#[allow(
    dead_code,
    reason = "the game crate uses every item; the tests only some"
)]
#[path = "../../games/tally/src/game.rs"]
mod tally;

/// A Tally of `players` players stepped `ticks` times, each player holding
/// the buttons of its id plus the tick.
pub(crate) fn play(players: u8, ticks: u32) -> Tally {
    let mut game = Tally::start(&setup(players));
    for _ in 0..ticks {
        let inputs = inputs_at(&game, players);
        game.step(&inputs);
    }
    game
}

/// The setup of a `players`-player Tally, seed 7, 60 Hz.
pub(crate) fn setup(players: u8) -> Setup<()> {
    Setup {
        seed: 7,
        tick_rate: 60,
        settings: (),
        players: (0..players).map(PlayerId).collect(),
    }
}

/// The inputs [`play`] uses at `game`'s tick.
pub(crate) fn inputs_at(game: &Tally, players: u8) -> Vec<PlayerInput> {
    (0..players)
        .map(|p| PlayerInput {
            player: PlayerId(p),
            input: Input {
                buttons: Buttons(p.wrapping_add(game.tick().0 as u8) & 0x1f),
                axes: None,
            },
        })
        .collect()
}

/// Tally without settings, as a Start names it.
pub(crate) fn spec() -> lockstep_protocol::GameSpec {
    crate::spec_of::<Tally>(&())
}

/// A replay of a three-player Tally of ann, bob and cy with `hashes`
/// reported (tick, player, hash) and nothing else: no bundles, no events.
pub(crate) fn reported(hashes: &[(u32, PlayerId, u64)]) -> Replay {
    let roster = ["ann", "bob", "cy"]
        .iter()
        .enumerate()
        .map(|(i, name)| RosterEntry {
            id: PlayerId(i as u8),
            name: (*name).into(),
        })
        .collect();
    Replay {
        header: crate::replay::recorder::solo_header::<Tally>(&setup(3), roster, 0),
        bundles: Vec::new(),
        hashes: hashes.iter().map(|&(t, p, h)| (Tick(t), p, h)).collect(),
        departures: Vec::new(),
        end: None,
        format: lockstep_protocol::REPLAY_FORMAT,
        statuses: Vec::new(),
        events: Vec::new(),
    }
}
