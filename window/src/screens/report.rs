//! Draws a [`GameReport`] into a PNG: a title block (players, their
//! machines, the verdict), an events panel over the whole game (goals,
//! hash checks, drops, rejoins, desyncs, speed changes) and one panel per
//! player (ping and slack from the server's samples, waits and stand-ins),
//! all on one time axis of game ticks.
//!
//! Drawn with SDL2 into a software surface, not with a plotting crate:
//! the client already draws text (SDL2_gfx's built-in font,
//! [`crate::draw::text`]), strip charts ([`crate::draw::chart`]) and
//! writes PNGs ([`crate::draw::screenshot`]), so the picture looks like the
//! game's own charts and costs no new dependency. `plotters` would need its
//! font stack (fontconfig and FreeType, or a bundled TTF) for text. A
//! software surface needs no window and no video driver, so `report` runs
//! on a machine without a display.

use sdl2::pixels::{Color, PixelFormatEnum};
use sdl2::rect::Rect;
use sdl2::render::Canvas;
use sdl2::surface::Surface;

use lockstep_protocol::{PlayerId, Tick};

use crate::draw::chart::{self, Mark};
use crate::draw::colour::player_colour;
use crate::draw::screenshot::{write_png_rgb, ScreenshotError};
use crate::draw::text::{printable, text, GLYPH, HUD_TEXT};
use lockstep_client::games::Games;
use lockstep_client::tools::report::{GameReport, ReportOptions};

/// Picture background.
const BACKGROUND: Color = Color::RGB(16, 17, 24);
/// Ping line.
pub const PING: Color = Color::RGB(110, 210, 255);
/// Slack line (the 10th percentile: what most inputs had).
pub const SLACK: Color = Color::RGB(255, 176, 64);
/// Agreed hash checks.
const AGREED: Color = Color::RGB(70, 170, 90);
/// Verdict colours.
const GOOD: Color = Color::RGB(120, 230, 120);
const BAD: Color = Color::RGB(255, 90, 90);
/// Dim text.
const DIM: Color = Color::RGB(150, 155, 170);

/// Space around everything.
const MARGIN: i32 = 12;
/// Room left of the plots for their labels.
const LABEL_WIDTH: i32 = 110;
/// Height of one text line at size 1.
const LINE: i32 = GLYPH + 4;
/// Height of the events panel's plot.
const EVENTS_HEIGHT: i32 = 72;
/// Height of a player's plot.
const PLAYER_HEIGHT: i32 = 84;
/// Gap between panels.
const GAP: i32 = 14;
/// Smallest picture width that still leaves room for a time axis.
pub const MIN_WIDTH: u32 = 480;

/// Why the report picture could not be made. The inner errors' messages
/// already end with their causes, so they are shown, not chained (a chain
/// would print each cause twice).
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The replay could not be read.
    #[error("{0}")]
    Replay(lockstep_client::tools::report::LoadError),
    /// SDL2 could not draw.
    #[error("drawing the report failed: {0}")]
    Draw(String),
    /// The PNG could not be written.
    #[error("{0}")]
    Png(ScreenshotError),
}

/// Where each part of the picture is: the tests look for markers in these
/// regions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Picture size.
    pub size: (u32, u32),
    /// The events panel's plot.
    pub events: Rect,
    /// The first player's plot; the others follow `player_step` lower.
    pub first_player: Rect,
    /// Vertical distance between player plots.
    pub player_step: i32,
}

impl Layout {
    /// The layout of a `width` pixel wide picture of `players` players.
    pub fn new(width: u32, players: usize) -> Layout {
        let width = width.max(MIN_WIDTH);
        let title_lines = 4 + players as i32;
        let title = MARGIN + title_lines * LINE + GAP;
        let plot_left = MARGIN + LABEL_WIDTH;
        let plot_width = (width as i32 - plot_left - MARGIN).max(1) as u32;
        let events = Rect::new(plot_left, title + LINE, plot_width, EVENTS_HEIGHT as u32);
        let axis = events.bottom() + LINE + GAP;
        let player_step = PLAYER_HEIGHT + LINE + GAP;
        let first_player = Rect::new(plot_left, axis + LINE, plot_width, PLAYER_HEIGHT as u32);
        let height = first_player.y() + player_step * players as i32 + MARGIN;
        Layout {
            size: (width, height.max(events.bottom() + MARGIN) as u32),
            events,
            first_player,
            player_step,
        }
    }

