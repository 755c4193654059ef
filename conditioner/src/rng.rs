//! The conditioner's own random numbers: SplitMix64.
//!
//! Impairment must be reproducible (same seed, same losses), so the generator
//! is part of the crate rather than a dependency whose stream could change
//! between versions. SplitMix64 passes BigCrush, needs one `u64` of state and
//! turns any seed, even 0 or 1, into a well-mixed stream. It is public so
//! that other seeded tools of the workspace (the chaos run's schedule) draw
//! from the same generator instead of a copy of it.

use std::time::Duration;

/// Added to the state on every step: the odd constant from the SplitMix64
/// paper (2^64 / golden ratio), which visits every `u64` before repeating.
const GOLDEN_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// Scales the top 53 bits of a `u64` into `[0, 1)`: an `f64` has a 53-bit
/// mantissa, so every value is exact and evenly spaced.
const UNIT_SCALE: f64 = 1.0 / (1u64 << 53) as f64;

/// A SplitMix64 generator.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator for `seed`, with `stream` picking one of many independent
    /// sequences for the same seed (the two directions of one socket).
    pub fn new(seed: u64, stream: u64) -> Self {
        let mut mixer = SplitMix64 {
            state: seed ^ stream.wrapping_mul(GOLDEN_GAMMA).rotate_left(32),
        };
        SplitMix64 {
            state: mixer.next_u64(),
        }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN_GAMMA);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * UNIT_SCALE
    }

    /// True with probability `p`; never for `p <= 0` (or NaN), always for
    /// `p >= 1`, so an out-of-range probability saturates instead of failing.
    pub fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && self.next_f64() < p
    }

    /// Uniform in `[0, max]`, at nanosecond resolution.
    pub fn duration_up_to(&mut self, max: Duration) -> Duration {
        let span = u64::try_from(max.as_nanos())
            .unwrap_or(u64::MAX)
            .saturating_add(1);
        // Lemire's multiply-shift: the high half of `x * span` is uniform in
        // `[0, span)` up to a bias of `span / 2^64`, far below anything a
        // test over 100k packets could see.
        let nanos = (u128::from(self.next_u64()) * u128::from(span)) >> 64;
        Duration::from_nanos(nanos as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_and_stream_repeat_the_sequence() {
        let mut a = SplitMix64::new(7, 0);
        let mut b = SplitMix64::new(7, 0);
        for _ in 0..1000 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
    }

    #[test]
    fn streams_of_one_seed_differ() {
        let mut a = SplitMix64::new(7, 0);
        let mut b = SplitMix64::new(7, 1);
        let same = (0..1000).filter(|_| a.next_u64() == b.next_u64()).count();
        assert_eq!(same, 0);
    }

    #[test]
    fn unit_values_stay_in_range() {
        let mut rng = SplitMix64::new(1, 0);
        for _ in 0..100_000 {
            let x = rng.next_f64();
            assert!((0.0..1.0).contains(&x));
        }
    }

    #[test]
    fn durations_cover_the_closed_range() {
        let mut rng = SplitMix64::new(3, 0);
        let max = Duration::from_nanos(3);
        let mut seen = [false; 4];
        for _ in 0..1000 {
            let d = rng.duration_up_to(max);
            assert!(d <= max);
            seen[d.as_nanos() as usize] = true;
        }
        assert_eq!(seen, [true; 4]);
        assert_eq!(rng.duration_up_to(Duration::ZERO), Duration::ZERO);
    }

    #[test]
    fn chance_saturates_out_of_range_probabilities() {
        let mut rng = SplitMix64::new(5, 0);
        assert!((0..1000).all(|_| rng.chance(1.0)));
        assert!((0..1000).all(|_| rng.chance(2.0)));
        assert!((0..1000).all(|_| !rng.chance(0.0)));
        assert!((0..1000).all(|_| !rng.chance(-1.0)));
        assert!((0..1000).all(|_| !rng.chance(f64::NAN)));
    }
}
