//! The command line of `lockstep-client`: every mode, flag and default,
//! with the parsers of its small value types, and the library's options
//! each mode's flags stand for. `main.rs` passes those to the library.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::{Parser, Subcommand};
use lockstep_client::connect::{self, ConnectOptions};
use lockstep_client::finder::{Finder, FinderOptions};
use lockstep_client::known_servers;
use lockstep_client::notice::Notices;
use lockstep_client::play::{PlayOptions, TickCost};
use lockstep_client::window_modes::{
    self, BrowseOptions, Browsed, LabStart, SoloOptions, WindowOptions,
};
use lockstep_engine::determinism::history::DEFAULT_HISTORY;
use lockstep_engine::lockstep::net_game::{Fault, GameOptions};
use lockstep_engine::timing::loops::trace::TraceOptions;
use lockstep_engine::timing::loops::{parse_ms, Settings, Strategy};
use lockstep_protocol::{Tick, PROTOCOL_VERSION};
use lockstep_sim::WorldConfig;

/// Deterministic lockstep game client: join a server in a window or as a
/// headless bot, play solo, or run the simulation offline.
#[derive(Debug, Parser)]
#[command(version, args_conflicts_with_subcommands = true)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
    #[command(flatten)]
    pub(crate) play: PlayArgs,
}

#[derive(Debug, clap::Args)]
pub(crate) struct PlayArgs {
    /// Server to join, HOST:PORT (as printed by lockstep-server).
    #[arg(long, value_name = "HOST:PORT")]
    pub(crate) connect: Option<String>,
    /// Join the server of this name on the LAN (as `list` shows it): its
    /// advertised fingerprint is checked against the known-servers file.
    #[arg(long, value_name = "NAME", conflicts_with = "connect")]
    pub(crate) join: Option<String>,
    #[command(flatten)]
    pub(crate) discovery: DiscoveryArgs,
    /// With neither --connect nor --join: save the server browser as a PNG
    /// once it lists a server (or after 5 s), then leave.
    #[arg(long, value_name = "FILE.png", hide = true)]
    pub(crate) browser_screenshot: Option<PathBuf>,
    /// Player name shown to everyone (default: $USER).
    #[arg(long)]
    pub(crate) name: Option<String>,
    /// Expected server certificate fingerprint (hex SHA-256, as printed by
    /// lockstep-server). Without it the server is trusted on first use:
    /// its fingerprint is recorded in the known-servers file the first
    /// time, and any later change refuses the connection.
    #[arg(long, value_name = "HEX")]
    pub(crate) fingerprint: Option<String>,
    /// Where servers trusted on first use are remembered (used when there
    /// is no --fingerprint).
    #[arg(long, value_name = "FILE", env = known_servers::ENV, default_value_os_t = known_servers::default_path())]
    pub(crate) known_servers: PathBuf,
    /// The server's session password, if it has one.
    #[arg(long, env = "LOCKSTEP_PASSWORD", hide_env_values = true)]
    pub(crate) password: Option<String>,
    /// Run without a window.
    #[arg(long)]
    pub(crate) headless: bool,
    /// Watch the game without playing: no inputs, nobody waits for you. A
    /// spectator may join a running game; it fast-forwards to the live tick.
    #[arg(long)]
    pub(crate) spectate: bool,
    /// Fix the input delay to N ticks (1-15) instead of adapting it to the
    /// measured round trip and jitter.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(1..=15))]
    pub(crate) input_delay: Option<u8>,
    /// Play seeded pseudo-random inputs instead of the keyboard (a bot is
    /// ready for every game at once).
    #[arg(long, value_name = "SEED")]
    pub(crate) bot: Option<u64>,
    /// Be ready for the game at once in the window's lobby, as bots and
    /// headless clients are (otherwise press R, Space or the button).
    #[arg(long)]
    pub(crate) ready: bool,
    /// Play N games back to back on one connection, each to --ticks: at
    /// --ticks of each game but the last, tell the server this game is
    /// done, wait in the lobby until it is over for everyone (with its
    /// scores), and be ready for the next (a bot or headless client at
    /// once, a person by pressing R). Prints `stats` and `final` lines for
    /// every game.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) games: u32,
    /// With --screenshot: take it in the lobby before game N (1 is the
    /// first) once the players needed are listed, instead of at
    /// --screenshot-tick.
    #[arg(long, value_name = "N", requires = "screenshot", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) screenshot_lobby: Option<u32>,
    /// With --screenshot: take it once the game shows that the server is
    /// lost and it is reconnecting, instead of at --screenshot-tick.
    #[arg(long, requires = "screenshot", conflicts_with = "screenshot_lobby")]
    pub(crate) screenshot_reconnecting: bool,

