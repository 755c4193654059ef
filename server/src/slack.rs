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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    /// Stretches of the game at one speed, by ascending first tick: from
    /// tick `from` on, tick `t` is needed at `base + (t - from + 1) *
    /// tick`.
    stretches: Vec<Stretch>,
    /// Ticks of the first second, whose inputs are not timed.
    warmup: u32,
}

/// Part of a [`Schedule`] at one speed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stretch {
    from: Tick,
    base: Duration,
    tick: Duration,
}

impl Schedule {
    /// The schedule of a game that started at `start` at `tick_rate`.
    pub fn new(start: Duration, tick_rate: u16) -> Schedule {
        Schedule {
            stretches: vec![Stretch {
                from: Tick(0),
                base: start,
                tick: Duration::from_secs(1) / u32::from(tick_rate.max(1)),
            }],
            warmup: u32::from(tick_rate),
        }
    }

    /// The same schedule for a game that runs again at `start` from tick
    /// `from` (after a restart), at the speed of its first stretch: tick
    /// `from` is needed a tick after `start`, and the first second from
    /// there is not timed.
    #[must_use]
    pub fn starting_at(self, from: Tick, start: Duration) -> Schedule {
        let tick = self.stretches[0].tick;
        let rate = Duration::from_secs(1).as_nanos() / tick.as_nanos().max(1);
        Schedule {
            stretches: vec![Stretch {
                from,
                base: start,
                tick,
            }],
            warmup: from.0.saturating_add(rate as u32),
        }
    }

    /// A change of speed, as the clients make it: from tick `from` on,
    /// ticks last `tick`, and every one is due `postpone` later. Replaces
    /// any change from `from` or later.
    pub fn change(&mut self, from: Tick, tick: Duration, postpone: Duration) {
        let base = match from.0.checked_sub(1) {
            Some(before) => self.needed(Tick(before)),
            None => self.stretches[0].base,
        };
        self.stretches.retain(|s| s.from < from);
        self.stretches.push(Stretch {
            from,
            base: base + postpone,
            tick,
        });
    }

    /// Whether the input for `tick` is timed: not in the game's first
    /// second, while windows open and clocks settle, so a slow start
    /// does not raise a delay for the whole game.
    pub fn times(&self, tick: Tick) -> bool {
        tick.0 >= self.warmup
    }

    /// When the clients step `tick`: its bundle must leave by then.
    pub fn needed(&self, tick: Tick) -> Duration {
        let stretch = self.stretch_of(tick);
        stretch.base + stretch.tick * tick.since(stretch.from).saturating_add(1)
    }

    /// The earliest a late input for `tick` may be stood in for: half a
    /// tick before it is needed. A stand-in made only when the tick is
    /// needed reaches the clients just as they step it, a hair late after
    /// any scheduling, so every one would stall them all; half a tick
    /// earlier it arrives in time. An input still missing then had less
    /// slack than the player's own safety margin, so its delay was going
    /// up anyway.
    pub fn stand_in_from(&self, tick: Tick) -> Duration {
        self.needed(tick)
            .saturating_sub(self.stretch_of(tick).tick / 2)
    }

    fn stretch_of(&self, tick: Tick) -> &Stretch {
        self.stretches
            .iter()
            .rev()
            .find(|s| s.from <= tick)
            .unwrap_or(&self.stretches[0])
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

    /// The 1st- and the 10th-percentile slack, from the oldest input
    /// counted; `None` before the first input.
    pub fn report(&self) -> Option<Slack> {
        let from = self.samples.iter().map(|&(tick, _)| tick).min()?;
        let mut slacks: Vec<i64> = self.samples.iter().map(|&(_, slack)| slack).collect();
        slacks.sort_unstable();
        Some(Slack {
            from,
            p1_ms: millis(slacks[slacks.len() / 100]),
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
    fn a_change_of_speed_stretches_the_ticks_from_its_tick_on() {
        let mut schedule = Schedule::new(Duration::ZERO, 50);
        // From tick 10 on at half speed (40 ms a tick), 100 ms later.
        schedule.change(Tick(10), 40 * MS, 100 * MS);
        assert_eq!(schedule.needed(Tick(9)), 200 * MS);
        assert_eq!(schedule.needed(Tick(10)), 340 * MS);
        assert_eq!(schedule.needed(Tick(12)), 420 * MS);
        // Back to full speed from tick 20, with no postponement; an
        // announcement for a later tick replaces nothing before it.
        schedule.change(Tick(20), 20 * MS, Duration::ZERO);
        assert_eq!(schedule.needed(Tick(19)), 700 * MS);
        assert_eq!(schedule.needed(Tick(21)), 740 * MS);
        // A new announcement for tick 15 replaces the one for 20.
        schedule.change(Tick(15), 20 * MS, Duration::ZERO);
        assert_eq!(schedule.needed(Tick(19)), 600 * MS);
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
        assert_eq!(report.p1_ms, -3);
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
        assert_eq!((report.p1_ms, report.p10_ms), (0, 0));
    }
}
