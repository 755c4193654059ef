//! `lockstep-server`'s command line: parses the arguments, loads or makes
//! the identity, binds, prints where players find the server and runs the
//! relay until Ctrl-C or SIGTERM. The binary hands it the games it offers
//! ([`main`]); nothing here names one.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use crate::{
    AdvertiseOptions, Config, Identity, OnDesync, WebDoor, DEFAULT_DROP_TIMEOUT,
    DEFAULT_LAGGARD_TOLERANCE,
};
use anyhow::Context;
use clap::{CommandFactory, FromArgMatches};
use lockstep_engine::{describe_games, find_game, HostedGame, UnknownGame};
use lockstep_protocol::{GameSpec, Settings};

/// QUIC relay for lockstep games: collects every player's input for each
/// tick and relays the complete set to everyone.
#[derive(Debug, clap::Parser)]
#[command(name = "lockstep-server", version)]
struct Args {
    /// UDP address to listen on (port 0 picks a free port).
    #[arg(long, default_value = "0.0.0.0:7777")]
    listen: SocketAddr,
    /// Players needed before the game starts (1-64).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(1..=64))]
    players: u8,
    /// Simulation ticks per second (1-240).
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u16).range(1..=240))]
    tick_rate: u16,
    /// Ticks between sampling an input and simulating it (1-60).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(1..=60))]
    input_delay: u8,
    /// The game to host (its help lists the games this build offers, from
    /// [`main`]'s list). Every client plays it; a client that does not
    /// have it is refused.
    #[arg(long, value_name = "NAME")]
    game: Option<String>,
    /// Short for --set balls=N.
    #[arg(long, value_parser = clap::value_parser!(u16).range(0..=1000))]
    balls: Option<u16>,
    /// A setting of the game, KEY=VALUE (repeatable); --game says which
    /// each game has.
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = lockstep_engine::parse_setting)]
    settings: Vec<(String, String)>,
    /// World seed (default: picked from the clock and printed).
    #[arg(long)]
    seed: Option<u64>,
    /// Milliseconds of silence after which a player is dropped. A player
    /// whose machine stopped for less (a frozen process, a suspended
    /// laptop) comes back on the same connection; meanwhile the game
    /// stands in for its inputs (--laggard-ms) or waits for it.
    #[arg(long, value_name = "MS", default_value_t = DEFAULT_DROP_TIMEOUT.as_millis() as u64)]
    drop_timeout_ms: u64,
    /// Milliseconds a tick waits for a late player's input once every other
    /// input of the tick has arrived; then the player's previous input
    /// stands in for it, marked in the bundle, and the game goes on (0:
    /// always wait, up to --drop-timeout-ms). Never before half a tick
    /// before the tick is needed, so an input on time is never replaced.
    /// The default, 8 ms, covers the spread of one tick's inputs on a LAN;
    /// every millisecond more is one every other player stalls once the
    /// tick is due.
    #[arg(long, value_name = "MS", default_value_t = DEFAULT_LAGGARD_TOLERANCE.as_millis() as u64)]
    laggard_ms: u64,
    /// Seconds of game time between two verified snapshots: a player sends
    /// its world at a tick whose hash the majority confirmed, the server
    /// checks it against that hash, and joins start from it instead of
    /// tick 0 while older bundles leave memory (the replay keeps them).
    /// 0 keeps every bundle in memory instead.
    #[arg(long, value_name = "SECS", default_value_t = crate::DEFAULT_SNAPSHOT_SECS)]
    snapshot_secs: u16,
    /// Clients report their world hash every this many ticks (1-3600).
    #[arg(long, default_value_t = 15, value_parser = clap::value_parser!(u16).range(1..=3600))]
    hash_interval: u16,
    /// What a desync does: `continue` announces it and plays on, `stop`
    /// announces it and ends the game.
    #[arg(long, value_enum, default_value_t = DesyncAction::Continue)]
    on_desync: DesyncAction,
    /// Speed control: `on` slows the game down for everyone, from a tick
    /// announced to all, while a player's machine cannot keep up with the
    /// tick rate (it reports what it sustains), and speeds it up again
    /// once it can; only the pacing changes, never a tick's game time. On
    /// by default: when every machine keeps up it changes nothing, and
    /// when one cannot, the game runs smoothly at its pace instead of
    /// stalling for it on almost every tick. `off` keeps full speed and
    /// lets the game wait.
    #[arg(long, value_enum, default_value_t = Switch::On)]
    speed_control: Switch,
    /// Directory for replay files: one per game, named after its start time
    /// (UTC).
    #[arg(long, value_name = "DIR", default_value = "replays")]
    replay_dir: PathBuf,
    /// Do not record games.
    #[arg(long)]
    no_record: bool,
    /// Directory holding the server's certificate and key (created on
    /// first start; keep it to keep the fingerprint clients pinned).
    #[arg(long, env = "LOCKSTEP_IDENTITY_DIR", default_value_os_t = default_identity_dir())]
    identity_dir: PathBuf,
    /// Session password: clients must give it (--password or
    /// LOCKSTEP_PASSWORD) before they take a slot.
    #[arg(long, env = "LOCKSTEP_PASSWORD", hide_env_values = true)]
    password: Option<String>,
    /// Name the server advertises on the LAN and players type after
    /// `--join` (default: this machine's host name). No spaces.
    #[arg(long, value_parser = parse_server_name)]
    name: Option<String>,
    /// Do not advertise the server on the LAN (players then connect with
    /// --connect HOST:PORT).
    #[arg(long)]
    no_advertise: bool,
    /// Advertise only on this network interface (a name such as eth0, or
    /// its IPv4 address). Default: every IPv4 network, or only the one
    /// holding the --listen address if it is not 0.0.0.0.
    #[arg(long, value_name = "NAME|ADDR", conflicts_with = "no_advertise")]
    advertise_interface: Option<String>,
    /// UDP port of the LAN beacon: clients' probes arrive on it and the
    /// server's announcements go to it.
    #[arg(long, value_name = "PORT", default_value_t = lockstep_protocol::DISCOVERY_PORT)]
    discovery_port: u16,
    /// Go on with the game a server that died was running, from its
    /// replay file: the bundles in it are played again by nobody (the
    /// players kept their worlds), the same file grows on, and the game
    /// waits for its players to reconnect. The game's settings (players,
    /// seed, tick rate, game and its settings, delay, hash interval) come
    /// from the file.
    /// Start it with the same --identity-dir and address, so the clients
    /// that keep trying find and trust it.
    #[arg(
        long,
        value_name = "REPLAY",
        conflicts_with_all = ["players", "seed", "tick_rate", "game", "balls", "settings", "input_delay", "hash_interval", "no_record"]
    )]
    resume: Option<PathBuf>,
    /// Seconds a resumed game waits for its players to reconnect; those
    /// still missing then are dropped and the others play on.
    #[arg(long, value_name = "SECS", default_value_t = crate::DEFAULT_RESUME_WAIT.as_secs(), requires = "resume")]
    resume_wait_secs: u64,
    #[command(flatten)]
    web: WebArgs,
    #[command(flatten)]
    link: lockstep_conditioner::LinkArgs,
}

