//! The SDL2 screens of the lockstep client: the game window and the lobby
//! between games, solo play, the server browser, the replay window, the
//! game loop lab, and the report picture drawn into a PNG.
//!
//! # How it works
//!
//! - [`screens`] holds one file (or folder) per screen; each runs its own
//!   SDL2 loop and draws with [`draw`], which never decides anything: the
//!   renderer with its score strip, HUD and banner, the one drawing of
//!   every game's picture (each game shows itself as plain shapes through
//!   its [`lockstep_engine::View`], so the window holds no game), text,
//!   the players' colours, the strip charts the lab, the net graph (F3),
//!   the replay window's timeline and the report picture share, and
//!   screenshots.
//! - Window code generic over the game runs for the one a server, a
//!   replay or the command line names through the engine's
//!   [`Games`]/[`ForGame`], over the games the binary hands it.
//! - [`pacing`] paces the lab's frames.
//! - What a screen plays comes from the client library
//!   (`lockstep-client`): the networked game ([`lockstep_client::play`]),
//!   the server table, the replay checks. What each mode is asked to do
//!   is its plain data ([`lockstep_client::window_options`]); the
//!   functions here are the modes the binary calls.
#![forbid(unsafe_code)]

pub mod draw;
pub mod pacing;
pub mod screens;

use anyhow::Context;
use lockstep_client::io::link::NetClient;
use lockstep_client::play::connect::Frontend;
use lockstep_client::play::GameOutcome;
use lockstep_client::play::PlayOptions;
use lockstep_client::tools::report::ReportOptions;
use lockstep_client::tools::verify::Opened;
use lockstep_client::window_options::{
    BrowseOptions, Browsed, LabStart, SoloOptions, ViewOptions, WindowOptions,
    DEFAULT_SCREENSHOT_FRAME,
};
use lockstep_engine::final_line;
use lockstep_engine::replay::playback::{Playback, Verified};
use lockstep_protocol::Replay;

use lockstep_engine::games::{ForGame, Games, Playable};

/// Plays alone against bots in a window, whichever of `games` `solo`
/// names (the first by default); the stdout lines of its end.
pub fn solo(
    games: &impl Games,
    solo: SoloOptions,
    window: WindowOptions,
) -> anyhow::Result<Vec<String>> {
    /// One solo game, for whichever game it is.
    struct Solo {
        solo: SoloOptions,
        window: WindowOptions,
    }
    impl ForGame for Solo {
        type Output = anyhow::Result<GameOutcome>;
        fn run<G: Playable>(self) -> Self::Output {
            Ok(screens::solo::run::<G>(self.solo, self.window)?)
        }
    }
    let window = WindowOptions {
        title: "solo".into(),
        ..window
    };
    let name = chosen(games, solo.game.clone());
    let outcome = games.run(&name, Solo { solo, window })??;
    Ok(vec![final_line(outcome.tick, outcome.hash)])
}

/// The game called `game`, else the first of `games`.
fn chosen(games: &impl Games, game: Option<String>) -> String {
    let first = games.hosted().first().map(|game| game.name().to_string());
    game.or(first).unwrap_or_default()
}

/// `report`: draws the picture of a replay into a PNG (no display
/// needed, but SDL2 draws it); the line to print.
pub fn report(games: &impl Games, options: ReportOptions) -> anyhow::Result<Vec<String>> {
    screens::report::run(games, &options)
        .with_context(|| format!("drawing the report of {}", options.replay.display()))
}

/// Runs the game loop lab on whichever of `games` `start` names (the
/// first by default) until Esc or `start.frames`; its report line.
pub fn lab(games: &impl Games, start: LabStart) -> anyhow::Result<Vec<String>> {
    use screens::lab::{Knobs, LabOptions};

    /// The lab, for whichever game it plays.
    struct Lab(LabOptions);
    impl ForGame for Lab {
        type Output = anyhow::Result<Vec<String>>;
        fn run<G: Playable>(self) -> Self::Output {
            let mut options = self.0;
            if !G::VARIABLE_STEP {
                options.knobs = options.knobs.fixed_only(G::NAME)?;
            }
            Ok(vec![screens::lab::run::<G>(options)?.line()])
        }
    }

    let screenshot_frame = start
        .screenshot_frame
        .or(start.frames)
        .unwrap_or(DEFAULT_SCREENSHOT_FRAME);
    if let (Some(frames), Some(_)) = (start.frames, &start.screenshot) {
        if screenshot_frame > frames {
            anyhow::bail!(
                "--screenshot-frame {screenshot_frame} comes after the last frame \
                 (--frames {frames})"
            );
        }
    }
    let mut knobs = Knobs::new(
        start.strategy,
        start.tick_rate,
        start.target_fps,
        start.bots,
        start.max_loops,
    );
    knobs.settings.networked = start.networked;
    knobs.tick_cost_ns = start.tick_cost_ns;
    knobs.spike = start.spike;
    let options = LabOptions {
        knobs,
        seed: start.seed,
        settings: start.settings,
        frames: start.frames,
        screenshot: start.screenshot,
        screenshot_frame,
        window: WindowOptions {
            title: "game loop lab".into(),
            size: start.size,
            ..WindowOptions::default()
        },
    };
    games.run(&chosen(games, start.game), Lab(options))?
}

/// Shows the servers on the LAN in a window until the player picks one.
pub fn browse(options: BrowseOptions) -> anyhow::Result<Browsed> {
    screens::browser::run(options)
}

/// The window as a networked game's frontend: the lobby before each game,
/// then the game, titled with the player's name.
pub struct Window<'a, G: Games> {
    /// The games it shows.
    pub games: &'a G,
    /// The window.
    pub options: WindowOptions,
}

impl<G: Games> Frontend for Window<'_, G> {
    fn joins_ready(&self, play: &PlayOptions) -> bool {
        self.options.joins_ready(play)
    }

    fn play(
        self,
        net: NetClient,
        name: String,
        play: PlayOptions,
    ) -> anyhow::Result<Vec<GameOutcome>> {
        let window = WindowOptions {
            title: name,
            ..self.options
        };
        Ok(screens::game::run(self.games, net, window, play)?)
    }
}

/// Shows a replay file in the replay window, checking it against its
/// recorded hashes as it plays, as whichever of `games` it recorded: the
/// `verified ...` summary and the final line, or why it fails.
pub fn replay(
    games: &impl Games,
    opened: Opened,
    window: WindowOptions,
    view: ViewOptions,
) -> anyhow::Result<Vec<String>> {
    let note = opened.note.clone();
    let window = WindowOptions {
        title: format!("replay {}", opened.file.display()),
        ..window
    };
    opened.check(|name, recording| {
        games.run(
            name,
            ReplayWindow {
                recording,
                note,
                window,
                view,
            },
        )
    })
}

/// One replay shown as the game it recorded.
struct ReplayWindow {
    recording: Replay,
    note: Option<String>,
    window: WindowOptions,
    view: ViewOptions,
}

impl ForGame for ReplayWindow {
    type Output = anyhow::Result<Verified>;

    fn run<G: Playable>(self) -> Self::Output {
        let playback = Playback::<G>::new(self.recording)?;
        Ok(screens::replay::run(
            playback,
            self.note,
            self.window,
            self.view,
        )?)
    }
}
