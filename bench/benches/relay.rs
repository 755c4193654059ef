//! Relay benchmark: how long the server takes to turn every player's input
//! for a tick into a bundle in every player's hands, and what that costs the
//! server, for 2 to 64 players.
//!
//! A real `lockstep-server` process serves N lightweight clients that live
//! in this process: tokio tasks, each with its own UDP socket, quinn
//! endpoint and connection, speaking the protocol with `lockstep_protocol`
//! types (Hello, Start, input datagrams with every unacknowledged input,
//! bundle acks, a hash report every `hash_interval` ticks) but simulating
//! nothing. 64 client processes would not fit on two cores; 64 of these do.
//!
//! One pacing clock drives them all: at step `k` every client sends its
//! input for tick `k + input_delay`, so the inputs for a tick leave at
//! about the same instant, as in a game whose clocks agree. The clock runs
//! open loop (a client does not wait for bundle `k` before sending step
//! `k`): on loopback the bundle is long there by then, and under loss the
//! figure stays a property of the transport, not of a stalled game.
//!
//! For each tick `t`:
//! relay latency = (last arrival of bundle `t` over all clients)
//!               − (last first send of an input for `t` over all clients).
//! Ticks whose latency exceeds `input_delay` ticks would make some client
//! wait with a pinned delay; they are counted as over budget. Server CPU is
//! its user + system time from /proc over the measured ticks, so it covers
//! everything the process does: QUIC, TLS, relaying, recording the replay
//! (on, as by default) and checking hash reports.
//!
//! # The floor: a bare quinn forwarder
//!
//! To tell the relay's own cost from what any QUIC relay of this traffic
//! costs, every relay game is followed at once, in the same round, by a
//! game of the same size against a bare forwarder (module `floor`): a
//! process of its own (this bench binary started again with
//! `--forwarder N`, so /proc shows its CPU as it shows the server's) on the
//! server's own endpoint (`lockstep_server::endpoint`: the same TLS 1.3
//! setup with a fresh self-signed identity, ALPN, transport settings and
//! socket) and, like the server, one thread. It accepts the N connections
//! and sends every datagram a client sends it on to each other client,
//! unchanged: no session, no Hello or Start, no bundling, no acks, no
//! repeats. Its clients follow the same pacing clock and send, at each
//! step, the datagram a relay client sends on loopback, where the previous
//! input has always been acknowledged by then: the new input, acknowledging
//! the ticks they have all inputs for (the same bytes). They open no
//! control stream and send no hash reports.
//!
//! Latency means the same for both: when the tick can be simulated
//! everywhere, minus when its last input left. A relay client can simulate
//! tick `t` once bundle `t` arrives; a floor client once the input for `t`
//! of every other client has arrived (its own it has). So for each tick `t`:
//! floor latency = (last arrival, over all clients, of the last of the
//!                 other clients' inputs for `t`)
//!               − (last send of an input for `t` over all clients).
//! A client knows it has every input for `t` by counting: each client sends
//! each input once and QUIC never delivers a datagram twice, so N − 1
//! inputs for `t` means one from every other client. The forwarder carries
//! N × (N − 1) input datagrams a tick where the relay carries N in and N
//! bundles out: it is the floor of a relay without bundling, not a lower
//! bound on the relay's CPU as N grows. It also repairs nothing: under loss,
//! a tick some client never gets every input for is counted as lost, and
//! its latency is over the other ticks only.
//!
//! The relay and floor games of one size and round run back to back, so a
//! noisy minute of the machine hits both; relay/floor ratios are taken per
//! round and printed as median (min-max) over the rounds.
//!
//! Run: `cargo build --release --bins && cargo bench -p lockstep-bench --bench relay`
//!
//! Options (environment):
//! - LOCKSTEP_BENCH_SIZES: clients per game, default `2,8,32,64`;
//! - LOCKSTEP_BENCH_SECONDS: measured seconds per game, default 20;
//! - LOCKSTEP_BENCH_ROUNDS: games per size, default 3 (the sizes take
//!   turns, so a noisy minute of the machine hits all of them);
//! - LOCKSTEP_BENCH_LOSS_PCT: loss in each direction of every client's
//!   link (the link conditioner, seeded per client), default 0;
//! - LOCKSTEP_BENCH_LATENCY_MS: delay added in each direction of every
//!   client's link, default 0 (an input reaches the bundles after twice it);
//! - LOCKSTEP_BENCH_TRANSPORTS: `datagram` (default: inputs as datagrams
//!   repeating all unacknowledged ones, as the client sends them) and/or
//!   `stream` (each input once, as a frame on the reliable control stream,
//!   as `lockstep-client --inputs-over-stream` sends them);
//! - LOCKSTEP_BENCH_FLOOR: `on` (default) plays the floor game after each
//!   relay game, `off` skips it.

