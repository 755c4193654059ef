//! The LAN beacon: how a server tells the local network it is there, and
//! how a client asks.
//!
//! # Why a UDP beacon and not mDNS/DNS-SD
//!
//! A beacon is one small datagram this crate defines, versions and fuzzes
//! like the rest of the protocol: a client learns every field it shows
//! (players, settings, the fingerprint) from one packet, answers to its
//! probes give it the ping for free, and the same code runs wherever UDP
//! broadcast does, with no daemon (Avahi, Bonjour) to coexist with and no
//! TXT-record limits to fit the fingerprint into. mDNS would find servers
//! on the same networks (it is multicast on the same link), so it buys
//! nothing here for a second protocol stack and a background thread.
//!
//! # How it works
//!
//! Every datagram on [`DISCOVERY_PORT`] is [`BEACON_MAGIC`], one byte of
//! [`BEACON_FORMAT`], then a postcard [`Beacon`]: at most
//! [`MAX_BEACON_SIZE`] bytes in all. A server broadcasts an
//! [`Announcement`] about once a second on each network it advertises on,
//! and answers a client's [`Beacon::Probe`] at once, straight to the
//! prober, echoing the probe's nonce (so the client times the round trip).
//! Anyone on the LAN can send these bytes, so [`decode_beacon`] checks
//! every field it can (sizes, names) and returns a [`BeaconError`] on
//! anything else; it never panics.

use std::net::IpAddr;

use serde::{Deserialize, Serialize};

use crate::GameSpec;

/// UDP port servers listen on for probes and clients listen on for
/// announcements. Far from the game's default port (7777), so a second
/// server on 7778 does not collide with it.
pub const DISCOVERY_PORT: u16 = 47777;

/// First bytes of every beacon datagram: any other traffic on the port is
/// dropped before decoding.
pub const BEACON_MAGIC: [u8; 4] = *b"LSBC";

/// Layout version of [`Beacon`]. Separate from the game protocol's
/// version, which an [`Announcement`] carries as a field: a client lists a
/// server of another game version (and says so), but cannot read a beacon
/// of another layout.
pub const BEACON_FORMAT: u8 = 2;

/// Largest beacon datagram built or accepted: far below any path MTU, so
/// a beacon is never fragmented, and room for the longest name.
pub const MAX_BEACON_SIZE: usize = 512;

/// Longest server name, in characters: fits on a line of the browser.
pub const MAX_SERVER_NAME_CHARS: usize = 40;

/// One beacon datagram's message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Beacon {
    /// A client asks every server that hears it to announce itself now.
    Probe {
        /// Echoed in the answers, so the client can time them.
        nonce: u64,
    },
    /// A server says it is there.
    Announce(Announcement),
}

/// What a server tells the LAN about itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Announcement {
    /// The server's name (`--name`), shown in lists and typed after
    /// `--join`: no whitespace, at most [`MAX_SERVER_NAME_CHARS`].
    pub name: String,
    /// Where to connect: the server's address on the network the beacon
    /// went out on (the interface that faces the prober).
    pub host: IpAddr,
    /// The server's game (QUIC) port.
    pub port: u16,
    /// Players connected now.
    pub players: u8,
    /// Players a game needs before it starts.
    pub needed: u8,
    /// Whether a game is running (late players can still join to watch,
    /// or take back a slot).
    pub playing: bool,
    /// Ticks per second.
    pub tick_rate: u16,
    /// The game the server hosts, with its settings (format 2 on; format
    /// 1 had the ball count here).
    pub spec: GameSpec,
    /// The server's input delay, ticks.
    pub input_delay: u8,
    /// Whether joining needs a password.
    pub password: bool,
    /// The game protocol version the server speaks.
    pub protocol_version: u16,
    /// SHA-256 of the server's certificate: what the client pins, and what
    /// the verification code is made from.
    pub fingerprint: [u8; 32],
    /// The nonce of the probe this answers; `None` in the periodic
    /// announcements.
    pub echo: Option<u64>,
}

