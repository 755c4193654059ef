//! The whole system in memory: each scenario runs a server session and
//! bot clients on the cluster's simulated clock and reads the event log.
//! The real time each takes is measured with
//! `cargo test -p lockstep-cluster --test scenarios -- --test-threads=1`
//! (debug build, on the development machine).

use std::time::Duration;

use lockstep_balls::World;
use lockstep_cluster::{field, ClientId, ClientSpec, Cluster, Log, SERVER};
use lockstep_conditioner::{GilbertElliott, LinkConfig};
use lockstep_engine::lockstep::net_game::{Fault, GameOptions};
use lockstep_engine::{Game, HasBots, Hosted};
use lockstep_protocol::Tick;
use lockstep_server::{Config, ResumedGame};
use lockstep_tally::Tally;

static BALLS: Hosted<World> = Hosted::new();
static TALLY: Hosted<Tally> = Hosted::new();

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

/// A path with `latency` one way, 5 ms of jitter and `loss` of the
/// datagrams lost in bursts of four on average.
fn lossy(latency_ms: u64, loss: f64) -> LinkConfig {
    LinkConfig {
        latency: Duration::from_millis(latency_ms),
        jitter: Duration::from_millis(5),
        burst: Some(GilbertElliott::from_average_loss(loss, 4.0).expect("valid burst")),
        ..LinkConfig::default()
    }
}

/// The tick and hash each client ended its game on.
fn finals<G: HasBots>(cluster: &Cluster<G>, clients: &[ClientId]) -> Vec<(Tick, u64)> {
    clients
        .iter()
        .map(|&c| cluster.final_hash(c).expect("the client finished its game"))
        .collect()
}

/// Asserts that every client ended on the same tick and hash.
fn assert_one_hash(finals: &[(Tick, u64)], log: &Log) {
    assert!(finals.windows(2).all(|w| w[0] == w[1]), "{finals:?}\n{log}");
}

/// `n` players of `G` on `link`, each playing `ticks`; run until all left.
fn players<G: HasBots>(
    config: Config,
    seed: u64,
    names: &[&str],
    ticks: u32,
    link: LinkConfig,
) -> (Cluster<G>, Vec<ClientId>) {
    let mut cluster = Cluster::<G>::new(
        Config {
            players: names.len() as u8,
            ..config
        },
        seed,
    );
    let ids = names
        .iter()
        .map(|name| cluster.join(ClientSpec::player(name, ticks).on(link)))
        .collect();
    (cluster, ids)
}

/// Real time: 0.56 to 0.64 s (the cluster crate is built optimised in
/// the dev profile; 0.77 s without), 60 s of play, every bundle and input
/// through the codec.
#[test]
fn cluster_four_players_with_five_percent_bursty_loss_end_3600_ticks_on_one_hash() {
    let (mut cluster, ids) = players::<Tally>(
        Config::new(&TALLY),
        11,
        &["ann", "bob", "cat", "dan"],
        3600,
        lossy(5, 0.05),
    );
    assert!(cluster.run_until_closed(secs(120)), "{}", cluster.log());
    let finals = finals(&cluster, &ids);
    assert_eq!(finals[0].0, Tick(3600));
    assert_one_hash(&finals, cluster.log());
    let log = cluster.log();
    assert!(log.any("stalled"), "the loss never held a tick up:\n{log}");
    assert!(log.lines(SERVER, "verdict agreed").len() == 1, "{log}");
    assert!(log
        .lines(SERVER, "dropped")
        .iter()
        .all(|l| l.ends_with("reason=left")));
}

/// Two players on a lossy path, 600 ticks, with network seed `seed`.
fn lossy_run(seed: u64) -> Log {
    let (mut cluster, _) = players::<Tally>(
        Config::new(&TALLY),
        seed,
        &["ann", "bob"],
        600,
        lossy(10, 0.1),
    );
    assert!(cluster.run_until_closed(secs(60)), "{}", cluster.log());
    cluster.log().clone()
}

/// Real time: about 0.14 s.
#[test]
fn cluster_the_same_seed_gives_the_same_event_log_and_another_seed_another() {
    let first = lossy_run(5);
    assert_eq!(first, lossy_run(5));
    assert_ne!(first, lossy_run(6));
}

