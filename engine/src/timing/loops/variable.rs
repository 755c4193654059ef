//! The variable step (fx-game-loops' first three loops, JGameLoopStudy's basic
//! loop): one update per frame whose dt is the frame's measured time,
//! optionally capped at a maximum step.

use crate::timing::accumulator::FrameEnd;

/// One frame's worth of variable step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VariableStep {
    /// fx-game-loops' `maxDelta` for variable steps: the largest dt handed out.
    max_step_ns: Option<u64>,
    /// The update of this frame, until it is asked for.
    pending: Option<u64>,
    /// Updates handed out this frame (0 or 1).
    steps: u32,
    /// Real time the maximum step cut off this frame.
    discarded_ns: u64,
}

impl VariableStep {
    /// A variable step capped at `max_step_ns`, if any.
    pub fn new(max_step_ns: Option<u64>) -> VariableStep {
        VariableStep {
            max_step_ns,
            pending: None,
            steps: 0,
            discarded_ns: 0,
        }
    }

    /// Starts a frame that follows `elapsed_ns` of real time: its update
    /// is that long, or the maximum step if that is shorter.
    pub fn begin_frame(&mut self, elapsed_ns: u64) {
        let dt = match self.max_step_ns {
            Some(max) if elapsed_ns > max => max,
            _ => elapsed_ns,
        };
        self.pending = Some(dt);
        self.discarded_ns = elapsed_ns - dt;
        self.steps = 0;
    }

    /// The frame's one update, the first time it is asked for.
    pub fn next_update(&mut self) -> Option<u64> {
        let dt = self.pending.take()?;
        self.steps += 1;
        Some(dt)
    }

    /// Ends the frame. Alpha is 1: the world is exactly at the frame's
    /// time, so the frame shows the state just computed.
    pub fn end_frame(&mut self) -> FrameEnd {
        self.pending = None;
        FrameEnd {
            steps: self.steps,
            alpha: 1.0,
            discarded_ns: std::mem::take(&mut self.discarded_ns),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn one_update_per_frame_as_long_as_the_frame() {
        let mut step = VariableStep::new(None);
        step.begin_frame(37 * MS);
        assert_eq!(step.next_update(), Some(37 * MS));
        assert_eq!(step.next_update(), None);
        let end = step.end_frame();
        assert_eq!((end.steps, end.alpha, end.discarded_ns), (1, 1.0, 0));
    }

    #[test]
    fn a_frame_longer_than_the_maximum_step_loses_the_difference() {
        let mut step = VariableStep::new(Some(50 * MS));
        step.begin_frame(120 * MS);
        assert_eq!(step.next_update(), Some(50 * MS));
        assert_eq!(step.end_frame().discarded_ns, 70 * MS);
        step.begin_frame(20 * MS);
        assert_eq!(step.next_update(), Some(20 * MS));
        assert_eq!(step.end_frame().discarded_ns, 0);
    }
}
