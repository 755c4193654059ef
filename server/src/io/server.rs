//! The server's QUIC endpoint and its accept loop.
//!
//! [`run`] starts the session's driver (`session.rs`), the LAN beacon
//! (`beacon.rs`) and the web door (`web.rs`), hands every new QUIC
//! connection to a task of its own (`connection.rs`), and on shutdown
//! stops accepting, tells the driver, waits for it and closes the
//! endpoint.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use lockstep_protocol::ALPN;
use tokio::sync::mpsc;
use tracing::{info, warn, Instrument};

use super::admission::Admission;
use super::connection;
use super::identity::Identity;
use super::web::{self, WebDoor};
use super::{beacon, session};
use crate::beacon::Occupancy;
use crate::{Config, ServerEvent, CLOSE_SHUTDOWN};

/// Why the endpoint could not be created.
#[derive(Debug, thiserror::Error)]
pub enum EndpointError {
    /// The certificate or key was rejected by TLS.
    #[error("invalid server identity: {0}")]
    Tls(#[from] rustls::Error),
    /// QUIC rejected the TLS configuration.
    #[error("TLS configuration unusable for QUIC: {0}")]
    Quic(#[from] quinn::crypto::rustls::NoInitialCipherSuite),
    /// Binding the UDP socket failed.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The underlying error.
        source: std::io::Error,
    },
}

/// The least silence after which a connection ends: during a game the
/// server sends the lag indicator four times a second, and QUIC
/// keep-alives go every second, so five quiet seconds mean the other end
/// is gone, not busy.
const MIN_IDLE_TIMEOUT: Duration = Duration::from_secs(5);

/// How much longer than the drop timeout a connection outlives silence: a
/// player that wakes just before it would be dropped has this long to be
/// heard.
const IDLE_BEYOND_DROP: Duration = Duration::from_secs(1);

/// The silence after which QUIC ends a connection, on both ends (QUIC
/// takes the shorter of the two ends' limits, and the client sets none):
/// [`MIN_IDLE_TIMEOUT`] at least, and longer than `drop_timeout`, so the
/// relay decides when a silent player is dropped and QUIC only cleans up.
/// A player whose machine stops for less than the drop timeout comes back
/// on the same connection, the server standing in for its inputs
/// meanwhile.
pub fn idle_timeout(drop_timeout: Duration) -> Duration {
    MIN_IDLE_TIMEOUT.max(drop_timeout.saturating_add(IDLE_BEYOND_DROP))
}

/// The server's QUIC settings for a game that drops a silent player after
/// `drop_timeout`: the shared ones with an [idle timeout](idle_timeout)
/// beyond it, one control stream per client and room for a burst of input
/// datagrams.
pub fn transport_config(drop_timeout: Duration) -> quinn::TransportConfig {
    let mut transport = lockstep_protocol::quic::transport_config(Some(idle_timeout(drop_timeout)));
    transport
        .max_concurrent_bidi_streams(quinn::VarInt::from_u32(1))
        .max_concurrent_uni_streams(quinn::VarInt::from_u32(0))
        .datagram_receive_buffer_size(Some(256 * 1024));
    transport
}

/// The endpoint's settings, with its connection-ID and stateless-reset
/// keys derived from `identity`'s private key rather than drawn at random.
///
/// A server killed and started again with the same identity (`--resume`)
/// then recognises the connection IDs it handed out before, and answers a
/// packet on a connection it no longer has with a stateless reset the
/// client accepts: the clients learn at once that their connection is
/// gone, and reconnect, instead of waiting out the idle timeout (the drop
/// timeout and a second) in silence while the new server waits for them.
/// Anyone else still cannot forge a reset: the keys are as secret as the
/// identity's private key.
pub fn endpoint_config(identity: &Identity) -> quinn::EndpointConfig {
    let secret = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, identity.key.secret_pkcs8_der());
    let derive = |label: &[u8]| ring::hmac::sign(&secret, label);
    let reset = derive(b"lockstep quic stateless reset key");
    let mut config = quinn::EndpointConfig::new(Arc::new(ring::hmac::Key::new(
        ring::hmac::HMAC_SHA256,
        reset.as_ref(),
    )));
    let cid = derive(b"lockstep quic connection id key");
    let mut cid_key = [0; 8];
    cid_key.copy_from_slice(&cid.as_ref()[..8]);
    let cid_key = u64::from_le_bytes(cid_key);
    config.cid_generator(move || {
        Box::new(quinn_proto::HashedConnectionIdGenerator::from_key(cid_key))
    });
    config
}

