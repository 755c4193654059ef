//! `lockstep-client`: parses arguments and runs the chosen mode.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use clap::{Parser, Subcommand};
use lockstep_client::headless;
use lockstep_client::known_servers;
use lockstep_client::lab::{self, Knobs, LabOptions};
use lockstep_client::net::{NetClient, NetOptions, Trust};
use lockstep_client::play::PlayOptions;
use lockstep_client::replay_window::{self, ViewOptions};
use lockstep_client::window::{self, SoloOptions, WindowOptions};
use lockstep_client::{final_line, GameOutcome};
use lockstep_engine::diff::compare_dumps;
use lockstep_engine::history::DEFAULT_HISTORY;
use lockstep_engine::loops::trace::{self, TraceOptions};
use lockstep_engine::loops::{self, parse_ms, Settings, Strategy};
use lockstep_engine::net_game::GameOptions;
use lockstep_engine::replay::{self, Playback};
use lockstep_protocol::{Tick, PROTOCOL_VERSION};
use lockstep_sim::offline::{self, SimOptions};
use lockstep_sim::World;
use lockstep_sim::WorldConfig;

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
    /// Where servers trusted on first use are remembered (used when there
    /// is no --fingerprint).
    #[arg(long, value_name = "FILE", env = known_servers::ENV, default_value_os_t = known_servers::default_path())]
    known_servers: PathBuf,
    /// The server's session password, if it has one.
    #[arg(long, env = "LOCKSTEP_PASSWORD", hide_env_values = true)]
    password: Option<String>,
    /// Run without a window.
    #[arg(long)]
    headless: bool,
    /// Watch the game without playing: no inputs, nobody waits for you. A
    /// spectator may join a running game; it fast-forwards to the live tick.
    #[arg(long)]
    spectate: bool,
    /// Fix the input delay to N ticks (1-15) instead of adapting it to the
    /// measured round trip and jitter.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(1..=15))]
    input_delay: Option<u8>,
    /// Play seeded pseudo-random inputs instead of the keyboard.
    #[arg(long, value_name = "SEED")]
    bot: Option<u64>,
    #[command(flatten)]
    window: WindowArgs,
    /// Where desync dumps are written when the server reports a desync.
    #[arg(long, value_name = "DIR", default_value = "desync")]
    dump_dir: PathBuf,
    /// Ticks of snapshots kept for desync dumps.
    #[arg(long, value_name = "TICKS", default_value_t = DEFAULT_HISTORY)]
    history: usize,
    /// Record the game to this replay file (the server records too; see
    /// its --replay-dir).
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,
    /// Fault injection: nudge one value of the world by one ulp when it
    /// reaches this tick, to see a desync detected and diagnosed.
    #[arg(long, value_name = "TICK")]
    inject_desync_at: Option<u32>,
    #[command(flatten)]
    link: lockstep_conditioner::LinkArgs,
    /// Send inputs on the reliable stream instead of as datagrams (to
    /// measure the difference).
    #[arg(long, hide = true)]
    inputs_over_stream: bool,
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
    /// Prove the snapshot and the hash cover the whole state: every tick,
    /// restore the snapshot from D ticks back, re-simulate D ticks and
    /// compare hashes with the straight run.
    Synctest {
        /// Ticks to run.
        #[arg(long, default_value_t = 600)]
        ticks: u32,
        /// How many ticks back each check restores from.
        #[arg(long, default_value_t = 7, value_parser = clap::value_parser!(u32).range(1..))]
        check_distance: u32,
        /// World and bot seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Players (each driven by a bot).
        #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u8).range(1..=64))]
        players: u8,
        /// Balls in the arena.
        #[arg(long, default_value_t = WorldConfig::DEFAULT_BALLS)]
        balls: u16,
    },
    /// Compare two desync dumps (.json or .bin) and print the fields that
    /// differ, with both values and their bit patterns. Exits 1 if they
    /// differ.
    DesyncDiff {
        /// First dump.
        a: PathBuf,
        /// Second dump.
        b: PathBuf,
        /// Most differences printed.
        #[arg(long, default_value_t = 20)]
        max: usize,
    },
    /// Play a replay in the window (Space pause, . step, [ ] speed, Home/End,
    /// PgUp/PgDn seek), or verify it against its recorded hashes.
    Replay {
        /// The replay file (from the server's replay directory or --record).
        file: PathBuf,
        /// Re-simulate as fast as possible and check every recorded hash;
        /// exit non-zero naming the first divergent tick.
        #[arg(long)]
        verify: bool,
        /// With --verify: no window, a progress bar on the terminal.
        #[arg(long, requires = "verify")]
        headless: bool,
        /// Playback speed, 0.25 to 16.
        #[arg(long, default_value_t = 1.0)]
        speed: f64,
        /// Start at this tick.
        #[arg(long, value_name = "TICK")]
        seek: Option<u32>,
        #[command(flatten)]
        window: WindowArgs,
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
        /// Record the game to this replay file.
        #[arg(long, value_name = "FILE")]
        record: Option<PathBuf>,
        #[command(flatten)]
        window: WindowArgs,
    },
    /// The game loop lab: the solo world driven by any loop strategy of the
    /// seeds, switched at run time (keys 1-7, the others on screen), with
    /// FPS, UPS, game time against real time and a strip chart.
    Lab(LabArgs),
    /// Game loop strategies on a fake clock: lists them, or with --trace
    /// prints `frame=I steps=K alpha=A` for each frame of one.
    Loops(LoopsArgs),
}

