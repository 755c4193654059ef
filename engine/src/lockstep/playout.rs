//! Playout delay: how many ticks this client's clock runs behind the
//! game's schedule, so that its own link's gaps do not stall it.
//!
//! The input delay ([`crate::lockstep::input_delay`]) makes this client's inputs
//! reach the server in time; it cannot make the bundles reach *this*
//! client in time. A bundle leaves the server once the last input of its
//! tick is in (or, late, is stood in for), and when the link down to us
//! loses a burst of datagrams, nothing arrives until it ends: the bundles
//! held by then are all that keeps the game going. A client whose bundles
//! are often late on its own link can only hold more of them, by stepping
//! each tick a little later than the schedule: a jitter buffer, as every
//! audio or video player keeps one. Its inputs are then sampled later too,
//! so the input delay grows by the same ticks and they still reach the
//! server when they did; only this client's input lag pays for it.
//!
//! - **Up** when more than [`STALL_BUDGET`] ticks in the last
//!   [`STALL_WINDOW`] waited for their bundle on our own account: by as
//!   many ticks as cover every one of those waits but the budget's
//!   longest. One long outage does not ratchet the delay up; a link that
//!   keeps losing bursts does. The waits the raise covers are forgiven at
//!   once instead of caught up.
//! - A wait for a bundle the server completed with a stand-in was for a
//!   late peer, not for our link, and does not count: a peer's lateness is
//!   that peer's problem.
//! - **Down** after [`LOWER_AFTER`] ticks in which every tick but the
//!   budget's worst found at least one bundle more than it needed in hand:
//!   by the fewest spare bundles those ticks had.
//! - Not in the game's first second, while clocks settle.
//!
//! Pure: fed ticks, waits and counts of held bundles; returns the changes.
//! [`crate::lockstep::net_game::NetGame`] postpones or hurries its clock by them and
//! moves the input delay with them.

use std::collections::VecDeque;

use lockstep_protocol::Tick;

/// Ticks over which stalls are counted: 20 s at 60 Hz, short enough that
/// a link losing bursts all the time is found out within seconds of the
/// game's start.
pub const STALL_WINDOW: u32 = 1200;
/// Stalls on our own account tolerated per [`STALL_WINDOW`]: 0.08% of the
/// ticks, well inside the 0.2% the game's feel allows.
pub const STALL_BUDGET: usize = 1;
/// Ticks a playout delay must have had room to spare before it comes down
/// (a minute at 60 Hz): a burst that came once is likely to come again.
pub const LOWER_AFTER: u32 = 3600;
/// Largest playout delay: 133 ms at 60 Hz. A link that needs more is
/// better served by waiting than by ever more input lag.
pub const MAX_PLAYOUT: u8 = 8;

/// Spare bundles counted separately; more count as this many.
const MOST_SPARE: usize = 16;

/// A change of the playout delay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlayoutChange {
    /// Step this many ticks later than before.
    Raise(u8),
    /// Step this many ticks sooner than before.
    Lower(u8),
}

/// Chooses the playout delay as the game goes.
#[derive(Debug, Clone)]
pub struct Playout {
    ticks: u8,
    /// Ticks of the first second, whose stalls do not count.
    warmup: u32,
    /// Recent stalls on our own account: the tick and how long it waited,
    /// in nanoseconds; oldest first, none older than [`STALL_WINDOW`].
    stalls: VecDeque<(Tick, u64)>,
    /// Since when the bundles in hand have been counted.
    since: Option<Tick>,
    /// How many ticks since `since` had each number of spare bundles in
    /// hand (a stalled tick counts as none).
    spare: [u32; MOST_SPARE + 1],
}

impl Playout {
    /// No playout delay, for a game at `tick_rate`.
    pub fn new(tick_rate: u16) -> Playout {
        Playout {
            ticks: 0,
            warmup: u32::from(tick_rate),
            stalls: VecDeque::new(),
            since: None,
            spare: [0; MOST_SPARE + 1],
        }
    }

    /// Ticks this client steps behind the schedule.
    pub fn ticks(&self) -> u8 {
        self.ticks
    }

    /// Tick `tick` ran `wait_ns` after it was due, for want of its bundle
    /// (ticks last `tick_ns`). Returns a raise when the stalls call for
    /// one.
    pub fn stalled(&mut self, tick: Tick, wait_ns: u64, tick_ns: u64) -> Option<u8> {
        if tick.0 < self.warmup {
            return None;
        }
        self.count_spare(tick, 0);
        while self
            .stalls
            .front()
            .is_some_and(|&(t, _)| tick.since(t) >= STALL_WINDOW)
        {
            self.stalls.pop_front();
        }
        self.stalls.push_back((tick, wait_ns));
        if self.stalls.len() <= STALL_BUDGET {
            return None;
        }
        let mut waits: Vec<u64> = self.stalls.iter().map(|&(_, wait)| wait).collect();
        waits.sort_unstable_by(|a, b| b.cmp(a));
        let cover = waits[STALL_BUDGET].div_ceil(tick_ns.max(1)).max(1);
        let raise = u8::try_from(cover)
            .unwrap_or(u8::MAX)
            .min(MAX_PLAYOUT - self.ticks);
        if raise == 0 {
            return None;
        }
        self.ticks += raise;
        self.restart();
        Some(raise)
    }

