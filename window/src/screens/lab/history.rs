//! The lab's record of recent frames: what the strip chart draws and what
//! the panel's rates are computed from.
//!
//! Pure: the frontend measures each frame and pushes it; rates come from
//! the sum of the frames' own times, so no clock is read here and the
//! figures are exact for any made-up sequence of frames.

use std::collections::VecDeque;

use crate::pacing::Paced;

/// Frames kept: a second at up to 4096 FPS, which covers every paced
/// strategy and most machines running `variable` or `mixed`.
const KEPT: usize = 4096;

/// What one frame did and how long it took.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameSample {
    /// Real time from the frame's start to the next frame's.
    pub frame_ns: u64,
    /// Updates run (ticks, or the one variable step).
    pub steps: u32,
    /// Game time those updates advanced.
    pub game_ns: u64,
    /// Real time the loop threw away this frame.
    pub discarded_ns: u64,
    /// How the wait for the frame's deadline went, if it had one.
    pub paced: Option<Paced>,
}

/// Figures over the most recent frames.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    /// Real time covered.
    pub span_ns: u64,
    /// Frames per second.
    pub fps: f32,
    /// Updates per second.
    pub ups: f32,
    /// Game time per real time: 1 keeps up, less is slow motion.
    pub speed: f32,
    /// Most updates in one frame.
    pub max_steps: u32,
    /// Real time thrown away.
    pub discarded_ns: u64,
    /// Mean and worst pacing error of the frames that waited, if any did.
    pub pacing_error_ns: Option<(u64, u64)>,
    /// Frames whose work ran past their deadline.
    pub missed: u32,
}

/// The most recent frames, oldest first.
#[derive(Debug, Clone, Default)]
pub struct FrameHistory {
    samples: VecDeque<FrameSample>,
}

impl FrameHistory {
    /// An empty history.
    pub fn new() -> FrameHistory {
        FrameHistory::default()
    }

    /// Records a frame, forgetting the oldest beyond what is kept.
    pub fn push(&mut self, sample: FrameSample) {
        if self.samples.len() == KEPT {
            self.samples.pop_front();
        }
        self.samples.push_back(sample);
    }

    /// The last `n` frames (fewer if fewer were recorded), oldest first.
    pub fn last(&self, n: usize) -> impl Iterator<Item = &FrameSample> {
        self.samples
            .iter()
            .skip(self.samples.len().saturating_sub(n))
    }

    /// Figures over the newest frames that together last at least
    /// `window_ns` (or all of them, if they last less).
    pub fn summary(&self, window_ns: u64) -> Summary {
        let mut span_ns = 0u64;
        let mut frames = 0u32;
        let mut steps = 0u64;
        let mut game_ns = 0u64;
        let mut max_steps = 0;
        let mut discarded_ns = 0;
        let mut errors = Vec::new();
        let mut missed = 0;
        for sample in self.samples.iter().rev() {
            if span_ns >= window_ns {
                break;
            }
            span_ns += sample.frame_ns;
            frames += 1;
            steps += u64::from(sample.steps);
            game_ns += sample.game_ns;
            max_steps = max_steps.max(sample.steps);
            discarded_ns += sample.discarded_ns;
            match sample.paced {
                Some(Paced::Waited { error }) => errors.push(error.as_nanos() as u64),
                Some(Paced::Missed { .. }) => missed += 1,
                None => {}
            }
        }
        let seconds = span_ns as f32 / 1e9;
        let per_second = |count: f32| if span_ns == 0 { 0.0 } else { count / seconds };
        let pacing_error_ns = errors.iter().max().map(|&worst| {
            let mean = errors.iter().sum::<u64>() / errors.len() as u64;
            (mean, worst)
        });
        Summary {
            span_ns,
            fps: per_second(frames as f32),
            ups: per_second(steps as f32),
            speed: if span_ns == 0 {
                1.0
            } else {
                game_ns as f32 / span_ns as f32
            },
            max_steps,
            discarded_ns,
            pacing_error_ns,
            missed,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    const MS: u64 = 1_000_000;

    fn frame(frame_ms: u64, steps: u32, game_ms: u64) -> FrameSample {
        FrameSample {
            frame_ns: frame_ms * MS,
            steps,
            game_ns: game_ms * MS,
            discarded_ns: 0,
            paced: None,
        }
    }

    #[test]
    fn rates_count_frames_and_updates_per_second_of_frame_time() {
        let mut history = FrameHistory::new();
        // JGameLoopStudy's point: 50 FPS drawn, 100 UPS simulated.
        for _ in 0..100 {
            history.push(frame(20, 2, 20));
        }
        let summary = history.summary(1_000 * MS);
        assert_eq!(summary.span_ns, 1_000 * MS);
        assert_eq!(
            (summary.fps, summary.ups, summary.speed),
            (50.0, 100.0, 1.0)
        );
        assert_eq!(summary.max_steps, 2);
    }

    #[test]
    fn game_time_behind_real_time_shows_as_slow_motion() {
        let mut history = FrameHistory::new();
        for _ in 0..10 {
            history.push(FrameSample {
                discarded_ns: 60 * MS,
                ..frame(100, 2, 40)
            });
        }
        let summary = history.summary(1_000 * MS);
        assert_eq!(summary.speed, 0.4);
        assert_eq!(summary.discarded_ns, 600 * MS);
    }

    #[test]
    fn only_the_newest_frames_count() {
        let mut history = FrameHistory::new();
        history.push(frame(500, 30, 500));
        for _ in 0..4 {
            history.push(frame(250, 1, 250));
        }
        let summary = history.summary(1_000 * MS);
        assert_eq!((summary.span_ns, summary.max_steps), (1_000 * MS, 1));
        let chart: Vec<u32> = history.last(2).map(|s| s.steps).collect();
        assert_eq!(chart, [1, 1]);
    }

    #[test]
    fn pacing_error_is_over_the_frames_that_waited() {
        let mut history = FrameHistory::new();
        let waited = |us| {
            Some(Paced::Waited {
                error: Duration::from_micros(us),
            })
        };
        history.push(FrameSample {
            paced: waited(100),
            ..frame(16, 1, 16)
        });
        history.push(FrameSample {
            paced: waited(300),
            ..frame(16, 1, 16)
        });
        history.push(FrameSample {
            paced: Some(Paced::Missed {
                late: Duration::from_millis(5),
            }),
            ..frame(21, 1, 21)
        });
        let summary = history.summary(1_000 * MS);
        assert_eq!(summary.pacing_error_ns, Some((200_000, 300_000)));
        assert_eq!(summary.missed, 1);
        assert_eq!(FrameHistory::new().summary(MS).pacing_error_ns, None);
    }

    #[test]
    fn the_oldest_frames_are_forgotten() {
        let mut history = FrameHistory::new();
        for steps in 0..(KEPT as u32 + 10) {
            history.push(frame(1, steps, 1));
        }
        assert_eq!(history.last(usize::MAX).count(), KEPT);
        assert_eq!(history.last(usize::MAX).next().map(|s| s.steps), Some(10));
    }
}
