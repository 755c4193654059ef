//! [`Loop`]: a strategy driven by clock readings, in the functional loop's spirit.
//!
//! The frontend calls [`Loop::begin_frame`] with the clock reading at the
//! start of a frame, takes [`Loop::next_update`] until it says `None`,
//! running one world update per answer, and calls [`Loop::end_frame`] for
//! the alpha and the time discarded. [`Loop::frame`] does all three at once
//! for callers that run every update anyway (the trace, the tests).
//!
//! A frontend may stop asking for updates early: the fixed-step strategies
//! keep the ticks it did not run pending (the networked client does this
//! when an input has not arrived, the lab when a frame's updates take too
//! long to keep the window alive).

use crate::timing::accumulator::{FixedStep, FrameEnd};

use super::{Settings, VariableStep};

/// One world update to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Update {
    /// Game time this update advances.
    pub dt_ns: u64,
}

impl Update {
    /// `dt` in seconds, as the simulation takes it.
    pub fn dt_secs(self) -> f32 {
        self.dt_ns as f32 / 1e9
    }
}

/// Everything a whole frame asks for, when every update is run.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The updates, in order.
    pub updates: Vec<Update>,
    /// Steps run, alpha and time discarded.
    pub end: FrameEnd,
    /// See [`Loop::begin_frame`].
    pub deadline_ns: Option<u64>,
}

/// The two families of strategy.
#[derive(Debug, Clone)]
enum Stepper {
    /// One measured step per frame.
    Variable(VariableStep),
    /// The networked client's accumulator.
    Fixed(FixedStep),
}

impl Stepper {
    fn for_settings(settings: &Settings) -> Stepper {
        if settings.strategy.fixed_steps() {
            Stepper::Fixed(FixedStep::with_tick_ns(settings.tick_ns, settings.policy()))
        } else {
            Stepper::Variable(VariableStep::new(settings.max_step_ns()))
        }
    }
}

/// A loop strategy fed clock readings; it never reads a clock itself.
#[derive(Debug, Clone)]
pub struct Loop {
    settings: Settings,
    stepper: Stepper,
    /// The previous clock reading.
    last_ns: u64,
    /// Real time since the first reading.
    real_ns: u64,
    /// Game time simulated: the sum of every update's dt.
    game_ns: u64,
    /// Real time thrown away so far (maximum step or delta, MAX_LOOPS).
    discarded_ns: u64,
}

impl Loop {
    /// A loop whose clock reads `start_ns` now.
    pub fn new(settings: Settings, start_ns: u64) -> Loop {
        Loop {
            stepper: Stepper::for_settings(&settings),
            settings,
            last_ns: start_ns,
            real_ns: 0,
            game_ns: 0,
            discarded_ns: 0,
        }
    }

    /// The rules in force.
    pub fn settings(&self) -> Settings {
        self.settings
    }

    /// Changes the rules between two frames. Time pending in the
    /// accumulator is dropped: the new rules start from a clean one, as if
    /// the game had been paused and resumed. Totals are kept.
    pub fn set_settings(&mut self, settings: Settings) {
        self.settings = settings;
        self.stepper = Stepper::for_settings(&settings);
    }

    /// Starts a frame at clock reading `now_ns` (an earlier reading than
    /// the last counts as no time). Returns the reading the frontend should
    /// wait for before the next frame, for strategies that pace frames
    /// (fx-game-loops' target frame rate); `None`: start the next one at once.
    pub fn begin_frame(&mut self, now_ns: u64) -> Option<u64> {
        let elapsed_ns = now_ns.saturating_sub(self.last_ns);
        self.last_ns = self.last_ns.max(now_ns);
        self.real_ns += elapsed_ns;
        match &mut self.stepper {
            Stepper::Variable(step) => step.begin_frame(elapsed_ns),
            Stepper::Fixed(step) => step.begin_frame(elapsed_ns),
        }
        self.settings
            .strategy
            .paced()
            .then(|| now_ns.saturating_add(self.settings.target_frame_ns))
    }

