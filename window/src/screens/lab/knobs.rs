//! What the lab's keys change: the loop's rules and the world's load.
//!
//! Pure, so the effect of every key is a unit test; [`super::keys`] maps
//! SDL keys to these [`Command`]s. A game that steps only by its fixed
//! tick ([`lockstep_engine::Game::VARIABLE_STEP`] false) is never handed
//! a measured dt: its knobs refuse the variable-step strategies, and a
//! new tick rate restarts its world at that rate.

use lockstep_engine::timing::accumulator::SOLO_MAX_LOOPS;
use lockstep_engine::timing::loops::{Settings, Strategy};

/// Tick rates the T/Y keys step through: from a slideshow, where temporal
/// aliasing is obvious, to twice the usual 60 Hz.
const TICK_RATES: [u16; 11] = [10, 15, 20, 24, 30, 45, 50, 60, 75, 90, 120];
/// Target frame rates the F/G keys step through: film, console and
/// monitor rates.
const TARGET_FPS: [u16; 13] = [10, 15, 20, 24, 30, 45, 50, 60, 75, 90, 120, 144, 240];
/// Bot opponents the +/- keys step through, doubling plus one: from you
/// alone to solo play's most (15), each a player the game steps and, in a
/// physics game, a body more pushing the others.
const BOTS: [u8; 5] = [0, 1, 3, 7, 15];
/// Per-tick costs the [ ] keys step through, in milliseconds: past 16.7 a
/// 60 Hz tick costs more than it simulates (the spiral of death).
const TICK_COST_MS: [u64; 11] = [0, 1, 2, 4, 8, 12, 16, 20, 25, 33, 50];

/// Nanoseconds per second.
const NS_PER_S: u64 = 1_000_000_000;
/// Nanoseconds per millisecond.
const NS_PER_MS: u64 = 1_000_000;

/// One way a knob turns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// To the next smaller value.
    Down,
    /// To the next larger value.
    Up,
}

/// What a key asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// Switch to a rung of the ladder (with its own maximum step and
    /// interpolation).
    Strategy(Strategy),
    /// Fewer or more bot opponents (restarts the world).
    Bots(Change),
    /// Less or more artificial cost per update.
    TickCost(Change),
    /// Lower or raise the target frame rate.
    TargetFps(Change),
    /// Lower or raise the tick rate.
    TickRate(Change),
    /// JGameLoopStudy's slow "7" on or off.
    Spike,
    /// Maximum step (or delta) on or off.
    MaxStep,
    /// Interpolation on or off.
    Interpolation,
    /// Flipcode's MAX_LOOPS on or off.
    MaxLoops,
    /// The networked client's rule on or off.
    Networked,
}

/// What the frontend must redo after a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// The loop's rules changed: hand it the new [`Knobs::settings`].
    Rules,
    /// The world must be rebuilt (the bots changed, or the tick rate of a
    /// game that steps only by its tick), and the loop handed its rules
    /// afresh.
    World,
    /// Only the lab's own load changed; nothing to redo.
    Load,
    /// Nothing changed: the game steps only by its tick, and the command
    /// asked for a variable step ([`Knobs::refused`] says which).
    Refused,
}

/// A variable-step strategy asked of a game that steps only by its fixed
/// tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "the game {game} steps only by its fixed tick, and the strategy {strategy} steps by a \
     measured dt: try fixed, fixed-max, fixed-interp or mixed"
)]
pub struct VariableStepNeeded {
    /// The game.
    pub game: &'static str,
    /// The strategy asked for.
    pub strategy: Strategy,
}

impl VariableStepNeeded {
    /// The refusal as the panel shows it, in one line.
    pub fn short(&self) -> String {
        format!("{} steps by its tick only: no {}", self.game, self.strategy)
    }
}

/// Everything the lab lets the user change at run time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Knobs {
    /// The loop's rules.
    pub settings: Settings,
    /// Ticks per second (sets `settings.tick_ns`).
    pub tick_rate: u16,
    /// Target frames per second (sets `settings.target_frame_ns`).
    pub target_fps: u16,
    /// The K that MAX_LOOPS uses when switched on: the command line's, or
    /// the solo client's.
    pub max_loops: u32,
    /// Bot opponents in the world.
    pub bots: u8,
    /// Real time each update costs on top of the simulation, to provoke
    /// the spiral of death on any machine.
    pub tick_cost_ns: u64,
    /// JGameLoopStudy's slow "7": frames drawn while the counter shows 7 take
    /// 50 ms longer.
    pub spike: bool,
    /// The game, if it steps only by its fixed tick: then no variable-step
    /// strategy is taken.
    pub fixed_only: Option<&'static str>,
    /// The last strategy refused, until another is taken.
    pub refused: Option<VariableStepNeeded>,
}

