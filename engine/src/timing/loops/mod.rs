//! Game loop strategies, every one the seed articles describe (docs/sources.md), as pure state
//! machines: the ladder the game loop lab (`lockstep-client lab`) climbs,
//! whose last rung is the loop the networked client runs.
//!
//! # How it works
//!
//! A strategy never reads a clock. The frontend hands [`Loop`] a clock
//! reading in nanoseconds at the start of each frame, asks it for updates
//! until it answers `None` (each [`Update`] carries its `dt`), and ends the
//! frame to learn the interpolation alpha and how much real time was thrown
//! away. That is the functional loop article's loop as a function of clock readings, so a fake
//! clock tests it exactly, and `lockstep-client loops --trace` ([`trace`])
//! prints what it does frame by frame.
//!
//! The fixed-step strategies are [`crate::timing::accumulator::FixedStep`], the
//! accumulator the networked client, solo play and replays run: the lab's
//! [`Settings`] only choose its [`Policy`], and with `networked` on they
//! choose exactly the networked client's.
//!
//! # The ladder
//!
//! | strategy | what it does | from ([sources](../docs/sources.md)) |
//! |---|---|---|
//! | `variable` | one update per frame with the measured dt, frames as fast as the machine goes | fx-game-loops, JGameLoopStudy |
//! | `variable-target` | the same, waiting out each frame to a target frame rate, so dt is never tiny | fx-game-loops |
//! | `variable-max` | the same, with a maximum step: a long frame slows game time instead of taking a huge step | fx-game-loops |
//! | `fixed` | an accumulator sliced into fixed ticks at the target frame rate: 0, 1 or 2 ticks a frame (temporal aliasing), and nothing stops the spiral of death | fx-game-loops, flipcode, functional loop |
//! | `fixed-max` | the same, with a maximum delta: a slow machine slows game time instead of spiralling | fx-game-loops |
//! | `fixed-interp` | the same, drawing between the last two ticks at alpha = lag / tick: the aliasing is gone | fx-game-loops, flipcode |
//! | `mixed` | fixed updates, frames as fast as the machine allows: FPS and UPS go their own ways | JGameLoopStudy |
//!
//! Two rules apply to any strategy: `max_loops` is flipcode's MAX_LOOPS
//! guard (at most K ticks a frame, then pending time is discarded, seed
//! 001), and `networked` switches every cap and discard off, because peers
//! in lockstep cannot slow their game time down alone (flipcode). Frames
//! that wait for a target frame rate wait for the deadline a strategy names
//! through the client's frame pacer (java-gaming's lesson: do not trust
//! `sleep`); nothing here sleeps or reads a clock.

mod machine;
mod millis;
pub mod trace;
mod variable;

use std::fmt;
use std::str::FromStr;

use crate::timing::accumulator::Policy;

pub use machine::{Loop, Plan, Update};
pub use millis::{format_ms, parse_ms, ParseMsError};
pub use variable::VariableStep;

/// fx-game-loops' maximum delta (and maximum step), `maxDelta = 0.05`: a frame
/// counts at most 50 ms, three ticks at 60 Hz, before game time slows down.
pub const DEFAULT_MAX_DELTA_NS: u64 = 50_000_000;

/// The ladder as `lockstep-client loops` prints it: one line per rung,
/// its key in the lab, its name and what to look for.
pub fn ladder() -> Vec<String> {
    let mut lines: Vec<String> = (1..)
        .zip(Strategy::ALL)
        .map(|(key, strategy)| format!("{key} {:<15} {}", strategy.name(), strategy.lesson()))
        .collect();
    lines.push(format!(
        "N {:<15} flipcode: any of them with no maximum delta, no MAX_LOOPS, no discard",
        "--networked"
    ));
    lines
}

/// One rung of the ladder; the names are the command line's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// Variable step, uncapped: fx-game-loops' first loop and JGameLoopStudy's basic
    /// variable step loop.
    Variable,
    /// Variable step with a target frame rate (fx-game-loops).
    VariableTarget,
    /// Variable step with a target frame rate and a maximum step (seed
    /// 000).
    VariableMax,
    /// Fixed step with an accumulator (fx-game-loops; flipcode and the functional loop are this
    /// loop, with interpolation).
    Fixed,
    /// Fixed step with an accumulator and a maximum delta (fx-game-loops).
    FixedMax,
    /// Fixed step with an accumulator, a maximum delta and interpolation
    /// (fx-game-loops).
    FixedInterp,
    /// JGameLoopStudy's mixed step loop: fixed state updates, rendering as fast
    /// as allowed.
    Mixed,
}

impl Strategy {
    /// The ladder in order, as keys 1 to 7 of the lab select it.
    pub const ALL: [Strategy; 7] = [
        Strategy::Variable,
        Strategy::VariableTarget,
        Strategy::VariableMax,
        Strategy::Fixed,
        Strategy::FixedMax,
        Strategy::FixedInterp,
        Strategy::Mixed,
    ];

