//! Simulation throughput: how many ticks per second the deterministic world
//! steps, bots included, with the default ball count and with four times as
//! many.
//!
//! A plain binary (`harness = false`) so it needs no benchmark framework:
//! `cargo bench -p lockstep-bench --bench sim`. Each scenario is repeated
//! and reported as median, min and max, so the spread shows how much to
//! trust one number. The final hash of every repetition is checked to be
//! the same, which both proves the run is deterministic and keeps the
//! optimiser from discarding the work.

use std::hint::black_box;
use std::process::ExitCode;

use lockstep_balls::engine::setup;
use lockstep_balls::World;
use lockstep_balls::WorldConfig;
use lockstep_client::io::clock;

/// Repetitions per scenario: enough for a median that ignores a noisy run.
const REPETITIONS: usize = 10;
/// Ticks per repetition: 20,000 ticks is about 5.5 minutes of play at 60 Hz.
const TICKS: u32 = 20_000;
const TICK_RATE: u16 = 60;
const SEED: u64 = 0x5EED;
const PLAYERS: u8 = 4;

/// What one repetition measured and produced.
struct Run {
    ticks_per_second: f64,
    hash: u64,
    collisions: u64,
    goals: u32,
}

/// Plays one offline game of [`TICKS`] ticks (exactly what
/// `lockstep-client sim` runs) and times it.
fn run_once(balls: u16) -> Run {
    let setup = setup(PLAYERS, SEED, balls, TICK_RATE);
    let start = clock::now();
    let world: World = lockstep_engine::offline(black_box(&setup), TICKS);
    let elapsed = clock::since(start).as_secs_f64();
    Run {
        ticks_per_second: f64::from(TICKS) / elapsed,
        hash: black_box(world.hash()),
        collisions: world.collisions(),
        goals: world.scores().iter().map(|score| score.goals).sum(),
    }
}

/// Runs one scenario and prints its line; returns whether every repetition
/// ended with the same hash.
fn scenario(name: &str, balls: u16) -> bool {
    let runs: Vec<Run> = (0..REPETITIONS).map(|_| run_once(balls)).collect();
    let mut rates: Vec<f64> = runs.iter().map(|run| run.ticks_per_second).collect();
    rates.sort_by(f64::total_cmp);
    let median = (rates[(rates.len() - 1) / 2] + rates[rates.len() / 2]) / 2.0;
    let first = &runs[0];
    let identical = runs.iter().all(|run| run.hash == first.hash);
    let simulated_seconds = f64::from(TICKS) / f64::from(TICK_RATE);
    println!(
        "{name:<28} ticks/s median {median:>9.0}  min {:>9.0}  max {:>9.0}  \
         hash {:#018x} ({})  collisions/s {:.0}  goals {}",
        rates[0],
        rates[rates.len() - 1],
        first.hash,
        if identical {
            "identical x10"
        } else {
            "DIFFERS"
        },
        first.collisions as f64 / simulated_seconds,
        first.goals,
    );
    identical
}

fn main() -> ExitCode {
    println!(
        "{REPETITIONS} repetitions of {TICKS} ticks at {TICK_RATE} Hz, 4 bots, seed {SEED:#x}"
    );
    let default = scenario("4 players, 24 balls", WorldConfig::DEFAULT_BALLS);
    let crowded = scenario("4 players, 96 balls", 4 * WorldConfig::DEFAULT_BALLS);
    if default && crowded {
        ExitCode::SUCCESS
    } else {
        eprintln!("hashes differ between identical runs: the simulation is not deterministic");
        ExitCode::FAILURE
    }
}
