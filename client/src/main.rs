//! `lockstep-client`: parses arguments (`cli.rs`) and runs the chosen mode.

mod cli;

use anyhow::{bail, Context};
use clap::Parser;
use lockstep_client::connect::{self, ConnectOptions};
use lockstep_client::desync_diff::{self, DesyncDiffError};
use lockstep_client::final_line;
use lockstep_client::play::PlayOptions;
use lockstep_client::verify::{self, ReplayOptions};
use lockstep_client::window_modes::{self, LabStart, SoloOptions, ViewOptions, WindowOptions};
use lockstep_engine::loops::trace::{self, TraceOptions};
use lockstep_engine::loops::{self, Settings};
use lockstep_engine::net_game::GameOptions;
use lockstep_protocol::Tick;
use lockstep_sim::offline::{self, SimOptions};

use cli::{Cli, Command, LabArgs, LoopsArgs, PlayArgs, SoloArgs, WindowArgs};

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

fn print(lines: &[String]) {
    for line in lines {
        println!("{line}");
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
            window: window_options(&window, String::new(), None),
        }),
        Some(Command::Solo(args)) => run_solo(args),
        Some(Command::Lab(args)) => run_lab(args),
        Some(Command::Loops(args)) => run_loops(args),
        None => play(cli.play),
    }
}

/// `solo`: you against bots in a window.
fn run_solo(args: SoloArgs) -> anyhow::Result<Vec<String>> {
    let solo = SoloOptions {
        bots: args.bots,
        seed: args.seed,
        tick_rate: args.tick_rate,
        max_loops: args.max_loops,
        record: args.record,
    };
    window_modes::solo(solo, window_options(&args.window, String::new(), args.bot))
}

/// `lab`: the game loop lab; its report line when it ends.
fn run_lab(args: LabArgs) -> anyhow::Result<Vec<String>> {
    window_modes::lab(LabStart {
        strategy: args.strategy,
        tick_rate: args.tick_rate,
        target_fps: args.target_fps,
        balls: args.balls,
        tick_cost_ns: args.tick_cost_ns,
        max_loops: args.max_loops,
        networked: args.networked,
        spike: args.spike,
        seed: args.seed,
        frames: args.frames,
        screenshot: args.screenshot,
        screenshot_frame: args.screenshot_frame,
        size: args.window_size,
    })
}

/// `loops`: the ladder, or with `--trace` one strategy frame by frame.
fn run_loops(args: LoopsArgs) -> anyhow::Result<Vec<String>> {
    let Some(tick_ns) = args.tick_ns.filter(|_| args.trace) else {
        return Ok(loops::ladder());
    };
    // The fake clock sets every frame's length, so no target is waited for.
    let mut settings = Settings::new(args.strategy, tick_ns, 0);
    settings.max_loops = args.max_loops;
    settings.networked = args.networked;
    if let Some(max_delta_ns) = args.max_delta_ns {
        settings.max_delta_ns = max_delta_ns;
        settings.max_step = true;
    }
    Ok(trace::run(&TraceOptions {
        settings,
        frame_ns: args.frame_ns,
        frames: args.frames,
    })?)
}

/// Joining a server: the default command.
fn play(args: PlayArgs) -> anyhow::Result<Vec<String>> {
    let Some(address) = args.connect else {
        bail!(
            "nothing to do: pass --connect HOST:PORT to join a server, or use the `solo` or \
             `sim` command (see --help)"
        );
    };
    connect::run(ConnectOptions {
        server: connect::resolve(&address)?,
        link: args
            .link
            .to_config()
            .context("reading the --sim-* options")?,
        address,
        name: args.name,
        fingerprint: args.fingerprint,
        known_servers: args.known_servers,
        password: args.password,
        protocol_version: args.protocol_version,
        spectate: args.spectate,
        inputs_over_stream: args.inputs_over_stream,
        headless: args.headless,
        play: PlayOptions {
            bot: args.bot,
            ticks: args.window.ticks,
            dump_dir: args.dump_dir,
            game: GameOptions {
                history: args.history,
                inject_desync_at: args.inject_desync_at.map(Tick),
                pinned_delay: args.input_delay,
            },
            record: args.record,
        },
        window: window_options(&args.window, String::new(), args.bot),
    })
}

fn window_options(args: &WindowArgs, title: String, bot: Option<u64>) -> WindowOptions {
    WindowOptions {
        title,
        position: args.window_pos,
        size: args.window_size,
        ticks: args.ticks,
        screenshot: args.screenshot.clone(),
        screenshot_tick: args.screenshot_tick,
        bot,
    }
}
