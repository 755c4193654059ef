//! Input slack: how long before it was needed each input reached the
//! server, the measure every client's input delay is set from (Quantum's
//! input offset, ggrs's frame advantage).
//!
//! The clients' clocks start when Start reaches them, so each runs behind
//! the server's by its one-way delay, and a bundle sent at the server's
//! time for tick `t` reaches every client just as it steps `t`, whatever
//! its link. An input for `t` is therefore needed at the game's start plus
//! `t + 1` ticks on the server's clock ([`Schedule::needed`]); the slack
//! of an input is that instant minus its arrival. A client's delay adds a
//! whole tick of slack per tick of delay, so it can read off how far it
//! may go down, or must go up, from its own slack alone, and a late peer
//! changes nobody's slack but its own.

use std::collections::VecDeque;
use std::time::Duration;

use lockstep_protocol::{Slack, Tick};

/// Inputs a player's slack is taken over: 4 s at 60 Hz, long enough that
/// one hiccup is a small share of it.
pub const SLACK_WINDOW: usize = 240;

/// When each tick is needed, on the server's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    start: Duration,
    tick: Duration,
    /// Ticks of the first second, whose inputs are not timed.
    warmup: u32,
}

impl Schedule {
    /// The schedule of a game that started at `start` at `tick_rate`.
    pub fn new(start: Duration, tick_rate: u16) -> Schedule {
        Schedule {
            start,
            tick: Duration::from_secs(1) / u32::from(tick_rate.max(1)),
            warmup: u32::from(tick_rate),
        }
    }

    /// Whether the input for `tick` is timed: not in the game's first
    /// second, while windows open and clocks settle, so a slow start
    /// does not raise a delay for the whole game.
    pub fn times(&self, tick: Tick) -> bool {
        tick.0 >= self.warmup
    }

    /// When the clients step `tick`: its bundle must leave by then.
    pub fn needed(&self, tick: Tick) -> Duration {
        self.start + self.tick * tick.0.saturating_add(1)
    }
}

/// One player's slack over its last [`SLACK_WINDOW`] inputs.
#[derive(Debug, Clone, Default)]
pub struct SlackWindow {
    /// Input tick and slack in microseconds (negative: late), oldest
    /// first.
    samples: VecDeque<(Tick, i64)>,
}

impl SlackWindow {
    /// Records the arrival at `arrived` of the input for `tick`.
    pub fn record(&mut self, schedule: &Schedule, tick: Tick, arrived: Duration) {
        if !schedule.times(tick) {
            return;
        }
        let needed = schedule.needed(tick);
        let slack = if needed >= arrived {
            micros(needed - arrived)
        } else {
            -micros(arrived - needed)
        };
        if self.samples.len() == SLACK_WINDOW {
            self.samples.pop_front();
        }
        self.samples.push_back((tick, slack));
    }

    /// The least and the 10th-percentile slack, from the oldest input
    /// counted; `None` before the first input.
    pub fn report(&self) -> Option<Slack> {
        let from = self.samples.iter().map(|&(tick, _)| tick).min()?;
        let mut slacks: Vec<i64> = self.samples.iter().map(|&(_, slack)| slack).collect();
        slacks.sort_unstable();
        Some(Slack {
            from,
            min_ms: millis(slacks[0]),
            p10_ms: millis(slacks[slacks.len() / 10]),
        })
    }
}

fn micros(d: Duration) -> i64 {
    i64::try_from(d.as_micros()).unwrap_or(i64::MAX)
}

/// Microseconds to whole milliseconds, rounded down (a slack of -0.3 ms
/// is late: -1), clamped to what an `i16` holds.
fn millis(us: i64) -> i16 {
    us.div_euclid(1000)
        .clamp(i64::from(i16::MIN), i64::from(i16::MAX)) as i16
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn a_tick_is_needed_one_tick_after_its_start_on_the_server_clock() {
        let schedule = Schedule::new(Duration::from_secs(10), 50);
        assert_eq!(schedule.needed(Tick(0)), Duration::from_secs(10) + 20 * MS);
        assert_eq!(schedule.needed(Tick(49)), Duration::from_secs(11));
    }

    #[test]
    fn the_report_gives_the_least_and_the_tenth_percentile_slack() {
        let schedule = Schedule::new(Duration::ZERO, 50);
        let mut window = SlackWindow::default();
        assert_eq!(window.report(), None);
        // Inputs for ticks 0..20 arrive 15 ms early, but tick 7's 2.5 ms
        // late and tick 8's 0.5 ms late.
        const US: Duration = Duration::from_micros(1);
        // The first second (50 ticks) is not timed.
        window.record(&schedule, Tick(0), Duration::from_secs(9));
        assert_eq!(window.report(), None);
        for t in 50..70u32 {
            let needed = schedule.needed(Tick(t));
            let arrived = match t {
                57 => needed + 2500 * US,
                58 => needed + 500 * US,
                _ => needed - 15 * MS,
            };
            window.record(&schedule, Tick(t), arrived);
        }
        let report = window.report().unwrap();
        assert_eq!(report.from, Tick(50));
        assert_eq!(report.min_ms, -3);
        // The 10th percentile of 20 is the third lowest.
        assert_eq!(report.p10_ms, 15, "{report:?}");
    }

    #[test]
    fn only_the_last_inputs_count() {
        let schedule = Schedule::new(Duration::ZERO, 60);
        let mut window = SlackWindow::default();
        for t in 60..(SLACK_WINDOW as u32 + 70) {
            window.record(&schedule, Tick(t), schedule.needed(Tick(t)));
        }
        let report = window.report().unwrap();
        assert_eq!(report.from, Tick(70));
        assert_eq!((report.min_ms, report.p10_ms), (0, 0));
    }
}