#[derive(Debug, clap::Args)]
struct LabArgs {
    /// Loop strategy: variable, variable-target, variable-max, fixed,
    /// fixed-max, fixed-interp or mixed.
    #[arg(long, default_value = "fixed-interp")]
    strategy: Strategy,
    /// Ticks per second.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u16).range(1..=240))]
    tick_rate: u16,
    /// Frames per second the paced strategies wait for.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u16).range(1..=1000))]
    target_fps: u16,
    /// Balls in the arena.
    #[arg(long, default_value_t = WorldConfig::DEFAULT_BALLS)]
    balls: u16,
    /// Real time each update costs on top of the simulation, in ms; more
    /// than the tick time provokes the spiral of death.
    #[arg(long, value_name = "MS", default_value = "0", value_parser = parse_ms)]
    tick_cost_ms: u64,
    /// Flipcode's MAX_LOOPS: at most K ticks a frame, then pending time is
    /// discarded (off unless given; L toggles it).
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..))]
    max_loops: Option<u32>,
    /// The networked client's rule: no maximum step, no MAX_LOOPS, no
    /// discarding.
    #[arg(long)]
    networked: bool,
    /// Start with seed 004's slow "7" on.
    #[arg(long)]
    spike: bool,
    /// World and bot seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Leave after N frames.
    #[arg(long, value_name = "N")]
    frames: Option<u64>,
    /// Write a PNG of the window at --screenshot-frame.
    #[arg(long, value_name = "FILE.png")]
    screenshot: Option<PathBuf>,
    /// Frame (from 1) the screenshot shows [default: the last of --frames,
    /// else 120].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    screenshot_frame: Option<u64>,
    /// Window size WxH.
    #[arg(long, value_name = "WxH", default_value = "1280x720", value_parser = parse_size)]
    window_size: (u32, u32),
}

