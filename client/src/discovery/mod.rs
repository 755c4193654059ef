//! The servers on the LAN, as the beacons tell of them: a pure table,
//! given the time and the datagrams received; [`crate::io::discovery`] owns
//! the sockets and the clock around it. [`browser`] is the model of the
//! server browser the window crate draws (pure); `lockstep-client list`
//! prints the table ([`crate::tools::list`]).
//!
//! ```text
//! every PROBE_EVERY (the first at once): probe every network, remember the nonce
//! an announcement arrives: (re)place its server's row; an echoed nonce times the ping
//! a row not heard of for FORGET_AFTER: gone (the server stopped or left the LAN)
//! ```
//!
//! A server is one row however many of our networks it is heard on (a
//! server on this machine answers on loopback and on the LAN): rows are
//! keyed by name, fingerprint and port, and keep the address first heard.
//! Two rows with one name are two servers, and `--join` refuses to guess.

pub mod browser;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

use lockstep_protocol::{decode_beacon, Announcement, Beacon};

/// How often the table asks every server to announce itself. Answers come
/// within a round trip, so a second keeps pings and player counts live
/// while costing each server one small datagram a second per client.
pub const PROBE_EVERY: Duration = Duration::from_secs(1);

/// Silence after which a server is no longer listed: three missed
/// announcements and three unanswered probes, so one lost datagram never
/// makes a row flicker.
pub const FORGET_AFTER: Duration = Duration::from_millis(3500);

/// Probes remembered for timing their answers; older answers give no ping.
const PROBES_KEPT: usize = 8;

/// One server found on the LAN.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// What it last announced (its address the first one heard).
    pub announcement: Announcement,
    /// The round trip of the last probe it answered.
    pub ping: Option<Duration>,
    /// When it was last heard from.
    pub last_heard: Duration,
}

impl Found {
    /// Where to connect.
    pub fn addr(&self) -> SocketAddr {
        self.announcement.addr()
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.announcement.name
    }
}

/// Why a name does not lead to one server.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum NameLookupError {
    /// Nobody answered to that name.
    #[error("no server called {name:?} answered on the LAN within {waited:?}{}", others(.seen))]
    NotFound {
        /// The name asked for.
        name: String,
        /// How long the search ran.
        waited: Duration,
        /// The names that did answer.
        seen: Vec<String>,
    },
    /// Two or more servers share the name.
    #[error("{} servers are called {name:?} ({}); join one by address with --connect HOST:PORT", .addrs.len(), .addrs.join(", "))]
    Ambiguous {
        /// The name asked for.
        name: String,
        /// Their addresses.
        addrs: Vec<String>,
    },
}

fn others(seen: &[String]) -> String {
    if seen.is_empty() {
        " (none answered at all: is discovery blocked here? see README, \"Playing over a LAN\")"
            .into()
    } else {
        format!(" (found: {})", seen.join(", "))
    }
}

type Key = (String, [u8; 32], u16);

/// The table of servers heard of.
#[derive(Debug, Default)]
pub struct Discovery {
    servers: BTreeMap<Key, Found>,
    /// Nonces of the probes sent lately, with when.
    probes: Vec<(u64, Duration)>,
    next_probe: Duration,
    next_nonce: u64,
}

impl Discovery {
    /// An empty table whose first probe is due at once; nonces start at
    /// `seed` (a random start keeps two clients' probes apart).
    pub fn new(seed: u64) -> Self {
        Discovery {
            next_nonce: seed,
            ..Discovery::default()
        }
    }

    /// When [`Discovery::poll`] next has a probe to send.
    pub fn next_due(&self) -> Duration {
        self.next_probe
    }

    /// The probe to send to every network now, if one is due.
    pub fn poll(&mut self, now: Duration) -> Option<Beacon> {
        if now < self.next_probe {
            return None;
        }
        self.next_probe = now + PROBE_EVERY;
        let nonce = self.next_nonce;
        self.next_nonce = self.next_nonce.wrapping_add(1);
        self.probes.push((nonce, now));
        if self.probes.len() > PROBES_KEPT {
            self.probes.remove(0);
        }
        Some(Beacon::Probe { nonce })
    }

