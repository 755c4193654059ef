//! Topple's costs: rapier's step at several body counts beside the ball
//! game's step, how much of the world is awake and touching while it runs,
//! and the size and encode/decode time of its snapshot.
//!
//! Each repetition plays every scenario once, one after the other, so a
//! noisy moment of a shared machine hits them alike and the ratio to the
//! ball game is taken within one repetition. A scenario is a game of four
//! seeded bots at 60 Hz from tick 0; only `Game::step` is timed (the bots'
//! decisions are not), tick by tick, by the wall clock and by the
//! thread's CPU clock: on a loaded machine the wall clock also counts the
//! time the thread waited for a core, the CPU clock only the work (plus
//! the clock's own system call, a fraction of a microsecond, which the
//! ball game's microsecond step shows and Topple's does not). The final
//! hash of every repetition of a scenario must be the same.
//!
//! Run: `cargo bench -p lockstep-bench --bench physics`
//! (LOCKSTEP_BENCH_BODIES=150,160,300,600, LOCKSTEP_BENCH_TICKS=3600 and
//! LOCKSTEP_BENCH_REPETITIONS=5 by default).

use std::hint::black_box;
use std::process::ExitCode;
use std::time::Duration;

use lockstep_balls::engine::BallSettings;
use lockstep_balls::World;
use lockstep_client::io::clock;
use lockstep_engine::{Bots, Game, HasBots, Setup};
use lockstep_protocol::{decode, encode, PlayerId, MAX_SNAPSHOT_SIZE};
use lockstep_topple::{Physics, PhysicsSettings};

const TICK_RATE: u16 = 60;
const PLAYERS: u8 = 4;
const SEED: u64 = 0x5EED;
/// Encodes and decodes of a snapshot timed for its median.
const CODEC_ROUNDS: usize = 21;

fn env_u32(name: &str, default: u32) -> u32 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

fn list(name: &str, default: &str) -> Vec<u16> {
    std::env::var(name)
        .unwrap_or_else(|_| default.into())
        .split(',')
        .filter_map(|v| v.trim().parse().ok())
        .collect()
}

/// The thread's CPU time so far.
fn cpu_now() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// What reading the CPU clock around nothing measures: the median of many
/// back-to-back pairs, taken off every mean the CPU clock gives.
fn cpu_clock_overhead() -> Duration {
    let mut pairs: Vec<Duration> = (0..10_001)
        .map(|_| {
            let a = cpu_now();
            cpu_now().saturating_sub(a)
        })
        .collect();
    pairs.sort_unstable();
    pairs[pairs.len() / 2]
}

/// Mean, 99th percentile and slowest of `steps`.
fn spread(steps: &mut [Duration]) -> (Duration, Duration, Duration) {
    let total: Duration = steps.iter().sum();
    steps.sort_unstable();
    let n = steps.len();
    (
        total / n.max(1) as u32,
        steps[(n * 99 / 100).min(n - 1)],
        steps[n - 1],
    )
}

/// What one game of one repetition measured.
#[derive(Debug, Clone, Default)]
struct Run {
    /// Mean, 99th percentile and slowest step by the wall clock.
    mean: Duration,
    p99: Duration,
    max: Duration,
    /// The same by the thread's CPU clock.
    cpu_mean: Duration,
    cpu_p99: Duration,
    cpu_max: Duration,
    /// Mean and highest share of the dynamic bodies awake after a step
    /// (Topple only).
    awake: f64,
    awake_max: f64,
    /// Mean and highest count of touching contact pairs (Topple only).
    pairs: f64,
    pairs_max: usize,
    hash: u64,
}

/// The middle of a game's state, for the snapshot figures.
struct Middle<G> {
    state: G,
}

