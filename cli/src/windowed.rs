//! The windowed modes as every build of the binary offers them: playing a
//! networked game in a window, solo play, the server browser, the replay
//! window, the game loop lab and report pictures.
//!
//! The window crate (`lockstep-window`) that carries them out is linked
//! only with the `window` feature, so that a bot or a CI runner can build
//! the client without SDL2. A binary built without it parses the same
//! command line and answers each windowed mode with `NoWindow`, naming
//! what needed the window, instead of not knowing the command. This is
//! the only file that looks at the feature.

use lockstep_client::play::connect::ConnectOptions;
use lockstep_client::tools::report::ReportOptions;
use lockstep_client::tools::verify::Opened;
use lockstep_client::window_options::{
    BrowseOptions, Browsed, LabStart, SoloOptions, ViewOptions, WindowOptions,
};

use lockstep_client::games::Games;

/// A windowed mode asked of a client built without the `window` feature.
#[cfg(not(feature = "window"))]
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{0} needs a window, and this lockstep-client was built without one")]
pub struct NoWindow(
    /// What needed the window, with the headless alternative if there is
    /// one: "playing a replay (use --verify --headless)".
    pub &'static str,
);

/// Joins a server and plays in a window.
pub fn connect(
    games: &impl Games,
    options: ConnectOptions,
    window: WindowOptions,
) -> anyhow::Result<Vec<String>> {
    #[cfg(feature = "window")]
    {
        let window = lockstep_window::Window {
            games,
            options: window,
        };
        lockstep_client::play::connect::run(games, options, window)
    }
    #[cfg(not(feature = "window"))]
    {
        let _ = (games, options, window);
        Err(NoWindow("playing in a window (use --headless)").into())
    }
}

/// Plays alone against bots in a window.
pub fn solo(
    games: &impl Games,
    solo: SoloOptions,
    window: WindowOptions,
) -> anyhow::Result<Vec<String>> {
    #[cfg(feature = "window")]
    {
        lockstep_window::solo(games, solo, window)
    }
    #[cfg(not(feature = "window"))]
    {
        let _ = (games, solo, window);
        Err(NoWindow("solo play").into())
    }
}

/// Draws the picture of a replay into a PNG.
pub fn report(games: &impl Games, options: ReportOptions) -> anyhow::Result<Vec<String>> {
    #[cfg(feature = "window")]
    {
        lockstep_window::report(games, options)
    }
    #[cfg(not(feature = "window"))]
    {
        let _ = (games, options);
        Err(NoWindow("drawing a report picture").into())
    }
}

/// Runs the game loop lab.
pub fn lab(games: &impl Games, start: LabStart) -> anyhow::Result<Vec<String>> {
    #[cfg(feature = "window")]
    {
        lockstep_window::lab(games, start)
    }
    #[cfg(not(feature = "window"))]
    {
        let _ = (games, start);
        Err(NoWindow("the game loop lab").into())
    }
}

/// Shows the servers on the LAN until the player picks one.
pub fn browse(options: BrowseOptions) -> anyhow::Result<Browsed> {
    #[cfg(feature = "window")]
    {
        lockstep_window::browse(options)
    }
    #[cfg(not(feature = "window"))]
    {
        let _ = options;
        Err(
            NoWindow("the server browser (use `list`, then --join NAME or --connect HOST:PORT)")
                .into(),
        )
    }
}

/// Shows a replay in the replay window, checking it as it plays; what is
/// wrong with the file is said at once, as the window opens.
pub fn replay(
    games: &impl Games,
    opened: Opened,
    window: WindowOptions,
    view: ViewOptions,
) -> anyhow::Result<Vec<String>> {
    #[cfg(feature = "window")]
    {
        opened.warn();
        lockstep_window::replay(games, opened, window, view)
    }
    #[cfg(not(feature = "window"))]
    {
        let _ = (games, opened, window, view);
        Err(NoWindow("playing a replay (use --verify --headless)").into())
    }
}
