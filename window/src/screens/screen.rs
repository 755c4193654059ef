//! The SDL2 window every screen opens (`Screen`): its events, keyboard
//! and game controller input, a game frame drawn by the renderer, frame
//! pacing and the FPS/UPS meters; the screenshot of the requested tick;
//! and why a window stops ([`WindowError`]).

use std::time::{Duration, Instant};

use lockstep_protocol::{Buttons, Input};
use sdl2::controller::{Axis, Button, GameController};
use sdl2::event::{Event, WindowEvent};
use sdl2::keyboard::{KeyboardState, Keycode, Scancode};

use crate::draw::picture::Roster;
use crate::draw::render::{Hud, Renderer};
use crate::pacing::Pacer;
use lockstep_client::io::clock;
use lockstep_client::play::PlayError;
use lockstep_client::window_options::WindowOptions;
use lockstep_engine::games::Playable;

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
    /// SDL2 failed: setting up the window or its renderer, or drawing in
    /// it. The string is SDL's own message.
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
    Screenshot(#[from] crate::draw::screenshot::ScreenshotError),
    /// The game's settings (`--set`) are not the game's.
    #[error("{0}")]
    Settings(String),
    /// The game loop lab asked a game for a step by a measured dt that it
    /// cannot take.
    #[error(transparent)]
    FixedStep(#[from] lockstep_engine::FixedStepOnly),
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

    pub(crate) fn draw<G: Playable>(
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
            crate::draw::screenshot::save_png(&screen.canvas, &path)?;
        }
    }
    Ok(())
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
