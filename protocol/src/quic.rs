//! The QUIC settings both ends share (feature `quic`, which the client and
//! the server turn on; the game and the engine build without quinn), and
//! the client's check of the server's certificate ([`FingerprintVerifier`]).

mod fingerprint;

pub use fingerprint::FingerprintVerifier;

use std::any::Any;
use std::sync::Arc;
use std::time::{Duration, Instant};

use quinn::congestion::{Controller, ControllerFactory, CubicConfig};
use quinn_proto::RttEstimator;

/// The least congestion window either end keeps, in bytes: about a second
/// of full-size datagrams at 60 Hz.
///
/// The game sends one small datagram a tick each way, whatever the window,
/// so its own traffic is never what congests a link. But a loss-based
/// controller reads a burst of losses as congestion and shrinks the window
/// to two packets, and while the peer's acknowledgements are lost too
/// (a burst on the way back) the datagrams it still owes, each repeating
/// the bundles not yet acknowledged, fill those two packets within a few
/// ticks: the sender then holds the bundles back just when the peer needs
/// them, and the peer stalls on a link that had recovered. Above this
/// floor Cubic still governs what only a bulk transfer reaches (a late
/// joiner's history on the control stream).
pub const MIN_CONGESTION_WINDOW: u64 = 64 * 1024;

/// Transport settings of either end: this end lets the connection close
/// after `idle_timeout` of silence (`None`: it sets no limit, and the
/// peer's decides; QUIC uses the shorter of the two ends' limits),
/// keep-alives every second hold an idle lobby open, and the peer is asked
/// to acknowledge every tenth packet (or after its usual ACK delay) rather
/// than every second one, so its ACKs ride on its own datagrams (inputs
/// one way, bundles the other) instead of taking packets of their own. The
/// congestion window never falls below [`MIN_CONGESTION_WINDOW`].
pub fn transport_config(idle_timeout: Option<Duration>) -> quinn::TransportConfig {
    let mut ack = quinn::AckFrequencyConfig::default();
    ack.ack_eliciting_threshold(quinn::VarInt::from_u32(9));
    let mut transport = quinn::TransportConfig::default();
    // A limit beyond QUIC's range (2^62 ms) is no limit.
    let idle_timeout = idle_timeout.and_then(|limit| quinn::IdleTimeout::try_from(limit).ok());
    transport
        .max_idle_timeout(idle_timeout)
        .keep_alive_interval(Some(Duration::from_secs(1)))
        .ack_frequency_config(Some(ack))
        .congestion_controller_factory(Arc::new(FlooredFactory {
            inner: Arc::new(CubicConfig::default()),
            floor: MIN_CONGESTION_WINDOW,
        }));
    transport
}

/// Builds Cubic controllers whose window has a floor.
struct FlooredFactory {
    inner: Arc<CubicConfig>,
    floor: u64,
}

impl ControllerFactory for FlooredFactory {
    fn build(self: Arc<Self>, now: Instant, current_mtu: u16) -> Box<dyn Controller> {
        Box::new(Floored {
            inner: Arc::clone(&self.inner).build(now, current_mtu),
            floor: self.floor,
        })
    }
}

/// A congestion controller whose window is never below `floor`; every
/// event still reaches the controller inside, which decides above it.
struct Floored {
    inner: Box<dyn Controller>,
    floor: u64,
}

impl Controller for Floored {
    fn on_sent(&mut self, now: Instant, bytes: u64, last_packet_number: u64) {
        self.inner.on_sent(now, bytes, last_packet_number);
    }

    fn on_ack(
        &mut self,
        now: Instant,
        sent: Instant,
        bytes: u64,
        app_limited: bool,
        rtt: &RttEstimator,
    ) {
        self.inner.on_ack(now, sent, bytes, app_limited, rtt);
    }

    fn on_end_acks(
        &mut self,
        now: Instant,
        in_flight: u64,
        app_limited: bool,
        largest_packet_num_acked: Option<u64>,
    ) {
        self.inner
            .on_end_acks(now, in_flight, app_limited, largest_packet_num_acked);
    }

    fn on_congestion_event(
        &mut self,
        now: Instant,
        sent: Instant,
        is_persistent_congestion: bool,
        lost_bytes: u64,
    ) {
        self.inner
            .on_congestion_event(now, sent, is_persistent_congestion, lost_bytes);
    }

    fn on_mtu_update(&mut self, new_mtu: u16) {
        self.inner.on_mtu_update(new_mtu);
    }

    fn window(&self) -> u64 {
        self.inner.window().max(self.floor)
    }

    fn clone_box(&self) -> Box<dyn Controller> {
        Box::new(Floored {
            inner: self.inner.clone_box(),
            floor: self.floor,
        })
    }

    fn initial_window(&self) -> u64 {
        self.inner.initial_window().max(self.floor)
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

#[cfg(test)]
#[allow(
    clippy::disallowed_methods,
    reason = "quinn's controllers take instants; the tests need one to count from, and never time anything"
)]
mod tests {
    use super::*;

    fn floored(now: Instant) -> Box<dyn Controller> {
        Arc::new(FlooredFactory {
            inner: Arc::new(CubicConfig::default()),
            floor: MIN_CONGESTION_WINDOW,
        })
        .build(now, 1200)
    }

    #[test]
    fn losses_shrink_the_window_no_further_than_the_floor() {
        let start = Instant::now();
        let mut floored = floored(start);
        let mut cubic = Arc::new(CubicConfig::default()).build(start, 1200);
        for i in 1..=10u32 {
            let now = start + Duration::from_millis(100) * i;
            floored.on_congestion_event(now, now, true, 1200);
            cubic.on_congestion_event(now, now, true, 1200);
        }
        assert!(
            cubic.window() < 4 * 1200,
            "Cubic alone falls to a couple of packets: {}",
            cubic.window()
        );
        assert_eq!(floored.window(), MIN_CONGESTION_WINDOW);
        assert_eq!(floored.clone_box().window(), MIN_CONGESTION_WINDOW);
    }

    #[test]
    fn above_the_floor_cubic_decides() {
        let start = Instant::now();
        let floored = Arc::new(FlooredFactory {
            inner: Arc::new(CubicConfig::default()),
            floor: 1200,
        })
        .build(start, 1200);
        let cubic = Arc::new(CubicConfig::default()).build(start, 1200);
        assert_eq!(floored.window(), cubic.window());
        assert_eq!(floored.initial_window(), cubic.initial_window());
    }
}
