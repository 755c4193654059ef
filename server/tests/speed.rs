//! Speed control end to end: one bot plays a machine at half the speed the
//! tick rate needs (the hidden `--tick-cost-ms 33`: 33 ms more for every
//! 16.7 ms tick), the server slows the game down for everyone, and speeds
//! it up again once the machine recovers (`--tick-cost-until`). Real
//! processes over QUIC on loopback.

use std::time::Duration;

use lockstep_testkit::{Client, Server};

/// Ticks the game runs.
const TICKS: u32 = 600;

/// The last tick the slow bot's machine is slow for.
const SLOW_UNTIL: u32 = 150;

/// The value of `key` in a server line.
fn field<'a>(line: &'a str, key: &str) -> &'a str {
    lockstep_testkit::field(line, key).unwrap_or_else(|| panic!("no {key} in {line:?}"))
}

#[test]
fn a_machine_at_half_speed_slows_the_game_for_everyone_until_it_recovers() {
    let mut server = Server::start(3, &["--seed", "61"]);
    let mut clients: Vec<Client> = (0..2)
        .map(|i| Client::headless_bot(&server, &format!("quick{i}"), i, TICKS))
        .collect();
    let mut slow = lockstep_testkit::headless_bot(&server, "slow", 2, TICKS);
    slow.args(["--tick-cost-ms", "33", "--tick-cost-until"])
        .arg(SLOW_UNTIL.to_string());
    clients.push(Client::spawn("slow", &mut slow));

    // Within a moment the game runs at what the slow machine sustains
    // (about 49% of the tick rate, with 10% to spare).
    let slowed = server.wait_for("speed percent=", Duration::from_secs(20));
    assert_eq!(field(&slowed, "reason"), "slow", "{slowed}");
    assert_eq!(field(&slowed, "slowest"), "slow", "{slowed}");
    let percent: u32 = field(&slowed, "percent").parse().unwrap();
    assert!((30..=48).contains(&percent), "{slowed}");

    // Once the machine has kept up comfortably for a while, full speed.
    let back = server.wait_for("speed percent=100 ", Duration::from_secs(60));
    assert_eq!(field(&back, "reason"), "recovered", "{back}");
    let from: u32 = field(&back, "from_tick").parse().unwrap();
    assert!(from > SLOW_UNTIL && from < TICKS, "{back}");

    let (finished, (ticks, _)) =
        lockstep_testkit::finish_in_lockstep(clients, Duration::from_secs(60));
    assert_eq!(ticks, TICKS);
    // The slowest speed of the game, which every client saw (a busy test
    // machine may have slowed the game down a second time).
    server.wait_for("game over", Duration::from_secs(10));
    let slowest = server
        .seen
        .iter()
        .filter(|line| line.starts_with("speed "))
        .map(|line| field(line, "percent").parse::<u64>().unwrap())
        .min();
    for quick in &finished[..2] {
        // Without speed control they would wait on almost every tick of
        // the slow machine's 150; with it only until the slower speed
        // starts (a fraction of a second: about 10 ticks on an idle
        // machine), and on a busy one more (45 with make cross running
        // beside make test on two cores): never half of them.
        let stalled = quick.stat("stalled_ticks");
        assert!(stalled < u64::from(SLOW_UNTIL) / 2, "{}", quick.stdout);
        assert_eq!(Some(quick.stat("speed_pct")), slowest);
    }
}
