//! Rejoin benchmark: how long a player whose client crashed takes to catch
//! up with a long game.
//!
//! A `lockstep-server --tick-rate 240` and two headless bots, `a` and `b`,
//! as real processes on 127.0.0.1. At 240 Hz ten minutes of 60 Hz play
//! (36,000 ticks) take 150 s. Once the game has run that long, `b` is killed
//! with SIGKILL and started again under the same name: the server ends the
//! dead connection's slot, sends the new one Start and the whole history
//! (every bundle since tick 0) and lets it back in a moment later. The new
//! `b` fast-forwards through the history and prints `caught up with the game
//! at tick N in X ms`, X counted from the moment its Start arrived: it
//! covers receiving the history and re-simulating it.
//!
//! The rejoined `b` plays on for a few seconds and leaves, so that its
//! `stats rx_bytes` says what the rejoin cost on the wire (the history
//! plus those seconds of live play). Every round is a fresh game.
//!
//! Run: `cargo build --release --bins && cargo bench -p lockstep-bench --bench rejoin`
//!
//! Options (environment): LOCKSTEP_BENCH_TICKS, ticks played before the
//! crash (default 36000); LOCKSTEP_BENCH_ROUNDS, games (default 3).

mod measure;

use std::time::Duration;

use lockstep_client::io::clock;
use lockstep_protocol::{encode, Bundle, Input, PlayerId, PlayerInput, MAX_MESSAGE_SIZE};

use lockstep_testkit::{Client, Server};
use measure::{env_or, spread};

/// Tick rate of the game: four times 60 Hz, so ten minutes of play fit in
/// two and a half.
const TICK_RATE: u32 = 240;

/// Ticks the rejoined client plays after its crash before leaving: enough
/// to be back in the game (the server lets it in about 1.2 s of game time
/// after it connects) and play live for a while.
const PLAY_AFTER: u32 = 4 * TICK_RATE;

/// A bot that never leaves on its own (it is killed with its game).
const FOREVER: u32 = u32::MAX;

/// What one rejoin measured.
struct Rejoin {
    /// The tick the new `b` caught up at: about the history's length.
    caught_up_tick: u32,
    /// Its `caught up ... in X ms`.
    ms: f64,
    /// The tick the server let it back in at.
    back_at: u32,
    /// Bytes it received: history and live play.
    rx_bytes: u64,
}

/// `N` and `X` of `caught up with the game at tick N in X ms`.
fn caught_up(stderr: &str) -> Option<(u32, f64)> {
    let line = stderr
        .lines()
        .find(|l| l.contains("caught up with the game"))?;
    let words: Vec<&str> = line.split_whitespace().collect();
    let after = |word: &str| {
        let at = words.iter().position(|w| *w == word)?;
        words.get(at + 1)?.parse::<f64>().ok()
    };
    Some((after("tick")? as u32, after("in")?))
}

/// Plays `ticks` ticks, crashes `b`, starts it again and measures its
/// catch-up.
fn round(ticks: u32) -> Rejoin {
    let mut server = Server::start(2, &["--tick-rate", &TICK_RATE.to_string()]);
    let _a = Client::headless_bot(&server, "a", 1, FOREVER);
    let b = Client::headless_bot(&server, "b", 2, FOREVER);
    server.wait_for("start players=", Duration::from_secs(30));
    let started = clock::now();
    std::thread::sleep(Duration::from_secs(u64::from(ticks / TICK_RATE)));
    // Dropping a client kills it with SIGKILL: a crash, no Leave sent.
    drop(b);
    // The game cannot be further than real time allows.
    let reached = (clock::since(started).as_secs_f64() * f64::from(TICK_RATE)) as u32;
    let b = Client::headless_bot(&server, "b", 2, reached + PLAY_AFTER);
    let rejoined = server.wait_for("rejoined player=", Duration::from_secs(60));
    let back_at = rejoined
        .split_whitespace()
        .find_map(|field| field.strip_prefix("tick="))
        .and_then(|tick| tick.parse().ok())
        .unwrap_or_else(|| panic!("no tick in {rejoined:?}"));
    let finished = b.finish(Duration::from_secs(60));
    finished.final_line();
    let (caught_up_tick, ms) = caught_up(&finished.stderr)
        .unwrap_or_else(|| panic!("no catch-up line in {:?}", finished.stderr));
    Rejoin {
        caught_up_tick,
        ms,
        back_at,
        rx_bytes: finished.stat("rx_bytes"),
    }
}

fn main() {
    let ticks: u32 = env_or("LOCKSTEP_BENCH_TICKS", 36_000);
    let rounds: u32 = env_or("LOCKSTEP_BENCH_ROUNDS", 3);
    // A two-player bundle as it travels in a History message.
    let bundle = Bundle {
        inputs: (0..2)
            .map(|p| PlayerInput {
                player: PlayerId(p),
                input: Input::default(),
            })
            .collect(),
        ..Bundle::default()
    };
    let bundle_bytes = encode(&bundle, MAX_MESSAGE_SIZE)
        .expect("a bundle encodes")
        .len();
    println!(
        "rejoin: 2 bots at {TICK_RATE} Hz, b killed after {ticks} ticks ({} s) and \
         restarted, {rounds} rounds",
        ticks / TICK_RATE
    );
    let mut times = Vec::new();
    for round_number in 1..=rounds {
        let rejoin = round(ticks);
        println!(
            "  round {round_number}: caught up at tick {} in {:.0} ms; back in the game at \
             tick {}; history about {} KB ({bundle_bytes} B a bundle); received {} KB in all",
            rejoin.caught_up_tick,
            rejoin.ms,
            rejoin.back_at,
            rejoin.caught_up_tick as usize * bundle_bytes / 1000,
            rejoin.rx_bytes / 1000,
        );
        times.push(rejoin.ms);
    }
    let (median, min, max) = spread(&mut times);
    println!("  catch-up: median {median:.0} ms (min {min:.0}, max {max:.0})");
}
