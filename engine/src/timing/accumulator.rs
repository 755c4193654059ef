//! The fixed-step accumulator of the flipcode tip, in integer
//! nanoseconds: the one implementation behind every fixed-step loop of the
//! client, the networked game, solo play, replays and the `fixed`,
//! `fixed-max`, `fixed-interp` and `mixed` strategies of the game loop lab
//! (see [`crate::timing::loops`]).
//!
//! Pure: the frontend measures the frame time and passes it in, then asks
//! [`FixedStep::due`] before each game tick. The loop it drives is:
//!
//! ```text
//! clock.begin_frame(elapsed_ns);  // solo: may clamp to the maximum delta
//! while clock.due() {            // lag >= TICK and under this frame's cap
//!     GameTickRun();             // networked: only if the gate says Step
//!     clock.stepped();           // lag -= TICK
//! }
//! IndependentTickRun(frame);     // events, input sampling, UI
//! let end = clock.end_frame();   // solo: may discard pending time
//! GameDrawWithInterpolation(end.alpha);  // alpha = min(1, lag / TICK)
//! ```
//!
//! Solo play may slow game time down instead of spiralling, in the two ways
//! the seed articles describe (docs/sources.md): fx-game-loops' maximum delta counts at most that much
//! real time per frame, and flipcode's MAX_LOOPS guard runs at most
//! `max_loops` ticks per frame and discards whatever is still pending.
//! Networked play may do neither, since the machines would disagree on game
//! time: it never discards, and after a stall it catches up, at most
//! `catch_up_per_frame` ticks per frame so the window stays responsive,
//! until the lag is paid back. The one exception is agreed by all: when
//! the server slows the game down, every client postpones its schedule by
//! the same backlog at the same tick ([`FixedStep::postpone`]).

/// How the loop treats time it cannot simulate in one frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Single player: game time may fall behind real time.
    Solo {
        /// fx-game-loops' maximum delta: a frame counts at most this much real
        /// time, the rest is discarded before it reaches the accumulator.
        /// `None`: every nanosecond counts.
        max_delta_ns: Option<u64>,
        /// Flipcode's MAX_LOOPS: at most this many ticks per frame, and
        /// the time still pending after them is discarded down to one
        /// tick. `None`: no guard, so a tick that costs more real time
        /// than it represents starts the spiral of death.
        max_loops: Option<u32>,
    },
    /// Lockstep: never discard; spread a catch-up over frames.
    Networked {
        /// Most ticks run before the next frame is drawn.
        catch_up_per_frame: u32,
    },
}

/// MAX_LOOPS for solo play: 5 ticks (83 ms at 60 Hz) per frame before game
/// time slows down.
pub const SOLO_MAX_LOOPS: u32 = 5;

impl Policy {
    /// Solo play as flipcode plays it, with [`SOLO_MAX_LOOPS`].
    pub const SOLO: Policy = Policy::flipcode(SOLO_MAX_LOOPS);
    /// Networked play: up to 30 ticks (half a second of game at 60 Hz) per
    /// frame while catching up, so a long catch-up still draws frames.
    pub const NETWORKED: Policy = Policy::Networked {
        catch_up_per_frame: 30,
    };

    /// Flipcode's solo loop: MAX_LOOPS and discarding, no maximum delta.
    pub const fn flipcode(max_loops: u32) -> Policy {
        Policy::Solo {
            max_delta_ns: None,
            max_loops: Some(max_loops),
        }
    }
}

/// What one frame did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameEnd {
    /// Ticks run this frame.
    pub steps: u32,
    /// Interpolation factor between the previous and the current tick:
    /// flipcode's percentWithinTick = min(1, lag / TICK).
    pub alpha: f32,
    /// Nanoseconds of real time thrown away this frame, by the maximum
    /// delta or by MAX_LOOPS (solo only).
    pub discarded_ns: u64,
}