/// The web door: the browser's page and its WebSocket, on TCP.
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Browsers")]
struct WebArgs {
    /// TCP port of the web door (the page at http://HOST:PORT/ and its
    /// WebSocket). Default: the number of the QUIC (UDP) port.
    #[arg(long, value_name = "PORT", conflicts_with = "no_web")]
    web_port: Option<u16>,
    /// Serve no browsers: no TCP port, no page, no WebSocket.
    #[arg(long)]
    no_web: bool,
    /// Directory of the browser's page (`make web` builds it). Default:
    /// `web` beside the directory of this executable (`target/web` for
    /// `target/debug/lockstep-server`).
    #[arg(
        long,
        value_name = "DIR",
        env = "LOCKSTEP_WEB_DIR",
        conflicts_with = "no_web"
    )]
    web_dir: Option<PathBuf>,
    /// Print the QR code of the page's LAN address even when the output
    /// is not a terminal (`make demo` does, for phones). It is printed for
    /// an address other devices can reach only.
    #[arg(long, conflicts_with = "no_web")]
    qr_code: bool,
}

impl WebArgs {
    fn dir(&self) -> PathBuf {
        self.web_dir.clone().unwrap_or_else(|| {
            std::env::current_exe()
                .ok()
                .and_then(|exe| Some(exe.parent()?.parent()?.join("web")))
                .unwrap_or_else(|| PathBuf::from("web"))
        })
    }
}

/// Attempts at a pair of free ports when the QUIC port is picked (port 0)
/// and the web door must have the same number: the UDP port the system
/// picks may be taken on TCP.
const PORT_PAIR_ATTEMPTS: usize = 20;

