//! Feel benchmark: the input delay every client settles at, the input lag
//! it means, and how often the game stalls, for two builds in one run.
//!
//! Real processes on 127.0.0.1: one `lockstep-server` and its clients,
//! headless bots (`--bot i`) or, for the demo, three windows in one Xvfb
//! display as `make demo` opens them (two bot windows of 640x360 and one
//! 1280x720 window played by nobody, so its input is neutral). Every game
//! lasts `LOCKSTEP_BENCH_TICKS` ticks (default 3600: a minute at 60 Hz);
//! what a client reports at its end (`stats delay=... stalled_ticks=...`)
//! is what it settled at.
//!
//! The scenarios are the issue's: the demo; four headless bots on clean
//! loopback; 50 ± 10 ms of round trip; 5% loss in bursts of 4; one client
//! frozen for 300 ms halfway (SIGSTOP, SIGCONT); and one client whose
//! machine runs at half the needed speed (the hidden `--tick-cost-ms`,
//! where the build has it). Each runs with every server variant the build
//! knows (laggard tolerance and speed control on or off, where it has
//! them).
//!
//! The "before" build is any directory holding older `lockstep-server` and
//! `lockstep-client` binaries that print `delay=` in their `stats` line;
//! both builds' games alternate, so a noisy minute of the shared machine
//! hits both. Medians and maxima are over the clients of a game; for the
//! half-speed scenario the stall figures are the *other* clients'.
//!
//! Run: `cargo build --release --bins && LOCKSTEP_BENCH_BEFORE=DIR cargo
//! bench -p lockstep-bench --bench feel`
//!
//! Options (environment): LOCKSTEP_BENCH_BEFORE, the older build's binary
//! directory (without it only this build plays); LOCKSTEP_BENCH_TICKS;
//! LOCKSTEP_BENCH_SCENARIOS, names from [`SCENARIOS`], comma-separated
//! (default all).

mod measure;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use lockstep_testkit::{Client, Finished, Server};
use measure::{env_list, env_or, spread};

/// The server's default tick rate, which the games run at.
const TICK_RATE: u32 = 60;

/// How long one client is frozen in the spike scenario.
const SPIKE: Duration = Duration::from_millis(300);

/// One condition of the game.
struct Scenario {
    /// Short name for LOCKSTEP_BENCH_SCENARIOS.
    name: &'static str,
    /// What the rows of the table say.
    label: &'static str,
    /// Three windows under Xvfb instead of four headless bots.
    demo: bool,
    /// Flags for every client.
    flags: &'static [&'static str],
    /// Flags for client 0 only.
    first: &'static [&'static str],
    /// Freeze client 0 for [`SPIKE`] halfway through.
    spike: bool,
    /// Play it with every server variant (a slow or frozen client); the
    /// others only with the defaults.
    variants: bool,
}

/// Every scenario, in the order they run.
const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "demo",
        label: "the demo: three windows under Xvfb",
        demo: true,
        flags: &[],
        first: &[],
        spike: false,
        variants: false,
    },
    Scenario {
        name: "clean",
        label: "four headless bots, clean loopback",
        demo: false,
        flags: &[],
        first: &[],
        spike: false,
        variants: false,
    },
    Scenario {
        name: "rtt50",
        label: "50 +/- 10 ms RTT",
        demo: false,
        flags: &["--sim-latency-ms", "25", "--sim-jitter-ms", "5"],
        first: &[],
        spike: false,
        variants: false,
    },
    Scenario {
        name: "burst5",
        label: "5% loss each way, bursts of 4",
        demo: false,
        flags: &["--sim-loss-pct", "5", "--sim-burst-len", "4"],
        first: &[],
        spike: false,
        variants: false,
    },
    Scenario {
        name: "spike",
        label: "one client frozen 300 ms",
        demo: false,
        flags: &[],
        first: &[],
        spike: true,
        variants: true,
    },
    Scenario {
        name: "halfspeed",
        label: "one client at half the needed speed",
        demo: false,
        flags: &[],
        first: &["--tick-cost-ms", "33"],
        spike: false,
        variants: true,
    },
];