    /// The name on the command line and on screen.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Variable => "variable",
            Strategy::VariableTarget => "variable-target",
            Strategy::VariableMax => "variable-max",
            Strategy::Fixed => "fixed",
            Strategy::FixedMax => "fixed-max",
            Strategy::FixedInterp => "fixed-interp",
            Strategy::Mixed => "mixed",
        }
    }

    /// What this rung adds, in a few words (fits the lab's ladder).
    pub fn summary(self) -> &'static str {
        match self {
            Strategy::Variable => "variable step, uncapped",
            Strategy::VariableTarget => "+ target frame rate",
            Strategy::VariableMax => "+ maximum step",
            Strategy::Fixed => "fixed step, accumulator",
            Strategy::FixedMax => "+ maximum delta",
            Strategy::FixedInterp => "+ interpolation",
            Strategy::Mixed => "fixed updates, frames unpaced",
        }
    }

    /// What to look for when running it, and where it comes from.
    pub fn lesson(self) -> &'static str {
        match self {
            Strategy::Variable => {
                "fx-game-loops, JGameLoopStudy: game time follows real time, but dt is whatever the frame took"
            }
            Strategy::VariableTarget => {
                "fx-game-loops: waits out each frame, so dt is never tiny; big dt on slow frames"
            }
            Strategy::VariableMax => {
                "fx-game-loops: a frame longer than the maximum step slows game time down"
            }
            Strategy::Fixed => {
                "fx-game-loops, flipcode, functional loop: 0, 1 or 2 ticks a frame (aliasing); a costly tick spirals"
            }
            Strategy::FixedMax => {
                "fx-game-loops: the maximum delta turns the spiral of death into slow motion"
            }
            Strategy::FixedInterp => {
                "fx-game-loops, flipcode: drawn between the last two ticks at alpha = lag / tick"
            }
            Strategy::Mixed => "JGameLoopStudy: a slow frame costs FPS; UPS catches up after it",
        }
    }

    /// Whether updates are fixed ticks (the accumulator) rather than one
    /// measured step per frame.
    pub fn fixed_steps(self) -> bool {
        !matches!(
            self,
            Strategy::Variable | Strategy::VariableTarget | Strategy::VariableMax
        )
    }

    /// Whether frames wait for the target frame rate. The fixed-step rungs
    /// do, as in fx-game-loops' demo, where JavaFX pulses cap frames at 60 per
    /// second; `variable` and `mixed` run as fast as the machine allows.
    pub fn paced(self) -> bool {
        !matches!(self, Strategy::Variable | Strategy::Mixed)
    }

    /// Whether the strategy caps the step (variable) or the frame's delta
    /// (fixed) by default.
    pub fn caps_the_step(self) -> bool {
        matches!(
            self,
            Strategy::VariableMax | Strategy::FixedMax | Strategy::FixedInterp
        )
    }

    /// Whether frames are drawn between the last two ticks by default.
    pub fn interpolates(self) -> bool {
        self == Strategy::FixedInterp
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A strategy name that is not on the ladder.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown loop strategy {0:?}; try variable, variable-target, variable-max, fixed, fixed-max, fixed-interp or mixed"
)]
pub struct UnknownStrategy(pub String);

impl FromStr for Strategy {
    type Err = UnknownStrategy;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Strategy::ALL
            .into_iter()
            .find(|strategy| strategy.name() == s)
            .ok_or_else(|| UnknownStrategy(s.to_owned()))
    }
}

/// The rules a [`Loop`] runs by: a strategy and everything that can be
/// switched independently of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// The rung of the ladder.
    pub strategy: Strategy,
    /// Game time per fixed tick.
    pub tick_ns: u64,
    /// Frame time the paced strategies wait for (1 / target FPS).
    pub target_frame_ns: u64,
    /// The maximum step (variable) or maximum delta (fixed), when on.
    pub max_delta_ns: u64,
    /// Whether [`Self::max_delta_ns`] applies; starts as the strategy says.
    pub max_step: bool,
    /// Whether frames are drawn between the last two ticks; starts as the
    /// strategy says. Variable steps have no previous tick to draw from.
    pub interpolate: bool,
    /// Flipcode's MAX_LOOPS with discarding of pending time, if on.
    pub max_loops: Option<u32>,
    /// The networked client's rule: no maximum delta, no MAX_LOOPS, no
    /// discarding, whatever else says so.
    pub networked: bool,
}

impl Settings {
    /// `strategy` as it comes: its own maximum step and interpolation, no
    /// MAX_LOOPS, not networked.
    pub fn new(strategy: Strategy, tick_ns: u64, target_frame_ns: u64) -> Settings {
        Settings {
            strategy,
            tick_ns: tick_ns.max(1),
            target_frame_ns,
            max_delta_ns: DEFAULT_MAX_DELTA_NS,
            max_step: strategy.caps_the_step(),
            interpolate: strategy.interpolates(),
            max_loops: None,
            networked: false,
        }
    }

