//! The game speed at each tick, as the server announces it.
//!
//! When a player's machine cannot keep up, the server slows the whole game
//! down: every tick from an announced one on lasts `100 / percent` times
//! its nominal length in wall time ([`ServerMessage::Speed`]). The step
//! of game time a tick simulates never changes, so only the pacing does:
//! the fixed-step clock is given the tick length in force for the tick it
//! is about to run, and every client switches at the same tick.
//!
//! A change that slows the game down usually comes when the game has
//! fallen behind its schedule (the slow machine held it back): it also
//! says how much later than scheduled every tick from its own on is due,
//! the same on every machine, so the clients forgive the backlog together
//! and still agree on when each tick is due.
//!
//! Announcements come ahead of their tick. One that arrives after its
//! tick (a late packet) applies from the next tick run: the pacing is off
//! for a few ticks on that machine, and nothing else.
//!
//! [`ServerMessage::Speed`]: lockstep_protocol::ServerMessage::Speed

use std::collections::VecDeque;

use lockstep_protocol::{Percent, Tick};

/// The speeds announced for a game and the one in force.
#[derive(Debug, Clone)]
pub struct SpeedSchedule {
    /// Length of a tick at full speed.
    full_ns: u64,
    /// The speed of the last tick asked about.
    current: Percent,
    /// The lowest speed any tick was run at.
    slowest: Percent,
    /// Announced changes not in force yet, by ascending first tick: the
    /// tick, the speed and the postponement in nanoseconds.
    pending: VecDeque<(Tick, Percent, u64)>,
}

impl SpeedSchedule {
    /// Full speed for a game of `tick_rate` ticks a second (at least 1).
    pub fn new(tick_rate: u16) -> Self {
        SpeedSchedule {
            full_ns: 1_000_000_000 / u64::from(tick_rate.max(1)),
            current: Percent::FULL,
            slowest: Percent::FULL,
            pending: VecDeque::new(),
        }
    }

    /// The server's announcement: ticks from `from_tick` on run at
    /// `percent`, and are due `postpone_ns` later than scheduled. It
    /// replaces whatever was announced for `from_tick` or later.
    pub fn announce(&mut self, from_tick: Tick, percent: Percent, postpone_ns: u64) {
        while self.pending.back().is_some_and(|&(t, ..)| t >= from_tick) {
            self.pending.pop_back();
        }
        self.pending.push_back((from_tick, percent, postpone_ns));
    }

    /// Puts the speed of `tick` in force; returns how much later than
    /// scheduled the changes that come into force make the ticks from here
    /// on (0 when none does). Ticks are asked about in ascending order.
    pub fn enter(&mut self, tick: Tick) -> u64 {
        let mut postponed = 0u64;
        while let Some(&(from, percent, postpone_ns)) = self.pending.front() {
            if from > tick {
                break;
            }
            self.current = percent;
            postponed = postponed.saturating_add(postpone_ns);
            self.pending.pop_front();
        }
        self.slowest = self.slowest.min(self.current);
        postponed
    }

    /// The length of a tick at the speed in force.
    pub fn tick_ns(&self) -> u64 {
        self.current.tick_ns(self.full_ns)
    }

    /// The speed in force (of the last tick entered).
    pub fn current(&self) -> Percent {
        self.current
    }

    /// The lowest speed in force at any tick entered so far.
    pub fn slowest(&self) -> Percent {
        self.slowest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tick at 50 Hz, in nanoseconds.
    const TICK_NS: u64 = 20_000_000;

    /// The length of `tick` after entering it.
    fn length(speeds: &mut SpeedSchedule, tick: u32) -> u64 {
        speeds.enter(Tick(tick));
        speeds.tick_ns()
    }

    #[test]
    fn a_speed_applies_from_its_tick_and_not_before() {
        let mut speeds = SpeedSchedule::new(50);
        speeds.announce(Tick(10), Percent(50), 0);
        assert_eq!(length(&mut speeds, 9), TICK_NS);
        assert_eq!(speeds.current(), Percent::FULL);
        assert_eq!(length(&mut speeds, 10), 2 * TICK_NS);
        assert_eq!(length(&mut speeds, 11), 2 * TICK_NS);
        assert_eq!(speeds.current(), Percent(50));
    }

    #[test]
    fn changes_apply_in_turn_and_the_slowest_speed_is_remembered() {
        let mut speeds = SpeedSchedule::new(50);
        speeds.announce(Tick(10), Percent(25), 0);
        speeds.announce(Tick(20), Percent::FULL, 0);
        let lengths: Vec<u64> = [5, 10, 19, 20]
            .into_iter()
            .map(|t| length(&mut speeds, t) / TICK_NS)
            .collect();
        assert_eq!(lengths, [1, 4, 4, 1]);
        assert_eq!(speeds.slowest(), Percent(25));
    }

    #[test]
    fn the_postponement_comes_once_at_the_tick_of_its_change() {
        let mut speeds = SpeedSchedule::new(50);
        speeds.announce(Tick(10), Percent(50), 300);
        assert_eq!(speeds.enter(Tick(9)), 0);
        assert_eq!(speeds.enter(Tick(10)), 300);
        assert_eq!(speeds.enter(Tick(11)), 0);
    }

    #[test]
    fn a_late_announcement_applies_from_the_next_tick_entered() {
        let mut speeds = SpeedSchedule::new(50);
        speeds.enter(Tick(30));
        speeds.announce(Tick(25), Percent(50), 7);
        assert_eq!(speeds.enter(Tick(31)), 7);
        assert_eq!(speeds.tick_ns(), 2 * TICK_NS);
    }

    #[test]
    fn an_announcement_replaces_those_for_its_tick_and_later() {
        let mut speeds = SpeedSchedule::new(50);
        speeds.announce(Tick(10), Percent(50), 1);
        speeds.announce(Tick(20), Percent(80), 2);
        speeds.announce(Tick(15), Percent(40), 4);
        assert_eq!(length(&mut speeds, 12), 2 * TICK_NS);
        assert_eq!(speeds.enter(Tick(25)), 4);
        assert_eq!(speeds.tick_ns(), TICK_NS * 100 / 40);
        assert_eq!(speeds.slowest(), Percent(40));
    }
}