/// The QUIC endpoint and, unless `--no-web`, the web door on the same IP
/// and port number (or `--web-port`).
fn bind(
    args: &Args,
    identity: &Identity,
    link: &lockstep_conditioner::LinkConfig,
) -> anyhow::Result<(quinn::Endpoint, Option<WebDoor>)> {
    let dir = args.web.dir();
    let mut attempt = 0;
    loop {
        attempt += 1;
        let drop_timeout = Duration::from_millis(args.drop_timeout_ms);
        let endpoint = crate::endpoint(args.listen, identity, link, drop_timeout)?;
        if args.web.no_web {
            return Ok((endpoint, None));
        }
        let addr = endpoint.local_addr().context("reading the bound address")?;
        let web_addr = SocketAddr::new(addr.ip(), args.web.web_port.unwrap_or(addr.port()));
        match WebDoor::bind(web_addr, &dir) {
            Ok(door) => return Ok((endpoint, Some(door))),
            Err(crate::WebDoorError::Bind { .. })
                if args.listen.port() == 0
                    && args.web.web_port.is_none()
                    && attempt < PORT_PAIR_ATTEMPTS => {}
            Err(e) => {
                return Err(e)
                    .context("opening the web door (--web-port moves it, --no-web closes it)")
            }
        }
    }
}

/// The addresses a browser reaches the web door at: the bound address, or
/// for an unspecified one every non-loopback IPv4 address of this machine
/// (loopback if it has none).
fn browser_hosts(bound: IpAddr) -> Vec<IpAddr> {
    if !bound.is_unspecified() {
        return vec![bound];
    }
    let lan: Vec<IpAddr> = lockstep_protocol::lan::networks(None)
        .unwrap_or_default()
        .into_iter()
        .map(|network| network.addr)
        .filter(|addr| !addr.is_loopback())
        .map(IpAddr::V4)
        .collect();
    if lan.is_empty() {
        vec![IpAddr::V4(Ipv4Addr::LOCALHOST)]
    } else {
        lan
    }
}

/// `url` as a QR code of Unicode half blocks, light on dark so that
/// phones read it from a dark terminal.
fn qr_code(url: &str) -> Option<String> {
    use qrcode::render::unicode::Dense1x2;
    let code = qrcode::QrCode::new(url.as_bytes()).ok()?;
    Some(
        code.render::<Dense1x2>()
            .dark_color(Dense1x2::Light)
            .light_color(Dense1x2::Dark)
            .quiet_zone(true)
            .build(),
    )
}

/// The address a phone scans: the first one another device can reach
/// (not this machine's loopback), if any.
fn reachable(addrs: &[SocketAddr]) -> Option<SocketAddr> {
    addrs.iter().copied().find(|addr| !addr.ip().is_loopback())
}

/// Prints where browsers find the page, and a QR code of the first
/// address another device can reach when a person reads the output (or
/// `qr_code` asks for it); says so when only this machine can open it.
fn print_browser_urls(door: &WebDoor, qr_code_always: bool) -> anyhow::Result<()> {
    let addr = door
        .local_addr()
        .context("reading the web door's address")?;
    let addrs: Vec<SocketAddr> = browser_hosts(addr.ip())
        .into_iter()
        .map(|host| SocketAddr::new(host, addr.port()))
        .collect();
    for addr in &addrs {
        println!("browser url=http://{addr}/");
    }
    let lan = reachable(&addrs);
    if lan.is_none() {
        println!(
            "browser note: only this machine can open the page (the server listens on {}); \
             --listen 0.0.0.0:{} lets phones and other computers on the LAN join",
            addr.ip(),
            addr.port()
        );
    }
    if !door.has_page() {
        println!(
            "browser page not built: browsers can join through the WebSocket, but there is no \
             page to serve; run `make web` (or pass --web-dir DIR)"
        );
    }
    if qr_code_always || std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        if let Some(qr) = lan.and_then(|addr| qr_code(&format!("http://{addr}/"))) {
            println!("{qr}");
        }
    }
    Ok(())
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum DesyncAction {
    Continue,
    Stop,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Switch {
    On,
    Off,
}

fn parse_server_name(name: &str) -> Result<String, String> {
    lockstep_protocol::check_server_name(name)
        .map(|()| name.to_string())
        .map_err(|e| e.to_string())
}

/// This machine's host name, made fit to advertise: spaces become `-`,
/// cut to the longest name allowed; `lockstep` if it has none.
fn default_server_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("COMPUTERNAME").ok())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_default();
    let name: String = host
        .trim()
        .chars()
        .filter(|c| !c.is_control())
        .map(|c| if c.is_whitespace() { '-' } else { c })
        .take(lockstep_protocol::MAX_SERVER_NAME_CHARS)
        .collect();
    if name.is_empty() {
        "lockstep".into()
    } else {
        name
    }
}

