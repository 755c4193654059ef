//! Telling a late player that the server stood in for its inputs.
//!
//! When this machine's input for a tick reaches the server too late (more
//! than the server's `--laggard-ms` after everybody else's), the server
//! puts our previous input in its place, marks the bundle, and the game
//! goes on without waiting for us. The player should know, but a machine
//! that cannot keep up is late on every tick. So the first replacement
//! after a quiet [`SUMMARY_EVERY`] is said on stderr at once, later ones
//! are summed up at most once per [`SUMMARY_EVERY`], and the HUD shows a
//! note until [`SHOWN_FOR`] after the latest. Given the time, like the
//! rest of the link's logic (`now` counts from the game's epoch);
//! [`crate::play`] says what it returns as a [`Notice::Lag`](super::Notice::Lag).

use std::time::Duration;

use lockstep_protocol::Tick;

/// At most one line on stderr this often.
pub const SUMMARY_EVERY: Duration = Duration::from_secs(5);

/// How long the HUD note stays after the latest replacement: long enough
/// to read, short enough to go once the machine keeps up again.
pub const SHOWN_FOR: Duration = Duration::from_secs(2);

/// Replacements not yet said on stderr.
#[derive(Debug, Clone, Copy)]
struct Unsaid {
    first: Tick,
    last: Tick,
    count: u64,
}

/// What the player has been told about replaced inputs.
#[derive(Debug, Default)]
pub struct Replacements {
    /// When stderr last heard of it.
    said_at: Option<Duration>,
    unsaid: Option<Unsaid>,
    /// The latest replacement, for the HUD.
    latest: Option<(Tick, Duration)>,
}

impl Replacements {
    /// Our input for `tick` was replaced (seen at `now`); returns the line
    /// for stderr if one is due.
    pub fn replaced(&mut self, tick: Tick, now: Duration) -> Option<String> {
        self.latest = Some((tick, now));
        let unsaid = self.unsaid.get_or_insert(Unsaid {
            first: tick,
            last: tick,
            count: 0,
        });
        unsaid.last = tick;
        unsaid.count += 1;
        self.due(now)
    }

    /// The line for stderr due at `now`: replacements not said yet, once
    /// [`SUMMARY_EVERY`] has passed since the last line.
    pub fn due(&mut self, now: Duration) -> Option<String> {
        if self
            .said_at
            .is_some_and(|at| now.saturating_sub(at) < SUMMARY_EVERY)
        {
            return None;
        }
        let line = self.flush()?;
        self.said_at = Some(now);
        Some(line)
    }

    /// The replacements not said yet, whatever the time (the game ends).
    pub fn flush(&mut self) -> Option<String> {
        let Unsaid { first, last, count } = self.unsaid.take()?;
        Some(if count == 1 {
            format!(
                "your input for tick {first} was replaced: it reached the server too late, \
                 and the game went on without it"
            )
        } else {
            format!("your inputs for {count} ticks from {first} to {last} were replaced")
        })
    }

    /// The HUD's note at `now`, until [`SHOWN_FOR`] after the latest
    /// replacement; `total` is how many so far.
    pub fn note(&self, now: Duration, total: u64) -> Option<String> {
        let (tick, at) = self.latest?;
        (now.saturating_sub(at) < SHOWN_FOR)
            .then(|| format!("input for tick {tick} replaced ({total} so far)"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn the_first_replacement_is_said_at_once_and_later_ones_summed_every_few_seconds() {
        let start = Duration::ZERO;
        let mut replacements = Replacements::default();
        let first = replacements.replaced(Tick(120), start).unwrap();
        assert!(
            first.starts_with("your input for tick 120 was replaced"),
            "{first}"
        );
        // Late on every tick for a while: nothing more until 5 s later.
        for i in 1..300u32 {
            let now = start + Duration::from_secs(1) * i / 60;
            assert_eq!(replacements.replaced(Tick(120 + i), now), None);
        }
        assert_eq!(replacements.due(start + ms(4999)), None);
        assert_eq!(
            replacements.due(start + ms(5000)).as_deref(),
            Some("your inputs for 299 ticks from 121 to 419 were replaced")
        );
        assert_eq!(replacements.due(start + ms(30_000)), None);
        assert!(replacements
            .replaced(Tick(2000), start + ms(30_000))
            .is_some());
        assert_eq!(replacements.flush(), None);
    }

    #[test]
    fn the_hud_note_stays_a_moment_after_the_latest_replacement() {
        let start = Duration::ZERO;
        let mut replacements = Replacements::default();
        assert_eq!(replacements.note(start, 0), None);
        replacements.replaced(Tick(7), start);
        replacements.replaced(Tick(9), start + ms(500));
        assert_eq!(
            replacements.note(start + ms(2499), 2).as_deref(),
            Some("input for tick 9 replaced (2 so far)")
        );
        assert_eq!(replacements.note(start + ms(2500), 2), None);
        assert_eq!(
            replacements.flush().as_deref(),
            Some(
                "your input for tick 9 was replaced: it reached the server too late, and the \
                 game went on without it"
            )
        );
    }
}
