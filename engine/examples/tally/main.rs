//! Tally, the smallest game on the lockstep engine: `cargo run -p
//! lockstep-engine --example tally`.
//!
//! The game is a few dozen lines (`games/tally/src/game.rs`, shipped as
//! the crate `lockstep-tally`). Implementing
//! `lockstep_engine::Game` is all it takes to get the sync test, which
//! proves its snapshot and hash cover its whole state, and lockstep play:
//! two clients with the engine's gate, accumulator and input delay, over
//! an in-memory relay (`lockstep.rs`), end on the same state.

#[allow(
    dead_code,
    reason = "the game crate uses every item; the example only some"
)]
#[path = "../../../games/tally/src/game.rs"]
mod game;
mod lockstep;

use lockstep_engine::determinism::synctest;
use lockstep_engine::Game;
use lockstep_protocol::{Buttons, Input, PlayerId, PlayerInput};

use game::Tally;

fn main() -> Result<(), synctest::SyncTestError> {
    let setup = lockstep_engine::Setup {
        seed: 7,
        tick_rate: 60,
        settings: (),
        players: vec![PlayerId(0), PlayerId(1)],
    };
    let pressing = |game: &Tally| {
        vec![PlayerInput {
            player: PlayerId(0),
            input: Input {
                buttons: Buttons(game.tick().0 as u8 & 0x1f),
                axes: None,
            },
        }]
    };
    let checked = synctest::check(Tally::start(&setup), pressing, 600, 7)?;
    println!(
        "sync test: 600 ticks at distance 7 passed, hash {:016x}",
        checked.hash()
    );

    let outcome = lockstep::play(600, 4, 1);
    println!(
        "lockstep: the in-memory relay bundled {} ticks",
        outcome.bundles.len()
    );
    for client in &outcome.clients {
        println!(
            "client {}: tick {} hash {:016x}, {} stalled ticks",
            client.name(),
            client.current.tick(),
            client.current.hash(),
            client.stats().stalled_ticks
        );
    }
    Ok(())
}
