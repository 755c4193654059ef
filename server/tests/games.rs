//! More games on the same server and tools, over real QUIC on loopback:
//! a desync in Tally, and one in Topple's rapier world, is pinpointed and
//! diffed down to the game's own field and phase, and a fault in a phase
//! Tally does not have is refused. (`snapshots.rs` plays both through a
//! verified snapshot.)

use std::time::Duration;

use lockstep_testkit::{client_bin, Client, Server, TempDir};

/// A headless bot of `ticks` ticks that writes its desync dumps to `dumps`,
/// with `extra` arguments.
fn dumping_bot(server: &Server, dumps: &TempDir, name: &str, seed: u64, extra: &[&str]) -> Client {
    let mut command = lockstep_testkit::headless_bot(server, name, seed, 300);
    command.arg("--dump-dir").arg(&dumps.0).args(extra);
    Client::spawn(name, &mut command)
}

/// The arguments that make a bot's world part from the others' at tick
/// 100, in `phase`.
fn fault_at_100(phase: &str) -> [&str; 4] {
    ["--inject-desync-at", "100", "--inject-desync-phase", phase]
}

/// `desync-diff` of the honest bot's JSON dump and the faulty one's binary
/// dump of tick 100: whether it exited 0, and what it printed.
fn diff_at_100(dumps: &TempDir, honest: &str, faulty: &str) -> (bool, String) {
    let out = lockstep_testkit::desync_diff(
        &client_bin(),
        dumps,
        &format!("desync-t100-{honest}.json"),
        &format!("desync-t100-{faulty}.bin"),
    );
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn a_desync_in_tally_is_pinpointed_and_diffed_to_its_field_and_phase() {
    let _serial = lockstep_testkit::one_at_a_time();
    let mut server = Server::start(3, &["--game", "tally", "--seed", "62", "--no-record"]);
    let dumps = TempDir::new("tally-dumps");
    let bot =
        |name: &str, seed: u64, extra: &[&str]| dumping_bot(&server, &dumps, name, seed, extra);
    // Tally's last phase, so nothing later in the step rounds the nudge
    // away before the hash.
    let clients = vec![
        bot("honest-a", 1, &[]),
        bot("faulty", 2, &fault_at_100("drift")),
        bot("honest-b", 3, &[]),
    ];
    let line = server.wait_for("desync tick=", Duration::from_secs(30));
    // Hashes are compared every 15 ticks: the desync shows at 105, and the
    // per-tick hashes place its start at 100.
    assert_eq!(line, "desync tick=105 diverged=faulty first=100");
    let finals: Vec<(u32, String)> = clients
        .into_iter()
        .map(|c| c.finish(Duration::from_secs(60)).final_line())
        .collect();
    assert_eq!(finals[0], finals[2]);
    assert_ne!(finals[1], finals[0]);

    let (same, stdout) = diff_at_100(&dumps, "honest-a", "faulty");
    assert!(!same, "{stdout}");
    assert!(
        stdout.contains("\nfirst difference: phase drift\n"),
        "{stdout}"
    );
    assert!(
        stdout.lines().any(|l| l.trim_start().starts_with("drift:")),
        "the nudged field is not named:\n{stdout}"
    );
}

#[test]
fn a_fault_in_a_phase_tally_does_not_have_is_refused_with_its_phases() {
    let _serial = lockstep_testkit::one_at_a_time();
    let mut server = Server::start(1, &["--game", "tally", "--seed", "63", "--no-record"]);
    let mut command = lockstep_testkit::headless_bot(&server, "odd", 1, 60);
    command.args(["--inject-desync-at", "10", "--inject-desync-phase", "goals"]);
    let odd = Client::spawn("odd", &mut command);
    server.wait_for("start players=", Duration::from_secs(10));
    let out = odd.finish(Duration::from_secs(30));
    assert!(!out.success, "{}", out.stdout);
    assert!(
        out.stderr.contains(
            "--inject-desync-phase goals: the game tally has no such phase; its phases are \
             roster, counters, drift"
        ),
        "{}",
        out.stderr
    );
}

#[test]
fn a_desync_in_the_physics_world_is_pinpointed_and_diffed_to_the_bodys_field() {
    let _serial = lockstep_testkit::one_at_a_time();
    let mut server = Server::start(2, &["--game", "physics", "--seed", "64", "--no-record"]);
    let dumps = TempDir::new("physics-dumps");
    let bot =
        |name: &str, seed: u64, extra: &[&str]| dumping_bot(&server, &dumps, name, seed, extra);
    let clients = vec![
        bot("honest", 1, &[]),
        bot("faulty", 2, &fault_at_100("physics")),
    ];
    let line = server.wait_for("desync tick=", Duration::from_secs(30));
    assert!(line.starts_with("desync tick=105 "), "{line}");
    assert!(line.ends_with(" first=100"), "{line}");
    for client in clients {
        client.finish(Duration::from_secs(60));
    }

    let (same, stdout) = diff_at_100(&dumps, "honest", "faulty");
    assert!(!same, "{stdout}");
    assert!(
        stdout.contains("\nfirst difference: phase physics\n"),
        "{stdout}"
    );
    let named = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("bodies[1].linvel.x:"))
        .unwrap_or_else(|| panic!("the nudged field is not named:\n{stdout}"));
    assert_eq!(named.matches("bits 0x").count(), 2, "{named}");
}

/// The stock server hosts a game it was not built with: it says so and
/// which games it knows, and a client that does not have the game either
/// is told so in one line.
#[test]
fn a_game_the_server_was_not_built_with_is_hosted_and_a_client_without_it_is_told() {
    let _serial = lockstep_testkit::one_at_a_time();
    let mut server = Server::start(1, &["--game", "flock", "--set", "boids=64", "--no-record"]);
    let line = server.wait_for("hosting flock", Duration::from_secs(30));
    assert_eq!(
        line,
        "hosting flock (boids=64), a game this server was not built with (it knows balls, \
         tally, physics): the players' clients parse its settings and check its self-test"
    );
    let mut command = lockstep_testkit::headless_bot(&server, "bot", 1, 60);
    let finished = Client::spawn("bot", &mut command).finish(Duration::from_secs(60));
    assert!(!finished.success, "{finished:?}");
    assert_eq!(
        finished.stderr.lines().last().unwrap_or_default(),
        "lockstep-client: the server refused to let us join: this client cannot play flock, \
         the game this server hosts",
        "{finished:?}"
    );
}
