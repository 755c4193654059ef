//! `lockstep-client`: parses arguments and runs the chosen mode.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::{Parser, Subcommand};
use lockstep_client::headless::{self, HeadlessOptions};
use lockstep_client::net::{NetClient, NetOptions};
use lockstep_client::offline::{self, SimOptions};
use lockstep_client::sim::WorldConfig;
use lockstep_client::window::{self, SoloOptions, WindowOptions};
use lockstep_client::{final_line, GameOutcome};
use lockstep_protocol::PROTOCOL_VERSION;

/// Deterministic lockstep game client: join a server in a window or as a
/// headless bot, play solo, or run the simulation offline.
#[derive(Debug, Parser)]
#[command(version, args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    play: PlayArgs,
}

#[derive(Debug, clap::Args)]
struct PlayArgs {
    /// Server to join, HOST:PORT (as printed by lockstep-server).
    #[arg(long, value_name = "HOST:PORT")]
    connect: Option<String>,
    /// Player name shown to everyone (default: $USER).
    #[arg(long)]
    name: Option<String>,
    /// Expected server certificate fingerprint (hex SHA-256, as printed by
    /// lockstep-server). Without it the server is not authenticated.
    #[arg(long, value_name = "HEX")]
    fingerprint: Option<String>,
    /// Run without a window.
    #[arg(long)]
    headless: bool,
    /// Play seeded pseudo-random inputs instead of the keyboard.
    #[arg(long, value_name = "SEED")]
    bot: Option<u64>,
    #[command(flatten)]
    window: WindowArgs,
    /// Protocol version to announce (for testing refusals).
    #[arg(long, hide = true, default_value_t = PROTOCOL_VERSION)]
    protocol_version: u16,
}

#[derive(Debug, Clone, clap::Args)]
struct WindowArgs {
    /// Leave after this many ticks.
    #[arg(long, value_name = "N")]
    ticks: Option<u32>,
    /// Write a PNG of the window at --screenshot-tick.
    #[arg(long, value_name = "FILE.png")]
    screenshot: Option<PathBuf>,
    /// Tick at which --screenshot is taken.
    #[arg(long, value_name = "T", default_value_t = 0)]
    screenshot_tick: u32,
    /// Window position X,Y (default: centred).
    #[arg(long, value_name = "X,Y", value_parser = parse_pair::<i32>)]
    window_pos: Option<(i32, i32)>,
    /// Window size WxH.
    #[arg(long, value_name = "WxH", default_value = "1280x720", value_parser = parse_size)]
    window_size: (u32, u32),
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the whole game offline, a bot for every player, and print the
    /// final hash.
    Sim {
        /// Players (each driven by a bot).
        #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u8).range(1..=64))]
        players: u8,
        /// World and bot seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Ticks to simulate.
        #[arg(long, default_value_t = 600)]
        ticks: u32,
        /// Balls in the arena.
        #[arg(long, default_value_t = WorldConfig::DEFAULT_BALLS)]
        balls: u16,
        /// Ticks per second (sets the fixed dt).
        #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u16).range(1..=240))]
        tick_rate: u16,
    },
    /// Play alone against bots in a window (MAX_LOOPS guard on).
    Solo {
        /// Bot opponents.
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(0..=15))]
        bots: u8,
        /// World seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Ticks per second.
        #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u16).range(1..=240))]
        tick_rate: u16,
        /// Most ticks per frame before pending time is discarded
        /// (flipcode's MAX_LOOPS).
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
        max_loops: u32,
        /// Play the local disc with a seeded bot.
        #[arg(long, value_name = "SEED")]
        bot: Option<u64>,
        #[command(flatten)]
        window: WindowArgs,
    },
}

fn parse_pair<T: std::str::FromStr>(s: &str) -> Result<(T, T), String> {
    let (a, b) = s
        .split_once(',')
        .ok_or_else(|| format!("expected X,Y, got {s:?}"))?;
    let parse = |v: &str| {
        v.trim()
            .parse::<T>()
            .map_err(|_| format!("not a number: {v:?}"))
    };
    Ok((parse(a)?, parse(b)?))
}

fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let (w, h) = parse_pair::<u32>(&s.replace('x', ","))?;
    if w < 64 || h < 64 {
        return Err(format!("window size {w}x{h} is too small (at least 64x64)"));
    }
    Ok((w, h))
}

fn main() {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .init();
    match run(Cli::parse()) {
        Ok(lines) => {
            for line in lines {
                println!("{line}");
            }
        }
        Err(e) => {
            eprintln!("lockstep-client: {e:#}");
            std::process::exit(1);
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
        Some(Command::Solo {
            bots,
            seed,
            tick_rate,
            max_loops,
            bot,
            window,
        }) => {
            let options = window_options(&window, "solo".into(), bot);
            let solo = SoloOptions {
                bots,
                seed,
                tick_rate,
                max_loops,
            };
            let outcome = window::run_solo(solo, options)?;
            Ok(vec![final_line(outcome.tick, outcome.hash)])
        }
        None => play(cli.play),
    }
}

fn play(args: PlayArgs) -> anyhow::Result<Vec<String>> {
    let Some(connect) = &args.connect else {
        bail!(
            "nothing to do: pass --connect HOST:PORT to join a server, or use the `solo` or \
             `sim` command (see --help)"
        );
    };
    let server = resolve(connect)?;
    let name = args
        .name
        .clone()
        .or_else(|| std::env::var("USER").ok())
        .unwrap_or_else(|| format!("player-{}", std::process::id()));
    let net = NetClient::connect(NetOptions {
        server,
        name: name.clone(),
        fingerprint: args.fingerprint.clone(),
        protocol_version: args.protocol_version,
    })
    .context("starting the network thread")?;
    let outcome = if args.headless {
        if args.window.screenshot.is_some() {
            bail!("--screenshot needs a window; drop --headless");
        }
        headless::run(
            net,
            HeadlessOptions {
                bot: args.bot,
                ticks: args.window.ticks,
            },
        )?
    } else {
        window::run_networked(net, window_options(&args.window, name, args.bot))?
    };
    Ok(report(outcome))
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

fn resolve(connect: &str) -> anyhow::Result<SocketAddr> {
    connect
        .to_socket_addrs()
        .with_context(|| format!("cannot resolve server address {connect:?} (expected HOST:PORT)"))?
        .next()
        .with_context(|| format!("server address {connect:?} resolves to nothing"))
}

fn report(outcome: GameOutcome) -> Vec<String> {
    vec![
        format!(
            "stats stalled_ticks={} tx_bytes={} rx_bytes={} rtt_us={}",
            outcome.stalled_ticks, outcome.tx_bytes, outcome.rx_bytes, outcome.rtt_us
        ),
        final_line(outcome.tick, outcome.hash),
    ]
}
