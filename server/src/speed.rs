//! Speed control: the game slows down for everyone while a player's
//! machine cannot keep up, and speeds up again once it can, as Recoil and
//! Age of Empires do.
//!
//! Every player reports its machine's capacity four times a second
//! ([`ClientMessage::Capacity`]): the ticks per second its loop would run
//! if it did nothing else, as a share of the nominal tick rate. A lockstep
//! game runs at the pace of its slowest machine anyway; without speed
//! control that machine falls further and further behind, and the others
//! stall on almost every tick, waiting for its inputs. With it, every
//! client paces its ticks more slowly from a tick the server announces,
//! and the game runs smoothly at the speed the slowest machine sustains.
//! Only wall-clock pacing changes: a tick is the same step of game time at
//! any speed, so determinism is untouched.
//!
//! Pure state machine in the style of the relay: reports come in with
//! `now`, speed changes come out. The rules:
//!
//! - The speed goes down at once when a machine is short of capacity (it
//!   has less than [`LOWER_BELOW`] of the speed, 5% spare) and late (more
//!   than a tick behind its schedule), to what that machine sustains with
//!   [`HEADROOM`] to spare, never below [`FLOOR`]. Either sign alone is
//!   noise: a quarter second's measure varies a little from one window to
//!   the next, and a machine with time to spare that was held up for a
//!   moment catches up by itself.
//! - It goes up only after every report for [`RAISE_AFTER`] has allowed a
//!   speed at least [`RAISE_STEP`] higher, and then to the lowest speed
//!   they all allowed. A machine that was slow a moment ago is likely
//!   slow again soon, and each change costs an announcement; so the speed
//!   does not flap.
//! - By the time the speed goes down, the game is behind its schedule:
//!   every client paces its ticks from the moment Start arrived, and the
//!   slow machine has held everyone back. Made up by the slow machine
//!   running flat out, that backlog would keep the others waiting for
//!   seconds (at 10% spare, ten times as long as it took to build up).
//!   So every client postpones its schedule by the backlog, at the tick
//!   the change starts ([`SpeedControl::backlog_at`]): the game forgives
//!   it at once, the same amount on every machine, so the clients still
//!   agree on when each tick is due.
//!
//! [`ClientMessage::Capacity`]: lockstep_protocol::ClientMessage::Capacity

use std::collections::BTreeMap;
use std::time::Duration;

use lockstep_protocol::{Percent, PlayerId, Tick};

/// The most the clients postpone their schedule by at a speed change. A
/// backlog a slow machine built by holding the others back is a fraction
/// of a second by the time the speed goes down (it goes down on the first
/// report that is short and late, four reports a second); a longer one
/// is not slowness but an outage, a machine that was frozen, or a report
/// that is wrong, and forgiving it whole would stand the whole game still
/// for as long. Beyond it the late machine catches up by running its due
/// ticks at once, as it does after any stall.
pub const MAX_BACKLOG: Duration = Duration::from_secs(2);

/// The slowest the game goes: a quarter of its speed. Slower than that it
/// is hardly a game any more; a machine even slower makes the others wait
/// as it would without speed control (and the lag indicator names it).
pub const FLOOR: Percent = Percent(25);

/// A speed that leaves the slowest machine this share of its capacity
/// spare: 110% of the speed, so the machine is busy at most 91% of the
/// time and a slow tick now and then does not make anyone wait.
pub const HEADROOM: u32 = 110;

/// A machine whose capacity is below this share of the speed (less than
/// 5% spare) is about to make the others wait: the speed goes down.
/// Between it and [`HEADROOM`] nothing changes, so a capacity measured a
/// little differently each time does not move the speed.
pub const LOWER_BELOW: u32 = 105;

/// How long every machine must have been comfortably fast before the speed
/// goes up: twenty reports of each player.
pub const RAISE_AFTER: Duration = Duration::from_secs(5);

/// The least gain worth a raise, in points of percent: smaller ones would
/// announce a change for a difference nobody sees.
pub const RAISE_STEP: u16 = 5;

/// How far ahead a change is announced, in wall time at the speed in
/// force. No client can be past the server's next bundled tick, and the
/// announcement leaves in the same flight as the next bundles, so a
/// change from that tick plus this much reaches every client before it
/// gets there, with room for a lost packet on a LAN. Every tick of lead
/// is a tick more at the old speed, where the slow machine holds
/// everyone back. One that arrives late (a loss burst on a slow path)
/// only paces a few ticks differently on that client, whose input delay
/// absorbs it; the simulation never depends on it.
pub const ANNOUNCE_LEAD: Duration = Duration::from_millis(100);

