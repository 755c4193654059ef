//! Fault injection: a player that changes its own world by one ulp, to
//! see a desync detected and diagnosed (`--inject-desync-at`).

use lockstep_protocol::{Bundle, Tick};

use crate::game::{apply_phases, Game};
use crate::trace;

/// A fault to inject: [`Game::nudge`] in every step from the one that
/// reaches `tick` on.
///
/// Every step, not once: a machine that computes differently does so
/// again on the next tick, and a single one-ulp change can vanish before
/// the next hash check (a wall clamps the nudged coordinate, a sum rounds
/// it away): then no desync is seen at all. In the ball game, 37 of 400
/// single nudges were gone 15 ticks later, a nudge in every step never
/// (`lockstep_balls`'s tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fault {
    /// The first tick whose state is changed: the step that reaches it is
    /// the first one nudged.
    pub tick: Tick,
    /// After which phase of the step ([`Game::step_phases`]); `None`:
    /// after the whole step, outside the simulation, as a stray write to
    /// memory would (unless `value` names a value).
    pub phase: Option<&'static str>,
    /// The label of a value the game traces ([`crate::trace`]): the first
    /// one traced under it in each step is changed instead, as a machine
    /// that computes that line differently would, and `desync-diff` names
    /// the line.
    pub value: Option<&'static str>,
}

impl Fault {
    /// Whether the step that reaches `tick` is changed.
    pub(super) fn changes(self, tick: Tick) -> bool {
        tick >= self.tick
    }
}

/// Applies `bundle` phase by phase, calling `after` after each; when
/// `fault` changes this step, the game is nudged after the phase it names
/// first, or the value it names is changed where it is traced.
pub(super) fn step_with_fault<G: Game>(
    game: &mut G,
    bundle: &Bundle,
    fault: Option<Fault>,
    after: &mut dyn FnMut(&'static str, &mut G),
) {
    let target = game.tick().next();
    let fault = fault.filter(|f| f.changes(target));
    let phase = fault.and_then(|f| f.phase);
    let mut step = || {
        apply_phases(game, bundle, &mut |name, game| {
            if phase == Some(name) {
                game.nudge();
            }
            after(name, game);
        });
    };
    match fault.and_then(|f| f.value) {
        Some(label) => {
            trace::with_fault(label, step);
        }
        None => step(),
    }
}
