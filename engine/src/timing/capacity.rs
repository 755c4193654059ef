//! How fast this machine can run the game: the capacity a player reports
//! to the server, which slows the game down for everyone when one machine
//! cannot keep up ([`ClientMessage::Capacity`]).
//!
//! The frontend times the part of each frame that runs ticks (the
//! simulation and everything a tick costs besides: recording, sampling and
//! sending the input) and passes it in with the frame's real time. Waiting
//! for the next tick or for a bundle is not counted, so the figure says
//! what the machine could do, not what the game asked of it:
//!
//! ```text
//! capacity = ticks run × nominal tick length / time spent running them
//! ```
//!
//! as a share of the nominal tick rate: 100% just keeps up, 50% is a
//! machine that needs two ticks' time for every tick, and a fast machine
//! reports thousands. Drawing is left out on purpose: the loop draws once
//! per frame however many ticks it runs, so a slow draw costs frames per
//! second, not ticks per second.
//!
//! A machine that stopped (a frozen process, a suspended laptop, a
//! debugger) is not a slow one: a stop that falls among a frame's ticks
//! would count as work, and a window of a few ticks and two seconds of
//! "work" reports a capacity of a few percent, for which the server slows
//! the game to its floor and postpones everyone's schedule by a minute.
//! So a frame whose ticks, or whose wait since the last frame, took
//! [`STOPPED_TICKS`] ticks' time or more ends the window unreported.
//!
//! Pure: given durations, it answers once per [`REPORT_EVERY`] of real
//! time in which ticks ran.
//!
//! [`ClientMessage::Capacity`]: lockstep_protocol::ClientMessage::Capacity

use std::time::Duration;

use lockstep_protocol::Percent;

/// How often the capacity is measured and reported: four times a second.
/// Every tick the game runs at full speed before a slow machine is noticed
/// makes the others wait, so the first report must come soon; a window of
/// 15 ticks at 60 Hz still averages out a slow tick now and then, and a
/// report is a dozen bytes.
pub const REPORT_EVERY: Duration = Duration::from_millis(250);

/// Ticks' time (at full speed) that no frame takes unless the machine
/// stopped. The loop runs a frame's ticks for about three ticks' time at
/// most, so a frame's ticks that take ten need seven ticks' time for one:
/// a machine that slow holds the game back even at the slowest speed
/// the server sets (a quarter), and its reports change nothing there.
pub const STOPPED_TICKS: u64 = 10;

/// Measures the capacity over windows of [`REPORT_EVERY`].
#[derive(Debug, Clone)]
pub struct CapacityMeter {
    /// Length of a tick at full speed.
    full_ns: u64,
    /// Real time in the current window.
    elapsed_ns: u64,
    /// Ticks run in the current window.
    ticks: u64,
    /// Real time spent running them.
    busy_ns: u64,
}

impl CapacityMeter {
    /// A meter for a game of `tick_rate` ticks a second (at least 1).
    pub fn new(tick_rate: u16) -> Self {
        CapacityMeter {
            full_ns: 1_000_000_000 / u64::from(tick_rate.max(1)),
            elapsed_ns: 0,
            ticks: 0,
            busy_ns: 0,
        }
    }

    /// One frame: `elapsed_ns` of real time since the last one, in which
    /// `ticks` ran and took `busy_ns`. At the end of a window in which
    /// ticks ran, returns the window's capacity and starts the next; a
    /// window without ticks (the game waited all along) carries on. A
    /// frame that shows the machine stopped, in its ticks or before it,
    /// ends the window unreported: the stop may be in its busy time.
    pub fn frame(&mut self, elapsed_ns: u64, ticks: u32, busy_ns: u64) -> Option<Percent> {
        if elapsed_ns.max(busy_ns) >= self.full_ns.saturating_mul(STOPPED_TICKS) {
            self.restart();
            return None;
        }
        self.elapsed_ns = self.elapsed_ns.saturating_add(elapsed_ns);
        self.ticks += u64::from(ticks);
        self.busy_ns = self.busy_ns.saturating_add(busy_ns);
        if self.elapsed_ns < REPORT_EVERY.as_nanos() as u64 || self.ticks == 0 {
            return None;
        }
        let work = u128::from(self.ticks) * u128::from(self.full_ns) * 100;
        let percent = work / u128::from(self.busy_ns.max(1));
        self.restart();
        Some(Percent(percent.min(u128::from(u16::MAX)) as u16))
    }

