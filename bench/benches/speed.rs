//! Speed control benchmark: how often a machine at half the speed the
//! tick rate needs makes the other players wait, with the server's speed
//! control on and off.
//!
//! Real processes on 127.0.0.1: one `lockstep-server --speed-control
//! on|off` and four `lockstep-client --headless --bot i --ticks T`, the
//! last of them with the hidden `--tick-cost-ms 33`: every 16.7 ms tick
//! costs it 33 ms more, so its machine sustains about 49% of 60 Hz. The
//! cost is slept, not spun, so the slow client takes no core from the
//! others on this two-core machine (a slow machine elsewhere would not).
//!
//! A stalled tick is one a client had to wait for (due, but its bundle
//! not there), counted once however long the wait: the client's `stats
//! stalled_ticks=`. The figure is the three other clients' stalls per
//! minute of play (3,600 ticks) and as a share of their ticks. Each game
//! also reports the speed changes the server announced, the lowest speed
//! the game ran at (`speed_pct=`) and its wall time from Start to the last
//! client's exit. Every client must end
//! on the same hash. Rounds alternate on and off, so both see the same
//! machine.
//!
//! Run: `cargo build --release --bins && cargo bench -p lockstep-bench --bench speed`
//!
//! Options (environment): LOCKSTEP_BENCH_TICKS, ticks per game (default
//! 3600); LOCKSTEP_BENCH_ROUNDS, games per setting (default 3).

mod measure;

use std::time::Duration;

use lockstep_client::io::clock;

use lockstep_testkit::{Client, Server};
use measure::{env_or, spread};

/// Bots per game, the slow one included.
const CLIENTS: u32 = 4;

/// The server's default tick rate, which the games run at.
const TICK_RATE: u32 = 60;

/// What one game measured.
struct Game {
    /// Stalled ticks of the three clients with a fast machine.
    others_stalled: Vec<u64>,
    /// Ticks each of them ran.
    ticks: u32,
    /// The lowest game speed, in percent.
    slowest_speed: u64,
    /// The speed changes the server announced (`percent@from_tick`).
    changes: Vec<String>,
    /// From Start to the last client's exit.
    wall: Duration,
}

/// Plays one game with the slow client last.
fn game(speed_control: &str, ticks: u32) -> Game {
    let mut server = Server::start(CLIENTS as u8, &["--speed-control", speed_control]);
    let clients: Vec<Client> = (0..CLIENTS)
        .map(|i| {
            let name = format!("bot{i}");
            let mut command = lockstep_testkit::headless_bot(&server, &name, i.into(), ticks);
            if i == CLIENTS - 1 {
                command.args(["--tick-cost-ms", "33"]);
            }
            Client::spawn(&name, &mut command)
        })
        .collect();
    server.wait_for("start players=", Duration::from_secs(30));
    let started = clock::now();
    // At worst the game runs at the slow machine's pace: half speed.
    let play = Duration::from_secs(u64::from(ticks / TICK_RATE));
    let (finished, (ticks, _)) =
        lockstep_testkit::finish_in_lockstep(clients, play * 3 + Duration::from_secs(60));
    let wall = clock::since(started);
    server.wait_for("game over", Duration::from_secs(10));
    let changes = server
        .seen
        .iter()
        .filter(|line| line.starts_with("speed "))
        .map(|line| {
            let value = |key| lockstep_testkit::field(line, key).unwrap_or("?");
            format!("{}%@{}", value("percent"), value("from_tick"))
        })
        .collect();
    Game {
        others_stalled: finished[..finished.len() - 1]
            .iter()
            .map(|f| f.stat("stalled_ticks"))
            .collect(),
        ticks,
        slowest_speed: finished[0].stat("speed_pct"),
        changes,
        wall,
    }
}

fn main() {
    let ticks: u32 = env_or("LOCKSTEP_BENCH_TICKS", 3600);
    let rounds: u32 = env_or("LOCKSTEP_BENCH_ROUNDS", 3);
    println!(
        "speed: {CLIENTS} headless bots, one at half speed (--tick-cost-ms 33), {ticks} ticks \
         at {TICK_RATE} Hz per game, {rounds} rounds of speed control on and off"
    );
    let settings = ["on", "off"];
    let mut games: Vec<Vec<Game>> = settings.iter().map(|_| Vec::new()).collect();
    for round in 1..=rounds {
        for (setting, played) in settings.iter().zip(&mut games) {
            let game = game(setting, ticks);
            println!(
                "  round {round} / speed control {setting}: others stalled {:?} of {} ticks; \
                 speed changes {:?}; {:.1} s from Start to the last exit",
                game.others_stalled,
                game.ticks,
                game.changes,
                game.wall.as_secs_f64()
            );
            played.push(game);
        }
    }
    println!(
        "\n| speed control | others' stalled ticks per minute, median (min-max) | \
         % of ticks, median (max) | slowest speed % | wall s, median |"
    );
    println!("|---|---|---|---|---|");
    for (setting, played) in settings.iter().zip(&games) {
        let mut per_minute: Vec<f64> = played
            .iter()
            .flat_map(|g| {
                g.others_stalled
                    .iter()
                    .map(|&s| s as f64 * f64::from(TICK_RATE * 60) / f64::from(g.ticks))
            })
            .collect();
        let mut percent: Vec<f64> = played
            .iter()
            .flat_map(|g| {
                g.others_stalled
                    .iter()
                    .map(|&s| 100.0 * s as f64 / f64::from(g.ticks))
            })
            .collect();
        let mut wall: Vec<f64> = played.iter().map(|g| g.wall.as_secs_f64()).collect();
        let speeds: Vec<String> = played.iter().map(|g| g.slowest_speed.to_string()).collect();
        let (median, min, max) = spread(&mut per_minute);
        let (pct_median, _, pct_max) = spread(&mut percent);
        println!(
            "| {setting} | {median:.0} ({min:.0}-{max:.0}) | {pct_median:.2} ({pct_max:.2}) | {} | \
             {:.1} |",
            speeds.join(", "),
            spread(&mut wall).0
        );
    }
}