fn default_identity_dir() -> PathBuf {
    match std::env::var_os("HOME") {
        Some(home) => PathBuf::from(home).join(".local/share/lockstep/server"),
        None => PathBuf::from(".lockstep-server"),
    }
}

/// The command line with `--game`'s help naming `games`, the first the
/// default.
fn command(games: &[&dyn HostedGame]) -> clap::Command {
    let default = games.first().map_or("", |game| game.name());
    Args::command().mut_arg("game", |arg| {
        arg.help(format!(
            "The game to host: {}, or any other game's name: a game this server was not \
             built with is relayed all the same, its --set pairs carried as given, and the \
             players' clients check it. Every client plays it; a client that does not have it \
             is refused [default: {default}]",
            describe_games(games)
        ))
    })
}

/// Runs `lockstep-server` with the process's arguments, hosting any of
/// `games`: what the binary's `main` calls. Exit status 1 with the error on
/// stderr when it fails.
pub fn main(games: &'static [&'static dyn HostedGame]) -> std::process::ExitCode {
    // One thread: the relay's work per packet is small, and a single thread
    // saves the cross-thread wake-ups between QUIC connection tasks and the
    // session (the 64-client relay bench spends ~15% less CPU; BENCHMARKS.md).
    let ran = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the runtime")
        .and_then(|runtime| runtime.block_on(run(games)));
    match ran {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!(
                "lockstep-server: {}",
                lockstep_protocol::error_chain(e.as_ref())
            );
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run(games: &'static [&'static dyn HostedGame]) -> anyhow::Result<()> {
    let args = Args::from_arg_matches(&command(games).get_matches()).unwrap_or_else(|e| e.exit());
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .init();
    // Read before anything binds: a replay that cannot be resumed is said
    // at once.
    let resume = args
        .resume
        .as_deref()
        .map(crate::ResumedGame::load)
        .transpose()?;
    let name = args
        .game
        .as_deref()
        .or(games.first().map(|game| game.name()));
    let name = name.unwrap_or_default();
    let settings: Vec<(String, String)> = args
        .balls
        .map(|balls| ("balls".to_string(), balls.to_string()))
        .into_iter()
        .chain(args.settings.iter().cloned())
        .collect();
    let (game, spec) = match find_game(games, name) {
        Ok(game) => {
            let spec = game
                .parse_settings(&settings)
                .map_err(|e| match args.balls {
                    Some(_) => anyhow::anyhow!("{e} (--balls N is --set balls=N)"),
                    None => anyhow::anyhow!("{e}"),
                })?;
            (Some(game), spec)
        }
        Err(unknown) => (None, game_without_code(name, settings, &unknown)?),
    };
    let identity =
        Identity::load_or_create(&args.identity_dir).context("loading the server identity")?;
    let link = args
        .link
        .to_config()
        .context("reading the --sim-* options")?;
    let (endpoint, web) = bind(&args, &identity, &link)?;
    let addr = endpoint.local_addr().context("reading the bound address")?;
    let fingerprint = identity.fingerprint();
    println!("listening on {addr} fingerprint={fingerprint}");
    println!(
        "verification code={}",
        lockstep_protocol::verification_code(&fingerprint)
    );
    if game.is_none() {
        println!("{}", without_game_line(&spec, games));
    }
    let advertise = match lockstep_protocol::fingerprint_bytes(&fingerprint) {
        Some(fingerprint) if !args.no_advertise => Some(AdvertiseOptions {
            name: args.name.clone().unwrap_or_else(default_server_name),
            fingerprint,
            interface: args.advertise_interface.clone(),
            discovery_port: args.discovery_port,
        }),
        _ => None,
    };
    if let Some(door) = &web {
        print_browser_urls(door, args.web.qr_code)?;
    }
    let hosting = match game {
        Some(game) => Config::new(game),
        None => Config::without_game(spec.clone()),
    };
    let config = Config {
        players: args.players,
        tick_rate: args.tick_rate,
        input_delay: args.input_delay,
        spec,
        seed: args.seed.unwrap_or_else(crate::clock::seed),
        drop_timeout: Duration::from_millis(args.drop_timeout_ms),
        laggard_tolerance: (args.laggard_ms > 0).then(|| Duration::from_millis(args.laggard_ms)),
        hash_interval: args.hash_interval,
        replay_dir: (!args.no_record).then(|| args.replay_dir.clone()),
        password: args.password.clone().filter(|p| !p.is_empty()),
        on_desync: match args.on_desync {
            DesyncAction::Continue => OnDesync::Continue,
            DesyncAction::Stop => OnDesync::Stop,
        },
        speed_control: args.speed_control == Switch::On,
        advertise,
        snapshot_secs: args.snapshot_secs,
        resume_wait: Duration::from_secs(args.resume_wait_secs),
        ..hosting
    };
    let config = match resume {
        Some(game) => {
            let header = game.header();
            println!(
                "resuming {} at tick {} ({} players, seed {})",
                game.path().display(),
                game.next_tick(),
                header.roster.len(),
                header.seed
            );
            let hosted = find_game(games, &header.spec.name).ok();
            if hosted.is_none() {
                println!(
                    "{} is a game this server was not built with: the players' clients check \
                     it",
                    header.spec.name
                );
            }
            Config {
                players: u8::try_from(header.roster.len()).unwrap_or(u8::MAX),
                tick_rate: header.tick_rate,
                input_delay: header.input_delay,
                game: hosted,
                spec: header.spec.clone(),
                self_test: hosted.map(|game| game.self_test()),
                seed: header.seed,
                hash_interval: header.hash_interval,
                replay_dir: game.path().parent().map(std::path::Path::to_path_buf),
                resume: Some(game),
                ..config
            }
        }
        None => config,
    };
    let (events_tx, mut events_rx) = tokio::sync::mpsc::unbounded_channel();
    let printer = tokio::spawn(async move {
        while let Some(event) = events_rx.recv().await {
            println!("{event}");
        }
    });
    crate::run(endpoint, web, config, Some(events_tx), shutdown_signal()).await;
    let _ = printer.await;
    Ok(())
}

/// The spec of a game this server was not built with (`--game NAME` for a
/// name not in its list): its settings as given, checked only for their
/// form; every player's client parses them with its own copy of the game.
fn game_without_code(
    name: &str,
    settings: Vec<(String, String)>,
    unknown: &UnknownGame,
) -> anyhow::Result<GameSpec> {
    // Not a name any game could have: the old answer, with the list.
    lockstep_protocol::check_game_name(name).map_err(|_| unknown.clone())?;
    let spec = GameSpec {
        name: name.to_string(),
        settings: Settings::Given(settings),
    };
    spec.check()
        .map_err(|e| anyhow::anyhow!("--game {name}: {e}"))?;
    Ok(spec)
}

/// The line saying the server hosts a game it was not built with, and
/// which games it knows, so a misspelt name shows at once.
fn without_game_line(spec: &GameSpec, games: &[&dyn HostedGame]) -> String {
    let known: Vec<&str> = games.iter().map(|game| game.name()).collect();
    format!(
        "hosting {}{}, a game this server was not built with (it knows {}): the players' \
         clients parse its settings and check its self-test",
        spec.name,
        match spec.settings.given_text() {
            text if text.is_empty() => String::new(),
            text => format!(" ({text})"),
        },
        known.join(", ")
    )
}

/// Completes on Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_well_formed() {
        super::Args::command().debug_assert();
    }

    #[test]
    fn a_phone_is_shown_an_address_it_can_reach_or_none() {
        let at = |addr: &str| addr.parse::<std::net::SocketAddr>().expect("an address");
        assert_eq!(super::reachable(&[at("127.0.0.1:7777")]), None);
        assert_eq!(super::reachable(&[]), None);
        let lan = [
            at("127.0.0.1:7777"),
            at("192.168.1.20:7777"),
            at("10.0.0.2:7777"),
        ];
        assert_eq!(super::reachable(&lan), Some(at("192.168.1.20:7777")));
    }

    #[test]
    fn the_help_of_game_lists_the_games_given_and_the_default() {
        let games = [crate::testing::TEST_GAME];
        let help = super::command(&games).render_long_help().to_string();
        let game = crate::testing::TEST_GAME;
        assert!(
            help.contains(&format!("{} ({})", game.name(), game.about())),
            "{help}"
        );
        assert!(
            help.contains(&format!("[default: {}]", game.name())),
            "{help}"
        );
    }
}
