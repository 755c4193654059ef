//! The desync check: compares the world hashes the players report, tick
//! by tick, to find the players whose game diverged.
//!
//! Pure state machine: the session feeds it reports and asks it to judge.
//! A tick is judged once every player still in the game at that tick has
//! reported it (or, if some never do, once too many ticks wait). The hash
//! most reporters agree on is the truth; players with another hash have
//! diverged. Without a strict majority (one player against one, say) every
//! reporter is named, since nobody can tell which side is right.
//!
//! Hashes are compared every K ticks, so a desync found at tick T may have
//! begun up to K-1 ticks earlier. A [`Pinpoint`] finds where: every player
//! that reported T answers with its hash of every tick since the last
//! compared one, and the first tick where the answers differ is named.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use lockstep_protocol::{PlayerId, Tick, MAX_TICK_HASHES};

/// Ticks waiting for reports before the oldest is judged with whatever
/// arrived: bounds memory when a client stops reporting but is not dropped
/// yet. At the default interval of 15 ticks this is 16 s of play.
pub const MAX_PENDING_TICKS: usize = 64;

/// How long a desync waits for the players' per-tick hashes before it is
/// announced with the answers that arrived. Clients answer as soon as the
/// notice arrives; this only bounds a client that never does.
pub const PINPOINT_WAIT: Duration = Duration::from_secs(3);

/// A newly detected divergence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Desync {
    /// The tick whose hashes differ.
    pub tick: Tick,
    /// Players newly found diverged at this tick, ascending.
    pub diverged: Vec<PlayerId>,
    /// The strict-majority hash, if there was one.
    pub majority: Option<u64>,
    /// The tick judged before this one (0 when none was): the per-tick
    /// hashes that pinpoint the desync start here.
    pub since: Tick,
    /// Who reported this tick, ascending, except players found diverged
    /// earlier (whose hashes differ everywhere since): the players asked
    /// for their per-tick hashes.
    pub reporters: Vec<PlayerId>,
}

/// The hash reports of one game and what comparing them found.
#[derive(Debug, Default)]
pub struct DesyncCheck {
    pending: BTreeMap<Tick, BTreeMap<PlayerId, u64>>,
    diverged: BTreeSet<PlayerId>,
    /// Ticks at or before this are judged; later reports for them are late.
    judged_through: Option<Tick>,
    /// Reports judged so far, for the end-of-game verdict: how much
    /// evidence an "agreed" rests on.
    compared: u64,
    /// The latest judged tick a strict majority of its reporters agreed
    /// on, with that hash: a snapshot of this tick can be checked against
    /// it (`snapshots.rs`).
    confirmed: Option<(Tick, u64)>,
}

impl DesyncCheck {
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

    /// The latest judged tick whose reporters' strict majority agreed,
    /// and the hash they agreed on.
    pub fn confirmed(&self) -> Option<(Tick, u64)> {
        self.confirmed
    }

    /// Players found diverged so far.
    pub fn diverged(&self) -> &BTreeSet<PlayerId> {
        &self.diverged
    }

    /// Judges every tick, oldest first, whose reports are complete;
    /// `expected(tick)` lists who must report `tick`. Returns the new
    /// desyncs.
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
            let since = self.judged_through.replace(tick).unwrap_or(Tick(0));
            self.compared += reports.len() as u64;
            if let Some(hash) = strict_majority(&reports) {
                self.confirmed = Some((tick, hash));
            }
            if let Some(desync) = self.verdict(tick, since, &reports) {
                found.push(desync);
            }
        }
        found
    }

    fn verdict(
        &mut self,
        tick: Tick,
        since: Tick,
        reports: &BTreeMap<PlayerId, u64>,
    ) -> Option<Desync> {
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
        let reporters = reports
            .keys()
            .filter(|player| !self.diverged.contains(player))
            .copied()
            .collect();
        self.diverged.extend(diverged.iter().copied());
        Some(Desync {
            tick,
            diverged,
            majority,
            since,
            reporters,
        })
    }
}

/// The search for the first divergent tick of one desync: the per-tick
/// hashes of the players asked, compared tick by tick.
#[derive(Debug)]
pub struct Pinpoint {
    /// The desync being pinpointed.
    pub desync: Desync,
    /// Players asked whose answer has not arrived.
    waiting: BTreeSet<PlayerId>,
    /// Each answer: the tick of its first hash, and the hashes.
    answers: BTreeMap<PlayerId, (Tick, Vec<u64>)>,
    /// When the answers that arrived are judged anyway.
    deadline: Duration,
}

