//! Adaptive input delay: the smallest delay that keeps this client's
//! inputs on time, set from how early they actually reach the server.
//!
//! A client's input for tick `t` is sampled when it steps `t - d` and must
//! reach the server before the clients step `t`. The server times every
//! input against that instant and reports each player's *slack* (how early
//! its inputs arrived: the 1st and the 10th percentile, over its last
//! few seconds of inputs; see `lockstep-server`'s `slack.rs`), as Quantum's
//! input offset and ggrs's frame advantage do. One more tick of delay is
//! one more tick of slack, so the client reads off from its own slack
//! alone where its delay belongs:
//!
//! - **Up at once** when more than one input in a hundred was late: by as
//!   many ticks as the 10th percentile lacks, or, when only a few were
//!   (a burst of losses held them), by as many as the 1st percentile
//!   lacks. One late input in a hundred is tolerated: a rare long burst
//!   does not ratchet the delay up. A peer's
//!   lateness shows in that peer's slack, never in ours, so it raises no
//!   one else's delay; and this machine's own hiccup (a frame that came
//!   long after the last, a process stopped for a while) is not the
//!   network's doing: the inputs it made late are not counted
//!   ([`DelayController::hiccup`]).
//! - **Down, slowly**: only after [`LOWER_AFTER`] ticks in which even the
//!   1st-percentile slack had whole ticks to spare, and then by the fewest spare
//!   ticks any report had, in one step, so the delay stays steady instead
//!   of swinging (a steady delay feels better than one that moves, as Age
//!   of Empires found).
//! - A report that still counts inputs sampled under an earlier delay says
//!   nothing about the new one and is ignored.
//!
//! The slack kept in hand is a safety margin plus twice the jitter of the
//! bundles' arrivals here: a bundle leaves the server when its tick's last
//! input is in, and a jittery link brings it late unless the inputs leave
//! it some room.
//!
//! Before the first report (the game's first seconds) the delay is guessed
//! from the link: round trip plus twice the jitter plus two ticks, raised
//! only. Pure: fed ticks, durations and reports, returns the delay to use;
//! [`crate::lockstep::gate`] applies a change between ticks without skipping or
//! repeating one.

use std::time::Duration;

use lockstep_protocol::{Slack, Tick};

/// Smallest delay: one tick, an input sampled now is for the next tick.
pub const MIN_DELAY: u8 = 1;
/// Largest delay: a quarter of a second at 60 Hz. Beyond it the game feels
/// broken anyway, and waiting is better than an ever longer delay.
pub const MAX_DELAY: u8 = 15;
/// Ticks the 1st-percentile slack must have had room for a tick less before the
/// delay comes down by one (10 s at 60 Hz): a delay that was needed
/// recently is likely needed again.
pub const LOWER_AFTER: u32 = 600;
/// Slack kept in hand for processing and scheduling on both ends.
const SAFETY: Duration = Duration::from_millis(2);

/// What the client measures of its own link.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkFigures {
    /// Smoothed round trip to the server.
    pub rtt: Duration,
    /// Smoothed jitter of the bundles' arrivals: how far from the tick
    /// period their spacing strays.
    pub jitter: Duration,
    /// The jitter, or the better part of the recent longest wait for news
    /// (a burst of losses) when that is more.
    pub irregularity: Duration,
}

/// Chooses the input delay as the game goes.
#[derive(Debug, Clone)]
pub struct DelayController {
    tick: Duration,
    pinned: Option<u8>,
    current: u8,
    /// The first input tick sampled under the delay in force: reports
    /// counting earlier inputs measured another delay.
    fresh_from: Tick,
    /// Whether a report on the delay in force has arrived since the game
    /// began (the link's guess is used until then).
    measured: bool,
    /// Since when every report has had room for at least one tick less,
    /// and the fewest ticks of room any of them had.
    room: Option<(Tick, u8)>,
}

