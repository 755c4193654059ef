//! A two-minute chaos run against the workspace's debug binaries and the
//! page (build them first: `make test` runs `make web` and `cargo build
//! --bins`), with a browser peer in headless Chromium beside the six
//! bots: every kind of fault is done to real processes on loopback and
//! answered, everyone who stayed ends on one hash, the injected desync is
//! the only one, the replay verifies, and nobody and no tick is lost. It
//! waits on what the processes say, with generous bounds, and asserts no
//! timing.

use std::process::Command;

use lockstep_testkit::{client_bin, field};

/// A seed whose two minutes do each kind of fault once
/// (`lockstep-chaos --seed 7 --schedule` lists them).
const SEED: &str = "7";

#[test]
fn a_two_minute_chaos_run_with_a_browser_answers_every_fault_and_ends_agreed_with_nothing_lost() {
    let bin_dir = client_bin()
        .parent()
        .expect("the client binary is in target/<profile>")
        .to_path_buf();
    let output = Command::new(env!("CARGO_BIN_EXE_lockstep-chaos"))
        .args(["--seed", SEED, "--minutes", "2", "--browser", "--bin-dir"])
        .arg(&bin_dir)
        .output()
        .expect("the chaos run starts");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let summary = stdout.lines().last().unwrap_or_default();
    let context = format!("{stdout}\n{stderr}");
    assert!(
        summary.starts_with(&format!("chaos seed={SEED} minutes=2 ")),
        "{context}"
    );
    assert_eq!(field(summary, "verdict"), Some("agreed"), "{context}");
    assert_eq!(field(summary, "desyncs"), Some("1"), "{context}");
    assert_eq!(field(summary, "lost"), Some("0"), "{context}");
    assert_eq!(field(summary, "peers"), Some("browser"), "{context}");
    let kinds = field(summary, "kinds").unwrap_or_default();
    for kind in ["kill", "stop", "link", "spectator", "server", "desync"] {
        let count = kinds
            .split(',')
            .find_map(|k| k.strip_prefix(kind)?.strip_prefix(':'))
            .and_then(|n| n.parse::<u32>().ok());
        assert!(count >= Some(1), "no {kind} fault: {context}");
    }
    assert!(output.status.success(), "a check failed:\n{context}");
}
