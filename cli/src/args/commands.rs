//! The commands of `lockstep-client` (`sim`, `synctest`, `desync-diff`,
//! `trace-diff`,
//! `replay`, `report`, `solo`, `lab`, `loops`, `list`) and their flags.

use std::path::PathBuf;

use clap::Subcommand;
use lockstep_client::games::Games;
use lockstep_client::io::known_servers;
use lockstep_client::window_options::{LabStart, SoloOptions, WindowOptions};
use lockstep_engine::timing::loops::trace::TraceOptions;
use lockstep_engine::timing::loops::{parse_ms, Settings, Strategy};

use super::shared::{parse_size, DiscoveryArgs, WindowArgs};

/// The commands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
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
        #[command(flatten)]
        game: GameArgs,
        /// Ticks per second (sets the fixed dt).
        #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u16).range(1..=240))]
        tick_rate: u16,
        /// Print the sync trace of these ticks' steps (T or FROM..TO): every
        /// value the game traces, with its file and line, one `trace {...}`
        /// line each, before the final line; `trace-diff` compares two
        /// runs' outputs (two builds or targets).
        #[arg(long, value_name = "TICKS", value_parser = lockstep_engine::trace::parse_ticks)]
        trace: Option<std::ops::RangeInclusive<u32>>,
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
        #[command(flatten)]
        game: GameArgs,
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
    /// Compare the sync traces in two outputs of `sim --trace` (two
    /// builds, or two targets: native against wine, qemu or wasm32) and
    /// print the first value computed differently, with its file and
    /// line. Exits 1 if they differ.
    TraceDiff {
        /// First output (a file holding `sim --trace`'s lines).
        a: PathBuf,
        /// Second output.
        b: PathBuf,
        /// Entries shown either side of the first difference.
        #[arg(long, default_value_t = 3)]
        context: usize,
    },
    /// Play a replay in the window (Space pause, . step, [ ] speed, Home/End,
    /// PgUp/PgDn seek, click or drag on the timeline), or verify it against
    /// its recorded hashes.
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
    /// Draw a whole game from its replay into a PNG: the players and
    /// their machines, the verdict, goals, hash checks, drops, rejoins and
    /// desyncs over game time, and each player's ping, slack, waits and
    /// stand-ins. Needs no display.
    Report {
        /// The replay file.
        replay: PathBuf,
        /// The PNG to write.
        #[arg(long)]
        out: PathBuf,
        /// Picture width in pixels (the height follows from the players).
        #[arg(long, default_value_t = 1200, value_parser = clap::value_parser!(u32).range(480..=8192))]
        width: u32,
    },
    /// Play alone against bots in a window (MAX_LOOPS guard on).
    Solo(SoloArgs),
    /// The game loop lab: solo play of any game driven by any loop strategy
    /// of the seeds, switched at run time (keys 1-7, the others on screen), with
    /// FPS, UPS, game time against real time and a strip chart.
    Lab(LabArgs),
    /// Game loop strategies on a fake clock: lists them, or with --trace
    /// prints `frame=I steps=K alpha=A` for each frame of one.
    Loops(LoopsArgs),
    /// Look for servers on the LAN and print one line each: `server
    /// name=NAME addr=HOST:PORT players=J/N version=V fingerprint=HEX
    /// code=CODE ping_ms=P trust=new|known|changed`.
    List(ListArgs),
}

/// Options of `list`.
#[derive(Debug, clap::Args)]
pub(crate) struct ListArgs {
    /// How long to listen for answers, in seconds (servers answer a probe
    /// within milliseconds; a second covers a lost probe).
    #[arg(long, default_value_t = 1.0, value_parser = parse_seconds)]
    pub(crate) seconds: f64,
    #[command(flatten)]
    pub(crate) discovery: DiscoveryArgs,
    /// The known-servers file the `trust=` field is judged by.
    #[arg(long, value_name = "FILE", env = known_servers::ENV, default_value_os_t = known_servers::default_path())]
    pub(crate) known_servers: PathBuf,
}

fn parse_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.0..=600.0).contains(&v) => Ok(v),
        _ => Err(format!("expected seconds from 0 to 600, got {s:?}")),
    }
}

/// Options of `solo`.
#[derive(Debug, clap::Args)]
pub(crate) struct SoloArgs {
    #[command(flatten)]
    pub(crate) game: GameArgs,
    /// Bot opponents.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(0..=15))]
    pub(crate) bots: u8,
    /// World seed.
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
    /// Ticks per second.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u16).range(1..=240))]
    pub(crate) tick_rate: u16,
    /// Most ticks per frame before pending time is discarded
    /// (flipcode's MAX_LOOPS).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max_loops: u32,
    /// Play the local disc with a seeded bot.
    #[arg(long, value_name = "SEED")]
    pub(crate) bot: Option<u64>,
    /// Record the game to this replay file.
    #[arg(long, value_name = "FILE")]
    pub(crate) record: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) window: WindowArgs,
}

impl SoloArgs {
    /// The solo game and its window.
    pub(crate) fn options(self) -> (SoloOptions, WindowOptions) {
        let window = self.window.options(self.bot);
        let solo = SoloOptions {
            settings: self.game.pairs(),
            game: self.game.game,
            bots: self.bots,
            seed: self.seed,
            tick_rate: self.tick_rate,
            max_loops: self.max_loops,
            record: self.record,
        };
        (solo, window)
    }
}

/// Which game an offline mode plays, and its settings.
#[derive(Debug, clap::Args)]
pub(crate) struct GameArgs {
    /// The game (its help lists the games this build offers; the first is
    /// the default).
    #[arg(long, value_name = "NAME")]
    pub(crate) game: Option<String>,
    /// Short for --set balls=N.
    #[arg(long)]
    pub(crate) balls: Option<u16>,
    /// A setting of the game, KEY=VALUE (repeatable); each game says which
    /// it has.
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = lockstep_engine::parse_setting)]
    pub(crate) settings: Vec<(String, String)>,
}

