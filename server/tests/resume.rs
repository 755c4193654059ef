//! Nothing lost when the server dies: real processes over real QUIC on
//! loopback. The server is SIGKILLed in the middle of a game and started
//! again with `--resume` on its replay; the bots, which keep their worlds
//! and keep trying to reconnect, go on from where they were and finish on
//! one hash, and the one replay file verifies from tick 0 to its end. A
//! desync found before the restart is still in the resumed server's
//! verdict, and the replay verifies with the diverged player's hashes in
//! it. A replay damaged in the middle is refused, and left untouched.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use lockstep_protocol::{
    Bundle, GameEvent, GameSpec, Input, PlayerId, PlayerInput, ReplayHeader, ReplayWriter,
    RosterEntry, Tick, PROTOCOL_VERSION,
};
use lockstep_testkit::{
    clock, field, finish_in_lockstep, last_line, read_replay, server_bin, signal, slot_of,
    verified, wait_for_bundles, Client, Server, TempDir,
};

fn bots(server: &Server, count: u64, ticks: u32, reconnect_secs: &str) -> Vec<Client> {
    (0..count)
        .map(|i| {
            let name = format!("bot{i}");
            Client::spawn(
                &name,
                lockstep_testkit::headless_bot(server, &name, 90 + i, ticks)
                    .args(["--reconnect-secs", reconnect_secs]),
            )
        })
        .collect()
}

#[test]
fn a_server_killed_at_tick_300_and_resumed_lets_three_bots_finish_900_ticks_on_one_hash() {
    let _serial = lockstep_testkit::one_at_a_time();
    let mut server = Server::start(3, &["--seed", "61"]);
    let clients = bots(&server, 3, 900, "60");
    server.wait_for("start players=", Duration::from_secs(10));
    let replay = server.recording_path();
    // A spectator reconnects the same way, and checks the same hash.
    let watcher = Client::spawn(
        "watcher",
        lockstep_testkit::headless(&server, "watcher").args([
            "--spectate",
            "--ticks",
            "900",
            "--reconnect-secs",
            "60",
        ]),
    );
    wait_for_bundles(&replay, 300);
    signal(server.child.id(), "KILL");
    let killed_at = read_replay(&replay).bundles.len();

    let mut resumed = Server::resume(server, &replay, &[]);
    let resuming = resumed.wait_for("resuming tick=", Duration::from_secs(10));
    assert_eq!(
        field(&resuming, "tick"),
        Some(killed_at.to_string().as_str()),
        "{resuming}"
    );
    // The bots notice the loss after 5 s of silence, then reconnect.
    resumed.wait_for_all("reconnected player=", 3, Duration::from_secs(30));
    resumed.wait_for("resumed tick=", Duration::from_secs(10));

    let (finished, (tick, hash)) = finish_in_lockstep(clients, Duration::from_secs(120));
    assert_eq!(tick, 900);
    let watched = watcher.finish(Duration::from_secs(60));
    assert_eq!(watched.final_line(), (tick, hash.clone()));
    assert!(
        watched.stderr.contains("reconnected at tick"),
        "{}",
        watched.stderr
    );
    for bot in &finished {
        assert!(
            bot.stderr.contains("reconnecting for up to 60 s"),
            "{}: {}",
            bot.name,
            bot.stderr
        );
        assert!(
            bot.stderr
                .contains(&format!("the game goes on from tick {killed_at}")),
            "{}: {}",
            bot.name,
            bot.stderr
        );
        // Nobody was dropped: every bot kept its slot through the restart.
        assert!(!bot.stderr.contains("dropped"), "{}", bot.stderr);
    }
    assert!(
        !resumed
            .seen
            .iter()
            .any(|l| l.starts_with("dropped") && !l.contains("reason=left")),
        "{:?}",
        resumed.seen
    );

    // One file, written by both servers, verifies from tick 0 to its end
    // and passes through the bots' final hash at tick 900.
    let whole = verified(&replay, &[]);
    let end = last_line(&whole);
    assert!(end.starts_with("final tick="), "{end}");
    let at_900 = verified(&replay, &["--ticks", "900"]);
    assert_eq!(last_line(&at_900), format!("final tick=900 hash={hash}"));
    let recorded = read_replay(&replay);
    assert!(recorded.end.is_some(), "the resumed server ended the file");
    assert!(recorded.bundles.len() > 900);
}

