//! FNV-1a 64, the checksum peers compare to prove they simulate the same
//! world: every game's `Game::hash` feeds its state through it.
//!
//! Not `std::hash::Hasher`: its integer writers use native byte order and
//! `DefaultHasher` is randomly keyed and unspecified, while this checksum must
//! be the same on every machine and stable across releases. FNV-1a is not
//! collision resistant, which is fine: it detects accidental divergence, not
//! an adversary.

/// Incremental FNV-1a 64 over explicitly little-endian integers.
#[derive(Debug, Clone, Copy)]
pub struct Fnv1a(u64);

impl Default for Fnv1a {
    fn default() -> Fnv1a {
        Fnv1a::new()
    }
}

impl Fnv1a {
    /// FNV-1a 64 offset basis, from the FNV specification.
    const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
    /// FNV 64-bit prime, from the FNV specification.
    const PRIME: u64 = 0x0000_0100_0000_01b3;

    /// A hash of nothing yet.
    #[must_use]
    pub fn new() -> Fnv1a {
        Fnv1a(Self::OFFSET_BASIS)
    }

    /// Bytes, in order.
    pub fn write_bytes(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 ^= u64::from(byte);
            self.0 = self.0.wrapping_mul(Self::PRIME);
        }
    }

    /// One byte.
    pub fn write_u8(&mut self, value: u8) {
        self.write_bytes(&[value]);
    }

    /// Little-endian.
    pub fn write_u16(&mut self, value: u16) {
        self.write_bytes(&value.to_le_bytes());
    }

    /// Little-endian.
    pub fn write_u32(&mut self, value: u32) {
        self.write_bytes(&value.to_le_bytes());
    }

    /// Little-endian.
    pub fn write_u64(&mut self, value: u64) {
        self.write_bytes(&value.to_le_bytes());
    }

    /// A float as its IEEE-754 bit pattern, so `0.0` and `-0.0` differ: they
    /// can lead to different futures (e.g. through a division), so a hash
    /// that merged them could hide a real divergence.
    pub fn write_f32(&mut self, value: f32) {
        self.write_u32(value.to_bits());
    }

    /// A collection length. Written before every list so that moving an
    /// element from one list to the next changes the hash.
    pub fn write_len(&mut self, len: usize) {
        self.write_u32(u32::try_from(len).unwrap_or(u32::MAX));
    }

    /// A flag, as one byte: 0 or 1.
    pub fn write_bool(&mut self, value: bool) {
        self.write_u8(u8::from(value));
    }

    /// The hash of everything written.
    #[must_use]
    pub fn finish(self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fnv1a(bytes: &[u8]) -> u64 {
        let mut hasher = Fnv1a::new();
        hasher.write_bytes(bytes);
        hasher.finish()
    }

    #[test]
    fn matches_published_fnv1a_64_vectors() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn integers_are_hashed_little_endian() {
        let mut hasher = Fnv1a::new();
        hasher.write_u32(0x0403_0201);
        assert_eq!(hasher.finish(), fnv1a(&[1, 2, 3, 4]));
    }

    #[test]
    fn signed_zeros_hash_differently() {
        let mut positive = Fnv1a::new();
        positive.write_f32(0.0);
        let mut negative = Fnv1a::new();
        negative.write_f32(-0.0);
        assert_ne!(positive.finish(), negative.finish());
    }
}
