//! What a rejoin costs after a long game: from tick 0 against from the
//! latest verified snapshot, for the ball game and for Topple.
//!
//! An hour of play cannot be played live here, so the history is built
//! offline: four seeded bots play `ticks` ticks at full speed, their
//! inputs kept as the bundles a server would hold. Then a joining client's
//! work is timed both ways, through the client's own [`NetGame`] (each
//! tick stepped, hashed, copied for drawing, and kept in the history ring
//! as the game's `STATE_EVERY` says), from the moment the bytes are in
//! until it goes live:
//!
//! - from tick 0: a fresh game fed every bundle (what a rejoin cost
//!   before snapshots);
//! - from the snapshot: the world of the latest verified snapshot at worst
//!   (the join comes just before the next one is confirmed: a whole
//!   interval plus the confirmation lag before the end) encoded as the
//!   player sends it, decoded as the joiner does (`NetGame::snapshot_world`),
//!   then fed the bundles since.
//!
//! Each is timed by the wall clock and by the thread's CPU clock (the work
//! alone, without the time the thread waited for a core on a loaded
//! machine). Beside the second, the same ticks stepped bare (decode and `Game::step`
//! only), so the client's bookkeeping shows. The join from tick 0 is timed
//! once, the join from the snapshot (short) LOCKSTEP_BENCH_ROUNDS times,
//! 5 by default, both ways in turn. Every way must end on the game's own
//! final hash.
//!
//! Run: `cargo bench -p lockstep-bench --bench catch_up`
//! (LOCKSTEP_BENCH_GAMES=balls,physics, LOCKSTEP_BENCH_BALLS=24,1000,
//! LOCKSTEP_BENCH_BODIES=160 and LOCKSTEP_BENCH_MINUTES=10,60 by default;
//! an hour of 1000 balls or of Topple takes a few minutes to build and
//! replay).

use std::hint::black_box;
use std::time::Duration;

use lockstep_balls::engine::BallSettings;
use lockstep_balls::World;
use lockstep_client::io::clock;
use lockstep_engine::lockstep::net_game::{Advance, GameOptions, NetGame};
use lockstep_engine::{apply, spec_of, Bots, Game, HasBots, Setup};
use lockstep_protocol::{
    decode, encode, Bundle, PlayerId, RosterEntry, Start, Tick, MAX_SNAPSHOT_SIZE,
};
use lockstep_topple::{Physics, PhysicsSettings};

const TICK_RATE: u16 = 60;
const PLAYERS: u8 = 4;
const SEED: u64 = 0x5EED;
/// The server's default snapshot interval, in ticks.
const INTERVAL: u32 = lockstep_server::DEFAULT_SNAPSHOT_SECS as u32 * TICK_RATE as u32;
/// How long after its tick a snapshot is verified: the next hash report
/// (every 15 ticks), a round trip and the transfer; half a second.
const LAG: u32 = 30;

fn list(name: &str, default: &str) -> Vec<String> {
    std::env::var(name)
        .unwrap_or_else(|_| default.into())
        .split(',')
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .collect()
}

fn numbers(name: &str, default: &str) -> Vec<u32> {
    list(name, default)
        .iter()
        .filter_map(|v| v.parse().ok())
        .collect()
}

/// The game's setup for `settings`.
fn setup<G: Game>(settings: G::Settings) -> Setup<G::Settings> {
    Setup {
        seed: SEED,
        tick_rate: TICK_RATE,
        settings,
        players: (0..PLAYERS).map(PlayerId).collect(),
    }
}

/// The bundles of a `ticks`-long game, the state at `snapshot_at` and the
/// final hash.
fn build<G: HasBots>(
    setup: &Setup<G::Settings>,
    ticks: u32,
    snapshot_at: u32,
) -> (Vec<Bundle>, G, u64) {
    let mut game = G::start(setup);
    let mut bots = Bots::<G>::new(setup.seed, &setup.players);
    let mut bundles = Vec::with_capacity(ticks as usize);
    let mut snapshot = None;
    for tick in 0..ticks {
        if tick == snapshot_at {
            snapshot = Some(game.clone());
        }
        let bundle = Bundle {
            inputs: bots.inputs(&game),
            ..Bundle::default()
        };
        apply(&mut game, &bundle);
        bundles.push(bundle);
    }
    let hash = game.hash();
    (bundles, snapshot.unwrap_or_else(|| game.clone()), hash)
}

/// The Start a spectator joining the game after `ticks` ticks gets, with
/// the snapshot of `snapshot` if there is one.
fn start_of<G: Game>(settings: &G::Settings, ticks: u32, snapshot: Option<(u32, u64)>) -> Start {
    Start {
        seed: SEED,
        tick_rate: TICK_RATE,
        input_delay: 3,
        spec: spec_of::<G>(settings),
        roster: (0..PLAYERS)
            .map(|p| RosterEntry {
                id: PlayerId(p),
                name: format!("bot{p}"),
            })
            .collect(),
        hash_interval: 15,
        you: None,
        first_input_tick: Tick(ticks),
        history: ticks,
        snapshot: snapshot.map(|(tick, _)| Tick(tick)),
        snapshot_hash: snapshot.map(|(_, hash)| hash),
        resume: None,
    }
}