/// The restarted server holds the identity's keys, so it answers the
/// clients' packets on their old connections with a stateless reset they
/// accept: they reconnect at once. With a drop timeout of ten minutes the
/// idle timeout cannot be what ended their connections here.
#[test]
fn a_restarted_server_resets_the_old_connections_so_the_bots_reconnect_without_waiting() {
    let _serial = lockstep_testkit::one_at_a_time();
    let timeouts = ["--drop-timeout-ms", "600000"];
    let mut server = Server::start(2, &[&["--seed", "62"][..], &timeouts].concat());
    let clients = bots(&server, 2, 600, "120");
    server.wait_for("start players=", Duration::from_secs(10));
    let replay = server.recording_path();
    wait_for_bundles(&replay, 200);
    signal(server.child.id(), "KILL");
    let mut resumed = Server::resume(server, &replay, &timeouts);
    resumed.wait_for("resuming tick=", Duration::from_secs(10));
    resumed.wait_for_all("reconnected player=", 2, Duration::from_secs(120));
    let (finished, (tick, _)) = finish_in_lockstep(clients, Duration::from_secs(120));
    assert_eq!(tick, 600);
    for bot in &finished {
        assert!(
            bot.stderr.contains("it reset the connection"),
            "{}: {}",
            bot.name,
            bot.stderr
        );
    }
}

