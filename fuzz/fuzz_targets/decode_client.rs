//! What a server decodes from a client: control-stream message bodies and
//! datagrams, under the limits the server applies.
//!
//! Properties: decoding returns a typed error or a value that round-trips
//! ([`assert_round_trips`]); `hello_version` reads any body, and of a
//! body that decodes it names the Hello's version, or none for another
//! message, so a refusal never quotes a wrong version.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep_fuzz::assert_round_trips;
use lockstep_protocol::{
    decode, hello_version, ClientDatagram, ClientMessage, MAX_DATAGRAM_SIZE, MAX_MESSAGE_SIZE,
};

fuzz_target!(|data: &[u8]| {
    // On every body: the server asks exactly when decoding has failed.
    let version = hello_version(data);
    if let Ok(message) = decode::<ClientMessage>(data, MAX_MESSAGE_SIZE) {
        assert_round_trips(&message, data, MAX_MESSAGE_SIZE);
        let hello = match &message {
            ClientMessage::Hello(hello) => Some(hello.protocol_version),
            _ => None,
        };
        assert_eq!(version, hello);
    }
    if let Ok(datagram) = decode::<ClientDatagram>(data, MAX_DATAGRAM_SIZE) {
        assert_round_trips(&datagram, data, MAX_DATAGRAM_SIZE);
    }
});
