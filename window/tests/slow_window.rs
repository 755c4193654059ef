//! A window that draws slowly, under Xvfb: its network thread sends the
//! player's inputs when the game's schedule says, not only as its frames
//! sample them. How much less the bots it plays with wait is a timing, so
//! it is measured by the benchmark (`cargo bench -p lockstep-bench --bench
//! slow_window`, BENCHMARKS.md), not asserted here: under load a test run
//! saw the ratio fail once in ten.

use std::time::Duration;

use lockstep_testkit::{windowed, Client, Finished, Server};

/// Ticks per game: five seconds at 60 Hz.
const TICKS: u32 = 300;

/// The input delay every client is pinned to: 33 ms, less than one slow
/// frame, so inputs sent only as frames sample them make the game wait on
/// most ticks.
const DELAY: &str = "2";

/// Plays a game of a window that draws for 40 ms more each frame, with
/// `flags`, and two headless bots; the window's end first.
fn game(flags: &[&str]) -> Vec<Finished> {
    // No laggard tolerance: with it the server stands in for the slow
    // window's late inputs after a few ms, the bots hardly wait either way,
    // and the test could not tell inputs on schedule from inputs on frames.
    let mut server = Server::start(3, &["--seed", "8", "--laggard-ms", "0"]);
    let ticks = TICKS.to_string();
    // No --bot: a player who holds no key, whose input the window holds,
    // and who is ready for the game at once (no key for that either).
    let mut args = vec!["--ready", "--ticks", &ticks, "--input-delay", DELAY];
    args.extend(["--draw-cost-ms", "40"]);
    args.extend(flags);
    // One at a time, so every game has the same roster.
    let window = windowed(&server, "slow", &args);
    server.wait_for("name=slow", Duration::from_secs(30));
    let bots: Vec<Client> = (0..2)
        .map(|i| {
            let name = format!("bot{i}");
            let mut command = lockstep_testkit::headless(&server, &name);
            command.args(["--bot", &i.to_string(), "--ticks", &ticks]);
            command.args(["--input-delay", DELAY]);
            let bot = Client::spawn(&name, &mut command);
            server.wait_for(&format!("name={name}"), Duration::from_secs(30));
            bot
        })
        .collect();
    server.wait_for("start players=", Duration::from_secs(30));
    std::iter::once(window)
        .chain(bots)
        .map(|client| client.finish(Duration::from_secs(120)))
        .collect()
}

/// Every client's final line, which must be the same for all.
fn agreed_end(game: &[Finished]) -> (u32, String) {
    let ends: Vec<(u32, String)> = game.iter().map(Finished::final_line).collect();
    assert!(ends.iter().all(|end| *end == ends[0]), "{ends:?}");
    ends[0].clone()
}

#[test]
fn a_window_that_draws_for_40_ms_a_frame_still_sends_its_inputs_on_time() {
    let on_frames = game(&["--inputs-on-frames"]);
    let on_schedule = game(&[]);

    // Every game ends in agreement. (Not on the same hash as each other:
    // the bots sample their inputs while they wait, from the world they
    // hold, so how long they wait changes what they play.)
    assert_eq!(agreed_end(&on_schedule).0, TICKS);
    assert_eq!(agreed_end(&on_frames).0, TICKS);

    // Frames of 40 ms and more run two or three ticks each, at their
    // start: most ticks fell due while a frame drew.
    let sent_on_schedule = on_schedule[0].stat("inputs_on_schedule");
    assert!(
        sent_on_schedule > u64::from(TICKS) / 2,
        "only {sent_on_schedule} of {TICKS} inputs went on schedule"
    );
    assert_eq!(on_frames[0].stat("inputs_on_schedule"), 0);
}
