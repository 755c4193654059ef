//! `lockstep-client loops --trace`: a strategy run on a fake clock, one
//! line per frame, like the functional loop's test ride of its loop.
//!
//! The clock reads 0 before the first frame, and frame `i` (from 1) lasts
//! the `i`-th of the given frame times, cycling through the list; a frame's
//! updates and drawing take no time of their own. Each frame prints
//! `frame=I steps=K alpha=A`: the ticks (or variable steps) it ran and the
//! loop's alpha, `min(1, lag / tick)` for fixed steps (flipcode's
//! percentWithinTick, the functional loop's `lag / Δt`) and 1 for variable steps.

use super::{Loop, Settings};

/// What to trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceOptions {
    /// The loop's rules.
    pub settings: Settings,
    /// Frame times in nanoseconds, used in turn; never empty.
    pub frame_ns: Vec<u64>,
    /// Frames to run.
    pub frames: u32,
}

/// Why a trace cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TraceError {
    /// No frame time was given, so the fake clock cannot advance.
    #[error("the trace needs at least one frame time")]
    NoFrameTimes,
}

/// The trace's lines, one per frame.
pub fn run(options: &TraceOptions) -> Result<Vec<String>, TraceError> {
    if options.frame_ns.is_empty() {
        return Err(TraceError::NoFrameTimes);
    }
    let mut lp = Loop::new(options.settings, 0);
    let mut now_ns: u64 = 0;
    let frame_times = options.frame_ns.iter().cycle();
    let lines = (1..=options.frames)
        .zip(frame_times)
        .map(|(frame, &frame_ns)| {
            now_ns = now_ns.saturating_add(frame_ns);
            let end = lp.frame(now_ns).end;
            format!("frame={frame} steps={} alpha={:.3}", end.steps, end.alpha)
        })
        .collect();
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timing::loops::Strategy;

    const MS: u64 = 1_000_000;

    #[test]
    fn frame_times_are_used_in_turn() {
        let options = TraceOptions {
            settings: Settings::new(Strategy::Fixed, 10 * MS, 10 * MS),
            frame_ns: vec![5 * MS, 15 * MS],
            frames: 4,
        };
        assert_eq!(
            run(&options).unwrap(),
            [
                "frame=1 steps=0 alpha=0.500",
                "frame=2 steps=2 alpha=0.000",
                "frame=3 steps=0 alpha=0.500",
                "frame=4 steps=2 alpha=0.000",
            ]
        );
    }

    #[test]
    fn a_variable_step_is_one_update_a_frame_at_alpha_one() {
        let options = TraceOptions {
            settings: Settings::new(Strategy::Variable, 10 * MS, 10 * MS),
            frame_ns: vec![3 * MS],
            frames: 2,
        };
        assert_eq!(
            run(&options).unwrap(),
            ["frame=1 steps=1 alpha=1.000", "frame=2 steps=1 alpha=1.000"]
        );
    }

    #[test]
    fn no_frame_times_is_an_error() {
        let options = TraceOptions {
            settings: Settings::new(Strategy::Fixed, MS, MS),
            frame_ns: vec![],
            frames: 1,
        };
        assert_eq!(run(&options), Err(TraceError::NoFrameTimes));
    }
}