    #[command(flatten)]
    pub(crate) window: WindowArgs,
    /// Where desync dumps are written when the server reports a desync.
    #[arg(long, value_name = "DIR", default_value = "desync")]
    pub(crate) dump_dir: PathBuf,
    /// Ticks of snapshots kept for desync dumps.
    #[arg(long, value_name = "TICKS", default_value_t = DEFAULT_HISTORY)]
    pub(crate) history: usize,
    /// Seconds to keep trying to reconnect when the server is lost during
    /// a game (it crashed, or the network failed). The game waits with its
    /// world kept, shows "server lost, reconnecting", and goes on at the
    /// tick the server announces once it is back (see the server's
    /// --resume). 0 ends the game when the server is lost.
    #[arg(long, value_name = "SECS", default_value_t = lockstep_client::net::DEFAULT_RECONNECT.as_secs())]
    pub(crate) reconnect_secs: u64,
    /// Record the game to this replay file (the server records too; see
    /// its --replay-dir).
    #[arg(long, value_name = "FILE")]
    pub(crate) record: Option<PathBuf>,
    /// Fault injection: nudge one value of the world by one ulp in every
    /// step from this tick on, to see a desync detected and diagnosed.
    #[arg(long, value_name = "TICK")]
    pub(crate) inject_desync_at: Option<u32>,
    /// With --inject-desync-at: nudge inside this phase of each step
    /// instead of after it, to see `desync-diff` name the phase.
    #[arg(long, value_name = "PHASE", requires = "inject_desync_at", value_parser = parse_phase)]
    pub(crate) inject_desync_phase: Option<&'static str>,
    /// Fault injection: answer the server's snapshot requests with the
    /// world one ulp off, so it must refuse them (tests).
    #[arg(long, hide = true)]
    pub(crate) corrupt_snapshot: bool,
    #[command(flatten)]
    pub(crate) link: lockstep_conditioner::LinkArgs,
    /// Send inputs on the reliable stream instead of as datagrams (to
    /// measure the difference).
    #[arg(long, hide = true)]
    pub(crate) inputs_over_stream: bool,
    /// Send inputs only as frames sample them, never on the game's
    /// schedule from the network thread (to measure the difference).
    #[arg(long, hide = true)]
    pub(crate) inputs_on_frames: bool,
    /// Real time each frame of the window spends on top of drawing, in ms:
    /// a slow window, to measure how late its inputs go.
    #[arg(long = "draw-cost-ms", value_name = "MS", default_value = "0", value_parser = parse_ms, hide = true)]
    pub(crate) draw_cost_ns: u64,
    /// Hold every local input this many milliseconds before it is first
    /// sent, as a machine too slow to keep up would (for testing the
    /// server's --laggard-ms).
    #[arg(long, hide = true, value_name = "MS", default_value_t = 0)]
    pub(crate) send_delay_ms: u64,
    /// Protocol version to announce (for testing refusals).
    #[arg(long, hide = true, default_value_t = PROTOCOL_VERSION)]
    pub(crate) protocol_version: u16,
    /// Announce a simulation self-test hash unlike the one this build
    /// computes (for testing the server's refusal).
    #[arg(long, hide = true)]
    pub(crate) perturb_self_test: bool,
    /// Real time every simulated tick costs on top of the simulation, in
    /// ms: plays a machine too slow for the tick rate (33 at 60 Hz is half
    /// speed), for testing speed control.
    #[arg(long = "tick-cost-ms", hide = true, value_name = "MS", value_parser = parse_ms)]
    pub(crate) tick_cost_ns: Option<u64>,
    /// With --tick-cost-ms: only the ticks up to this one cost extra (the
    /// machine recovers).
    #[arg(long, hide = true, value_name = "TICK", requires = "tick_cost_ns")]
    pub(crate) tick_cost_until: Option<u32>,
}

/// Where to look for servers on the LAN.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct DiscoveryArgs {
    /// Look for servers only on this network interface (a name such as
    /// eth0, or its IPv4 address). Default: every IPv4 network.
    #[arg(long, value_name = "NAME|ADDR")]
    pub(crate) discovery_interface: Option<String>,
    /// UDP port the servers' LAN beacon uses (their --discovery-port).
    #[arg(long, value_name = "PORT", default_value_t = lockstep_protocol::DISCOVERY_PORT)]
    pub(crate) discovery_port: u16,
}