/// Real time: about 0.2 s.
#[test]
fn cluster_a_late_joiner_starts_from_a_snapshot_the_server_verified_and_ends_on_the_players_hash() {
    let config = Config {
        snapshot_secs: 1,
        ..Config::new(&BALLS)
    };
    let (mut cluster, mut ids) = players::<World>(config, 3, &["ann", "bob"], 600, lossy(10, 0.02));
    cluster.run_for(secs(4));
    let sam = cluster.join(ClientSpec {
        spectate: true,
        ..ClientSpec::player("sam", 600).on(lossy(10, 0.02))
    });
    ids.push(sam);
    assert!(cluster.run_until_closed(secs(60)), "{}", cluster.log());
    let log = cluster.log();
    let started = log.lines("sam", "started");
    let from: u32 = field(started[0], "snapshot")
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("sam did not start from a snapshot:\n{log}"));
    // A snapshot the server asked the players for, and so checked against
    // the hash they reported, taken after the game began.
    assert!(from >= 60, "{log}");
    let asked = [
        log.lines("ann", "snapshot sent"),
        log.lines("bob", "snapshot sent"),
    ]
    .concat();
    assert!(
        asked
            .iter()
            .any(|l| field(l, "tick") == Some(&from.to_string())),
        "{log}"
    );
    assert_one_hash(&finals(&cluster, &ids), log);
}

/// Real time: about 0.1 s.
#[test]
fn cluster_a_frozen_player_is_stood_in_for_while_the_others_play_on_then_comes_back() {
    let (mut cluster, ids) = players::<Tally>(
        Config::new(&TALLY),
        9,
        &["ann", "bob", "cat"],
        600,
        lossy(10, 0.0),
    );
    cluster.run_for(secs(3));
    let before = cluster.game(ids[0]).expect("ann plays").current.tick();
    cluster.freeze(ids[1], Duration::from_millis(600));
    cluster.run_for(Duration::from_millis(600));
    let after = cluster.game(ids[0]).expect("ann plays").current.tick();
    // 36 ticks of wall time: the others lose at most a few to waiting.
    assert!(
        after.since(before) >= 30,
        "{before} to {after}\n{}",
        cluster.log()
    );
    assert!(cluster.run_until_closed(secs(60)), "{}", cluster.log());
    let log = cluster.log();
    let substituted = log.lines(SERVER, "substituted player=1 name=bob");
    assert!(!substituted.is_empty(), "{log}");
    // The bundles said so: bob's own game saw its input stood in for.
    assert!(!log.lines("bob", "stood in for").is_empty(), "{log}");
    assert!(
        log.lines(SERVER, "dropped player=1 name=bob tick")
            .iter()
            .all(|l| l.ends_with("reason=left")),
        "{log}"
    );
    assert!(!log.lines("bob", "own input again").is_empty(), "{log}");
    assert_one_hash(&finals(&cluster, &ids), log);
}

/// Real time: about 0.2 s.
#[test]
fn cluster_a_server_that_dies_resumes_from_its_replay_and_its_players_finish_on_one_hash() {
    let dir = std::env::temp_dir().join(format!("lockstep-cluster-resume-{}", std::process::id()));
    let config = Config {
        replay_dir: Some(dir.clone()),
        ..Config::new(&TALLY)
    };
    let (mut cluster, ids) = players::<Tally>(
        config.clone(),
        4,
        &["ann", "bob", "cat"],
        900,
        lossy(10, 0.02),
    );
    cluster.run_for(secs(5));
    let recording = cluster.log().lines(SERVER, "recording path=")[0].to_string();
    let path = std::path::PathBuf::from(field(&recording, "path").expect("a path"));
    cluster.kill_server();
    let game = ResumedGame::load(&path).expect("the replay of the dead server loads");
    let resumed_at = game.next_tick();
    assert!(resumed_at > Tick(200), "{resumed_at}");
    cluster.start_server(Config {
        resume: Some(game),
        ..config
    });
    assert!(cluster.run_until_closed(secs(60)), "{}", cluster.log());
    let log = cluster.log();
    assert_eq!(log.lines(SERVER, "resuming").len(), 1, "{log}");
    assert_eq!(log.lines(SERVER, "reconnected").len(), 3, "{log}");
    assert_eq!(log.lines(SERVER, "resumed").len(), 1, "{log}");
    for name in ["ann", "bob", "cat"] {
        assert_eq!(log.lines(name, "reconnecting").len(), 1, "{log}");
        assert_eq!(log.lines(name, "resumed").len(), 1, "{log}");
    }
    let finals = finals(&cluster, &ids);
    assert_eq!(finals[0].0, Tick(900));
    assert_one_hash(&finals, log);
    std::fs::remove_dir_all(&dir).expect("the temp dir goes");
}