/// A server variant: its flags, and whether an older build knows them.
struct Variant {
    label: &'static str,
    flags: &'static [&'static str],
    /// Needs this build's server (the flags are new).
    new_only: bool,
}

/// The server variants: the defaults first (all a scenario without
/// `variants` plays), then each new feature turned off.
const VARIANTS: &[Variant] = &[
    Variant {
        label: "default",
        flags: &[],
        new_only: false,
    },
    Variant {
        label: "--laggard-ms 0",
        flags: &["--laggard-ms", "0"],
        new_only: true,
    },
    Variant {
        label: "--speed-control off",
        flags: &["--speed-control", "off"],
        new_only: true,
    },
];

/// One build's binaries.
struct Build {
    label: &'static str,
    server: PathBuf,
    client: PathBuf,
    /// Whether it is this build (knows every new flag).
    current: bool,
}

impl Build {
    fn in_dir(label: &'static str, dir: &Path, current: bool) -> Build {
        let build = Build {
            label,
            server: dir.join("lockstep-server"),
            client: dir.join("lockstep-client"),
            current,
        };
        for bin in [&build.server, &build.client] {
            assert!(bin.exists(), "{} is missing", bin.display());
        }
        build
    }
}

/// What one client reported.
struct Report {
    stalled: u64,
    ticks: u32,
    delay: u64,
    input_lag_ms: Option<u64>,
}

impl Report {
    fn of(finished: &Finished) -> Report {
        let field = |key: &str| -> Option<u64> {
            let line = finished.stdout.lines().find(|l| l.starts_with("stats "))?;
            line.split_whitespace()
                .find_map(|f| f.strip_prefix(&format!("{key}=")))
                .and_then(|v| v.parse().ok())
        };
        Report {
            stalled: field("stalled_ticks").unwrap_or_else(|| panic!("{}", finished.stdout)),
            ticks: finished.final_line().0,
            delay: field("delay").unwrap_or_else(|| panic!("no delay: {}", finished.stdout)),
            input_lag_ms: field("input_lag_ms"),
        }
    }

    fn stalls_per_minute(&self) -> f64 {
        self.stalled as f64 * f64::from(TICK_RATE * 60) / f64::from(self.ticks.max(1))
    }

    fn stall_percent(&self) -> f64 {
        100.0 * self.stalled as f64 / f64::from(self.ticks.max(1))
    }
}

/// An Xvfb display of our own, killed when dropped.
struct Display {
    child: Child,
    name: String,
}

