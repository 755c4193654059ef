//! The task around the LAN beacon ([`Advertising`], `beacon.rs`): the
//! discovery socket, the clock and the session's occupancy.
//!
//! Nothing here may stop the server: a machine without IPv4, a port
//! already taken by something that does not share it, or a network that
//! refuses broadcast costs one warning line, and players there connect by
//! address as before.

use std::collections::BTreeSet;
use std::net::{IpAddr, SocketAddr};

use lockstep_protocol::lan::{self, Network};
use lockstep_protocol::{encode_beacon, Announcement, Beacon, MAX_BEACON_SIZE};
use tokio::net::UdpSocket;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tracing::{debug, warn, Instrument};

use super::clock;
use crate::beacon::{Advertising, Occupancy};
use crate::{Config, ServerEvent};

/// How the server advertises itself (`--name`, `--advertise-interface`).
#[derive(Debug, Clone)]
pub struct AdvertiseOptions {
    /// The name shown in lists and typed after `--join`.
    pub name: String,
    /// SHA-256 of the server's certificate.
    pub fingerprint: [u8; 32],
    /// The interface (name or address) to advertise on; `None` is every
    /// IPv4 network, or only the one holding the address the server
    /// listens on, if it listens on one.
    pub interface: Option<String>,
    /// The UDP port probes come to and broadcasts go to.
    pub discovery_port: u16,
}

/// The networks to advertise on for a server listening on `listen`.
fn networks(options: &AdvertiseOptions, listen: SocketAddr) -> Result<Vec<Network>, String> {
    let listen_ip = match listen.ip() {
        IpAddr::V4(ip) if !ip.is_unspecified() => Some(ip.to_string()),
        IpAddr::V6(ip) if !ip.is_unspecified() => {
            return Err(format!(
                "the server listens on the IPv6 address {ip}, and the beacon speaks IPv4 only"
            ))
        }
        _ => None,
    };
    let selector = options.interface.clone().or(listen_ip);
    lan::networks(selector.as_deref()).map_err(|e| e.to_string())
}

/// Starts advertising the server on `endpoint` if `config` asks for it.
pub(crate) fn start(
    endpoint: &quinn::Endpoint,
    config: &Config,
    occupancy: watch::Receiver<Occupancy>,
    events: Option<mpsc::UnboundedSender<ServerEvent>>,
) -> Option<JoinHandle<()>> {
    let options = config.advertise.clone()?;
    let listen = match endpoint.local_addr() {
        Ok(listen) => listen,
        Err(e) => {
            warn!(error = %e, "not advertising on the LAN: the game socket has no address");
            return None;
        }
    };
    let template = Announcement {
        name: options.name.clone(),
        host: listen.ip(),
        port: listen.port(),
        players: 0,
        needed: config.players,
        playing: false,
        tick_rate: config.tick_rate,
        spec: config.spec.clone(),
        input_delay: config.input_delay,
        password: config.password.is_some(),
        protocol_version: lockstep_protocol::PROTOCOL_VERSION,
        fingerprint: options.fingerprint,
        echo: None,
    };
    Some(tokio::spawn(
        run(options, template, listen, occupancy, events)
            .instrument(tracing::info_span!("advertiser")),
    ))
}

/// Advertises the server listening on `listen` (template: every field but
/// the address and occupancy) until the task is aborted.
async fn run(
    options: AdvertiseOptions,
    template: Announcement,
    listen: SocketAddr,
    mut occupancy: watch::Receiver<Occupancy>,
    events: Option<mpsc::UnboundedSender<ServerEvent>>,
) {
    let networks = match networks(&options, listen) {
        Ok(networks) => networks,
        Err(e) => {
            warn!("not advertising on the LAN ({e}); players connect by address");
            return;
        }
    };
    let socket = match lan::shared_socket(options.discovery_port).and_then(UdpSocket::from_std) {
        Ok(socket) => socket,
        Err(e) => {
            warn!(
                "not advertising on the LAN: cannot use UDP port {} ({e}); players connect by \
                 address",
                options.discovery_port
            );
            return;
        }
    };
    if let Some(events) = &events {
        let _ = events.send(ServerEvent::Advertising {
            name: options.name.clone(),
            networks: networks.iter().map(Network::to_string).collect(),
            discovery_port: options.discovery_port,
        });
    }
    let mut ads = Advertising::new(template, networks, options.discovery_port);
    let start = clock::now();
    let mut refused = BTreeSet::new();
    let mut buf = [0u8; MAX_BEACON_SIZE + 1];
    loop {
        let now = clock::now().duration_since(start);
        for (to, announcement) in ads.poll(now) {
            send(&socket, to, announcement, &mut refused).await;
        }
        let due = start + ads.next_due();
        tokio::select! {
            received = socket.recv_from(&mut buf) => match received {
                Ok((n, from)) => {
                    let now = clock::now().duration_since(start);
                    if let Some(answer) = ads.answer(from, &buf[..n], now) {
                        send(&socket, from, answer, &mut refused).await;
                    }
                }
                Err(e) => debug!(error = %e, "discovery socket"),
            },
            changed = occupancy.changed() => {
                if changed.is_err() {
                    return;
                }
                let now = clock::now().duration_since(start);
                ads.set_occupancy(*occupancy.borrow_and_update(), now);
            }
            _ = tokio::time::sleep_until(due) => {}
        }
    }
}

/// Sends one announcement; the first refusal for each destination is a
/// warning (broadcast forbidden there, a firewall), later ones are quiet.
async fn send(
    socket: &UdpSocket,
    to: SocketAddr,
    announcement: Announcement,
    refused: &mut BTreeSet<SocketAddr>,
) {
    let bytes = match encode_beacon(&Beacon::Announce(announcement)) {
        Ok(bytes) => bytes,
        Err(e) => {
            warn!(error = %e, "beacon not encodable");
            return;
        }
    };
    match socket.send_to(&bytes, to).await {
        Ok(_) => {
            refused.remove(&to);
        }
        Err(e) if refused.insert(to) => warn!(
            "cannot send the LAN beacon to {to} ({e}); players on that network connect by address"
        ),
        Err(e) => debug!(%to, error = %e, "beacon refused again"),
    }
}
