//! The run's figures, for the record (BENCHMARKS.md) rather than for the
//! verdict: how long each kind of fault took to get its answer, where the
//! game stood still, how the game kept pace with real time, and how much
//! memory each server process held at its peak.
//!
//! The run feeds it as it polls ([`Figures::observe`],
//! [`Figures::sample_server`]); [`Figures::lines`] puts it in words at the
//! end, `figures:` lines after the history.

use std::time::Duration;

use crate::history::Entry;
use crate::schedule::{Kind, TICK_RATE};

/// The shortest standstill of the game counted as a stall: a tick is
/// 1/60 s, so a second without one is a pause a player sees.
pub const STALL: Duration = Duration::from_secs(1);

/// A stretch of real time in which the game's tick did not move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stall {
    /// When it began, real time since the game started.
    pub from: Duration,
    /// How long the game stood still.
    pub length: Duration,
    /// The tick it stood at.
    pub tick: u32,
}

/// What the run measured.
#[derive(Debug, Clone, Default)]
pub struct Figures {
    /// The game's tick at the last observation, and when it last moved;
    /// none before the first observation.
    moved: Option<(u32, Duration)>,
    /// Every stall, in order.
    pub stalls: Vec<Stall>,
    /// Each server process's peak resident memory (`VmHWM`) in KiB as
    /// last sampled, by generation from 1.
    pub server_peak_kib: Vec<u64>,
    /// The last tick seen and when, for the game's pace.
    pub last: (u32, Duration),
}

impl Figures {
    /// The game stood at `tick` at `at` (real time since it started).
    pub fn observe(&mut self, tick: u32, at: Duration) {
        let Some((last, moved)) = self.moved else {
            self.moved = Some((tick, at));
            return;
        };
        if tick > last {
            let length = at.saturating_sub(moved);
            if length >= STALL {
                self.stalls.push(Stall {
                    from: moved,
                    length,
                    tick: last,
                });
            }
            self.moved = Some((tick, at));
            self.last = (tick, at);
        }
    }

    /// Server process `generation` (from 1) has peaked at `kib` so far.
    pub fn sample_server(&mut self, generation: u32, kib: u64) {
        let index = generation.saturating_sub(1) as usize;
        if self.server_peak_kib.len() <= index {
            self.server_peak_kib.resize(index + 1, 0);
        }
        let peak = &mut self.server_peak_kib[index];
        *peak = (*peak).max(kib);
    }

    /// The figures in words, one `figures:` line each: the answer times
    /// per kind of `entries`, the stalls (and which fault each fell in),
    /// the pace and the server's memory.
    pub fn lines(&self, entries: &[Entry]) -> Vec<String> {
        let mut lines = Vec::new();
        for kind in Kind::ALL {
            let mut took: Vec<Duration> = entries
                .iter()
                .filter(|e| e.fault.kind() == kind && e.answered())
                .map(|e| e.took)
                .collect();
            let done = entries.iter().filter(|e| e.fault.kind() == kind).count();
            took.sort_unstable();
            let (Some(median), Some(worst)) = (took.get((took.len().max(1) - 1) / 2), took.last())
            else {
                lines.push(format!("figures: {} n={done} answered=0", kind.name()));
                continue;
            };
            lines.push(format!(
                "figures: {} n={done} answered={} median={:.1}s worst={:.1}s",
                kind.name(),
                took.len(),
                median.as_secs_f64(),
                worst.as_secs_f64()
            ));
        }
        let longest = self.stalls.iter().map(|s| s.length).max();
        let mut during: Vec<String> = Vec::new();
        for kind in Kind::ALL {
            let n = self
                .stalls
                .iter()
                .filter(|s| within(s, entries).is_some_and(|k| k == kind))
                .count();
            if n > 0 {
                during.push(format!("{}:{n}", kind.name()));
            }
        }
        let outside = self
            .stalls
            .iter()
            .filter(|s| within(s, entries).is_none())
            .count();
        during.push(format!("none:{outside}"));
        lines.push(format!(
            "figures: stalls n={} (at least {} s) longest={:.1}s during={}",
            self.stalls.len(),
            STALL.as_secs(),
            longest.unwrap_or_default().as_secs_f64(),
            during.join(",")
        ));
        for stall in &self.stalls {
            lines.push(format!(
                "figures: stall at {:.1} s tick {} for {:.1} s{}",
                stall.from.as_secs_f64(),
                stall.tick,
                stall.length.as_secs_f64(),
                within(stall, entries).map_or(String::new(), |k| format!(" ({})", k.name()))
            ));
        }
        let (ticks, at) = self.last;
        let pace = if at.is_zero() {
            0.0
        } else {
            f64::from(ticks) / f64::from(TICK_RATE) / at.as_secs_f64()
        };
        lines.push(format!(
            "figures: pace={pace:.3} ({ticks} ticks in {:.1} s)",
            at.as_secs_f64()
        ));
        let mib = |kib: u64| kib as f64 / 1024.0;
        let peaks: Vec<String> = self
            .server_peak_kib
            .iter()
            .map(|k| format!("{:.1}", mib(*k)))
            .collect();
        lines.push(format!(
            "figures: server memory peak={:.1}MiB per process={} MiB",
            mib(self.server_peak_kib.iter().copied().max().unwrap_or(0)),
            peaks.join(",")
        ));
        lines
    }
}