#[derive(Debug, clap::Args)]
struct LoopsArgs {
    /// Run one strategy on a fake clock and print each frame.
    #[arg(long)]
    trace: bool,
    /// The strategy traced.
    #[arg(long, default_value = "fixed", requires = "trace")]
    strategy: Strategy,
    /// Game time per tick, in ms.
    #[arg(long, value_name = "MS", value_parser = parse_ms, required_if_eq("trace", "true"))]
    tick_ms: Option<u64>,
    /// Frame times in ms, used in turn (frame i lasts the i-th).
    #[arg(
        long,
        value_name = "MS[,MS...]",
        value_parser = parse_ms,
        value_delimiter = ',',
        required_if_eq("trace", "true")
    )]
    frame_ms: Vec<u64>,
    /// Frames traced.
    #[arg(long, default_value_t = 10, requires = "trace")]
    frames: u32,
    /// Flipcode's MAX_LOOPS, with discarding of pending time.
    #[arg(long, value_name = "K", requires = "trace", value_parser = clap::value_parser!(u32).range(1..))]
    max_loops: Option<u32>,
    /// Maximum step (variable) or delta (fixed) in ms; switches it on.
    #[arg(long, value_name = "MS", requires = "trace", value_parser = parse_ms)]
    max_delta_ms: Option<u64>,
    /// The networked client's rule: no cap and no discard.
    #[arg(long, requires = "trace")]
    networked: bool,
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
        Some(Command::DesyncDiff { a, b, max }) => desync_diff(&a, &b, max),
        Some(Command::Replay {
            file,
            verify,
            headless,
            speed,
            seek,
            window,
        }) => replay(&file, verify, headless, speed, seek, &window),
        Some(Command::Solo {
            bots,
            seed,
            tick_rate,
            max_loops,
            bot,
            record,
            window,
        }) => {
            let options = window_options(&window, "solo".into(), bot);
            let solo = SoloOptions {
                bots,
                seed,
                tick_rate,
                max_loops,
                record,
            };
            let outcome = window::run_solo(solo, options)?;
            Ok(vec![final_line(outcome.tick, outcome.hash)])
        }
        Some(Command::Lab(args)) => run_lab(args),
        Some(Command::Loops(args)) => run_loops(args),
        None => play(cli.play),
    }
}

/// `lab`: the game loop lab; its report line when it ends.
fn run_lab(args: LabArgs) -> anyhow::Result<Vec<String>> {
    /// The frame a screenshot shows with neither --screenshot-frame nor
    /// --frames: two seconds in, when the chart has filled in.
    const DEFAULT_SCREENSHOT_FRAME: u64 = 120;
    let screenshot_frame = args
        .screenshot_frame
        .or(args.frames)
        .unwrap_or(DEFAULT_SCREENSHOT_FRAME);
    if let (Some(frames), Some(_)) = (args.frames, &args.screenshot) {
        if screenshot_frame > frames {
            bail!("--screenshot-frame {screenshot_frame} comes after the last frame (--frames {frames})");
        }
    }
    let mut knobs = Knobs::new(
        args.strategy,
        args.tick_rate,
        args.target_fps,
        args.balls,
        args.max_loops,
    );
    knobs.settings.networked = args.networked;
    knobs.tick_cost_ns = args.tick_cost_ms;
    knobs.spike = args.spike;
    let report = lab::run(LabOptions {
        knobs,
        seed: args.seed,
        frames: args.frames,
        screenshot: args.screenshot,
        screenshot_frame,
        window: WindowOptions {
            title: "game loop lab".into(),
            size: args.window_size,
            ..WindowOptions::default()
        },
    })?;
    Ok(vec![report.line()])
}

