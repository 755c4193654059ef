//! Replay verification speed and replay size.
//!
//! Builds the replay of one hour of 4-player play at 60 Hz (216,000 ticks,
//! bots for inputs, every player's hash every 15 ticks, exactly what the
//! server records), writes it to a file, then times
//! `lockstep-client replay FILE --verify --headless` end to end and the
//! library's `verify` alone, each several times.
//!
//! Run: `cargo build --release --bins && cargo bench -p lockstep-bench --bench replay`

use std::hint::black_box;
use std::io::BufWriter;
use std::process::Command;

use lockstep_balls::{World, WorldConfig};
use lockstep_client::io::clock;
use lockstep_engine::replay::playback as replay;
use lockstep_engine::replay::recorder::solo_header;
use lockstep_engine::Bots;
use lockstep_engine::{apply, Setup};
use lockstep_protocol::{Bundle, PlayerId, Record, ReplayWriter, RosterEntry, Tick};

const TICKS: u32 = 216_000;
const HASH_INTERVAL: u32 = 15;
const RUNS: usize = 5;

fn spread(mut values: Vec<f64>) -> (f64, f64, f64) {
    values.sort_by(|a, b| a.total_cmp(b));
    (
        values[values.len() / 2],
        values[0],
        values[values.len() - 1],
    )
}

fn main() {
    let players: Vec<PlayerId> = (0..4).map(PlayerId).collect();
    let config = WorldConfig::new(2024, 60);
    let roster = players
        .iter()
        .map(|&id| RosterEntry {
            id,
            name: format!("player{id}"),
        })
        .collect();
    let setup = Setup {
        seed: config.seed,
        tick_rate: config.tick_rate,
        settings: lockstep_balls::engine::BallSettings {
            balls: config.balls,
        },
        players: players.clone(),
    };
    let mut header = solo_header::<World>(&setup, roster, 0);
    header.recorder = "benchmark".into();
    let path = std::env::temp_dir().join(format!("lockstep-bench-{}.lsreplay", std::process::id()));
    let file = std::fs::File::create(&path).expect("temp file");
    let mut writer = ReplayWriter::new(BufWriter::new(file), &header).expect("header");
    let mut world = World::new(config, &players);
    let mut bots = Bots::<World>::new(2024, &players);
    for t in 0..TICKS {
        let bundle = Bundle {
            inputs: bots.inputs(&world),
            ..Bundle::default()
        };
        apply(&mut world, &bundle);
        writer
            .write(&Record::Bundle {
                tick: Tick(t),
                bundle,
            })
            .expect("write");
        if world.tick().0.is_multiple_of(HASH_INTERVAL) {
            for &player in &players {
                let hash = world.hash();
                writer
                    .write(&Record::Hash {
                        tick: world.tick(),
                        player,
                        hash,
                    })
                    .expect("write");
            }
        }
    }
    writer.finish("benchmark").expect("finish");
    let expected = format!("final tick={TICKS} hash={:016x}", world.hash());
    let size = std::fs::metadata(&path).expect("size").len();
    let minutes = f64::from(TICKS) / 60.0 / 60.0;
    println!(
        "replay of {TICKS} ticks (4 players, 60 Hz, hashes of all 4 every {HASH_INTERVAL} ticks): {size} bytes = {:.0} bytes per minute of play",
        size as f64 / minutes
    );

    let client = lockstep_testkit::client_bin();
    let mut cli = Vec::new();
    for _ in 0..RUNS {
        let start = clock::now();
        let out = Command::new(&client)
            .arg("replay")
            .arg(&path)
            .args(["--verify", "--headless"])
            .output()
            .expect("client runs");
        cli.push(clock::since(start).as_secs_f64());
        let last = String::from_utf8_lossy(&out.stdout)
            .lines()
            .last()
            .unwrap_or_default()
            .to_string();
        assert!(
            out.status.success() && last == expected,
            "{last} vs {expected}"
        );
    }
    let (median, min, max) = spread(cli);
    println!(
        "lockstep-client replay --verify --headless: median {median:.3} s (min {min:.3}, max {max:.3}) = {:.0} ticks/s",
        f64::from(TICKS) / median
    );

    let mut library = Vec::new();
    for _ in 0..RUNS {
        let start = clock::now();
        let (recording, problem) = replay::open(&path).expect("open");
        assert!(problem.is_none());
        let verified =
            replay::verify::<World>(black_box(recording), None, |_, _| {}).expect("a ball game");
        library.push(clock::since(start).as_secs_f64());
        assert!(verified.mismatch.is_none());
        assert_eq!(verified.checked, TICKS / HASH_INTERVAL * 4);
    }
    let (median, min, max) = spread(library);
    println!(
        "read + verify in process: median {median:.3} s (min {min:.3}, max {max:.3}) = {:.0} ticks/s",
        f64::from(TICKS) / median
    );
    let _ = std::fs::remove_file(&path);
}
