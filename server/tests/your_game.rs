//! A game written outside this repository's workspace, on the stock
//! server: the flock of `examples/flock/`, whose client (`flock-client`,
//! lockstep's client with the flock in its list of games) `make test`
//! builds out of tree into `target/debug`. Over real QUIC on loopback,
//! the server built without the flock relays it with its settings as
//! given, the flock's bots end on one hash, the replay verifies with the
//! flock's own client, and a desync injected in it is named with its
//! first tick and its field.

use std::process::Command;
use std::time::Duration;

use lockstep_testkit::{guide, headless_bot_of, joining, workspace_bin, Client, Server, TempDir};

/// `flock-client`, as `make test` builds it from `examples/flock/`.
fn flock_bin() -> std::path::PathBuf {
    workspace_bin("flock-client")
}

/// A flock bot joining `server` as `name`, playing `seed`'s inputs until
/// tick `ticks`, with `extra` arguments.
fn flock_bot(server: &Server, name: &str, seed: u64, ticks: u32, extra: &[&str]) -> Client {
    let mut command = headless_bot_of(&flock_bin(), server, name, seed, ticks);
    command.args(extra);
    Client::spawn(name, &mut command)
}

/// The guide's commands (`docs/guide/your-game.md`) that start with
/// `program`.
fn guide_commands(program: &str) -> Vec<Vec<String>> {
    let mut commands = guide::sh_commands("docs/guide/your-game.md", None);
    commands.retain(|words| words[0] == program);
    commands
}

/// The guide's offline commands, as it gives them but for the build they
/// run from: the test's own debug build, not the guide's `cargo build
/// --release`, which `make determinism` runs (its release configuration
/// builds the flock from its manifest and checks its golden table, as
/// every other configuration). Each plays a game of bots and prints where
/// it ended.
#[test]
fn the_guides_offline_commands_run_as_written() {
    let commands = guide_commands("target/release/flock-client");
    let offline: Vec<&Vec<String>> = commands.iter().filter(|c| c[1] != "solo").collect();
    assert_eq!(offline.len(), 3, "{commands:?}");
    for command in offline {
        let out = Command::new(flock_bin())
            .args(&command[1..])
            .output()
            .expect("flock-client runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{command:?}: {stdout}");
        assert!(
            stdout
                .lines()
                .last()
                .is_some_and(|l| l.starts_with("final tick=")),
            "{command:?}: {stdout}"
        );
    }
}