/// Why an answer was not taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AnswerError {
    /// The player was not asked, or has answered already.
    #[error("not asked, or answered already")]
    NotAsked,
    /// The hashes do not end at the desync's tick, start before its
    /// `since`, or are none or too many.
    #[error("the hashes are not of the ticks asked for")]
    OutOfRange,
}

impl Pinpoint {
    /// Asks `asked` (the desync's reporters still connected) for their
    /// hashes; judges at `deadline` at the latest.
    pub fn new(
        desync: Desync,
        asked: impl IntoIterator<Item = PlayerId>,
        deadline: Duration,
    ) -> Self {
        Pinpoint {
            desync,
            waiting: asked.into_iter().collect(),
            answers: BTreeMap::new(),
            deadline,
        }
    }

    /// Takes `player`'s hashes of the ticks from `first_tick` on. They
    /// must end at the desync's tick and start no earlier than its
    /// `since`, be at most [`MAX_TICK_HASHES`], and come from a player
    /// asked, once.
    pub fn answer(
        &mut self,
        player: PlayerId,
        first_tick: Tick,
        hashes: Vec<u64>,
    ) -> Result<(), AnswerError> {
        if !self.waiting.contains(&player) {
            return Err(AnswerError::NotAsked);
        }
        let last = u32::try_from(hashes.len())
            .ok()
            .filter(|&n| n > 0 && n as usize <= MAX_TICK_HASHES)
            .and_then(|n| first_tick.0.checked_add(n - 1));
        let within = first_tick >= self.desync.since && last == Some(self.desync.tick.0);
        if !within {
            return Err(AnswerError::OutOfRange);
        }
        self.waiting.remove(&player);
        self.answers.insert(player, (first_tick, hashes));
        Ok(())
    }

    /// Stops waiting for a player that left.
    pub fn forget(&mut self, player: PlayerId) {
        self.waiting.remove(&player);
    }

    /// Whether it can be judged at `now`: every answer is in, or the wait
    /// is over.
    pub fn is_due(&self, now: Duration) -> bool {
        self.waiting.is_empty() || now >= self.deadline
    }

    /// The first tick, from `since` on, for which the answers that cover
    /// it hold different hashes. `None` when fewer than two players
    /// answered, or their answers agree everywhere (which contradicts
    /// their reports: nothing can be named then).
    pub fn first(&self) -> Option<Tick> {
        // Every answer ends at the desync's tick and holds at most
        // MAX_TICK_HASHES: no earlier tick can be covered.
        let span = u32::try_from(MAX_TICK_HASHES).unwrap_or(u32::MAX) - 1;
        let from = self
            .desync
            .since
            .0
            .max(self.desync.tick.0.saturating_sub(span));
        (from..=self.desync.tick.0).map(Tick).find(|&tick| {
            let mut hashes = self.answers.values().filter_map(|(first, hashes)| {
                let i = tick.0.checked_sub(first.0)? as usize;
                hashes.get(i)
            });
            hashes
                .next()
                .is_some_and(|one| hashes.any(|other| other != one))
        })
    }
}

