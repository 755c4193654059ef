//! `lockstep-client list`: the servers on the LAN, one line each, with
//! how each stands with the known-servers file.

use std::path::Path;
use std::time::Duration;

use crate::discovery::Found;
use crate::discovery::Standing;
use crate::io::discovery::{Finder, FinderError, FinderOptions};
use crate::io::known_servers;

/// Looks for `wait`, then returns one [`server_line`] per server found.
pub fn run(
    options: &FinderOptions,
    wait: Duration,
    known: &Path,
) -> Result<Vec<String>, FinderError> {
    let finder = Finder::start(options)?;
    std::thread::sleep(wait);
    let servers = finder.servers();
    if servers.is_empty() {
        // stdout stays a list (empty); the hint goes where errors go.
        eprintln!(
            "lockstep-client: no server answered within {wait:?}; if one runs, discovery may be \
             blocked here (docs/guide/lan.md, \"When discovery is blocked\"): join it with --connect \
             HOST:PORT"
        );
    }
    Ok(servers
        .iter()
        .map(|found| server_line(found, &standing(found, known)))
        .collect())
}

/// How `found` stands with the known-servers file `known`; a file that
/// cannot be read counts as knowing nothing (joining says why).
pub fn standing(found: &Found, known: &Path) -> Standing {
    known_servers::standing(
        known,
        &found.addr().to_string(),
        found.name(),
        &found.announcement.fingerprint_hex(),
    )
    .unwrap_or(Standing::New)
}

/// `server name=NAME addr=HOST:PORT players=J/N version=V fingerprint=HEX
/// code=CODE ping_ms=P trust=new|known|changed`: the fields every user of
/// the list reads first come first, so scripts can take them by name.
pub fn server_line(found: &Found, standing: &Standing) -> String {
    let a = &found.announcement;
    let ping = found
        .ping
        .map_or_else(|| "?".to_string(), |p| p.as_millis().to_string());
    format!(
        "server name={} addr={} players={}/{} version={} fingerprint={} code={} ping_ms={ping} \
         trust={}",
        a.name,
        found.addr(),
        a.players,
        a.needed,
        a.protocol_version,
        a.fingerprint_hex(),
        a.code(),
        standing.word()
    )
}
