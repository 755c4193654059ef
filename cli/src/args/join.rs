//! Joining a server: the flags of `lockstep-client` without a command,
//! and where they lead (`--connect`, `--join NAME` found on the LAN, or
//! the server browser's choice).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context};
use lockstep_client::hooks::{PlayHooks, TestHooks, TickCost};
use lockstep_client::io::discovery::Finder;
use lockstep_client::io::known_servers;
use lockstep_client::link::connection::Hooks;
use lockstep_client::play::connect::{self, ConnectOptions};
use lockstep_client::play::notice::Notices;
use lockstep_client::play::PlayOptions;
use lockstep_client::window_options::{BrowseOptions, Browsed, WindowOptions};
use lockstep_engine::determinism::history::DEFAULT_HISTORY;
use lockstep_engine::lockstep::net_game::{Fault, GameOptions};
use lockstep_engine::timing::loops::parse_ms;
use lockstep_protocol::Tick;

use super::shared::{parse_label, parse_phase, DiscoveryArgs, WindowArgs};

/// The flags without a command: which server, who plays, how, and the
/// faults and measurements tests ask for.
#[derive(Debug, clap::Args)]
pub(crate) struct PlayArgs {
    /// Server to join, HOST:PORT (as printed by lockstep-server).
    #[arg(help_heading = "Joining", long, value_name = "HOST:PORT")]
    pub(crate) connect: Option<String>,
    /// Join the server of this name on the LAN (as `list` shows it): its
    /// advertised fingerprint is checked against the known-servers file.
    #[arg(
        help_heading = "Joining",
        long,
        value_name = "NAME",
        conflicts_with = "connect"
    )]
    pub(crate) join: Option<String>,
    #[command(flatten, next_help_heading = "Joining")]
    pub(crate) discovery: DiscoveryArgs,
    /// With neither --connect nor --join: save the server browser as a PNG
    /// once it lists a server (or after 5 s), then leave.
    #[arg(long, value_name = "FILE.png", hide = true)]
    pub(crate) browser_screenshot: Option<PathBuf>,
    /// Player name shown to everyone (default: $USER).
    #[arg(help_heading = "Joining", long)]
    pub(crate) name: Option<String>,
    /// Expected server certificate fingerprint (hex SHA-256, as printed by
    /// lockstep-server). Without it the server is trusted on first use:
    /// its fingerprint is recorded in the known-servers file the first
    /// time, and any later change refuses the connection.
    #[arg(help_heading = "Joining", long, value_name = "HEX")]
    pub(crate) fingerprint: Option<String>,
    /// Where servers trusted on first use are remembered (used when there
    /// is no --fingerprint).
    #[arg(help_heading = "Joining", long, value_name = "FILE", env = known_servers::ENV, default_value_os_t = known_servers::default_path())]
    pub(crate) known_servers: PathBuf,
    /// The server's session password, if it has one.
    #[arg(
        help_heading = "Joining",
        long,
        env = "LOCKSTEP_PASSWORD",
        hide_env_values = true
    )]
    pub(crate) password: Option<String>,
    /// Run without a window.
    #[arg(help_heading = "Playing", long)]
    pub(crate) headless: bool,
    /// Watch the game without playing: no inputs, nobody waits for you. A
    /// spectator may join a running game; it fast-forwards to the live tick.
    #[arg(help_heading = "Joining", long)]
    pub(crate) spectate: bool,
    /// Fix the input delay to N ticks (1-15) instead of adapting it to the
    /// measured round trip and jitter.
    #[arg(help_heading = "Playing", long, value_name = "N", value_parser = clap::value_parser!(u8).range(1..=15))]
    pub(crate) input_delay: Option<u8>,
    /// Play seeded pseudo-random inputs instead of the keyboard (a bot is
    /// ready for every game at once).
    #[arg(help_heading = "Playing", long, value_name = "SEED")]
    pub(crate) bot: Option<u64>,
    /// Be ready for the game at once in the window's lobby, as bots and
    /// headless clients are (otherwise press R, Space or the button).
    #[arg(help_heading = "Playing", long)]
    pub(crate) ready: bool,
    /// Play N games back to back on one connection, each to --ticks: at
    /// --ticks of each game but the last, tell the server this game is
    /// done, wait in the lobby until it is over for everyone (with its
    /// scores), and be ready for the next (a bot or headless client at
    /// once, a person by pressing R). Prints `stats` and `final` lines for
    /// every game.
    #[arg(help_heading = "Playing", long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) games: u32,
    /// With --screenshot: take it in the lobby before game N (1 is the
    /// first) once the players needed are listed, instead of at
    /// --screenshot-tick.
    #[arg(help_heading = "Window", long, value_name = "N", requires = "screenshot", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) screenshot_lobby: Option<u32>,
    /// With --screenshot: take it once the game shows that the server is
    /// lost and it is reconnecting, instead of at --screenshot-tick.
    #[arg(
        help_heading = "Window",
        long,
        requires = "screenshot",
        conflicts_with = "screenshot_lobby"
    )]
    pub(crate) screenshot_reconnecting: bool,

    #[command(flatten, next_help_heading = "Window")]
    pub(crate) window: WindowArgs,
    /// Where desync dumps are written when the server reports a desync.
    #[arg(
        help_heading = "Desyncs",
        long,
        value_name = "DIR",
        default_value = "desync"
    )]
    pub(crate) dump_dir: PathBuf,
    /// Ticks of snapshots kept for desync dumps.
    #[arg(help_heading = "Desyncs", long, value_name = "TICKS", default_value_t = DEFAULT_HISTORY)]
    pub(crate) history: usize,
    /// Seconds to keep trying to reconnect when the server is lost during
    /// a game (it crashed, or the network failed). The game waits with its
    /// world kept, shows "server lost, reconnecting", and goes on at the
    /// tick the server announces once it is back (see the server's
    /// --resume). 0 ends the game when the server is lost.
    #[arg(help_heading = "Joining", long, value_name = "SECS", default_value_t = lockstep_client::io::link::DEFAULT_RECONNECT.as_secs())]
    pub(crate) reconnect_secs: u64,
    /// Record the game to this replay file (the server records too; see
    /// its --replay-dir).
    #[arg(help_heading = "Playing", long, value_name = "FILE")]
    pub(crate) record: Option<PathBuf>,
    /// Fault injection: nudge one value of the world by one ulp in every
    /// step from this tick on, to see a desync detected and diagnosed.
    #[arg(help_heading = "Desyncs", long, value_name = "TICK")]
    pub(crate) inject_desync_at: Option<u32>,
    /// With --inject-desync-at: nudge inside this phase of each step
    /// instead of after it, to see `desync-diff` name the phase.
    #[arg(help_heading = "Desyncs", long, value_name = "PHASE", requires = "inject_desync_at", value_parser = parse_phase)]
    pub(crate) inject_desync_phase: Option<&'static str>,
    /// With --inject-desync-at: change the first value the game traces
    /// under this label in each step by one ulp instead, as a machine
    /// that computes that line differently would, to see `desync-diff`
    /// name its file and line (the labels are the game's `trace` calls).
    #[arg(help_heading = "Desyncs", long, value_name = "LABEL", requires = "inject_desync_at", conflicts_with = "inject_desync_phase", value_parser = parse_label)]
    pub(crate) inject_desync_value: Option<&'static str>,
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
    /// Protocol version to announce instead of this build's (for testing
    /// refusals).
    #[arg(long, hide = true, value_name = "VERSION")]
    pub(crate) protocol_version: Option<u16>,
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

