//! The server's TLS identity: a self-signed certificate kept on disk, so a
//! restarted server keeps the fingerprint clients have pinned.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

const CERT_FILE: &str = "cert.der";
const KEY_FILE: &str = "key.der";

/// Why the identity could not be loaded or created. Each message says
/// what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum IdentityError {
    /// Creating the identity directory or writing a file of it failed.
    #[error("cannot create the identity file {path}: {source}; give --identity-dir a directory this user can write")]
    Create {
        /// The file or directory involved.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// A file of an existing identity cannot be read (it is a directory,
    /// or not readable).
    #[error("cannot read the identity file {path}: {source}; make it a readable file, or remove the directory to create a new one")]
    Read {
        /// The file.
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
    #[error("the identity in {dir} is unusable: {flaw}; remove the directory to create a new one")]
    Unusable {
        /// The identity directory.
        dir: PathBuf,
        /// Which file is wrong.
        flaw: IdentityFlaw,
    },
    /// Generating a certificate failed.
    #[error("cannot generate a certificate: {0}")]
    Generate(#[from] rcgen::Error),
}

/// What is wrong with an identity whose two files exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum IdentityFlaw {
    /// The key file holds no private key TLS takes.
    #[error("{KEY_FILE} is not a private key")]
    Key,
    /// The certificate file holds no certificate.
    #[error("{CERT_FILE} is not a certificate")]
    Cert,
    /// Neither file holds what it should.
    #[error("{KEY_FILE} is not a private key and {CERT_FILE} is not a certificate")]
    Both,
    /// The key is not the certificate's.
    #[error("{KEY_FILE} is not the key of {CERT_FILE}")]
    Mismatch,
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
        let read_err = |path: &Path| {
            let path = path.to_path_buf();
            move |source| IdentityError::Read { path, source }
        };
        let create_err = |path: &Path| {
            let path = path.to_path_buf();
            move |source| IdentityError::Create { path, source }
        };
        if dir.exists() && !dir.is_dir() {
            return Err(IdentityError::NotADirectory(dir.to_path_buf()));
        }
        match (cert_path.exists(), key_path.exists()) {
            (true, true) => {
                let cert = fs::read(&cert_path).map_err(read_err(&cert_path))?;
                let key = fs::read(&key_path).map_err(read_err(&key_path))?;
                let identity = Identity {
                    cert: CertificateDer::from(cert),
                    key: PrivatePkcs8KeyDer::from(key),
                };
                identity.check().map_err(|flaw| IdentityError::Unusable {
                    dir: dir.to_path_buf(),
                    flaw,
                })?;
                Ok(identity)
            }
            (false, false) => {
                let generated = rcgen::generate_simple_self_signed(vec!["lockstep".to_string()])?;
                let cert = generated.cert.der().to_vec();
                let key = generated.key_pair.serialize_der();
                fs::create_dir_all(dir).map_err(create_err(dir))?;
                fs::write(&key_path, &key).map_err(create_err(&key_path))?;
                restrict_permissions(&key_path).map_err(create_err(&key_path))?;
                fs::write(&cert_path, &cert).map_err(create_err(&cert_path))?;
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
    fn check(&self) -> Result<(), IdentityFlaw> {
        let provider = rustls::crypto::ring::default_provider();
        let key = provider.key_provider.load_private_key(self.private_key());
        let cert = rustls::server::ParsedCertificate::try_from(&self.cert);
        match (key, cert) {
            (Err(_), Err(_)) => Err(IdentityFlaw::Both),
            (Err(_), Ok(_)) => Err(IdentityFlaw::Key),
            (Ok(_), Err(_)) => Err(IdentityFlaw::Cert),
            (Ok(_), Ok(_)) => rustls::sign::CertifiedKey::from_der(
                vec![self.cert.clone()],
                self.private_key(),
                &provider,
            )
            .map(drop)
            .map_err(|_| IdentityFlaw::Mismatch),
        }
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

    /// A fresh directory `dir` holding `files` (name, contents).
    fn identity_dir(dir: PathBuf, files: &[(&str, &[u8])]) -> PathBuf {
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        for (name, contents) in files {
            fs::write(dir.join(name), contents).unwrap();
        }
        dir
    }

    fn temp_path(label: &str) -> PathBuf {
        std::env::temp_dir().join(format!("lockstep-{label}-{}", std::process::id()))
    }

    #[test]
    fn an_identity_of_garbage_files_is_refused_saying_which_and_what_to_do() {
        let parent = identity_dir(temp_path("garbage"), &[]);
        let good = Identity::load_or_create(&parent.join("good")).unwrap();
        let other = Identity::load_or_create(&parent.join("other")).unwrap();
        let key = good.key.secret_pkcs8_der();
        let cases: [(&str, &[u8], &[u8], &str); 5] = [
            (
                "garbage",
                b"not a certificate",
                b"not a key",
                "key.der is not a private key and cert.der is not a certificate",
            ),
            ("empty-key", &good.cert, b"", "key.der is not a private key"),
            ("empty-cert", b"", key, "cert.der is not a certificate"),
            (
                "garbage-cert",
                b"\x30\x03\x02\x01\x00",
                key,
                "cert.der is not a certificate",
            ),
            (
                "other-key",
                &good.cert,
                other.key.secret_pkcs8_der(),
                "key.der is not the key of cert.der",
            ),
        ];
        for (label, cert, key, flaw) in cases {
            let dir = identity_dir(parent.join(label), &[(CERT_FILE, cert), (KEY_FILE, key)]);
            let error = Identity::load_or_create(&dir).unwrap_err();
            assert!(matches!(error, IdentityError::Unusable { .. }), "{error:?}");
            assert_eq!(
                lockstep_protocol::error_chain(&error),
                format!(
                    "the identity in {} is unusable: {flaw}; remove the directory to create a \
                     new one",
                    dir.display()
                ),
                "{label}"
            );
            assert_eq!(fs::read(dir.join(KEY_FILE)).unwrap(), key, "left as it was");
        }
        fs::remove_dir_all(&parent).unwrap();
    }

    #[test]
    fn an_identity_file_that_cannot_be_read_is_refused_with_what_to_do() {
        let dir = identity_dir(temp_path("unreadable"), &[(CERT_FILE, b"a certificate")]);
        fs::create_dir(dir.join(KEY_FILE)).unwrap();
        let error = Identity::load_or_create(&dir).unwrap_err();
        assert!(matches!(error, IdentityError::Read { .. }), "{error:?}");
        let said = lockstep_protocol::error_chain(&error);
        let key = dir.join(KEY_FILE);
        assert!(
            said.starts_with(&format!(
                "cannot read the identity file {}: ",
                key.display()
            )) && said.ends_with(
                "; make it a readable file, or remove the directory to create a new one"
            ),
            "{said}"
        );
        assert_eq!(said.matches("(os error").count(), 1, "{said}");
        fs::remove_dir_all(&dir).unwrap();
    }
}
