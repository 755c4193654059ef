//! The lab's side panel: the ladder with the current rung marked, the
//! rules and load in force, the measured figures and the key legend.
//!
//! [`lines`] is pure (tested); [`draw`] only puts the lines on screen.

use lockstep_engine::timing::loops::{format_ms, Strategy};
use sdl2::pixels::Color;
use sdl2::rect::Rect;
use sdl2::render::WindowCanvas;

use super::history::Summary;
use super::keys;
use super::knobs::Knobs;
use crate::draw::text::{backing, printable, text, GLYPH, HUD_TEXT, PAD};

/// Characters a panel line holds; the panel is this wide.
pub const COLUMNS: usize = 54;

/// How a line is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// A section heading.
    Heading,
    /// Ordinary text.
    Plain,
    /// The rung in use.
    Current,
    /// Something the user should look at: the spiral of death, slow
    /// motion, a slow frame.
    Alarm,
    /// Explanations.
    Quiet,
}

impl Tone {
    fn colour(self) -> Color {
        match self {
            Tone::Heading => Color::RGB(255, 196, 40),
            Tone::Plain => HUD_TEXT,
            Tone::Current => Color::RGB(120, 255, 140),
            Tone::Alarm => Color::RGB(255, 90, 90),
            Tone::Quiet => Color::RGB(150, 158, 176),
        }
    }
}

/// One line of the panel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// The text, at most [`COLUMNS`] characters.
    pub text: String,
    /// How it is shown.
    pub tone: Tone,
}

impl Line {
    fn new(tone: Tone, text: impl Into<String>) -> Line {
        Line {
            text: text.into(),
            tone,
        }
    }
}

/// What the loop and the frames measured, for the panel.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Readout {
    /// Figures over the last second.
    pub recent: Summary,
    /// Game time simulated since the lab started.
    pub game_ns: u64,
    /// Real time since the lab started.
    pub real_ns: u64,
    /// Real time thrown away since the lab started.
    pub discarded_ns: u64,
    /// Real time waiting in the accumulator.
    pub lag_ns: u64,
    /// Updates run this frame.
    pub steps: u32,
    /// JGameLoopStudy's counter, 1 to 10, one step per second of game time.
    pub counter: u32,
    /// Whether this frame's updates were cut short to keep drawing.
    pub cut_short: bool,
}

/// The panel, top to bottom.
pub fn lines(knobs: &Knobs, readout: &Readout) -> Vec<Line> {
    let settings = &knobs.settings;
    let mut lines = vec![Line::new(Tone::Heading, "GAME LOOP LAB: the seeds' loops")];
    for (key, strategy) in (1..).zip(Strategy::ALL) {
        let current = strategy == settings.strategy && !settings.networked;
        let mark = if current { '>' } else { ' ' };
        let text = format!("{mark}{key} {:<15} {}", strategy.name(), strategy.summary());
        lines.push(Line::new(tone_if(current, Tone::Current), text));
    }
    let mark = if settings.networked { '>' } else { ' ' };
    lines.push(Line::new(
        tone_if(settings.networked, Tone::Current),
        format!("{mark}N {:<15} no cap, no discard: the client", "networked"),
    ));
    lines.extend(wrap(settings.strategy.lesson()).map(|l| Line::new(Tone::Quiet, l)));
    if let Some(refused) = knobs.refused {
        lines.push(Line::new(Tone::Alarm, refused.short()));
    }

    lines.push(Line::new(Tone::Heading, "RULES"));
    lines.extend(rules(knobs).map(|text| Line::new(Tone::Plain, text)));

    lines.push(Line::new(Tone::Heading, "MEASURED (last second)"));
    lines.extend(figures(knobs, readout));

    lines.push(Line::new(Tone::Heading, "KEYS"));
    let legend = keys::legend();
    for pair in legend.chunks(2) {
        let [left, right] = match pair {
            [left, right] => [left.as_str(), right.as_str()],
            [left] => [left.as_str(), ""],
            _ => ["", ""],
        };
        lines.push(Line::new(Tone::Quiet, format!("{left:<27}{right}")));
    }
    lines
}

