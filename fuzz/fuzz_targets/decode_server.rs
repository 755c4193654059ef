//! What a client decodes from the server: control-stream message bodies and
//! datagrams, under the limits the client applies.
//!
//! Property: decoding returns a typed error or a value that round-trips
//! ([`assert_round_trips`]).
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep_fuzz::assert_round_trips;
use lockstep_protocol::{
    decode, ServerDatagram, ServerMessage, MAX_DATAGRAM_SIZE, MAX_MESSAGE_SIZE,
};

fuzz_target!(|data: &[u8]| {
    if let Ok(message) = decode::<ServerMessage>(data, MAX_MESSAGE_SIZE) {
        assert_round_trips(&message, data, MAX_MESSAGE_SIZE);
    }
    if let Ok(datagram) = decode::<ServerDatagram>(data, MAX_DATAGRAM_SIZE) {
        assert_round_trips(&datagram, data, MAX_DATAGRAM_SIZE);
    }
});
