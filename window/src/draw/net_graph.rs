//! The net graph: strip charts of the last [`SPAN_S`] seconds of a
//! networked game, drawn over it (F3, or `--net-graph` from the start), so
//! a stutter can be seen for what it is: a slow frame, a late bundle, a
//! delay change, a late peer.
//!
//! ```text
//! every frame:  graph.record(now, sample, observed)   // pure: keeps 10 s,
//!                                                     // turns changes into marks
//!               graph.draw(canvas, now)               // if shown
//! ```
//!
//! Six charts share one time axis, newest on the right: frame time, ticks
//! per frame, RTT and jitter, input and playout delay, bundles held (and
//! stalls), bytes per second in and out. Events are vertical markers
//! across every chart in the colours of [`Mark`]: a stall, a delay
//! change, the server waiting for a peer, a drop, a rejoin, a desync, a
//! stand-in for our input, a speed change. Marks come from comparing what
//! the frontend observed this frame with the last frame ([`Observed`]), so
//! the game code needs no hooks for them. The screen that plays the game
//! reads both off it each frame ([`FrameSample`], [`Observed`]): the graph
//! is plain figures in, pixels out.

use std::collections::VecDeque;

use sdl2::pixels::Color;
use sdl2::rect::Rect;
use sdl2::render::WindowCanvas;

use crate::draw::chart::{self, Mark};
use crate::draw::text::{backing, text, text_size, GLYPH, HUD_TEXT, PAD};

/// Seconds of history shown.
pub const SPAN_S: f64 = 10.0;
/// Share of the window's height the graph takes, at the bottom: the arena
/// and the scores stay visible above it.
const HEIGHT_SHARE: f32 = 0.56;
/// How often the bytes per second are recomputed: QUIC's counters move in
/// packets, so a per-frame rate would be noise.
const RATE_EVERY_S: f64 = 0.5;

/// The figures of one frame.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FrameSample {
    /// Time since the last frame, milliseconds.
    pub frame_ms: f32,
    /// Ticks simulated this frame.
    pub steps: u32,
    /// Smoothed round trip to the server, milliseconds.
    pub rtt_ms: f32,
    /// Jitter of the bundles' arrivals, milliseconds.
    pub jitter_ms: f32,
    /// Input delay in force, ticks.
    pub delay: u32,
    /// The playout part of the delay, ticks.
    pub playout: u8,
    /// Bundles received and not yet simulated.
    pub held: usize,
    /// Whether a due tick waited for its bundle this frame.
    pub stalled: bool,
    /// UDP bytes received so far.
    pub rx_bytes: u64,
    /// UDP bytes sent so far.
    pub tx_bytes: u64,
}

/// What the frontend sees of the game each frame that can change in a way
/// worth a marker.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Observed {
    /// Input delay plus playout, ticks.
    pub delay: u32,
    /// Whether the HUD warns that the game waits for another player.
    pub waiting_for_peer: bool,
    /// Players in the game.
    pub players: usize,
    /// Whether a desync was announced.
    pub desync: bool,
    /// Our inputs the server stood in for, so far.
    pub replaced: u64,
    /// Game speed, percent.
    pub speed: u16,
    /// Whether a due tick waited for its bundle this frame.
    pub stalled: bool,
}

/// A frame's figures with the byte rates worked out.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Stored {
    at: f64,
    sample: FrameSample,
    rx_rate: f32,
    tx_rate: f32,
}

/// The history behind the net graph, and whether it is shown.
#[derive(Debug, Clone, Default)]
pub struct NetGraph {
    /// Whether it is drawn (F3 toggles).
    pub shown: bool,
    frames: VecDeque<Stored>,
    marks: VecDeque<(f64, Mark)>,
    last: Option<Observed>,
    /// The byte counters at the last rate, and the rates.
    rate_base: Option<(f64, u64, u64)>,
    rates: (f32, f32),
}

impl NetGraph {
    /// An empty graph, shown or not.
    pub fn new(shown: bool) -> NetGraph {
        NetGraph {
            shown,
            ..NetGraph::default()
        }
    }

    /// Shows or hides it.
    pub fn toggle(&mut self) {
        self.shown = !self.shown;
    }