impl Knobs {
    /// `strategy` at `tick_rate` and `target_fps` (each at least 1), with
    /// `bots` bot opponents, no cost and no spike, and MAX_LOOPS on with K
    /// if `max_loops` is given, for a game that steps by any dt.
    pub fn new(
        strategy: Strategy,
        tick_rate: u16,
        target_fps: u16,
        bots: u8,
        max_loops: Option<u32>,
    ) -> Knobs {
        let tick_rate = tick_rate.max(1);
        let target_fps = target_fps.max(1);
        let max_loops = max_loops.map(|k| k.max(1));
        let mut settings = Settings::new(strategy, period_ns(tick_rate), period_ns(target_fps));
        settings.max_loops = max_loops;
        Knobs {
            settings,
            tick_rate,
            target_fps,
            max_loops: max_loops.unwrap_or(SOLO_MAX_LOOPS),
            bots,
            tick_cost_ns: 0,
            spike: false,
            fixed_only: None,
            refused: None,
        }
    }

    /// These knobs for `game`, which steps only by its fixed tick; refused
    /// if their strategy steps by a measured dt.
    pub fn fixed_only(self, game: &'static str) -> Result<Knobs, VariableStepNeeded> {
        let strategy = self.settings.strategy;
        if !strategy.fixed_steps() {
            return Err(VariableStepNeeded { game, strategy });
        }
        Ok(Knobs {
            fixed_only: Some(game),
            ..self
        })
    }

    /// Carries out `command`.
    pub fn apply(&mut self, command: Command) -> Effect {
        let settings = &mut self.settings;
        match command {
            Command::Strategy(strategy) => {
                if let Some(game) = self.fixed_only.filter(|_| !strategy.fixed_steps()) {
                    self.refused = Some(VariableStepNeeded { game, strategy });
                    return Effect::Refused;
                }
                self.refused = None;
                *settings = settings.with_strategy(strategy);
            }
            Command::MaxStep => settings.max_step = !settings.max_step,
            Command::Interpolation => settings.interpolate = !settings.interpolate,
            Command::Networked => settings.networked = !settings.networked,
            Command::MaxLoops => {
                settings.max_loops = match settings.max_loops {
                    Some(_) => None,
                    None => Some(self.max_loops),
                }
            }
            Command::TickRate(change) => {
                self.tick_rate = turn(&TICK_RATES, self.tick_rate, change);
                settings.tick_ns = period_ns(self.tick_rate);
                if self.fixed_only.is_some() {
                    return Effect::World;
                }
            }
            Command::TargetFps(change) => {
                self.target_fps = turn(&TARGET_FPS, self.target_fps, change);
                settings.target_frame_ns = period_ns(self.target_fps);
            }
            Command::Bots(change) => {
                self.bots = turn(&BOTS, self.bots, change);
                return Effect::World;
            }
            Command::TickCost(change) => {
                let ms = turn(&TICK_COST_MS, self.tick_cost_ns / NS_PER_MS, change);
                self.tick_cost_ns = ms * NS_PER_MS;
                return Effect::Load;
            }
            Command::Spike => {
                self.spike = !self.spike;
                return Effect::Load;
            }
        }
        Effect::Rules
    }
}

/// Nanoseconds between events at `rate` per second.
fn period_ns(rate: u16) -> u64 {
    NS_PER_S / u64::from(rate.max(1))
}