/// The accumulator.
#[derive(Debug, Clone)]
pub struct FixedStep {
    tick_ns: u64,
    lag_ns: u64,
    /// Real time still to pass before the lag grows again: a schedule
    /// postponed by more than the lag ([`FixedStep::postpone`]).
    hold_ns: u64,
    policy: Policy,
    steps: u32,
    /// Real time the maximum delta cut off at the start of this frame.
    clamped_ns: u64,
}

impl FixedStep {
    /// A loop for `tick_rate` ticks per second (at least 1).
    pub fn new(tick_rate: u16, policy: Policy) -> Self {
        Self::with_tick_ns(1_000_000_000 / u64::from(tick_rate.max(1)), policy)
    }

    /// A loop whose tick lasts `tick_ns` nanoseconds (at least 1): tick
    /// lengths that are no whole fraction of a second, such as the seeds'
    /// worked examples.
    pub fn with_tick_ns(tick_ns: u64, policy: Policy) -> Self {
        FixedStep {
            tick_ns: tick_ns.max(1),
            lag_ns: 0,
            hold_ns: 0,
            policy,
            steps: 0,
            clamped_ns: 0,
        }
    }

    /// Nanoseconds of game time per tick.
    pub fn tick_ns(&self) -> u64 {
        self.tick_ns
    }

    /// Changes the length of the ticks from the next one on (at least
    /// 1 ns): the networked game's speed, which the server may lower and
    /// raise. Game time per tick is not this clock's business; only the
    /// real time a tick waits for changes. Pending real time is kept.
    pub fn set_tick_ns(&mut self, tick_ns: u64) {
        self.tick_ns = tick_ns.max(1);
    }

    /// Makes every tick from now on due `ns` later: the networked game's
    /// schedule, postponed by the backlog every client forgives at a speed
    /// change. Pending real time goes first; what is left is waited out
    /// before real time counts again.
    pub fn postpone(&mut self, ns: u64) {
        let forgiven = ns.min(self.lag_ns);
        self.lag_ns -= forgiven;
        self.hold_ns = self.hold_ns.saturating_add(ns - forgiven);
    }

    /// Makes every tick from now on due `ns` sooner: the networked game's
    /// playout delay coming down. Held-back time goes first; the rest
    /// counts as real time already passed, and the steps it makes due are
    /// caught up as any others.
    pub fn hurry(&mut self, ns: u64) {
        let unheld = ns.min(self.hold_ns);
        self.hold_ns -= unheld;
        self.lag_ns = self.lag_ns.saturating_add(ns - unheld);
    }

    /// Real time still to be waited out before real time counts again
    /// ([`Self::postpone`]).
    pub fn hold_ns(&self) -> u64 {
        self.hold_ns
    }

    /// Real time not yet simulated.
    pub fn lag_ns(&self) -> u64 {
        self.lag_ns
    }

    /// Real time until the next tick is due (0 if one is due now).
    pub fn until_due_ns(&self) -> u64 {
        self.hold_ns + self.tick_ns.saturating_sub(self.lag_ns)
    }

    /// The policy in force.
    pub fn policy(&self) -> Policy {
        self.policy
    }

    /// Starts a frame that follows `elapsed_ns` of real time; solo play
    /// with a maximum delta counts at most that much of it.
    pub fn begin_frame(&mut self, elapsed_ns: u64) {
        let counted = match self.policy {
            Policy::Solo {
                max_delta_ns: Some(max),
                ..
            } if elapsed_ns > max => max,
            _ => elapsed_ns,
        };
        self.clamped_ns = elapsed_ns - counted;
        let held = self.hold_ns.min(counted);
        self.hold_ns -= held;
        self.lag_ns = self.lag_ns.saturating_add(counted - held);
        self.steps = 0;
    }