/// Ticks of [`ANNOUNCE_LEAD`] at `speed` in a game of `tick_rate` ticks a
/// second at full speed (at least one).
pub fn lead_ticks(tick_rate: u16, speed: Percent) -> u32 {
    let per_second = u64::from(tick_rate) * u64::from(speed.0);
    let ticks = (per_second * ANNOUNCE_LEAD.as_millis() as u64).div_ceil(100 * 1000);
    ticks.max(1) as u32
}

/// Why the speed changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpeedReason {
    /// A machine could not keep up with the game.
    Slow,
    /// Every machine has been comfortably fast for a while (five
    /// seconds).
    Recovered,
}

impl SpeedReason {
    /// Short name for the server's output.
    pub fn as_str(self) -> &'static str {
        match self {
            SpeedReason::Slow => "slow",
            SpeedReason::Recovered => "recovered",
        }
    }
}

/// What a player reports about its machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CapacityReport {
    /// The ticks per second it sustains, as a share of the nominal rate.
    pub percent: Percent,
    /// Its world tick when it measured `behind`.
    pub tick: Tick,
    /// How late its ticks were against their schedule then.
    pub behind: Duration,
}

/// A new game speed, decided from the reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpeedChange {
    /// The new speed.
    pub percent: Percent,
    /// Why.
    pub reason: SpeedReason,
    /// The slowest machine's player when the change was decided.
    pub slowest: PlayerId,
    /// That machine's capacity.
    pub capacity: Percent,
}

/// The game speed of one running game, from the players' capacities.
#[derive(Debug)]
pub struct SpeedControl {
    /// Length of a tick at full speed.
    full_ns: u64,
    /// The speed last decided (100 at the start).
    speed: Percent,
    /// Each player's last report.
    capacities: BTreeMap<PlayerId, CapacityReport>,
    /// Since when every report has allowed a raise, and the lowest speed
    /// the reports allowed since then.
    faster: Option<(Duration, Percent)>,
}

impl SpeedControl {
    /// A game of `tick_rate` ticks a second at full speed, with no
    /// reports yet.
    pub fn new(tick_rate: u16) -> Self {
        SpeedControl {
            full_ns: 1_000_000_000 / u64::from(tick_rate.max(1)),
            speed: Percent::FULL,
            capacities: BTreeMap::new(),
            faster: None,
        }
    }

    /// The speed last decided.
    pub fn speed(&self) -> Percent {
        self.speed
    }

    /// Takes `player`'s report, made at `now`; returns the new speed if
    /// it changes.
    pub fn report(
        &mut self,
        player: PlayerId,
        report: CapacityReport,
        now: Duration,
    ) -> Option<SpeedChange> {
        self.capacities.insert(player, report);
        let (slowest, report) = self.slowest()?;
        let capacity = report.percent;
        let change = |percent, reason| SpeedChange {
            percent,
            reason,
            slowest,
            capacity,
        };
        let sustained = sustainable(capacity);
        let short = u32::from(capacity.0) * 100 < u32::from(self.speed.0) * LOWER_BELOW;
        let late = report.behind.as_nanos() > u128::from(self.speed.tick_ns(self.full_ns));
        // At the floor already, nothing slower is sustained.
        if short && late && sustained < self.speed {
            self.faster = None;
            self.speed = sustained;
            return Some(change(sustained, SpeedReason::Slow));
        }
        if sustained.0 < self.speed.0.saturating_add(RAISE_STEP) {
            self.faster = None;
            return None;
        }
        let (since, lowest) = self.faster.get_or_insert((now, sustained));
        *lowest = (*lowest).min(sustained);
        if now.saturating_sub(*since) < RAISE_AFTER {
            return None;
        }
        self.speed = *lowest;
        self.faster = None;
        Some(change(self.speed, SpeedReason::Recovered))
    }

    /// How far behind its schedule the game will be when it reaches
    /// `tick`, if it runs at `speed` until then: the most any player will
    /// be behind, from its last report. Until `tick` each tick takes what
    /// the slowest machine needs, so a player's lateness grows by the
    /// difference from the schedule with every tick, or shrinks if the
    /// slowest machine is faster than the schedule. Never more than
    /// [`MAX_BACKLOG`].
    pub fn backlog_at(&self, tick: Tick, speed: Percent) -> Duration {
        let Some((_, slowest)) = self.slowest() else {
            return Duration::ZERO;
        };
        let growth = i128::from(slowest.percent.tick_ns(self.full_ns))
            - i128::from(speed.tick_ns(self.full_ns));
        let most = self
            .capacities
            .values()
            .map(|c| c.behind.as_nanos() as i128 + i128::from(tick.since(c.tick)) * growth)
            .max()
            .unwrap_or(0);
        Duration::from_nanos(most.clamp(0, MAX_BACKLOG.as_nanos() as i128) as u64)
    }

