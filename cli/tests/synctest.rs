//! `lockstep-client synctest` as a user runs it: a separate process, judged
//! by its exit status and its last line.

use std::process::{Command, Output};

/// Runs the client binary built for this test run with `args`.
fn client(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lockstep-client"))
        .args(args)
        .output()
        .expect("the client binary runs")
}

/// The `final tick=N hash=H` line of a successful run.
fn final_line(output: &Output) -> String {
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "exit {:?}\nstdout:\n{stdout}\nstderr:\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
        .lines()
        .rev()
        .find(|line| line.starts_with("final "))
        .unwrap_or_else(|| panic!("no final line in:\n{stdout}"))
        .to_owned()
}

#[test]
fn synctest_passes_and_ends_where_the_plain_offline_game_ends() {
    let synctest = final_line(&client(&[
        "synctest",
        "--ticks",
        "600",
        "--check-distance",
        "8",
    ]));
    let sim = final_line(&client(&[
        "sim",
        "--players",
        "4",
        "--seed",
        "1",
        "--ticks",
        "600",
    ]));
    assert!(synctest.starts_with("final tick=600 hash="), "{synctest}");
    assert_eq!(synctest, sim);
}

#[test]
fn synctest_too_short_to_check_anything_fails_with_a_reason() {
    let output = client(&["synctest", "--ticks", "3", "--check-distance", "8"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with("lockstep-client: ") && stderr.contains("nothing would be re-simulated"),
        "{stderr}"
    );
}
