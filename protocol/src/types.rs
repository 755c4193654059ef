//! Domain newtypes shared by both sides.

use serde::{Deserialize, Serialize};

/// A simulation step number. Tick 0 is the first step after Start.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Tick(pub u32);

impl Tick {
    /// The tick after this one. Saturates instead of wrapping: at 60 Hz a
    /// `u32` lasts over two years, and wrapping would silently reorder ticks.
    #[must_use]
    pub fn next(self) -> Tick {
        Tick(self.0.saturating_add(1))
    }

    /// This tick moved `n` ticks later (saturating).
    #[must_use]
    pub fn plus(self, n: u32) -> Tick {
        Tick(self.0.saturating_add(n))
    }

    /// Number of ticks from `earlier` to `self`, or 0 if `earlier` is later.
    #[must_use]
    pub fn since(self, earlier: Tick) -> u32 {
        self.0.saturating_sub(earlier.0)
    }
}

impl std::fmt::Display for Tick {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// A player's slot in the session, assigned by the server in join order.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct PlayerId(pub u8);

impl std::fmt::Display for PlayerId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// Digital buttons of one input sample, as a bitfield.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Buttons(pub u8);

impl Buttons {
    /// Steer up (W, Up arrow, D-pad up).
    pub const UP: Buttons = Buttons(1 << 0);
    /// Steer down (S, Down arrow, D-pad down).
    pub const DOWN: Buttons = Buttons(1 << 1);
    /// Steer left (A, Left arrow, D-pad left).
    pub const LEFT: Buttons = Buttons(1 << 2);
    /// Steer right (D, Right arrow, D-pad right).
    pub const RIGHT: Buttons = Buttons(1 << 3);
    /// Boost: stronger acceleration (Space, Shift, controller A).
    pub const BOOST: Buttons = Buttons(1 << 4);
    /// Every defined button; other bits are ignored by the simulation.
    pub const ALL: Buttons = Buttons(0b1_1111);

    /// Whether every bit of `other` is set in `self`.
    #[must_use]
    pub fn contains(self, other: Buttons) -> bool {
        self.0 & other.0 == other.0
    }

    /// `self` with the bits of `other` set.
    #[must_use]
    pub fn with(self, other: Buttons) -> Buttons {
        Buttons(self.0 | other.0)
    }
}

/// One player's input for one tick.
///
/// Analog axes are quantised to `i8` on the client before they are sent, so
/// every machine feeds the simulation exactly the same numbers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Input {
    /// Digital buttons.
    pub buttons: Buttons,
    /// Left stick of a game controller (x right, y down), -127..=127, if one
    /// is in use. When present it replaces the direction buttons.
    pub axes: Option<[i8; 2]>,
}

/// A share of the nominal tick rate, in percent: the game speed the server
/// announces (100 is full speed) or the speed a client's machine can
/// sustain (above 100 when it has time to spare).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Percent(pub u16);

impl Percent {
    /// Full speed: the tick rate of [`crate::Start::tick_rate`].
    pub const FULL: Percent = Percent(100);

    /// How long a tick lasts at this speed, for a tick of `full_ns`
    /// nanoseconds at full speed (a speed of 0 counts as 1%).
    #[must_use]
    pub fn tick_ns(self, full_ns: u64) -> u64 {
        full_ns.saturating_mul(100) / u64::from(self.0.max(1))
    }
}

impl std::fmt::Display for Percent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}%", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slower_speed_makes_every_tick_longer_in_proportion() {
        let full = 16_666_666;
        assert_eq!(Percent::FULL.tick_ns(full), full);
        assert_eq!(Percent(50).tick_ns(full), 2 * full);
        assert_eq!(Percent(25).tick_ns(full), 4 * full);
        assert_eq!(Percent(0).tick_ns(full), 100 * full, "0% counts as 1%");
        assert_eq!(Percent(45).to_string(), "45%");
    }
}
