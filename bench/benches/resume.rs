//! Resume benchmark: how long a game stands still when its server dies
//! and is started again with `--resume`.
//!
//! A `lockstep-server` and three headless bots (`--reconnect-secs 60`) as
//! real processes on 127.0.0.1. Once the game has played
//! LOCKSTEP_BENCH_TICKS ticks, the server is killed with SIGKILL. The bots
//! notice after 5 s of silence and start trying to reconnect; 6 s after
//! the kill the server is started again with `--resume` on its replay,
//! on the same address and identity. Timed from that start:
//!
//! - **loaded**: the server printed `resuming tick=N` (it has read the
//!   replay, cut its torn tail and is listening);
//! - **running**: it printed `resumed tick=N`, the first tick of the
//!   resumed game bundled: every bot reconnected, got the bundles it
//!   lacked, and sent its inputs.
//!
//! The time the bots take to notice the loss (5 s, their QUIC idle
//! timeout) is not counted: a server restarted by hand comes later than
//! that. Every round is a fresh game.
//!
//! Run: `cargo build --release --bins && cargo bench -p lockstep-bench --bench resume`
//!
//! Options (environment): LOCKSTEP_BENCH_TICKS, ticks before the kill
//! (default 600); LOCKSTEP_BENCH_ROUNDS, games (default 5).

mod measure;

use std::time::Duration;

use lockstep_client::io::clock;
use lockstep_testkit::{wait_for_bundles_within, Client, Server};
use measure::{env_or, spread};

/// A bot that never leaves on its own (it is killed with its game).
const FOREVER: u32 = u32::MAX;

/// One game: (ms to loaded, ms to running, the tick it resumed at).
fn round(ticks: usize, seed: u64) -> (f64, f64, String) {
    let mut server = Server::start(3, &["--seed", &seed.to_string(), "--no-advertise"]);
    let _bots: Vec<Client> = (0..3)
        .map(|i| {
            let name = format!("bot{i}");
            Client::spawn(
                &name,
                lockstep_testkit::headless_bot(&server, &name, seed + i, FOREVER)
                    .args(["--reconnect-secs", "60"]),
            )
        })
        .collect();
    server.wait_for("start players=", Duration::from_secs(30));
    let replay = server.recording_path();
    wait_for_bundles_within(&replay, ticks, Duration::from_secs(3600));
    lockstep_testkit::signal(server.child.id(), "KILL");
    std::thread::sleep(Duration::from_secs(6));
    let started = clock::now();
    let mut resumed = Server::resume(server, &replay, &["--no-advertise"]);
    let resuming = resumed.wait_for("resuming tick=", Duration::from_secs(30));
    let loaded = clock::since(started).as_secs_f64() * 1000.0;
    resumed.wait_for("resumed tick=", Duration::from_secs(60));
    let running = clock::since(started).as_secs_f64() * 1000.0;
    let tick = resuming
        .split_whitespace()
        .find_map(|f| f.strip_prefix("tick="))
        .unwrap_or_default()
        .to_string();
    (loaded, running, tick)
}

fn main() {
    let ticks: usize = env_or("LOCKSTEP_BENCH_TICKS", 600);
    let rounds: u64 = env_or("LOCKSTEP_BENCH_ROUNDS", 5);
    println!(
        "resume: 3 bots, server killed after {ticks} ticks and started again with --resume \
         6 s later, {rounds} rounds"
    );
    let (mut loaded, mut running) = (Vec::new(), Vec::new());
    for round_number in 1..=rounds {
        let (l, r, tick) = round(ticks, 40 + round_number * 10);
        println!(
            "  round {round_number}: resumed at tick {tick}: replay loaded in {l:.0} ms, \
             game running in {r:.0} ms"
        );
        loaded.push(l);
        running.push(r);
    }
    let (median, min, max) = spread(&mut loaded);
    println!("  loaded:  median {median:.0} ms (min {min:.0}, max {max:.0})");
    let (median, min, max) = spread(&mut running);
    println!("  running: median {median:.0} ms (min {min:.0}, max {max:.0})");
}