    /// Takes one datagram heard at `now`; anything but an announcement is
    /// ignored.
    pub fn receive(&mut self, bytes: &[u8], now: Duration) {
        let Ok(Beacon::Announce(announcement)) = decode_beacon(bytes) else {
            return;
        };
        let ping = announcement.echo.and_then(|echo| {
            self.probes
                .iter()
                .find(|(nonce, _)| *nonce == echo)
                .map(|(_, sent)| now.saturating_sub(*sent))
        });
        let key = (
            announcement.name.clone(),
            announcement.fingerprint,
            announcement.port,
        );
        match self.servers.get_mut(&key) {
            Some(found) => {
                let host = found.announcement.host;
                found.announcement = Announcement {
                    host,
                    ..announcement
                };
                found.ping = ping.or(found.ping);
                found.last_heard = now;
            }
            None => {
                self.servers.insert(
                    key,
                    Found {
                        announcement,
                        ping,
                        last_heard: now,
                    },
                );
            }
        }
    }

    /// The servers heard of lately, by name then address.
    pub fn servers(&mut self, now: Duration) -> Vec<Found> {
        self.servers
            .retain(|_, found| now.saturating_sub(found.last_heard) < FORGET_AFTER);
        let mut servers: Vec<Found> = self.servers.values().cloned().collect();
        servers.sort_by(|a, b| (a.name(), a.addr()).cmp(&(b.name(), b.addr())));
        servers
    }
}

/// The one server called `name` among `servers`, found after `waited`.
pub fn by_name(servers: &[Found], name: &str, waited: Duration) -> Result<Found, NameLookupError> {
    let matching: Vec<&Found> = servers.iter().filter(|s| s.name() == name).collect();
    match matching.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(NameLookupError::NotFound {
            name: name.to_string(),
            waited,
            seen: servers
                .iter()
                .map(|s| format!("{} at {}", s.name(), s.addr()))
                .collect(),
        }),
        several => Err(NameLookupError::Ambiguous {
            name: name.to_string(),
            addrs: several.iter().map(|s| s.addr().to_string()).collect(),
        }),
    }
}

/// What the file says about a server found on the LAN.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// Neither its address nor its name is on file.
    New,
    /// Its fingerprint is on file, under its address, its name or both.
    Known,
    /// Its address or its name is on file with another fingerprint: a
    /// changed server identity or an impostor, refused either way.
    Changed {
        /// The fingerprint on file.
        expected: String,
        /// The key it is on file under (the address, or `@NAME`).
        under: String,
    },
}

impl Standing {
    /// One word for `list` lines and the browser: `new`, `known` or
    /// `changed`.
    pub fn word(&self) -> &'static str {
        match self {
            Standing::New => "new",
            Standing::Known => "known",
            Standing::Changed { .. } => "changed",
        }
    }
}

#[cfg(test)]
mod tests {
    use std::net::{IpAddr, Ipv4Addr};

    use lockstep_protocol::{encode_beacon, PROTOCOL_VERSION};

    use super::*;

    fn ms(ms: u64) -> Duration {
        Duration::from_millis(ms)
    }

    fn announcement(name: &str, host: [u8; 4], fingerprint: u8, echo: Option<u64>) -> Vec<u8> {
        encode_beacon(&Beacon::Announce(Announcement {
            name: name.into(),
            host: IpAddr::from(host),
            port: 7777,
            players: 1,
            needed: 2,
            playing: false,
            tick_rate: 60,
            spec: lockstep_protocol::GameSpec::balls(24),
            input_delay: 3,
            password: false,
            protocol_version: PROTOCOL_VERSION,
            fingerprint: [fingerprint; 32],
            echo,
        }))
        .unwrap()
    }

