//! `lockstep-client lab`: the game loop lab. Solo play of any game (you
//! against bots) driven by any loop strategy of
//! [`lockstep_engine::timing::loops`], switched at run time, with the numbers and a strip
//! chart that show each loop's behaviour and failure modes.
//!
//! # How it works
//!
//! Each frame reads the clock once and hands the reading to the
//! [`Loop`]; the updates it answers with are run on the world, each
//! followed by the artificial tick cost if one is set. An update as long
//! as the world's tick is the game's own step; any other is a step by its
//! measured dt
//! ([`Game::step_variable`](lockstep_engine::Game::step_variable)), so
//! variable steps really step variably. A game that cannot step so is
//! never asked to: its [`Knobs`] take no variable-step strategy, and
//! restart its world when the tick rate changes. The world is drawn
//! through the game's view at the loop's alpha, JGameLoopStudy's slow "7"
//! is slept out while the counter shows 7, the panel and chart are drawn,
//! and the frame waits for the strategy's deadline through the
//! [`Pacer`]. Keys change the [`Knobs`] between frames.
//!
//! One thing the lab adds that no loop of the seeds has: when a frame's
//! updates have taken [`UPDATE_BUDGET`], it stops asking for more and
//! draws. Without it, a spiral of death would freeze the window for good
//! and no key could end it; with it, the spiral shows as the pending time
//! growing frame after frame, as the accumulator keeps every tick it was
//! owed.

mod chart;
mod history;
mod keys;
mod knobs;
mod panel;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use lockstep_engine::games::Playable;
use lockstep_engine::solo::SoloGame;
use lockstep_engine::timing::loops::{Loop, Update};
use lockstep_engine::{Bots, FixedStepOnly, Setup};
use lockstep_protocol::Input;
use sdl2::pixels::Color;
use sdl2::rect::Rect;
use sdl2::render::WindowCanvas;

use self::history::{FrameHistory, FrameSample};
use crate::draw::picture::Roster;
use crate::draw::render::Renderer;
use crate::draw::text::{text_size, GLYPH, PAD};
use crate::pacing::Pacer;
use crate::screens::screen::{Screen, WindowError};
use lockstep_client::io::clock;
use lockstep_client::window_options::WindowOptions;

pub use chart::{FRAME_BAR, STEP_BAR};
pub use knobs::{Change, Command, Effect, Knobs, VariableStepNeeded};

/// Most real time a frame spends on updates before it draws anyway: a
/// quarter of a second keeps the window answering keys during a spiral of
/// death.
pub const UPDATE_BUDGET: Duration = Duration::from_millis(250);

/// JGameLoopStudy's slow frame: "when it gets to display the sprite for 7 it
/// will sleep for 50 milliseconds".
const SLOW_SEVEN: Duration = Duration::from_millis(50);

/// Real time the panel's figures are averaged over.
const RECENT_NS: u64 = 1_000_000_000;

/// Height of the strip chart, in pixels at text size 1.
const CHART_HEIGHT: u32 = 220;

/// What to run the lab with.
#[derive(Debug, Clone)]
pub struct LabOptions {
    /// The knobs at start.
    pub knobs: Knobs,
    /// World and bot seed.
    pub seed: u64,
    /// The game's settings.
    pub settings: Vec<(String, String)>,
    /// Leave after this many frames.
    pub frames: Option<u64>,
    /// Save a PNG of the window at frame `screenshot_frame`.
    pub screenshot: Option<PathBuf>,
    /// The frame (from 1) the screenshot shows.
    pub screenshot_frame: u64,
    /// Title, size and position of the window.
    pub window: WindowOptions,
}

/// How a lab session went, for the last line of stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LabReport {
    /// Frames drawn.
    pub frames: u64,
    /// Real time the loop saw.
    pub real_ns: u64,
    /// Game time simulated.
    pub game_ns: u64,
    /// Real time thrown away.
    pub discarded_ns: u64,
    /// Real time still waiting in the accumulator at the end.
    pub pending_ns: u64,
    /// Most updates in one frame.
    pub max_steps: u32,
}

impl LabReport {
    /// `lab frames=N real_ms=R game_ms=G discarded_ms=D pending_ms=P
    /// max_steps=K`.
    pub fn line(&self) -> String {
        let ms = |ns: u64| ns / 1_000_000;
        format!(
            "lab frames={} real_ms={} game_ms={} discarded_ms={} pending_ms={} max_steps={}",
            self.frames,
            ms(self.real_ns),
            ms(self.game_ns),
            ms(self.discarded_ns),
            ms(self.pending_ns),
            self.max_steps
        )
    }
}