    /// Takes the frame that ended at `now` (seconds on any steady clock),
    /// marks what changed since the last frame and forgets what is older
    /// than [`SPAN_S`].
    pub fn record(&mut self, now: f64, sample: FrameSample, observed: Observed) {
        if let Some(last) = self.last {
            for mark in changes(&last, &observed) {
                self.marks.push_back((now, mark));
            }
        }
        self.last = Some(observed);
        match self.rate_base {
            None => self.rate_base = Some((now, sample.rx_bytes, sample.tx_bytes)),
            Some((at, rx, tx)) if now - at >= RATE_EVERY_S => {
                let seconds = (now - at) as f32;
                self.rates = (
                    sample.rx_bytes.saturating_sub(rx) as f32 / seconds,
                    sample.tx_bytes.saturating_sub(tx) as f32 / seconds,
                );
                self.rate_base = Some((now, sample.rx_bytes, sample.tx_bytes));
            }
            Some(_) => {}
        }
        self.frames.push_back(Stored {
            at: now,
            sample,
            rx_rate: self.rates.0,
            tx_rate: self.rates.1,
        });
        let oldest = now - SPAN_S;
        while self.frames.front().is_some_and(|f| f.at < oldest) {
            self.frames.pop_front();
        }
        while self.marks.front().is_some_and(|&(at, _)| at < oldest) {
            self.marks.pop_front();
        }
    }

    /// The marks of the last [`SPAN_S`] seconds, oldest first.
    pub fn marks(&self) -> impl Iterator<Item = &(f64, Mark)> {
        self.marks.iter()
    }

    /// Where the graph goes in an `output`-sized window: the bottom of it.
    pub fn area(output: (u32, u32)) -> Rect {
        let (width, height) = output;
        let graph_height = ((height as f32 * HEIGHT_SHARE) as u32).max(120).min(height);
        let margin = 4;
        Rect::new(
            margin,
            (height - graph_height) as i32,
            width.saturating_sub(2 * margin as u32).max(1),
            graph_height.saturating_sub(margin as u32).max(1),
        )
    }

    /// Draws the graph at `now` (the clock of [`NetGraph::record`]) over
    /// the bottom of the canvas.
    pub fn draw(&self, canvas: &mut WindowCanvas, now: f64) -> Result<(), String> {
        let output = canvas.output_size()?;
        let area = NetGraph::area(output);
        let size = text_size(output.1);
        backing(canvas, area)?;
        let pad = PAD * size;
        let line = (GLYPH + 2) * size;
        let start = now - SPAN_S;
        // The legend: the kinds of mark seen, in their colours.
        let mut x = area.x() + pad;
        let y = area.y() + pad;
        text(canvas, x, y, size, "net graph, 10 s", HUD_TEXT)?;
        x += (16 + 1) * GLYPH * size;
        let mut seen: Vec<Mark> = self.marks.iter().map(|&(_, m)| m).collect();
        seen.sort_unstable();
        seen.dedup();
        for mark in seen {
            canvas.set_draw_color(mark.colour());
            canvas.fill_rect(Rect::new(x, y, (3 * size) as u32, (GLYPH * size) as u32))?;
            text(canvas, x + 5 * size, y, size, mark.label(), mark.colour())?;
            x += 5 * size + (mark.label().len() as i32 + 1) * GLYPH * size;
        }
        let top = y + line + pad;
        let rows = 3;
        let columns = 2;
        let cell_width = (area.width() as i32 - pad * (columns + 1)) / columns;
        let cell_height = (area.bottom() - top - pad * rows) / rows;
        let plot_height = (cell_height - line).max(4);
        let charts = self.charts();
        for (index, chart) in (0i32..).zip(&charts) {
            let cx = area.x() + pad + (index % columns) * (cell_width + pad);
            let cy = top + (index / columns) * (cell_height + pad);
            let plot = Rect::new(cx, cy + line, cell_width.max(1) as u32, plot_height as u32);
            self.draw_chart(canvas, chart, plot, size, start, now)?;
        }
        Ok(())
    }