    /// The player whose machine is slowest, and its last report.
    fn slowest(&self) -> Option<(PlayerId, CapacityReport)> {
        self.capacities
            .iter()
            .map(|(&player, &report)| (player, report))
            .min_by_key(|(_, report)| report.percent)
    }

    /// Forgets a player that left: its machine no longer sets the pace.
    /// The speed goes up with the next reports that allow it, after the
    /// wait of any raise.
    pub fn forget(&mut self, player: PlayerId) {
        self.capacities.remove(&player);
    }
}

/// The fastest speed a machine of `capacity` keeps up with, [`HEADROOM`]
/// to spare, between [`FLOOR`] and full speed.
fn sustainable(capacity: Percent) -> Percent {
    let speed = u32::from(capacity.0) * 100 / HEADROOM;
    Percent(speed.clamp(u32::from(FLOOR.0), u32::from(Percent::FULL.0)) as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ANN: PlayerId = PlayerId(0);
    const BOB: PlayerId = PlayerId(1);

    fn ms(millis: u64) -> Duration {
        Duration::from_millis(millis)
    }

    /// A report of a machine that sustains `percent` and is on time.
    fn on_time(percent: u16) -> CapacityReport {
        CapacityReport {
            percent: Percent(percent),
            tick: Tick(0),
            behind: Duration::ZERO,
        }
    }

    /// A report of a machine that sustains `percent` and is 100 ms
    /// behind its schedule (more than a tick at any speed above 16%).
    fn late(percent: u16) -> CapacityReport {
        CapacityReport {
            behind: ms(100),
            ..on_time(percent)
        }
    }

    /// ann (on time, `ann`) and bob (`bob`) report every 500 ms from
    /// `from` to `to` (inclusive); returns the changes.
    fn reports(
        control: &mut SpeedControl,
        from: u64,
        to: u64,
        ann: u16,
        bob: CapacityReport,
    ) -> Vec<(u64, SpeedChange)> {
        let mut changes = Vec::new();
        for at in (from..=to).step_by(500) {
            for (player, report) in [(ANN, on_time(ann)), (BOB, bob)] {
                if let Some(change) = control.report(player, report, ms(at)) {
                    changes.push((at, change));
                }
            }
        }
        changes
    }

    #[test]
    fn a_change_is_announced_a_tenth_of_a_second_of_play_ahead() {
        assert_eq!(lead_ticks(60, Percent::FULL), 6);
        assert_eq!(lead_ticks(60, Percent(44)), 3);
        assert_eq!(lead_ticks(60, FLOOR), 2);
        assert_eq!(lead_ticks(1, FLOOR), 1);
    }

    #[test]
    fn fast_machines_leave_the_game_at_full_speed() {
        let mut control = SpeedControl::new(60);
        assert!(reports(&mut control, 0, 20_000, 3000, late(106)).is_empty());
        assert_eq!(control.speed(), Percent::FULL);
    }

    #[test]
    fn a_machine_that_cannot_keep_up_lowers_the_speed_at_once_to_what_it_sustains() {
        let mut control = SpeedControl::new(60);
        let changes = reports(&mut control, 0, 0, 3000, late(49));
        assert_eq!(
            changes,
            vec![(
                0,
                SpeedChange {
                    percent: Percent(44),
                    reason: SpeedReason::Slow,
                    slowest: BOB,
                    capacity: Percent(49),
                }
            )]
        );
        // The same machine, measured a little differently each time,
        // changes nothing more.
        for capacity in [47, 50, 48, 52, 49] {
            assert_eq!(control.report(BOB, late(capacity), ms(600)), None);
        }
        assert_eq!(control.speed(), Percent(44));
    }

    #[test]
    fn it_takes_a_machine_both_short_of_capacity_and_late_to_lower_the_speed() {
        let mut control = SpeedControl::new(60);
        // Short, but keeping its schedule: a window measured low.
        assert!(reports(&mut control, 0, 1_000, 3000, on_time(90)).is_empty());
        // Late, with time to spare: it was held up and catches up.
        assert!(reports(&mut control, 1_500, 2_500, 3000, late(300)).is_empty());
        // A tick late (16.7 ms at full speed) is not yet late.
        let a_tick = CapacityReport {
            behind: Duration::from_nanos(16_666_666),
            ..on_time(90)
        };
        assert!(reports(&mut control, 3_000, 3_000, 3000, a_tick).is_empty());
        let changes = reports(&mut control, 3_500, 3_500, 3000, late(90));
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].1.percent, Percent(81));
    }

    #[test]
    fn the_speed_never_goes_below_the_floor() {
        let mut control = SpeedControl::new(60);
        let changes = reports(&mut control, 0, 5_000, 3000, late(10));
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].1.percent, FLOOR);
    }

    #[test]
    fn the_speed_returns_to_full_after_the_machine_has_been_fast_for_a_while() {
        let mut control = SpeedControl::new(60);
        reports(&mut control, 0, 10_000, 3000, late(49));
        assert_eq!(control.speed(), Percent(44));
        // bob's machine recovers at 10.5 s: the speed waits five seconds.
        assert!(reports(&mut control, 10_500, 15_000, 3000, on_time(2500)).is_empty());
        let raised = reports(&mut control, 15_500, 15_500, 3000, on_time(2500));
        assert_eq!(
            raised,
            vec![(
                15_500,
                SpeedChange {
                    percent: Percent::FULL,
                    reason: SpeedReason::Recovered,
                    slowest: BOB,
                    capacity: Percent(2500),
                }
            )]
        );
    }

    #[test]
    fn a_raise_goes_to_the_lowest_speed_allowed_during_the_wait_and_a_slow_report_restarts_it() {
        let mut control = SpeedControl::new(60);
        reports(&mut control, 0, 0, 3000, late(30));
        assert_eq!(control.speed(), Percent(27));
        // A report too slow for any raise starts the wait again...
        reports(&mut control, 500, 3_000, 3000, on_time(80));
        reports(&mut control, 3_500, 3_500, 3000, on_time(33));
        assert!(reports(&mut control, 4_000, 8_000, 3000, on_time(80)).is_empty());
        assert!(reports(&mut control, 8_500, 8_500, 3000, on_time(66)).is_empty());
        // ...and the raise, five seconds after the wait began, is to what
        // the slowest report of the wait allowed (66 and 80 allow 60% and
        // 72%).
        let raised = reports(&mut control, 9_000, 9_000, 3000, on_time(80));
        assert_eq!(raised.len(), 1);
        assert_eq!(raised[0].0, 9_000);
        assert_eq!(raised[0].1.percent, Percent(60));
    }

    #[test]
    fn the_backlog_at_the_change_is_the_latest_player_projected_to_that_tick() {
        let mut control = SpeedControl::new(60);
        let full = Duration::from_nanos(16_666_666);
        // At 60 Hz bob's machine needs 2 nominal ticks of time per tick
        // (50%): at full speed it falls another tick behind with every
        // tick it runs. At tick 10 it was 200 ms behind; ann, waiting
        // for it, 150 ms at tick 12.
        let bob = CapacityReport {
            percent: Percent(50),
            tick: Tick(10),
            behind: ms(200),
        };
        let ann = CapacityReport {
            percent: Percent(3000),
            tick: Tick(12),
            behind: ms(150),
        };
        control.report(ANN, ann, ms(0));
        control.report(BOB, bob, ms(0));
        assert_eq!(
            control.backlog_at(Tick(20), Percent::FULL),
            ms(200) + full * 10
        );
        // At a speed it keeps up with (40% leaves it 8.3 ms a tick), the
        // backlog shrinks as it goes.
        assert_eq!(
            control.backlog_at(Tick(20), Percent(40)),
            ms(200) - Duration::from_nanos(10 * 8_333_333)
        );
        // Nobody is ever less than on time.
        assert_eq!(control.backlog_at(Tick(40), Percent(25)), Duration::ZERO);
        assert_eq!(
            SpeedControl::new(60).backlog_at(Tick(40), Percent::FULL),
            Duration::ZERO
        );
    }

    #[test]
    fn a_backlog_longer_than_a_slow_machine_builds_is_not_forgiven_whole() {
        let mut control = SpeedControl::new(60);
        // A report sent as a client came back from an outage: 21 s late.
        let back = CapacityReport {
            percent: Percent(96),
            tick: Tick(909),
            behind: ms(21_000),
        };
        control.report(ANN, back, ms(0));
        assert_eq!(control.backlog_at(Tick(918), Percent(87)), MAX_BACKLOG);
        // The most a client can claim (u32 microseconds, 71 minutes).
        let hostile = CapacityReport {
            behind: Duration::from_micros(u64::from(u32::MAX)),
            ..back
        };
        control.report(ANN, hostile, ms(0));
        assert_eq!(control.backlog_at(Tick(918), Percent::FULL), MAX_BACKLOG);
    }

    #[test]
    fn when_the_slow_player_leaves_the_others_bring_the_speed_back_up() {
        let mut control = SpeedControl::new(60);
        reports(&mut control, 0, 0, 3000, late(49));
        control.forget(BOB);
        let mut changes = Vec::new();
        for at in (500..=6_000).step_by(500) {
            changes.extend(control.report(ANN, on_time(3000), ms(at)));
        }
        assert_eq!(changes.len(), 1);
        assert_eq!(
            (changes[0].percent, changes[0].slowest),
            (Percent::FULL, ANN)
        );
    }
}
