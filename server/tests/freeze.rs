//! A player whose machine stops for a while (a frozen process, a suspended
//! laptop), played with real processes over real QUIC on loopback: the
//! bot is stopped with SIGSTOP and goes on with SIGCONT.

use std::time::Duration;

use lockstep_testkit::{finish_in_lockstep, signal, Client, Server};

/// Three bots play 1200 ticks on a server that drops a silent player
/// after 20 s; bot1 is stopped for 8 s once the game runs. That is longer
/// than any of the client's own limits used to be (5 s of silence), and
/// wakes it with hundreds of ticks overdue.
#[test]
fn a_bot_frozen_for_less_than_the_drop_timeout_comes_back_on_its_connection() {
    let mut server = Server::start(
        3,
        &[
            "--seed",
            "66",
            "--drop-timeout-ms",
            "20000",
            "--laggard-ms",
            "20",
            "--snapshot-secs",
            "2",
        ],
    );
    let clients: Vec<Client> = (0..3)
        .map(|i| Client::headless_bot(&server, &format!("bot{i}"), 70 + i, 1200))
        .collect();
    server.wait_for("start players=", Duration::from_secs(10));
    // The first verified snapshot: the game runs, bot1 in it.
    server.wait_for_log("snapshot verified", Duration::from_secs(30));
    let frozen = clients[1].child.id();
    signal(frozen, "STOP");
    std::thread::sleep(Duration::from_secs(8));
    signal(frozen, "CONT");

    let (finished, (tick, _)) = finish_in_lockstep(clients, Duration::from_secs(120));
    assert_eq!(tick, 1200);
    server.wait_for("game over", Duration::from_secs(10));
    // The server stood in for it while it was away, and never let it go.
    let about_bot1: Vec<&String> = server
        .seen
        .iter()
        .filter(|line| line.contains("name=bot1"))
        .collect();
    assert!(
        about_bot1.iter().any(|l| l.starts_with("substituted ")),
        "{about_bot1:?}"
    );
    assert!(
        about_bot1.iter().all(|l| !l.starts_with("rejoined ")
            && (!l.starts_with("dropped ") || l.ends_with("reason=left"))),
        "{about_bot1:?}"
    );
    // Waking up, it sent its overdue inputs without flooding the server.
    let log = server.log();
    assert!(
        !log.iter().any(|l| l.contains("too many datagrams")),
        "{}",
        log.join("\n")
    );
    let bot1 = &finished[1].stderr;
    assert!(!bot1.contains("reconnecting"), "{bot1}");
    assert!(bot1.contains("were replaced"), "{bot1}");
}
