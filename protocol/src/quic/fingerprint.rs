//! Server authentication by certificate fingerprint.
//!
//! The server uses a self-signed certificate, so there is no CA to check it
//! against. Instead the client compares the SHA-256 of the certificate with
//! the fingerprint the server printed at start (`--fingerprint`). The TLS
//! handshake signature is still verified against that certificate, so a
//! peer without the private key cannot impersonate the server.
//!
//! Without an expected fingerprint the verifier accepts any certificate
//! and records the one it saw ([`FingerprintVerifier::seen`]).
//!
//! It lives here rather than in the client because the server's tests
//! speak QUIC to the server themselves and check its certificate the same
//! way.

use std::sync::{Arc, Mutex};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, Error, SignatureScheme};

/// Checks the server's certificate against an expected fingerprint.
#[derive(Debug)]
pub struct FingerprintVerifier {
    expected: Option<String>,
    seen: Mutex<Option<String>>,
    provider: Arc<CryptoProvider>,
}

impl FingerprintVerifier {
    /// `expected`: lower- or upper-case hex SHA-256 (colons allowed), or
    /// `None` to accept any certificate and only record it.
    pub fn new(expected: Option<&str>, provider: Arc<CryptoProvider>) -> Self {
        let expected = expected.map(|hex| hex.replace(':', "").to_ascii_lowercase());
        FingerprintVerifier {
            expected,
            seen: Mutex::new(None),
            provider,
        }
    }

    /// Whether `fingerprint` is the expected one (always true if none is).
    pub fn matches(&self, fingerprint: &str) -> bool {
        self.expected.as_deref().is_none_or(|e| e == fingerprint)
    }

    /// The fingerprint of the certificate the server presented, if any.
    pub fn seen(&self) -> Option<String> {
        self.seen.lock().ok().and_then(|seen| seen.clone())
    }
}

/// SHA-256 of a DER certificate as 64 lower-case hex digits, the form
/// the server prints at start and `--fingerprint` takes.
fn fingerprint(cert_der: &[u8]) -> String {
    ring::digest::digest(&ring::digest::SHA256, cert_der)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl ServerCertVerifier for FingerprintVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        let actual = fingerprint(end_entity);
        if let Ok(mut seen) = self.seen.lock() {
            *seen = Some(actual.clone());
        }
        if self.matches(&actual) {
            Ok(ServerCertVerified::assertion())
        } else {
            Err(Error::General(format!(
                "server certificate fingerprint {actual} is not the pinned one"
            )))
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fingerprint_is_the_lower_case_hex_sha256_of_the_certificate() {
        // FIPS 180-2's "abc" test vector.
        assert_eq!(
            fingerprint(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn a_pinned_fingerprint_matches_in_any_case_and_with_colons() {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let verifier = FingerprintVerifier::new(Some("BA:78:16:BF"), provider);
        assert!(verifier.matches("ba7816bf"));
        assert!(!verifier.matches("ba7816bf00"));
    }
}
