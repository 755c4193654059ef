//! `lockstep-client`: parses the command line (`cli.rs`), starts tracing,
//! runs the chosen mode in the library and prints what it returns: its
//! stdout lines, or the error on stderr with exit status 1.

mod cli;

use clap::Parser;
use lockstep_client::desync_diff::{self, DesyncDiffError};
use lockstep_client::verify::{self, ReplayOptions};
use lockstep_client::window_modes::{self, ViewOptions};
use lockstep_client::{connect, final_line};
use lockstep_engine::loops::{self, trace};
use lockstep_protocol::Tick;
use lockstep_sim::offline::{self, SimOptions};

use cli::{Cli, Command, Destination};

fn main() {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .init();
    match run(Cli::parse()) {
        Ok(lines) => print(&lines),
        Err(e) => {
            // Like diff(1), differing dumps print their report and fail.
            if let Some(DesyncDiffError::Differ { lines, .. }) = e.downcast_ref() {
                print(lines);
            }
            eprintln!("lockstep-client: {e:#}");
            std::process::exit(1);
        }
    }
}

/// Prints `lines` on stdout; stops quietly when the reader went away
/// (`lockstep-client loops | head`).
fn print(lines: &[String]) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    for line in lines {
        if writeln!(out, "{line}").is_err() {
            return;
        }
    }
}

/// Runs the command; returns the stdout lines of a normal finish.
fn run(cli: Cli) -> anyhow::Result<Vec<String>> {
    match cli.command {
        Some(Command::Sim {
            players,
            seed,
            ticks,
            balls,
            tick_rate,
        }) => {
            let world = offline::run(SimOptions {
                players,
                seed,
                ticks,
                balls,
                tick_rate,
            });
            Ok(vec![final_line(world.tick().0, world.hash())])
        }
        Some(Command::Synctest {
            ticks,
            check_distance,
            seed,
            players,
            balls,
        }) => {
            let sim = SimOptions {
                players,
                seed,
                ticks,
                balls,
                tick_rate: 60,
            };
            let report = lockstep_sim::engine::synctest(sim, check_distance)?;
            Ok(vec![final_line(report.tick, report.hash)])
        }
        Some(Command::DesyncDiff { a, b, max }) => Ok(desync_diff::compare(&a, &b, max)?),
        Some(Command::Replay {
            file,
            verify,
            headless,
            speed,
            seek,
            window,
        }) => verify::run(ReplayOptions {
            file,
            headless,
            view: ViewOptions {
                speed,
                seek: seek.map(Tick),
                verify,
            },
            window: window.options(None),
        }),
        Some(Command::Report { replay, out, width }) => {
            window_modes::report(lockstep_client::report::ReportOptions { replay, out, width })
        }
        Some(Command::Solo(args)) => {
            let (solo, window) = args.options();
            window_modes::solo(solo, window)
        }
        Some(Command::Lab(args)) => window_modes::lab(args.start()),
        Some(Command::Loops(args)) => match args.trace_options() {
            Some(options) => Ok(trace::run(&options)?),
            None => Ok(loops::ladder()),
        },
        Some(Command::List(args)) => Ok(lockstep_client::list::run(
            &args.discovery.options(),
            std::time::Duration::from_secs_f64(args.seconds),
            &args.known_servers,
        )?),
        None => match cli.play.destination()? {
            Destination::Join(options) => connect::run(*options),
            Destination::Done(lines) => Ok(lines),
        },
    }
}
