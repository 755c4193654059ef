//! Server authentication by certificate fingerprint.
//!
//! The client compares the SHA-256 of the server's self-signed certificate
//! with the fingerprint the server printed at start (`--fingerprint`).
//! Without `--fingerprint` the client accepts any certificate but reports
//! the fingerprint it saw, and the frontend warns about it on stderr.
//!
//! The check itself is `lockstep-protocol`'s (feature `quic`), which the
//! server's tests share.

pub use lockstep_protocol::quic::FingerprintVerifier;