/// Real time: about 0.1 s.
#[test]
fn cluster_a_desync_is_pinpointed_by_the_server_to_its_first_tick() {
    let mut cluster = Cluster::<World>::new(
        Config {
            players: 3,
            ..Config::new(&BALLS)
        },
        2,
    );
    let link = lossy(10, 0.02);
    cluster.join(ClientSpec::player("ann", 300).on(link));
    cluster.join(ClientSpec {
        game: GameOptions {
            fault: Some(Fault {
                tick: Tick(100),
                phase: None,
                value: None,
            }),
            ..GameOptions::default()
        },
        ..ClientSpec::player("bob", 300).on(link)
    });
    cluster.join(ClientSpec::player("cat", 300).on(link));
    assert!(cluster.run_until_closed(secs(30)), "{}", cluster.log());
    let log = cluster.log();
    // Hashes are compared every 15 ticks: the first report that differs is
    // tick 105, and the per-tick hashes put the start at 100.
    assert_eq!(
        log.lines(SERVER, "desync"),
        vec!["desync tick=105 diverged=bob first=100"],
        "{log}"
    );
    for name in ["ann", "bob", "cat"] {
        assert_eq!(
            log.lines(name, "pinpointed"),
            vec!["pinpointed tick=105 first=100"]
        );
    }
    let ann = cluster.final_hash(ClientId(0));
    assert_ne!(ann, cluster.final_hash(ClientId(1)));
    assert_eq!(ann, cluster.final_hash(ClientId(2)));
}

/// Three players of the ball game, 1200 ticks, with a verified snapshot
/// every `snapshot_secs`; bob's whole process stops for 7 s once the game
/// has run 3 s: past the server's drop timeout (2 s) and past QUIC's idle
/// timeout (5 s), so the server drops him and, going on, he finds the
/// server lost and reconnects. Returns the cluster, run until everyone
/// left, and bob's tick when he stopped, after checking that he came back
/// into his slot and that all three ended 1200 ticks on one hash.
fn stop_bob_past_the_timeouts(snapshot_secs: u16) -> (Cluster<World>, Tick) {
    let config = Config {
        snapshot_secs,
        ..Config::new(&BALLS)
    };
    let (mut cluster, ids) =
        players::<World>(config, 8, &["ann", "bob", "cat"], 1200, lossy(10, 0.0));
    cluster.run_for(secs(3));
    let stopped_at = cluster.game(ids[1]).expect("bob plays").current.tick();
    cluster.stop(ids[1], secs(7));
    assert!(cluster.run_until_closed(secs(60)), "{}", cluster.log());
    let log = cluster.log();
    let dropped = log.lines(SERVER, "dropped player=1 name=bob");
    assert!(
        dropped.first().is_some_and(|l| !l.ends_with("reason=left")),
        "{log}"
    );
    assert_eq!(
        log.lines(SERVER, "rejoined player=1 name=bob").len(),
        1,
        "{log}"
    );
    assert_eq!(
        log.lines("bob", "reconnecting"),
        vec!["reconnecting lost the server: nothing heard from it for 7 s"],
        "{log}"
    );
    let finals = finals(&cluster, &ids);
    assert_eq!(finals[0].0, Tick(1200));
    assert_one_hash(&finals, log);
    (cluster, stopped_at)
}

/// With no snapshot before the game ends, the server still holds every
/// bundle bob lacks: he goes on with his own world from where he was.
/// The process test in `server/tests/resume.rs` plays it with SIGSTOP.
/// Real time: about 0.3 s.
#[test]
fn cluster_a_player_stopped_past_the_timeouts_reconnects_with_his_world_and_gets_the_bundles_he_lacks(
) {
    let (cluster, _) = stop_bob_past_the_timeouts(60);
    let log = cluster.log();
    let resumed = log.lines("bob", "resumed");
    assert_eq!(resumed.len(), 1, "{log}");
    let from: usize = field(resumed[0], "from")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no bundle count: {log}"));
    assert!(from > 0, "{log}");
    assert_eq!(log.lines("bob", "started").len(), 1, "{log}");
}

/// With a snapshot every 2 s, by the time bob is back the server keeps
/// only the bundles since the last one: he starts again from it, like a
/// player who rejoins. Real time: about 0.3 s.
#[test]
fn cluster_a_player_stopped_past_the_timeouts_whose_bundles_the_server_let_go_rejoins_from_the_snapshot(
) {
    let (cluster, stopped_at) = stop_bob_past_the_timeouts(2);
    let log = cluster.log();
    assert!(log.lines("bob", "resumed").is_empty(), "{log}");
    let started = log.lines("bob", "started");
    assert_eq!(started.len(), 2, "{log}");
    let from: u32 = field(started[1], "snapshot")
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("bob did not start again from a snapshot:\n{log}"));
    // A snapshot taken while he was away.
    assert!(from > stopped_at.0, "{stopped_at} {log}");
}
