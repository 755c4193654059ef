//! What a rejoin costs after a long game: from tick 0 against from the
//! latest verified snapshot.
//!
//! An hour of play cannot be played live here, so the history is built
//! offline: four seeded bots play `ticks` ticks at full speed, their
//! inputs kept as the bundles a server would hold. Then a joining client's
//! work is timed both ways:
//!
//! - from tick 0: a fresh world stepped through every bundle (what a
//!   rejoin cost before snapshots);
//! - from the snapshot: the world of the latest verified snapshot at worst
//!   (the join comes just before the next one is confirmed: a whole
//!   interval plus the confirmation lag before the end) encoded as the
//!   player sends it, decoded as the joiner does, then stepped through the
//!   bundles since.
//!
//! Both must end on the same hash as the game itself.
//!
//! Run: `cargo bench -p lockstep-bench --bench catch_up`
//! (LOCKSTEP_BENCH_BALLS=24,1000 and LOCKSTEP_BENCH_MINUTES=10,60 by
//! default; an hour of 1000 balls takes a few minutes to build and replay).

use std::hint::black_box;

use lockstep_client::io::clock;
use lockstep_protocol::{decode, encode, PlayerInput, MAX_SNAPSHOT_SIZE};
use lockstep_sim::offline::{self, SimOptions};
use lockstep_sim::World;

const TICK_RATE: u16 = 60;
const PLAYERS: u8 = 4;
/// The server's default snapshot interval, in ticks.
const INTERVAL: u32 = lockstep_server::DEFAULT_SNAPSHOT_SECS as u32 * TICK_RATE as u32;
/// How long after its tick a snapshot is verified: the next hash report
/// (every 15 ticks), a round trip and the transfer; half a second.
const LAG: u32 = 30;

fn list(name: &str, default: &str) -> Vec<u32> {
    std::env::var(name)
        .unwrap_or_else(|_| default.into())
        .split(',')
        .filter_map(|v| v.trim().parse().ok())
        .collect()
}

/// The bundles of a `ticks`-long game, the world at the snapshot tick and
/// the final hash.
fn build(balls: u16, ticks: u32, snapshot_at: u32) -> (Vec<Vec<PlayerInput>>, World, u64) {
    let options = SimOptions {
        players: PLAYERS,
        seed: 0x5EED,
        ticks,
        balls,
        tick_rate: TICK_RATE,
    };
    let (mut world, mut bots) = offline::setup(options);
    let mut bundles = Vec::with_capacity(ticks as usize);
    let mut snapshot = world.clone();
    for tick in 0..ticks {
        if tick == snapshot_at {
            snapshot = world.clone();
        }
        let inputs = bots.inputs(&world);
        world.step(&inputs);
        bundles.push(inputs);
    }
    (bundles, snapshot, world.hash())
}

fn main() {
    println!(
        "catch-up: {PLAYERS} bots at {TICK_RATE} Hz, snapshot every {INTERVAL} ticks; \
         joined a whole interval after the last snapshot (worst case)"
    );
    for balls in list("LOCKSTEP_BENCH_BALLS", "24,1000") {
        for minutes in list("LOCKSTEP_BENCH_MINUTES", "10,60") {
            let ticks = minutes * 60 * u32::from(TICK_RATE);
            // The newest snapshot a joiner can get at worst: the next one
            // is about to be verified.
            let snapshot_at = ticks - INTERVAL - LAG;
            let (bundles, snapshot, hash) = build(balls as u16, ticks, snapshot_at);

            let started = clock::now();
            let mut world = offline::setup(SimOptions {
                players: PLAYERS,
                seed: 0x5EED,
                ticks,
                balls: balls as u16,
                tick_rate: TICK_RATE,
            })
            .0;
            for inputs in &bundles {
                world.step(black_box(inputs));
            }
            let from_zero = clock::since(started);
            assert_eq!(world.hash(), hash, "from tick 0");

            let bytes = encode(&snapshot, MAX_SNAPSHOT_SIZE as usize).expect("a world encodes");
            let started = clock::now();
            let mut world: World =
                decode(black_box(&bytes), MAX_SNAPSHOT_SIZE as usize).expect("a world decodes");
            for inputs in &bundles[snapshot_at as usize..] {
                world.step(black_box(inputs));
            }
            let from_snapshot = clock::since(started);
            assert_eq!(world.hash(), hash, "from the snapshot");
            println!(
                "  {balls:>4} balls, {minutes:>2} min ({ticks} ticks): from tick 0 {:>8.1} ms; \
                 from the snapshot of tick {snapshot_at} ({} ticks, {} B) {:>6.1} ms",
                from_zero.as_secs_f64() * 1000.0,
                ticks - snapshot_at,
                bytes.len(),
                from_snapshot.as_secs_f64() * 1000.0,
            );
        }
    }
}
