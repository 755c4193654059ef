//! Strip charts, shared by the loop lab, the in-game net graph and the
//! report picture: bars and lines of values over time, scales that grow
//! in steps, and event markers on a common time axis.
//!
//! Drawing is generic over the render target, so the same code draws into
//! a window and into an offscreen software surface (the report runs
//! without a display). Time and values are mapped to pixel columns by the
//! pure functions at the bottom ([`column_of`], [`bucket`],
//! [`nice_scale`]), which the tests pin.

use sdl2::pixels::Color;
use sdl2::rect::{Point, Rect};
use sdl2::render::{Canvas, RenderTarget};

/// The cap on a bar that does not fit the largest scale.
pub const CLIPPED: Color = Color::RGB(255, 70, 70);
/// Plot backgrounds, a shade lighter than the backing around them.
pub const PLOT: Color = Color::RGB(28, 30, 40);
/// Faint grid lines inside a plot.
pub const GRID: Color = Color::RGB(58, 62, 78);

/// The kinds of event marker, one colour each, the same in the net graph,
/// the report picture and the replay timeline, so a colour means one thing
/// everywhere. The colours are saturated and far from the player colours
/// and from every series colour, so a test can find a marker by colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mark {
    /// A due tick had to wait for its bundle.
    Stall,
    /// The input delay (or the playout delay) changed.
    DelayChange,
    /// The server said it waits for a peer.
    LagWarning,
    /// A player was dropped or left.
    Drop,
    /// A player came back.
    Rejoin,
    /// Hashes differed.
    Desync,
    /// The server stood in for an input (ours, in the net graph).
    Substituted,
    /// The game speed changed.
    Speed,
    /// A goal.
    Goal,
}

impl Mark {
    /// Every kind, in legend order.
    pub const ALL: [Mark; 9] = [
        Mark::Stall,
        Mark::DelayChange,
        Mark::LagWarning,
        Mark::Drop,
        Mark::Rejoin,
        Mark::Desync,
        Mark::Substituted,
        Mark::Speed,
        Mark::Goal,
    ];

    /// The marker's colour.
    pub fn colour(self) -> Color {
        match self {
            Mark::Stall => Color::RGB(190, 50, 50),
            Mark::DelayChange => Color::RGB(255, 255, 0),
            Mark::LagWarning => Color::RGB(255, 128, 0),
            Mark::Drop => Color::RGB(255, 0, 0),
            Mark::Rejoin => Color::RGB(0, 255, 128),
            Mark::Desync => Color::RGB(255, 0, 255),
            Mark::Substituted => Color::RGB(160, 100, 255),
            Mark::Speed => Color::RGB(0, 255, 255),
            Mark::Goal => Color::RGB(255, 255, 255),
        }
    }

    /// The word in the legend.
    pub fn label(self) -> &'static str {
        match self {
            Mark::Stall => "stall",
            Mark::DelayChange => "delay",
            Mark::LagWarning => "lag",
            Mark::Drop => "drop",
            Mark::Rejoin => "rejoin",
            Mark::Desync => "desync",
            Mark::Substituted => "stand-in",
            Mark::Speed => "speed",
            Mark::Goal => "goal",
        }
    }
}

/// Bars of `(value, scale)` from the left edge of `rect`, `bar_width`
/// pixels each, over the plot background, with a gap of one pixel between
/// bars when there is room. A bar past its scale is capped in red.
pub fn bars<T: RenderTarget>(
    canvas: &mut Canvas<T>,
    rect: Rect,
    bar_width: i32,
    bars: &[(u64, u64)],
    colour: Color,
) -> Result<(), String> {
    canvas.set_draw_color(PLOT);
    canvas.fill_rect(rect)?;
    let drawn_width = if bar_width > 2 {
        bar_width - 1
    } else {
        bar_width
    };
    for (index, &(value, scale)) in (0..).zip(bars) {
        let (height, clipped) = bar_height(value, scale, rect.height());
        if height == 0 {
            continue;
        }
        let x = rect.x() + index * bar_width;
        let top = rect.bottom() - height as i32;
        canvas.set_draw_color(colour);
        canvas.fill_rect(Rect::new(x, top, drawn_width as u32, height))?;
        if clipped {
            canvas.set_draw_color(CLIPPED);
            canvas.fill_rect(Rect::new(x, top, drawn_width as u32, 3.min(height)))?;
        }
    }
    Ok(())
}

