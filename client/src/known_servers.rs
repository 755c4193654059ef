//! Trust on first use: the certificate fingerprint of every server this
//! client has connected to, like ssh's `known_hosts`.
//!
//! Without `--fingerprint`, the first connection to a server address
//! records the fingerprint it presented; every later connection to that
//! address must present the same one, or the client refuses to connect and
//! says which line to delete if the change is expected.
//!
//! The file holds one `ADDRESS FINGERPRINT` line per server (the address as
//! given to `--connect`); `#` starts a comment.

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Environment variable that overrides the file's location.
pub const ENV: &str = "LOCKSTEP_KNOWN_SERVERS";

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
    writeln!(file, "{address} {fingerprint}")
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
