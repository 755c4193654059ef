//! Slow window benchmark: how long a game waits for a player whose window
//! draws slowly, with the window's inputs sent on the game's schedule by
//! its network thread (the default) and only as its frames sample them
//! (`--inputs-on-frames`).
//!
//! Real processes on 127.0.0.1: one `lockstep-server`, one windowed client
//! under Xvfb without `--bot` (a player who holds no key), each of its
//! frames made `--draw-cost-ms D` slower, and two
//! `lockstep-client --headless --bot i`. The bots' inputs depend on their
//! world, so they always go as frames sample them; the window's input is
//! what the game may wait for. A stalled tick is one a client had to wait
//! for (`stats stalled_ticks=`), counted once however long the wait; the
//! window's `inputs_on_schedule=` counts the ticks whose input its network
//! thread sent before the frame sampled it. Every client must end on the
//! same hash.
//!
//! With the adaptive input delay the window's client raises its delay
//! until its late inputs no longer hold the game up, so the cost of a slow
//! window shows in the delay as much as in the stalls; with the delay
//! pinned (`--input-delay` on every client) it shows in the stalls alone.
//!
//! Run: `cargo build --release --bins && cargo bench -p lockstep-bench --bench slow_window`
//!
//! Options (environment): LOCKSTEP_BENCH_TICKS, ticks per game (default
//! 1200, 20 s at 60 Hz); LOCKSTEP_BENCH_DRAW_MS, the draw costs tried
//! (default `0,40`); LOCKSTEP_BENCH_DELAYS, the input delays tried,
//! `adaptive` or a number of ticks (default `adaptive,2`).

mod measure;

use std::time::Duration;

use lockstep_client::io::clock;
use lockstep_testkit::{windowed, Client, Finished, Server};
use measure::{env_list, env_or};

/// The server's default tick rate, which the games run at.
const TICK_RATE: u32 = 60;

/// The two ways the window's inputs may go, as its flags.
const PATHS: &[(&str, &[&str])] = &[("on schedule", &[]), ("on frames", &["--inputs-on-frames"])];

/// What one game measured.
struct Game {
    /// The window's, then each bot's stalled ticks.
    stalled: Vec<u64>,
    /// The window's inputs sent on schedule.
    on_schedule: u64,
    /// From Start to the last client's exit.
    wall: Duration,
}

/// Plays one game: the window with `draw_ms` of extra cost per frame and
/// `path`'s flags, two bots, every client with `delay`'s flags.
fn game(draw_ms: u32, delay: &[String], path: &[&str], ticks: u32) -> Game {
    let mut server = Server::start(3, &[]);
    let ticks_arg = ticks.to_string();
    let draw_arg = draw_ms.to_string();
    // A person's window, ready at once so the game starts without a key.
    let mut window_args = vec![
        "--ready",
        "--ticks",
        &ticks_arg,
        "--draw-cost-ms",
        &draw_arg,
    ];
    window_args.extend(delay.iter().map(String::as_str));
    window_args.extend(path);
    let window = windowed(&server, "window", &window_args);
    let bots: Vec<Client> = (0..2)
        .map(|i| {
            let name = format!("bot{i}");
            let mut command = lockstep_testkit::headless(&server, &name);
            command
                .args(["--bot", &i.to_string(), "--ticks", &ticks_arg])
                .args(delay);
            Client::spawn(&name, &mut command)
        })
        .collect();
    server.wait_for("start players=", Duration::from_secs(60));
    let started = clock::now();
    // A game stalled on most ticks runs at a fraction of real time.
    let timeout = Duration::from_secs(u64::from(ticks / TICK_RATE) * 5 + 60);
    let finished: Vec<Finished> = std::iter::once(window)
        .chain(bots)
        .map(|client| client.finish(timeout))
        .collect();
    let wall = clock::since(started);
    let ends: Vec<(u32, String)> = finished.iter().map(Finished::final_line).collect();
    assert!(
        ends.iter().all(|end| *end == ends[0]),
        "the clients disagree: {ends:?}"
    );
    Game {
        stalled: finished.iter().map(|f| f.stat("stalled_ticks")).collect(),
        on_schedule: finished[0].stat("inputs_on_schedule"),
        wall,
    }
}

/// The flags of a delay named `adaptive` or a number of ticks.
fn delay_flags(delay: &str) -> Vec<String> {
    match delay {
        "adaptive" => Vec::new(),
        ticks => vec!["--input-delay".into(), ticks.into()],
    }
}

fn main() {
    let ticks: u32 = env_or("LOCKSTEP_BENCH_TICKS", 1200);
    let draw_costs: Vec<u32> = env_list("LOCKSTEP_BENCH_DRAW_MS", "0,40");
    let delays: Vec<String> = env_list("LOCKSTEP_BENCH_DELAYS", "adaptive,2");
    println!(
        "slow window: a window without --bot and two headless bots, {ticks} ticks at \
         {TICK_RATE} Hz per game ({} s of play)",
        ticks / TICK_RATE
    );
    let mut rows = Vec::new();
    for &draw_ms in &draw_costs {
        for delay in &delays {
            for &(path, flags) in PATHS {
                let game = game(draw_ms, &delay_flags(delay), flags, ticks);
                println!(
                    "  draw +{draw_ms} ms / delay {delay} / {path}: stalled ticks {:?} \
                     (window, bots); inputs on schedule {}; {:.1} s from Start to the last exit",
                    game.stalled,
                    game.on_schedule,
                    game.wall.as_secs_f64()
                );
                rows.push((draw_ms, delay, path, game));
            }
        }
    }
    println!(
        "\n| draw cost | input delay | window's inputs | stalled ticks, window | \
         stalled ticks, bots | inputs on schedule | wall s, Start to last exit |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (draw_ms, delay, path, game) in &rows {
        let bots: Vec<String> = game.stalled[1..].iter().map(u64::to_string).collect();
        println!(
            "| +{draw_ms} ms | {delay} | {path} | {} | {} | {} | {:.1} |",
            game.stalled[0],
            bots.join(", "),
            game.on_schedule,
            game.wall.as_secs_f64(),
        );
    }
}