/// Plays `ticks` ticks of `G` with `settings`, timing each step;
/// `observe` reads `(awake share, touching pairs)` after each step.
fn play<G: HasBots>(
    settings: G::Settings,
    ticks: u32,
    observe: impl Fn(&G) -> Option<(f64, usize)>,
) -> (Run, Middle<G>) {
    let setup = Setup {
        seed: SEED,
        tick_rate: TICK_RATE,
        settings,
        players: (0..PLAYERS).map(PlayerId).collect(),
    };
    let mut game = G::start(&setup);
    let mut bots = Bots::<G>::new(setup.seed, &setup.players);
    let mut steps = Vec::with_capacity(ticks as usize);
    let mut cpu_steps = Vec::with_capacity(ticks as usize);
    let (mut awake, mut awake_max, mut pairs, mut pairs_max) = (0.0, 0.0f64, 0.0, 0);
    let mut middle = None;
    for tick in 0..ticks {
        if tick == ticks / 2 {
            middle = Some(game.clone());
        }
        let inputs = bots.inputs(&game);
        let cpu_started = cpu_now();
        let started = clock::now();
        game.step(black_box(&inputs));
        steps.push(clock::since(started));
        cpu_steps.push(cpu_now().saturating_sub(cpu_started));
        if let Some((share, touching)) = observe(&game) {
            awake += share;
            awake_max = awake_max.max(share);
            pairs += touching as f64;
            pairs_max = pairs_max.max(touching);
        }
    }
    let (mean, p99, max) = spread(&mut steps);
    let (cpu_mean, cpu_p99, cpu_max) = spread(&mut cpu_steps);
    let n = f64::from(ticks.max(1));
    let run = Run {
        mean,
        p99,
        max,
        cpu_mean,
        cpu_p99,
        cpu_max,
        awake: awake / n,
        awake_max,
        pairs: pairs / n,
        pairs_max,
        hash: black_box(game.hash()),
    };
    let state = middle.unwrap_or(game);
    (run, Middle { state })
}