    /// Whether a tick is due now (the caller may still be unable to run it
    /// in networked play; then it simply does not call [`Self::stepped`]).
    pub fn due(&self) -> bool {
        let cap = match self.policy {
            Policy::Solo { max_loops, .. } => max_loops.unwrap_or(u32::MAX),
            Policy::Networked { catch_up_per_frame } => catch_up_per_frame,
        };
        self.lag_ns >= self.tick_ns && self.steps < cap
    }

    /// One tick was simulated.
    pub fn stepped(&mut self) {
        self.lag_ns = self.lag_ns.saturating_sub(self.tick_ns);
        self.steps += 1;
    }

    /// Ends the frame: solo play under MAX_LOOPS discards pending time
    /// beyond one tick (flipcode: `time0 = time1 - TICK_TIME`), networked
    /// play keeps it all.
    ///
    /// Without MAX_LOOPS the ticks drain the lag below one tick, so
    /// flipcode's discard could only follow a MAX_LOOPS cut; a frontend
    /// that stops asking early for reasons of its own keeps its pending
    /// time for the next frame.
    pub fn end_frame(&mut self) -> FrameEnd {
        let mut discarded_ns = std::mem::take(&mut self.clamped_ns);
        let guarded = matches!(
            self.policy,
            Policy::Solo {
                max_loops: Some(_),
                ..
            }
        );
        if guarded && self.lag_ns > self.tick_ns {
            discarded_ns += self.lag_ns - self.tick_ns;
            self.lag_ns = self.tick_ns;
        }
        let alpha = if self.lag_ns >= self.tick_ns {
            1.0
        } else {
            self.lag_ns as f32 / self.tick_ns as f32
        };
        FrameEnd {
            steps: self.steps,
            alpha,
            discarded_ns,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    /// Runs one frame where the gate allows `allowed` ticks at most.
    fn frame(clock: &mut FixedStep, elapsed_ns: u64, allowed: u32) -> FrameEnd {
        clock.begin_frame(elapsed_ns);
        let mut run = 0;
        while clock.due() && run < allowed {
            clock.stepped();
            run += 1;
        }
        clock.end_frame()
    }

    #[test]
    fn runs_one_tick_per_tick_of_real_time_and_interpolates_the_rest() {
        // 20 Hz and 33.3 ms frames: flipcode's example, 0,1,1,0,1,1... ticks.
        let mut clock = FixedStep::new(20, Policy::SOLO);
        // 33.333334 ms: rounded up so three frames are not 1 ns short of 100 ms.
        let frame_ns = 33_333_334;
        let steps: Vec<u32> = (0..6)
            .map(|_| frame(&mut clock, frame_ns, u32::MAX).steps)
            .collect();
        assert_eq!(steps, vec![0, 1, 1, 0, 1, 1]);
        let mut clock = FixedStep::new(20, Policy::SOLO);
        let end = frame(&mut clock, 25 * MS, u32::MAX);
        assert_eq!(end.steps, 0);
        assert!((end.alpha - 0.5).abs() < 1e-6);
    }

    #[test]
    fn solo_caps_at_max_loops_and_discards_pending_time() {
        let mut clock = FixedStep::new(100, Policy::flipcode(3));
        // 100 ms at 10 ms per tick: only 3 ticks run, 60 ms are discarded
        // and one tick stays pending (alpha 1).
        let end = frame(&mut clock, 100 * MS, u32::MAX);
        assert_eq!(end.steps, 3);
        assert_eq!(end.discarded_ns, 60 * MS);
        assert_eq!(end.alpha, 1.0);
        assert_eq!(clock.lag_ns(), 10 * MS);
        // Next frame starts from that one pending tick.
        let end = frame(&mut clock, 5 * MS, u32::MAX);
        assert_eq!((end.steps, end.discarded_ns), (1, 0));
    }

    #[test]
    fn a_maximum_delta_counts_at_most_that_much_real_time() {
        // fx-game-loops: maxDelta 50 ms. A 200 ms frame at 10 ms per tick runs 5
        // ticks, not 20, and the other 150 ms are gone for good.
        let policy = Policy::Solo {
            max_delta_ns: Some(50 * MS),
            max_loops: None,
        };
        let mut clock = FixedStep::new(100, policy);
        let end = frame(&mut clock, 200 * MS, u32::MAX);
        assert_eq!((end.steps, end.discarded_ns), (5, 150 * MS));
        assert_eq!(clock.lag_ns(), 0);
        // A frame under the cap is counted in full.
        let end = frame(&mut clock, 30 * MS, u32::MAX);
        assert_eq!((end.steps, end.discarded_ns), (3, 0));
    }

    #[test]
    fn without_max_loops_every_due_tick_runs_and_nothing_is_discarded() {
        let unguarded = Policy::Solo {
            max_delta_ns: None,
            max_loops: None,
        };
        let mut clock = FixedStep::new(100, unguarded);
        let end = frame(&mut clock, 1_000 * MS, u32::MAX);
        assert_eq!((end.steps, end.discarded_ns), (100, 0));
        // A frontend that stops early keeps the rest for the next frame.
        let end = frame(&mut clock, 100 * MS, 4);
        assert_eq!((end.steps, end.discarded_ns, end.alpha), (4, 0, 1.0));
        assert_eq!(clock.lag_ns(), 60 * MS);
    }

    #[test]
    fn a_new_tick_length_paces_the_next_tick_and_keeps_the_pending_time() {
        let mut clock = FixedStep::new(100, Policy::NETWORKED);
        assert_eq!(frame(&mut clock, 25 * MS, u32::MAX).steps, 2);
        // Half speed: 20 ms a tick. The 5 ms pending count towards it.
        clock.set_tick_ns(20 * MS);
        assert_eq!(frame(&mut clock, 10 * MS, u32::MAX).steps, 0);
        let end = frame(&mut clock, 5 * MS, u32::MAX);
        assert_eq!((end.steps, end.alpha), (1, 0.0));
        assert_eq!(frame(&mut clock, 19 * MS, u32::MAX).steps, 0);
        assert_eq!(frame(&mut clock, MS, u32::MAX).steps, 1);
    }

    #[test]
    fn a_postponed_schedule_forgives_the_pending_time_then_waits_out_the_rest() {
        let mut clock = FixedStep::new(100, Policy::NETWORKED);
        // 35 ms behind, and no tick can run (it stalls).
        assert_eq!(frame(&mut clock, 45 * MS, 0).steps, 0);
        clock.postpone(30 * MS);
        assert_eq!(clock.lag_ns(), 15 * MS);
        assert_eq!(frame(&mut clock, 0, u32::MAX).steps, 1);
        // Postponed past the pending time: the rest is waited out first.
        clock.postpone(12 * MS);
        assert_eq!(clock.until_due_ns(), 17 * MS);
        assert_eq!(frame(&mut clock, 16 * MS, u32::MAX).steps, 0);
        assert_eq!(frame(&mut clock, MS, u32::MAX).steps, 1);
        assert_eq!(clock.lag_ns(), 0);
    }

    #[test]
    fn networked_never_caps_game_time_and_never_discards() {
        let mut clock = FixedStep::new(
            100,
            Policy::Networked {
                catch_up_per_frame: 3,
            },
        );
        // A 100 ms stall: nothing may run.
        let end = frame(&mut clock, 100 * MS, 0);
        assert_eq!((end.steps, end.discarded_ns, end.alpha), (0, 0, 1.0));
        assert_eq!(clock.lag_ns(), 100 * MS);
        // The catch-up is spread over frames and every tick is run.
        let mut total = 0;
        for _ in 0..4 {
            let end = frame(&mut clock, 0, u32::MAX);
            assert!(end.steps <= 3);
            assert_eq!(end.discarded_ns, 0);
            total += end.steps;
        }
        assert_eq!(total, 10);
        assert_eq!(clock.lag_ns(), 0);
    }
}
