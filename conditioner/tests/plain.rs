//! Two quinn endpoints on loopback, each on a [`PlainSocket`] (the socket
//! Windows builds use): a handshake, a stream and datagrams go through.

mod common;

use std::net::{Ipv4Addr, UdpSocket};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use lockstep_conditioner::PlainSocket;
use quinn::{Endpoint, EndpointConfig, ServerConfig, TokioRuntime};
use tokio::time::timeout;

/// Upper bound on the test, far above what it needs, so a hang fails
/// instead of stalling the suite.
const TEST_LIMIT: Duration = Duration::from_secs(10);

fn plain_endpoint(server: Option<ServerConfig>) -> Endpoint {
    let socket = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).expect("loopback binds");
    let socket = PlainSocket::new(socket).expect("inside a runtime");
    Endpoint::new_with_abstract_socket(
        EndpointConfig::default(),
        server,
        socket,
        Arc::new(TokioRuntime),
    )
    .expect("endpoint starts")
}

#[tokio::test]
async fn two_plain_sockets_connect_and_exchange_data() {
    timeout(TEST_LIMIT, async {
        let (server_config, client_config) = common::tls_pair();
        let server = plain_endpoint(Some(server_config));
        let mut client = plain_endpoint(None);
        client.set_default_client_config(client_config);
        let (client_conn, server_conn) = common::handshake(&client, &server).await;

        let (mut send, _recv) = client_conn.open_bi().await.expect("stream opens");
        send.write_all(b"join").await.expect("stream written");
        send.finish().expect("stream finished");
        let (_send, mut recv) = server_conn.accept_bi().await.expect("stream accepted");
        let joined = recv.read_to_end(64).await.expect("stream read");
        assert_eq!(joined, b"join");

        server_conn
            .send_datagram(Bytes::from_static(b"tick 1"))
            .expect("datagram sent");
        let datagram = client_conn.read_datagram().await.expect("datagram arrives");
        assert_eq!(&datagram[..], b"tick 1");

        client_conn.close(0u32.into(), b"done");
        client.wait_idle().await;
    })
    .await
    .expect("within the test limit");
}
