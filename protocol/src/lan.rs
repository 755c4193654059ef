//! The networks a LAN beacon reaches and the sockets it uses (feature
//! `lan`, which the client and the server turn on).
//!
//! A beacon goes to the broadcast address of each IPv4 network this machine
//! is on, never to 255.255.255.255: that one leaves by whichever interface
//! the default route names, which on a machine with Wi-Fi, Ethernet and a
//! VPN is often not the LAN the players are on. Sending one beacon per
//! network, with the server's address *on that network* inside, is what
//! lets a machine with several interfaces advertise the right address on
//! each.

use std::io;
use std::net::{Ipv4Addr, SocketAddr, UdpSocket};

use socket2::{Domain, Protocol, Socket, Type};

/// One IPv4 network of this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Network {
    /// The interface's name (`eth0`, `lo`, `wlan0`).
    pub interface: String,
    /// This machine's address on it.
    pub addr: Ipv4Addr,
    /// Its netmask.
    pub netmask: Ipv4Addr,
    /// Its broadcast address: where beacons for it go.
    pub broadcast: Ipv4Addr,
}

impl Network {
    /// A network from its interface, address and netmask, its broadcast
    /// address computed (loopback reports none, yet Linux routes
    /// 127.255.255.255 as the broadcast of 127.0.0.0/8).
    pub fn new(interface: &str, addr: Ipv4Addr, netmask: Ipv4Addr) -> Network {
        let broadcast = Ipv4Addr::from(u32::from(addr) | !u32::from(netmask));
        Network {
            interface: interface.to_string(),
            addr,
            netmask,
            broadcast,
        }
    }

    /// Whether `ip` is on this network (a prober the server can answer
    /// with its address here).
    pub fn contains(&self, ip: Ipv4Addr) -> bool {
        let mask = u32::from(self.netmask);
        u32::from(ip) & mask == u32::from(self.addr) & mask
    }

    /// Whether `selector` (an interface name or one of its addresses)
    /// names this network.
    pub fn matches(&self, selector: &str) -> bool {
        self.interface == selector || selector.parse::<Ipv4Addr>().is_ok_and(|ip| ip == self.addr)
    }
}

impl std::fmt::Display for Network {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.interface, self.addr)
    }
}

/// Why the networks to use could not be found.
#[derive(Debug, thiserror::Error)]
pub enum NetworksError {
    /// The operating system did not list its interfaces.
    #[error("cannot list the network interfaces: {0}")]
    List(io::Error),
    /// No IPv4 interface matched the one asked for.
    #[error("no IPv4 network interface is called or has the address {selector:?} (there are: {available})")]
    NoSuchInterface {
        /// What was asked for.
        selector: String,
        /// The interfaces there are, `name:address` each.
        available: String,
    },
    /// The machine has no IPv4 network at all.
    #[error("this machine has no IPv4 network to use")]
    None,
}

/// The IPv4 networks of this machine, or the ones `selector` (an interface
/// name or address) names. Point-to-point links (a /32, such as many VPNs)
/// have no broadcast and are left out unless named.
pub fn networks(selector: Option<&str>) -> Result<Vec<Network>, NetworksError> {
    let all: Vec<Network> = if_addrs::get_if_addrs()
        .map_err(NetworksError::List)?
        .into_iter()
        .filter_map(|interface| match interface.addr {
            if_addrs::IfAddr::V4(v4) => Some(Network::new(&interface.name, v4.ip, v4.netmask)),
            if_addrs::IfAddr::V6(_) => None,
        })
        .collect();
    select(all, selector)
}

/// [`networks`]' choice among `all`.
fn select(all: Vec<Network>, selector: Option<&str>) -> Result<Vec<Network>, NetworksError> {
    let Some(selector) = selector else {
        let chosen: Vec<Network> = all
            .into_iter()
            .filter(|n| n.netmask != Ipv4Addr::BROADCAST)
            .collect();
        return if chosen.is_empty() {
            Err(NetworksError::None)
        } else {
            Ok(chosen)
        };
    };
    let available = all
        .iter()
        .map(Network::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    let chosen: Vec<Network> = all.into_iter().filter(|n| n.matches(selector)).collect();
    if chosen.is_empty() {
        return Err(NetworksError::NoSuchInterface {
            selector: selector.to_string(),
            available,
        });
    }
    Ok(chosen)
}

/// A UDP socket on `port` of every IPv4 address, allowed to broadcast, and
/// shared with any other process bound the same way: several servers (or
/// clients) on one machine each get every broadcast sent to the port.
/// Non-blocking, ready for tokio.
pub fn shared_socket(port: u16) -> io::Result<UdpSocket> {
    let socket = Socket::new(Domain::IPV4, Type::DGRAM, Some(Protocol::UDP))?;
    socket.set_reuse_address(true)?;
    socket.set_broadcast(true)?;
    socket.set_nonblocking(true)?;
    socket.bind(&SocketAddr::from((Ipv4Addr::UNSPECIFIED, port)).into())?;
    Ok(socket.into())
}

/// A UDP socket on a port of its own, allowed to broadcast: a client's
/// probes leave from it and the answers come back to it alone.
/// Non-blocking, ready for tokio.
pub fn own_socket() -> io::Result<UdpSocket> {
    let socket = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0))?;
    socket.set_broadcast(true)?;
    socket.set_nonblocking(true)?;
    Ok(socket)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn net(interface: &str, addr: [u8; 4], prefix: u32) -> Network {
        let mask = if prefix == 0 {
            0
        } else {
            u32::MAX << (32 - prefix)
        };
        Network::new(interface, addr.into(), Ipv4Addr::from(mask))
    }

    #[test]
    fn the_broadcast_address_and_membership_follow_the_netmask() {
        let lan = net("eth0", [192, 168, 1, 20], 24);
        assert_eq!(lan.broadcast, Ipv4Addr::new(192, 168, 1, 255));
        assert!(lan.contains(Ipv4Addr::new(192, 168, 1, 7)));
        assert!(!lan.contains(Ipv4Addr::new(192, 168, 2, 7)));
        let lo = net("lo", [127, 0, 0, 1], 8);
        assert_eq!(lo.broadcast, Ipv4Addr::new(127, 255, 255, 255));
    }

    #[test]
    fn an_interface_is_chosen_by_name_or_address() {
        let all = vec![
            net("lo", [127, 0, 0, 1], 8),
            net("eth0", [10, 77, 0, 1], 24),
            net("tun0", [10, 8, 0, 5], 32),
        ];
        let names = |chosen: Vec<Network>| -> Vec<String> {
            chosen.into_iter().map(|n| n.interface).collect()
        };
        assert_eq!(names(select(all.clone(), None).unwrap()), ["lo", "eth0"]);
        assert_eq!(names(select(all.clone(), Some("eth0")).unwrap()), ["eth0"]);
        assert_eq!(
            names(select(all.clone(), Some("10.8.0.5")).unwrap()),
            ["tun0"]
        );
        let err = select(all, Some("wlan0")).unwrap_err().to_string();
        assert!(
            err.contains("wlan0") && err.contains("eth0:10.77.0.1"),
            "{err}"
        );
        assert!(matches!(select(vec![], None), Err(NetworksError::None)));
    }
}
