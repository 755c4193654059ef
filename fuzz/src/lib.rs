//! Properties shared by the fuzz targets in `fuzz_targets/`.
//!
//! Each target feeds libFuzzer's bytes to one decode path of
//! `lockstep-protocol` and asserts what must hold for *every* input, not
//! only that nothing panics. The committed seeds in `seeds/<target>/` are
//! written by `examples/write_seeds.rs`.

use std::fmt::Debug;

use lockstep_protocol::{decode, encode};
use serde::{de::DeserializeOwned, Serialize};

/// Asserts that `value`, decoded from `input` under `limit`, encodes again
/// within that limit and decodes back to itself.
///
/// The comparison is of values, not bytes: postcard accepts over-long
/// varints (`80 00` for 0), so different inputs may decode to one value,
/// whose encoding is the shortest of them. Hence also `<= input.len()`,
/// which is what keeps a re-encoded message inside the limit it arrived
/// under.
pub fn assert_round_trips<T>(value: &T, input: &[u8], limit: usize)
where
    T: Serialize + DeserializeOwned + PartialEq + Debug,
{
    let encoded = encode(value, limit).expect("a decoded value re-encodes within its limit");
    assert!(
        encoded.len() <= input.len(),
        "re-encoding grew {} bytes to {}",
        input.len(),
        encoded.len()
    );
    let again: T = decode(&encoded, limit).expect("a re-encoded value decodes");
    assert_eq!(&again, value);
}
