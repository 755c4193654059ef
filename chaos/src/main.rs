//! `lockstep-chaos`: parses arguments and runs the chaos run.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use clap::Parser;
use lockstep_chaos::schedule::Schedule;
use lockstep_chaos::{run, Options};

/// A seeded chaos run: the real lockstep-server and lockstep-client on
/// loopback, six headless bots and a spectator in one game (and, if
/// asked, a browser peer and an aarch64 bot beside them), with bots
/// killed, frozen and cut off, spectators coming and going, the server
/// killed and resumed and one desync injected; each fault's answer is
/// checked, and so are the end of the game and its replay. Prints the
/// history and, last, the summary line; exits 0 only when every check
/// holds.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// The run's seed: the faults, their ticks and parameters, the bots'
    /// inputs and the world. The same seed gives the same schedule.
    #[arg(long)]
    seed: u64,
    /// Minutes of game (at least 2); every bot plays 3600 ticks a minute.
    #[arg(long, default_value_t = 2)]
    minutes: u32,
    /// Directory of lockstep-server and lockstep-client. Default: this
    /// executable's (target/debug for the debug build).
    #[arg(long, value_name = "DIR")]
    bin_dir: Option<PathBuf>,
    /// Keep the run's files (every process's output, the replay, the
    /// server's identity, desync dumps) in DIR instead of a temporary
    /// directory removed at the end.
    #[arg(long, value_name = "DIR")]
    keep: Option<PathBuf>,
    /// A browser peer plays too: the server's page (`make web`) in a
    /// headless Chromium, driven by scripts/browser/drive.mjs (needs
    /// Debian's `chromium` and node 20 or later).
    #[arg(long)]
    browser: bool,
    /// An aarch64 bot plays too: this aarch64 build of lockstep-client
    /// (scripts/cross-build.sh makes
    /// target/cross/aarch64-unknown-linux-gnu/debug/lockstep-client), run
    /// under qemu-aarch64.
    #[arg(long, value_name = "CLIENT")]
    aarch64: Option<PathBuf>,
    /// Print the schedule and exit.
    #[arg(long)]
    schedule: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    if args.schedule {
        return match Schedule::plan(args.seed, args.minutes) {
            Ok(schedule) => {
                print!("{schedule}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("lockstep-chaos: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let bin_dir = args.bin_dir.unwrap_or_else(|| {
        std::env::current_exe()
            .ok()
            .and_then(|exe| Some(exe.parent()?.to_path_buf()))
            .unwrap_or_default()
    });
    // SIGTERM and SIGINT end the run early, judged, with every process
    // it started stopped, rather than leave them running.
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        if let Err(e) = signal_hook::flag::register(signal, Arc::clone(&stop)) {
            eprintln!("lockstep-chaos: cannot handle signal {signal}: {e}");
        }
    }
    let options = Options {
        seed: args.seed,
        minutes: args.minutes,
        bin_dir,
        keep: args.keep,
        browser: args.browser,
        aarch64: args.aarch64,
        stop,
    };
    match run(&options, &mut std::io::stdout()) {
        Ok(judgement) => {
            println!("{}", judgement.summary);
            if judgement.failures.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("lockstep-chaos: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_well_formed() {
        super::Args::command().debug_assert();
    }
}
