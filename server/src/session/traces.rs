//! The players' sync traces of a desync's first tick. Once the server has
//! pinpointed a desync, every player steps that tick again from its
//! history with the trace on and sends the values its game traced
//! ([`ClientMessage::Trace`](lockstep_protocol::ClientMessage::Trace)).
//! The server keeps the first trace of a diverged player and the first of
//! a majority player (or, with no majority, of a second diverged one,
//! blaming nobody), compares them without the game's code and tells
//! everyone the first value computed differently, with its file and line.
//! A trace that is malformed, of a tick nobody waits for, or from someone
//! already heard is set aside with a line in the log: one peer's claim
//! can only fill its own side.

use lockstep_engine::trace::{self, Entry, TraceDiff};
use lockstep_protocol::{
    PlayerId, ServerMessage, Tick, TraceReport, MAX_TRACE_LINES, MAX_TRACE_LINE_CHARS,
};
use tracing::{debug, warn};

use super::{ConnId, Role, Session};
use crate::ServerEvent;

/// Most desyncs whose traces a game waits for at once; an older one is
/// given up for a newer.
pub(super) const MAX_TRACE_WAITS: usize = 4;

/// Entries shown either side of the first differing value.
const CONTEXT: usize = 3;

/// One side of a comparison: whose trace, its values, and how long the
/// whole trace was.
type Side = (PlayerId, Vec<Entry>, u32);

/// A pinpointed desync waiting for two traces of its first tick.
#[derive(Debug)]
pub(super) struct TraceWait {
    /// The first divergent tick.
    first: Tick,
    /// The players found diverged.
    diverged: Vec<PlayerId>,
    /// The players who reported the majority's hash.
    majority: Vec<PlayerId>,
    /// A diverged player's trace.
    left: Option<Side>,
    /// A majority player's trace (a second diverged player's when there is
    /// no majority).
    right: Option<Side>,
}

impl TraceWait {
    /// A wait for the traces of `first`, a tick where `diverged` parted
    /// from the rest of `reporters`.
    pub(super) fn new(first: Tick, diverged: &[PlayerId], reporters: &[PlayerId]) -> TraceWait {
        TraceWait {
            first,
            diverged: diverged.to_vec(),
            majority: reporters
                .iter()
                .copied()
                .filter(|p| !diverged.contains(p))
                .collect(),
            left: None,
            right: None,
        }
    }

    /// Takes `player`'s trace if it fills a side still empty; whether it
    /// did.
    fn take(&mut self, player: PlayerId, entries: Vec<Entry>, total: u32) -> bool {
        let heard = |side: &Option<Side>| side.as_ref().is_some_and(|(p, _, _)| *p == player);
        if heard(&self.left) || heard(&self.right) {
            return false;
        }
        let slot = if self.diverged.contains(&player) && self.left.is_none() {
            &mut self.left
        } else if self.majority.contains(&player)
            || (self.majority.is_empty() && self.diverged.contains(&player))
        {
            &mut self.right
        } else {
            return false;
        };
        if slot.is_some() {
            return false;
        }
        *slot = Some((player, entries, total));
        true
    }
}

/// The report on two traces, at most [`MAX_TRACE_LINES`] lines of at
/// most [`MAX_TRACE_LINE_CHARS`] characters: the first differing value
/// and around it, or that the values sent agree.
fn compare((_, a, a_total): &Side, (_, b, b_total): &Side) -> Vec<String> {
    let found = trace::diff(a, b);
    let cut_short = *a_total as usize > a.len() || *b_total as usize > b.len();
    let mut lines = match found {
        TraceDiff::Agree { .. } | TraceDiff::Length { .. } if cut_short => vec![format!(
            "trace: the first {} values agree; the traces hold {a_total} and {b_total}, more than a \
             message carries: desync-diff on the two dumps compares them all",
            a.len().min(b.len())
        )],
        _ => found.report(a, b, CONTEXT),
    };
    lines.truncate(MAX_TRACE_LINES);
    for line in &mut lines {
        if line.chars().count() > MAX_TRACE_LINE_CHARS {
            *line = line.chars().take(MAX_TRACE_LINE_CHARS).collect();
        }
    }
    lines
}