    /// The next update to run this frame, if one is due. Asking is taking:
    /// the update counts as run.
    pub fn next_update(&mut self) -> Option<Update> {
        let dt_ns = match &mut self.stepper {
            Stepper::Variable(step) => step.next_update()?,
            Stepper::Fixed(step) => {
                if !step.due() {
                    return None;
                }
                step.stepped();
                step.tick_ns()
            }
        };
        self.game_ns += dt_ns;
        Some(Update { dt_ns })
    }

    /// Ends the frame: steps run, the loop's alpha and the time discarded.
    pub fn end_frame(&mut self) -> FrameEnd {
        let end = match &mut self.stepper {
            Stepper::Variable(step) => step.end_frame(),
            Stepper::Fixed(step) => step.end_frame(),
        };
        self.discarded_ns += end.discarded_ns;
        end
    }

    /// A whole frame at `now_ns`, every due update included.
    pub fn frame(&mut self, now_ns: u64) -> Plan {
        let deadline_ns = self.begin_frame(now_ns);
        let updates = std::iter::from_fn(|| self.next_update()).collect();
        Plan {
            updates,
            end: self.end_frame(),
            deadline_ns,
        }
    }

    /// Where to draw between the previous and the current world: the
    /// loop's alpha with interpolation on, else the current world (1).
    pub fn draw_alpha(&self, end: &FrameEnd) -> f32 {
        if self.settings.draws_interpolated() {
            end.alpha
        } else {
            1.0
        }
    }

    /// Game time simulated so far.
    pub fn game_ns(&self) -> u64 {
        self.game_ns
    }

    /// Real time since the loop started.
    pub fn real_ns(&self) -> u64 {
        self.real_ns
    }

    /// Real time thrown away so far.
    pub fn discarded_ns(&self) -> u64 {
        self.discarded_ns
    }