/// The rules and the load in force; "-" where the strategy has no use
/// for a rule.
fn rules(knobs: &Knobs) -> [String; 4] {
    let settings = &knobs.settings;
    let fixed = settings.strategy.fixed_steps();
    let unpaced = if settings.strategy.paced() {
        ""
    } else {
        " (unpaced)"
    };
    let max_step = match settings.max_step_ns() {
        Some(ns) => format!("{} ms", format_ms(ns, 0)),
        None if settings.networked => "off (networked)".into(),
        None => "off".into(),
    };
    let interpolation = match (fixed, settings.interpolate) {
        (false, _) => "-",
        (true, true) => "on",
        (true, false) => "off",
    };
    let max_loops = match (fixed, settings.max_loops, settings.networked) {
        (false, _, _) => "-".to_owned(),
        (true, Some(_), true) => "off (networked)".to_owned(),
        (true, Some(k), false) => format!("{k}, discarding"),
        (true, None, _) => "off".to_owned(),
    };
    [
        format!(
            "tick {} Hz ({} ms)   target {} FPS{unpaced}",
            knobs.tick_rate,
            format_ms(settings.tick_ns, 1),
            knobs.target_fps,
        ),
        format!("max step {max_step}   interpolation {interpolation}"),
        format!(
            "MAX_LOOPS {max_loops}   networked {}",
            on_off(settings.networked)
        ),
        format!(
            "bots {}   tick cost {} ms   slow \"7\" {}",
            knobs.bots,
            format_ms(knobs.tick_cost_ns, 0),
            on_off(knobs.spike)
        ),
    ]
}

/// FPS, UPS, game time against real time and the rest.
fn figures(knobs: &Knobs, readout: &Readout) -> Vec<Line> {
    let recent = &readout.recent;
    let mut lines = vec![Line::new(
        Tone::Plain,
        format!("FPS {:.1}   UPS {:.1}", recent.fps, recent.ups),
    )];
    let slow_motion = recent.speed < 0.98;
    lines.push(Line::new(
        tone_if(slow_motion, Tone::Alarm),
        format!(
            "game {:.2} s / real {:.2} s   speed {:.0}%",
            readout.game_ns as f64 / 1e9,
            readout.real_ns as f64 / 1e9,
            recent.speed * 100.0
        ),
    ));
    lines.push(Line::new(
        Tone::Plain,
        format!(
            "steps/frame {} (most {})   pending {} ms",
            readout.steps,
            recent.max_steps,
            format_ms(readout.lag_ns, 1)
        ),
    ));
    lines.push(Line::new(
        tone_if(recent.discarded_ns > 0, Tone::Alarm),
        format!(
            "discarded {} ms   in all {} ms",
            format_ms(recent.discarded_ns, 1),
            format_ms(readout.discarded_ns, 1)
        ),
    ));
    let pacing = match (knobs.settings.strategy.paced(), recent.pacing_error_ns) {
        (false, _) => "pacing: none, frames as fast as they go".to_owned(),
        (true, None) => format!("pacing: every deadline missed ({})", recent.missed),
        (true, Some((mean, worst))) => format!(
            "pacing error {} ms avg, {} worst, {} missed",
            format_ms(mean, 2),
            format_ms(worst, 2),
            recent.missed
        ),
    };
    lines.push(Line::new(Tone::Plain, pacing));
    let slow_seven = knobs.spike && readout.counter == 7;
    lines.push(Line::new(
        tone_if(slow_seven, Tone::Alarm),
        format!(
            "JGameLoopStudy counter {}{}",
            readout.counter,
            if slow_seven {
                ": slow frames (+50 ms)"
            } else {
                ""
            }
        ),
    ));
    if readout.cut_short {
        lines.push(Line::new(
            Tone::Alarm,
            format!(
                "SPIRAL OF DEATH: {} ms behind and growing",
                format_ms(readout.lag_ns, 0)
            ),
        ));
    }
    lines
}

/// `tone` when `on`, else plain.
fn tone_if(on: bool, tone: Tone) -> Tone {
    if on {
        tone
    } else {
        Tone::Plain
    }
}

fn on_off(on: bool) -> &'static str {
    if on {
        "on"
    } else {
        "off"
    }
}

/// `text` broken at spaces into lines of at most [`COLUMNS`] characters.
fn wrap(text: &str) -> impl Iterator<Item = String> + '_ {
    let mut words = text.split(' ').peekable();
    std::iter::from_fn(move || {
        let mut line = words.next()?.to_owned();
        while let Some(word) = words.next_if(|w| line.len() + 1 + w.len() <= COLUMNS) {
            line.push(' ');
            line.push_str(word);
        }
        Some(line)
    })
}

