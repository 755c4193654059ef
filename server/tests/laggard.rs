//! Laggard tolerance over real QUIC on loopback: a bot whose inputs leave
//! late does not hold the game up; the server stands in for them, every
//! client applies the same bundles, and the replay keeps the marks.

use std::time::Duration;

use lockstep_protocol::Bundle;
use lockstep_testkit::{headless, last_line, read_replay, slot_of, verified, Client, Server};

/// How late the slow bot's inputs leave: three times the tolerance, and
/// more than its input delay covers.
const SEND_DELAY_MS: &str = "150";

/// A `key=value` field of a line.
fn field<'a>(line: &'a str, key: &str) -> &'a str {
    line.split_whitespace()
        .find_map(|f| f.strip_prefix(key)?.strip_prefix('='))
        .unwrap_or_else(|| panic!("no {key} in {line:?}"))
}

#[test]
fn a_late_bot_is_stood_in_for_and_everyone_ends_in_lockstep_with_the_marks_recorded() {
    let mut server = Server::start(3, &["--seed", "61", "--laggard-ms", "50"]);
    let mut clients: Vec<Client> = (0..2)
        .map(|i| Client::headless_bot(&server, &format!("bot{i}"), i, 600))
        .collect();
    // Its input delay is pinned, so it cannot grow to hide the delay.
    clients.push(Client::spawn(
        "slow",
        headless(&server, "slow").args([
            "--bot",
            "2",
            "--ticks",
            "600",
            "--input-delay",
            "3",
            "--send-delay-ms",
            SEND_DELAY_MS,
        ]),
    ));
    let file = server.recording_path();
    let finished: Vec<_> = clients
        .into_iter()
        .map(|c| c.finish(Duration::from_secs(90)))
        .collect();
    let finals: Vec<(u32, String)> = finished.iter().map(|f| f.final_line()).collect();
    assert!(
        finals.iter().all(|f| *f == (600, finals[0].1.clone())),
        "{finals:?}"
    );

    let slow = &finished[2];
    let replaced = slow.stat("replaced");
    assert!(replaced > 300, "{}", slow.stdout);
    assert!(
        slow.stderr
            .contains("lockstep-client: your input for tick "),
        "{}",
        slow.stderr
    );
    // Told at once, then summed up every few seconds: a handful of lines.
    let told = slow.stderr.matches("were replaced").count();
    assert!((1..=4).contains(&told), "{}", slow.stderr);
    for on_time in &finished[..2] {
        assert!(
            on_time.stat("replaced") < replaced / 10,
            "{}",
            on_time.stdout
        );
    }

    // The server said so, a few lines that add up to every stand-in.
    server.wait_for("game over", Duration::from_secs(20));
    let lines: Vec<&String> = server
        .seen
        .iter()
        .filter(|l| l.starts_with("substituted ") && l.contains(" name=slow "))
        .collect();
    assert!(!lines.is_empty() && lines.len() <= 5, "{lines:?}");
    let announced: u64 = lines
        .iter()
        .map(|l| field(l, "count").parse::<u64>().expect("count"))
        .sum();
    let waited: u64 = field(lines[0], "waited_ms").parse().expect("waited_ms");
    assert!((50..100).contains(&waited), "{}", lines[0]);

    // The replay keeps the marks: as many as the server announced, and
    // exactly the ticks the slow client counted up to its tick 600.
    let replay = read_replay(&file);
    let slow_id = slot_of(&replay, "slow");
    let marked = |bundles: &[Bundle]| {
        bundles
            .iter()
            .filter(|b| b.substituted.contains(&slow_id))
            .count() as u64
    };
    assert_eq!(marked(&replay.bundles), announced);
    assert_eq!(marked(&replay.bundles[..600]), replaced);

    // And it verifies to the clients' hash in another process.
    let out = verified(&file, &["--ticks", "600"]);
    assert_eq!(
        last_line(&out),
        format!("final tick=600 hash={}", finals[0].1)
    );
}