impl DiscoveryArgs {
    pub(crate) fn options(&self) -> FinderOptions {
        FinderOptions {
            interface: self.discovery_interface.clone(),
            port: self.discovery_port,
        }
    }
}

/// How long `--join NAME` looks for the name before giving up: a server
/// answers a probe within milliseconds and broadcasts every second, so
/// three seconds leave room for two lost probes.
const JOIN_SEARCH: Duration = Duration::from_secs(3);

/// What the play arguments lead to.
pub(crate) enum Destination {
    /// Join this game.
    Join(Box<ConnectOptions>),
    /// Nothing to join (the browser was closed, or only photographed);
    /// these lines end the run.
    Done(Vec<String>),
}

impl PlayArgs {
    /// Where the player goes: `--connect`, `--join NAME` found on the
    /// LAN, or the server browser's choice.
    pub(crate) fn destination(mut self) -> anyhow::Result<Destination> {
        if let Some(name) = self.join.take() {
            let finder = Finder::start(&self.discovery.options())?;
            let found = finder.find(&name, JOIN_SEARCH)?;
            drop(finder);
            let placeholder = found.addr().to_string();
            let options = self.connect_options(placeholder)?.found(&found);
            return Ok(Destination::Join(Box::new(options)));
        }
        if let Some(address) = self.connect.take() {
            return Ok(Destination::Join(Box::new(self.connect_options(address)?)));
        }
        if self.headless {
            bail!(
                "nothing to do: pass --connect HOST:PORT or --join NAME to join a server (see \
                 `lockstep-client list`), or use the `solo` or `sim` command (see --help)"
            );
        }
        let browse = BrowseOptions {
            finder: self.discovery.options(),
            known_servers: self.known_servers.clone(),
            window: self.window.options(None),
            screenshot: self.browser_screenshot.clone(),
        };
        Ok(match window_modes::browse(browse)? {
            Browsed::Address(address) => {
                Destination::Join(Box::new(self.connect_options(address)?))
            }
            Browsed::Server(found) => {
                let placeholder = found.addr().to_string();
                Destination::Join(Box::new(self.connect_options(placeholder)?.found(&found)))
            }
            Browsed::Nothing(lines) => Destination::Done(lines),
        })
    }

    /// The game at `address`: resolves it and reads the `--sim-*` flags,
    /// in that order.
    fn connect_options(self, address: String) -> anyhow::Result<ConnectOptions> {
        if self.games > 1 && self.window.ticks.is_none() {
            bail!("--games needs --ticks: each game ends for this client at that tick");
        }
        if self.games > 1 && self.spectate {
            bail!("--games is for players; a spectator watches one game");
        }
        Ok(ConnectOptions {
            advertised: None,
            server: connect::resolve(&address)?,
            link: self
                .link
                .to_config()
                .context("reading the --sim-* options")?,
            address,
            name: self.name,
            fingerprint: self.fingerprint,
            known_servers: self.known_servers,
            password: self.password,
            protocol_version: self.protocol_version,
            perturb_self_test: self.perturb_self_test,
            spectate: self.spectate,
            inputs_over_stream: self.inputs_over_stream,
            send_delay: std::time::Duration::from_millis(self.send_delay_ms),
            reconnect: Duration::from_secs(self.reconnect_secs),
            headless: self.headless,
            play: PlayOptions {
                bot: self.bot,
                ticks: self.window.ticks,
                games: self.games,
                auto_ready: self.ready || self.headless || self.bot.is_some(),
                dump_dir: self.dump_dir,
                game: GameOptions {
                    history: self.history,
                    fault: self.inject_desync_at.map(|tick| Fault {
                        tick: Tick(tick),
                        phase: self.inject_desync_phase,
                    }),
                    pinned_delay: self.input_delay,
                },
                record: self.record,
                inputs_on_schedule: !self.inputs_on_frames,
                tick_cost: self.tick_cost_ns.map(|ns| TickCost {
                    per_tick: Duration::from_nanos(ns),
                    until: self.tick_cost_until.map(Tick),
                }),
                corrupt_snapshot: self.corrupt_snapshot,
                notices: Notices::default(),
            },
            window: WindowOptions {
                draw_cost: Duration::from_nanos(self.draw_cost_ns),
                screenshot_lobby: self.screenshot_lobby,
                screenshot_reconnecting: self.screenshot_reconnecting,
                ..self.window.options(self.bot)
            },
        })
    }
}

