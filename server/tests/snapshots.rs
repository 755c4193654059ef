//! Verified snapshots over real QUIC on loopback: a player that rejoins
//! after the first snapshot starts from it, a snapshot that does not hash
//! to what the majority reported is refused while the join still succeeds
//! from another player's, and a second game, Tally, is joined from its
//! snapshot the same way, and so is Topple, whose snapshot is its whole
//! rapier world.

use std::time::Duration;

use lockstep_testkit::{field, verified, Client, Server};

/// The tick `S` of a client's `... from the snapshot of tick S ...` line.
fn snapshot_tick(stderr: &str) -> Option<u32> {
    let line = stderr
        .lines()
        .find(|l| l.contains("caught up with the game"))?;
    let (_, rest) = line.split_once("from the snapshot of tick ")?;
    rest.split_whitespace().next()?.parse().ok()
}

/// Every final line is the same, at tick `ticks`.
fn all_end_alike(finals: &[(u32, String)], ticks: u32) {
    assert!(finals.iter().all(|f| *f == finals[0]), "{finals:?}");
    assert_eq!(finals[0].0, ticks);
}

/// Once the game is over, the server's replay names `game` and verifies to
/// `hash` at tick `ticks`.
fn replay_verifies_to(server: &mut Server, game: &str, ticks: u32, hash: &str) {
    server.wait_for("game over", Duration::from_secs(10));
    let replay = server.recording_path();
    let header = lockstep_testkit::read_replay(&replay).header;
    assert_eq!(header.spec.name, game);
    let out = verified(&replay, &["--ticks", &ticks.to_string()]);
    let last = lockstep_testkit::last_line(&out);
    assert_eq!(last, format!("final tick={ticks} hash={hash}"));
}

#[test]
fn a_bot_rejoining_after_the_first_snapshot_catches_up_from_it_not_from_tick_0() {
    let _serial = lockstep_testkit::one_at_a_time();
    let mut server = Server::start(3, &["--seed", "53", "--snapshot-secs", "2"]);
    let mut clients: Vec<Client> = (0..3)
        .map(|i| Client::headless_bot(&server, &format!("bot{i}"), 70 + i, 900))
        .collect();
    server.wait_for("start players=", Duration::from_secs(10));
    let verified = server.wait_for_log("snapshot verified", Duration::from_secs(20));
    let victim = clients.remove(1);
    lockstep_testkit::signal(victim.child.id(), "KILL");
    drop(victim);
    let record = lockstep_testkit::TempDir::new("joined-record");
    let record_file = record.0.join("bot1.lsreplay");
    let comeback = Client::spawn(
        "bot1",
        lockstep_testkit::headless_bot(&server, "bot1", 71, 900)
            .arg("--record")
            .arg(&record_file),
    );
    let rejoined = server.wait_for("rejoined player=", Duration::from_secs(15));
    assert!(rejoined.contains("name=bot1"), "{rejoined}");

    let back = comeback.finish(Duration::from_secs(60));
    let from = snapshot_tick(&back.stderr)
        .unwrap_or_else(|| panic!("not caught up from a snapshot: {}", back.stderr));
    // The snapshot it started from is one the server verified, after the
    // game's start: not a replay from tick 0.
    assert!(from >= 120, "{}", back.stderr);
    // It never had the ticks before the snapshot, so it records nothing
    // rather than a replay that would not verify, and says where the
    // whole game is.
    assert!(
        back.stderr.contains(&format!(
            "not recording to {}: this game was joined from the server's snapshot of tick {from}",
            record_file.display()
        )),
        "{}",
        back.stderr
    );
    assert!(!record_file.exists());
    let sent = server.wait_for_log("sending the game from the snapshot", Duration::from_secs(1));
    assert_eq!(
        field(&sent, "tick"),
        Some(from.to_string().as_str()),
        "{sent}"
    );
    assert!(verified.contains("tick="), "{verified}");
    let mut finals = vec![back.final_line()];
    for client in clients {
        finals.push(client.finish(Duration::from_secs(60)).final_line());
    }
    all_end_alike(&finals, 900);
}

