//! Impairment benchmark: how often four headless bots stall on bad links,
//! with the adaptive input delay and with the delay pinned at 3 ticks.
//!
//! Real processes on 127.0.0.1: one `lockstep-server` and four
//! `lockstep-client --headless --bot i --ticks T`. Every client's socket is
//! impaired by the link conditioner (its `--sim-*` flags, `--sim-seed i+1`
//! so the clients lose different packets); the server's is clean. The
//! flags act on each direction, so `--sim-latency-ms 25` adds 50 ms to a
//! client's round trip, and an input reaches the other clients' bundles
//! after 2 x 25 ms.
//!
//! The "300 ms spike" has no conditioner flag: halfway through the game
//! client 0 is stopped with SIGSTOP for 300 ms and continued with SIGCONT,
//! a real 300 ms freeze of one player's process (not of its link).
//!
//! A stalled tick is one a client had to wait for (due, but its bundle not
//! there), counted once however long the wait: the client's
//! `stats stalled_ticks=`. It is reported per minute of play (3,600 ticks)
//! and as a share of the ticks, median and max over the four clients.
//! Every client must end on the same hash.
//!
//! A stall count alone hides how long the waits were, so each game also
//! reports its wall time from Start to the last client's exit: a game that
//! keeps up takes its ticks / 60 Hz (plus half a second to leave); a delay
//! too short for the round trip makes every tick wait and the whole game
//! slower.
//!
//! Run: `cargo build --release --bins && cargo bench -p lockstep-bench --bench impairment`
//!
//! Options (environment): LOCKSTEP_BENCH_TICKS, ticks per game (default
//! 3600, one minute at 60 Hz); LOCKSTEP_BENCH_SCENARIOS, the names of the
//! scenarios to run, comma-separated (default: all of [`SCENARIOS`]).

mod measure;

use std::time::Duration;

use lockstep_client::io::clock;

use lockstep_testkit::{signal, Client, Server};
use measure::{env_list, env_or, spread};

/// Bots per game: the usual size of a game.
const CLIENTS: u32 = 4;

/// The server's default tick rate, which the games run at.
const TICK_RATE: u32 = 60;

/// How long client 0 is frozen in the spike scenario.
const SPIKE: Duration = Duration::from_millis(300);

/// One network condition, as flags given to every client.
struct Scenario {
    /// Short name for LOCKSTEP_BENCH_SCENARIOS.
    name: &'static str,
    /// What the row of the table says.
    label: &'static str,
    /// Flags added to every client's command line.
    flags: &'static [&'static str],
    /// Freeze client 0 for [`SPIKE`] halfway through.
    spike: bool,
}

/// Every scenario, in the order they run.
const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "clean",
        label: "clean loopback",
        flags: &[],
        spike: false,
    },
    Scenario {
        name: "rtt50",
        label: "50 ms +/- 10 ms RTT (25 +/- 5 ms each way)",
        flags: &["--sim-latency-ms", "25", "--sim-jitter-ms", "5"],
        spike: false,
    },
    Scenario {
        name: "loss2",
        label: "2% loss each way",
        flags: &["--sim-loss-pct", "2"],
        spike: false,
    },
    Scenario {
        name: "burst5",
        label: "5% loss each way, bursts of 4 on average",
        flags: &["--sim-loss-pct", "5", "--sim-burst-len", "4"],
        spike: false,
    },
    Scenario {
        name: "rtt150",
        label: "150 ms RTT (75 ms each way)",
        flags: &["--sim-latency-ms", "75"],
        spike: false,
    },
    Scenario {
        name: "spike",
        label: "clean, one client frozen 300 ms (SIGSTOP)",
        flags: &[],
        spike: true,
    },
    Scenario {
        name: "loss2-stream",
        label: "2% loss each way, inputs over the stream",
        flags: &["--sim-loss-pct", "2", "--inputs-over-stream"],
        spike: false,
    },
    Scenario {
        name: "rtt50-loss2",
        label: "50 ms +/- 10 ms RTT and 2% loss each way",
        flags: &[
            "--sim-latency-ms",
            "25",
            "--sim-jitter-ms",
            "5",
            "--sim-loss-pct",
            "2",
        ],
        spike: false,
    },
    Scenario {
        name: "rtt50-loss2-stream",
        label: "50 ms +/- 10 ms RTT and 2% loss each way, inputs over the stream",
        flags: &[
            "--sim-latency-ms",
            "25",
            "--sim-jitter-ms",
            "5",
            "--sim-loss-pct",
            "2",
            "--inputs-over-stream",
        ],
        spike: false,
    },
];