impl DelayController {
    /// Starts at `initial` (the server's delay) for inputs from
    /// `first_input_tick` on; `pinned` fixes the delay for good
    /// (`--input-delay`).
    pub fn new(initial: u8, tick_rate: u16, pinned: Option<u8>, first_input_tick: Tick) -> Self {
        DelayController {
            tick: Duration::from_secs(1) / u32::from(tick_rate.max(1)),
            pinned,
            current: pinned.unwrap_or(initial).clamp(MIN_DELAY, MAX_DELAY),
            fresh_from: first_input_tick,
            measured: false,
            room: None,
        }
    }

    /// The length of a tick in real time now (longer while the server has
    /// slowed the game down): what one tick of delay adds to the slack.
    pub fn set_tick_length(&mut self, tick: Duration) {
        self.tick = tick.max(Duration::from_nanos(1));
    }

    /// This machine stopped for a while (a frame came long after the last):
    /// the inputs sampled up to `through` (exclusive) went late because of
    /// it, so reports that count them are ignored.
    pub fn hiccup(&mut self, through: Tick) {
        self.fresh_from = self.fresh_from.max(through);
    }

    /// The delay in force.
    pub fn current(&self) -> u8 {
        self.current
    }

    /// Whether the delay is fixed.
    pub fn is_pinned(&self) -> bool {
        self.pinned.is_some()
    }

    /// The delay the link alone calls for: the guess before any slack is
    /// known.
    pub fn estimate(&self, rtt: Duration, jitter: Duration) -> u8 {
        let budget = rtt + 2 * jitter + SAFETY;
        let ticks = budget.as_nanos().div_ceil(self.tick.as_nanos().max(1)) + 2;
        ticks.clamp(u128::from(MIN_DELAY), u128::from(MAX_DELAY)) as u8
    }

    /// Called after every simulated tick `tick` with the first input tick
    /// not yet sampled (`next_local`), the latest link figures and the
    /// server's latest report of our own slack. Returns the new delay when
    /// it changes.
    pub fn update(
        &mut self,
        tick: Tick,
        next_local: Tick,
        link: LinkFigures,
        slack: Option<Slack>,
    ) -> Option<u8> {
        if self.pinned.is_some() {
            return None;
        }
        // Once the server reports at all, the guess is over: a report on
        // an earlier delay says to wait for one on this one, not to guess.
        self.measured |= slack.is_some();
        let fresh = slack.filter(|s| s.from >= self.fresh_from);
        let wanted = match fresh {
            Some(slack) => self.called_for(tick, slack, link.jitter),
            None if !self.measured => self.estimate(link.rtt, link.irregularity).max(self.current),
            None => self.current,
        };
        let wanted = wanted.clamp(MIN_DELAY, MAX_DELAY);
        if wanted == self.current {
            return None;
        }
        self.current = wanted;
        self.fresh_from = next_local;
        self.room = None;
        Some(wanted)
    }

    /// The delay a fresh report calls for.
    fn called_for(&mut self, tick: Tick, slack: Slack, jitter: Duration) -> u8 {
        // The bundles leave when the last input of their tick is in, and
        // reach us spread by our link's jitter: the slack keeps twice that
        // in hand (at most two ticks), on top of the safety margin.
        let margin = SAFETY + (2 * jitter).min(2 * self.tick);
        let (tick_ms, safety_ms) = (millis(self.tick), millis(margin));
        let p10 = f64::from(slack.p10_ms);
        if p10 < safety_ms {
            let short = ((safety_ms - p10) / tick_ms).ceil() as u8;
            return self.current.saturating_add(short.max(1));
        }
        if slack.p1_ms < 0 {
            // A few inputs were late, by as much as a burst of losses
            // held them: cover the latest.
            let short = (-f64::from(slack.p1_ms) / tick_ms).ceil() as u8;
            return self.current.saturating_add(short.max(1));
        }
        let spare = ((f64::from(slack.p1_ms) - safety_ms) / tick_ms).floor() as u8;
        if spare == 0 {
            self.room = None;
            return self.current;
        }
        let (since, least) = self.room.get_or_insert((tick, spare));
        *least = (*least).min(spare);
        if tick.since(*since) >= LOWER_AFTER {
            self.current.saturating_sub(*least)
        } else {
            self.current
        }
    }
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    /// Link figures with this round trip and irregularity, no jitter.
    fn figures(rtt: Duration, irregularity: Duration) -> LinkFigures {
        LinkFigures {
            rtt,
            jitter: Duration::ZERO,
            irregularity,
        }
    }