impl GameArgs {
    /// The game's name: the one given, else the first of `games`.
    pub(crate) fn name(&self, games: &impl Games) -> String {
        let first = games.hosted().first().map(|game| game.name());
        self.game
            .clone()
            .or(first.map(str::to_string))
            .unwrap_or_default()
    }

    /// Every setting given, `--balls` among them.
    pub(crate) fn pairs(&self) -> Vec<(String, String)> {
        let balls = self.balls.map(|n| ("balls".to_string(), n.to_string()));
        balls.into_iter().chain(self.settings.clone()).collect()
    }
}

#[derive(Debug, clap::Args)]
pub(crate) struct LabArgs {
    /// Loop strategy: variable, variable-target, variable-max, fixed,
    /// fixed-max, fixed-interp or mixed.
    #[arg(long, default_value = "fixed-interp")]
    pub(crate) strategy: Strategy,
    /// Ticks per second.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u16).range(1..=240))]
    pub(crate) tick_rate: u16,
    /// Frames per second the paced strategies wait for.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u16).range(1..=1000))]
    pub(crate) target_fps: u16,
    #[command(flatten)]
    pub(crate) game: GameArgs,
    /// Bot opponents at start (-/+ in the lab).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(0..=15))]
    pub(crate) bots: u8,
    /// Real time each update costs on top of the simulation, in ms; more
    /// than the tick time provokes the spiral of death.
    #[arg(long = "tick-cost-ms", value_name = "MS", default_value = "0", value_parser = parse_ms)]
    pub(crate) tick_cost_ns: u64,
    /// Flipcode's MAX_LOOPS: at most K ticks a frame, then pending time is
    /// discarded (off unless given; L toggles it).
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max_loops: Option<u32>,
    /// The networked client's rule: no maximum step, no MAX_LOOPS, no
    /// discarding.
    #[arg(long)]
    pub(crate) networked: bool,
    /// Start with JGameLoopStudy's slow "7" on.
    #[arg(long)]
    pub(crate) spike: bool,
    /// World and bot seed.
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
    /// Leave after N frames.
    #[arg(long, value_name = "N")]
    pub(crate) frames: Option<u64>,
    /// Write a PNG of the window at --screenshot-frame.
    #[arg(long, value_name = "FILE.png")]
    pub(crate) screenshot: Option<PathBuf>,
    /// Frame (from 1) the screenshot shows [default: the last of --frames,
    /// else 120].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) screenshot_frame: Option<u64>,
    /// Window size WxH.
    #[arg(long, value_name = "WxH", default_value = "1280x720", value_parser = parse_size)]
    pub(crate) window_size: (u32, u32),
}

impl LabArgs {
    /// How the lab starts.
    pub(crate) fn start(self) -> LabStart {
        LabStart {
            strategy: self.strategy,
            tick_rate: self.tick_rate,
            target_fps: self.target_fps,
            settings: self.game.pairs(),
            game: self.game.game,
            bots: self.bots,
            tick_cost_ns: self.tick_cost_ns,
            max_loops: self.max_loops,
            networked: self.networked,
            spike: self.spike,
            seed: self.seed,
            frames: self.frames,
            screenshot: self.screenshot,
            screenshot_frame: self.screenshot_frame,
            size: self.window_size,
        }
    }
}

#[derive(Debug, clap::Args)]
pub(crate) struct LoopsArgs {
    /// Run one strategy on a fake clock and print each frame.
    #[arg(long)]
    pub(crate) trace: bool,
    /// The strategy traced.
    #[arg(long, default_value = "fixed", requires = "trace")]
    pub(crate) strategy: Strategy,
    /// Game time per tick, in ms.
    #[arg(long = "tick-ms", value_name = "MS", value_parser = parse_ms, required_if_eq("trace", "true"))]
    pub(crate) tick_ns: Option<u64>,
    /// Frame times in ms, used in turn (frame i lasts the i-th).
    #[arg(
        long = "frame-ms",
        value_name = "MS[,MS...]",
        value_parser = parse_ms,
        value_delimiter = ',',
        required_if_eq("trace", "true")
    )]
    pub(crate) frame_ns: Vec<u64>,
    /// Frames traced.
    #[arg(long, default_value_t = 10, requires = "trace")]
    pub(crate) frames: u32,
    /// Flipcode's MAX_LOOPS, with discarding of pending time.
    #[arg(long, value_name = "K", requires = "trace", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max_loops: Option<u32>,
    /// Maximum step (variable) or delta (fixed) in ms; switches it on.
    #[arg(long = "max-delta-ms", value_name = "MS", requires = "trace", value_parser = parse_ms)]
    pub(crate) max_delta_ns: Option<u64>,
    /// The networked client's rule: no cap and no discard.
    #[arg(long, requires = "trace")]
    pub(crate) networked: bool,
}

impl LoopsArgs {
    /// The strategy to trace, or `None` for the ladder.
    pub(crate) fn trace_options(self) -> Option<TraceOptions> {
        let tick_ns = self.tick_ns.filter(|_| self.trace)?;
        // The fake clock sets every frame's length, so no target is waited
        // for.
        let mut settings = Settings::new(self.strategy, tick_ns, 0);
        settings.max_loops = self.max_loops;
        settings.networked = self.networked;
        if let Some(max_delta_ns) = self.max_delta_ns {
            settings.max_delta_ns = max_delta_ns;
            settings.max_step = true;
        }
        Some(TraceOptions {
            settings,
            frame_ns: self.frame_ns,
            frames: self.frames,
        })
    }
}