    /// The six charts, with their latest values in the titles.
    fn charts(&self) -> Vec<Chart> {
        let last = self.frames.back();
        let value = |f: fn(&Stored) -> f32| last.map_or(0.0, f);
        vec![
            Chart {
                title: format!("frame {:.1} ms", value(|s| s.sample.frame_ms)),
                series: vec![(FRAME, Style::Columns, |s| s.sample.frame_ms)],
                minimum: 20.0,
            },
            Chart {
                title: format!("ticks/frame {}", value(|s| s.sample.steps as f32)),
                series: vec![(STEPS, Style::Columns, |s| s.sample.steps as f32)],
                minimum: 2.0,
            },
            Chart {
                title: format!(
                    "rtt {:.0} ms  jitter {:.1}",
                    value(|s| s.sample.rtt_ms),
                    value(|s| s.sample.jitter_ms)
                ),
                series: vec![
                    (RTT, Style::Line, |s| s.sample.rtt_ms),
                    (JITTER, Style::Line, |s| s.sample.jitter_ms),
                ],
                minimum: 10.0,
            },
            Chart {
                title: format!(
                    "delay {}  playout {}",
                    value(|s| s.sample.delay as f32),
                    value(|s| f32::from(s.sample.playout))
                ),
                series: vec![
                    (DELAY, Style::Line, |s| s.sample.delay as f32),
                    (PLAYOUT, Style::Line, |s| f32::from(s.sample.playout)),
                ],
                minimum: 5.0,
            },
            Chart {
                title: format!("held {}  stalls", value(|s| s.sample.held as f32)),
                series: vec![
                    (HELD, Style::Columns, |s| s.sample.held as f32),
                    (Mark::Stall.colour(), Style::Stall, |s| {
                        if s.sample.stalled {
                            1.0
                        } else {
                            0.0
                        }
                    }),
                ],
                minimum: 4.0,
            },
            Chart {
                title: format!(
                    "in {:.1} out {:.1} KB/s",
                    value(|s| s.rx_rate / 1000.0),
                    value(|s| s.tx_rate / 1000.0)
                ),
                series: vec![
                    (RTT, Style::Line, |s| s.rx_rate / 1000.0),
                    (OUT, Style::Line, |s| s.tx_rate / 1000.0),
                ],
                minimum: 1.0,
            },
        ]
    }

    fn draw_chart(
        &self,
        canvas: &mut WindowCanvas,
        chart: &Chart,
        plot: Rect,
        size: i32,
        start: f64,
        now: f64,
    ) -> Result<(), String> {
        let colour = chart.series.first().map_or(HUD_TEXT, |s| s.0);
        let columns = plot.width();
        let values: Vec<Vec<Option<f32>>> = chart
            .series
            .iter()
            .map(|&(_, _, get)| {
                chart::bucket(
                    self.frames.iter().map(|f| (f.at, get(f))),
                    start,
                    now,
                    columns,
                )
            })
            .collect();
        let largest = chart
            .series
            .iter()
            .zip(&values)
            .filter(|((_, style, _), _)| *style != Style::Stall)
            .flat_map(|(_, v)| v.iter().flatten())
            .fold(chart.minimum, |a, &b| a.max(b));
        let scale = chart::nice_scale(largest);
        let title = format!("{}  (0-{scale})", chart.title);
        text(
            canvas,
            plot.x(),
            plot.y() - (GLYPH + 2) * size,
            size,
            &title,
            colour,
        )?;
        chart::background(canvas, plot)?;
        for ((colour, style, _), values) in chart.series.iter().zip(&values) {
            match style {
                Style::Columns => chart::columns(canvas, plot, values, scale, *colour)?,
                Style::Line => chart::line(canvas, plot, values, scale, *colour)?,
                Style::Stall => {
                    let lane = Rect::new(plot.x(), plot.bottom() - 3, plot.width(), 3);
                    let stalls: Vec<Option<f32>> =
                        values.iter().map(|v| v.filter(|&v| v > 0.0)).collect();
                    chart::columns(canvas, lane, &stalls, 1.0, *colour)?;
                }
            }
        }
        for &(at, mark) in &self.marks {
            if let Some(x) = chart::column_of(at, start, now, columns) {
                chart::marker(canvas, plot, x as i32, mark.colour())?;
            }
        }
        Ok(())
    }
}

/// Frame time columns: the lab's light blue.
const FRAME: Color = Color::RGB(110, 210, 255);
/// Ticks per frame: the lab's amber.
const STEPS: Color = Color::RGB(255, 176, 64);
/// RTT, and bytes in.
const RTT: Color = Color::RGB(90, 160, 255);
/// Jitter.
const JITTER: Color = Color::RGB(120, 230, 120);
/// Input delay.
const DELAY: Color = Color::RGB(230, 230, 120);
/// Playout delay.
const PLAYOUT: Color = Color::RGB(200, 140, 230);
/// Bundles held.
const HELD: Color = Color::RGB(80, 200, 190);
/// Bytes out.
const OUT: Color = Color::RGB(240, 150, 90);

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    /// One bar per column.
    Columns,
    /// A line through the columns.
    Line,
    /// A red lane along the bottom where the value is not 0.
    Stall,
}