    /// Starts a new window.
    fn restart(&mut self) {
        self.elapsed_ns = 0;
        self.ticks = 0;
        self.busy_ns = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;
    /// A tick at 50 Hz.
    const TICK_NS: u64 = 20 * MS;

    /// `frames` frames of `frame_ms`, each running one tick that takes
    /// `tick_ms`; the capacities reported.
    fn run(meter: &mut CapacityMeter, frames: u32, frame_ms: u64, tick_ms: u64) -> Vec<u16> {
        (0..frames)
            .filter_map(|_| meter.frame(frame_ms * MS, 1, tick_ms * MS))
            .map(|p| p.0)
            .collect()
    }

    #[test]
    fn a_machine_that_needs_twice_a_tick_for_each_tick_reports_half_speed() {
        let mut meter = CapacityMeter::new(50);
        // It falls behind: every frame is all work, 40 ms for a 20 ms tick.
        assert_eq!(run(&mut meter, 14, 40, 40), vec![50, 50]);
    }

    #[test]
    fn a_fast_machine_reports_what_it_could_do_not_what_the_game_asked() {
        let mut meter = CapacityMeter::new(50);
        // One tick every 20 ms, each taking 2 ms: ten times the tick rate.
        assert_eq!(run(&mut meter, 13, TICK_NS / MS, 2), vec![1000]);
        // A tick too quick to time reports the most the field holds.
        assert_eq!(run(&mut meter, 13, TICK_NS / MS, 0), vec![u16::MAX]);
    }

    #[test]
    fn a_window_where_the_game_waited_all_along_reports_nothing_until_ticks_run() {
        let mut meter = CapacityMeter::new(50);
        // 300 ms of frames without ticks.
        for _ in 0..30 {
            assert_eq!(meter.frame(10 * MS, 0, 0), None);
        }
        assert_eq!(meter.frame(10 * MS, 3, 30 * MS), Some(Percent(200)));
    }

    /// What a machine reports when it stops for 2.2 s in the ticks of
    /// frame 5 of a window, as `frame` tells the meter of frame 5, then
    /// frame 6 and then 40 frames more; before and after it runs one 2 ms
    /// tick every 20 ms.
    fn stopped_in_frame_5(frame: impl Fn(&mut CapacityMeter) -> Option<Percent>) -> Vec<u16> {
        let mut meter = CapacityMeter::new(50);
        let mut reports = run(&mut meter, 4, TICK_NS / MS, 2);
        reports.extend(frame(&mut meter).map(|p| p.0));
        reports.extend(meter.frame(2_200 * MS, 1, 2 * MS).map(|p| p.0));
        reports.extend(run(&mut meter, 40, TICK_NS / MS, 2));
        reports
    }

    #[test]
    fn a_machine_stopped_among_its_ticks_is_not_reported_slow() {
        // Frame 5's ticks hold the stop; frame 6 comes 2.2 s after it.
        let reports = stopped_in_frame_5(|meter| meter.frame(TICK_NS, 2, 2_200 * MS));
        assert_eq!(reports, vec![1000, 1000, 1000]);
        // The same when the window would end with frame 5.
        let mut meter = CapacityMeter::new(50);
        assert!(run(&mut meter, 12, TICK_NS / MS, 2).is_empty());
        assert_eq!(meter.frame(TICK_NS, 2, 2_200 * MS), None);
        assert_eq!(run(&mut meter, 13, TICK_NS / MS, 2), vec![1000]);
    }

    #[test]
    fn a_machine_stopped_between_frames_is_not_reported_slow() {
        let reports = stopped_in_frame_5(|meter| meter.frame(TICK_NS, 1, 2 * MS));
        assert_eq!(reports, vec![1000, 1000, 1000]);
    }

    #[test]
    fn a_machine_that_needs_three_ticks_time_for_each_tick_is_still_measured() {
        let mut meter = CapacityMeter::new(50);
        // Frames of two 60 ms ticks: 120 ms, six ticks' time, all work.
        let reports: Vec<u16> = (0..9)
            .filter_map(|_| meter.frame(120 * MS, 2, 120 * MS))
            .map(|p| p.0)
            .collect();
        assert_eq!(reports, vec![33, 33, 33]);
    }
}