    /// Player `index`'s plot.
    pub fn player(&self, index: usize) -> Rect {
        let mut rect = self.first_player;
        rect.set_y(self.first_player.y() + self.player_step * index as i32);
        rect
    }

    /// The column of the plots where tick `tick` of `ticks` is.
    pub fn x_of(&self, tick: Tick, ticks: u32) -> i32 {
        let columns = self.events.width();
        let column = chart::column_of(f64::from(tick.0), 0.0, f64::from(ticks.max(1)), columns)
            .unwrap_or(columns.saturating_sub(1));
        self.events.x() + column as i32
    }
}

/// `report`: reads the replay, draws it and writes the PNG; the line to
/// print.
pub fn run(games: &impl Games, options: &ReportOptions) -> Result<Vec<String>, ReportError> {
    let report = lockstep_client::tools::report::load(games, &options.replay)
        .map_err(ReportError::Replay)?;
    let layout = Layout::new(options.width, report.players.len());
    let pixels = draw(&report, &layout).map_err(ReportError::Draw)?;
    write_png_rgb(&options.out, layout.size.0, layout.size.1, &pixels).map_err(ReportError::Png)?;
    let mut lines = vec![format!(
        "report {} ticks={} players={} verdict={}",
        options.out.display(),
        report.ticks,
        report.players.len(),
        report.outcome.word()
    )];
    lines.extend(report.desync_lines());
    Ok(lines)
}

/// Draws `report` offscreen; the picture as packed RGB rows.
pub fn draw(report: &GameReport, layout: &Layout) -> Result<Vec<u8>, String> {
    let (width, height) = layout.size;
    let surface = Surface::new(width, height, PixelFormatEnum::RGB888)?;
    let mut canvas = surface.into_canvas().map_err(|e| e.to_string())?;
    canvas.set_draw_color(BACKGROUND);
    canvas.clear();
    title_block(&mut canvas, report)?;
    events_panel(&mut canvas, report, layout)?;
    for (index, player) in report.players.iter().enumerate() {
        player_panel(&mut canvas, report, layout, index, player.id)?;
    }
    canvas.read_pixels(None, PixelFormatEnum::RGB24)
}

fn title_block<T: sdl2::render::RenderTarget>(
    canvas: &mut Canvas<T>,
    report: &GameReport,
) -> Result<(), String> {
    let mut y = MARGIN;
    let seconds = report.ticks / u32::from(report.tick_rate.max(1));
    text(
        canvas,
        MARGIN,
        y,
        1,
        &printable(&format!("lockstep game report: {}", report.file)),
        HUD_TEXT,
    )?;
    y += LINE;
    let line = format!(
        "{}: {} ticks ({}:{:02} at {} Hz), recorded by {}, replay format {}",
        report.game,
        report.ticks,
        seconds / 60,
        seconds % 60,
        report.tick_rate,
        report.recorder,
        report.format
    );
    text(canvas, MARGIN, y, 1, &printable(&line), DIM)?;
    y += LINE;
    let colour = if report.verified { GOOD } else { BAD };
    text(canvas, MARGIN, y, 1, &printable(&report.verdict), colour)?;
    y += LINE;
    let checks = report.checks.len();
    let diverged = report.checks.iter().filter(|c| !c.agreed).count();
    let line = format!(
        "hash checks {checks} ({diverged} diverged), goals {}, drops {}, left {}, rejoins {}, \
         desyncs {}",
        report.goals.len(),
        report.drops.len(),
        report.leaves.len(),
        report.rejoins.len(),
        report.desyncs.len()
    );
    text(canvas, MARGIN, y, 1, &printable(&line), DIM)?;
    for player in &report.players {
        y += LINE;
        canvas.set_draw_color(player_colour(player.id));
        canvas.fill_rect(Rect::new(MARGIN, y, GLYPH as u32, GLYPH as u32))?;
        let platform = player.platform.as_ref().map_or_else(
            || "platform unknown".to_string(),
            |p| format!("{} {} {}", p.target, p.os, p.cpu),
        );
        let line = format!(
            "{} ({}): {} goals, {} stand-ins; {platform}",
            player.name,
            player.id,
            player.goals,
            player.substituted.len()
        );
        text(
            canvas,
            MARGIN + GLYPH + 6,
            y,
            1,
            &printable(&line),
            HUD_TEXT,
        )?;
    }
    Ok(())
}

