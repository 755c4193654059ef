//! Sync trace benchmark: how long from the server's desync line to the
//! line of code, in a 4-player Topple game.
//!
//! Real processes on 127.0.0.1: one `lockstep-server --game physics` for
//! four players and four `lockstep-client --headless --bot i
//! --dump-dir DIR`, the last with `--inject-desync-at 300
//! --inject-desync-value thrust.impulse` (its rams' thrust one ulp off
//! where the game computes it). Each round measures, from the moment the
//! server prints `desync tick=.. first=F`:
//! - server: until it prints `traced tick=F ... first differing value:
//!   FILE:LINE ...`, from the traces the players sent it;
//! - dumps: until both the faulty player's and the first honest player's
//!   dumps of tick F are on disk (their files' modification times: each
//!   client redoes tick F from its history with the trace on);
//! - diff: `lockstep-client desync-diff` on the two, which prints the
//!   same line, and dumps plus diff.
//!
//! Both must name the thrust's line.
//!
//! Run: `cargo build --release --bins && cargo bench -p lockstep-bench --bench trace`
//!
//! Options (environment): LOCKSTEP_BENCH_ROUNDS, games (default 5).

mod measure;

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use lockstep_client::io::clock;
use lockstep_testkit::{Client, Server, TempDir};
use measure::{env_or, spread};

/// Players in each game, the faulty one last.
const PLAYERS: u32 = 4;
/// Ticks each bot plays.
const TICKS: u32 = 900;
/// The first tick the faulty player computes differently.
const FAULT_AT: u32 = 300;

/// Waits until the dump `path` is on disk (checking every 5 ms: a
/// client writes the JSON form, then this one); when it was written, after
/// `since`.
#[allow(
    clippy::disallowed_methods,
    reason = "a file's modification time is wall time; no simulation here"
)]
fn written_after(path: &Path, since: SystemTime) -> Duration {
    let started = clock::now();
    while clock::since(started) < Duration::from_secs(60) {
        let modified = std::fs::metadata(path).and_then(|m| m.modified());
        if let Ok(modified) = modified {
            return modified.duration_since(since).unwrap_or_default();
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!("{} was not written within 60 s", path.display());
}

/// One game: (server, dumps, diff) in seconds.
#[allow(
    clippy::disallowed_methods,
    reason = "the dumps' modification times are wall time; no simulation here"
)]
fn round(dir: &Path) -> (f64, f64, f64) {
    let server = Server::start(
        PLAYERS as u8,
        &["--game", "physics", "--seed", "5", "--no-record"],
    );
    let dump_dir = dir.to_str().expect("a UTF-8 path");
    let clients: Vec<Client> = (0..PLAYERS)
        .map(|i| {
            let name = format!("bot{i}");
            let mut command = lockstep_testkit::headless_bot(&server, &name, i.into(), TICKS);
            command.args(["--dump-dir", dump_dir]);
            if i == PLAYERS - 1 {
                command.args([
                    "--inject-desync-at",
                    &FAULT_AT.to_string(),
                    "--inject-desync-value",
                    "thrust.impulse",
                ]);
            }
            Client::spawn(&name, &mut command)
        })
        .collect();
    let mut server = server;
    let line = server.wait_for("desync tick=", Duration::from_secs(120));
    let seen = SystemTime::now();
    let traced = server.wait_for("traced tick=", Duration::from_secs(60));
    let by_server = seen.elapsed().unwrap_or_default();
    assert!(
        traced.contains(" first differing value: games/topple/src/game.rs:")
            && traced.contains(" thrust.impulse "),
        "{traced}"
    );
    let first = lockstep_testkit::field(&line, "first")
        .unwrap_or_else(|| panic!("no first tick in {line:?}"))
        .to_string();
    let dump = |name: &str| PathBuf::from(dir).join(format!("desync-t{first}-{name}.bin"));
    let (faulty, honest) = (dump(&format!("bot{}", PLAYERS - 1)), dump("bot0"));
    let written = written_after(&faulty, seen).max(written_after(&honest, seen));
    let started = clock::now();
    let out = std::process::Command::new(lockstep_testkit::client_bin())
        .arg("desync-diff")
        .args([&honest, &faulty])
        .output()
        .expect("desync-diff runs");
    let diff = clock::since(started);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let named = stdout
        .lines()
        .find(|l| l.starts_with("first differing value: "))
        .unwrap_or_else(|| panic!("no first differing value:\n{stdout}"));
    assert!(
        named.contains("games/topple/src/game.rs:") && named.contains(" thrust.impulse "),
        "{named}"
    );
    println!("    {named}");
    for client in clients {
        client.finish(Duration::from_secs(120));
    }
    (
        by_server.as_secs_f64(),
        written.as_secs_f64(),
        diff.as_secs_f64(),
    )
}

fn main() {
    let rounds: u32 = env_or("LOCKSTEP_BENCH_ROUNDS", 5);
    println!(
        "trace: {PLAYERS} headless bots of Topple (160 bodies), the last computing its thrust \
         one ulp off from tick {FAULT_AT}; {rounds} rounds"
    );
    let (mut servers, mut dumps, mut diffs, mut totals) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for round in 1..=rounds {
        let dir = TempDir::new("trace-dumps");
        let (by_server, written, diff) = self::round(&dir.0);
        println!(
            "  round {round}: the server's line {:.0} ms after the desync line; dumps on disk \
             {:.0} ms after it, desync-diff {:.0} ms",
            by_server * 1e3,
            written * 1e3,
            diff * 1e3
        );
        servers.push(by_server);
        dumps.push(written);
        diffs.push(diff);
        totals.push(written + diff);
    }
    for (label, values) in [
        ("desync line to the server's traced line", &mut servers),
        ("dumps written", &mut dumps),
        ("desync-diff", &mut diffs),
        (
            "desync line to first differing value by desync-diff",
            &mut totals,
        ),
    ] {
        let (median, min, max) = spread(values);
        println!(
            "{label}: median {:.0} ms ({:.0}-{:.0})",
            median * 1e3,
            min * 1e3,
            max * 1e3
        );
    }
}