/// The next value of `ladder` past `current` in the direction of
/// `change`; `current` itself at either end (values from the command line
/// need not be on the ladder).
fn turn<T: Copy + PartialOrd>(ladder: &[T], current: T, change: Change) -> T {
    match change {
        Change::Up => ladder.iter().copied().find(|&v| v > current),
        Change::Down => ladder.iter().rev().copied().find(|&v| v < current),
    }
    .unwrap_or(current)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn knobs() -> Knobs {
        Knobs::new(Strategy::Fixed, 60, 60, 3, None)
    }

    #[test]
    fn knobs_turn_along_their_ladder_and_stop_at_the_ends() {
        assert_eq!(turn(&TICK_RATES, 60, Change::Up), 75);
        assert_eq!(turn(&TICK_RATES, 60, Change::Down), 50);
        assert_eq!(turn(&TICK_RATES, 120, Change::Up), 120);
        assert_eq!(turn(&TICK_RATES, 10, Change::Down), 10);
        // A value from the command line joins the ladder at its place.
        assert_eq!(turn(&TICK_RATES, 55, Change::Up), 60);
        assert_eq!(turn(&TICK_RATES, 55, Change::Down), 50);
    }

    #[test]
    fn rates_set_the_loops_periods() {
        let mut knobs = knobs();
        assert_eq!(knobs.apply(Command::TickRate(Change::Down)), Effect::Rules);
        assert_eq!((knobs.tick_rate, knobs.settings.tick_ns), (50, 20_000_000));
        assert_eq!(knobs.apply(Command::TargetFps(Change::Up)), Effect::Rules);
        assert_eq!(knobs.target_fps, 75);
        assert_eq!(knobs.settings.target_frame_ns, 13_333_333);
    }

    #[test]
    fn a_strategy_key_brings_the_strategys_own_maximum_step_and_interpolation() {
        let mut knobs = knobs();
        knobs.apply(Command::MaxStep);
        assert!(knobs.settings.max_step);
        knobs.apply(Command::Strategy(Strategy::VariableTarget));
        assert_eq!(knobs.settings.strategy, Strategy::VariableTarget);
        assert!(!knobs.settings.max_step);
        knobs.apply(Command::Strategy(Strategy::FixedInterp));
        assert!(knobs.settings.max_step && knobs.settings.interpolate);
    }

    #[test]
    fn max_loops_switches_between_off_and_the_remembered_k() {
        let mut knobs = knobs();
        assert_eq!(knobs.settings.max_loops, None);
        knobs.apply(Command::MaxLoops);
        assert_eq!(knobs.settings.max_loops, Some(SOLO_MAX_LOOPS));
        knobs.apply(Command::MaxLoops);
        assert_eq!(knobs.settings.max_loops, None);
        let mut given = Knobs::new(Strategy::Fixed, 60, 60, 3, Some(2));
        assert_eq!(given.settings.max_loops, Some(2));
        given.apply(Command::MaxLoops);
        given.apply(Command::MaxLoops);
        assert_eq!(given.settings.max_loops, Some(2));
    }

    #[test]
    fn toggles_flip_and_flip_back() {
        let mut knobs = knobs();
        for command in [Command::Interpolation, Command::Networked, Command::Spike] {
            let before = knobs;
            knobs.apply(command);
            assert_ne!(knobs, before, "{command:?}");
            knobs.apply(command);
            assert_eq!(knobs, before, "{command:?}");
        }
    }

    #[test]
    fn the_bot_count_rebuilds_the_world_and_the_cost_only_loads_it() {
        let mut knobs = knobs();
        assert_eq!(knobs.apply(Command::Bots(Change::Up)), Effect::World);
        assert_eq!(knobs.bots, 7);
        assert_eq!(knobs.apply(Command::Bots(Change::Down)), Effect::World);
        assert_eq!(knobs.apply(Command::Bots(Change::Down)), Effect::World);
        assert_eq!(knobs.bots, 1);
        assert_eq!(knobs.apply(Command::TickCost(Change::Up)), Effect::Load);
        assert_eq!(knobs.tick_cost_ns, NS_PER_MS);
        assert_eq!(knobs.apply(Command::TickCost(Change::Down)), Effect::Load);
        assert_eq!(knobs.tick_cost_ns, 0);
    }

    #[test]
    fn a_game_that_steps_only_by_its_tick_takes_no_variable_step() {
        let mut knobs = knobs().fixed_only("tally").expect("fixed is fixed");
        assert_eq!(
            knobs.apply(Command::Strategy(Strategy::VariableMax)),
            Effect::Refused
        );
        assert_eq!(knobs.settings.strategy, Strategy::Fixed);
        let refused = knobs.refused.expect("the panel says why");
        assert_eq!(
            refused.short(),
            "tally steps by its tick only: no variable-max"
        );
        assert_eq!(
            knobs.apply(Command::Strategy(Strategy::Mixed)),
            Effect::Rules
        );
        assert_eq!(
            (knobs.settings.strategy, knobs.refused),
            (Strategy::Mixed, None)
        );
        // Its world steps by its own tick: a new rate is a new world.
        assert_eq!(knobs.apply(Command::TickRate(Change::Up)), Effect::World);
        assert_eq!(knobs.settings.tick_ns, 13_333_333);
    }

    #[test]
    fn a_variable_strategy_is_refused_from_the_start_for_such_a_game() {
        let variable = Knobs::new(Strategy::Variable, 60, 60, 3, None);
        let refused = variable
            .fixed_only("tally")
            .expect_err("variable steps by dt");
        assert_eq!(
            refused.to_string(),
            "the game tally steps only by its fixed tick, and the strategy variable steps by a \
             measured dt: try fixed, fixed-max, fixed-interp or mixed"
        );
    }
}