/// The two ways to choose the input delay.
const DELAYS: &[(&str, &[&str])] = &[("adaptive", &[]), ("pinned 3", &["--input-delay", "3"])];

/// What one game measured, per client, and how long it took.
struct Game {
    stalled: Vec<u64>,
    ticks: Vec<u32>,
    rtt_us: Vec<u64>,
    /// From Start to the last client's exit.
    wall: Duration,
}

impl Game {
    fn per_minute(&self) -> Vec<f64> {
        self.stalled
            .iter()
            .zip(&self.ticks)
            .map(|(&s, &t)| s as f64 * f64::from(TICK_RATE * 60) / f64::from(t))
            .collect()
    }

    fn percent(&self) -> Vec<f64> {
        self.stalled
            .iter()
            .zip(&self.ticks)
            .map(|(&s, &t)| 100.0 * s as f64 / f64::from(t))
            .collect()
    }
}

/// Plays one game of [`CLIENTS`] bots with `flags` on every client.
fn game(scenario: &Scenario, delay: &[&str], ticks: u32) -> Game {
    let mut server = Server::start(CLIENTS as u8, &[]);
    let clients: Vec<Client> = (0..CLIENTS)
        .map(|i| {
            let name = format!("bot{i}");
            let mut command = lockstep_testkit::headless_bot(&server, &name, i.into(), ticks);
            command
                .args(["--sim-seed", &(i + 1).to_string()])
                .args(scenario.flags)
                .args(delay);
            Client::spawn(&name, &mut command)
        })
        .collect();
    let play = Duration::from_secs(u64::from(ticks / TICK_RATE));
    server.wait_for("start players=", Duration::from_secs(30));
    let started = clock::now();
    if scenario.spike {
        std::thread::sleep(play / 2);
        let pid = clients[0].child.id();
        signal(pid, "STOP");
        std::thread::sleep(SPIKE);
        signal(pid, "CONT");
    }
    // A delay far too short for the round trip slows the game down to a
    // fraction of real time (3 ticks per 150 ms round trip is a third).
    let (finished, (ticks, _)) =
        lockstep_testkit::finish_in_lockstep(clients, play * 5 + Duration::from_secs(60));
    let wall = clock::since(started);
    Game {
        stalled: finished.iter().map(|f| f.stat("stalled_ticks")).collect(),
        ticks: vec![ticks; finished.len()],
        rtt_us: finished.iter().map(|f| f.stat("rtt_us")).collect(),
        wall,
    }
}

/// `median (max)` of per-client figures.
fn median_max(mut values: Vec<f64>, decimals: usize) -> String {
    let (median, _, max) = spread(&mut values);
    format!("{median:.decimals$} ({max:.decimals$})")
}

fn main() {
    let ticks: u32 = env_or("LOCKSTEP_BENCH_TICKS", 3600);
    let all = SCENARIOS
        .iter()
        .map(|s| s.name)
        .collect::<Vec<_>>()
        .join(",");
    let chosen: Vec<String> = env_list("LOCKSTEP_BENCH_SCENARIOS", &all);
    for name in &chosen {
        assert!(
            SCENARIOS.iter().any(|s| s.name == name),
            "unknown scenario {name:?}; known: {all}"
        );
    }
    println!(
        "impairment: {CLIENTS} headless bots, {ticks} ticks at {TICK_RATE} Hz per game \
         ({} s of play)",
        ticks / TICK_RATE
    );
    let mut rows = Vec::new();
    for scenario in SCENARIOS
        .iter()
        .filter(|s| chosen.iter().any(|c| c == s.name))
    {
        for &(delay_name, delay_flags) in DELAYS {
            let game = game(scenario, delay_flags, ticks);
            println!(
                "  {} / {delay_name}: stalled ticks {:?} of {:?}; rtt_us {:?}; {:.1} s \
                 from Start to the last exit",
                scenario.name,
                game.stalled,
                game.ticks,
                game.rtt_us,
                game.wall.as_secs_f64()
            );
            rows.push((scenario.label, delay_name, game));
        }
    }
    println!(
        "\n| link | input delay | stalled ticks per minute, median (max) | \
         % of ticks, median (max) | client RTT ms, median | wall s, Start to last exit |"
    );
    println!("|---|---|---|---|---|---|");
    for (label, delay, game) in &rows {
        let mut rtt: Vec<f64> = game.rtt_us.iter().map(|&us| us as f64 / 1000.0).collect();
        println!(
            "| {label} | {delay} | {} | {} | {:.1} | {:.1} |",
            median_max(game.per_minute(), 1),
            median_max(game.percent(), 2),
            spread(&mut rtt).0,
            game.wall.as_secs_f64(),
        );
    }
}