    /// A report on inputs from `from` on.
    fn slack(from: u32, p1_ms: i16, p10_ms: i16) -> Option<Slack> {
        Some(Slack {
            from: Tick(from),
            p1_ms,
            p10_ms,
        })
    }

    #[test]
    fn the_guess_covers_the_round_trip_and_jitter_plus_two_ticks() {
        let c = DelayController::new(3, 60, None, Tick(0));
        // Loopback: well under a tick, so one, plus two.
        assert_eq!(c.estimate(MS / 5, Duration::ZERO), 3);
        // 50 ms +/- 10 ms: (50 + 20 + 2) ms = 4.3 ticks -> 5, plus two.
        assert_eq!(c.estimate(50 * MS, 10 * MS), 7);
        assert_eq!(
            c.estimate(Duration::from_secs(5), Duration::ZERO),
            MAX_DELAY
        );
    }

    #[test]
    fn before_any_report_the_guess_only_raises_the_delay() {
        let mut c = DelayController::new(3, 60, None, Tick(0));
        assert_eq!(
            c.update(Tick(1), Tick(4), figures(MS, Duration::ZERO), None),
            None
        );
        assert_eq!(
            c.update(Tick(2), Tick(5), figures(50 * MS, 10 * MS), None),
            Some(7)
        );
        assert_eq!(
            c.update(Tick(3), Tick(10), figures(MS, Duration::ZERO), None),
            None
        );
    }

    #[test]
    fn a_stale_report_ends_the_guessing_and_changes_nothing() {
        let mut c = DelayController::new(3, 60, None, Tick(0));
        let bursty = figures(MS, 60 * MS);
        assert_eq!(c.update(Tick(60), Tick(63), bursty, None), Some(10));
        // A report on inputs sampled under delay 3: wait for one on 10,
        // however bursty the link looked.
        let worse = figures(MS, 120 * MS);
        assert_eq!(c.update(Tick(61), Tick(71), worse, slack(0, 40, 45)), None);
        assert_eq!(c.update(Tick(62), Tick(72), worse, None), None);
    }

    #[test]
    fn ample_slack_lowers_the_delay_after_a_quiet_while_by_the_least_room_seen() {
        let mut c = DelayController::new(5, 60, None, Tick(0));
        // At delay 5 the inputs arrive at least 75 ms early (four ticks to
        // spare), for a while only 40 ms (two ticks).
        let early = slack(0, 75, 80);
        let less = slack(0, 40, 80);
        assert_eq!(
            c.update(Tick(10), Tick(15), figures(MS, Duration::ZERO), early),
            None
        );
        assert_eq!(
            c.update(Tick(200), Tick(205), figures(MS, Duration::ZERO), less),
            None
        );
        assert_eq!(
            c.update(
                Tick(9 + LOWER_AFTER),
                Tick(14 + LOWER_AFTER),
                figures(MS, Duration::ZERO),
                early
            ),
            None
        );
        let lowered_at = 10 + LOWER_AFTER;
        assert_eq!(
            c.update(
                Tick(lowered_at),
                Tick(lowered_at + 5),
                figures(MS, Duration::ZERO),
                early
            ),
            Some(3)
        );
        // The same report again says nothing about delay 3: it counts
        // inputs sampled under 5.
        let later = Tick(lowered_at + 2 * LOWER_AFTER);
        assert_eq!(
            c.update(later, later, figures(MS, Duration::ZERO), early),
            None
        );
        // Fresh reports at delay 3: 40 ms early leaves two ticks of room;
        // at delay 1, 12 ms leaves none.
        let fresh = slack(lowered_at + 5, 40, 45);
        let t = lowered_at + 300;
        assert_eq!(
            c.update(Tick(t), Tick(t + 3), figures(MS, Duration::ZERO), fresh),
            None
        );
        let t2 = t + LOWER_AFTER;
        assert_eq!(
            c.update(Tick(t2), Tick(t2 + 3), figures(MS, Duration::ZERO), fresh),
            Some(1)
        );
        let tight = slack(t2 + 3, 12, 15);
        for t3 in [t2 + 300, t2 + 3 * LOWER_AFTER] {
            assert_eq!(
                c.update(Tick(t3), Tick(t3 + 1), figures(MS, Duration::ZERO), tight),
                None
            );
        }
        assert_eq!(c.current(), 1);
    }