mod floor;
mod measure;
mod player;

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::{bail, Context};
use lockstep_client::io::clock;
use lockstep_conditioner::LinkConfig;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use measure::{cpu_seconds, env_list, env_or, percentile, spread};
use player::{
    client, client_config, every_report, latest, Join, Pace, Schedule, Subject, Timeline, Transport,
};

/// Ticks played before measuring: connections, quinn's RTT estimate and the
/// server's allocations settle in the first second.
const WARMUP_TICKS: u32 = 60;

/// Steps played after the measured ones: the last measured ticks need the
/// traffic that follows them, as every tick does (a lost input is repaired
/// by the next step's datagram, a lost stream packet is retransmitted once
/// later packets are acknowledged). Half a second is many repair periods.
const TAIL_TICKS: u32 = 30;

/// Longest wait for every client to reach the game, or to say goodbye.
const SETUP_TIMEOUT: Duration = Duration::from_secs(30);

/// What the server side used over the measured steps.
struct Window {
    /// CPU seconds, user and system.
    cpu: f64,
    wall: Duration,
}

/// Steps the pacing clock through the warm-up, `measured` steps and the
/// tail, then tells the clients to leave; returns what process `pid` used
/// over the measured steps.
async fn pace(
    pid: u32,
    schedule: Schedule,
    measured: u32,
    pace: &watch::Sender<Pace>,
) -> anyhow::Result<Window> {
    let mut pacing = tokio::time::interval(schedule.period());
    let mut window_start = None;
    let mut window_end = None;
    for k in 0..WARMUP_TICKS + measured + TAIL_TICKS {
        pacing.tick().await;
        if k == WARMUP_TICKS {
            window_start = Some((cpu_seconds(pid), clock::tokio_now()));
        }
        if k == WARMUP_TICKS + measured {
            window_end = Some((cpu_seconds(pid), clock::tokio_now()));
        }
        pace.send(Pace::Step(k))?;
    }
    pace.send(Pace::Done)?;
    let (Some((Some(cpu_from), wall_from)), Some((Some(cpu_to), wall_to))) =
        (window_start, window_end)
    else {
        bail!("cannot read the CPU time of process {pid} from /proc");
    };
    Ok(Window {
        cpu: cpu_to - cpu_from,
        wall: wall_to - wall_from,
    })
}

/// Waits for every client to leave; returns their timelines.
async fn timelines(
    tasks: Vec<JoinHandle<anyhow::Result<Timeline>>>,
) -> anyhow::Result<Vec<Timeline>> {
    let mut timelines = Vec::new();
    for task in tasks {
        let timeline = tokio::time::timeout(SETUP_TIMEOUT, task)
            .await
            .context("a client did not leave")???;
        timelines.push(timeline);
    }
    Ok(timelines)
}

/// What one game measured.
#[derive(Debug)]
struct Outcome {
    clients: u32,
    subject: Subject,
    schedule: Schedule,
    /// Latency of each measured tick, ascending.
    latencies: Vec<Duration>,
    /// Measured ticks some client never had every input of.
    missing: usize,
    cpu_per_tick: Duration,
    /// Server CPU time over wall time of the measured ticks.
    cpu_share: f64,
}

impl Outcome {
    /// The figures of a game: `measured` ticks after the warm-up, as the
    /// clients' `timelines` saw them, and the server side's `window`.
    fn new(
        clients: u32,
        subject: Subject,
        schedule: Schedule,
        measured: u32,
        timelines: &[Timeline],
        window: &Window,
    ) -> Outcome {
        let first_tick = (WARMUP_TICKS + schedule.input_delay) as usize;
        let mut latencies = Vec::new();
        let mut missing = 0;
        for tick in first_tick..first_tick + measured as usize {
            let sent = latest(timelines.iter().map(|t| &t.sent), tick);
            let arrived = latest(timelines.iter().map(|t| &t.arrived), tick);
            match (sent, arrived) {
                (Some(sent), Some(arrived)) => latencies.push(arrived.saturating_sub(sent)),
                _ => missing += 1,
            }
        }
        latencies.sort();
        Outcome {
            clients,
            subject,
            schedule,
            latencies,
            missing,
            cpu_per_tick: Duration::from_secs_f64(window.cpu / f64::from(measured)),
            cpu_share: window.cpu / window.wall.as_secs_f64(),
        }
    }
}

