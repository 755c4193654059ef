//! Desync detection end to end: one bot nudges its world by one ulp, the
//! server names it, every client dumps the tick, and `desync-diff` finds
//! the nudged field.

use std::process::Command;
use std::time::Duration;

use lockstep_testkit::{client_bin, Client, Server, TempDir};

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
        bot(&server, "faulty", 2, &dumps, &["--inject-desync-at", "300"]),
        bot(&server, "honest-b", 3, &dumps, &[]),
    ];
    let line = server.wait_for("desync tick=", Duration::from_secs(30));
    assert_eq!(line, "desync tick=300 diverged=faulty");
    let finished: Vec<_> = clients
        .into_iter()
        .map(|c| c.finish(Duration::from_secs(60)))
        .collect();
    // The game went on (the default is --on-desync continue): everyone
    // reached the end, the two honest clients on the same hash. (The
    // faulty one may or may not still differ by then: a wall contact can
    // clamp the nudged coordinate back onto the same value.)
    let finals: Vec<(u32, String)> = finished.iter().map(|f| f.final_line()).collect();
    assert_eq!(finals[0], finals[2]);
    assert_eq!(finals[1].0, 420);
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
        assert!(
            f.stderr.contains("desync at tick 300: faulty diverged"),
            "{}: {}",
            f.name,
            f.stderr
        );
    }
    for name in ["honest-a", "faulty", "honest-b"] {
        for ext in ["json", "bin"] {
            let path = dumps.0.join(format!("desync-t300-{name}.{ext}"));
            assert!(path.exists(), "{} missing", path.display());
        }
    }

    let diff = |a: &str, b: &str| {
        Command::new(client_bin())
            .arg("desync-diff")
            .arg(dumps.0.join(a))
            .arg(dumps.0.join(b))
            .output()
            .expect("desync-diff runs")
    };
    let out = diff("desync-t300-honest-a.bin", "desync-t300-faulty.json");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{stdout}");
    assert!(stdout.contains("differing fields: 1"), "{stdout}");
    let field = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("balls[0].pos.x:"))
        .unwrap_or_else(|| panic!("the nudged field is not named:\n{stdout}"));
    assert_eq!(field.matches("bits 0x").count(), 2, "{field}");

    let same = diff("desync-t300-honest-a.json", "desync-t300-honest-b.bin");
    let stdout = String::from_utf8_lossy(&same.stdout);
    assert!(same.status.success(), "{stdout}");
    assert!(stdout.contains("no difference"), "{stdout}");
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
}