fn events_panel<T: sdl2::render::RenderTarget>(
    canvas: &mut Canvas<T>,
    report: &GameReport,
    layout: &Layout,
) -> Result<(), String> {
    let rect = layout.events;
    text(
        canvas,
        MARGIN,
        rect.y() - LINE,
        1,
        "events over the game",
        HUD_TEXT,
    )?;
    legend(canvas, rect.x() + 180, rect.y() - LINE)?;
    chart::background(canvas, rect)?;
    let x = |tick: Tick| layout.x_of(tick, report.ticks) - rect.x();
    // The lanes: hash checks along the bottom, goals along the top, the
    // rest as full-height markers.
    let lane = (rect.height() / 4).max(4);
    text(
        canvas,
        MARGIN,
        rect.bottom() - lane as i32,
        1,
        "hashes",
        DIM,
    )?;
    text(canvas, MARGIN, rect.y(), 1, "goals", DIM)?;
    text(canvas, MARGIN, rect.y() + LINE, 1, "drops etc.", DIM)?;
    let checks = Rect::new(rect.x(), rect.bottom() - lane as i32, rect.width(), lane);
    for check in &report.checks {
        let colour = if check.agreed {
            AGREED
        } else {
            Mark::Desync.colour()
        };
        chart::marker(canvas, checks, x(check.tick), colour)?;
    }
    let goals = Rect::new(rect.x(), rect.y(), rect.width(), lane);
    for &(tick, player) in &report.goals {
        chart::marker(canvas, goals, x(tick), player_colour(player))?;
        canvas.set_draw_color(Mark::Goal.colour());
        canvas.fill_rect(Rect::new(rect.x() + x(tick), rect.y(), 2, 3))?;
    }
    let middle = Rect::new(
        rect.x(),
        rect.y() + lane as i32,
        rect.width(),
        rect.height() - 2 * lane,
    );
    for &(tick, _) in &report.speeds {
        chart::marker(canvas, middle, x(tick), Mark::Speed.colour())?;
    }
    for &(tick, _) in &report.rejoins {
        chart::marker(canvas, middle, x(tick), Mark::Rejoin.colour())?;
    }
    for (tick, _, _) in &report.drops {
        chart::marker(canvas, middle, x(*tick), Mark::Drop.colour())?;
    }
    for &tick in &report.desyncs {
        chart::marker(canvas, middle, x(tick), Mark::Desync.colour())?;
    }
    axis(canvas, report, rect)
}

/// Game time under `rect`: seconds at round steps.
fn axis<T: sdl2::render::RenderTarget>(
    canvas: &mut Canvas<T>,
    report: &GameReport,
    rect: Rect,
) -> Result<(), String> {
    let rate = f64::from(report.tick_rate.max(1));
    let seconds = f64::from(report.ticks) / rate;
    let step = f64::from(chart::nice_scale((seconds / 8.0) as f32)).max(1.0);
    let mut t = 0.0;
    while t <= seconds {
        if let Some(column) = chart::column_of(t * rate, 0.0, f64::from(report.ticks.max(1)), {
            rect.width()
        }) {
            let x = rect.x() + column as i32;
            canvas.set_draw_color(DIM);
            canvas.fill_rect(Rect::new(x, rect.bottom(), 1, 3))?;
            text(canvas, x, rect.bottom() + 4, 1, &format!("{t}s"), DIM)?;
        }
        t += step;
    }
    Ok(())
}

