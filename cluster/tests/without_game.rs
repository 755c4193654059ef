//! A game the server was not built with, in memory: the server knows only
//! its name and the settings as the host gave them, and the same game
//! comes out as from a server built with it.

use std::time::Duration;

use lockstep_balls::World;
use lockstep_cluster::{ClientSpec, Cluster};
use lockstep_engine::{Hosted, HostedGame};
use lockstep_protocol::{GameSpec, Settings};
use lockstep_server::Config;

static BALLS: Hosted<World> = Hosted::new();

/// The final lines of three bots playing 300 ticks on a server of `config`.
fn finals(config: Config) -> Vec<String> {
    let mut cluster = Cluster::<World>::new(
        Config {
            players: 3,
            seed: 5,
            ..config
        },
        1,
    );
    let names = ["bot0", "bot1", "bot2"];
    for name in names {
        cluster.join(ClientSpec::player(name, 300));
    }
    assert!(
        cluster.run_until_closed(Duration::from_secs(60)),
        "{}",
        cluster.log()
    );
    let log = cluster.log();
    names
        .iter()
        .flat_map(|n| log.lines(n, "final"))
        .map(str::to_string)
        .collect()
}

/// Real time: about 0.3 s in a debug build
/// (`cargo test -p lockstep-cluster --test without_game`).
#[test]
fn a_server_without_the_game_carries_its_settings_as_given_and_the_game_is_the_same() {
    let pairs = vec![("balls".to_string(), "12".to_string())];
    let given = GameSpec {
        name: "balls".into(),
        settings: Settings::Given(pairs.clone()),
    };
    let without = finals(Config::without_game(given));
    assert_eq!(without.len(), 3, "{without:?}");
    assert!(without.iter().all(|l| *l == without[0]), "{without:?}");
    let with = finals(Config {
        spec: BALLS.parse_settings(&pairs).unwrap(),
        ..Config::new(&BALLS)
    });
    assert_eq!(with, without, "the same game either way");
    // And not the default game: the settings were applied.
    let default = finals(Config::new(&BALLS));
    assert_ne!(default[0], without[0]);
}