#[derive(Debug, Clone, clap::Args)]
pub(crate) struct WindowArgs {
    /// Leave after this many ticks.
    #[arg(long, value_name = "N")]
    pub(crate) ticks: Option<u32>,
    /// Write a PNG of the window at --screenshot-tick.
    #[arg(long, value_name = "FILE.png")]
    pub(crate) screenshot: Option<PathBuf>,
    /// Tick at which --screenshot is taken.
    #[arg(long, value_name = "T", default_value_t = 0)]
    pub(crate) screenshot_tick: u32,
    /// Window position X,Y (default: centred).
    #[arg(long, value_name = "X,Y", value_parser = parse_pair::<i32>)]
    pub(crate) window_pos: Option<(i32, i32)>,
    /// Window size WxH.
    #[arg(long, value_name = "WxH", default_value = "1280x720", value_parser = parse_size)]
    pub(crate) window_size: (u32, u32),
    /// Show each frame at the display's vertical blank (no tearing). The
    /// game still ticks by its own clock; where the driver cannot sync,
    /// frames are shown unsynchronised.
    #[arg(long)]
    pub(crate) vsync: bool,
    /// Start a networked game with the net graph shown: strip charts of
    /// the last seconds (frame time, ticks per frame, RTT, jitter, input
    /// delay, bundles held, stalls, bytes/s) with event markers. F3
    /// toggles it.
    #[arg(long)]
    pub(crate) net_graph: bool,
}

impl WindowArgs {
    /// The window, its local player driven by `bot` if given; the mode
    /// names it.
    pub(crate) fn options(&self, bot: Option<u64>) -> WindowOptions {
        WindowOptions {
            title: String::new(),
            position: self.window_pos,
            size: self.window_size,
            ticks: self.ticks,
            screenshot: self.screenshot.clone(),
            screenshot_tick: self.screenshot_tick,
            bot,
            vsync: self.vsync,
            draw_cost: Duration::ZERO,
            screenshot_lobby: None,
            screenshot_reconnecting: false,
            net_graph: self.net_graph,
        }
    }
}

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
    /// The game loop lab: the solo world driven by any loop strategy of the
    /// seeds, switched at run time (keys 1-7, the others on screen), with
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
    /// The game: balls (the ball game) or tally (counters).
    #[arg(long, value_name = "NAME", default_value = "balls")]
    pub(crate) game: String,
    /// Balls in the arena, a setting of the ball game [default: 24]; the
    /// same as --set balls=N.
    #[arg(long)]
    pub(crate) balls: Option<u16>,
    /// A setting of the game, KEY=VALUE (repeatable); each game says which
    /// it has.
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = parse_setting)]
    pub(crate) settings: Vec<(String, String)>,
}

impl GameArgs {
    /// Every setting given, `--balls` among them.
    pub(crate) fn pairs(&self) -> Vec<(String, String)> {
        let balls = self.balls.map(|n| ("balls".to_string(), n.to_string()));
        balls.into_iter().chain(self.settings.clone()).collect()
    }
}

fn parse_setting(s: &str) -> Result<(String, String), String> {
    let (key, value) = s
        .split_once('=')
        .ok_or_else(|| format!("expected KEY=VALUE, got {s:?}"))?;
    Ok((key.trim().to_string(), value.trim().to_string()))
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
    /// Balls in the arena.
    #[arg(long, default_value_t = WorldConfig::DEFAULT_BALLS)]
    pub(crate) balls: u16,
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
            balls: self.balls,
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

/// A phase of a game's step, as `--inject-desync-phase` names it:
/// `roster` (the bundle's departures and returns) or one of the phases of
/// a game this client offers ([`lockstep_engine::Game::PHASES`]); the game
/// the server hosts must have it, which the game's start checks.
fn parse_phase(s: &str) -> Result<&'static str, String> {
    let phases = crate::phases();
    phases
        .iter()
        .copied()
        .find(|&phase| phase == s)
        .ok_or_else(|| format!("no phase {s:?}; the phases are {}", phases.join(", ")))
}

fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let (w, h) = parse_pair::<u32>(&s.replace('x', ","))?;
    if w < 64 || h < 64 {
        return Err(format!("window size {w}x{h} is too small (at least 64x64)"));
    }
    Ok((w, h))
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::{Cli, Command};

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn vsync_is_off_unless_asked_for() {
        let play = |args: &[&str]| Cli::parse_from(args).play.window.options(None);
        assert!(!play(&["lockstep-client"]).vsync);
        assert!(play(&["lockstep-client", "--vsync"]).vsync);
        let Some(Command::Solo(solo)) =
            Cli::parse_from(["lockstep-client", "solo", "--vsync"]).command
        else {
            panic!("not the solo command");
        };
        assert!(solo.options().1.vsync);
    }
}
