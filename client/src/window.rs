//! The windowed frontend: SDL2 events, keyboard and game controllers, the
//! fixed-step loop of flipcode, and drawing with interpolation.
//!
//! Every frame is flipcode's loop: run the ticks that are due (networked:
//! only those whose bundle is here), then the IndependentTickRun (events,
//! HUD figures), then draw `previous`→`current` at alpha.

use std::time::{Duration, Instant};

use lockstep_engine::replay::recorder::solo_header;
use lockstep_engine::solo::SoloGame;
use lockstep_engine::timing::accumulator::{FixedStep, Policy};
use lockstep_engine::Setup;
use lockstep_protocol::{Buttons, Input, Percent, Start};
use lockstep_sim::bot::{Bot, Bots};
use lockstep_sim::World;
use sdl2::controller::{Axis, Button, GameController};
use sdl2::event::{Event, WindowEvent};
use sdl2::keyboard::{KeyboardState, Keycode, Scancode};

use crate::clock;
use crate::games::{ClientGame, ForGame, Games};
use crate::lobby_screen::{LastScores, LobbyView};
use crate::net::{NetClient, NetEvent};
use crate::net_graph::NetGraph;
use crate::notice::Notice;
use crate::pacing::Pacer;
use crate::play::{NetPlay, PlayOptions};
use crate::recording::FileRecorder;
use crate::render::{Hud, Renderer, Roster};
use crate::window_modes::{SoloOptions, WindowOptions};
use crate::{GameOutcome, PlayError};

/// Frames per second drawn at most: the loop sleeps the rest of the frame
/// instead of spinning, since vsync is off by default.
const MAX_FPS: u32 = 120;

/// Frames per second drawn at most with `--vsync`. Presenting then waits
/// for the display, which sets the frame rate; this limit only keeps the
/// loop from spinning where the driver ignores vsync. It is at or above
/// the refresh rate of common displays (up to 360 Hz), so it never holds
/// back a frame the display could show.
const MAX_FPS_VSYNC: u32 = 360;