    #[test]
    fn a_short_lull_in_the_slack_restarts_the_wait_before_lowering() {
        let mut c = DelayController::new(3, 60, None, Tick(0));
        let early = slack(0, 45, 48);
        let tight = slack(0, 10, 30);
        c.update(Tick(1), Tick(4), figures(MS, Duration::ZERO), early);
        c.update(Tick(300), Tick(303), figures(MS, Duration::ZERO), tight);
        c.update(Tick(301), Tick(304), figures(MS, Duration::ZERO), early);
        assert_eq!(
            c.update(
                Tick(1 + LOWER_AFTER),
                Tick(4 + LOWER_AFTER),
                figures(MS, Duration::ZERO),
                early
            ),
            None
        );
        assert_eq!(
            c.update(
                Tick(301 + LOWER_AFTER),
                Tick(304 + LOWER_AFTER),
                figures(MS, Duration::ZERO),
                early
            ),
            Some(1)
        );
    }

    #[test]
    fn late_inputs_raise_the_delay_at_once_by_what_the_slack_lacks() {
        let mut c = DelayController::new(2, 60, None, Tick(0));
        // Most inputs 40 ms late: 42 ms short of the safety margin is
        // three ticks.
        assert_eq!(
            c.update(
                Tick(100),
                Tick(102),
                figures(MS, Duration::ZERO),
                slack(0, -60, -40)
            ),
            Some(5)
        );
        // Until inputs sampled under 5 are reported, nothing moves.
        assert_eq!(
            c.update(
                Tick(101),
                Tick(106),
                figures(MS, Duration::ZERO),
                slack(50, -60, -40)
            ),
            None
        );
        // A few late inputs, most on time: one tick more.
        assert_eq!(
            c.update(
                Tick(400),
                Tick(405),
                figures(MS, Duration::ZERO),
                slack(102, -3, 20)
            ),
            Some(6)
        );
    }

    #[test]
    fn a_jittery_link_keeps_twice_its_jitter_of_slack_in_hand() {
        let jittery = LinkFigures {
            rtt: 50 * MS,
            jitter: 8 * MS,
            irregularity: 8 * MS,
        };
        // 2 + 16 ms to keep: 15 ms at the 10th percentile is short by a
        // tick; on a steady link it is plenty.
        let report = slack(0, 14, 15);
        let mut c = DelayController::new(4, 60, None, Tick(0));
        assert_eq!(c.update(Tick(100), Tick(104), jittery, report), Some(5));
        let mut steady = DelayController::new(4, 60, None, Tick(0));
        let calm = LinkFigures {
            jitter: Duration::ZERO,
            ..jittery
        };
        assert_eq!(steady.update(Tick(100), Tick(104), calm, report), None);
    }

    #[test]
    fn a_pinned_delay_never_moves() {
        let mut c = DelayController::new(3, 60, Some(7), Tick(0));
        assert_eq!(c.current(), 7);
        assert_eq!(
            c.update(
                Tick(1),
                Tick(8),
                figures(Duration::from_millis(300), 50 * MS),
                slack(0, -90, -80)
            ),
            None
        );
        assert_eq!(c.current(), 7);
    }
}