/// `loops`: the ladder, or with `--trace` one strategy frame by frame.
fn run_loops(args: LoopsArgs) -> anyhow::Result<Vec<String>> {
    let Some(tick_ns) = args.tick_ms.filter(|_| args.trace) else {
        return Ok(loops::ladder());
    };
    // The fake clock sets every frame's length, so no target is waited for.
    let mut settings = Settings::new(args.strategy, tick_ns, 0);
    settings.max_loops = args.max_loops;
    settings.networked = args.networked;
    if let Some(max_delta_ns) = args.max_delta_ms {
        settings.max_delta_ns = max_delta_ns;
        settings.max_step = true;
    }
    Ok(trace::run(&TraceOptions {
        settings,
        frame_ns: args.frame_ms,
        frames: args.frames,
    })?)
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
        trust: match &args.fingerprint {
            Some(fingerprint) => Trust::Pinned(fingerprint.clone()),
            None => Trust::FirstUse {
                file: args.known_servers.clone(),
                address: connect.clone(),
            },
        },
        password: args.password.clone(),
        protocol_version: args.protocol_version,
        spectate: args.spectate,
        inputs_over_stream: args.inputs_over_stream,
        link: args
            .link
            .to_config()
            .context("reading the --sim-* options")?,
    })
    .context("starting the network thread")?;
    let play = PlayOptions {
        bot: args.bot,
        ticks: args.window.ticks,
        dump_dir: args.dump_dir.clone(),
        game: GameOptions {
            history: args.history,
            inject_desync_at: args.inject_desync_at.map(Tick),
            pinned_delay: args.input_delay,
        },
        record: args.record.clone(),
    };
    let outcome = if args.headless {
        if args.window.screenshot.is_some() {
            bail!("--screenshot needs a window; drop --headless");
        }
        headless::run(net, play)?
    } else {
        window::run_networked(net, window_options(&args.window, name, args.bot), play)?
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

/// `desync-diff`: prints the differing fields; an error (exit 1) when the
/// worlds differ, like diff(1).
fn desync_diff(a: &Path, b: &Path, max: usize) -> anyhow::Result<Vec<String>> {
    let report = compare_dumps::<World>(a, b, max)?;
    if report.differing == 0 {
        return Ok(report.lines);
    }
    for line in &report.lines {
        println!("{line}");
    }
    bail!("the dumps differ (differing fields: {})", report.differing)
}

/// `replay`: plays or verifies a replay file.
fn replay(
    file: &Path,
    verify: bool,
    headless: bool,
    speed: f64,
    seek: Option<u32>,
    window: &WindowArgs,
) -> anyhow::Result<Vec<String>> {
    let (recording, problem) = replay::open(file)?;
    let note = match (&problem, &recording.end) {
        (Some(problem), _) => Some(problem.to_string()),
        (None, None) => {
            Some("the recording has no end record: the recorder stopped abruptly".into())
        }
        (None, Some(_)) => None,
    };
    if let Some(note) = &note {
        eprintln!("lockstep-client: {}: {note}", file.display());
    }
    let verified = if headless {
        let bar = ProgressBar::new(std::io::IsTerminal::is_terminal(&std::io::stderr()));
        let stop_at = window.ticks;
        let verified =
            replay::verify::<World>(recording, stop_at, |done, total| bar.show(done, total));
        bar.done();
        verified
    } else {
        let options = window_options(window, format!("replay {}", file.display()), None);
        let view = ViewOptions {
            speed,
            seek: seek.map(Tick),
            verify,
        };
        replay_window::run(Playback::new(recording), note, options, view)?
    };
    if let Some(mismatch) = verified.mismatch {
        bail!("{mismatch}");
    }
    if let Some(problem) = problem {
        bail!(
            "{}: {problem} (the {} ticks before it verified)",
            file.display(),
            verified.ticks
        );
    }
    Ok(vec![
        verified.summary(),
        final_line(verified.ticks, verified.hash),
    ])
}

/// A one-line progress bar on stderr, drawn only on a terminal.
struct ProgressBar {
    enabled: bool,
}

impl ProgressBar {
    fn new(enabled: bool) -> Self {
        ProgressBar { enabled }
    }

    fn show(&self, done: u32, total: u32) {
        if !self.enabled || total == 0 {
            return;
        }
        const WIDTH: u64 = 40;
        let filled = (u64::from(done) * WIDTH / u64::from(total)) as usize;
        eprint!(
            "\rverifying [{}{}] {done}/{total} ticks",
            "#".repeat(filled),
            ".".repeat(WIDTH as usize - filled)
        );
    }

    fn done(&self) {
        if self.enabled {
            eprintln!();
        }
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

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_well_formed() {
        super::Cli::command().debug_assert();
    }
}
