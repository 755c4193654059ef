//! Real networks: players reconnecting, spectators joining late, and the
//! server disappearing, with real processes over QUIC on loopback.

use std::time::Duration;

use lockstep_testkit::{signal, wait_for_bundles, Client, Server};

#[test]
fn a_bot_killed_with_sigkill_reconnects_under_its_name_and_ends_on_the_same_hash() {
    let _serial = lockstep_testkit::one_at_a_time();
    let mut server = Server::start(3, &["--seed", "51"]);
    let mut clients: Vec<Client> = (0..3)
        .map(|i| Client::headless_bot(&server, &format!("bot{i}"), 60 + i, 900))
        .collect();
    server.wait_for("start players=", Duration::from_secs(10));
    wait_for_bundles(&server.recording_path(), 180);
    let victim = clients.remove(1);
    signal(victim.child.id(), "KILL");
    drop(victim);
    let comeback = Client::headless_bot(&server, "bot1", 61, 900);
    let rejoined = server.wait_for("rejoined player=", Duration::from_secs(15));
    assert!(rejoined.contains("name=bot1"), "{rejoined}");
    let dropped = server.wait_for("dropped player=", Duration::from_secs(1));
    assert!(dropped.contains("name=bot1"), "{dropped}");

    let back = comeback.finish(Duration::from_secs(60));
    assert!(
        back.stderr.contains("caught up with the game at tick"),
        "{}",
        back.stderr
    );
    let mut finals = vec![back.final_line()];
    for client in clients {
        finals.push(client.finish(Duration::from_secs(60)).final_line());
    }
    assert!(finals.iter().all(|f| *f == finals[0]), "{finals:?}");
    assert_eq!(finals[0].0, 900);
}

/// A bot ended with SIGTERM says goodbye: the server lets its slot go at
/// once, not after its drop timeout (ten minutes here), and the others
/// play on to the end on one hash.
#[test]
fn a_bot_stopped_with_sigterm_leaves_with_a_goodbye_and_the_game_goes_on() {
    let _serial = lockstep_testkit::one_at_a_time();
    let mut server = Server::start(3, &["--seed", "53", "--drop-timeout-ms", "600000"]);
    let mut clients: Vec<Client> = (0..3)
        .map(|i| Client::headless_bot(&server, &format!("bot{i}"), 70 + i, 900))
        .collect();
    server.wait_for("start players=", Duration::from_secs(10));
    let replay = server.recording_path();
    let deadline = lockstep_testkit::clock::now() + Duration::from_secs(60);
    while lockstep_testkit::read_replay(&replay).bundles.len() < 120 {
        assert!(lockstep_testkit::clock::now() < deadline, "no tick 120");
        std::thread::sleep(Duration::from_millis(20));
    }
    let leaver = clients.remove(1);
    signal(leaver.child.id(), "TERM");
    let dropped = server.wait_for("dropped player=", Duration::from_secs(60));
    assert!(dropped.contains("name=bot1"), "{dropped}");
    assert!(dropped.contains("reason=left"), "{dropped}");
    let left = leaver.finish(Duration::from_secs(60));
    assert!(!left.success);
    assert!(
        left.stderr.contains("stopped by a signal: left the game"),
        "{}",
        left.stderr
    );
    let finals: Vec<(u32, String)> = clients
        .into_iter()
        .map(|c| c.finish(Duration::from_secs(120)).final_line())
        .collect();
    assert_eq!(finals[0], finals[1]);
    assert_eq!(finals[0].0, 900);
}

#[test]
fn a_bot_waiting_in_the_lobby_leaves_on_sigterm_and_frees_its_slot() {
    let _serial = lockstep_testkit::one_at_a_time();
    // A long drop timeout: only the goodbye can free the slot in time.
    let mut server = Server::start(2, &["--seed", "54", "--drop-timeout-ms", "600000"]);
    let waiting = Client::headless_bot(&server, "early", 80, 60);
    let joined = server.wait_for("joined player=", Duration::from_secs(60));
    assert!(joined.contains("name=early"), "{joined}");
    signal(waiting.child.id(), "TERM");
    let left = waiting.finish(Duration::from_secs(60));
    assert!(!left.success);
    assert!(
        left.stderr.contains("stopped by a signal: left the game"),
        "{}",
        left.stderr
    );
    let late: Vec<Client> = [81, 82]
        .map(|seed| Client::headless_bot(&server, &format!("late{seed}"), seed, 60))
        .into();
    let start = server.wait_for("start players=", Duration::from_secs(60));
    assert!(
        start.contains("late81") && start.contains("late82") && !start.contains("early"),
        "{start}"
    );
    let finals: Vec<(u32, String)> = late
        .into_iter()
        .map(|c| c.finish(Duration::from_secs(60)).final_line())
        .collect();
    assert_eq!(finals[0], finals[1]);
}