/// A server endpoint bound to `listen` with `identity`, for a game that
/// drops a silent player after `drop_timeout`, its UDP socket impaired by
/// `link` in both directions (a clean link changes nothing).
pub fn endpoint(
    listen: SocketAddr,
    identity: &Identity,
    link: &lockstep_conditioner::LinkConfig,
    drop_timeout: Duration,
) -> Result<quinn::Endpoint, EndpointError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])?
        .with_no_client_auth()
        .with_single_cert(vec![identity.cert.clone()], identity.private_key())?;
    tls.alpn_protocols = vec![ALPN.to_vec()];
    let crypto = quinn::crypto::rustls::QuicServerConfig::try_from(tls)?;
    let mut config = quinn::ServerConfig::with_crypto(Arc::new(crypto));
    config.transport_config(Arc::new(transport_config(drop_timeout)));
    let (endpoint, _) = lockstep_conditioner::endpoint(
        endpoint_config(identity),
        Some(config),
        listen,
        *link,
        *link,
    )
    .map_err(|source| EndpointError::Bind {
        addr: listen,
        source,
    })?;
    Ok(endpoint)
}

/// Serves games on `endpoint`, and to browsers through `web` if given,
/// until `shutdown` completes, then tells every client, closes every
/// connection with a reason and waits for the endpoint to go idle.
/// `events`, if given, receives what happened.
pub async fn run(
    endpoint: quinn::Endpoint,
    web: Option<WebDoor>,
    config: Config,
    events: Option<mpsc::UnboundedSender<ServerEvent>>,
    shutdown: impl Future<Output = ()>,
) {
    // The page asks the door which game is hosted, to load the lightest
    // wasm module that has it.
    let web = web.map(|door| door.hosting(&config.spec.name));
    let (driver_tx, driver_rx) = mpsc::channel(1024);
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let (occupancy_tx, occupancy_rx) = tokio::sync::watch::channel(Occupancy::default());
    let beacon_task = beacon::start(&endpoint, &config, occupancy_rx, events.clone());
    let admission = Admission::new(config.hello_timeout, config.password.as_deref());
    let driver_task = tokio::spawn(
        session::run(
            config,
            events.clone(),
            driver_rx,
            occupancy_tx,
            async move {
                let mut stop_rx = stop_rx;
                let _ = stop_rx.wait_for(|&stop| stop).await;
            },
        )
        .instrument(tracing::info_span!("session")),
    );
    let web_task = web.map(|door| {
        tokio::spawn(web::serve(
            door,
            admission.clone(),
            driver_tx.clone(),
            events.clone(),
        ))
    });
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            incoming = endpoint.accept() => match incoming {
                Some(incoming) => match admission.try_enter() {
                    Some(ticket) => {
                        tokio::spawn(connection::handle_connection(
                            incoming,
                            ticket,
                            driver_tx.clone(),
                            events.clone(),
                        ));
                    }
                    None => {
                        warn!(
                            remote = %incoming.remote_address(),
                            waiting = admission.pending(),
                            "too many connections without a Hello; refusing a new one"
                        );
                        incoming.refuse();
                    }
                },
                None => break,
            },
            _ = &mut shutdown => break,
        }
    }
    info!("shutting down");
    if let Some(beacon_task) = beacon_task {
        beacon_task.abort();
    }
    if let Some(web_task) = web_task {
        web_task.abort();
    }
    let _ = stop_tx.send(true);
    let _ = driver_task.await;
    endpoint.close(CLOSE_SHUTDOWN, b"the server is shutting down");
    let _ = tokio::time::timeout(Duration::from_secs(2), endpoint.wait_idle()).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quic_ends_a_silent_connection_only_after_the_relay_would_drop_the_player() {
        for drop_ms in [0, 2_000, 3_999, 4_000, 20_000, 600_000] {
            let drop_timeout = Duration::from_millis(drop_ms);
            let idle = idle_timeout(drop_timeout);
            assert!(idle > drop_timeout, "{drop_timeout:?}: {idle:?}");
            assert!(idle >= MIN_IDLE_TIMEOUT, "{drop_timeout:?}: {idle:?}");
        }
        // At the default drop timeout, a server that is gone is noticed
        // after five seconds, as before.
        assert_eq!(idle_timeout(crate::DEFAULT_DROP_TIMEOUT), MIN_IDLE_TIMEOUT);
        assert_eq!(idle_timeout(Duration::MAX), Duration::MAX);
    }
}
