//! The lab's strip chart: the last [`CHART_FRAMES`] frames' times and
//! steps per frame, newest on the right, drawn with SDL2 rectangles and
//! lines.
//!
//! The frame-time scale grows in steps to fit the slowest frame on the
//! chart, so a spiral of death is seen climbing out of one scale into the
//! next; bars past the largest scale are capped in red. The target frame
//! time and the tick time are drawn across as lines: bars on the target
//! line are a steady frame rate, and aliasing shows as steps per frame
//! alternating between 0, 1 and 2.

use lockstep_engine::timing::loops::{format_ms, Settings};
use sdl2::pixels::Color;
use sdl2::rect::Rect;
use sdl2::render::WindowCanvas;

use super::history::{FrameHistory, FrameSample};
use crate::chart::{bars as plot, level, scale_for};
use crate::render::{text, GLYPH, HUD_TEXT, PAD};

/// Frames shown: four seconds at 60 FPS.
pub const CHART_FRAMES: usize = 240;
/// Frame time bars: a light blue no player colour is close to.
pub const FRAME_BAR: Color = Color::RGB(110, 210, 255);
/// Steps-per-frame bars: amber.
pub const STEP_BAR: Color = Color::RGB(255, 176, 64);
/// The target frame time line.
const TARGET_LINE: Color = Color::RGB(240, 240, 240);
/// The tick time line.
const TICK_LINE: Color = Color::RGB(120, 230, 120);

/// Frame-time scales to choose from, in ms: the smallest that fits the
/// slowest frame on the chart is used.
const FRAME_SCALES_MS: [u64; 7] = [20, 50, 100, 200, 500, 1_000, 2_000];
/// Steps-per-frame scales to choose from.
const STEP_SCALES: [u32; 6] = [2, 4, 8, 16, 32, 64];
/// Share of the plotting height given to frame times; the rest shows
/// steps per frame.
const FRAME_SHARE: f32 = 0.62;

/// Draws the chart of `history` into `area` with text at `size`.
pub fn draw(
    canvas: &mut WindowCanvas,
    area: Rect,
    size: i32,
    history: &FrameHistory,
    settings: &Settings,
) -> Result<(), String> {
    let samples: Vec<&FrameSample> = history.last(CHART_FRAMES).collect();
    let slowest = samples.iter().map(|s| s.frame_ns).max().unwrap_or(0);
    let busiest = samples.iter().map(|s| s.steps).max().unwrap_or(0);
    let frame_scale = scale_for(&FRAME_SCALES_MS, slowest.div_ceil(1_000_000)) * 1_000_000;
    let step_scale = scale_for(&STEP_SCALES, busiest);

    super::backing(canvas, area)?;
    let pad = PAD * size;
    let line = (GLYPH + 2) * size;
    let bar_width = ((area.width() as i32 - 2 * pad) / CHART_FRAMES as i32).max(1);
    let plot_width = bar_width * CHART_FRAMES as i32;
    let left = area.x() + pad;
    let plots_height = area.height() as i32 - 2 * pad - 2 * line - pad;
    let frame_height = (plots_height as f32 * FRAME_SHARE) as i32;
    let step_height = plots_height - frame_height;

    let mut y = area.y() + pad;
    let target = if settings.strategy.paced() {
        format!("  target {} ms", format_ms(settings.target_frame_ns, 1))
    } else {
        String::new()
    };
    let title = format!(
        "frame time, 0-{} ms{target}  tick {} ms",
        frame_scale / 1_000_000,
        format_ms(settings.tick_ns, 1)
    );
    text(canvas, left, y, size, &title, FRAME_BAR)?;
    y += line;
    let frames = Rect::new(left, y, plot_width as u32, frame_height.max(1) as u32);
    let bars: Vec<(u64, u64)> = samples.iter().map(|s| (s.frame_ns, frame_scale)).collect();
    plot(canvas, frames, bar_width, &bars, FRAME_BAR)?;
    if settings.strategy.paced() {
        level(
            canvas,
            frames,
            settings.target_frame_ns,
            frame_scale,
            TARGET_LINE,
        )?;
    }
    level(canvas, frames, settings.tick_ns, frame_scale, TICK_LINE)?;

    y += frame_height + pad;
    let title = format!("steps per frame, 0-{step_scale}");
    text(canvas, left, y, size, &title, STEP_BAR)?;
    y += line;
    let steps = Rect::new(left, y, plot_width as u32, step_height.max(1) as u32);
    let bars: Vec<(u64, u64)> = samples
        .iter()
        .map(|s| (u64::from(s.steps), u64::from(step_scale)))
        .collect();
    plot(canvas, steps, bar_width, &bars, STEP_BAR)?;
    level(canvas, steps, 1, u64::from(step_scale), HUD_TEXT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scale_is_the_smallest_that_fits() {
        assert_eq!(scale_for(&FRAME_SCALES_MS, 17), 20);
        assert_eq!(scale_for(&FRAME_SCALES_MS, 20), 20);
        assert_eq!(scale_for(&FRAME_SCALES_MS, 21), 50);
        assert_eq!(scale_for(&FRAME_SCALES_MS, 60_000), 2_000);
        assert_eq!(scale_for(&STEP_SCALES, 0), 2);
        assert_eq!(scale_for(&STEP_SCALES, 5), 8);
    }
}