/// A series of a chart: its colour, its style and how to read its value
/// off a frame.
type Series = (Color, Style, fn(&Stored) -> f32);

/// One chart of the graph.
struct Chart {
    title: String,
    series: Vec<Series>,
    /// The smallest top of the scale, so an idle chart is not all noise.
    minimum: f32,
}

/// The marks for what changed from `last` to `now`. A stall is marked as
/// it begins, not for every frame of it.
fn changes(last: &Observed, now: &Observed) -> Vec<Mark> {
    let mut marks = Vec::new();
    if now.stalled && !last.stalled {
        marks.push(Mark::Stall);
    }
    if now.delay != last.delay {
        marks.push(Mark::DelayChange);
    }
    if now.waiting_for_peer && !last.waiting_for_peer {
        marks.push(Mark::LagWarning);
    }
    if now.players < last.players {
        marks.push(Mark::Drop);
    }
    if now.players > last.players {
        marks.push(Mark::Rejoin);
    }
    if now.desync && !last.desync {
        marks.push(Mark::Desync);
    }
    if now.replaced > last.replaced {
        marks.push(Mark::Substituted);
    }
    if now.speed != last.speed {
        marks.push(Mark::Speed);
    }
    marks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn observed() -> Observed {
        Observed {
            delay: 3,
            waiting_for_peer: false,
            players: 3,
            desync: false,
            replaced: 0,
            speed: 100,
            stalled: false,
        }
    }

    #[test]
    fn every_kind_of_change_is_marked_once() {
        let base = observed();
        assert!(changes(&base, &base).is_empty());
        let cases = [
            (
                Observed {
                    stalled: true,
                    ..base
                },
                Mark::Stall,
            ),
            (Observed { delay: 4, ..base }, Mark::DelayChange),
            (
                Observed {
                    waiting_for_peer: true,
                    ..base
                },
                Mark::LagWarning,
            ),
            (Observed { players: 2, ..base }, Mark::Drop),
            (Observed { players: 4, ..base }, Mark::Rejoin),
            (
                Observed {
                    desync: true,
                    ..base
                },
                Mark::Desync,
            ),
            (
                Observed {
                    replaced: 2,
                    ..base
                },
                Mark::Substituted,
            ),
            (Observed { speed: 50, ..base }, Mark::Speed),
        ];
        for (now, mark) in cases {
            assert_eq!(changes(&base, &now), vec![mark]);
            // A state that lasts is not marked again.
            if mark != Mark::DelayChange && mark != Mark::Speed {
                assert!(changes(&now, &now).is_empty(), "{mark:?}");
            }
        }
    }

    #[test]
    fn the_graph_keeps_ten_seconds_of_frames_and_marks() {
        let mut graph = NetGraph::new(false);
        let sample = FrameSample::default();
        graph.record(0.0, sample, observed());
        graph.record(
            1.0,
            sample,
            Observed {
                stalled: true,
                ..observed()
            },
        );
        for i in 2..=90 {
            graph.record(f64::from(i) * 0.1 + 1.0, sample, observed());
        }
        assert_eq!(graph.marks().count(), 1);
        graph.record(11.5, sample, observed());
        assert_eq!(graph.marks().count(), 0, "the stall is over 10 s old");
        assert!(graph.frames.front().is_some_and(|f| f.at >= 1.5));
    }

    #[test]
    fn byte_rates_are_counted_over_half_seconds() {
        let mut graph = NetGraph::new(true);
        let at = |rx: u64, tx: u64| FrameSample {
            rx_bytes: rx,
            tx_bytes: tx,
            ..FrameSample::default()
        };
        graph.record(0.0, at(1_000, 500), observed());
        graph.record(0.25, at(2_000, 600), observed());
        assert_eq!(graph.rates, (0.0, 0.0));
        graph.record(0.5, at(6_000, 1_500), observed());
        assert_eq!(graph.rates, (10_000.0, 2_000.0));
        assert_eq!(graph.frames.back().map(|f| f.rx_rate), Some(10_000.0));
    }

    #[test]
    fn the_graph_sits_at_the_bottom_of_small_windows_too() {
        let area = NetGraph::area((640, 360));
        assert!(area.bottom() <= 360);
        assert!(area.height() >= 190, "{area:?}");
        assert_eq!(area.width(), 632);
    }
}