/// The colours of the markers, in a row from (`x`, `y`).
fn legend<T: sdl2::render::RenderTarget>(
    canvas: &mut Canvas<T>,
    mut x: i32,
    y: i32,
) -> Result<(), String> {
    for mark in [
        Mark::Drop,
        Mark::Rejoin,
        Mark::Desync,
        Mark::Speed,
        Mark::Substituted,
        Mark::Stall,
    ] {
        canvas.set_draw_color(mark.colour());
        canvas.fill_rect(Rect::new(x, y, 6, GLYPH as u32))?;
        text(canvas, x + 9, y, 1, mark.label(), DIM)?;
        x += 9 + (mark.label().len() as i32 + 2) * GLYPH;
    }
    Ok(())
}

fn player_panel<T: sdl2::render::RenderTarget>(
    canvas: &mut Canvas<T>,
    report: &GameReport,
    layout: &Layout,
    index: usize,
    id: PlayerId,
) -> Result<(), String> {
    let Some(player) = report.players.iter().find(|p| p.id == id) else {
        return Ok(());
    };
    let rect = layout.player(index);
    let columns = rect.width();
    let end = f64::from(report.ticks.max(1));
    let ping = chart::bucket(
        player
            .samples
            .iter()
            .map(|(t, s)| (f64::from(t.0), f32::from(s.ping_ms))),
        0.0,
        end,
        columns,
    );
    let slack = chart::bucket(
        player.samples.iter().filter_map(|(t, s)| {
            s.slack
                .map(|slack| (f64::from(t.0), f32::from(slack.p10_ms.max(0))))
        }),
        0.0,
        end,
        columns,
    );
    let largest = ping
        .iter()
        .chain(&slack)
        .flatten()
        .fold(0.0f32, |a, &b| a.max(b));
    let scale = chart::nice_scale(largest.max(10.0));
    let title = format!(
        "{}: ping (blue) and slack p10 (amber), 0-{scale} ms; waits, stand-ins",
        player.name
    );
    text(
        canvas,
        rect.x(),
        rect.y() - LINE,
        1,
        &printable(&title),
        HUD_TEXT,
    )?;
    canvas.set_draw_color(player_colour(id));
    canvas.fill_rect(Rect::new(MARGIN, rect.y(), GLYPH as u32, GLYPH as u32))?;
    text(
        canvas,
        MARGIN + GLYPH + 4,
        rect.y(),
        1,
        &printable(&player.name),
        HUD_TEXT,
    )?;
    if player.samples.is_empty() {
        text(canvas, MARGIN, rect.y() + LINE, 1, "no samples", DIM)?;
    }
    chart::background(canvas, rect)?;
    let x = |tick: Tick| layout.x_of(tick, report.ticks) - rect.x();
    // Waits and stand-ins in a lane along the bottom.
    let lane = Rect::new(rect.x(), rect.bottom() - 8, rect.width(), 8);
    for (tick, status) in &player.samples {
        if status.waited_for {
            chart::marker(canvas, lane, x(*tick), Mark::Stall.colour())?;
        }
    }
    for &tick in &player.substituted {
        chart::marker(canvas, lane, x(tick), Mark::Substituted.colour())?;
    }
    for (tick, _, _) in report.drops.iter().filter(|(_, p, _)| *p == id) {
        chart::marker(canvas, rect, x(*tick), Mark::Drop.colour())?;
    }
    for (tick, _) in report.rejoins.iter().filter(|(_, p)| *p == id) {
        chart::marker(canvas, rect, x(*tick), Mark::Rejoin.colour())?;
    }
    let plot = Rect::new(rect.x(), rect.y(), rect.width(), rect.height() - 9);
    chart::line(canvas, plot, &slack, scale, SLACK)?;
    chart::line(canvas, plot, &ping, scale, PING)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layout_grows_with_the_players_and_keeps_the_axis_inside() {
        let two = Layout::new(1000, 2);
        let three = Layout::new(1000, 3);
        assert_eq!(
            three.size.1 as i32 - two.size.1 as i32,
            two.player_step + LINE
        );
        assert!(two.player(1).bottom() < two.size.1 as i32);
        assert_eq!(two.x_of(Tick(0), 600), two.events.x());
        assert_eq!(two.x_of(Tick(600), 600), two.events.right() - 1);
        assert_eq!(two.x_of(Tick(9_999), 600), two.events.right() - 1);
        assert_eq!(Layout::new(10, 1).size.0, MIN_WIDTH);
    }
}