#[test]
fn the_stock_server_relays_the_flock_which_ends_on_one_hash_and_replays() {
    let _serial = lockstep_testkit::one_at_a_time();
    // The host's command of the guide, on a port of its own.
    let hosting = guide_commands("lockstep-server");
    assert_eq!(hosting.len(), 1, "{hosting:?}");
    let mut args: Vec<&str> = hosting[0][1..].iter().map(String::as_str).collect();
    args.extend(["--seed", "11"]);
    let mut server = Server::start(2, &args);
    server.wait_for("hosting flock (boids=64)", Duration::from_secs(30));
    // The guide's headless bot, its placeholders filled in.
    let joins = guide_commands("flock-client");
    let bot = joins
        .iter()
        .find(|words| words.iter().any(|w| w == "--headless"))
        .unwrap_or_else(|| panic!("the guide joins a headless bot: {joins:?}"));
    let guide_bot = |name: &str, seed: &str| {
        let mut words = bot[1..].to_vec();
        for (i, word) in bot.iter().enumerate().skip(1) {
            words[i - 1] = match (bot[i - 1].as_str(), word.as_str()) {
                (_, "HOST:PORT") => server.addr.clone(),
                (_, "FINGERPRINT") => server.fingerprint.clone(),
                ("--bot", _) => seed.to_string(),
                ("--ticks", _) => "300".to_string(),
                _ => word.clone(),
            };
        }
        let mut command = Command::new(flock_bin());
        command.args(words).args(["--name", name]);
        Client::spawn(name, &mut command)
    };
    let replay = {
        let bots = [guide_bot("ann", "1"), guide_bot("bob", "2")];
        let replay = server.recording_path();
        let finals: Vec<(u32, String)> = bots
            .into_iter()
            .map(|bot| bot.finish(Duration::from_secs(90)).final_line())
            .collect();
        assert_eq!(finals[0], finals[1], "one hash");
        assert_eq!(finals[0].0, 300);
        replay
    };
    let verdict = server.wait_for("verdict ", Duration::from_secs(30));
    assert!(verdict.starts_with("verdict agreed "), "{verdict}");
    let out = Command::new(flock_bin())
        .args(["replay", "--verify", "--headless"])
        .arg(&replay)
        .output()
        .expect("flock-client runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("verified ticks="), "{stdout}");
}

/// The line of the flock's source that traces `label` (its first
/// `trace_item("LABEL"` call), as the sync trace names it.
fn traced_line(label: &str) -> usize {
    let source = std::fs::read_to_string(
        lockstep_testkit::browser::repo().join("examples/flock/src/lib.rs"),
    )
    .expect("the flock's source");
    let call = format!("trace_item(\"{label}\"");
    source
        .lines()
        .position(|line| line.contains(&call))
        .expect("the flock traces the label")
        + 1
}

/// A fault in one line of the flock (`--inject-desync-value
/// boid.velocity`: the first boid's new velocity one ulp off where it is
/// computed) is named
/// by the server with its first tick, and by `desync-diff` on the dumps
/// with its phase, the fields it changed, and the file and line that
/// computed it differently; the server, comparing two players' traces
/// without the flock's code, names the line too and tells every player.
#[test]
fn a_desync_in_the_flock_is_named_with_its_first_tick_field_and_line() {
    let _serial = lockstep_testkit::one_at_a_time();
    let mut server = Server::start(3, &["--game", "flock", "--seed", "12", "--no-record"]);
    let dumps = TempDir::new("flock-dumps");
    let dump_dir = dumps.0.to_str().expect("a UTF-8 path");
    let honest = ["--dump-dir", dump_dir];
    let faulty = [
        "--dump-dir",
        dump_dir,
        "--inject-desync-at",
        "100",
        "--inject-desync-value",
        "boid.velocity",
    ];
    let clients = vec![
        flock_bot(&server, "honest-a", 1, 300, &honest),
        flock_bot(&server, "faulty", 2, 300, &faulty),
        flock_bot(&server, "honest-b", 3, 300, &honest),
    ];
    let line = server.wait_for("desync tick=", Duration::from_secs(60));
    assert_eq!(line, "desync tick=105 diverged=faulty first=100");
    // The server compares the faulty player's trace of tick 100 with an
    // honest one's, without the flock's code, and names the line.
    let traced = server.wait_for("traced tick=", Duration::from_secs(60));
    let value_line = traced_line("boid.velocity");
    assert!(
        traced.starts_with("traced tick=100 diverged=faulty majority=honest-")
            && traced.contains(&format!(
                " first differing value: src/lib.rs:{value_line} boid.velocity[0] tick=100 phase=boids a=[0x"
            )),
        "{traced}"
    );
    let finished: Vec<_> = clients
        .into_iter()
        .map(|client| client.finish(Duration::from_secs(90)))
        .collect();
    // Every client is told, the diverged one too.
    for client in &finished {
        assert!(
            client
                .stderr
                .contains("traces of tick 100, faulty against honest-")
                && client
                    .stderr
                    .contains(&format!("first differing value: src/lib.rs:{value_line} ")),
            "{}",
            client.stderr
        );
    }
    let out = lockstep_testkit::desync_diff(
        &flock_bin(),
        &dumps,
        "desync-t100-honest-a.json",
        "desync-t100-faulty.bin",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{stdout}");
    assert!(
        stdout.contains("\nfirst difference: phase boids\n"),
        "{stdout}"
    );
    assert!(
        stdout
            .lines()
            .any(|l| l.trim_start().starts_with("boids[0].vel.x")),
        "the changed field is not named:\n{stdout}"
    );
    let first = stdout
        .lines()
        .find(|l| l.starts_with("first differing value: "))
        .unwrap_or_else(|| panic!("no first differing value:\n{stdout}"));
    let line = traced_line("boid.velocity");
    assert!(
        first.starts_with(&format!(
            "first differing value: src/lib.rs:{line} boid.velocity[0] tick=100 phase=boids a=[0x"
        )) && first.ends_with(" values agreed before it)"),
        "{first}"
    );
}

/// The stock server cannot check a snapshot of the flock: the joiner
/// does, against the majority's hash its Start carries. Here every
/// player's snapshot is one ulp off the world it simulated
/// (`--corrupt-snapshot`), so whichever a late spectator is sent, it finds
/// it off; the server names the sender and sends it the game again, from
/// another snapshot and at last from tick 0, and it ends on the players'
/// hash.
#[test]
fn a_tampered_snapshot_of_the_flock_is_caught_by_the_joiner_and_its_sender_named() {
    let _serial = lockstep_testkit::one_at_a_time();
    let mut server = Server::start(
        2,
        &[
            "--game",
            "flock",
            "--seed",
            "13",
            "--snapshot-secs",
            "1",
            "--no-record",
        ],
    );
    let liars = [
        flock_bot(&server, "ann", 1, 600, &["--corrupt-snapshot"]),
        flock_bot(&server, "bob", 2, 600, &["--corrupt-snapshot"]),
    ];
    server.wait_for("start players=", Duration::from_secs(30));
    let kept = server.wait_for_log(
        "snapshot kept for joiners to check",
        Duration::from_secs(30),
    );
    assert!(kept.contains("tick="), "{kept}");
    let mut watch = joining(&flock_bin(), &server, "watcher");
    watch.args(["--headless", "--spectate", "--ticks", "600"]);
    let watcher = Client::spawn("watcher", &mut watch);
    let refused = server.wait_for("snapshot-refused ", Duration::from_secs(60));
    assert!(
        refused.contains("name=ann") || refused.contains("name=bob"),
        "{refused}"
    );
    assert!(refused.contains(" by=watcher "), "{refused}");
    assert!(
        refused.contains("is not the majority's flock world: it hashes to "),
        "{refused}"
    );
    let watched = watcher.finish(Duration::from_secs(90));
    assert!(
        watched
            .stderr
            .contains("the server was told, and starts this game again"),
        "{}",
        watched.stderr
    );
    let mut finals = vec![watched.final_line()];
    for liar in liars {
        finals.push(liar.finish(Duration::from_secs(90)).final_line());
    }
    assert!(finals.iter().all(|f| *f == finals[0]), "{finals:?}");
    assert_eq!(finals[0].0, 600);
}