/// Where the lab puts things in a window of `output` pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LabLayout {
    /// The arena, top left.
    pub arena: Rect,
    /// The strip chart, across the bottom: as wide as possible, so each
    /// frame's bar is several pixels wide.
    pub chart: Rect,
    /// The panel, right of the arena.
    pub panel: Rect,
    /// Text magnification.
    pub text_size: i32,
}

/// The lab's layout for a window of `output` pixels.
pub fn layout(output: (u32, u32)) -> LabLayout {
    let (width, height) = output;
    let size = text_size(height);
    let panel_width = ((panel::COLUMNS as i32 * GLYPH + 2 * PAD) * size) as u32;
    let panel_width = panel_width.min(width / 2);
    let chart_height = (CHART_HEIGHT * size as u32).min(height / 2);
    let (left_width, top_height) = (width - panel_width, height - chart_height);
    LabLayout {
        arena: Rect::new(0, 0, left_width, top_height),
        chart: Rect::new(0, top_height as i32, width, chart_height),
        panel: Rect::new(left_width as i32, 0, panel_width, top_height),
        text_size: size,
    }
}

/// The world the loops drive: solo play's game (you and the bots), its
/// roster as the renderer shows it, and the tick it was started with.
struct LabGame<G: Playable> {
    solo: SoloGame<G, Bots<G>>,
    roster: Roster,
    /// Game time of the game's own step: an update this long is one.
    tick_ns: u64,
}

impl<G: Playable> LabGame<G> {
    fn new(seed: u64, settings: &G::Settings, knobs: &Knobs) -> LabGame<G> {
        let setup = Setup {
            seed,
            tick_rate: knobs.tick_rate,
            settings: settings.clone(),
            players: Vec::new(),
        };
        let opponents = SoloGame::<G, Bots<G>>::opponent_ids(knobs.bots);
        let solo = SoloGame::new(setup, knobs.bots, "you", Bots::new(seed, &opponents));
        let roster = Roster {
            players: solo.roster.clone(),
            me: Some(SoloGame::<G, Bots<G>>::ME),
        };
        LabGame {
            solo,
            roster,
            tick_ns: knobs.settings.tick_ns,
        }
    }

    /// One update: the game's own step when it lasts the world's tick,
    /// else a step by its measured time (outside the determinism
    /// contract, which costs nothing in solo play).
    fn update(&mut self, update: Update, mine: Input) -> Result<(), FixedStepOnly> {
        if update.dt_ns == self.tick_ns {
            self.solo.tick(mine);
            return Ok(());
        }
        let bundle = self.solo.next_bundle(mine);
        self.solo.previous.clone_from(&self.solo.current);
        self.solo
            .current
            .step_variable(&bundle.inputs, update.dt_secs())
    }
}

