//! What the server's LAN beacon says, to whom and when: a pure state
//! machine, given the time, the occupancy and the datagrams received;
//! `io/beacon.rs` owns the socket and the clock around it.
//!
//! ```text
//! every BROADCAST_EVERY, and soon after the occupancy changes:
//!     for each network: announce (our address there) to its broadcast
//! a probe from an address on one of our networks (MAX_ANSWERS_PER_SECOND at most):
//!     answer it at once, from our address on that network, echoing its nonce
//! anything else: ignored
//! ```
//!
//! A probe from outside every network advertised on gets no answer: the
//! server would have no address to give it that it is sure to reach (it
//! listens on another interface, or was told to advertise on one only).

use std::net::{IpAddr, SocketAddr, SocketAddrV4};
use std::time::Duration;

use lockstep_protocol::lan::Network;
use lockstep_protocol::{decode_beacon, Announcement, Beacon};

/// How often the beacon goes out unasked. Once a second keeps a browser's
/// player counts live; at a few hundred bytes per network it costs nothing.
pub(crate) const BROADCAST_EVERY: Duration = Duration::from_secs(1);

/// Least time between two broadcasts when the occupancy changes quickly
/// (a lobby filling up): four a second at most.
pub(crate) const MIN_BROADCAST_GAP: Duration = Duration::from_millis(250);

/// Probes answered per second at most. A LAN party of a hundred
/// browsers probes a hundred times a second; beyond that, answers (ten
/// times a probe's size) would only help someone flood a neighbour with
/// spoofed probes.
pub(crate) const MAX_ANSWERS_PER_SECOND: u32 = 100;

/// How many players are in and whether they play: the part of the beacon
/// the session changes. The driver publishes it whenever it changes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Occupancy {
    /// Players connected now (spectators not counted).
    pub players: u8,
    /// Whether a game is running.
    pub playing: bool,
}

/// The beacon's state.
#[derive(Debug)]
pub(crate) struct Advertising {
    /// Every field but the address, the occupancy and the echo.
    template: Announcement,
    networks: Vec<Network>,
    discovery_port: u16,
    /// When the next unasked broadcast is due.
    next_broadcast: Duration,
    last_broadcast: Option<Duration>,
    /// Start of the second whose answers are being counted, and the count.
    answering: (Duration, u32),
}

impl Advertising {
    /// Advertises `template` (its `host`, `players`, `playing` and `echo`
    /// are filled in per datagram) on `networks`, broadcasting to
    /// `discovery_port`, the first time at once.
    pub(crate) fn new(template: Announcement, networks: Vec<Network>, discovery_port: u16) -> Self {
        Advertising {
            template,
            networks,
            discovery_port,
            next_broadcast: Duration::ZERO,
            last_broadcast: None,
            answering: (Duration::ZERO, 0),
        }
    }

    /// When [`Advertising::poll`] next has something to send.
    pub(crate) fn next_due(&self) -> Duration {
        self.next_broadcast
    }

    /// Takes the session's new occupancy; the next broadcast comes soon.
    pub(crate) fn set_occupancy(&mut self, occupancy: Occupancy, now: Duration) {
        if occupancy.players == self.template.players && occupancy.playing == self.template.playing
        {
            return;
        }
        self.template.players = occupancy.players;
        self.template.playing = occupancy.playing;
        let soonest = self
            .last_broadcast
            .map_or(now, |last| last + MIN_BROADCAST_GAP);
        self.next_broadcast = self.next_broadcast.min(soonest.max(now));
    }

    /// The broadcasts due at `now`: one per network, each to its broadcast
    /// address and with the server's address on it.
    pub(crate) fn poll(&mut self, now: Duration) -> Vec<(SocketAddr, Announcement)> {
        if now < self.next_broadcast {
            return Vec::new();
        }
        self.last_broadcast = Some(now);
        self.next_broadcast = now + BROADCAST_EVERY;
        self.networks
            .iter()
            .map(|network| {
                let to = SocketAddrV4::new(network.broadcast, self.discovery_port).into();
                (to, self.announcement(network.addr.into(), None))
            })
            .collect()
    }

    /// What to answer a datagram from `from` received at `now`, if
    /// anything: a probe from one of our networks gets the announcement
    /// with our address there, up to [`MAX_ANSWERS_PER_SECOND`].
    pub(crate) fn answer(
        &mut self,
        from: SocketAddr,
        bytes: &[u8],
        now: Duration,
    ) -> Option<Announcement> {
        let Ok(Beacon::Probe { nonce }) = decode_beacon(bytes) else {
            return None;
        };
        let IpAddr::V4(ip) = from.ip() else {
            return None;
        };
        let host = self.networks.iter().find(|n| n.contains(ip))?.addr;
        let (second, count) = &mut self.answering;
        if now >= *second + Duration::from_secs(1) {
            (*second, *count) = (now, 0);
        }
        if *count >= MAX_ANSWERS_PER_SECOND {
            return None;
        }
        *count += 1;
        Some(self.announcement(host.into(), Some(nonce)))
    }

