//! What the windowed modes are asked to do, as plain data every build
//! has: the binary parses the same command line with or without its
//! window, and the window crate (`lockstep-window`) carries these out.
//! A leaf: it names nothing of this crate that could name it back.

use std::path::PathBuf;
use std::time::Duration;

use lockstep_engine::timing::loops::Strategy;
use lockstep_protocol::Tick;

use crate::play::PlayOptions;

/// Window placement and capture options shared by every windowed mode.
#[derive(Debug, Clone, Default)]
pub struct WindowOptions {
    /// Title suffix: the player's name, `solo` or `replay FILE`. Each mode
    /// names its own window, so the command line leaves it empty.
    pub title: String,
    /// Top-left corner, if not centred.
    pub position: Option<(i32, i32)>,
    /// Initial size.
    pub size: (u32, u32),
    /// Leave once this many ticks have been simulated (solo play and
    /// replays; a networked game takes it from its [`PlayOptions`]).
    pub ticks: Option<u32>,
    /// Write a PNG of the window at `screenshot_tick`.
    pub screenshot: Option<PathBuf>,
    /// Tick at which to take the screenshot.
    pub screenshot_tick: u32,
    /// Drive the local player with a seeded bot instead of the keyboard.
    pub bot: Option<u64>,
    /// Wait for the display's vertical blank before showing a frame, so
    /// frames do not tear. It only limits presentation: ticks still follow
    /// the fixed-step clock.
    pub vsync: bool,
    /// Real time every frame of a networked game spends on top of drawing:
    /// a slow window on demand, to see its inputs still go on time.
    pub draw_cost: Duration,
    /// Take the screenshot in the lobby before this game (from 1) instead
    /// of at `screenshot_tick`: once the lobby shows the players needed
    /// (and, after a game, that game's scores), and before this client
    /// says it is ready.
    pub screenshot_lobby: Option<u32>,
    /// Take the screenshot once a networked game shows that the server is
    /// lost and it reconnects, instead of at `screenshot_tick`.
    pub screenshot_reconnecting: bool,
    /// Show the net graph from the start of a networked game (F3 toggles
    /// it).
    pub net_graph: bool,
}

impl WindowOptions {
    /// Whether this window's player joins ready (its Hello says so):
    /// one that says ready at once does, unless the first lobby is to be
    /// photographed first.
    #[must_use]
    pub fn joins_ready(&self, play: &PlayOptions) -> bool {
        play.auto_ready && self.screenshot_lobby != Some(1)
    }
}

/// Solo play options.
#[derive(Debug, Clone)]
pub struct SoloOptions {
    /// The game; `None` the first the binary offers.
    pub game: Option<String>,
    /// Its settings, KEY=VALUE.
    pub settings: Vec<(String, String)>,
    /// Bot opponents.
    pub bots: u8,
    /// World and bot seed.
    pub seed: u64,
    /// Ticks per second.
    pub tick_rate: u16,
    /// Flipcode's MAX_LOOPS guard.
    pub max_loops: u32,
    /// Record the game to this replay file.
    pub record: Option<PathBuf>,
}

/// How the replay window shows a replay.
#[derive(Debug, Clone, Copy)]
pub struct ViewOptions {
    /// Initial speed (clamped to x0.25..x16).
    pub speed: f64,
    /// Start at this tick.
    pub seek: Option<Tick>,
    /// Re-simulate as fast as possible and leave at the end.
    pub verify: bool,
}

/// How the game loop lab starts: the game, the first position of each
/// knob its keys turn, the world's seed, when to leave and what to
/// capture.
#[derive(Debug, Clone)]
pub struct LabStart {
    /// The loop strategy.
    pub strategy: Strategy,
    /// Ticks per second.
    pub tick_rate: u16,
    /// Frames per second the paced strategies wait for.
    pub target_fps: u16,
    /// The game; `None` the first the binary offers.
    pub game: Option<String>,
    /// Its settings, KEY=VALUE.
    pub settings: Vec<(String, String)>,
    /// Bot opponents.
    pub bots: u8,
    /// Real time each update costs on top of the simulation.
    pub tick_cost_ns: u64,
    /// Flipcode's MAX_LOOPS with this K; `None` starts with it off.
    pub max_loops: Option<u32>,
    /// The networked client's rule: no maximum step, no MAX_LOOPS, no
    /// discarding.
    pub networked: bool,
    /// Start with JGameLoopStudy's slow "7" on.
    pub spike: bool,
    /// World and bot seed.
    pub seed: u64,
    /// Leave after this many frames.
    pub frames: Option<u64>,
    /// Save a PNG of the window at `screenshot_frame`.
    pub screenshot: Option<PathBuf>,
    /// The frame (from 1) the screenshot shows; `None` is the last of
    /// `frames`, else [`DEFAULT_SCREENSHOT_FRAME`].
    pub screenshot_frame: Option<u64>,
    /// Window size.
    pub size: (u32, u32),
}

/// The frame a lab screenshot shows when neither its frame nor the number
/// of frames is given: two seconds in, when the chart has filled in.
pub const DEFAULT_SCREENSHOT_FRAME: u64 = 120;

/// What the server browser is asked to do.
#[derive(Debug, Clone)]
pub struct BrowseOptions {
    /// Where to look for servers.
    pub finder: crate::io::discovery::FinderOptions,
    /// The file the rows' trust is judged by.
    pub known_servers: PathBuf,
    /// The window.
    pub window: WindowOptions,
    /// Save the browser here once it lists a server (or after
    /// [`BROWSER_SCREENSHOT_WAIT`]), then leave.
    pub screenshot: Option<PathBuf>,
}

/// The longest the browser waits for a server before a `screenshot`.
pub const BROWSER_SCREENSHOT_WAIT: Duration = Duration::from_secs(5);

/// How the server browser ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Browsed {
    /// The player chose a server on the LAN.
    Server(crate::discovery::Found),
    /// The player typed an address.
    Address(String),
    /// The window was closed, or photographed; these lines end the run.
    Nothing(Vec<String>),
}
