//! `lockstep-client replay FILE`: a replay played in the window with the
//! same fixed-step loop and interpolation as a live game, with pause,
//! single step, speed x0.25 to x16 and seeking: by key, or by a click or
//! drag on the timeline along the bottom ([`Timeline`]), which marks the
//! goals, drops, rejoins and desyncs.

use lockstep_engine::replay::playback::{Playback, Verified};
use lockstep_engine::timing::accumulator::{FixedStep, Policy};
use lockstep_protocol::Tick;
use sdl2::keyboard::Keycode;

use crate::draw::picture::Roster;
use crate::draw::render::Hud;
use crate::draw::timeline::Timeline;
use crate::screens::screen::{capture, Screen, WindowError};
use lockstep_client::io::clock;
use lockstep_client::window_options::{ViewOptions, WindowOptions};
use lockstep_engine::games::Playable;

/// Slowest and fastest playback speeds.
const SPEEDS: (f64, f64) = (0.25, 16.0);

/// Ticks a PageUp/PageDown seek moves: ten seconds at 60 Hz.
const SEEK_STEP: u32 = 600;

/// Ticks per frame when verifying "as fast as possible" in the window:
/// enough to be quick, few enough to keep drawing.
const VERIFY_TICKS_PER_FRAME: u32 = 2000;

/// Plays `playback` in a window until Esc (or the end, when verifying).
pub fn run<G: Playable>(
    mut playback: Playback<G>,
    note: Option<String>,
    mut options: WindowOptions,
    view: ViewOptions,
) -> Result<Verified, WindowError> {
    let mut screen = Screen::open(&options)?;
    let header = playback.replay().header.clone();
    let roster = Roster {
        players: header
            .roster
            .iter()
            .map(|r| (r.id, r.name.clone()))
            .collect(),
        me: None,
    };
    let mut clock_loop = FixedStep::new(
        header.tick_rate,
        Policy::Networked {
            catch_up_per_frame: 256,
        },
    );
    // The playback was built from the same replay: it is a game of `G`.
    let report = lockstep_client::tools::report::analyse::<G>("", playback.replay().clone(), None)
        .map_err(|e| WindowError::Sdl(e.to_string()))?;
    let timeline = Timeline::new(&report);
    let mut speed = view.speed.clamp(SPEEDS.0, SPEEDS.1);
    let mut paused = false;
    if let Some(tick) = view.seek {
        playback.seek(tick);
    }
    let mut hud = Hud {
        input_delay: header.input_delay,
        ..Hud::default()
    };
    // `--ticks` ends the replay early (to compare with a client that left
    // at that tick).
    let end_tick = options.ticks.unwrap_or(u32::MAX).min(playback.total());
    let mut last = clock::now();
    loop {
        let frame_start = clock::now();
        let elapsed = frame_start.duration_since(last).as_nanos() as f64;
        last = frame_start;
        let pumped = screen.pump();
        for key in pumped.keys {
            match key {
                Keycode::Space => paused = !paused,
                Keycode::Period | Keycode::Right if paused => {
                    playback.step();
                }
                Keycode::RightBracket | Keycode::Equals | Keycode::KpPlus => {
                    speed = (speed * 2.0).clamp(SPEEDS.0, SPEEDS.1);
                }
                Keycode::LeftBracket | Keycode::Minus | Keycode::KpMinus => {
                    speed = (speed / 2.0).clamp(SPEEDS.0, SPEEDS.1);
                }
                Keycode::Home => playback.seek(Tick(0)),
                Keycode::End => playback.seek(Tick(playback.total())),
                Keycode::PageDown => {
                    playback.seek(playback.current.tick().plus(SEEK_STEP));
                }
                Keycode::PageUp => {
                    let back = playback.current.tick().0.saturating_sub(SEEK_STEP);
                    playback.seek(Tick(back));
                }
                _ => {}
            }
        }
        let bar = Timeline::area(screen.canvas.output_size().map_err(WindowError::Sdl)?);
        let scrubbed = pumped
            .clicks
            .iter()
            .chain(&pumped.drags)
            .filter_map(|&at| timeline.seek_at(bar, at))
            .next_back();
        if let Some(tick) = scrubbed {
            playback.seek(tick);
        }
        let mut steps = 0;
        let mut alpha = 1.0;
        if view.verify {
            while steps < VERIFY_TICKS_PER_FRAME
                && playback.current.tick().0 < end_tick
                && playback.step()
            {
                steps += 1;
            }
        } else if !paused {
            clock_loop.begin_frame((elapsed * speed) as u64);
            while clock_loop.due() && playback.current.tick().0 < end_tick && playback.step() {
                clock_loop.stepped();
                steps += 1;
            }
            alpha = clock_loop.end_frame().alpha;
        }
        screen.ticks.add(steps);
        let tick = playback.current.tick().0;
        let at_end = tick >= end_tick;
        hud.fps = screen.frames.rate;
        hud.ups = screen.ticks.rate;
        hud.tick = tick;
        hud.hash = playback.current.hash();
        hud.status = format!(
            "replay {tick}/{} x{speed}{}  verified {}/{}",
            playback.total(),
            if paused { " paused" } else { "" },
            playback.checked(),
            playback.recorded_checks()
        );
        hud.banner = match (playback.mismatch(), at_end) {
            (Some(m), _) => Some(format!("DIVERGED at tick {}", m.tick)),
            (None, true) => Some(match &note {
                Some(note) => format!("End of replay ({note})"),
                None => "End of replay".to_string(),
            }),
            (None, false) => None,
        };
        screen.draw(&playback.previous, &playback.current, alpha, &roster, &hud)?;
        timeline
            .draw(&mut screen.canvas, Tick(tick))
            .map_err(WindowError::Sdl)?;
        capture(&screen, &mut options, tick)?;
        screen.present();
        if pumped.quit || (view.verify && at_end) {
            return Ok(Verified {
                ticks: tick,
                hash: playback.current.hash(),
                checked: playback.checked(),
                mismatch: playback.mismatch(),
                diverged: playback.diverged(),
                last: playback.last_reports(),
            });
        }
        screen.pace(frame_start);
    }
}