/// How long `--join NAME` looks for the name before giving up: a server
/// answers a probe within milliseconds and broadcasts every second, so
/// three seconds leave room for two lost probes.
const JOIN_SEARCH: Duration = Duration::from_secs(3);

/// What the play arguments lead to.
pub(crate) enum Destination {
    /// Join this game.
    Join(Box<Join>),
    /// Nothing to join (the browser was closed, or only photographed);
    /// these lines end the run.
    Done(Vec<String>),
}

/// A game to join, and how to play it.
pub(crate) struct Join {
    /// The server and the game.
    pub(crate) options: ConnectOptions,
    /// Play without a window.
    pub(crate) headless: bool,
    /// The window, unless `headless`; its title is the player's name.
    pub(crate) window: WindowOptions,
}

impl Join {
    /// The game at the server `found` on the LAN.
    fn found(self, found: &lockstep_client::discovery::Found) -> Join {
        Join {
            options: self.options.found(found),
            ..self
        }
    }
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
        Ok(match crate::windowed::browse(browse)? {
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
    fn connect_options(self, address: String) -> anyhow::Result<Join> {
        if self.games > 1 && self.window.ticks.is_none() {
            bail!("--games needs --ticks: each game ends for this client at that tick");
        }
        if self.games > 1 && self.spectate {
            bail!("--games is for players; a spectator watches one game");
        }
        if self.headless && self.window.screenshot.is_some() {
            bail!("--screenshot needs a window; drop --headless");
        }
        let window = WindowOptions {
            draw_cost: Duration::from_nanos(self.draw_cost_ns),
            screenshot_lobby: self.screenshot_lobby,
            screenshot_reconnecting: self.screenshot_reconnecting,
            ..self.window.options(self.bot)
        };
        let headless = self.headless;
        let options = ConnectOptions {
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
            spectate: self.spectate,
            hooks: TestHooks {
                protocol_version: self.protocol_version,
                perturb_self_test: self.perturb_self_test,
                link: Hooks {
                    inputs_over_stream: self.inputs_over_stream,
                    send_delay: Duration::from_millis(self.send_delay_ms),
                },
            },
            reconnect: Duration::from_secs(self.reconnect_secs),
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
                        value: self.inject_desync_value,
                    }),
                    pinned_delay: self.input_delay,
                },
                record: self.record,
                hooks: PlayHooks {
                    inputs_on_frames: self.inputs_on_frames,
                    tick_cost: self.tick_cost_ns.map(|ns| TickCost {
                        per_tick: Duration::from_nanos(ns),
                        until: self.tick_cost_until.map(Tick),
                    }),
                    corrupt_snapshot: self.corrupt_snapshot,
                },
                notices: Notices::default(),
            },
        };
        Ok(Join {
            options,
            headless,
            window,
        })
    }
}