impl Announcement {
    /// The fingerprint as the server prints it: 64 lower-case hex digits.
    pub fn fingerprint_hex(&self) -> String {
        self.fingerprint
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// The verification code people compare ([`crate::verification_code`]).
    pub fn code(&self) -> String {
        crate::verification_code(&self.fingerprint_hex())
    }

    /// Where to connect.
    pub fn addr(&self) -> std::net::SocketAddr {
        (self.host, self.port).into()
    }
}

/// The 32 bytes of a fingerprint written as 64 hex digits (colons and
/// case ignored, as `--fingerprint` takes it); `None` if it is not one.
pub fn fingerprint_bytes(hex: &str) -> Option<[u8; 32]> {
    let digits: Vec<u8> = hex.bytes().filter(|&b| b != b':').collect();
    if digits.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (byte, pair) in out.iter_mut().zip(digits.chunks(2)) {
        let pair = std::str::from_utf8(pair).ok()?;
        *byte = u8::from_str_radix(pair, 16).ok()?;
    }
    Some(out)
}

/// Why a server name cannot be advertised, or why one received is not
/// believed.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum NameError {
    /// The name is empty.
    #[error("the server name is empty")]
    Empty,
    /// The name is too long.
    #[error("the server name has {0} characters; at most {MAX_SERVER_NAME_CHARS} are allowed")]
    TooLong(usize),
    /// The name holds whitespace or a control character, which `list`
    /// lines and `--join` cannot carry.
    #[error("the server name {0:?} holds a space or a control character")]
    BadCharacter(String),
}

/// Checks a server name: 1 to [`MAX_SERVER_NAME_CHARS`] characters, none of
/// them whitespace or control characters.
pub fn check_server_name(name: &str) -> Result<(), NameError> {
    let chars = name.chars().count();
    if chars == 0 {
        return Err(NameError::Empty);
    }
    if chars > MAX_SERVER_NAME_CHARS {
        return Err(NameError::TooLong(chars));
    }
    if name.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(NameError::BadCharacter(name.to_string()));
    }
    Ok(())
}

/// Why bytes are not a beacon this build reads.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum BeaconError {
    /// More bytes than any beacon has.
    #[error("beacon of {0} bytes exceeds the limit of {MAX_BEACON_SIZE} bytes")]
    Oversized(usize),
    /// The datagram does not start with [`BEACON_MAGIC`]: not a beacon.
    #[error("not a lockstep beacon")]
    NotABeacon,
    /// A beacon of another layout (a newer or older build).
    #[error("beacon format {0}, this build reads format {BEACON_FORMAT}")]
    Format(u8),
    /// The body is not a valid [`Beacon`].
    #[error("malformed beacon: {0}")]
    Malformed(postcard::Error),
    /// A valid beacon followed by extra bytes.
    #[error("{0} unexpected bytes after the beacon")]
    TrailingBytes(usize),
    /// The announced name is not one a server may have.
    #[error("bad name in beacon: {0}")]
    Name(#[from] NameError),
}

/// Encodes `beacon` as one datagram; fails if it would exceed
/// [`MAX_BEACON_SIZE`] or carries a name a server may not have.
pub fn encode_beacon(beacon: &Beacon) -> Result<Vec<u8>, BeaconError> {
    if let Beacon::Announce(announcement) = beacon {
        check_server_name(&announcement.name)?;
    }
    let mut bytes = BEACON_MAGIC.to_vec();
    bytes.push(BEACON_FORMAT);
    let body = postcard::to_stdvec(beacon).map_err(BeaconError::Malformed)?;
    bytes.extend_from_slice(&body);
    if bytes.len() > MAX_BEACON_SIZE {
        return Err(BeaconError::Oversized(bytes.len()));
    }
    Ok(bytes)
}

