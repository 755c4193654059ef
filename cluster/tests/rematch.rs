//! Games back to back on one connection, in memory: the protocol half of
//! `server/tests/rematch.rs`, whose replay files and client output stay
//! tested there over real QUIC.

use std::time::Duration;

use lockstep_balls::World;
use lockstep_cluster::{field, ClientSpec, Cluster, SERVER};
use lockstep_engine::Hosted;
use lockstep_server::Config;

static BALLS: Hosted<World> = Hosted::new();

/// Real time: about 0.2 s in a debug build
/// (`cargo test -p lockstep-cluster --test rematch`).
#[test]
fn cluster_bots_play_two_games_back_to_back_each_on_one_hash_with_a_new_seed() {
    let mut cluster = Cluster::<World>::new(
        Config {
            players: 3,
            seed: 5,
            ..Config::new(&BALLS)
        },
        1,
    );
    let names = ["bot0", "bot1", "bot2"];
    for name in names {
        cluster.join(ClientSpec {
            games: 2,
            ..ClientSpec::player(name, 300)
        });
    }
    assert!(
        cluster.run_until_closed(Duration::from_secs(60)),
        "{}",
        cluster.log()
    );
    let log = cluster.log();
    let finals: Vec<Vec<&str>> = names.iter().map(|n| log.lines(n, "final")).collect();
    assert_eq!(finals[0].len(), 2, "{log}");
    assert!(finals.iter().all(|f| *f == finals[0]), "{finals:?}");
    assert!(finals[0].iter().all(|l| field(l, "tick") == Some("300")));
    assert_ne!(finals[0][0], finals[0][1], "a new seed, a new game");

    let seeds: Vec<&str> = log
        .lines(SERVER, "start players=")
        .into_iter()
        .filter_map(|l| field(l, "seed"))
        .collect();
    assert_eq!(seeds.len(), 2, "{log}");
    assert_eq!(seeds[0], "5");
    assert_ne!(seeds[0], seeds[1]);
    assert_eq!(log.lines(SERVER, "game over").len(), 2, "{log}");
    // Every bot finished the first game on purpose and left after the
    // second; nobody left before the end.
    let reasons: Vec<&str> = log
        .lines(SERVER, "dropped")
        .into_iter()
        .filter_map(|l| field(l, "reason"))
        .collect();
    assert_eq!(
        reasons,
        ["finished", "finished", "finished", "left", "left", "left"]
    );
}