impl Session {
    /// A player's sync trace of `tick`: kept if a pinpointed desync waits
    /// for it, and once both sides are in, compared and announced.
    pub(super) fn take_trace(&mut self, conn: ConnId, tick: Tick, report: &TraceReport) {
        let Some(Role::Player(player)) = self.clients.get(&conn).map(|c| c.role) else {
            return;
        };
        let entries = match trace::from_report(tick.0, report) {
            Ok(entries) => entries,
            Err(why) => {
                warn!(%player, %tick, %why, "a malformed trace set aside");
                return;
            }
        };
        let Some(game) = &mut self.game else {
            return;
        };
        let Some(at) = game.traces.iter().position(|w| w.first == tick) else {
            debug!(%player, %tick, "a trace of a tick nobody waits for");
            return;
        };
        if !game.traces[at].take(player, entries, report.total) {
            debug!(%player, %tick, "a trace not needed");
            return;
        }
        let wait = &game.traces[at];
        if wait.left.is_none() || wait.right.is_none() {
            return;
        }
        let Some(TraceWait {
            left: Some(left),
            right: Some(right),
            ..
        }) = game.traces.remove(at)
        else {
            return;
        };
        let lines = compare(&left, &right);
        let (diverged, majority) = (self.name_of(left.0), self.name_of(right.0));
        self.emit(ServerEvent::Traced {
            tick,
            diverged: diverged.clone(),
            majority: majority.clone(),
            first: lines.first().cloned().unwrap_or_default(),
        });
        self.tell_everyone(&ServerMessage::TraceDiff {
            tick,
            diverged,
            majority,
            lines,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(player: u8, values: &[f32], total: u32) -> Side {
        let ((), trace) = trace::record(7, || {
            for (i, v) in values.iter().enumerate() {
                trace::trace_item("x", i, *v);
            }
        });
        (PlayerId(player), trace.entries, total)
    }

    #[test]
    fn a_wait_takes_one_diverged_and_one_majority_trace_and_nobody_twice() {
        let mut wait = TraceWait::new(
            Tick(7),
            &[PlayerId(2)],
            &[PlayerId(0), PlayerId(1), PlayerId(2)],
        );
        let (_, entries, _) = side(0, &[1.0], 1);
        assert!(
            !wait.take(PlayerId(5), entries.clone(), 1),
            "not a reporter"
        );
        assert!(wait.take(PlayerId(0), entries.clone(), 1));
        assert!(
            !wait.take(PlayerId(1), entries.clone(), 1),
            "the majority's side is full"
        );
        assert!(!wait.take(PlayerId(0), entries.clone(), 1), "heard already");
        assert!(wait.take(PlayerId(2), entries, 1));
        assert!(wait.left.is_some() && wait.right.is_some());
    }

    #[test]
    fn with_no_majority_two_diverged_traces_are_compared() {
        let mut wait = TraceWait::new(
            Tick(7),
            &[PlayerId(0), PlayerId(1)],
            &[PlayerId(0), PlayerId(1)],
        );
        let (_, entries, _) = side(0, &[1.0], 1);
        assert!(wait.take(PlayerId(1), entries.clone(), 1));
        assert!(wait.take(PlayerId(0), entries, 1));
        assert!(wait.left.is_some() && wait.right.is_some());
    }

    #[test]
    fn the_report_names_the_first_value_or_says_what_was_not_sent() {
        let lines = compare(&side(2, &[1.0, 2.0, 3.0], 3), &side(0, &[1.0, 2.5, 3.0], 3));
        assert!(
            lines[0].starts_with("first differing value: ")
                && lines[0].contains(" x[1] tick=7 ")
                && lines[0].ends_with("(1 value agreed before it)"),
            "{lines:?}"
        );
        assert!(lines.len() <= MAX_TRACE_LINES);
        let cut = compare(&side(2, &[1.0, 2.0], 9), &side(0, &[1.0, 2.0], 9));
        assert!(
            cut[0].starts_with("trace: the first 2 values agree; the traces hold 9 and 9"),
            "{cut:?}"
        );
        let agree = compare(&side(2, &[1.0], 1), &side(0, &[1.0], 1));
        assert_eq!(agree, ["trace: the traces agree (1 value)"]);
    }
}
