//! The replay window's timeline: a bar along the bottom with the playback
//! position and markers for goals, drops, rejoins and desyncs; a click or
//! a drag on it seeks there, backward too (the playback keeps a snapshot
//! every few seconds and re-simulates from the nearest one).
//!
//! The markers come from [`lockstep_client::tools::report::analyse`], the same reading of
//! the replay the report picture draws, in the colours of [`Mark`].

use lockstep_protocol::Tick;
use sdl2::pixels::Color;
use sdl2::rect::Rect;
use sdl2::render::WindowCanvas;

use crate::draw::chart::{self, Mark};
use crate::draw::colour::player_colour;
use crate::draw::text::{backing, text_size, GLYPH};
use lockstep_client::tools::report::GameReport;

/// The played part of the bar.
const PLAYED: Color = Color::RGB(90, 110, 160);
/// The playback position.
const HEAD: Color = Color::RGB(240, 240, 240);

/// The markers of one replay, by tick.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Timeline {
    /// Ticks in the replay.
    pub total: u32,
    /// (tick, kind, colour): goals in the scorer's colour.
    pub marks: Vec<(Tick, Mark, Color)>,
}

impl Timeline {
    /// The timeline of `report`'s game.
    pub fn new(report: &GameReport) -> Timeline {
        let mut marks: Vec<(Tick, Mark, Color)> = Vec::new();
        marks.extend(
            report
                .goals
                .iter()
                .map(|&(t, p)| (t, Mark::Goal, player_colour(p))),
        );
        marks.extend(
            report
                .drops
                .iter()
                .map(|(t, _, _)| (*t, Mark::Drop, Mark::Drop.colour())),
        );
        marks.extend(
            report
                .rejoins
                .iter()
                .map(|&(t, _)| (t, Mark::Rejoin, Mark::Rejoin.colour())),
        );
        marks.extend(
            report
                .desyncs
                .iter()
                .map(|&t| (t, Mark::Desync, Mark::Desync.colour())),
        );
        Timeline {
            total: report.ticks,
            marks,
        }
    }

    /// Where the bar is in an `output`-sized window: along the bottom,
    /// tall enough to hit with a mouse.
    pub fn area(output: (u32, u32)) -> Rect {
        let size = text_size(output.1);
        let height = (GLYPH * size * 2).max(16) as u32;
        let margin = 8;
        Rect::new(
            margin,
            output.1 as i32 - height as i32 - margin,
            output.0.saturating_sub(2 * margin as u32).max(1),
            height,
        )
    }

    /// The tick under column `x` of the bar `area` (clamped to the ends).
    pub fn tick_at(&self, area: Rect, x: i32) -> Tick {
        let width = i64::from(area.width().saturating_sub(1).max(1));
        let offset = i64::from(x - area.x()).clamp(0, width);
        Tick((offset * i64::from(self.total) / width) as u32)
    }

    /// The column of the bar `area` where `tick` is.
    pub fn x_of(&self, area: Rect, tick: Tick) -> i32 {
        let width = i64::from(area.width().saturating_sub(1));
        let tick = i64::from(tick.0.min(self.total));
        area.x() + (tick * width / i64::from(self.total.max(1))) as i32
    }

    /// The tick a click or drag at (`x`, `y`) seeks to, if it is on the
    /// bar `area`. A drag that has left the bar sideways keeps scrubbing,
    /// so only the vertical position is checked.
    pub fn seek_at(&self, area: Rect, (x, y): (i32, i32)) -> Option<Tick> {
        let slop = area.height() as i32;
        (y >= area.y() - slop && y < area.bottom() + slop).then(|| self.tick_at(area, x))
    }

    /// Draws the bar with the position `at`.
    pub fn draw(&self, canvas: &mut WindowCanvas, at: Tick) -> Result<(), String> {
        let area = Timeline::area(canvas.output_size()?);
        backing(canvas, area)?;
        let bar = Rect::new(
            area.x(),
            area.y() + 2,
            area.width(),
            area.height().saturating_sub(4).max(1),
        );
        chart::background(canvas, bar)?;
        let head = self.x_of(area, at);
        canvas.set_draw_color(PLAYED);
        canvas.fill_rect(Rect::new(
            bar.x(),
            bar.y(),
            (head - bar.x()).max(0) as u32,
            bar.height(),
        ))?;
        for &(tick, _, colour) in &self.marks {
            chart::marker(canvas, bar, self.x_of(area, tick) - bar.x(), colour)?;
        }
        canvas.set_draw_color(HEAD);
        canvas.fill_rect(Rect::new(head - 1, area.y(), 3, area.height()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timeline(total: u32) -> Timeline {
        Timeline {
            total,
            marks: Vec::new(),
        }
    }

    #[test]
    fn columns_and_ticks_map_both_ways_and_clamp() {
        let line = timeline(1000);
        let area = Rect::new(10, 100, 101, 20);
        assert_eq!(line.tick_at(area, 10), Tick(0));
        assert_eq!(line.tick_at(area, 60), Tick(500));
        assert_eq!(line.tick_at(area, 110), Tick(1000));
        assert_eq!(line.tick_at(area, -50), Tick(0));
        assert_eq!(line.tick_at(area, 5000), Tick(1000));
        assert_eq!(line.x_of(area, Tick(500)), 60);
        assert_eq!(line.x_of(area, Tick(99_999)), 110);
        assert_eq!(timeline(0).x_of(area, Tick(5)), 10);
    }

    #[test]
    fn only_clicks_near_the_bar_seek() {
        let line = timeline(600);
        let area = Timeline::area((640, 360));
        assert!(area.bottom() <= 360);
        let middle = area.y() + 5;
        assert_eq!(line.seek_at(area, (area.x(), middle)), Some(Tick(0)));
        assert!(line.seek_at(area, (area.x(), 10)).is_none());
        assert_eq!(
            line.seek_at(area, (area.right() + 40, middle)),
            Some(Tick(600))
        );
    }
}