/// One-pixel bars, one per column of `rect`, for values on a `0..scale`
/// axis (no background: call [`background`] first). Columns without a
/// value stay empty.
pub fn columns<T: RenderTarget>(
    canvas: &mut Canvas<T>,
    rect: Rect,
    values: &[Option<f32>],
    scale: f32,
    colour: Color,
) -> Result<(), String> {
    canvas.set_draw_color(colour);
    for (x, value) in (rect.x()..).zip(values.iter().take(rect.width() as usize)) {
        let Some(y) = value.map(|v| y_of(v, scale, rect)) else {
            continue;
        };
        if y < rect.bottom() - 1 {
            canvas.draw_line(Point::new(x, y), Point::new(x, rect.bottom() - 1))?;
        }
    }
    Ok(())
}

/// A line through the values of the columns of `rect` on a `0..scale`
/// axis (cut at the top and bottom), straight across columns without a
/// value: samples are sparser than pixels.
pub fn line<T: RenderTarget>(
    canvas: &mut Canvas<T>,
    rect: Rect,
    values: &[Option<f32>],
    scale: f32,
    colour: Color,
) -> Result<(), String> {
    canvas.set_draw_color(colour);
    let mut last: Option<Point> = None;
    for (x, value) in (rect.x()..).zip(values.iter().take(rect.width() as usize)) {
        let point = value.map(|v| Point::new(x, y_of(v, scale, rect)));
        match (last, point) {
            (Some(a), Some(b)) => canvas.draw_line(a, b)?,
            (None, Some(b)) => canvas.draw_point(b)?,
            (_, None) => continue,
        }
        last = point;
    }
    Ok(())
}

/// The plot background of `rect`, with a faint line at half the scale.
pub fn background<T: RenderTarget>(canvas: &mut Canvas<T>, rect: Rect) -> Result<(), String> {
    canvas.set_draw_color(PLOT);
    canvas.fill_rect(rect)?;
    let middle = rect.y() + rect.height() as i32 / 2;
    canvas.set_draw_color(GRID);
    canvas.draw_line(
        Point::new(rect.left(), middle),
        Point::new(rect.right() - 1, middle),
    )
}

/// A horizontal line across `rect` at `value` on a `0..scale` axis, if it
/// is on the chart.
pub fn level<T: RenderTarget>(
    canvas: &mut Canvas<T>,
    rect: Rect,
    value: u64,
    scale: u64,
    colour: Color,
) -> Result<(), String> {
    let (height, clipped) = bar_height(value, scale, rect.height());
    if clipped {
        return Ok(());
    }
    let y = rect.bottom() - height as i32;
    canvas.set_draw_color(colour);
    canvas.draw_line(Point::new(rect.left(), y), Point::new(rect.right() - 1, y))
}

/// An event marker: a vertical line two pixels wide at column `x` of
/// `rect`, from top to bottom, so markers line up across stacked charts.
pub fn marker<T: RenderTarget>(
    canvas: &mut Canvas<T>,
    rect: Rect,
    x: i32,
    colour: Color,
) -> Result<(), String> {
    canvas.set_draw_color(colour);
    let x = rect.x() + x.clamp(0, rect.width().saturating_sub(2) as i32);
    canvas.fill_rect(Rect::new(x, rect.y(), 2, rect.height()))
}

/// The pixel row of `value` on a `0..scale` axis in `rect`, kept inside.
fn y_of(value: f32, scale: f32, rect: Rect) -> i32 {
    let height = rect.height().saturating_sub(1) as f32;
    let share = if scale > 0.0 { value / scale } else { 0.0 };
    let share = if share.is_finite() {
        share.clamp(0.0, 1.0)
    } else {
        0.0
    };
    rect.bottom() - 1 - (share * height).round() as i32
}

/// The smallest of `scales` that is at least `largest`, or the largest of
/// them.
pub fn scale_for<T: Copy + PartialOrd>(scales: &[T], largest: T) -> T {
    scales
        .iter()
        .copied()
        .find(|&scale| scale >= largest)
        .or_else(|| scales.last().copied())
        .unwrap_or(largest)
}

/// Pixels of a bar for `value` on a `0..scale` axis `height` pixels high,
/// and whether it had to be cut at the top.
pub fn bar_height(value: u64, scale: u64, height: u32) -> (u32, bool) {
    let full = u64::from(height);
    let pixels = value.saturating_mul(full) / scale.max(1);
    if pixels > full {
        (height, true)
    } else {
        (pixels as u32, false)
    }
}

