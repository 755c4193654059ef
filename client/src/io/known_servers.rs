//! Trust on first use: the certificate fingerprint of every server this
//! client has connected to, like ssh's `known_hosts`.
//!
//! Without `--fingerprint`, the first connection to a server address
//! records the fingerprint it presented; every later connection to that
//! address must present the same one, or the client refuses to connect and
//! says which line to delete if the change is expected.
//!
//! A server found on the LAN is also remembered under its advertised
//! name, as `@NAME`: a server that keeps its name but moves to another
//! address (DHCP) is still recognised, and one that appears under a known
//! name with another certificate is refused (see [`standing`]).
//!
//! The file holds one `ADDRESS FINGERPRINT` or `@NAME FINGERPRINT` line
//! per server (the address as given to `--connect` or as advertised); `#`
//! starts a comment.

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::discovery::Standing;

/// Environment variable that overrides the file's location.
pub const ENV: &str = lockstep_protocol::KNOWN_SERVERS_ENV;

/// The default location: `~/.local/share/lockstep/known_servers`.
pub fn default_path() -> PathBuf {
    match std::env::var_os("HOME") {
        Some(home) => PathBuf::from(home).join(".local/share/lockstep/known_servers"),
        None => PathBuf::from(".lockstep-known-servers"),
    }
}

/// The fingerprint recorded for `address`, if any. A missing file means no
/// server is known yet.
pub fn lookup(path: &Path, address: &str) -> io::Result<Option<String>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .filter_map(|line| line.split_once(char::is_whitespace))
        .find(|(known, _)| *known == address)
        .map(|(_, fingerprint)| fingerprint.trim().to_ascii_lowercase()))
}

/// Records `fingerprint` for `address` (creating the file and its
/// directory).
pub fn remember(path: &Path, address: &str, fingerprint: &str) -> io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let mut file = OpenOptions::new().create(true).append(true).open(path)?;
    // One write per line: clients started together (bots, the demo) may
    // trust the same server at once, and appends of whole lines do not
    // interleave, where `writeln!`'s piece-by-piece writes did.
    file.write_all(format!("{address} {fingerprint}\n").as_bytes())
}

/// The key a server's advertised name is remembered under.
pub fn name_key(name: &str) -> String {
    format!("@{name}")
}

/// How the server at `address` called `name`, advertising `fingerprint`,
/// stands with the file.
pub fn standing(path: &Path, address: &str, name: &str, fingerprint: &str) -> io::Result<Standing> {
    let mut known = false;
    for key in [address.to_string(), name_key(name)] {
        match lookup(path, &key)? {
            Some(expected) if !expected.eq_ignore_ascii_case(fingerprint) => {
                return Ok(Standing::Changed {
                    expected,
                    under: key,
                })
            }
            Some(_) => known = true,
            None => {}
        }
    }
    Ok(if known {
        Standing::Known
    } else {
        Standing::New
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clients_remembering_at_once_leave_whole_lines() {
        let path = std::env::temp_dir().join(format!("lockstep-known-race-{}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let writers: Vec<_> = (0..8)
            .map(|t| {
                let path = path.clone();
                std::thread::spawn(move || {
                    for i in 0..200 {
                        remember(&path, &format!("10.0.{t}.{i}:7777"), &"ab".repeat(32)).unwrap();
                    }
                })
            })
            .collect();
        for writer in writers {
            writer.join().unwrap();
        }
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 8 * 200);
        for line in text.lines() {
            let (address, fingerprint) = line.split_once(' ').expect("address and fingerprint");
            assert!(
                address.starts_with("10.0.") && address.ends_with(":7777"),
                "{line}"
            );
            assert_eq!(fingerprint, "ab".repeat(32), "{line}");
        }
        assert_eq!(
            lookup(&path, "10.0.7.199:7777").unwrap().as_deref(),
            Some("ab".repeat(32).as_str())
        );
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn remembered_servers_are_found_by_address_only() {
        let path = std::env::temp_dir().join(format!("lockstep-known-{}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        assert_eq!(lookup(&path, "10.0.0.1:7777").unwrap(), None);
        remember(&path, "10.0.0.1:7777", "ab12").unwrap();
        remember(&path, "10.0.0.2:7777", "cd34").unwrap();
        assert_eq!(
            lookup(&path, "10.0.0.1:7777").unwrap().as_deref(),
            Some("ab12")
        );
        assert_eq!(
            lookup(&path, "10.0.0.2:7777").unwrap().as_deref(),
            Some("cd34")
        );
        assert_eq!(lookup(&path, "10.0.0.3:7777").unwrap(), None);
        std::fs::write(&path, "# a comment\n\n10.0.0.9:1 EF56\n").unwrap();
        assert_eq!(
            lookup(&path, "10.0.0.9:1").unwrap().as_deref(),
            Some("ef56")
        );
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn a_discovered_server_is_judged_by_its_address_and_its_name() {
        let path =
            std::env::temp_dir().join(format!("lockstep-known-standing-{}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let standing = |address, name, fp| standing(&path, address, name, fp).unwrap();
        assert_eq!(standing("10.0.0.1:7777", "den", "aa"), Standing::New);
        remember(&path, "10.0.0.1:7777", "aa").unwrap();
        remember(&path, &name_key("den"), "aa").unwrap();
        assert_eq!(standing("10.0.0.1:7777", "den", "AA"), Standing::Known);
        // The same server at a new address is still known by name.
        assert_eq!(standing("10.0.0.9:7777", "den", "aa"), Standing::Known);
        // Another certificate under the known name is refused, wherever.
        assert_eq!(
            standing("10.0.0.9:7777", "den", "bb"),
            Standing::Changed {
                expected: "aa".into(),
                under: "@den".into()
            }
        );
        assert_eq!(standing("10.0.0.1:7777", "attic", "bb").word(), "changed");
        std::fs::remove_file(&path).unwrap();
    }
}