/// Why the windowed client stopped.
#[derive(Debug, thiserror::Error)]
pub enum WindowError {
    /// SDL2 could not set up the window or renderer.
    #[error("cannot open a window: {0}")]
    Sdl(String),
    /// The game ended abnormally.
    #[error(transparent)]
    Play(#[from] PlayError),
    /// The recording could not be started.
    #[error(transparent)]
    Record(#[from] lockstep_engine::replay::playback::PlaybackError),
    /// The screenshot could not be written.
    #[error(transparent)]
    Screenshot(#[from] crate::screenshot::ScreenshotError),
}

/// An SDL2 window with its event pump, game controller, renderer and
/// FPS/UPS meters: what every windowed mode needs.
pub(crate) struct Screen {
    pub(crate) canvas: sdl2::render::WindowCanvas,
    events: sdl2::EventPump,
    controllers: sdl2::GameControllerSubsystem,
    pad: Option<GameController>,
    renderer: Renderer,
    pacer: Pacer,
    /// The shortest frame: one over [`MAX_FPS`] or [`MAX_FPS_VSYNC`].
    min_frame: Duration,
    pub(crate) frames: RateMeter,
    pub(crate) ticks: RateMeter,
}

/// What the window's events asked for since the last frame.
#[derive(Debug, Default)]
pub(crate) struct Pumped {
    /// Esc or the window was closed.
    pub(crate) quit: bool,
    /// Other keys pressed, in order.
    pub(crate) keys: Vec<Keycode>,
    /// Text typed (the server browser's address field).
    pub(crate) text: Vec<String>,
    /// Where the left mouse button was pressed, in window pixels.
    pub(crate) clicks: Vec<(i32, i32)>,
    /// Controller buttons pressed (the server browser's D-pad and A).
    pub(crate) buttons: Vec<Button>,
    /// Where the mouse moved with the left button held (the replay
    /// timeline's scrubbing), in window pixels.
    pub(crate) drags: Vec<(i32, i32)>,
}

impl Screen {
    pub(crate) fn open(options: &WindowOptions) -> Result<Screen, WindowError> {
        let sdl = sdl2::init().map_err(WindowError::Sdl)?;
        let video = sdl.video().map_err(WindowError::Sdl)?;
        let controllers = sdl.game_controller().map_err(WindowError::Sdl)?;
        let mut builder = video.window(
            &format!("lockstep — {}", options.title),
            options.size.0,
            options.size.1,
        );
        builder.resizable();
        match options.position {
            Some((x, y)) => builder.position(x, y),
            None => builder.position_centered(),
        };
        let window = builder
            .build()
            .map_err(|e| WindowError::Sdl(e.to_string()))?;
        let mut canvas = window.into_canvas();
        if options.vsync {
            canvas = canvas.present_vsync();
        }
        let canvas = canvas
            .build()
            .map_err(|e| WindowError::Sdl(e.to_string()))?;
        let max_fps = if options.vsync {
            if !offers_vsync(&canvas) {
                tracing::warn!(
                    renderer = canvas.info().name,
                    "vsync was asked for but this renderer does not offer it; frames are shown \
                     unsynchronised"
                );
            }
            MAX_FPS_VSYNC
        } else {
            MAX_FPS
        };
        let events = sdl.event_pump().map_err(WindowError::Sdl)?;
        Ok(Screen {
            canvas,
            events,
            controllers,
            pad: None,
            renderer: Renderer::new(),
            pacer: Pacer::new(),
            min_frame: Duration::from_secs(1) / max_fps,
            frames: RateMeter::default(),
            ticks: RateMeter::default(),
        })
    }

    /// Handles window events: controllers come and go here; quitting and
    /// key presses are returned.
    pub(crate) fn pump(&mut self) -> Pumped {
        let mut pumped = Pumped::default();
        for event in self.events.poll_iter() {
            match event {
                Event::Quit { .. }
                | Event::KeyDown {
                    keycode: Some(Keycode::Escape),
                    ..
                } => pumped.quit = true,
                Event::KeyDown {
                    keycode: Some(key), ..
                } => pumped.keys.push(key),
                Event::ControllerDeviceAdded { which, .. } if self.pad.is_none() => {
                    self.pad = self.controllers.open(which).ok();
                }
                Event::ControllerDeviceRemoved { .. } => self.pad = None,
                Event::TextInput { text, .. } => pumped.text.push(text),
                Event::MouseButtonDown {
                    mouse_btn: sdl2::mouse::MouseButton::Left,
                    x,
                    y,
                    ..
                } => pumped.clicks.push((x, y)),
                Event::MouseMotion {
                    mousestate, x, y, ..
                } if mousestate.left() => pumped.drags.push((x, y)),
                Event::ControllerButtonDown { button, .. } => pumped.buttons.push(button),
                Event::Window {
                    win_event: WindowEvent::SizeChanged(..),
                    ..
                } => {}
                _ => {}
            }
        }
        pumped
    }

    /// Samples the keyboard and the controller into one input.
    pub(crate) fn sample(&self) -> Input {
        let keys = KeyboardState::new(&self.events);
        let mut buttons = Buttons::default();
        let held = |codes: &[Scancode]| codes.iter().any(|&c| keys.is_scancode_pressed(c));
        let map = [
            (Buttons::UP, [Scancode::W, Scancode::Up]),
            (Buttons::DOWN, [Scancode::S, Scancode::Down]),
            (Buttons::LEFT, [Scancode::A, Scancode::Left]),
            (Buttons::RIGHT, [Scancode::D, Scancode::Right]),
            (Buttons::BOOST, [Scancode::Space, Scancode::LShift]),
        ];
        for (button, codes) in map {
            if held(&codes) {
                buttons = buttons.with(button);
            }
        }
        let mut axes = None;
        if let Some(pad) = &self.pad {
            let pad_map = [
                (Buttons::UP, Button::DPadUp),
                (Buttons::DOWN, Button::DPadDown),
                (Buttons::LEFT, Button::DPadLeft),
                (Buttons::RIGHT, Button::DPadRight),
                (Buttons::BOOST, Button::A),
            ];
            for (button, pad_button) in pad_map {
                if pad.button(pad_button) {
                    buttons = buttons.with(button);
                }
            }
            axes = stick_axes(pad.axis(Axis::LeftX), pad.axis(Axis::LeftY));
        }
        Input { buttons, axes }
    }

    pub(crate) fn draw<G: ClientGame>(
        &mut self,
        previous: &G,
        current: &G,
        alpha: f32,
        roster: &Roster,
        hud: &Hud,
    ) -> Result<(), WindowError> {
        self.renderer
            .draw(&mut self.canvas, previous, current, alpha, roster, hud)
            .map_err(WindowError::Sdl)
    }

    pub(crate) fn present(&mut self) {
        self.canvas.present();
        self.frames.add(1);
    }

    /// Waits out the rest of a frame started at `frame_start` (at most
    /// [`MAX_FPS`] frames a second, [`MAX_FPS_VSYNC`] with vsync), with
    /// the lab's pacer: it sleeps to a learned margin before the deadline,
    /// then yields. Ticks never depend on it: they follow the fixed-step
    /// clock whatever the frame rate.
    pub(crate) fn pace(&mut self, frame_start: Instant) {
        self.pacer.wait_until(frame_start + self.min_frame);
    }
}

impl Drop for Screen {
    /// SDL2_gfx keeps the glyph textures of its font in one table for the
    /// whole process, made by the first renderer that drew text and never
    /// checked again: a second window (the game after the server browser)
    /// would draw with textures of a destroyed renderer, and fail. Emptying
    /// the table while this renderer still lives lets the next one fill it.
    fn drop(&mut self) {
        sdl2::gfx::primitives::set_font(None, 0, 0);
    }
}

/// Whether the renderer says it waits for the display's vertical blank
/// when presenting.
fn offers_vsync(canvas: &sdl2::render::WindowCanvas) -> bool {
    let vsync = sdl2::sys::SDL_RendererFlags::SDL_RENDERER_PRESENTVSYNC as u32;
    canvas.info().flags & vsync != 0
}

/// Left-stick deflection quantised to the wire's `i8` axes, or `None`
/// inside the dead zone (so the buttons and D-pad keep working).
fn stick_axes(x: i16, y: i16) -> Option<[i8; 2]> {
    /// About 25% of full deflection: typical stick drift stays below it.
    const DEAD_ZONE: i32 = 8000;
    let (x, y) = (i32::from(x), i32::from(y));
    if x * x + y * y < DEAD_ZONE * DEAD_ZONE {
        return None;
    }
    let quantise = |v: i32| (v * 127 / 32767).clamp(-127, 127) as i8;
    Some([quantise(x), quantise(y)])
}

/// The time of one frame at `fps` frames a second; `None` before the
/// rate is known.
fn frame_time(fps: f32) -> Option<Duration> {
    (fps > 0.0).then(|| Duration::from_secs_f32(1.0 / fps))
}

/// Events per second over the last half second (FPS, UPS).
#[derive(Debug)]
pub(crate) struct RateMeter {
    count: u32,
    since: Instant,
    pub(crate) rate: f32,
}

impl Default for RateMeter {
    fn default() -> Self {
        RateMeter {
            count: 0,
            since: clock::now(),
            rate: 0.0,
        }
    }
}

impl RateMeter {
    pub(crate) fn add(&mut self, n: u32) {
        self.count += n;
        let elapsed = clock::since(self.since);
        if elapsed >= Duration::from_millis(500) {
            self.rate = self.count as f32 / elapsed.as_secs_f32();
            self.count = 0;
            self.since = clock::now();
        }
    }
}

/// Takes the screenshot if this frame shows the requested tick (unless
/// it is to show a lobby, or the reconnection banner).
pub(crate) fn capture(
    screen: &Screen,
    options: &mut WindowOptions,
    tick: u32,
) -> Result<(), WindowError> {
    if options.screenshot_lobby.is_none()
        && !options.screenshot_reconnecting
        && tick >= options.screenshot_tick
    {
        if let Some(path) = options.screenshot.take() {
            crate::screenshot::save_png(&screen.canvas, &path)?;
        }
    }
    Ok(())
}

/// Plays networked games in a window: the lobby screen until a game
/// starts, the game until `ticks` (or Esc), and, while games of
/// `play_options.games` remain, the lobby again with the last game's
/// scores. How each game ended, in order.
pub fn run_networked(
    games: &impl Games,
    mut net: NetClient,
    mut options: WindowOptions,
    play_options: PlayOptions,
) -> Result<Vec<GameOutcome>, WindowError> {
    let mut screen = Screen::open(&options)?;
    let mut view = LobbyView {
        ready: options.joins_ready(&play_options),
        ..LobbyView::default()
    };
    let mut outcomes = Vec::new();
    for game in 1..=play_options.games.max(1) {
        let Some((start, started_at, snapshot)) = wait_in_lobby(
            games,
            &mut screen,
            &net,
            &mut view,
            &mut options,
            game,
            &play_options,
        )?
        else {
            net.leave();
            if outcomes.is_empty() {
                return Err(PlayError::Lost("left before the game started".into()).into());
            }
            return Ok(outcomes);
        };
        let name = start.spec.name.clone();
        let one = WindowGame {
            screen: &mut screen,
            options: &mut options,
            net,
            start,
            at: started_at,
            snapshot,
            play_options: play_options.for_game(game),
            last: play_options.is_last(game),
        };
        let (outcome, next) = games.run(&name, one).map_err(PlayError::from)??;
        outcomes.push(outcome);
        let Some((next, last)) = next else {
            return Ok(outcomes);
        };
        view.last = Some(last);
        view.ready = false;
        view.lobby = None;
        net = next;
    }
    Ok(outcomes)
}

/// One game of a series in the window, whatever the game.
struct WindowGame<'a> {
    screen: &'a mut Screen,
    options: &'a mut WindowOptions,
    net: NetClient,
    start: Start,
    at: Instant,
    snapshot: Option<Vec<u8>>,
    play_options: PlayOptions,
    /// The last of the series: leave after it.
    last: bool,
}

impl ForGame for WindowGame<'_> {
    /// How the game ended; while the series goes on, the connection for
    /// the next game and this one's scores for the lobby.
    type Output = Result<(GameOutcome, Option<(NetClient, LastScores)>), WindowError>;

    fn run<G: ClientGame>(self) -> Self::Output {
        let play = NetPlay::<G>::start(
            self.net,
            &self.start,
            self.at,
            self.snapshot,
            self.play_options,
        )?;
        let (play, frame, finished) = play_in_window(self.screen, play, self.options)?;
        if !finished || self.last {
            return Ok((play.finish(frame), None));
        }
        let roster = play.game.roster.clone();
        let (next, outcome, world) = play.finish_game(frame);
        let last = LastScores {
            tick: world.tick().0,
            scores: world
                .scores()
                .into_iter()
                .map(|(player, score)| {
                    let name = roster
                        .iter()
                        .find(|(id, _)| *id == player)
                        .map_or_else(|| format!("P{player}"), |(_, n)| n.clone());
                    (player, name, score)
                })
                .collect(),
        };
        Ok((outcome, Some((next, last))))
    }
}

/// Shows the lobby until the server starts game `game`; `None` when the
/// player quit. R, Space, a click on the button or the controller's A
/// toggle ready; a player who says ready at once (a bot, `--ready`) says so
/// in every lobby, after the lobby screenshot if one is asked for.
fn wait_in_lobby(
    games: &impl Games,
    screen: &mut Screen,
    net: &NetClient,
    view: &mut LobbyView,
    options: &mut WindowOptions,
    game: u32,
    play_options: &PlayOptions,
) -> Result<Option<crate::net::Started>, WindowError> {
    let shot_here = options.screenshot_lobby == Some(game) && options.screenshot.is_some();
    // Whether this client still has to say it is ready by itself in this
    // lobby: after a game everyone starts not ready; before the first, the
    // Hello said it unless a screenshot had to come first.
    let mut auto_ready_due = play_options.auto_ready && (game > 1 || !view.ready);
    loop {
        let frame_start = clock::now();
        let pumped = screen.pump();
        if pumped.quit {
            return Ok(None);
        }
        let mut toggle = pumped
            .keys
            .iter()
            .any(|key| matches!(*key, Keycode::R | Keycode::Space | Keycode::Return))
            || pumped.buttons.contains(&Button::A);
        let rows = view.lobby.as_ref().map_or(0, |l| l.players.len());
        let output = screen.canvas.output_size().map_err(WindowError::Sdl)?;
        toggle |= pumped
            .clicks
            .iter()
            .any(|&(x, y)| crate::lobby_screen::hits_button(output, rows, x, y));
        while let Ok(event) = net.events().try_recv() {
            match event {
                NetEvent::Started {
                    start,
                    at,
                    snapshot,
                } => return Ok(Some((start, at, snapshot))),
                NetEvent::Welcome {
                    player,
                    first_use,
                    fingerprint,
                    ..
                } => {
                    if let Some(first_use) = first_use {
                        play_options.notices.say(Notice::FirstUse(first_use));
                    }
                    view.me = Some(player);
                    view.code = fingerprint.map(|f| lockstep_protocol::verification_code(&f));
                }
                NetEvent::Lobby(lobby) => {
                    view.game = games.describe(&lobby.next.spec);
                    view.lobby = Some(lobby);
                }
                NetEvent::Closed(closed) => return Err(PlayError::from(closed).into()),
                _ => {}
            }
        }
        let lobby_shown = view.lobby.as_ref().is_some_and(|l| {
            l.players.len() >= usize::from(l.next.players_needed) && (game == 1 || l.last.is_some())
        });
        if toggle && view.me.is_some() {
            view.ready = !view.ready;
            net.ready(view.ready);
        }
        let waiting_for_shot = shot_here && options.screenshot.is_some();
        if auto_ready_due && view.lobby.is_some() && !waiting_for_shot {
            auto_ready_due = false;
            view.ready = true;
            net.ready(true);
        }
        view.status = lobby_status(view);
        crate::lobby_screen::draw(&mut screen.canvas, view).map_err(WindowError::Sdl)?;
        if shot_here && lobby_shown {
            if let Some(path) = options.screenshot.take() {
                crate::screenshot::save_png(&screen.canvas, &path)?;
            }
        }
        screen.present();
        screen.pace(frame_start);
    }
}

/// What the lobby waits for, in words.
fn lobby_status(view: &LobbyView) -> String {
    let Some(lobby) = &view.lobby else {
        return match (view.me, &view.last) {
            (Some(_), Some(_)) => "the game goes on for the others; waiting for its end...".into(),
            (Some(_), None) => "waiting for the lobby...".into(),
            (None, _) => "connecting...".into(),
        };
    };
    if view.me.is_none() {
        return "watching: the game starts when the players are ready".into();
    }
    let missing = usize::from(lobby.next.players_needed).saturating_sub(lobby.players.len());
    let unready: Vec<&str> = lobby
        .players
        .iter()
        .filter(|p| !p.ready && Some(p.id) != view.me)
        .map(|p| p.name.as_str())
        .collect();
    if !view.ready {
        "press R, Space or the button when you are ready".into()
    } else if missing > 0 {
        format!("waiting for {missing} more player(s) to join")
    } else if !unready.is_empty() {
        format!("waiting for {} to be ready", unready.join(", "))
    } else {
        "starting...".into()
    }
}

/// Plays one game in the window until `ticks`, Esc or the window's
/// close; hands the game back with the frame time and whether `ticks`
/// was reached.
fn play_in_window<G: ClientGame>(
    screen: &mut Screen,
    mut play: NetPlay<G>,
    options: &mut WindowOptions,
) -> Result<(NetPlay<G>, Option<Duration>, bool), WindowError> {
    let mut hud = Hud::default();
    let mut graph = NetGraph::new(options.net_graph);
    let epoch = clock::now();
    let mut last_frame = epoch;
    loop {
        let frame_start = clock::now();
        play.drain()?;
        let frame = play.run_ticks(frame_start, || screen.sample());
        // IndependentTickRun: events and HUD figures.
        let pumped = screen.pump();
        let keep_playing = !pumped.quit;
        if pumped.keys.contains(&Keycode::F3) {
            graph.toggle();
        }
        play.hold(screen.sample());
        screen.ticks.add(frame.steps);
        let game = &play.game;
        hud.fps = screen.frames.rate;
        hud.ups = screen.ticks.rate;
        hud.tick = game.current.tick().0;
        hud.stalls = game.stats().stalled_ticks;
        hud.hash = game.current.hash();
        hud.rtt_ms = Some(play.link.rtt.as_secs_f32() * 1000.0);
        hud.input_delay = game.input_delay() as u8;
        hud.input_lag_ms = Some(game.input_lag(frame_time(hud.fps)).as_secs_f32() * 1000.0);
        hud.speed = Some(game.speed()).filter(|&speed| speed < Percent::FULL);
        let role = match game.me {
            Some(_) if game.delay_is_adaptive() => "connected, adaptive delay",
            Some(_) => "connected",
            None => "spectating",
        };
        hud.status = play
            .waiting_for()
            .or_else(|| play.replaced_note(frame_start))
            .unwrap_or_else(|| role.to_string());
        hud.banner = play.connection_banner().or_else(|| play.desync.clone());
        let roster = Roster {
            players: game.roster.clone(),
            me: game.me,
        };
        screen.draw(
            &game.previous,
            &game.current,
            frame.end.alpha,
            &roster,
            &hud,
        )?;
        let now = frame_start.duration_since(epoch).as_secs_f64();
        let frame_ms = frame_start.duration_since(last_frame).as_secs_f32() * 1000.0;
        last_frame = frame_start;
        graph.record_play(now, frame_ms, &play, &frame);
        if graph.shown {
            graph
                .draw(&mut screen.canvas, now)
                .map_err(WindowError::Sdl)?;
        }
        if !options.draw_cost.is_zero() {
            std::thread::sleep(options.draw_cost);
        }
        capture(screen, options, hud.tick)?;
        if options.screenshot_reconnecting && play.is_reconnecting() {
            if let Some(path) = options.screenshot.take() {
                crate::screenshot::save_png(&screen.canvas, &path)?;
            }
        }
        screen.present();
        if !keep_playing || frame.finished {
            return Ok((play, frame_time(hud.fps), frame.finished));
        }
        if !play.game.is_playing() {
            return Err(PlayError::Dropped.into());
        }
        screen.pace(frame_start);
    }
}

/// Plays alone against bots: no server, MAX_LOOPS on, pending time
/// discarded when the machine cannot keep up.
pub fn run_solo(solo: SoloOptions, mut options: WindowOptions) -> Result<GameOutcome, WindowError> {
    let mut screen = Screen::open(&options)?;
    let setup = Setup {
        seed: solo.seed,
        tick_rate: solo.tick_rate,
        settings: lockstep_sim::engine::BallSettings::default(),
        players: Vec::new(),
    };
    let me = SoloGame::<World, Bots>::ME;
    let bots = Bots::new(solo.seed, &SoloGame::<World, Bots>::opponent_ids(solo.bots));
    let mut game = SoloGame::new(setup.clone(), solo.bots, &options.title, bots);
    let mut my_bot = options.bot.map(|seed| Bot::for_player(seed, me));
    let mut fixed = FixedStep::new(solo.tick_rate, Policy::flipcode(solo.max_loops));
    let roster = Roster {
        players: game.roster.clone(),
        me: Some(me),
    };
    let mut recorder = match &solo.record {
        Some(path) => {
            let header = solo_header::<World>(&setup, game.roster_entries(), clock::unix_seconds());
            Some(FileRecorder::create(path, &header, me)?)
        }
        None => None,
    };
    let mut hud = Hud {
        status: format!("solo, MAX_LOOPS {}", solo.max_loops),
        ..Hud::default()
    };
    let mut last = clock::now();
    loop {
        let frame_start = clock::now();
        fixed.begin_frame(frame_start.duration_since(last).as_nanos() as u64);
        last = frame_start;
        let mut steps = 0;
        while fixed.due() && options.ticks.is_none_or(|t| game.current.tick().0 < t) {
            let mine = match &mut my_bot {
                Some(bot) => bot.next_input(&game.current, me),
                None => screen.sample(),
            };
            let bundle = game.tick(mine);
            if let Some(recorder) = &mut recorder {
                if let Err(stopped) = recorder.tick(&bundle, &game.current) {
                    eprintln!("lockstep-client: {stopped}");
                }
            }
            fixed.stepped();
            steps += 1;
        }
        let end = fixed.end_frame();
        let keep_playing = !screen.pump().quit;
        screen.ticks.add(steps);
        hud.fps = screen.frames.rate;
        hud.ups = screen.ticks.rate;
        hud.tick = game.current.tick().0;
        hud.hash = game.current.hash();
        screen.draw(&game.previous, &game.current, end.alpha, &roster, &hud)?;
        capture(&screen, &mut options, hud.tick)?;
        screen.present();
        let finished = options.ticks.is_some_and(|t| game.current.tick().0 >= t);
        if !keep_playing || finished {
            if let Some(recorder) = recorder.take() {
                if let Err(problem) = recorder.finish("the player left") {
                    eprintln!("lockstep-client: {problem}");
                }
            }
            return Ok(GameOutcome {
                tick: game.current.tick().0,
                hash: game.current.hash(),
                stalled_ticks: 0,
                replaced: 0,
                slowest_speed: Percent::FULL,
                tx_bytes: 0,
                rx_bytes: 0,
                rtt_us: 0,
                delay: 0,
                playout: 0,
                input_lag_ms: 0,
                inputs_on_schedule: 0,
            });
        }
        screen.pace(frame_start);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stick_inside_the_dead_zone_leaves_the_buttons_in_charge() {
        assert_eq!(stick_axes(100, -200), None);
        assert_eq!(stick_axes(32767, 0), Some([127, 0]));
        assert_eq!(stick_axes(-32768, 0), Some([-127, 0]));
        assert_eq!(stick_axes(0, 16384), Some([0, 63]));
    }
}