/// Topple's `(awake share, touching pairs)`: the share among the bodies
/// that can move (the platform is fixed).
fn topple(game: &Physics) -> Option<(f64, usize)> {
    let dynamic = game.body_count().saturating_sub(1).max(1);
    Some((game.awake() as f64 / dynamic as f64, game.touching_pairs()))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn median(mut values: Vec<f64>) -> (f64, f64, f64) {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    (
        (values[(n - 1) / 2] + values[n / 2]) / 2.0,
        values[0],
        values[n - 1],
    )
}

/// What a snapshot of `state` costs: its encoded size, and the median
/// time to encode it, to decode it, to clone the state (a client does
/// once a tick, for drawing) and to hash it (once a tick too). The decoded
/// state must hash as the original.
struct Codec {
    len: usize,
    encode: Duration,
    decode: Duration,
    clone: Duration,
    hash: Duration,
}

fn codec<G: Game>(state: &G) -> Codec {
    let mut times: [Vec<Duration>; 4] = Default::default();
    let mut bytes = Vec::new();
    for _ in 0..CODEC_ROUNDS {
        let started = clock::now();
        bytes = encode(black_box(state), MAX_SNAPSHOT_SIZE as usize).expect("a state encodes");
        times[0].push(clock::since(started));
        let started = clock::now();
        let back: G = decode(black_box(&bytes), MAX_SNAPSHOT_SIZE as usize).expect("it decodes");
        times[1].push(clock::since(started));
        let started = clock::now();
        let copy = black_box(state).clone();
        times[2].push(clock::since(started));
        let started = clock::now();
        let hash = black_box(state).hash();
        times[3].push(clock::since(started));
        assert_eq!(back.hash(), hash, "a decoded snapshot hashes the same");
        assert_eq!(copy.hash(), hash, "a copy hashes the same");
    }
    let [encode, decode, clone, hash] = times.map(|mut t| {
        t.sort_unstable();
        t[CODEC_ROUNDS / 2]
    });
    Codec {
        len: bytes.len(),
        encode,
        decode,
        clone,
        hash,
    }
}

fn main() -> ExitCode {
    let bodies = list("LOCKSTEP_BENCH_BODIES", "150,160,300,600");
    let ticks = env_u32("LOCKSTEP_BENCH_TICKS", 3600);
    let repetitions = env_u32("LOCKSTEP_BENCH_REPETITIONS", 5).max(1) as usize;
    println!(
        "{repetitions} repetitions of {ticks} ticks at {TICK_RATE} Hz from tick 0, \
         {PLAYERS} bots, seed {SEED:#x}; Game::step timed alone; a tick at 60 Hz is 16.7 ms"
    );

    let overhead = cpu_clock_overhead();
    println!(
        "reading the thread's CPU clock twice costs {:.2} us (median), taken off its means",
        overhead.as_secs_f64() * 1e6
    );

    // runs[r][0] is the ball game's, runs[r][1 + i] Topple's with bodies[i].
    let mut runs: Vec<Vec<Run>> = Vec::new();
    let mut middles: Vec<Option<Middle<Physics>>> = bodies.iter().map(|_| None).collect();
    let mut ball_middle = None;
    for repetition in 0..repetitions {
        let mut row = Vec::new();
        let (run, middle) = play::<World>(BallSettings::default(), ticks, |_| None);
        row.push(run);
        ball_middle.get_or_insert(middle);
        for (i, &n) in bodies.iter().enumerate() {
            let (run, middle) = play::<Physics>(PhysicsSettings { bodies: n }, ticks, topple);
            row.push(run);
            middles[i].get_or_insert(middle);
        }
        println!(
            "  repetition {}, mean step wall/CPU: {}",
            repetition + 1,
            row.iter()
                .map(|r| format!("{:.4}/{:.4} ms", ms(r.mean), ms(r.cpu_mean)))
                .collect::<Vec<_>>()
                .join(", ")
        );
        runs.push(row);
    }

    let names: Vec<String> = std::iter::once(format!("balls, {}", BallSettings::default().balls))
        .chain(bodies.iter().map(|n| format!("physics, {n} bodies")))
        .collect();
    let wall = |r: &Run| (r.mean, r.p99, r.max);
    let cpu = |r: &Run| (r.cpu_mean.saturating_sub(overhead), r.cpu_p99, r.cpu_max);
    type Times<'a> = &'a dyn Fn(&Run) -> (Duration, Duration, Duration);
    for (clock_name, times) in [("wall clock", &wall as Times), ("thread CPU clock", &cpu)] {
        println!(
            "step by the {clock_name}, ms: mean as median (min-max) of the repetitions; \
             p99 and max as medians; x balls: the mean over the ball game's in each repetition"
        );
        for (i, name) in names.iter().enumerate() {
            let column = runs.iter().map(|row| times(&row[i]));
            let (mean, lo, hi) = median(column.clone().map(|t| ms(t.0)).collect());
            let (p99, _, _) = median(column.clone().map(|t| ms(t.1)).collect());
            let (max, _, _) = median(column.map(|t| ms(t.2)).collect());
            let (ratio, rlo, rhi) = median(
                runs.iter()
                    .map(|row| times(&row[i]).0.as_secs_f64() / times(&row[0]).0.as_secs_f64())
                    .collect(),
            );
            println!(
                "  {name:<20} mean {mean:>8.4} ({lo:.4}-{hi:.4})  p99 {p99:>7.3}  max {max:>7.3}  \
                 x balls {ratio:>5.0} ({rlo:.0}-{rhi:.0})"
            );
        }
    }
    let mut same = true;
    println!(
        "awake: share of the movable bodies awake after a step; touching: contact pairs in contact"
    );
    for (i, name) in names.iter().enumerate() {
        let column: Vec<&Run> = runs.iter().map(|row| &row[i]).collect();
        let identical = column.iter().all(|r| r.hash == column[0].hash);
        same &= identical;
        let first = column[0];
        let contacts = if i == 0 {
            String::new()
        } else {
            format!(
                "awake mean {:.1}% max {:.1}%  touching mean {:.1} max {}  ",
                first.awake * 100.0,
                first.awake_max * 100.0,
                first.pairs,
                first.pairs_max
            )
        };
        println!(
            "  {name:<20} {contacts}final hash {:016x} ({})",
            first.hash,
            if identical {
                format!("identical x{}", column.len())
            } else {
                "DIFFERS".to_string()
            }
        );
    }

    println!(
        "snapshots at tick {} (mid-game), {CODEC_ROUNDS} rounds each, median ms:",
        ticks / 2
    );
    let line = |name: String, c: &Codec, per_body: String| {
        println!(
            "  {name:<20} {:>8} B{per_body}  encode {:.3}  decode {:.3}  clone {:.3}  hash {:.3}",
            c.len,
            ms(c.encode),
            ms(c.decode),
            ms(c.clone),
            ms(c.hash)
        );
    };
    if let Some(middle) = &ball_middle {
        line(names[0].clone(), &codec(&middle.state), String::new());
    }
    for (i, middle) in middles.iter().enumerate() {
        let Some(middle) = middle else { continue };
        let c = codec(&middle.state);
        let count = middle.state.body_count();
        assert_eq!(
            c.len,
            middle.state.snapshot_bytes().len(),
            "the protocol's encoding is the game's snapshot bytes"
        );
        let per_body = format!(
            ", {:.0} B a rigid body ({count}, the platform and rams included)",
            c.len as f64 / count as f64
        );
        line(names[i + 1].clone(), &c, per_body);
    }
    if same {
        ExitCode::SUCCESS
    } else {
        eprintln!("hashes differ between identical runs: the simulation is not deterministic");
        ExitCode::FAILURE
    }
}
