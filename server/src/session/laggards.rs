//! What the server says about the inputs the relay stood in for
//! ([`Substitution`]), per player and at a bounded rate.
//!
//! A machine that cannot keep up is late on every tick: a line per stand-in
//! would be 60 lines a second. So a player's first stand-in after a quiet
//! [`REPORT_EVERY`] is reported at once (the moment it began shows), and
//! the later ones are summed into one report per player per
//! [`REPORT_EVERY`]: where they began, how many, the longest wait. What
//! is still unreported when the player leaves or the game ends is reported
//! then. The log has every stand-in at debug level.

use std::collections::BTreeMap;
use std::time::Duration;

use lockstep_protocol::{PlayerId, Tick};

use crate::relay::Substitution;

/// At most one report per player this often.
pub(super) const REPORT_EVERY: Duration = Duration::from_secs(5);

/// Stand-ins of one player, summed for one report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Report {
    /// Whose inputs.
    pub(super) player: PlayerId,
    /// The tick of the first.
    pub(super) tick: Tick,
    /// The longest the player's input was waited for.
    pub(super) waited: Duration,
    /// How many.
    pub(super) count: u32,
}

/// One player's reporting state.
#[derive(Debug, Default)]
struct Reported {
    /// When its last report went out.
    last: Option<Duration>,
    /// Its stand-ins since then.
    unreported: Option<Report>,
}

impl Reported {
    /// The unreported stand-ins, if there are any and the last report is
    /// at least [`REPORT_EVERY`] old at `now`.
    fn take_due(&mut self, now: Duration) -> Option<Report> {
        if self
            .last
            .is_some_and(|last| now.saturating_sub(last) < REPORT_EVERY)
        {
            return None;
        }
        let report = self.unreported.take()?;
        self.last = Some(now);
        Some(report)
    }
}

/// The reporting state of every player of the running game.
#[derive(Debug, Default)]
pub(super) struct LaggardReports {
    players: BTreeMap<PlayerId, Reported>,
}

impl LaggardReports {
    /// Counts a stand-in made at `now`; returns a report when one is due
    /// at once (the player's first in [`REPORT_EVERY`]).
    pub(super) fn stood_in(&mut self, substitution: Substitution, now: Duration) -> Option<Report> {
        let reported = self.players.entry(substitution.player).or_default();
        let report = reported.unreported.get_or_insert(Report {
            player: substitution.player,
            tick: substitution.tick,
            waited: Duration::ZERO,
            count: 0,
        });
        report.count += 1;
        report.waited = report.waited.max(substitution.waited);
        reported.take_due(now)
    }

    /// The sums whose time has come at `now`, by player.
    pub(super) fn due(&mut self, now: Duration) -> Vec<Report> {
        self.players
            .values_mut()
            .filter_map(|reported| reported.take_due(now))
            .collect()
    }

    /// What `player` still has unreported (it leaves the game).
    pub(super) fn flush(&mut self, player: PlayerId) -> Option<Report> {
        self.players.remove(&player)?.unreported
    }

    /// Everything still unreported, by player (the game ends).
    pub(super) fn flush_all(&mut self) -> Vec<Report> {
        std::mem::take(&mut self.players)
            .into_values()
            .filter_map(|reported| reported.unreported)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P1: PlayerId = PlayerId(1);
    const P2: PlayerId = PlayerId(2);

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn stand_in(player: PlayerId, tick: u32, waited: u64) -> Substitution {
        Substitution {
            player,
            tick: Tick(tick),
            waited: ms(waited),
        }
    }

    fn report(player: PlayerId, tick: u32, waited: u64, count: u32) -> Report {
        Report {
            player,
            tick: Tick(tick),
            waited: ms(waited),
            count,
        }
    }

    #[test]
    fn a_player_late_on_every_tick_gets_one_report_then_one_sum_per_period() {
        let mut reports = LaggardReports::default();
        assert_eq!(
            reports.stood_in(stand_in(P1, 100, 52), ms(1000)),
            Some(report(P1, 100, 52, 1))
        );
        // 299 more ticks at 60 Hz, each late.
        for i in 1..300u32 {
            let now = ms(1000) + Duration::from_secs(1) * i / 60;
            let waited = if i == 7 { 58 } else { 50 };
            assert_eq!(reports.stood_in(stand_in(P1, 100 + i, waited), now), None);
            assert!(reports.due(now).is_empty());
        }
        assert_eq!(reports.due(ms(5999)), vec![]);
        assert_eq!(reports.due(ms(6000)), vec![report(P1, 101, 58, 299)]);
        assert_eq!(reports.due(ms(20_000)), vec![], "nothing new");
        // Late again after a quiet while: reported at once.
        assert_eq!(
            reports.stood_in(stand_in(P1, 2000, 50), ms(40_000)),
            Some(report(P1, 2000, 50, 1))
        );
    }

    #[test]
    fn players_are_reported_apart_and_flushed_when_they_leave_or_the_game_ends() {
        let mut reports = LaggardReports::default();
        assert!(reports.stood_in(stand_in(P1, 10, 50), ms(0)).is_some());
        assert!(reports.stood_in(stand_in(P2, 10, 50), ms(0)).is_some());
        assert_eq!(reports.stood_in(stand_in(P1, 11, 50), ms(20)), None);
        assert_eq!(reports.stood_in(stand_in(P2, 12, 60), ms(40)), None);
        assert_eq!(reports.flush(P1), Some(report(P1, 11, 50, 1)));
        assert_eq!(reports.flush(P1), None);
        assert_eq!(reports.flush_all(), vec![report(P2, 12, 60, 1)]);
        assert!(reports.flush_all().is_empty());
    }
}
