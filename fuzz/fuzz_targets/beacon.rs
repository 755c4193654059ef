//! What a client or a server decodes from the discovery port: any
//! datagram anyone on the LAN sends.
//!
//! Properties: decoding returns a typed error or a beacon that encodes
//! again within `MAX_BEACON_SIZE` and decodes back equal; an announcement
//! that decodes carries a name `check_server_name` accepts.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep_protocol::{check_server_name, decode_beacon, encode_beacon, Beacon, MAX_BEACON_SIZE};

fuzz_target!(|data: &[u8]| {
    let Ok(beacon) = decode_beacon(data) else {
        return;
    };
    if let Beacon::Announce(announcement) = &beacon {
        assert_eq!(check_server_name(&announcement.name), Ok(()));
    }
    let again = encode_beacon(&beacon).expect("a decoded beacon encodes");
    assert!(again.len() <= MAX_BEACON_SIZE);
    assert_eq!(decode_beacon(&again), Ok(beacon));
});