/// Waits until the replay at `path` records a desync.
fn wait_for_recorded_desync(path: &Path) {
    let deadline = clock::now() + Duration::from_secs(60);
    let recorded = || {
        read_replay(path)
            .events
            .iter()
            .any(|(_, event)| matches!(event, GameEvent::Desync { .. }))
    };
    while !recorded() {
        assert!(clock::now() < deadline, "the desync never reached the file");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_desync_before_the_server_died_is_in_the_resumed_servers_verdict_and_the_replay_verifies() {
    let _serial = lockstep_testkit::one_at_a_time();
    let mut server = Server::start(3, &["--seed", "66"]);
    // Every bot dumps the desync's ticks: into a temporary directory, not
    // the working directory.
    let dumps = TempDir::new("resume-dumps");
    let bot = |name: &str, seed: u64, extra: &[&str]| {
        let mut command = lockstep_testkit::headless_bot(&server, name, seed, 600);
        command
            .args(["--reconnect-secs", "60", "--dump-dir"])
            .arg(&dumps.0)
            .args(extra);
        Client::spawn(name, &mut command)
    };
    let clients = vec![
        bot("honest-a", 1, &[]),
        bot("faulty", 2, &["--inject-desync-at", "100"]),
        bot("honest-b", 3, &[]),
    ];
    let replay = server.recording_path();
    let desync = server.wait_for("desync tick=", Duration::from_secs(30));
    assert!(
        desync.starts_with("desync tick=105 diverged=faulty "),
        "{desync}"
    );
    // 100 when every bot answered in time, as they do on an idle machine.
    let first = field(&desync, "first").unwrap_or_default().to_string();
    wait_for_recorded_desync(&replay);
    signal(server.child.id(), "KILL");

    let mut resumed = Server::resume(server, &replay, &[]);
    resumed.wait_for_all("reconnected player=", 3, Duration::from_secs(30));
    let finals: Vec<(u32, String)> = clients
        .into_iter()
        .map(|c| c.finish(Duration::from_secs(120)).final_line())
        .collect();
    assert_eq!(finals[0], finals[2]);
    assert_ne!(finals[1], finals[0]);
    // The faulty bot's hashes still differ after the restart: it was
    // named once, before, and is not announced again.
    let verdict = resumed.wait_for("verdict ", Duration::from_secs(30));
    assert!(
        !resumed.seen.iter().any(|l| l.starts_with("desync")),
        "{:?}",
        resumed.seen
    );
    assert!(
        verdict.starts_with("verdict diverged ")
            && field(&verdict, "diverged").is_some_and(|d| d.starts_with("faulty@")),
        "{verdict}"
    );

    // The one file holds the faulty bot's hashes of both servers: they were
    // expected, and the re-simulation passes where the honest bots ended.
    resumed.wait_for("game over tick=", Duration::from_secs(10));
    let out = verified(&replay, &["--ticks", "600"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let faulty = slot_of(&read_replay(&replay), "faulty");
    let named =
        format!("diverged player={faulty} name=faulty tick=105 first={first} unreproduced=");
    assert!(stdout.lines().any(|l| l.starts_with(&named)), "{stdout}");
    assert_eq!(
        last_line(&out),
        format!("final tick=600 hash={}", finals[0].1)
    );
}

#[test]
fn a_bot_gives_up_with_a_clear_message_when_no_server_comes_back() {
    let _serial = lockstep_testkit::one_at_a_time();
    let mut server = Server::start(2, &["--seed", "62"]);
    let clients = bots(&server, 2, 100_000, "2");
    server.wait_for("start players=", Duration::from_secs(10));
    wait_for_bundles(&server.recording_path(), 60);
    signal(server.child.id(), "KILL");
    for client in clients {
        let finished = client.finish(Duration::from_secs(30));
        assert!(!finished.success);
        assert!(
            finished.stderr.contains("reconnecting for up to 2 s"),
            "{}",
            finished.stderr
        );
        let last = finished.stderr.lines().last().unwrap_or_default();
        assert!(
            last.starts_with("lockstep-client: lost the server")
                && last.ends_with("no server to reconnect to in 2 s"),
            "{}",
            finished.stderr
        );
    }
}

/// bot1 of a 3-bot game is stopped (SIGSTOP) for longer than the
/// server's drop timeout (2 s) and QUIC's idle timeout (5 s): the server
/// drops it, and once it runs again it finds its connection dead and
/// reconnects. With no snapshot before the game ends, the server still
/// holds every bundle it lacks, so it goes on with its own world. What the
/// server decides here, and the other way, from the snapshot, when a
/// snapshot came while the bot was away, is played on the cluster's clock
/// (`cluster/tests/scenarios.rs`, `cluster_a_player_stopped_past_the_*`);
/// this test keeps what needs the processes: the signal, the QUIC idle
/// timeout, and what the server and the bot print.
#[test]
fn a_bot_frozen_past_the_timeouts_reconnects_to_the_live_server_with_its_world() {
    let _serial = lockstep_testkit::one_at_a_time();
    let mut server = Server::start(3, &["--seed", "63", "--snapshot-secs", "60"]);
    let clients = bots(&server, 3, 1200, "60");
    server.wait_for("start players=", Duration::from_secs(10));
    wait_for_bundles(&server.recording_path(), 120);
    let frozen = clients[1].child.id();
    signal(frozen, "STOP");
    // Stopped past both timeouts: time passing is what this tests.
    std::thread::sleep(Duration::from_secs(7));
    signal(frozen, "CONT");
    let rejoined = server.wait_for("rejoined player=", Duration::from_secs(20));
    assert!(rejoined.contains("name=bot1"), "{rejoined}");
    let (finished, (tick, _)) = finish_in_lockstep(clients, Duration::from_secs(90));
    assert_eq!(tick, 1200);
    let sent = server.wait_for_log(
        "sending a reconnected client the bundles it lacks",
        Duration::from_secs(5),
    );
    assert!(field(&sent, "from").is_some(), "{sent}");
    assert!(
        finished[1].stderr.contains("reconnected at tick"),
        "{}",
        finished[1].stderr
    );
}

#[test]
fn a_server_started_again_without_the_game_refuses_the_bots_with_the_reason() {
    let _serial = lockstep_testkit::one_at_a_time();
    let mut server = Server::start(2, &["--seed", "65"]);
    let clients = bots(&server, 2, 100_000, "60");
    server.wait_for("start players=", Duration::from_secs(10));
    wait_for_bundles(&server.recording_path(), 60);
    signal(server.child.id(), "KILL");
    let mut fresh = Server::restart(server, &["--players", "2", "--no-advertise"]);
    for client in clients {
        let finished = client.finish(Duration::from_secs(30));
        assert!(!finished.success);
        let last = finished.stderr.lines().last().unwrap_or_default();
        assert!(
            last.contains(
                "this server is not running your game any more (it was started again without \
                 --resume, or the game ended)"
            ),
            "{}",
            finished.stderr
        );
    }
    // Refused, they never made it start a game of their own.
    assert!(
        !fresh.seen.iter().any(|l| l.starts_with("start ")),
        "{:?}",
        fresh.seen
    );
    let refused = fresh.wait_for("refused remote=", Duration::from_secs(1));
    assert!(refused.contains("not running your game"), "{refused}");
}

/// A server's recording of a ball game cut off at tick 100, as a server
/// killed mid-game leaves it (no end record).
fn killed_recording(path: &Path) {
    let header = ReplayHeader {
        protocol_version: PROTOCOL_VERSION,
        build: "test".into(),
        recorder: "server".into(),
        started_unix: 0,
        seed: 67,
        tick_rate: 60,
        input_delay: 3,
        hash_interval: 15,
        spec: GameSpec::balls(24),
        roster: vec![RosterEntry {
            id: PlayerId(0),
            name: "ann".into(),
        }],
        platforms: Vec::new(),
    };
    let file = std::fs::File::create(path).expect("create the replay");
    let mut writer = ReplayWriter::new(file, &header).expect("write the header");
    let bundle = Bundle {
        inputs: vec![PlayerInput {
            player: PlayerId(0),
            input: Input::default(),
        }],
        ..Bundle::default()
    };
    for tick in 0..100 {
        writer.write_bundle(Tick(tick), &bundle).expect("write");
    }
}

/// Damage in the middle of a replay (a flipped byte in a record's body,
/// with 50 ticks of intact records after it) is not a crash's torn tail:
/// going on from the last good record would cut off the rest of the game,
/// so the server refuses on one line that says where the damage is and
/// what to do, and does not touch the file.
#[test]
fn a_replay_damaged_mid_file_is_refused_on_one_line_and_left_untouched() {
    let dir = TempDir::new("resume-mid-file");
    let replay = dir.0.join("game.lsreplay");
    killed_recording(&replay);
    let mut bytes = std::fs::read(&replay).expect("read the replay");
    // Record 51, the bundle of tick 50, after the header and 50 bundles.
    let mut start = 10;
    for _ in 0..51 {
        let len = bytes[start..start + 4].try_into().expect("4 bytes");
        start += 4 + u32::from_le_bytes(len) as usize + 4;
    }
    bytes[start + 6] ^= 0x10;
    std::fs::write(&replay, &bytes).expect("damage the replay");

    let identity = TempDir::new("resume-mid-file-identity");
    let mut command = Command::new(server_bin());
    command
        .arg("--resume")
        .arg(&replay)
        .args(["--listen", "127.0.0.1:0", "--no-web", "--no-advertise"])
        .arg("--identity-dir")
        .arg(&identity.0)
        .env_remove("RUST_LOG");
    // It refuses before it binds anything; a server that resumed instead
    // would run on, and is killed and failed after the timeout.
    let out = Client::spawn("server", &mut command).finish(Duration::from_secs(30));
    let stderr = out.stderr;
    assert!(!out.success, "{stderr}");
    assert!(out.stdout.is_empty(), "{}", out.stdout);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    let line = lines[0];
    let path = replay.display();
    for part in [
        format!("lockstep-server: cannot resume {path}: "),
        format!("the replay is corrupt at byte {start} (record 51): checksum mismatch; "),
        "the last good tick before it is 49; it is mid-file, ".to_string(),
        "49 intact records follow from byte ".to_string(),
        " to the end (bundles of ticks 51 to 99); ".to_string(),
        format!("To go on from tick 50 anyway, resume a copy cut at byte {start} "),
    ] {
        assert!(line.contains(&part), "{part:?} not in {line}");
    }
    assert_eq!(line.matches("checksum mismatch").count(), 1, "{line}");
    assert_eq!(
        std::fs::read(&replay).expect("read the replay"),
        bytes,
        "the file was changed"
    );
}
