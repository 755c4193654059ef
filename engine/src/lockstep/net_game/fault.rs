//! Fault injection: a player that changes its own world by one ulp, to
//! see a desync detected and diagnosed (`--inject-desync-at`).

use lockstep_protocol::{Bundle, Tick};

use crate::game::{apply_phases, Game};

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
    /// memory would.
    pub phase: Option<&'static str>,
}

impl Fault {
    /// Whether the step that reaches `tick` is changed.
    pub(super) fn changes(self, tick: Tick) -> bool {
        tick >= self.tick
    }
}

/// Applies `bundle` phase by phase, calling `after` after each; when
/// `fault` names a phase and changes this step, the game is nudged there
/// first.
pub(super) fn step_with_fault<G: Game>(
    game: &mut G,
    bundle: &Bundle,
    fault: Option<Fault>,
    after: &mut dyn FnMut(&'static str, &mut G),
) {
    let target = game.tick().next();
    let phase = fault.filter(|f| f.changes(target)).and_then(|f| f.phase);
    apply_phases(game, bundle, &mut |name, game| {
        if phase == Some(name) {
            game.nudge();
        }
        after(name, game);
    });
}