    #[test]
    fn probes_go_out_once_a_second_with_fresh_nonces() {
        let mut table = Discovery::new(100);
        assert_eq!(table.poll(ms(0)), Some(Beacon::Probe { nonce: 100 }));
        assert_eq!(table.poll(ms(999)), None);
        assert_eq!(table.next_due(), ms(1000));
        assert_eq!(table.poll(ms(1000)), Some(Beacon::Probe { nonce: 101 }));
    }

    #[test]
    fn an_answer_to_a_probe_gives_the_ping() {
        let mut table = Discovery::new(5);
        table.poll(ms(0));
        table.poll(ms(1000));
        table.receive(&announcement("den", [10, 77, 0, 1], 1, Some(6)), ms(1003));
        let servers = table.servers(ms(1003));
        assert_eq!(servers.len(), 1);
        assert_eq!(servers[0].ping, Some(ms(3)));
        assert_eq!(servers[0].addr().to_string(), "10.77.0.1:7777");
        // A periodic announcement keeps the ping it had.
        table.receive(&announcement("den", [10, 77, 0, 1], 1, None), ms(1500));
        assert_eq!(table.servers(ms(1500))[0].ping, Some(ms(3)));
        // An echo of a probe never sent times nothing.
        let mut fresh = Discovery::new(5);
        fresh.receive(&announcement("den", [10, 77, 0, 1], 1, Some(6)), ms(10));
        assert_eq!(fresh.servers(ms(10))[0].ping, None);
    }

    #[test]
    fn one_server_heard_on_two_networks_is_one_row_at_the_first_address() {
        let mut table = Discovery::new(0);
        table.receive(&announcement("den", [127, 0, 0, 1], 1, None), ms(0));
        table.receive(&announcement("den", [10, 77, 0, 1], 1, None), ms(1));
        let servers = table.servers(ms(1));
        assert_eq!(servers.len(), 1);
        assert_eq!(
            servers[0].announcement.host,
            IpAddr::from(Ipv4Addr::LOCALHOST)
        );
    }

    #[test]
    fn a_silent_server_is_forgotten() {
        let mut table = Discovery::new(0);
        table.receive(&announcement("den", [10, 77, 0, 1], 1, None), ms(0));
        assert_eq!(table.servers(FORGET_AFTER - ms(1)).len(), 1);
        assert!(table.servers(FORGET_AFTER).is_empty());
    }

    #[test]
    fn garbage_and_probes_are_not_servers() {
        let mut table = Discovery::new(0);
        table.receive(b"not a beacon", ms(0));
        table.receive(&encode_beacon(&Beacon::Probe { nonce: 1 }).unwrap(), ms(0));
        assert!(table.servers(ms(0)).is_empty());
    }

    #[test]
    fn a_name_leads_to_one_server_or_to_a_clear_error() {
        let mut table = Discovery::new(0);
        table.receive(&announcement("den", [10, 77, 0, 1], 1, None), ms(0));
        table.receive(&announcement("attic", [10, 77, 0, 3], 2, None), ms(0));
        table.receive(&announcement("attic", [10, 77, 0, 4], 3, None), ms(0));
        let servers = table.servers(ms(0));
        assert_eq!(by_name(&servers, "den", ms(2000)).unwrap().name(), "den");
        let ambiguous = by_name(&servers, "attic", ms(2000)).unwrap_err();
        assert!(
            matches!(ambiguous, NameLookupError::Ambiguous { ref addrs, .. } if addrs.len() == 2)
        );
        let missing = by_name(&servers, "cellar", ms(2000))
            .unwrap_err()
            .to_string();
        assert!(
            missing.contains("\"cellar\"") && missing.contains("den at 10.77.0.1:7777"),
            "{missing}"
        );
        let none = by_name(&[], "cellar", ms(2000)).unwrap_err().to_string();
        assert!(none.contains("none answered"), "{none}");
    }
}