/// A round top for an axis whose largest value is `largest`: 1, 2 or 5
/// times a power of ten, at least `largest` (and at least 1, so an idle
/// chart keeps a scale). Steps, not the exact maximum, so the scale does
/// not breathe with every sample.
pub fn nice_scale(largest: f32) -> f32 {
    if !largest.is_finite() || largest <= 1.0 {
        return 1.0;
    }
    let mut decade = 1.0f32;
    while decade * 10.0 < largest {
        decade *= 10.0;
    }
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * decade)
        .find(|&top| top >= largest)
        .unwrap_or(decade * 10.0)
}

/// The column, of `columns` spanning the time `start..end`, that time `t`
/// falls in; `None` outside the span.
pub fn column_of(t: f64, start: f64, end: f64, columns: u32) -> Option<u32> {
    if columns == 0 || end <= start || !(start..=end).contains(&t) {
        return None;
    }
    let share = (t - start) / (end - start);
    Some(((share * f64::from(columns)) as u32).min(columns - 1))
}

/// Time-stamped `points` put into `columns` columns spanning `start..end`:
/// the largest value that fell in each column (the worst moment is what a
/// chart of lag must not hide), `None` where none did.
pub fn bucket(
    points: impl IntoIterator<Item = (f64, f32)>,
    start: f64,
    end: f64,
    columns: u32,
) -> Vec<Option<f32>> {
    let mut out = vec![None; columns as usize];
    for (t, value) in points {
        if let Some(column) = column_of(t, start, end, columns) {
            let slot = &mut out[column as usize];
            *slot = Some(slot.map_or(value, |v: f32| v.max(value)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scale_is_the_smallest_that_fits() {
        let scales = [20u64, 50, 100];
        assert_eq!(scale_for(&scales, 17), 20);
        assert_eq!(scale_for(&scales, 20), 20);
        assert_eq!(scale_for(&scales, 21), 50);
        assert_eq!(scale_for(&scales, 60_000), 100);
    }

    #[test]
    fn bars_are_proportional_and_cut_at_the_top() {
        assert_eq!(bar_height(25, 50, 100), (50, false));
        assert_eq!(bar_height(50, 50, 100), (100, false));
        assert_eq!(bar_height(0, 50, 100), (0, false));
        assert_eq!(bar_height(51, 50, 100), (100, true));
        // A zero scale is taken as 1, not divided by.
        assert_eq!(bar_height(1, 0, 100), (100, false));
    }

    #[test]
    fn nice_scales_step_through_one_two_five() {
        assert_eq!(nice_scale(0.0), 1.0);
        assert_eq!(nice_scale(f32::NAN), 1.0);
        assert_eq!(nice_scale(1.5), 2.0);
        assert_eq!(nice_scale(3.0), 5.0);
        assert_eq!(nice_scale(7.0), 10.0);
        assert_eq!(nice_scale(10.0), 10.0);
        assert_eq!(nice_scale(11.0), 20.0);
        assert_eq!(nice_scale(480.0), 500.0);
        assert_eq!(nice_scale(501.0), 1000.0);
    }

    #[test]
    fn times_map_to_columns_inside_the_span_only() {
        assert_eq!(column_of(0.0, 0.0, 10.0, 100), Some(0));
        assert_eq!(column_of(5.0, 0.0, 10.0, 100), Some(50));
        assert_eq!(column_of(10.0, 0.0, 10.0, 100), Some(99));
        assert_eq!(column_of(-0.1, 0.0, 10.0, 100), None);
        assert_eq!(column_of(10.1, 0.0, 10.0, 100), None);
        assert_eq!(column_of(1.0, 0.0, 10.0, 0), None);
        assert_eq!(column_of(1.0, 5.0, 5.0, 10), None);
        assert_eq!(column_of(f64::NAN, 0.0, 10.0, 10), None);
    }

    #[test]
    fn a_column_keeps_its_largest_value() {
        let points = [(0.1, 3.0), (0.2, 7.0), (0.15, 1.0), (5.0, 2.0), (11.0, 9.0)];
        let columns = bucket(points, 0.0, 10.0, 10);
        assert_eq!(columns.len(), 10);
        assert_eq!(columns[0], Some(7.0));
        assert_eq!(columns[5], Some(2.0));
        assert_eq!(columns.iter().flatten().count(), 2);
    }

    #[test]
    fn values_map_to_rows_inside_the_plot() {
        let rect = Rect::new(0, 10, 50, 21);
        assert_eq!(y_of(0.0, 10.0, rect), 30);
        assert_eq!(y_of(10.0, 10.0, rect), 10);
        assert_eq!(y_of(5.0, 10.0, rect), 20);
        assert_eq!(y_of(50.0, 10.0, rect), 10);
        assert_eq!(y_of(-5.0, 10.0, rect), 30);
        assert_eq!(y_of(f32::INFINITY, 0.0, rect), 30);
    }
}
