//! A user-space link conditioner for quinn endpoints: latency, jitter, loss
//! (independent or in bursts), duplication and reordering, in both
//! directions, without kernel support (no `netem` needed).
//!
//! # How it works
//!
//! [`Impairment`] is the model: a pure, seeded state machine that, given
//! when a packet was sent, says whether it is lost and when each copy
//! arrives. It never reads a clock, so its tests give it time explicitly.
//!
//! [`ConditionedSocket`] is a [`quinn::AsyncUdpSocket`] around a real UDP
//! socket. Outgoing datagrams pass through one model and wait in a timer
//! queue drained by a small task; incoming datagrams pass through a second,
//! independent model and wait in a queue read by quinn itself. A clean
//! direction ([`LinkConfig::is_clean`]) is passed straight through.
//!
//! The real socket is quinn's own, except on Windows: there it is a
//! [`PlainSocket`], because the Windows build runs under wine, which lacks
//! socket options that quinn's socket sets up.
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use lockstep_conditioner::{endpoint, LinkConfig};
//! use std::time::Duration;
//!
//! let link = LinkConfig {
//!     latency: Duration::from_millis(20),
//!     loss: 0.01,
//!     ..LinkConfig::default()
//! };
//! // 20 ms each way: about 40 ms round trip to any peer.
//! let (endpoint, socket) = endpoint(
//!     quinn::EndpointConfig::default(),
//!     None,
//!     "0.0.0.0:0".parse().expect("valid address"),
//!     link,
//!     link,
//! )?;
//! # let _ = (endpoint, socket.stats());
//! # Ok(())
//! # }
//! ```
//!
//! Binaries take the settings as flags with [`LinkArgs`].
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod args;
mod burst;
mod delay_queue;
mod impairment;
mod plain;
mod rng;
mod socket;

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use quinn::AsyncUdpSocket;

pub use args::{LinkArgs, LinkArgsError};
pub use burst::{BurstError, GilbertElliott};
pub use delay_queue::DelayQueue;
pub use impairment::{Fate, Impairment, LinkConfig, REORDER_MAX_HOLD};
pub use plain::PlainSocket;
pub use rng::SplitMix64;
pub use socket::{ConditionedSocket, DirectionStats, LinkStats, MAX_QUEUED_PACKETS};

/// Binds a UDP socket on `addr` whose outgoing traffic follows `up` and
/// incoming traffic follows `down`. The two directions draw independent
/// random numbers even when both configs (and seeds) are the same.
///
/// Must be called inside a tokio runtime, which then runs the conditioner's
/// task; outside one it fails with [`io::ErrorKind::Other`].
pub fn bind(
    addr: SocketAddr,
    up: LinkConfig,
    down: LinkConfig,
) -> io::Result<Arc<ConditionedSocket>> {
    let runtime = tokio::runtime::Handle::try_current().map_err(io::Error::other)?;
    let socket = std::net::UdpSocket::bind(addr)?;
    let inner = wrap_real_socket(socket)?;
    Ok(ConditionedSocket::new(inner, up, down, &runtime))
}

/// quinn's own socket (quinn-udp), with ECN and GSO/GRO batching.
#[cfg(not(windows))]
fn wrap_real_socket(socket: std::net::UdpSocket) -> io::Result<Arc<dyn AsyncUdpSocket>> {
    use quinn::Runtime;
    quinn::TokioRuntime.wrap_udp_socket(socket)
}

/// A [`PlainSocket`]: the Windows client runs under wine, where quinn-udp's
/// socket setup fails (see [`PlainSocket`]).
#[cfg(windows)]
fn wrap_real_socket(socket: std::net::UdpSocket) -> io::Result<Arc<dyn AsyncUdpSocket>> {
    Ok(PlainSocket::new(socket)?)
}

/// A quinn endpoint on a conditioned socket (see [`bind`]), plus the socket
/// itself for its [`ConditionedSocket::stats`]. `server` is as for
/// [`quinn::Endpoint::new`]: `None` for a client-only endpoint.
pub fn endpoint(
    config: quinn::EndpointConfig,
    server: Option<quinn::ServerConfig>,
    addr: SocketAddr,
    up: LinkConfig,
    down: LinkConfig,
) -> io::Result<(quinn::Endpoint, Arc<ConditionedSocket>)> {
    let socket = bind(addr, up, down)?;
    let endpoint = quinn::Endpoint::new_with_abstract_socket(
        config,
        server,
        socket.clone(),
        Arc::new(quinn::TokioRuntime),
    )?;
    Ok((endpoint, socket))
}