    fn announcement(&self, host: IpAddr, echo: Option<u64>) -> Announcement {
        Announcement {
            host,
            echo,
            ..self.template.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;

    use lockstep_protocol::{encode_beacon, PROTOCOL_VERSION};

    use super::*;

    const PORT: u16 = 47777;

    fn template() -> Announcement {
        Announcement {
            name: "den".into(),
            host: Ipv4Addr::UNSPECIFIED.into(),
            port: 7777,
            players: 0,
            needed: 2,
            playing: false,
            tick_rate: 60,
            spec: lockstep_protocol::GameSpec::balls(24),
            input_delay: 3,
            password: false,
            protocol_version: PROTOCOL_VERSION,
            fingerprint: [7; 32],
            echo: None,
        }
    }

    fn networks() -> Vec<Network> {
        vec![
            Network::new("lo", [127, 0, 0, 1].into(), [255, 0, 0, 0].into()),
            Network::new("veth0", [10, 77, 0, 1].into(), [255, 255, 255, 0].into()),
        ]
    }

    fn probe(nonce: u64) -> Vec<u8> {
        encode_beacon(&Beacon::Probe { nonce }).unwrap()
    }

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    #[test]
    fn every_network_gets_a_broadcast_with_our_address_on_it_once_a_second() {
        let mut ads = Advertising::new(template(), networks(), PORT);
        let sent = ads.poll(Duration::ZERO);
        let to: Vec<String> = sent.iter().map(|(to, _)| to.to_string()).collect();
        assert_eq!(to, ["127.255.255.255:47777", "10.77.0.255:47777"]);
        assert_eq!(sent[0].1.host, IpAddr::from([127, 0, 0, 1]));
        assert_eq!(sent[1].1.host, IpAddr::from([10, 77, 0, 1]));
        assert!(sent.iter().all(|(_, a)| a.echo.is_none()));
        assert!(ads.poll(secs(0.99)).is_empty());
        assert_eq!(ads.next_due(), secs(1.0));
        assert_eq!(ads.poll(secs(1.0)).len(), 2);
    }

    #[test]
    fn a_change_of_occupancy_goes_out_soon_but_not_in_a_flood() {
        let mut ads = Advertising::new(template(), networks(), PORT);
        ads.poll(Duration::ZERO);
        ads.set_occupancy(
            Occupancy {
                players: 1,
                playing: false,
            },
            secs(0.1),
        );
        assert_eq!(ads.next_due(), MIN_BROADCAST_GAP);
        assert!(ads.poll(secs(0.1)).is_empty());
        let sent = ads.poll(MIN_BROADCAST_GAP);
        assert!(sent.iter().all(|(_, a)| a.players == 1 && !a.playing));
        // The same occupancy again changes nothing.
        ads.set_occupancy(
            Occupancy {
                players: 1,
                playing: false,
            },
            secs(0.6),
        );
        assert_eq!(ads.next_due(), MIN_BROADCAST_GAP + BROADCAST_EVERY);
        ads.set_occupancy(
            Occupancy {
                players: 2,
                playing: true,
            },
            secs(0.9),
        );
        assert_eq!(ads.next_due(), secs(0.9));
        assert!(ads.poll(secs(0.9)).iter().all(|(_, a)| a.playing));
    }

    #[test]
    fn a_probe_is_answered_from_the_network_it_came_from_with_its_nonce() {
        let mut ads = Advertising::new(template(), networks(), PORT);
        let from: SocketAddr = "10.77.0.2:40000".parse().unwrap();
        let answer = ads.answer(from, &probe(99), secs(0.0)).expect("an answer");
        assert_eq!(answer.host, IpAddr::from([10, 77, 0, 1]));
        assert_eq!(answer.echo, Some(99));
        let local: SocketAddr = "127.0.0.1:40000".parse().unwrap();
        assert_eq!(
            ads.answer(local, &probe(1), secs(0.0)).map(|a| a.host),
            Some(IpAddr::from([127, 0, 0, 1]))
        );
    }

    #[test]
    fn strangers_announcements_and_garbage_get_no_answer() {
        let mut ads = Advertising::new(template(), networks(), PORT);
        let now = secs(0.0);
        let stranger: SocketAddr = "192.168.5.5:40000".parse().unwrap();
        assert_eq!(ads.answer(stranger, &probe(1), now), None);
        let neighbour: SocketAddr = "10.77.0.2:47777".parse().unwrap();
        let other_server = encode_beacon(&Beacon::Announce(template())).unwrap();
        assert_eq!(ads.answer(neighbour, &other_server, now), None);
        assert_eq!(ads.answer(neighbour, b"hello", now), None);
        let v6: SocketAddr = "[::1]:40000".parse().unwrap();
        assert_eq!(ads.answer(v6, &probe(1), now), None);
    }

    #[test]
    fn a_flood_of_probes_gets_a_bounded_number_of_answers_a_second() {
        let mut ads = Advertising::new(template(), networks(), PORT);
        let from: SocketAddr = "10.77.0.2:40000".parse().unwrap();
        let answered = |ads: &mut Advertising, at: f64| {
            (0..1000)
                .filter(|&n| ads.answer(from, &probe(n), secs(at)).is_some())
                .count()
        };
        assert_eq!(answered(&mut ads, 0.0), MAX_ANSWERS_PER_SECOND as usize);
        assert_eq!(answered(&mut ads, 0.5), 0);
        assert_eq!(answered(&mut ads, 1.0), MAX_ANSWERS_PER_SECOND as usize);
    }
}
