//! What the conditioner's QUIC tests share: a self-signed TLS pair for
//! "localhost" and a handshake between two endpoints.

use std::sync::Arc;

use quinn::rustls::pki_types::PrivatePkcs8KeyDer;
use quinn::{ClientConfig, Connection, Endpoint, ServerConfig};

/// A server config with a fresh self-signed certificate for "localhost",
/// and a client config that trusts exactly that certificate.
pub fn tls_pair() -> (ServerConfig, ClientConfig) {
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_string()])
        .expect("self-signed certificate");
    let cert_der = cert.cert.der().clone();
    let key = PrivatePkcs8KeyDer::from(cert.key_pair.serialize_der()).into();
    let server =
        ServerConfig::with_single_cert(vec![cert_der.clone()], key).expect("server TLS config");
    let mut roots = quinn::rustls::RootCertStore::empty();
    roots.add(cert_der).expect("certificate is valid");
    let client = ClientConfig::with_root_certificates(Arc::new(roots)).expect("client TLS config");
    (server, client)
}

/// Connects `client` (with its default client config) to `server`;
/// returns the client's and the server's side of the connection.
pub async fn handshake(client: &Endpoint, server: &Endpoint) -> (Connection, Connection) {
    let server_addr = server.local_addr().expect("server address");
    tokio::join!(
        async {
            client
                .connect(server_addr, "localhost")
                .expect("connect starts")
                .await
                .expect("client handshake")
        },
        async {
            server
                .accept()
                .await
                .expect("server is open")
                .await
                .expect("server handshake")
        },
    )
}