/// Plays one game of `clients` lightweight clients on a fresh server.
async fn game(
    clients: u32,
    transport: Transport,
    seconds: u32,
    link: LinkConfig,
) -> anyhow::Result<Outcome> {
    let players = u8::try_from(clients).context("at most 64 clients")?;
    let server = lockstep_testkit::Server::start(players, &[]);
    let address: SocketAddr = server.addr.parse()?;
    let config = client_config(&server.fingerprint)?;
    let epoch = clock::tokio_now();
    let (pace_tx, pace_rx) = watch::channel(Pace::Lobby);
    let (started_tx, mut started_rx) = mpsc::channel(usize::from(players));
    let tasks: Vec<_> = (0..clients)
        .map(|index| {
            let join = Join::new(index, address, &config, link, epoch);
            tokio::spawn(client(join, transport, started_tx.clone(), pace_rx.clone()))
        })
        .collect();
    let start = every_report(&mut started_rx, clients)
        .await
        .context("the clients did not all get Start")?;
    let schedule = Schedule::of(&start);
    let measured = seconds * schedule.tick_rate;
    let window = pace(server.child.id(), schedule, measured, &pace_tx).await?;
    let timelines = timelines(tasks).await?;
    drop(server);
    Ok(Outcome::new(
        clients,
        Subject::Relay(transport),
        schedule,
        measured,
        &timelines,
        &window,
    ))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

impl Outcome {
    /// The `q`-quantile of the latencies in ms; NaN when no measured tick
    /// reached every client (the floor under heavy loss).
    fn latency_ms(&self, q: f64) -> f64 {
        if self.latencies.is_empty() {
            return f64::NAN;
        }
        ms(percentile(&self.latencies, q))
    }

    fn p50(&self) -> f64 {
        self.latency_ms(0.50)
    }

    fn p99(&self) -> f64 {
        self.latency_ms(0.99)
    }

    fn max(&self) -> f64 {
        self.latency_ms(1.0)
    }

    fn over_budget(&self) -> usize {
        let budget = self.schedule.budget();
        self.latencies.iter().filter(|&&l| l > budget).count()
    }

    fn cpu_us_per_tick(&self) -> f64 {
        self.cpu_per_tick.as_secs_f64() * 1e6
    }

    fn cpu_pct(&self) -> f64 {
        self.cpu_share * 100.0
    }
}

/// `median (min-max)` of a non-empty sample.
fn spread_text(mut values: Vec<f64>, decimals: usize) -> String {
    let (median, min, max) = spread(&mut values);
    format!("{median:.decimals$} ({min:.decimals$}-{max:.decimals$})")
}

/// `median (min-max)` of one figure over the games of a row.
fn summary(games: &[&Outcome], figure: fn(&Outcome) -> f64, decimals: usize) -> String {
    spread_text(games.iter().map(|game| figure(game)).collect(), decimals)
}

/// Whether to play the floor games: LOCKSTEP_BENCH_FLOOR, `on` unless set
/// to `off`; anything else stops the run, as a typo in any knob does.
fn floor_wanted() -> anyhow::Result<bool> {
    match std::env::var("LOCKSTEP_BENCH_FLOOR").as_deref() {
        Err(_) | Ok("on") => Ok(true),
        Ok("off") => Ok(false),
        Ok(other) => bail!("LOCKSTEP_BENCH_FLOOR: {other:?} is neither on nor off"),
    }
}

/// The games played, with the round each belongs to.
struct Played(Vec<(u32, Outcome)>);

impl Played {
    /// The games of `clients` clients against `subject`, one per round.
    fn row(&self, clients: u32, subject: Subject) -> Vec<&Outcome> {
        self.0
            .iter()
            .map(|(_, outcome)| outcome)
            .filter(|o| o.clients == clients && o.subject == subject)
            .collect()
    }

    /// `figure` of the relay game over `figure` of the floor game of the
    /// same round and size, for every round that has both.
    fn ratios(&self, clients: u32, transport: Transport, figure: fn(&Outcome) -> f64) -> Vec<f64> {
        let find = |round: u32, subject: Subject| {
            self.0
                .iter()
                .find(|(r, o)| *r == round && o.clients == clients && o.subject == subject)
                .map(|(_, outcome)| figure(outcome))
        };
        let rounds: std::collections::BTreeSet<u32> = self.0.iter().map(|(r, _)| *r).collect();
        rounds
            .into_iter()
            .filter_map(|round| {
                Some(find(round, Subject::Relay(transport))? / find(round, Subject::Floor)?)
            })
            .collect()
    }
}

fn main() -> anyhow::Result<()> {
    if let Some(clients) = floor::forwarder::requested()? {
        return floor::forwarder::serve(clients);
    }
    let sizes: Vec<u32> = env_list("LOCKSTEP_BENCH_SIZES", "2,8,32,64");
    let transports: Vec<Transport> = env_list("LOCKSTEP_BENCH_TRANSPORTS", "datagram");
    let seconds: u32 = env_or("LOCKSTEP_BENCH_SECONDS", 20);
    let rounds: u32 = env_or("LOCKSTEP_BENCH_ROUNDS", 3);
    let loss_pct: f64 = env_or("LOCKSTEP_BENCH_LOSS_PCT", 0.0);
    let latency_ms: u64 = env_or("LOCKSTEP_BENCH_LATENCY_MS", 0);
    let with_floor = floor_wanted()?;
    anyhow::ensure!(
        !with_floor || sizes.iter().all(|&clients| clients >= 2),
        "the floor needs 2 clients or more per game (a lone client has nobody to forward to): \
         drop the size or set LOCKSTEP_BENCH_FLOOR=off"
    );
    let link = LinkConfig {
        loss: loss_pct / 100.0,
        latency: Duration::from_millis(latency_ms),
        ..LinkConfig::default()
    };
    // A worker thread per core: the clients' receive work runs in
    // parallel, as it would on separate machines. On one thread the last
    // client's bundle waits for every other client's to be decrypted and
    // read, which doubled the median latency at 64 clients.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let names: Vec<String> = transports.iter().map(Transport::to_string).collect();
    println!(
        "relay: {seconds} s per game, {rounds} rounds, sizes {sizes:?}, inputs as {}, \
         loss {loss_pct}% and latency {latency_ms} ms each way, floor {}",
        names.join(" and "),
        if with_floor { "on" } else { "off" },
    );
    let mut played = Played(Vec::new());
    for round in 1..=rounds {
        for &clients in &sizes {
            let mut schedule = None;
            for &transport in &transports {
                let outcome = runtime.block_on(game(clients, transport, seconds, link))?;
                report(round, &outcome);
                schedule = Some(outcome.schedule);
                played.0.push((round, outcome));
            }
            if let (true, Some(schedule)) = (with_floor, schedule) {
                let outcome = runtime.block_on(floor::game(clients, schedule, seconds, link))?;
                report(round, &outcome);
                played.0.push((round, outcome));
            }
        }
    }
    println!(
        "\n| clients | inputs | latency p50 ms | p99 ms | max ms | ticks over budget | \
         server CPU us/tick | % of one core |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for &clients in &sizes {
        for &transport in &transports {
            let games = played.row(clients, Subject::Relay(transport));
            println!(
                "| {clients} | {transport} | {} | {} | {} | {} | {} | {} |",
                summary(&games, Outcome::p50, 3),
                summary(&games, Outcome::p99, 3),
                summary(&games, Outcome::max, 2),
                summary(&games, |o| o.over_budget() as f64, 0),
                summary(&games, Outcome::cpu_us_per_tick, 0),
                summary(&games, Outcome::cpu_pct, 2),
            );
        }
    }
    if with_floor {
        println!(
            "\nfloor (bare forwarder):\n\
             | clients | latency p50 ms | p99 ms | max ms | ticks over budget | ticks lost | \
             forwarder CPU us/tick | % of one core |"
        );
        println!("|---|---|---|---|---|---|---|---|");
        for &clients in &sizes {
            let games = played.row(clients, Subject::Floor);
            println!(
                "| {clients} | {} | {} | {} | {} | {} | {} | {} |",
                summary(&games, Outcome::p50, 3),
                summary(&games, Outcome::p99, 3),
                summary(&games, Outcome::max, 2),
                summary(&games, |o| o.over_budget() as f64, 0),
                summary(&games, |o| o.missing as f64, 0),
                summary(&games, Outcome::cpu_us_per_tick, 0),
                summary(&games, Outcome::cpu_pct, 2),
            );
        }
        println!(
            "\nrelay/floor, per round:\n\
             | clients | inputs | latency p50 | p99 | CPU per tick |"
        );
        println!("|---|---|---|---|---|");
        for &clients in &sizes {
            for &transport in &transports {
                let ratio = |figure| spread_text(played.ratios(clients, transport, figure), 2);
                println!(
                    "| {clients} | {transport} | {} | {} | {} |",
                    ratio(Outcome::p50),
                    ratio(Outcome::p99),
                    ratio(Outcome::cpu_us_per_tick),
                );
            }
        }
    }
    let missing: usize = played
        .0
        .iter()
        .filter(|(_, o)| matches!(o.subject, Subject::Relay(_)))
        .map(|(_, o)| o.missing)
        .sum();
    anyhow::ensure!(missing == 0, "{missing} measured bundles never arrived");
    Ok(())
}

/// Prints one game's line as soon as it is over.
fn report(round: u32, outcome: &Outcome) {
    println!(
        "  round {round}: {} clients, {}: {} ticks, latency p50 {:.3} ms p99 {:.3} ms max \
         {:.3} ms, {} over the {:.0} ms budget, {} missing; server CPU {:.0} us/tick = \
         {:.2}% of one core",
        outcome.clients,
        outcome.subject,
        outcome.latencies.len(),
        outcome.p50(),
        outcome.p99(),
        outcome.max(),
        outcome.over_budget(),
        ms(outcome.schedule.budget()),
        outcome.missing,
        outcome.cpu_us_per_tick(),
        outcome.cpu_pct(),
    );
}
