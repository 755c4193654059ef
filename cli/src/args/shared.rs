//! The flags and value parsers that joining and the commands share: the
//! window's, the LAN discovery's, and the small value types.

use std::path::PathBuf;
use std::time::Duration;

use lockstep_client::io::discovery::FinderOptions;
use lockstep_client::window_options::WindowOptions;

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

/// The window of every windowed mode: its place, size, end and
/// screenshot.
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

/// `X,Y`.
pub(crate) fn parse_pair<T: std::str::FromStr>(s: &str) -> Result<(T, T), String> {
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
pub(crate) fn parse_phase(s: &str) -> Result<&'static str, String> {
    let phases = crate::phases();
    phases
        .iter()
        .copied()
        .find(|&phase| phase == s)
        .ok_or_else(|| format!("no phase {s:?}; the phases are {}", phases.join(", ")))
}

/// The label of a traced value, as `--inject-desync-value` names it: 1 to
/// 64 printable characters without spaces. Which labels a game traces is
/// known only as it runs: a label it never traces changes nothing, and
/// no desync follows.
pub(crate) fn parse_label(s: &str) -> Result<&'static str, String> {
    let fits = (1..=64).contains(&s.chars().count());
    if !fits || s.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "{s:?} is not a trace label: 1 to 64 characters, no spaces"
        ));
    }
    // Parsed once per process, and kept for its whole life.
    Ok(Box::leak(s.to_string().into_boxed_str()))
}

/// `WxH`, each side at least 64 pixels.
pub(crate) fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let (w, h) = parse_pair::<u32>(&s.replace('x', ","))?;
    if w < 64 || h < 64 {
        return Err(format!("window size {w}x{h} is too small (at least 64x64)"));
    }
    Ok((w, h))
}
