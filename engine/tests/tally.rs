//! The engine drives a game it has never seen: two Tally clients in
//! lockstep over an in-memory relay (the example's own code).

#[allow(dead_code, reason = "shared with the example")]
#[path = "../../games/tally/src/game.rs"]
mod game;
#[path = "../examples/tally/lockstep.rs"]
mod lockstep;

use lockstep_engine::{apply, Game, Setup};
use lockstep_protocol::PlayerId;

use game::Tally;

/// The state every bundle the relay made leads to, simulated straight.
fn straight(bundles: &[lockstep_protocol::Bundle]) -> Tally {
    let mut game = Tally::start(&Setup {
        seed: 7,
        tick_rate: 60,
        settings: (),
        players: vec![PlayerId(0), PlayerId(1)],
    });
    for bundle in bundles {
        apply(&mut game, bundle);
    }
    game
}

#[test]
fn two_clients_end_on_the_same_state_as_a_straight_run_of_the_bundles() {
    let outcome = lockstep::play(600, 3, 1);
    let [a, b] = &outcome.clients[..] else {
        panic!("two clients");
    };
    assert_eq!(a.current.tick().0, 600);
    assert_eq!(a.current, b.current);
    let reference = straight(&outcome.bundles[..600]);
    assert_eq!(a.current.hash(), reference.hash());
    // Both players' inputs made it into the game.
    assert!(outcome.bundles[100].inputs.len() == 2);
}

#[test]
fn a_delay_that_covers_the_latency_stalls_only_for_the_first_bundle() {
    // Tick 0 waits for the first bundle's trip; after that, inputs sent
    // four ticks ahead arrive in time.
    let covered = lockstep::play(300, 4, 1);
    assert!(covered.clients.iter().all(|c| c.stats().stalled_ticks == 1));
    let short = lockstep::play(300, 1, 3);
    assert!(short.clients.iter().all(|c| c.stats().stalled_ticks > 0));
    // Stalling never changes the outcome, only when ticks run.
    assert_eq!(short.clients[0].current, short.clients[1].current);
    assert_eq!(
        short.clients[0].current.hash(),
        straight(&short.bundles[..300]).hash()
    );
}