/// The kind of the fault whose span (from when it was done until its
/// answer) the stall began in, if any; the latest such fault.
fn within(stall: &Stall, entries: &[Entry]) -> Option<Kind> {
    entries
        .iter()
        .rev()
        .find(|e| stall.from + STALL >= e.at && stall.from <= e.at + e.took)
        .map(|e| e.fault.kind())
}

/// A process's peak resident memory in KiB (`VmHWM` in
/// `/proc/PID/status`), if it is still there to ask.
pub fn peak_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule::{Bot, Fault};

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    fn entry(fault: Fault, at: f64, took: f64, answered: bool) -> Entry {
        Entry {
            number: 1,
            fault,
            at: secs(at),
            tick: 0,
            end_tick: 0,
            said: Vec::new(),
            took: secs(took),
            answer: if answered {
                Ok(String::new())
            } else {
                Err("missing".into())
            },
        }
    }

    #[test]
    fn a_stall_is_a_second_or_more_without_a_new_tick() {
        let mut figures = Figures::default();
        figures.observe(60, secs(1.0));
        figures.observe(90, secs(1.5));
        figures.observe(120, secs(2.0));
        // Nothing new for 0.9 s: no stall.
        figures.observe(120, secs(2.9));
        figures.observe(130, secs(2.9));
        // Standing still from 2.9 s to 6.4 s at tick 130.
        figures.observe(130, secs(5.0));
        figures.observe(131, secs(6.4));
        assert_eq!(
            figures.stalls,
            vec![Stall {
                from: secs(2.9),
                length: secs(3.5),
                tick: 130
            }]
        );
        assert_eq!(figures.last, (131, secs(6.4)));
    }

    #[test]
    fn answer_times_are_told_by_kind_and_stalls_by_the_fault_they_fell_in() {
        let mut figures = Figures::default();
        figures.observe(600, secs(10.0));
        figures.observe(900, secs(20.0));
        figures.observe(7200, secs(121.0));
        figures.sample_server(1, 20_480);
        figures.sample_server(2, 10_240);
        figures.sample_server(1, 10_240);
        let kill = Fault::Kill { bot: Bot(1) };
        let server = Fault::Server { down_ms: 500 };
        let entries = [
            entry(kill, 1.0, 3.0, true),
            entry(kill, 30.0, 1.0, true),
            entry(kill, 50.0, 2.0, true),
            entry(kill, 70.0, 9.0, false),
            entry(server, 9.5, 8.0, true),
        ];
        let lines = figures.lines(&entries);
        assert_eq!(
            lines[0],
            "figures: kill n=4 answered=3 median=2.0s worst=3.0s"
        );
        assert_eq!(lines[1], "figures: stop n=0 answered=0");
        assert_eq!(
            lines[4],
            "figures: server n=1 answered=1 median=8.0s worst=8.0s"
        );
        assert_eq!(
            lines[6],
            "figures: stalls n=2 (at least 1 s) longest=101.0s during=server:1,none:1"
        );
        assert_eq!(
            lines[7],
            "figures: stall at 10.0 s tick 600 for 10.0 s (server)"
        );
        assert_eq!(lines[8], "figures: stall at 20.0 s tick 900 for 101.0 s");
        assert_eq!(lines[9], "figures: pace=0.992 (7200 ticks in 121.0 s)");
        assert_eq!(
            lines[10],
            "figures: server memory peak=20.0MiB per process=20.0,10.0 MiB"
        );
    }

    #[test]
    fn this_process_has_a_peak_and_a_gone_one_has_none() {
        assert!(peak_kib(std::process::id()).is_some_and(|k| k > 0));
        assert_eq!(peak_kib(u32::MAX), None);
    }
}
