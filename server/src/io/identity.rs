//! The server's TLS identity: a self-signed certificate kept on disk, so a
//! restarted server keeps the fingerprint clients have pinned.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

const CERT_FILE: &str = "cert.der";
const KEY_FILE: &str = "key.der";

/// Why the identity could not be loaded or created.
#[derive(Debug, thiserror::Error)]
pub enum IdentityError {
    /// Reading or writing the identity directory failed.
    #[error("cannot use identity file {path}: {source}")]
    Io {
        /// The file or directory involved.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// The identity directory's path names something else, such as a
    /// file.
    #[error("the identity directory {0} is not a directory; give --identity-dir a directory, or a path that does not exist yet")]
    NotADirectory(PathBuf),
    /// Only one of the two files exists: refusing to silently replace an
    /// identity clients may have pinned.
    #[error("the identity in {dir} lacks {missing}; remove the directory to create a new one")]
    Incomplete {
        /// The identity directory.
        dir: PathBuf,
        /// The file that is not there.
        missing: &'static str,
    },
    /// Both files exist but are not a certificate and its key (a file was
    /// damaged, or replaced by something else): refusing to replace them
    /// for the same reason.
    #[error("the identity in {dir} is unusable; remove the directory to create a new one")]
    Unusable {
        /// The identity directory.
        dir: PathBuf,
        /// What TLS found wrong with the files.
        #[source]
        source: rustls::Error,
    },
    /// Generating a certificate failed.
    #[error("cannot generate a certificate: {0}")]
    Generate(#[from] rcgen::Error),
}

/// A certificate and its private key.
#[derive(Debug)]
pub struct Identity {
    /// DER certificate.
    pub cert: CertificateDer<'static>,
    /// PKCS#8 DER private key.
    pub key: PrivatePkcs8KeyDer<'static>,
}

impl Identity {
    /// Loads the identity from `dir`, creating it (and `dir`) on first use.
    pub fn load_or_create(dir: &Path) -> Result<Identity, IdentityError> {
        let cert_path = dir.join(CERT_FILE);
        let key_path = dir.join(KEY_FILE);
        let io_err = |path: &Path| {
            let path = path.to_path_buf();
            move |source| IdentityError::Io { path, source }
        };
        if dir.exists() && !dir.is_dir() {
            return Err(IdentityError::NotADirectory(dir.to_path_buf()));
        }
        match (cert_path.exists(), key_path.exists()) {
            (true, true) => {
                let cert = fs::read(&cert_path).map_err(io_err(&cert_path))?;
                let key = fs::read(&key_path).map_err(io_err(&key_path))?;
                let identity = Identity {
                    cert: CertificateDer::from(cert),
                    key: PrivatePkcs8KeyDer::from(key),
                };
                identity.check().map_err(|source| IdentityError::Unusable {
                    dir: dir.to_path_buf(),
                    source,
                })?;
                Ok(identity)
            }
            (false, false) => {
                let generated = rcgen::generate_simple_self_signed(vec!["lockstep".to_string()])?;
                let cert = generated.cert.der().to_vec();
                let key = generated.key_pair.serialize_der();
                fs::create_dir_all(dir).map_err(io_err(dir))?;
                fs::write(&key_path, &key).map_err(io_err(&key_path))?;
                restrict_permissions(&key_path).map_err(io_err(&key_path))?;
                fs::write(&cert_path, &cert).map_err(io_err(&cert_path))?;
                Ok(Identity {
                    cert: CertificateDer::from(cert),
                    key: PrivatePkcs8KeyDer::from(key),
                })
            }
            (cert, _) => Err(IdentityError::Incomplete {
                dir: dir.to_path_buf(),
                missing: if cert { KEY_FILE } else { CERT_FILE },
            }),
        }
    }

    /// Whether TLS takes the certificate and the key, as the endpoint
    /// will: both parse, and the key is the certificate's.
    fn check(&self) -> Result<(), rustls::Error> {
        let provider = rustls::crypto::ring::default_provider();
        rustls::sign::CertifiedKey::from_der(vec![self.cert.clone()], self.private_key(), &provider)
            .map(drop)
    }

    /// SHA-256 of the certificate, lower-case hex: what clients pin.
    pub fn fingerprint(&self) -> String {
        ring::digest::digest(&ring::digest::SHA256, &self.cert)
            .as_ref()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// The key in the form rustls takes.
    pub fn private_key(&self) -> PrivateKeyDer<'static> {
        PrivateKeyDer::Pkcs8(self.key.clone_key())
    }
}

#[cfg(unix)]
fn restrict_permissions(path: &Path) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(0o600))
}

#[cfg(not(unix))]
fn restrict_permissions(_path: &Path) -> io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_survives_a_restart() {
        let dir = std::env::temp_dir().join(format!("lockstep-identity-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let first = Identity::load_or_create(&dir).unwrap();
        let second = Identity::load_or_create(&dir).unwrap();
        assert_eq!(first.fingerprint(), second.fingerprint());
        assert_eq!(first.fingerprint().len(), 64);
        fs::remove_file(dir.join(KEY_FILE)).unwrap();
        assert!(matches!(
            Identity::load_or_create(&dir),
            Err(IdentityError::Incomplete {
                missing: KEY_FILE,
                ..
            })
        ));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_identity_directory_that_is_a_file_is_refused_with_what_to_do() {
        let file = std::env::temp_dir().join(format!("lockstep-not-a-dir-{}", std::process::id()));
        fs::write(&file, b"a file").unwrap();
        let said = Identity::load_or_create(&file).unwrap_err().to_string();
        assert_eq!(
            said,
            format!(
                "the identity directory {} is not a directory; give --identity-dir a directory, \
                 or a path that does not exist yet",
                file.display()
            )
        );
        assert_eq!(fs::read(&file).unwrap(), b"a file", "left as it was");
        fs::remove_file(&file).unwrap();
    }

    #[test]
    fn an_identity_of_garbage_files_is_refused_with_what_to_do() {
        let dir = std::env::temp_dir().join(format!("lockstep-garbage-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join(CERT_FILE), b"not a certificate").unwrap();
        fs::write(dir.join(KEY_FILE), b"not a key").unwrap();
        let error = Identity::load_or_create(&dir).unwrap_err();
        assert!(matches!(error, IdentityError::Unusable { .. }), "{error:?}");
        let said = lockstep_protocol::error_chain(&error);
        assert!(
            said.starts_with(&format!(
                "the identity in {} is unusable; remove the directory to create a new one: ",
                dir.display()
            )),
            "{said}"
        );
        // So is a certificate with another identity's key.
        let one = Identity::load_or_create(&dir.join("one")).unwrap();
        let other = Identity::load_or_create(&dir.join("other")).unwrap();
        fs::write(dir.join(CERT_FILE), &one.cert).unwrap();
        fs::write(dir.join(KEY_FILE), other.key.secret_pkcs8_der()).unwrap();
        assert!(matches!(
            Identity::load_or_create(&dir),
            Err(IdentityError::Unusable { .. })
        ));
        fs::remove_dir_all(&dir).unwrap();
    }
}