    /// Switches to `strategy`, whose maximum step and interpolation replace
    /// the current ones; the other settings stay.
    #[must_use]
    pub fn with_strategy(self, strategy: Strategy) -> Settings {
        Settings {
            strategy,
            max_step: strategy.caps_the_step(),
            interpolate: strategy.interpolates(),
            ..self
        }
    }

    /// The cap on a frame's step (variable) or delta (fixed) in force.
    pub fn max_step_ns(&self) -> Option<u64> {
        (self.max_step && !self.networked).then_some(self.max_delta_ns)
    }

    /// The accumulator's policy for the fixed-step strategies: with
    /// `networked`, exactly the networked client's.
    pub fn policy(&self) -> Policy {
        if self.networked {
            Policy::NETWORKED
        } else {
            Policy::Solo {
                max_delta_ns: self.max_step_ns(),
                max_loops: self.max_loops,
            }
        }
    }

    /// Whether frames are drawn at the loop's alpha rather than at the
    /// last tick.
    pub fn draws_interpolated(&self) -> bool {
        self.interpolate && self.strategy.fixed_steps()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn every_strategy_is_found_by_its_own_name() {
        for strategy in Strategy::ALL {
            assert_eq!(strategy.name().parse(), Ok(strategy));
            assert_eq!(strategy.to_string(), strategy.name());
        }
        assert_eq!(
            "fixed-step".parse::<Strategy>(),
            Err(UnknownStrategy("fixed-step".into()))
        );
    }

    #[test]
    fn the_ladder_lists_every_rung_then_the_networked_rule() {
        let ladder = ladder();
        assert_eq!(ladder.len(), 8);
        assert!(ladder[0].starts_with("1 variable "), "{}", ladder[0]);
        assert!(ladder[6].starts_with("7 mixed "), "{}", ladder[6]);
        assert!(ladder[7].starts_with("N --networked "), "{}", ladder[7]);
    }

    #[test]
    fn the_ladder_adds_one_thing_per_rung() {
        let rung = |s: Strategy| {
            (
                s.fixed_steps(),
                s.paced(),
                s.caps_the_step(),
                s.interpolates(),
            )
        };
        assert_eq!(rung(Strategy::Variable), (false, false, false, false));
        assert_eq!(rung(Strategy::VariableTarget), (false, true, false, false));
        assert_eq!(rung(Strategy::VariableMax), (false, true, true, false));
        assert_eq!(rung(Strategy::Fixed), (true, true, false, false));
        assert_eq!(rung(Strategy::FixedMax), (true, true, true, false));
        assert_eq!(rung(Strategy::FixedInterp), (true, true, true, true));
        assert_eq!(rung(Strategy::Mixed), (true, false, false, false));
    }

    #[test]
    fn networked_settings_are_the_networked_clients_policy() {
        let mut settings = Settings::new(Strategy::FixedInterp, 16 * MS, 16 * MS);
        settings.max_loops = Some(5);
        settings.networked = true;
        assert_eq!(settings.policy(), Policy::NETWORKED);
        assert_eq!(settings.max_step_ns(), None);
    }

    #[test]
    fn solo_settings_carry_the_maximum_delta_and_max_loops() {
        let mut settings = Settings::new(Strategy::FixedMax, 16 * MS, 16 * MS);
        settings.max_loops = Some(3);
        assert_eq!(
            settings.policy(),
            Policy::Solo {
                max_delta_ns: Some(DEFAULT_MAX_DELTA_NS),
                max_loops: Some(3),
            }
        );
        settings.max_step = false;
        assert_eq!(settings.policy(), Policy::flipcode(3));
    }

    #[test]
    fn switching_strategy_resets_only_what_the_strategy_decides() {
        let mut settings = Settings::new(Strategy::Fixed, 20 * MS, 10 * MS);
        settings.max_step = true;
        settings.max_loops = Some(4);
        let switched = settings.with_strategy(Strategy::FixedInterp);
        assert!(switched.max_step && switched.interpolate);
        let back = switched.with_strategy(Strategy::Fixed);
        assert!(!back.max_step && !back.interpolate);
        assert_eq!((back.tick_ns, back.target_frame_ns), (20 * MS, 10 * MS));
        assert_eq!(back.max_loops, Some(4));
    }

    #[test]
    fn only_fixed_steps_are_drawn_interpolated() {
        let mut variable = Settings::new(Strategy::Variable, MS, MS);
        variable.interpolate = true;
        assert!(!variable.draws_interpolated());
        assert!(Settings::new(Strategy::FixedInterp, MS, MS).draws_interpolated());
    }
}
