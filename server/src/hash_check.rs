//! Comparing the world hashes clients report, to call out desyncs.
//!
//! Pure state machine: the session feeds it reports and asks it to judge.
//! A tick is judged once every player still in the game at that tick has
//! reported it (or, if some never do, once too many ticks wait). The hash
//! most reporters agree on is the truth; players with another hash have
//! diverged. Without a strict majority (one player against one, say) every
//! reporter is named, since nobody can tell which side is right.

use std::collections::{BTreeMap, BTreeSet};

use lockstep_protocol::{PlayerId, Tick};

/// Ticks waiting for reports before the oldest is judged with whatever
/// arrived: bounds memory when a client stops reporting but is not dropped
/// yet. At the default interval of 15 ticks this is 16 s of play.
pub const MAX_PENDING_TICKS: usize = 64;

/// A newly detected divergence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Desync {
    /// The tick whose hashes differ.
    pub tick: Tick,
    /// Players newly found diverged at this tick, ascending.
    pub diverged: Vec<PlayerId>,
    /// The strict-majority hash, if there was one.
    pub majority: Option<u64>,
}

/// Hash reports and verdicts of one game.
#[derive(Debug, Default)]
pub struct HashCheck {
    pending: BTreeMap<Tick, BTreeMap<PlayerId, u64>>,
    diverged: BTreeSet<PlayerId>,
    /// Ticks at or before this are judged; later reports for them are late.
    judged_through: Option<Tick>,
    /// Reports judged so far, for the end-of-game verdict: how much
    /// evidence an "agreed" rests on.
    compared: u64,
}

impl HashCheck {
    /// A check with no reports.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records `player`'s hash for `tick`. The first report of a player for
    /// a tick counts; repeats and reports for judged ticks are ignored
    /// (returns false).
    pub fn report(&mut self, player: PlayerId, tick: Tick, hash: u64) -> bool {
        if self.judged_through.is_some_and(|judged| tick <= judged) {
            return false;
        }
        let reports = self.pending.entry(tick).or_default();
        if reports.contains_key(&player) {
            return false;
        }
        reports.insert(player, hash);
        true
    }

    /// Hash reports judged so far (each report of each judged tick).
    pub fn compared(&self) -> u64 {
        self.compared
    }

    /// Players found diverged so far.
    pub fn diverged(&self) -> &BTreeSet<PlayerId> {
        &self.diverged
    }

    /// Judges every tick, oldest first, whose reports are complete;
    /// `expected(player_tick)` lists who must report a tick. Returns the
    /// new desyncs.
    pub fn judge(&mut self, expected: impl Fn(Tick) -> Vec<PlayerId>) -> Vec<Desync> {
        let mut found = Vec::new();
        while let Some((&tick, reports)) = self.pending.first_key_value() {
            let complete = expected(tick).iter().all(|p| reports.contains_key(p));
            if !complete && self.pending.len() <= MAX_PENDING_TICKS {
                break;
            }
            let Some((tick, reports)) = self.pending.pop_first() else {
                break;
            };
            self.judged_through = Some(tick);
            self.compared += reports.len() as u64;
            if let Some(desync) = self.verdict(tick, &reports) {
                found.push(desync);
            }
        }
        found
    }

    fn verdict(&mut self, tick: Tick, reports: &BTreeMap<PlayerId, u64>) -> Option<Desync> {
        let mut votes: BTreeMap<u64, usize> = BTreeMap::new();
        for &hash in reports.values() {
            *votes.entry(hash).or_default() += 1;
        }
        if votes.len() < 2 {
            return None;
        }
        let majority = votes
            .iter()
            .find(|&(_, &count)| 2 * count > reports.len())
            .map(|(&hash, _)| hash);
        let diverged: Vec<PlayerId> = reports
            .iter()
            .filter(|&(_, &hash)| Some(hash) != majority)
            .map(|(&player, _)| player)
            .filter(|player| !self.diverged.contains(player))
            .collect();
        if diverged.is_empty() {
            return None;
        }
        self.diverged.extend(diverged.iter().copied());
        Some(Desync {
            tick,
            diverged,
            majority,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: PlayerId = PlayerId(0);
    const B: PlayerId = PlayerId(1);
    const C: PlayerId = PlayerId(2);

    fn all(_: Tick) -> Vec<PlayerId> {
        vec![A, B, C]
    }

    #[test]
    fn agreeing_reports_are_no_desync() {
        let mut check = HashCheck::new();
        for p in [A, B, C] {
            check.report(p, Tick(15), 7);
        }
        assert!(check.judge(all).is_empty());
    }

    #[test]
    fn waits_for_every_expected_player_before_judging() {
        let mut check = HashCheck::new();
        check.report(A, Tick(15), 7);
        check.report(B, Tick(15), 8);
        assert!(check.judge(all).is_empty());
        check.report(C, Tick(15), 7);
        let found = check.judge(all);
        assert_eq!(
            found,
            vec![Desync {
                tick: Tick(15),
                diverged: vec![B],
                majority: Some(7)
            }]
        );
    }

    #[test]
    fn the_majority_names_only_the_diverging_player_once() {
        let mut check = HashCheck::new();
        for (tick, b_hash) in [(15, 8), (30, 9)] {
            check.report(A, Tick(tick), 1);
            check.report(B, Tick(tick), b_hash);
            check.report(C, Tick(tick), 1);
        }
        let found = check.judge(all);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].tick, Tick(15));
        assert_eq!(found[0].diverged, vec![B]);
        assert_eq!(
            check.diverged().iter().copied().collect::<Vec<_>>(),
            vec![B]
        );
    }

    #[test]
    fn without_a_majority_every_reporter_is_named() {
        let mut check = HashCheck::new();
        check.report(A, Tick(15), 1);
        check.report(B, Tick(15), 2);
        let found = check.judge(|_| vec![A, B]);
        assert_eq!(found[0].diverged, vec![A, B]);
        assert_eq!(found[0].majority, None);
    }

    #[test]
    fn repeats_and_late_reports_are_ignored() {
        let mut check = HashCheck::new();
        assert!(check.report(A, Tick(15), 1));
        assert!(!check.report(A, Tick(15), 2));
        check.report(B, Tick(15), 1);
        check.judge(|_| vec![A, B]);
        assert!(!check.report(A, Tick(15), 3));
        assert!(!check.report(A, Tick(0), 3));
    }

    #[test]
    fn a_silent_player_cannot_make_reports_pile_up() {
        let mut check = HashCheck::new();
        for t in 0..=MAX_PENDING_TICKS as u32 {
            check.report(A, Tick(t * 15), 1);
            check.report(B, Tick(t * 15), if t == 0 { 2 } else { 1 });
        }
        // C never reports: the oldest ticks are judged anyway.
        let found = check.judge(all);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].tick, Tick(0));
        assert!(check.pending.len() <= MAX_PENDING_TICKS);
    }
}