/// Decodes one datagram received on the discovery port.
pub fn decode_beacon(bytes: &[u8]) -> Result<Beacon, BeaconError> {
    if bytes.len() > MAX_BEACON_SIZE {
        return Err(BeaconError::Oversized(bytes.len()));
    }
    let Some(rest) = bytes.strip_prefix(&BEACON_MAGIC) else {
        return Err(BeaconError::NotABeacon);
    };
    let Some((&format, body)) = rest.split_first() else {
        return Err(BeaconError::NotABeacon);
    };
    if format != BEACON_FORMAT {
        return Err(BeaconError::Format(format));
    }
    let (beacon, rest) =
        postcard::take_from_bytes::<Beacon>(body).map_err(BeaconError::Malformed)?;
    if !rest.is_empty() {
        return Err(BeaconError::TrailingBytes(rest.len()));
    }
    if let Beacon::Announce(announcement) = &beacon {
        check_server_name(&announcement.name)?;
    }
    Ok(beacon)
}

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;

    use super::*;

    fn announcement() -> Announcement {
        Announcement {
            name: "den".into(),
            host: Ipv4Addr::new(10, 77, 0, 1).into(),
            port: 7777,
            players: 1,
            needed: 3,
            playing: false,
            tick_rate: 60,
            spec: crate::GameSpec::balls(24),
            input_delay: 3,
            password: false,
            protocol_version: crate::PROTOCOL_VERSION,
            fingerprint: [0xab; 32],
            echo: Some(42),
        }
    }

    #[test]
    fn a_beacon_survives_encoding() {
        for beacon in [Beacon::Probe { nonce: 7 }, Beacon::Announce(announcement())] {
            let bytes = encode_beacon(&beacon).unwrap();
            assert!(bytes.starts_with(&BEACON_MAGIC));
            assert_eq!(bytes[4], BEACON_FORMAT);
            assert_eq!(decode_beacon(&bytes), Ok(beacon));
        }
    }

    #[test]
    fn the_longest_name_fits_in_a_beacon() {
        let mut long = announcement();
        // Four-byte characters: the most bytes a name of this length takes.
        long.name = "\u{1F3D3}".repeat(MAX_SERVER_NAME_CHARS);
        long.host = std::net::Ipv6Addr::LOCALHOST.into();
        long.echo = Some(u64::MAX);
        let bytes = encode_beacon(&Beacon::Announce(long.clone())).unwrap();
        assert!(bytes.len() <= MAX_BEACON_SIZE);
        assert_eq!(decode_beacon(&bytes), Ok(Beacon::Announce(long)));
    }

    #[test]
    fn other_traffic_and_other_formats_are_refused() {
        let good = encode_beacon(&Beacon::Announce(announcement())).unwrap();
        assert_eq!(decode_beacon(b""), Err(BeaconError::NotABeacon));
        assert_eq!(decode_beacon(b"LSBC"), Err(BeaconError::NotABeacon));
        assert_eq!(
            decode_beacon(b"GET / HTTP/1.1"),
            Err(BeaconError::NotABeacon)
        );
        let mut other = good.clone();
        other[4] = BEACON_FORMAT + 1;
        assert_eq!(
            decode_beacon(&other),
            Err(BeaconError::Format(BEACON_FORMAT + 1))
        );
        let mut trailing = good.clone();
        trailing.push(0);
        assert_eq!(decode_beacon(&trailing), Err(BeaconError::TrailingBytes(1)));
        let oversized = vec![0u8; MAX_BEACON_SIZE + 1];
        assert_eq!(
            decode_beacon(&oversized),
            Err(BeaconError::Oversized(MAX_BEACON_SIZE + 1))
        );
    }

    #[test]
    fn every_truncation_and_corruption_is_an_error_not_a_panic() {
        let good = encode_beacon(&Beacon::Announce(announcement())).unwrap();
        for len in 0..good.len() {
            assert!(decode_beacon(&good[..len]).is_err(), "truncated to {len}");
        }
        for i in 5..good.len() {
            for flip in [0x01, 0x80, 0xff] {
                let mut bad = good.clone();
                bad[i] ^= flip;
                // Some flips still decode (a different player count); none
                // may panic, and any name that decodes is a valid one.
                if let Ok(Beacon::Announce(a)) = decode_beacon(&bad) {
                    assert_eq!(check_server_name(&a.name), Ok(()));
                }
            }
        }
    }

    #[test]
    fn names_that_lists_cannot_carry_are_refused_both_ways() {
        let mut spaced = announcement();
        spaced.name = "two words".into();
        assert!(matches!(
            encode_beacon(&Beacon::Announce(spaced.clone())),
            Err(BeaconError::Name(NameError::BadCharacter(_)))
        ));
        // A hand-made beacon with such a name is not believed either.
        let mut bytes = BEACON_MAGIC.to_vec();
        bytes.push(BEACON_FORMAT);
        bytes.extend(postcard::to_stdvec(&Beacon::Announce(spaced)).unwrap());
        assert!(matches!(
            decode_beacon(&bytes),
            Err(BeaconError::Name(NameError::BadCharacter(_)))
        ));
        assert_eq!(check_server_name(""), Err(NameError::Empty));
        assert_eq!(
            check_server_name(&"x".repeat(MAX_SERVER_NAME_CHARS + 1)),
            Err(NameError::TooLong(MAX_SERVER_NAME_CHARS + 1))
        );
        assert_eq!(check_server_name("ada's-den"), Ok(()));
    }

    #[test]
    fn fingerprints_convert_between_hex_and_bytes() {
        let a = announcement();
        let hex = a.fingerprint_hex();
        assert_eq!(hex, "ab".repeat(32));
        assert_eq!(fingerprint_bytes(&hex), Some(a.fingerprint));
        assert_eq!(fingerprint_bytes(&hex.to_uppercase()), Some(a.fingerprint));
        assert_eq!(fingerprint_bytes("ab:cd"), None);
        assert_eq!(fingerprint_bytes(&"zz".repeat(32)), None);
        assert_eq!(a.code(), crate::verification_code(&hex));
    }
}