    /// Real time waiting in the accumulator (0 for variable steps).
    pub fn lag_ns(&self) -> u64 {
        match &self.stepper {
            Stepper::Variable(_) => 0,
            Stepper::Fixed(step) => step.lag_ns(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timing::accumulator::Policy;
    use crate::timing::loops::{Strategy, DEFAULT_MAX_DELTA_NS};

    const MS: u64 = 1_000_000;
    /// 10 ms ticks (100 Hz) keep the arithmetic readable.
    const TICK: u64 = 10 * MS;
    /// Target frame time of the paced strategies.
    const TARGET: u64 = 16 * MS;

    fn settings(strategy: Strategy) -> Settings {
        Settings::new(strategy, TICK, TARGET)
    }

    /// Runs `frames` frames of a world whose every update costs `cost`
    /// of real time, on top of `render` per frame: a frame's updates show
    /// up in the next frame's clock reading, as on a real machine.
    fn loaded(settings: Settings, cost: u64, render: u64, frames: usize) -> (Loop, Vec<FrameEnd>) {
        let mut lp = Loop::new(settings, 0);
        let mut now = 0;
        let mut work = TICK;
        let mut ends = Vec::new();
        for _ in 0..frames {
            now += work + render;
            let plan = lp.frame(now);
            work = plan.updates.len() as u64 * cost;
            ends.push(plan.end);
        }
        (lp, ends)
    }

    fn steps(ends: &[FrameEnd]) -> Vec<u32> {
        ends.iter().map(|end| end.steps).collect()
    }

    #[test]
    fn a_variable_step_updates_once_a_frame_with_the_frame_time() {
        let mut lp = Loop::new(settings(Strategy::Variable), 1_000);
        let plan = lp.frame(1_000 + 7 * MS);
        assert_eq!(plan.updates, vec![Update { dt_ns: 7 * MS }]);
        assert_eq!((plan.end.alpha, plan.deadline_ns), (1.0, None));
        let plan = lp.frame(1_000 + 40 * MS);
        assert_eq!(plan.updates, vec![Update { dt_ns: 33 * MS }]);
        assert_eq!(lp.game_ns(), lp.real_ns());
    }

    #[test]
    fn paced_strategies_ask_to_wait_until_a_target_frame_time_after_the_reading() {
        for strategy in Strategy::ALL {
            let mut lp = Loop::new(settings(strategy), 0);
            let expected = strategy.paced().then_some(5 * MS + TARGET);
            assert_eq!(lp.begin_frame(5 * MS), expected, "{strategy}");
        }
    }

    #[test]
    fn a_maximum_step_slows_game_time_behind_real_time() {
        let mut lp = Loop::new(settings(Strategy::VariableMax), 0);
        let plan = lp.frame(200 * MS);
        assert_eq!(
            plan.updates,
            vec![Update {
                dt_ns: DEFAULT_MAX_DELTA_NS
            }]
        );
        assert_eq!(plan.end.discarded_ns, 200 * MS - DEFAULT_MAX_DELTA_NS);
        assert_eq!(lp.game_ns(), DEFAULT_MAX_DELTA_NS);
        assert_eq!(lp.real_ns(), 200 * MS);
    }

    #[test]
    fn fixed_steps_hand_out_whole_ticks_and_keep_the_rest_pending() {
        let mut lp = Loop::new(settings(Strategy::FixedInterp), 0);
        let plan = lp.frame(25 * MS);
        assert_eq!(plan.updates, vec![Update { dt_ns: TICK }; 2]);
        assert_eq!(plan.end.alpha, 0.5);
        assert_eq!(lp.draw_alpha(&plan.end), 0.5);
        assert_eq!(lp.lag_ns(), 5 * MS);
    }

    #[test]
    fn without_interpolation_frames_show_the_last_tick_whatever_the_alpha() {
        let mut lp = Loop::new(settings(Strategy::Fixed), 0);
        let plan = lp.frame(25 * MS);
        assert_eq!(plan.end.alpha, 0.5);
        assert_eq!(lp.draw_alpha(&plan.end), 1.0);
    }

    #[test]
    fn every_fixed_step_strategy_runs_the_same_accumulator_as_the_networked_client() {
        let mut networked = settings(Strategy::FixedInterp);
        networked.networked = true;
        let mut lp = Loop::new(networked, 0);
        let mut client = FixedStep::with_tick_ns(TICK, Policy::NETWORKED);
        let mut now = 0;
        for frame_ms in [3, 17, 250, 8, 1_000, 16, 16] {
            now += frame_ms * MS;
            let plan = lp.frame(now);
            client.begin_frame(frame_ms * MS);
            let mut steps = 0;
            while client.due() {
                client.stepped();
                steps += 1;
            }
            assert_eq!(plan.end, client.end_frame());
            assert_eq!(plan.updates.len(), steps);
        }
    }

    #[test]
    fn a_tick_that_costs_more_than_it_simulates_spirals_to_death_without_a_guard() {
        // 15 ms of work per 10 ms tick: every frame owes more ticks than
        // the last.
        let (lp, ends) = loaded(settings(Strategy::Fixed), 15 * MS, MS, 16);
        let steps = steps(&ends);
        assert!(steps.windows(2).skip(4).all(|w| w[1] > w[0]), "{steps:?}");
        assert!(steps[15] > 100, "{steps:?}");
        assert_eq!(lp.discarded_ns(), 0);
    }

    #[test]
    fn max_loops_stops_the_spiral_by_discarding_and_game_time_slows_down() {
        let mut guarded = settings(Strategy::Fixed);
        guarded.max_loops = Some(3);
        let (lp, ends) = loaded(guarded, 15 * MS, MS, 40);
        assert!(ends.iter().all(|end| end.steps <= 3));
        // Once saturated, each frame lasts 3 x 15 + 1 = 46 ms, runs 30 ms
        // of game time and throws the other 16 ms away (keeping one tick).
        let late = &ends[10..];
        assert!(late.iter().all(|end| end.steps == 3), "{:?}", steps(&ends));
        assert!(late.iter().all(|end| end.discarded_ns == 16 * MS));
        assert!(late.iter().all(|end| end.alpha == 1.0));
        assert!(lp.game_ns() * 10 < lp.real_ns() * 7);
    }

    #[test]
    fn a_maximum_delta_stops_the_spiral_without_max_loops() {
        let (lp, ends) = loaded(settings(Strategy::FixedMax), 15 * MS, MS, 40);
        let most = (DEFAULT_MAX_DELTA_NS / TICK) as u32 + 1;
        assert!(
            ends.iter().all(|end| end.steps <= most),
            "{:?}",
            steps(&ends)
        );
        assert!(lp.discarded_ns() > 0);
        assert!(lp.game_ns() < lp.real_ns());
    }

    #[test]
    fn networked_play_never_discards_even_in_a_spiral() {
        let mut networked = settings(Strategy::FixedMax);
        networked.max_loops = Some(3);
        networked.networked = true;
        let (lp, ends) = loaded(networked, 15 * MS, MS, 40);
        let Policy::Networked { catch_up_per_frame } = Policy::NETWORKED else {
            unreachable!("the networked policy is networked")
        };
        assert!(ends.iter().all(|end| end.discarded_ns == 0));
        assert!(ends.iter().all(|end| end.steps <= catch_up_per_frame));
        // The debt is kept, and it grows: this machine is too slow for the
        // session, and its peers would wait for it.
        assert!(lp.lag_ns() > 1_000 * MS);
        assert_eq!(lp.game_ns() + lp.lag_ns(), lp.real_ns());
    }

    #[test]
    fn discarding_happens_only_when_not_networked() {
        for networked in [false, true] {
            for strategy in Strategy::ALL {
                let mut rules = settings(strategy);
                rules.max_step = true;
                rules.max_loops = Some(2);
                rules.networked = networked;
                let mut lp = Loop::new(rules, 0);
                lp.frame(500 * MS);
                assert_eq!(lp.discarded_ns() > 0, !networked, "{strategy} {networked}");
            }
        }
    }

    #[test]
    fn real_time_is_simulated_pending_or_discarded_never_lost() {
        let mut seed = 0x2545_f491_u64;
        for strategy in Strategy::ALL {
            for (max_loops, networked) in [(None, false), (Some(2), false), (Some(2), true)] {
                let mut rules = settings(strategy);
                rules.max_loops = max_loops;
                rules.networked = networked;
                let mut lp = Loop::new(rules, 0);
                let mut now = 0;
                for _ in 0..500 {
                    // Frame times from 0 to about 80 ms, pseudo-random.
                    seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                    now += (seed >> 33) % (80 * MS);
                    let plan = lp.frame(now);
                    assert!(
                        (0.0..=1.0).contains(&plan.end.alpha),
                        "{strategy}: {plan:?}"
                    );
                    assert_eq!(
                        lp.game_ns() + lp.lag_ns() + lp.discarded_ns(),
                        lp.real_ns(),
                        "{strategy}"
                    );
                }
            }
        }
    }

    #[test]
    fn new_settings_start_from_an_empty_accumulator_and_keep_the_totals() {
        let mut lp = Loop::new(settings(Strategy::Fixed), 0);
        lp.frame(25 * MS);
        lp.set_settings(settings(Strategy::Variable));
        assert_eq!(lp.lag_ns(), 0);
        let plan = lp.frame(30 * MS);
        assert_eq!(plan.updates, vec![Update { dt_ns: 5 * MS }]);
        assert_eq!((lp.game_ns(), lp.real_ns()), (25 * MS, 30 * MS));
    }
}
