//! How the client trusts the server: a pinned fingerprint, trust on first
//! use, or the fingerprint a server on the LAN advertised, each checked
//! against and recorded in the known-servers file.

use std::path::PathBuf;

use lockstep_protocol::verification_code;

use super::known_servers;

/// How the client authenticates the server.
#[derive(Debug, Clone)]
pub enum Trust {
    /// The fingerprint given with `--fingerprint`.
    Pinned(String),
    /// Trust on first use: the fingerprint recorded for `address` in the
    /// known-servers file, or record it now if there is none.
    FirstUse {
        /// The known-servers file.
        file: PathBuf,
        /// The server address as the user gave it.
        address: String,
    },
    /// A server found on the LAN: it must present the fingerprint it
    /// advertised, unless the known-servers file holds another one for its
    /// address or its name (then it is refused before connecting); if the
    /// file holds neither, the fingerprint is recorded under both.
    Advertised {
        /// The known-servers file.
        file: PathBuf,
        /// The address it advertised, HOST:PORT.
        address: String,
        /// The name it advertised.
        name: String,
        /// The fingerprint it advertised.
        fingerprint: String,
    },
}

impl Trust {
    /// The fingerprint the server must present, as the known-servers file
    /// and the trust say; `None`: any, recorded on first use.
    pub(crate) fn expected(&self) -> Result<Option<String>, TrustError> {
        Ok(match self {
            Trust::Pinned(fingerprint) => Some(fingerprint.clone()),
            Trust::FirstUse { file, address } => {
                known_servers::lookup(file, address).map_err(|source| TrustError::KnownServers {
                    file: file.clone(),
                    source,
                })?
            }
            Trust::Advertised {
                file,
                address,
                name,
                fingerprint,
            } => {
                let standing = known_servers::standing(file, address, name, fingerprint).map_err(
                    |source| TrustError::KnownServers {
                        file: file.clone(),
                        source,
                    },
                )?;
                if let crate::discovery::Standing::Changed { expected, under } = standing {
                    return Err(TrustError::AdvertisedChanged {
                        name: name.clone(),
                        under,
                        certificates: Certificates {
                            seen: fingerprint.clone(),
                            expected,
                            file: Some(file.clone()),
                        },
                    });
                }
                Some(fingerprint.clone())
            }
        })
    }
}

/// Records a server trusted for the first time; returns what to tell the
/// user about it.
pub(crate) fn remember_first_use(
    trust: &Trust,
    expected: Option<&str>,
    seen: Option<String>,
) -> Option<String> {
    if let Trust::Advertised {
        file,
        address,
        name,
        fingerprint,
    } = trust
    {
        return remember_advertised(file, address, name, fingerprint);
    }
    let (Trust::FirstUse { file, address }, None, Some(seen)) = (trust, expected, seen) else {
        return None;
    };
    Some(match known_servers::remember(file, address, &seen) {
        Ok(()) => format!(
            "trusting the server at {address} on first use: its certificate fingerprint {seen} \
             is now recorded in {}; compare it with the one the server printed",
            file.display()
        ),
        Err(e) => format!(
            "the server at {address} is not authenticated (certificate fingerprint {seen}) and \
             could not be recorded in {}: {e}",
            file.display()
        ),
    })
}

/// Records a server found on the LAN under its address and its name,
/// where the file does not have it yet; returns what to tell the user.
fn remember_advertised(
    file: &std::path::Path,
    address: &str,
    name: &str,
    fingerprint: &str,
) -> Option<String> {
    let mut recorded = Vec::new();
    for key in [address.to_string(), known_servers::name_key(name)] {
        match known_servers::lookup(file, &key) {
            Ok(Some(_)) => {}
            Ok(None) => match known_servers::remember(file, &key, fingerprint) {
                Ok(()) => recorded.push(key),
                Err(e) => {
                    return Some(format!(
                        "the server {name} at {address} (code {}) could not be recorded in {}: {e}",
                        verification_code(fingerprint),
                        file.display()
                    ))
                }
            },
            Err(e) => {
                return Some(format!("cannot read {}: {e}", file.display()));
            }
        }
    }
    (!recorded.is_empty()).then(|| {
        format!(
            "trusting the server {name} at {address} on first use: its certificate fingerprint \
             {fingerprint} (code {}) is now recorded in {} as {}; compare the code with the one \
             the server printed",
            verification_code(fingerprint),
            file.display(),
            recorded.join(" and ")
        )
    })
}

/// Why the known-servers file refuses a server before connecting.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TrustError {
    #[error("cannot use the known-servers file {}: {source}", file.display())]
    KnownServers {
        file: PathBuf,
        source: std::io::Error,
    },
    #[error("refusing to join {name}: its certificate is not the one on file for {under}")]
    AdvertisedChanged {
        name: String,
        under: String,
        #[source]
        certificates: Certificates,
    },
}

/// The certificate a server presented and the one expected of it: the
/// detail of a refusal.
#[derive(Debug, thiserror::Error)]
#[error(
    "it presented certificate {seen} (code {}), but {expected} (code {}) is expected{}",
    verification_code(seen),
    verification_code(expected),
    on_file(file.as_deref())
)]
pub(crate) struct Certificates {
    /// The fingerprint the server presented.
    pub(crate) seen: String,
    /// The fingerprint expected of it.
    pub(crate) expected: String,
    /// The known-servers file the expected one is on, if it is.
    pub(crate) file: Option<PathBuf>,
}

/// Where to undo a trust on purpose: the known-servers file's line.
fn on_file(file: Option<&std::path::Path>) -> String {
    file.map(|file| {
        format!(
            "; if the server's identity changed on purpose, delete its line in {}",
            file.display()
        )
    })
    .unwrap_or_default()
}
