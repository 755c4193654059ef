//! Desync detection end to end: one bot nudges its world by one ulp, the
//! server names it and the tick where it began, every client dumps both
//! ticks, and `desync-diff` finds the nudged field and the phase. The
//! server's replay of the game still verifies, and says whom the server
//! named.

use std::time::Duration;

use lockstep_testkit::{
    client_bin, desync_diff, last_line, read_replay, slot_of, verified, Client, Server, TempDir,
};

fn bot(server: &Server, name: &str, seed: u64, dumps: &TempDir, extra: &[&str]) -> Client {
    let mut command = lockstep_testkit::headless(server, name);
    command
        .args(["--bot", &seed.to_string()])
        .args(["--ticks", "420", "--dump-dir"])
        .arg(&dumps.0)
        .args(extra);
    Client::spawn(name, &mut command)
}

#[test]
fn a_one_ulp_fault_is_detected_named_dumped_and_diffed() {
    let mut server = Server::start(3, &["--seed", "31", "--hash-interval", "15"]);
    let dumps = TempDir::new("dumps");
    let clients = vec![
        bot(&server, "honest-a", 1, &dumps, &[]),
        bot(
            &server,
            "faulty",
            2,
            &dumps,
            &[
                "--inject-desync-at",
                "293",
                // The last phase: nothing later in the step can clamp
                // the nudge away (a wall can, after the collisions), so
                // the state differs from tick 293 on.
                "--inject-desync-phase",
                "goals",
            ],
        ),
        bot(&server, "honest-b", 3, &dumps, &[]),
    ];
    // Hashes are compared every 15 ticks: the desync shows at 300, and the
    // per-tick hashes place its start at 293.
    let line = server.wait_for("desync tick=", Duration::from_secs(30));
    assert_eq!(line, "desync tick=300 diverged=faulty first=293");
    let finished: Vec<_> = clients
        .into_iter()
        .map(|c| c.finish(Duration::from_secs(60)))
        .collect();
    // The game went on (the default is --on-desync continue): everyone
    // reached the end, the two honest clients on the same hash, the faulty
    // one, nudged in every step, still on another.
    let finals: Vec<(u32, String)> = finished.iter().map(|f| f.final_line()).collect();
    assert_eq!(finals[0], finals[2]);
    assert_eq!(finals[1].0, 420);
    assert_ne!(finals[1], finals[0]);
    assert!(
        server
            .seen
            .iter()
            .filter(|l| l.starts_with("desync"))
            .count()
            == 1,
        "{:?}",
        server.seen
    );
    for f in &finished {
        for said in [
            "desync at tick 300: faulty diverged",
            "the desync at tick 300 began at tick 293; dump written",
        ] {
            assert!(f.stderr.contains(said), "{}: {}", f.name, f.stderr);
        }
    }
    for tick in [293, 300] {
        for name in ["honest-a", "faulty", "honest-b"] {
            for ext in ["json", "bin"] {
                let path = dumps.0.join(format!("desync-t{tick}-{name}.{ext}"));
                assert!(path.exists(), "{} missing", path.display());
            }
        }
    }

    let diff = |a: &str, b: &str| desync_diff(&client_bin(), &dumps, a, b);
    // At the first divergent tick, the diff names the phase the fault was
    // injected in, and the nudged field.
    let out = diff("desync-t293-honest-a.bin", "desync-t293-faulty.json");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{stdout}");
    assert!(
        stdout.contains("phases of tick 293's step, redone from tick 292:"),
        "{stdout}"
    );
    assert!(
        stdout.contains("\nfirst difference: phase goals\n"),
        "{stdout}"
    );
    let field = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("balls[0].pos.x:"))
        .unwrap_or_else(|| panic!("the nudged field is not named:\n{stdout}"));
    assert_eq!(field.matches("bits 0x").count(), 2, "{field}");

    for tick in [293, 300] {
        let same = diff(
            &format!("desync-t{tick}-honest-a.json"),
            &format!("desync-t{tick}-honest-b.bin"),
        );
        let stdout = String::from_utf8_lossy(&same.stdout);
        assert!(same.status.success(), "{stdout}");
        assert!(stdout.contains("no difference"), "{stdout}");
        assert!(stdout.contains("\nevery phase agrees\n"), "{stdout}");
    }
    // The game's verdict names the faulty machine against the majority.
    let verdict = server.wait_for("verdict ", Duration::from_secs(10));
    assert!(verdict.starts_with("verdict diverged ticks="), "{verdict}");
    let diverged = verdict
        .split_whitespace()
        .find_map(|f| f.strip_prefix("diverged="))
        .unwrap_or_else(|| panic!("{verdict}"));
    assert!(
        diverged.starts_with("faulty@") && !diverged.contains(','),
        "{verdict}"
    );
    let majority = verdict
        .split_whitespace()
        .find_map(|f| f.strip_prefix("majority="))
        .unwrap_or_else(|| panic!("{verdict}"));
    assert_eq!(majority.split(',').count(), 2, "{verdict}");

    // The replay holds the faulty bot's wrong hashes too; they were
    // expected, and the re-simulation passes where the honest bots ended.
    server.wait_for("game over tick=", Duration::from_secs(10));
    let path = server.recording_path();
    let out = verified(&path, &["--ticks", "420"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let faulty = slot_of(&read_replay(&path), "faulty");
    let named = format!("diverged player={faulty} name=faulty tick=300 first=293 unreproduced=");
    assert!(stdout.lines().any(|l| l.starts_with(&named)), "{stdout}");
    assert_eq!(
        last_line(&out),
        format!("final tick=420 hash={}", finals[0].1)
    );
}

#[test]
fn on_desync_stop_ends_the_game_for_everyone() {
    let mut server = Server::start(
        2,
        &[
            "--seed",
            "32",
            "--hash-interval",
            "10",
            "--on-desync",
            "stop",
        ],
    );
    let dumps = TempDir::new("stop");
    let clients = vec![
        bot(&server, "one", 1, &dumps, &[]),
        bot(&server, "two", 2, &dumps, &["--inject-desync-at", "95"]),
    ];
    // One against one: no majority, both are named.
    let line = server.wait_for("desync tick=", Duration::from_secs(30));
    let mut named: Vec<&str> = line
        .strip_prefix("desync tick=100 diverged=")
        .and_then(|rest| rest.strip_suffix(" first=95"))
        .unwrap_or_else(|| panic!("{line}"))
        .split(',')
        .collect();
    named.sort_unstable();
    assert_eq!(named, ["one", "two"]);
    for client in clients {
        let finished = client.finish(Duration::from_secs(30));
        assert!(!finished.success);
        assert!(
            finished
                .stderr
                .contains("the server ended the game: desync at tick 100"),
            "{}",
            finished.stderr
        );
    }
    // No majority: both machines are named, none agreed.
    let verdict = server.wait_for("verdict ", Duration::from_secs(10));
    assert!(verdict.starts_with("verdict diverged ticks="), "{verdict}");
    let mut named: Vec<&str> = verdict
        .split_whitespace()
        .find_map(|f| f.strip_prefix("diverged="))
        .unwrap_or_else(|| panic!("{verdict}"))
        .split(',')
        .filter_map(|p| p.split_once('@').map(|(name, _)| name))
        .collect();
    named.sort_unstable();
    assert_eq!(named, ["one", "two"], "{verdict}");
    assert!(verdict.ends_with(" majority="), "{verdict}");
    // The server could not tell which of the two was right; the
    // re-simulation of its replay can: the replay verifies, and names two
    // alone.
    server.wait_for("game over tick=", Duration::from_secs(10));
    let path = server.recording_path();
    let out = verified(&path, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let two = slot_of(&read_replay(&path), "two");
    let diverged: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("diverged "))
        .collect();
    assert_eq!(diverged.len(), 1, "{stdout}");
    let named = format!("diverged player={two} name=two tick=100 first=95 unreproduced=");
    assert!(diverged[0].starts_with(&named), "{stdout}");
    // The fault was a change after tick 95's step: every phase of the
    // step agrees, and the faulty machine's step does not give its own
    // recorded hash.
    let out = desync_diff(
        &client_bin(),
        &dumps,
        "desync-t95-one.bin",
        "desync-t95-two.bin",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{stdout}");
    assert!(
        stdout.contains("\nfirst difference: after the step (every phase agrees)\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("b (two): the step redone does not give the recorded hash"),
        "{stdout}"
    );
}