    /// Tick `tick` ran on time with `held` bundles in hand, its own
    /// included. Returns a lowering when the room seen calls for one.
    pub fn on_time(&mut self, tick: Tick, held: usize) -> Option<u8> {
        if tick.0 < self.warmup {
            return None;
        }
        self.count_spare(tick, held.saturating_sub(1));
        let since = self.since?;
        if self.ticks == 0 || tick.since(since) < LOWER_AFTER {
            return None;
        }
        let spare = self.least_spare_but_budget();
        let lower = u8::try_from(spare).unwrap_or(u8::MAX).min(self.ticks);
        self.restart();
        if lower == 0 {
            return None;
        }
        self.ticks -= lower;
        Some(lower)
    }

    fn count_spare(&mut self, tick: Tick, spare: usize) {
        self.since.get_or_insert(tick);
        self.spare[spare.min(MOST_SPARE)] += 1;
    }

    /// The fewest spare bundles any tick had, leaving out the budget's
    /// worst.
    fn least_spare_but_budget(&self) -> usize {
        let mut worse = 0;
        for (spare, &count) in self.spare.iter().enumerate() {
            worse += count as usize;
            if worse > STALL_BUDGET {
                return spare;
            }
        }
        MOST_SPARE
    }

    /// A new delay: what was seen says nothing of it.
    fn restart(&mut self) {
        self.stalls.clear();
        self.since = None;
        self.spare = [0; MOST_SPARE + 1];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TICK: u64 = 16_666_667;
    const BUDGET: u32 = STALL_BUDGET as u32;

    fn ms(n: u64) -> u64 {
        n * 1_000_000
    }

    /// A playout raised once, to `ticks` of delay by waits this long.
    fn raised_by(wait_ms: u64) -> Playout {
        let mut playout = Playout::new(60);
        for t in 100..=100 + BUDGET {
            playout.stalled(Tick(t), ms(wait_ms), TICK);
        }
        playout
    }

    #[test]
    fn a_few_stalls_a_window_are_tolerated() {
        let mut playout = Playout::new(60);
        for i in 0..BUDGET {
            assert_eq!(playout.stalled(Tick(100 + 10 * i), ms(90), TICK), None);
        }
        assert_eq!(playout.ticks(), 0);
    }

    #[test]
    fn one_stall_too_many_raises_the_delay_to_cover_all_but_the_budgets_longest() {
        let mut playout = Playout::new(60);
        // The budget's stalls are long ones; the next waits 40 ms, which
        // takes three ticks to cover.
        for i in 0..BUDGET {
            assert_eq!(playout.stalled(Tick(100 + 10 * i), ms(200), TICK), None);
        }
        assert_eq!(playout.stalled(Tick(1000), ms(40), TICK), Some(3));
        assert_eq!(playout.ticks(), 3);
        // The waits were covered: counting starts again.
        assert_eq!(playout.stalled(Tick(1001), ms(40), TICK), None);
    }

    #[test]
    fn stalls_older_than_the_window_are_forgotten() {
        let budget = || {
            let mut playout = Playout::new(60);
            for i in 0..BUDGET {
                playout.stalled(Tick(100 + i), ms(50), TICK);
            }
            playout
        };
        assert_eq!(
            budget().stalled(Tick(99 + STALL_WINDOW), ms(50), TICK),
            Some(3)
        );
        assert_eq!(
            budget().stalled(Tick(99 + BUDGET + STALL_WINDOW), ms(50), TICK),
            None,
            "the earlier stalls are a window old"
        );
    }

    #[test]
    fn the_first_second_does_not_count() {
        let mut playout = Playout::new(60);
        for t in 0..59 {
            assert_eq!(playout.stalled(Tick(t), ms(500), TICK), None);
        }
        assert!(playout.stalls.is_empty());
    }

    #[test]
    fn a_raise_stops_at_the_cap() {
        let mut playout = raised_by(1000);
        assert_eq!(playout.ticks(), MAX_PLAYOUT);
        for t in 200..=200 + BUDGET {
            assert_eq!(playout.stalled(Tick(t), ms(1000), TICK), None);
        }
        assert_eq!(playout.ticks(), MAX_PLAYOUT);
    }

    #[test]
    fn room_to_spare_for_a_while_lowers_the_delay_by_the_least_seen() {
        let mut playout = raised_by(80);
        assert_eq!(playout.ticks(), 5);
        // Four spare bundles on most ticks, two on a few, one on the
        // budget's worst.
        let start = 200;
        let mut lowered = None;
        for t in start..start + LOWER_AFTER + 1 {
            let held = match t - start {
                n if (10..10 + BUDGET).contains(&n) => 2,
                20..=25 => 3,
                _ => 5,
            };
            if let Some(lower) = playout.on_time(Tick(t), held) {
                lowered = Some((t, lower));
                break;
            }
        }
        assert_eq!(lowered, Some((start + LOWER_AFTER, 2)));
        assert_eq!(playout.ticks(), 3);
    }

    #[test]
    fn stalls_beyond_the_budget_keep_the_delay_from_coming_down() {
        // At the cap, short stalls can raise it no further; they still
        // count as ticks with no room to spare.
        let mut playout = raised_by(1000);
        for t in 200..=200 + BUDGET {
            playout.stalled(Tick(t), ms(1), TICK);
        }
        let mut lowered = None;
        for t in 300..300 + LOWER_AFTER {
            lowered = lowered.or(playout.on_time(Tick(t), 5));
        }
        assert_eq!(lowered, None);
        assert_eq!(playout.ticks(), MAX_PLAYOUT);
    }

    #[test]
    fn no_delay_has_nothing_to_lower() {
        let mut playout = Playout::new(60);
        for t in 60..60 + 2 * LOWER_AFTER {
            assert_eq!(playout.on_time(Tick(t), 9), None);
        }
        assert_eq!(playout.ticks(), 0);
    }
}
