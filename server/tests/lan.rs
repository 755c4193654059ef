//! A server and headless clients over real QUIC on loopback, as separate
//! processes.

use std::process::Command;
use std::time::Duration;

use lockstep_testkit::{client_bin, Client, Server};

#[test]
fn three_bots_finish_600_ticks_on_the_same_hash() {
    let mut server = Server::start(3, &["--seed", "11"]);
    let clients: Vec<Client> = (0..3)
        .map(|i| Client::headless_bot(&server, &format!("bot{i}"), i, 600))
        .collect();
    server.wait_for("start players=", Duration::from_secs(10));
    let finished: Vec<_> = clients
        .into_iter()
        .map(|c| c.finish(Duration::from_secs(60)))
        .collect();
    let finals: Vec<(u32, String)> = finished.iter().map(|f| f.final_line()).collect();
    assert!(finals.iter().all(|f| f.0 == 600), "{finals:?}");
    assert!(finals.iter().all(|f| f.1 == finals[0].1), "{finals:?}");
    // Everyone left after tick 600, so nobody was dropped before it.
    for line in server.seen.iter().filter(|l| l.starts_with("dropped")) {
        let tick: u32 = line
            .split_whitespace()
            .find_map(|f| f.strip_prefix("tick="))
            .and_then(|t| t.parse().ok())
            .expect("drop tick");
        assert!(tick >= 600, "{line}");
    }
    // The game ended when the last bot left: the three machines (this
    // one, three times) agreed on every hash report compared.
    let verdict = server.wait_for("verdict ", Duration::from_secs(10));
    let fields: Vec<&str> = verdict.split_whitespace().collect();
    assert_eq!(fields[..2], ["verdict", "agreed"], "{verdict}");
    let ticks: u32 = fields[2]
        .strip_prefix("ticks=")
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("{verdict}"));
    assert!(ticks >= 600, "{verdict}");
    let checks: u64 = fields[3]
        .strip_prefix("checks=")
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("{verdict}"));
    assert!(checks >= 3, "{verdict}");
    let platforms: Vec<&str> = fields[4]
        .strip_prefix("platforms=")
        .unwrap_or_else(|| panic!("{verdict}"))
        .split(',')
        .collect();
    assert_eq!(platforms.len(), 3, "{verdict}");
    assert!(
        platforms
            .iter()
            .all(|p| *p == platforms[0] && *p != "unknown"),
        "{verdict}"
    );
    let joined = server.wait_for("platform player=0 ", Duration::from_secs(1));
    assert!(
        joined.contains(&format!(" target={} ", platforms[0])),
        "{joined}"
    );
}

#[test]
fn a_bot_killed_mid_game_is_dropped_and_the_others_stay_in_lockstep() {
    let mut server = Server::start(4, &["--seed", "12"]);
    let mut clients: Vec<Client> = (0..4)
        .map(|i| Client::headless_bot(&server, &format!("bot{i}"), 100 + i, 600))
        .collect();
    server.wait_for("start players=", Duration::from_secs(10));
    lockstep_testkit::wait_for_bundles(&server.recording_path(), 180);
    let victim = clients.remove(1);
    let pid = victim.child.id();
    lockstep_testkit::signal(pid, "KILL");
    let drop_line = server.wait_for("name=bot1", Duration::from_secs(10));
    let drop_line = if drop_line.starts_with("dropped") {
        drop_line
    } else {
        server.wait_for("dropped player=", Duration::from_secs(10))
    };
    assert!(drop_line.contains("name=bot1"), "{drop_line}");
    assert!(drop_line.contains("reason=timeout"), "{drop_line}");
    let drop_tick: u32 = drop_line
        .split_whitespace()
        .find_map(|f| f.strip_prefix("tick="))
        .and_then(|t| t.parse().ok())
        .expect("drop tick");
    assert!(drop_tick > 0 && drop_tick < 600, "{drop_line}");
    let finals: Vec<(u32, String)> = clients
        .into_iter()
        .map(|c| c.finish(Duration::from_secs(60)).final_line())
        .collect();
    assert_eq!(finals.len(), 3);
    assert!(finals.iter().all(|f| *f == finals[0]), "{finals:?}");
    assert_eq!(finals[0].0, 600);
}

#[test]
fn a_client_with_another_protocol_version_is_refused_clearly() {
    let server = Server::start(2, &[]);
    let finished = Client::spawn(
        "old",
        Command::new(client_bin()).args([
            "--connect",
            &server.addr,
            "--name",
            "old",
            "--headless",
            "--protocol-version",
            "999",
        ]),
    )
    .finish(Duration::from_secs(20));
    assert!(!finished.success);
    let stderr = finished.stderr.trim();
    assert!(
        stderr.contains("refused") && stderr.contains("protocol version mismatch"),
        "{stderr}"
    );
    assert!(stderr.contains("999"), "{stderr}");
    assert!(!finished.stdout.contains("final"), "{}", finished.stdout);
}

#[test]
fn a_wrong_fingerprint_is_refused_before_joining() {
    let server = Server::start(2, &[]);
    let finished = Client::spawn(
        "pinned",
        Command::new(client_bin()).args([
            "--connect",
            &server.addr,
            "--headless",
            "--name",
            "pinned",
            "--fingerprint",
            &"ab".repeat(32),
        ]),
    )
    .finish(Duration::from_secs(20));
    assert!(!finished.success);
    assert!(
        finished.stderr.contains("fingerprint"),
        "{}",
        finished.stderr
    );
}

#[test]
fn ctrl_c_on_the_server_ends_the_game_for_every_client_with_a_reason() {
    let mut server = Server::start(2, &[]);
    let clients: Vec<Client> = (0..2)
        .map(|i| Client::headless_bot(&server, &format!("bot{i}"), i, 100_000))
        .collect();
    server.wait_for("start players=", Duration::from_secs(10));
    lockstep_testkit::wait_for_bundles(&server.recording_path(), 60);
    lockstep_testkit::signal(server.child.id(), "INT");
    for client in clients {
        let finished = client.finish(Duration::from_secs(20));
        assert!(!finished.success, "{finished:?}");
        assert!(
            finished.stderr.contains("the server is shutting down"),
            "{}",
            finished.stderr
        );
    }
    let status = server.child.wait().expect("server exits");
    assert!(status.success(), "server exit status {status}");
}