/// Feeds `bundles` (from `first`) to `game` and advances it until it goes
/// live; its final hash.
fn catch_up<G: Game>(mut game: NetGame<G>, first: u32, bundles: &[Bundle]) -> u64 {
    game.receive(Tick(first), bundles.to_vec());
    while game.catching_up().is_some() {
        if let Advance::Stalled(tick) = game.advance() {
            panic!("stalled at tick {tick} while catching up");
        }
    }
    game.current.hash()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The thread's CPU time so far: on a loaded machine the wall clock also
/// counts the time the thread waited for a core.
fn cpu_now() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// What `f` returns, and how long it took by the wall clock and by the
/// thread's CPU clock.
fn timed<T>(f: impl FnOnce() -> T) -> (T, (Duration, Duration)) {
    let (cpu, wall) = (cpu_now(), clock::now());
    let value = f();
    let wall = clock::since(wall);
    (value, (wall, cpu_now().saturating_sub(cpu)))
}

/// "median ms (min-max)" of the wall and the CPU times of `times`.
fn spread(times: Vec<(Duration, Duration)>) -> String {
    let one = |mut t: Vec<Duration>| {
        t.sort_unstable();
        let n = t.len();
        let median = (ms(t[(n - 1) / 2]) + ms(t[n / 2])) / 2.0;
        format!("{median:.1} ms ({:.1}-{:.1})", ms(t[0]), ms(t[n - 1]))
    };
    format!(
        "wall {}, CPU {}, {} rounds",
        one(times.iter().map(|t| t.0).collect()),
        one(times.iter().map(|t| t.1).collect()),
        times.len()
    )
}

/// Times one game's rejoin both ways and prints its line.
fn case<G: HasBots>(label: &str, settings: G::Settings, minutes: u32, rounds: usize) {
    let ticks = minutes * 60 * u32::from(TICK_RATE);
    // The newest snapshot a joiner can get at worst: the next one is about
    // to be verified.
    let snapshot_at = ticks - INTERVAL - LAG;
    let setup = setup::<G>(settings.clone());
    let (bundles, snapshot, hash) = build::<G>(&setup, ticks, snapshot_at);

    let start = start_of::<G>(&settings, ticks, None);
    let (from_zero_hash, from_zero) = timed(|| {
        let game = NetGame::<G>::new(&start, GameOptions::default()).expect("the game's own Start");
        catch_up(game, 0, black_box(&bundles))
    });
    assert_eq!(from_zero_hash, hash, "from tick 0");

    // The join from the snapshot is short: timed `rounds` times, both ways
    // in turn, for a median and a spread.
    let bytes = encode(&snapshot, MAX_SNAPSHOT_SIZE as usize).expect("a state encodes");
    let since = &bundles[snapshot_at as usize..];
    let start = start_of::<G>(&settings, ticks, Some((snapshot_at, snapshot.hash())));
    let (mut client, mut bare) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let (from_snapshot_hash, time) = timed(|| {
            let world =
                NetGame::<G>::snapshot_world(&start, black_box(&bytes)).expect("the snapshot");
            let game = NetGame::from_world(&start, GameOptions::default(), world);
            catch_up(game, snapshot_at, since)
        });
        client.push(time);
        assert_eq!(from_snapshot_hash, hash, "from the snapshot");

        let (bare_hash, time) = timed(|| {
            let mut world: G =
                decode(black_box(&bytes), MAX_SNAPSHOT_SIZE as usize).expect("decodes");
            for bundle in since {
                apply(&mut world, black_box(bundle));
            }
            world.hash()
        });
        bare.push(time);
        assert_eq!(bare_hash, hash, "stepped bare from the snapshot");
    }

    println!(
        "  {label:<20} {minutes:>2} min ({ticks} ticks): from tick 0 {:.1} ms (CPU {:.1} ms)\n    \
         from the snapshot of tick {snapshot_at} ({} ticks, {} B): {}\n    stepped bare: {}",
        ms(from_zero.0),
        ms(from_zero.1),
        ticks - snapshot_at,
        bytes.len(),
        spread(client),
        spread(bare),
    );
}

fn main() {
    println!(
        "catch-up: {PLAYERS} bots at {TICK_RATE} Hz, snapshot every {INTERVAL} ticks; \
         joined a whole interval after the last snapshot (worst case); as the client's \
         NetGame catches up"
    );
    let minutes = numbers("LOCKSTEP_BENCH_MINUTES", "10,60");
    let rounds = numbers("LOCKSTEP_BENCH_ROUNDS", "5")
        .first()
        .copied()
        .unwrap_or(5)
        .max(1) as usize;
    for game in list("LOCKSTEP_BENCH_GAMES", "balls,physics") {
        match game.as_str() {
            "balls" => {
                for balls in numbers("LOCKSTEP_BENCH_BALLS", "24,1000") {
                    for &m in &minutes {
                        let settings = BallSettings {
                            balls: balls as u16,
                        };
                        case::<World>(&format!("balls, {balls}"), settings, m, rounds);
                    }
                }
            }
            "physics" => {
                for bodies in numbers("LOCKSTEP_BENCH_BODIES", "160") {
                    for &m in &minutes {
                        let settings = PhysicsSettings {
                            bodies: bodies as u16,
                        };
                        case::<Physics>(&format!("physics, {bodies} bodies"), settings, m, rounds);
                    }
                }
            }
            other => eprintln!("catch-up: no game {other:?}; balls or physics"),
        }
    }
}
