//! The QUIC settings both ends share (feature `quic`, which the client and
//! the server turn on; the game and the engine build without quinn).

use std::time::Duration;

/// Transport settings of either end: the connection closes after
/// `idle_timeout_ms` of silence, keep-alives every second hold an idle
/// lobby open, and the peer is asked to acknowledge every tenth packet (or
/// after its usual ACK delay) rather than every second one, so its ACKs
/// ride on its own datagrams (inputs one way, bundles the other) instead
/// of taking packets of their own.
pub fn transport_config(idle_timeout_ms: u32) -> quinn::TransportConfig {
    let mut ack = quinn::AckFrequencyConfig::default();
    ack.ack_eliciting_threshold(quinn::VarInt::from_u32(9));
    let mut transport = quinn::TransportConfig::default();
    transport
        .max_idle_timeout(Some(quinn::IdleTimeout::from(quinn::VarInt::from_u32(
            idle_timeout_ms,
        ))))
        .keep_alive_interval(Some(Duration::from_secs(1)))
        .ack_frequency_config(Some(ack));
    transport
}