/// The hash more than half of `reports` agree on, if any.
fn strict_majority(reports: &BTreeMap<PlayerId, u64>) -> Option<u64> {
    let mut votes: BTreeMap<u64, usize> = BTreeMap::new();
    for &hash in reports.values() {
        *votes.entry(hash).or_default() += 1;
    }
    votes
        .into_iter()
        .find(|&(_, count)| 2 * count > reports.len())
        .map(|(hash, _)| hash)
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
    fn the_latest_tick_a_majority_agreed_on_is_confirmed() {
        let mut check = DesyncCheck::new();
        assert_eq!(check.confirmed(), None);
        for player in [A, B, C] {
            check.report(player, Tick(15), 7);
        }
        check.report(A, Tick(30), 8);
        check.report(B, Tick(30), 8);
        check.report(C, Tick(30), 9);
        check.report(A, Tick(45), 1);
        check.report(B, Tick(45), 2);
        check.report(C, Tick(45), 3);
        check.judge(all);
        // Tick 45 had no majority: tick 30's stands.
        assert_eq!(check.confirmed(), Some((Tick(30), 8)));
    }

    #[test]
    fn agreeing_reports_are_no_desync() {
        let mut check = DesyncCheck::new();
        for p in [A, B, C] {
            check.report(p, Tick(15), 7);
        }
        assert!(check.judge(all).is_empty());
    }

    #[test]
    fn waits_for_every_expected_player_before_judging() {
        let mut check = DesyncCheck::new();
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
                majority: Some(7),
                since: Tick(0),
                reporters: vec![A, B, C],
            }]
        );
    }

    #[test]
    fn the_majority_names_only_the_diverging_player_once() {
        let mut check = DesyncCheck::new();
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
        let mut check = DesyncCheck::new();
        check.report(A, Tick(15), 1);
        check.report(B, Tick(15), 2);
        let found = check.judge(|_| vec![A, B]);
        assert_eq!(found[0].diverged, vec![A, B]);
        assert_eq!(found[0].majority, None);
    }

    #[test]
    fn repeats_and_late_reports_are_ignored() {
        let mut check = DesyncCheck::new();
        assert!(check.report(A, Tick(15), 1));
        assert!(!check.report(A, Tick(15), 2));
        check.report(B, Tick(15), 1);
        check.judge(|_| vec![A, B]);
        assert!(!check.report(A, Tick(15), 3));
        assert!(!check.report(A, Tick(0), 3));
    }

    #[test]
    fn a_silent_player_cannot_make_reports_pile_up() {
        let mut check = DesyncCheck::new();
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

    #[test]
    fn a_desync_says_since_when_and_asks_only_players_not_diverged_before() {
        let mut check = DesyncCheck::new();
        for (tick, b, c) in [(15, 1, 1), (30, 2, 1), (45, 2, 3)] {
            check.report(A, Tick(tick), 1);
            check.report(B, Tick(tick), b);
            check.report(C, Tick(tick), c);
        }
        let found = check.judge(all);
        assert_eq!(found.len(), 2);
        assert_eq!(
            (found[0].since, found[0].reporters.clone()),
            (Tick(15), vec![A, B, C])
        );
        assert_eq!(
            (found[1].since, found[1].reporters.clone()),
            (Tick(30), vec![A, C])
        );
    }

    fn pinpoint(since: u32, tick: u32) -> Pinpoint {
        let desync = Desync {
            tick: Tick(tick),
            diverged: vec![B],
            majority: Some(1),
            since: Tick(since),
            reporters: vec![A, B, C],
        };
        Pinpoint::new(desync, [A, B, C], Duration::from_secs(3))
    }

    #[test]
    fn the_first_tick_where_the_answers_part_is_named() {
        let mut p = pinpoint(15, 30);
        let honest: Vec<u64> = (15..=30).collect();
        let mut faulty = honest.clone();
        for h in &mut faulty[8..] {
            *h += 100;
        }
        assert_eq!(p.answer(A, Tick(15), honest.clone()), Ok(()));
        assert!(!p.is_due(Duration::ZERO));
        assert_eq!(p.answer(B, Tick(15), faulty), Ok(()));
        // An answer that starts later (a shorter history) still counts.
        assert_eq!(p.answer(C, Tick(20), honest[5..].to_vec()), Ok(()));
        assert!(p.is_due(Duration::ZERO));
        assert_eq!(p.first(), Some(Tick(23)));
    }

    #[test]
    fn without_every_answer_it_waits_until_the_deadline() {
        let mut p = pinpoint(0, 15);
        p.answer(A, Tick(0), vec![7; 16]).unwrap();
        assert!(!p.is_due(Duration::from_millis(2999)));
        assert!(p.is_due(Duration::from_secs(3)));
        // One answer compares with nothing.
        assert_eq!(p.first(), None);
        p.forget(B);
        p.forget(C);
        assert!(p.is_due(Duration::ZERO));
    }

    #[test]
    fn answers_out_of_range_unasked_or_repeated_are_refused() {
        let mut p = pinpoint(15, 30);
        assert_eq!(
            p.answer(A, Tick(14), vec![0; 17]),
            Err(AnswerError::OutOfRange)
        );
        assert_eq!(
            p.answer(A, Tick(15), vec![0; 15]),
            Err(AnswerError::OutOfRange)
        );
        assert_eq!(
            p.answer(A, Tick(15), vec![0; 17]),
            Err(AnswerError::OutOfRange)
        );
        assert_eq!(
            p.answer(A, Tick(31), Vec::new()),
            Err(AnswerError::OutOfRange)
        );
        assert_eq!(
            p.answer(A, Tick(u32::MAX), vec![0; 2]),
            Err(AnswerError::OutOfRange)
        );
        assert_eq!(
            p.answer(PlayerId(9), Tick(15), vec![0; 16]),
            Err(AnswerError::NotAsked)
        );
        assert_eq!(p.answer(A, Tick(15), vec![0; 16]), Ok(()));
        assert_eq!(
            p.answer(A, Tick(15), vec![1; 16]),
            Err(AnswerError::NotAsked)
        );
        let mut wide = pinpoint(0, 5000);
        assert_eq!(
            wide.answer(A, Tick(0), vec![0; 5001]),
            Err(AnswerError::OutOfRange)
        );
        assert_eq!(wide.answer(A, Tick(3977), vec![0; 1024]), Ok(()));
    }
}
