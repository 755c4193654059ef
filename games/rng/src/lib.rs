//! The games' random numbers: one seeded generator that every game keeps
//! in its state (snapshotted and hashed), so a restored game draws the
//! same numbers, on every machine.
#![no_std]

use serde::{Deserialize, Serialize};

/// SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number
/// generators", 2014), the generator behind Java's `SplittableRandom`.
///
/// Chosen because it is tiny, has a single `u64` of state (so it serialises
/// and hashes as one integer), and is built from wrapping integer operations
/// only, which give the same bits on every machine. The whole state lives in
/// the game's state, so a snapshot carries the exact position in the stream;
/// it serialises as that one `u64` in postcard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// Weyl-sequence increment: the 64-bit golden ratio, as in the paper.
    const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

    /// A generator whose stream is fully determined by `seed`.
    #[must_use]
    pub fn new(seed: u64) -> Rng {
        Rng { state: seed }
    }

    /// The internal state, for hashing.
    #[must_use]
    pub fn state(&self) -> u64 {
        self.state
    }

    /// The next 64 uniformly distributed bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(Self::GAMMA);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform `f32` in `[0, 1)`.
    ///
    /// Built from the top 24 bits (an `f32` mantissa holds exactly 24), so the
    /// integer-to-float conversion and the power-of-two scale are both exact:
    /// no rounding mode or library can change the result.
    pub fn next_f32_unit(&mut self) -> f32 {
        const TWO_POW_MINUS_24: f32 = 1.0 / 16_777_216.0;
        (self.next_u64() >> 40) as f32 * TWO_POW_MINUS_24
    }

    /// A uniform `f32` in `[lo, hi)` (for `lo < hi`; rounding of the final
    /// add may give exactly `hi` in rare cases, which callers tolerate).
    pub fn range_f32(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.next_f32_unit()
    }

    /// A uniform integer in `0..n`, or 0 when `n` is 0.
    ///
    /// Uses the multiply-high reduction (Lemire) on the top 32 bits: its
    /// bias is below `n / 2^32`, negligible for game choices, and unlike `%`
    /// it cannot divide by zero.
    pub fn below(&mut self, n: u32) -> u32 {
        (((self.next_u64() >> 32) * u64::from(n)) >> 32) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_outputs_match_published_splitmix64_vector() {
        // Reference values of SplitMix64 for seed 1234567, as produced by
        // Java's SplittableRandom and the reference C implementation.
        let mut rng = Rng::new(1_234_567);
        assert_eq!(rng.next_u64(), 6_457_827_717_110_365_317);
        assert_eq!(rng.next_u64(), 3_203_168_211_198_807_973);
        assert_eq!(rng.next_u64(), 9_817_491_932_198_370_423);
    }

    #[test]
    fn first_outputs_for_seed_zero_are_pinned() {
        let mut rng = Rng::new(0);
        assert_eq!(rng.next_u64(), 16_294_208_416_658_607_535);
        assert_eq!(rng.next_u64(), 7_960_286_522_194_355_700);
        assert_eq!(rng.next_u64(), 487_617_019_471_545_679);
    }

    #[test]
    fn unit_floats_come_from_the_top_24_bits() {
        // The same stream as above: 6457827717110365317 >> 40 == 5873360.
        let mut rng = Rng::new(1_234_567);
        assert_eq!(rng.next_f32_unit(), 5_873_360.0 / 16_777_216.0);
        assert_eq!(rng.next_f32_unit(), 2_913_264.0 / 16_777_216.0);
        assert_eq!(rng.next_f32_unit(), 8_928_956.0 / 16_777_216.0);
    }

    #[test]
    fn range_stays_within_bounds() {
        let mut rng = Rng::new(7);
        for _ in 0..10_000 {
            let x = rng.range_f32(-3.0, 5.0);
            assert!((-3.0..=5.0).contains(&x), "{x}");
        }
    }

    #[test]
    fn the_same_seed_draws_the_same_numbers_and_units_stay_in_range() {
        let (mut a, mut b) = (Rng::new(7), Rng::new(7));
        for _ in 0..1000 {
            let x = a.next_f32_unit();
            assert_eq!(x.to_bits(), b.next_f32_unit().to_bits());
            assert!((0.0..1.0).contains(&x));
        }
        assert_ne!(Rng::new(7).next_u64(), Rng::new(8).next_u64());
    }

    /// A snapshot holds the generator as the one `u64` of its state: the
    /// bytes the ball game's and Topple's snapshots and replays always had.
    #[test]
    fn a_generator_is_its_state_in_postcard() {
        let mut rng = Rng::new(1_234_567);
        rng.next_u64();
        let bytes = postcard::to_allocvec(&rng).expect("encodes");
        assert_eq!(bytes, postcard::to_allocvec(&rng.state()).expect("encodes"));
        let back: Rng = postcard::from_bytes(&bytes).expect("decodes");
        assert_eq!(back, rng);
    }

    #[test]
    fn below_stays_below_and_zero_is_safe() {
        let mut rng = Rng::new(9);
        for _ in 0..10_000 {
            assert!(rng.below(6) < 6);
        }
        assert_eq!(rng.below(0), 0);
    }
}