#[test]
fn a_snapshot_off_the_confirmed_hash_is_refused_and_a_late_spectator_still_joins_from_anothers() {
    let _serial = lockstep_testkit::one_at_a_time();
    let mut server = Server::start(3, &["--seed", "54", "--snapshot-secs", "1"]);
    let liar = Client::spawn(
        "liar",
        lockstep_testkit::headless_bot(&server, "liar", 80, 900).arg("--corrupt-snapshot"),
    );
    let honest: Vec<Client> = (1..3)
        .map(|i| Client::headless_bot(&server, &format!("bot{i}"), 80 + i, 900))
        .collect();
    server.wait_for("start players=", Duration::from_secs(10));
    // Players are asked in turn, so the liar's turn comes within three
    // snapshots.
    let refused = server.wait_for_log("snapshot refused", Duration::from_secs(20));
    assert!(refused.contains("name=liar"), "{refused}");
    assert!(refused.contains("is not the confirmed"), "{refused}");
    let spectator = Client::spawn(
        "watcher",
        lockstep_testkit::headless(&server, "watcher").args(["--spectate", "--ticks", "900"]),
    );
    let watched = spectator.finish(Duration::from_secs(60));
    assert!(
        snapshot_tick(&watched.stderr).is_some(),
        "{}",
        watched.stderr
    );
    // No snapshot of the liar's was ever kept.
    assert!(
        server
            .log()
            .iter()
            .filter(|l| l.contains("snapshot refused"))
            .all(|l| l.contains("name=liar")),
        "{:?}",
        server.log()
    );
    let mut finals = vec![watched.final_line()];
    finals.push(liar.finish(Duration::from_secs(60)).final_line());
    for client in honest {
        finals.push(client.finish(Duration::from_secs(60)).final_line());
    }
    all_end_alike(&finals, 900);
}

/// A second game through the same snapshots: two bots play Tally, a
/// spectator who arrives late starts from a snapshot the server verified,
/// and the server's replay, which names the game, verifies to their hash.
#[test]
fn tally_is_played_joined_from_a_verified_snapshot_and_its_replay_verifies() {
    let _serial = lockstep_testkit::one_at_a_time();
    let mut server = Server::start(
        2,
        &["--game", "tally", "--seed", "61", "--snapshot-secs", "1"],
    );
    let bots: Vec<Client> = (0..2)
        .map(|i| Client::headless_bot(&server, &format!("bot{i}"), 90 + i, 900))
        .collect();
    server.wait_for("start players=", Duration::from_secs(10));
    let verified_line = server.wait_for_log("snapshot verified", Duration::from_secs(20));
    assert!(verified_line.contains("tick="), "{verified_line}");
    let spectator = Client::spawn(
        "watcher",
        lockstep_testkit::headless(&server, "watcher").args(["--spectate", "--ticks", "900"]),
    );
    let watched = spectator.finish(Duration::from_secs(60));
    let from = snapshot_tick(&watched.stderr)
        .unwrap_or_else(|| panic!("not joined from a snapshot: {}", watched.stderr));
    assert!(from > 0, "{}", watched.stderr);
    let sent = server.wait_for_log("sending the game from the snapshot", Duration::from_secs(1));
    assert_eq!(
        field(&sent, "tick"),
        Some(from.to_string().as_str()),
        "{sent}"
    );

    let mut finals = vec![watched.final_line()];
    for bot in bots {
        finals.push(bot.finish(Duration::from_secs(60)).final_line());
    }
    all_end_alike(&finals, 900);

    replay_verifies_to(&mut server, "tally", 900, &finals[0].1);
}

/// Topple through the same snapshots: its snapshot is a whole rapier world
/// (solver state included). A bot killed mid-game rejoins from a verified
/// snapshot, a spectator joins late from one, everyone ends on the same
/// hash, and the server's replay verifies to it.
#[test]
fn physics_is_rejoined_and_watched_from_verified_snapshots_and_its_replay_verifies() {
    let _serial = lockstep_testkit::one_at_a_time();
    let mut server = Server::start(
        3,
        &["--game", "physics", "--seed", "67", "--snapshot-secs", "2"],
    );
    let mut clients: Vec<Client> = (0..3)
        .map(|i| Client::headless_bot(&server, &format!("bot{i}"), 80 + i, 1200))
        .collect();
    server.wait_for("start players=", Duration::from_secs(10));
    let verified_line = server.wait_for_log("snapshot verified", Duration::from_secs(30));
    assert!(verified_line.contains("tick="), "{verified_line}");
    let victim = clients.remove(1);
    lockstep_testkit::signal(victim.child.id(), "KILL");
    drop(victim);
    let comeback = Client::headless_bot(&server, "bot1", 81, 1200);
    let rejoined = server.wait_for("rejoined player=", Duration::from_secs(20));
    assert!(rejoined.contains("name=bot1"), "{rejoined}");
    let spectator = Client::spawn(
        "watcher",
        lockstep_testkit::headless(&server, "watcher").args(["--spectate", "--ticks", "1200"]),
    );

    let back = comeback.finish(Duration::from_secs(90));
    let from = snapshot_tick(&back.stderr)
        .unwrap_or_else(|| panic!("not caught up from a snapshot: {}", back.stderr));
    assert!(from >= 120, "{}", back.stderr);
    let watched = spectator.finish(Duration::from_secs(90));
    let watched_from = snapshot_tick(&watched.stderr)
        .unwrap_or_else(|| panic!("not joined from a snapshot: {}", watched.stderr));
    assert!(watched_from >= from, "{}", watched.stderr);

    let mut finals = vec![back.final_line(), watched.final_line()];
    for client in clients {
        finals.push(client.finish(Duration::from_secs(90)).final_line());
    }
    all_end_alike(&finals, 1200);

    replay_verifies_to(&mut server, "physics", 1200, &finals[0].1);
}