/// Draws `lines` into `area` with text at `size`.
pub fn draw(
    canvas: &mut WindowCanvas,
    area: Rect,
    size: i32,
    lines: &[Line],
) -> Result<(), String> {
    backing(canvas, area)?;
    let pad = PAD * size;
    let line_height = (GLYPH + 2) * size;
    let mut y = area.y() + pad;
    for line in lines {
        if line.tone == Tone::Heading {
            y += line_height / 2;
        }
        text(
            canvas,
            area.x() + pad,
            y,
            size,
            &printable(&line.text),
            line.tone.colour(),
        )?;
        y += line_height;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::screens::lab::knobs::Command;

    fn readout() -> Readout {
        Readout {
            recent: Summary {
                span_ns: 1_000_000_000,
                fps: 60.0,
                ups: 60.0,
                speed: 1.0,
                max_steps: 1,
                discarded_ns: 0,
                pacing_error_ns: Some((50_000, 300_000)),
                missed: 0,
            },
            game_ns: 2_000_000_000,
            real_ns: 2_000_000_000,
            discarded_ns: 0,
            lag_ns: 3_000_000,
            steps: 1,
            counter: 3,
            cut_short: false,
        }
    }

    fn knobs() -> Knobs {
        Knobs::new(Strategy::FixedInterp, 60, 60, 3, None)
    }

    fn marked(lines: &[Line]) -> Vec<&str> {
        lines
            .iter()
            .filter(|l| l.tone == Tone::Current)
            .map(|l| l.text.as_str())
            .collect()
    }

    #[test]
    fn every_line_fits_the_panel() {
        let mut knobs = knobs();
        knobs.apply(Command::MaxLoops);
        knobs.spike = true;
        let readout = Readout {
            counter: 7,
            cut_short: true,
            ..readout()
        };
        for strategy in Strategy::ALL {
            knobs.apply(Command::Strategy(strategy));
            for line in lines(&knobs, &readout) {
                assert!(line.text.len() <= COLUMNS, "{:?}", line.text);
            }
        }
    }

    #[test]
    fn the_rung_in_use_is_marked_and_networked_is_the_last_rung() {
        let mut knobs = knobs();
        assert_eq!(
            marked(&lines(&knobs, &readout())),
            [">6 fixed-interp    + interpolation"]
        );
        knobs.apply(Command::Networked);
        let marked_lines = lines(&knobs, &readout());
        let marked = marked(&marked_lines);
        assert_eq!(marked.len(), 1);
        assert!(marked[0].starts_with(">N networked"), "{marked:?}");
    }

    #[test]
    fn slow_motion_discards_and_the_spiral_are_flagged() {
        let mut readout = readout();
        let calm = lines(&knobs(), &readout);
        assert!(calm.iter().all(|l| l.tone != Tone::Alarm), "{calm:?}");
        readout.recent.speed = 0.5;
        readout.recent.discarded_ns = 10_000_000;
        readout.cut_short = true;
        let alarms: Vec<String> = lines(&knobs(), &readout)
            .into_iter()
            .filter(|l| l.tone == Tone::Alarm)
            .map(|l| l.text)
            .collect();
        assert_eq!(alarms.len(), 3, "{alarms:?}");
        assert!(alarms[2].starts_with("SPIRAL OF DEATH"), "{alarms:?}");
    }

    #[test]
    fn a_refused_strategy_is_said_in_one_line_under_the_ladder() {
        let mut knobs = knobs().fixed_only("tally").expect("fixed-interp is fixed");
        knobs.apply(Command::Strategy(Strategy::Variable));
        let shown = lines(&knobs, &readout());
        let said: Vec<&Line> = shown.iter().filter(|l| l.text.contains("tally")).collect();
        assert_eq!(said.len(), 1, "{shown:?}");
        assert_eq!(said[0].tone, Tone::Alarm);
        assert_eq!(
            marked(&shown),
            [">6 fixed-interp    + interpolation"],
            "the strategy stays"
        );
        knobs.apply(Command::Strategy(Strategy::Fixed));
        assert!(lines(&knobs, &readout())
            .iter()
            .all(|l| !l.text.contains("tally")));
    }

    #[test]
    fn game_time_is_shown_against_real_time() {
        let shown = lines(&knobs(), &readout());
        assert!(shown
            .iter()
            .any(|l| l.text == "game 2.00 s / real 2.00 s   speed 100%"));
    }

    #[test]
    fn long_text_is_wrapped_at_spaces() {
        let words = "word ".repeat(30);
        let wrapped: Vec<String> = wrap(words.trim_end()).collect();
        assert!(wrapped.iter().all(|l| l.len() <= COLUMNS));
        assert_eq!(wrapped.join(" "), words.trim_end());
    }
}
