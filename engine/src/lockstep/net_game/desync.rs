//! What a player has to say about a desync: its dump of a tick, its sync
//! trace of it, and its per-tick hashes.

use lockstep_protocol::{DesyncNotice, Tick};

use super::fault::step_with_fault;
use super::{NetGame, MAX_TICK_HASHES};
use crate::determinism::desync::{DesyncDump, PhaseHash};
use crate::game::Game;
use crate::trace::Trace;

impl<G: Game> NetGame<G> {
    /// The dump of `tick` (one the server named in a desync), if it is
    /// still in the history, with its step redone phase by phase and the
    /// values the game traced in it ([`crate::trace`]). An injected fault
    /// inside the step is redone too, as a machine that computes
    /// differently would; one after it is not, as a stray write is not.
    pub fn desync_dump(&self, tick: Tick) -> Option<DesyncDump<G>> {
        let mut dump = self.history.dump(tick, &self.spec, self.me, &self.name)?;
        (dump.phases, dump.trace) = self.redo(tick);
        Some(dump)
    }

    /// A player's sync trace of `tick`, its step redone from the history
    /// (as in [`NetGame::desync_dump`]); `None` for a spectator, or when
    /// the tick before has left the history.
    pub fn trace_of(&self, tick: Tick) -> Option<Trace> {
        self.me?;
        self.redo(tick).1
    }

    /// `tick`'s step redone from the history with this player's injected
    /// fault, if any: its phases' hashes and its trace.
    fn redo(&self, tick: Tick) -> (Vec<PhaseHash>, Option<Trace>) {
        self.history.redo(tick, |game, bundle, after| {
            step_with_fault(game, bundle, self.fault, after);
        })
    }

    /// What a player tells the server after a desync notice: the hash of
    /// every kept tick from `notice.since` to `notice.tick` (at most
    /// [`MAX_TICK_HASHES`], the latest ones), as the tick of the first and
    /// the hashes. `None` for a spectator, or if none is kept.
    pub fn tick_hashes(&self, notice: &DesyncNotice) -> Option<(Tick, Vec<u64>)> {
        self.me?;
        let span = u32::try_from(MAX_TICK_HASHES).unwrap_or(u32::MAX);
        let from = notice
            .since
            .max(Tick(notice.tick.0.saturating_sub(span - 1)));
        self.history.hashes(from, notice.tick)
    }
}