/// Runs the lab on the game `G` until Esc, the window is closed, or
/// `options.frames`.
pub fn run<G: Playable>(options: LabOptions) -> Result<LabReport, WindowError> {
    let settings = G::parse_settings(&options.settings).map_err(WindowError::Settings)?;
    let mut screen = Screen::open(&options.window)?;
    let mut knobs = options.knobs;
    let mut game = LabGame::<G>::new(options.seed, &settings, &knobs);
    let mut history = FrameHistory::new();
    let mut pacer = Pacer::new();
    let mut screenshot = options.screenshot.clone();
    let start = clock::now();
    let mut lp = Loop::new(knobs.settings, 0);
    let mut report = LabReport {
        frames: 0,
        real_ns: 0,
        game_ns: 0,
        discarded_ns: 0,
        pending_ns: 0,
        max_steps: 0,
    };
    loop {
        let frame_start = clock::now();
        let deadline = lp.begin_frame(nanos_between(start, frame_start));
        let game_before = lp.game_ns();
        let mut cut_short = false;
        while let Some(update) = lp.next_update() {
            game.update(update, screen.sample())?;
            if knobs.tick_cost_ns > 0 {
                std::thread::sleep(Duration::from_nanos(knobs.tick_cost_ns));
            }
            if clock::since(frame_start) >= UPDATE_BUDGET {
                cut_short = true;
                break;
            }
        }
        let end = lp.end_frame();

        // IndependentTickRun: keys turn the knobs between frames.
        let pumped = screen.pump();
        let mut rules_changed = false;
        for command in pumped.keys.into_iter().filter_map(keys::command) {
            match knobs.apply(command) {
                Effect::Rules => rules_changed = true,
                Effect::World => {
                    game = LabGame::new(options.seed, &settings, &knobs);
                    rules_changed = true;
                }
                Effect::Load | Effect::Refused => {}
            }
        }

        let counter = seed_004_counter(lp.game_ns());
        let readout = panel::Readout {
            recent: history.summary(RECENT_NS),
            game_ns: lp.game_ns(),
            real_ns: lp.real_ns(),
            discarded_ns: lp.discarded_ns(),
            lag_ns: lp.lag_ns(),
            steps: end.steps,
            counter,
            cut_short,
        };
        draw(
            &mut screen.canvas,
            &game,
            lp.draw_alpha(&end),
            &knobs,
            &history,
            &readout,
        )
        .map_err(WindowError::Sdl)?;
        report.frames += 1;
        if report.frames >= options.screenshot_frame {
            if let Some(path) = screenshot.take() {
                crate::draw::screenshot::save_png(&screen.canvas, &path)?;
            }
        }
        screen.present();

        let paced = deadline.map(|ns| pacer.wait_until(start + Duration::from_nanos(ns)));
        history.push(FrameSample {
            frame_ns: nanos_between(frame_start, clock::now()),
            steps: end.steps,
            game_ns: lp.game_ns() - game_before,
            discarded_ns: end.discarded_ns,
            paced,
        });
        report.max_steps = report.max_steps.max(end.steps);
        if rules_changed {
            lp.set_settings(knobs.settings);
        }
        let finished = options.frames.is_some_and(|n| report.frames >= n);
        if pumped.quit || finished {
            report.real_ns = lp.real_ns();
            report.game_ns = lp.game_ns();
            report.discarded_ns = lp.discarded_ns();
            report.pending_ns = lp.lag_ns();
            return Ok(report);
        }
    }
}

/// Draws a frame: the world at `alpha` in its corner, JGameLoopStudy's slow "7"
/// if it is due, then the chart and the panel. Does not present.
fn draw<G: Playable>(
    canvas: &mut WindowCanvas,
    game: &LabGame<G>,
    alpha: f32,
    knobs: &Knobs,
    history: &FrameHistory,
    readout: &panel::Readout,
) -> Result<(), String> {
    let places = layout(canvas.output_size()?);
    canvas.set_draw_color(Color::RGB(0, 0, 0));
    canvas.clear();
    let (previous, current) = (&game.solo.previous, &game.solo.current);
    Renderer::draw_world(canvas, places.arena, previous, current, alpha, &game.roster)?;
    if knobs.spike && readout.counter == 7 {
        std::thread::sleep(SLOW_SEVEN);
    }
    let size = places.text_size;
    chart::draw(canvas, places.chart, size, history, &knobs.settings)?;
    panel::draw(canvas, places.panel, size, &panel::lines(knobs, readout))
}

/// JGameLoopStudy's counter: 1 to 10, one step per second of game time.
fn seed_004_counter(game_ns: u64) -> u32 {
    (game_ns / 1_000_000_000 % 10) as u32 + 1
}

/// Nanoseconds from `earlier` to `later`, saturated.
fn nanos_between(earlier: Instant, later: Instant) -> u64 {
    u64::try_from(later.saturating_duration_since(earlier).as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_counter_counts_seconds_of_game_time_from_1_to_10() {
        assert_eq!(seed_004_counter(0), 1);
        assert_eq!(seed_004_counter(6_999_999_999), 7);
        assert_eq!(seed_004_counter(9_500_000_000), 10);
        assert_eq!(seed_004_counter(10_000_000_000), 1);
    }

    #[test]
    fn panels_and_arena_share_the_window_without_overlapping() {
        let places = layout((1280, 720));
        assert_eq!(places.text_size, 1);
        assert!(!places.arena.has_intersection(places.chart));
        assert!(!places.arena.has_intersection(places.panel));
        assert!(!places.chart.has_intersection(places.panel));
        assert_eq!(places.arena.width() + places.panel.width(), 1280);
        assert_eq!(places.arena.height() + places.chart.height(), 720);
        assert_eq!(places.chart.width(), 1280);
    }

    #[test]
    fn the_report_line_is_in_milliseconds() {
        let report = LabReport {
            frames: 3,
            real_ns: 50_400_000,
            game_ns: 33_333_334,
            discarded_ns: 0,
            pending_ns: 16_999_999,
            max_steps: 2,
        };
        assert_eq!(
            report.line(),
            "lab frames=3 real_ms=50 game_ms=33 discarded_ms=0 pending_ms=16 max_steps=2"
        );
    }
}