#[test]
fn a_spectator_joining_mid_game_ends_on_the_players_hash() {
    let _serial = lockstep_testkit::one_at_a_time();
    let mut server = Server::start(2, &["--seed", "52"]);
    let players: Vec<Client> = (0..2)
        .map(|i| Client::headless_bot(&server, &format!("p{i}"), i, 600))
        .collect();
    server.wait_for("start players=", Duration::from_secs(10));
    wait_for_bundles(&server.recording_path(), 180);
    let spectator = Client::spawn(
        "watcher",
        lockstep_testkit::headless(&server, "watcher").args(["--spectate", "--ticks", "600"]),
    );
    let watched = spectator.finish(Duration::from_secs(60));
    let finals: Vec<(u32, String)> = players
        .into_iter()
        .map(|p| {
            // That the relay never waits for a spectator is the session's
            // rule, tested on its own clock (session/tests.rs): here the
            // players' stalls would measure the machine's load.
            p.finish(Duration::from_secs(60)).final_line()
        })
        .collect();
    assert_eq!(finals[0], finals[1]);
    assert_eq!(watched.final_line(), finals[0]);
    assert!(
        watched.stderr.contains("caught up with the game"),
        "{}",
        watched.stderr
    );
}

#[test]
fn clients_that_do_not_reconnect_stop_with_a_clear_message_when_the_server_is_killed() {
    let _serial = lockstep_testkit::one_at_a_time();
    let mut server = Server::start(2, &["--seed", "53"]);
    let clients: Vec<Client> = (0..2)
        .map(|i| {
            let name = format!("b{i}");
            Client::spawn(
                &name,
                lockstep_testkit::headless_bot(&server, &name, i, 100_000)
                    .args(["--reconnect-secs", "0"]),
            )
        })
        .collect();
    server.wait_for("start players=", Duration::from_secs(10));
    wait_for_bundles(&server.recording_path(), 120);
    signal(server.child.id(), "KILL");
    for client in clients {
        let finished = client.finish(Duration::from_secs(20));
        assert!(!finished.success);
        assert!(!finished.stdout.contains("final"), "{}", finished.stdout);
        let last = finished.stderr.lines().last().unwrap_or_default();
        assert!(
            last.starts_with("lockstep-client: lost the server"),
            "{}",
            finished.stderr
        );
    }
}

#[test]
fn three_bots_at_20_ms_jitter_and_5_percent_loss_finish_in_lockstep() {
    let _serial = lockstep_testkit::one_at_a_time();
    let mut server = Server::start(3, &["--seed", "54"]);
    let clients: Vec<Client> = (0..3)
        .map(|i| {
            let mut command = lockstep_testkit::headless(&server, &format!("lossy{i}"));
            command
                .args(["--bot", &i.to_string(), "--ticks", "600"])
                .args(["--sim-latency-ms", "20", "--sim-jitter-ms", "5"])
                .args(["--sim-loss-pct", "5", "--sim-seed", &(100 + i).to_string()]);
            Client::spawn(&format!("lossy{i}"), &mut command)
        })
        .collect();
    server.wait_for("start players=", Duration::from_secs(20));
    let finished: Vec<_> = clients
        .into_iter()
        .map(|c| c.finish(Duration::from_secs(60)))
        .collect();
    let finals: Vec<(u32, String)> = finished.iter().map(|f| f.final_line()).collect();
    assert!(finals.iter().all(|f| *f == finals[0]), "{finals:?}");
    assert_eq!(finals[0].0, 600);
    // The impairment is real: quinn measured the added round trip.
    for f in &finished {
        assert!(f.stat("rtt_us") >= 35_000, "{}", f.stdout);
    }
}