impl Display {
    fn start() -> Display {
        let number = 90 + std::process::id() % 100;
        let name = format!(":{number}");
        let child = Command::new("Xvfb")
            .args([&name, "-screen", "0", "1920x1080x24", "-nolisten", "tcp"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("Xvfb starts (make test installs it)");
        std::thread::sleep(Duration::from_secs(1));
        Display { child, name }
    }
}

impl Drop for Display {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Plays one game; returns every client's report and whether the final
/// lines agreed, or, when a client failed, what it last said: a result
/// of the game like any other, printed in its row.
fn game(
    build: &Build,
    scenario: &Scenario,
    variant: &Variant,
    ticks: u32,
) -> Result<(Vec<Report>, bool), String> {
    let players = if scenario.demo { 3 } else { 4 };
    let mut server = Server::start_binary(&build.server, "127.0.0.1:0", players, variant.flags);
    let display = scenario.demo.then(Display::start);
    let clients: Vec<Client> = (0..players)
        .map(|i| {
            let name = format!("p{i}");
            let mut command = lockstep_testkit::joining(&build.client, &server, &name);
            command.args(["--ticks", &ticks.to_string()]);
            match &display {
                Some(display) => {
                    command.env("DISPLAY", &display.name);
                    if i == 0 {
                        command.args(["--window-size", "1280x720"]);
                        // The person's window: ready at once, as the bots
                        // are (builds before the lobby start without it).
                        if build.current {
                            command.arg("--ready");
                        }
                    } else {
                        command
                            .args(["--bot", &i.to_string()])
                            .args(["--window-size", "640x360"]);
                    }
                }
                None => {
                    command
                        .arg("--headless")
                        .args(["--bot", &i.to_string()])
                        .args(["--sim-seed", &(i + 1).to_string()]);
                }
            }
            command.args(scenario.flags);
            if i == 0 {
                command.args(scenario.first);
            }
            Client::spawn(&name, &mut command)
        })
        .collect();
    server.wait_for("start players=", Duration::from_secs(30));
    if scenario.spike {
        std::thread::sleep(Duration::from_secs(u64::from(ticks / TICK_RATE / 2)));
        let pid = clients[0].child.id().to_string();
        let _ = Command::new("kill").args(["-STOP", &pid]).status();
        std::thread::sleep(SPIKE);
        let _ = Command::new("kill").args(["-CONT", &pid]).status();
    }
    let limit = Duration::from_secs(u64::from(ticks / TICK_RATE) * 4 + 60);
    let finished: Vec<Finished> = clients.into_iter().map(|c| c.finish(limit)).collect();
    if let Some(failed) = finished.iter().find(|f| !f.success) {
        let last = failed.stderr.lines().last().unwrap_or("no output");
        return Err(format!("{} failed: {last}", failed.name));
    }
    let finals: Vec<_> = finished.iter().map(Finished::final_line).collect();
    let agreed = finals.windows(2).all(|w| w[0] == w[1]);
    Ok((finished.iter().map(Report::of).collect(), agreed))
}

fn main() {
    let ticks: u32 = env_or("LOCKSTEP_BENCH_TICKS", 3600);
    let names: Vec<String> = env_list("LOCKSTEP_BENCH_SCENARIOS", "");
    let release = lockstep_testkit::client_bin()
        .parent()
        .expect("target dir")
        .to_path_buf();
    let mut builds = Vec::new();
    if let Ok(before) = std::env::var("LOCKSTEP_BENCH_BEFORE") {
        builds.push(Build::in_dir("before", Path::new(&before), false));
    }
    builds.push(Build::in_dir("after", &release, true));
    println!(
        "feel: {ticks} ticks per game; client 0 is the frozen, slow or windowed-by-nobody one"
    );
    println!(
        "| scenario | build | server | delay (median, max) | input lag ms (median) | stalls/min (median, max) | stalled % (max) | hashes |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for scenario in SCENARIOS
        .iter()
        .filter(|s| names.is_empty() || names.iter().any(|n| n == s.name))
    {
        let variants = if scenario.variants {
            VARIANTS
        } else {
            &VARIANTS[..1]
        };
        for variant in variants {
            for build in &builds {
                if (variant.new_only || !scenario.first.is_empty()) && !build.current {
                    continue;
                }
                let (reports, agreed) = match game(build, scenario, variant, ticks) {
                    Ok(played) => played,
                    Err(failure) => {
                        println!(
                            "| {} | {} | {} | {failure} | | | | |",
                            scenario.label, build.label, variant.label
                        );
                        continue;
                    }
                };
                // For the slow client, what matters is what it does to the
                // others.
                let judged: Vec<&Report> = if scenario.first.is_empty() {
                    reports.iter().collect()
                } else {
                    reports.iter().skip(1).collect()
                };
                let mut delays: Vec<f64> = reports.iter().map(|r| r.delay as f64).collect();
                let (delay, _, delay_max) = spread(&mut delays);
                let mut lags: Vec<f64> = reports
                    .iter()
                    .filter_map(|r| r.input_lag_ms.map(|l| l as f64))
                    .collect();
                let lag = if lags.is_empty() {
                    "-".to_string()
                } else {
                    format!("{:.0}", spread(&mut lags).0)
                };
                let mut per_minute: Vec<f64> =
                    judged.iter().map(|r| r.stalls_per_minute()).collect();
                let (stalls, _, stalls_max) = spread(&mut per_minute);
                let mut percents: Vec<f64> = judged.iter().map(|r| r.stall_percent()).collect();
                let (_, _, percent_max) = spread(&mut percents);
                println!(
                    "| {} | {} | {} | {delay:.0}, {delay_max:.0} | {lag} | {stalls:.1}, {stalls_max:.1} | {percent_max:.2} | {} |",
                    scenario.label,
                    build.label,
                    variant.label,
                    if agreed { "same" } else { "DIFFER" }
                );
            }
        }
    }
}
