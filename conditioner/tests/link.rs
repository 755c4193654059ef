//! Two real quinn endpoints on loopback, the client behind a conditioned
//! socket: what the conditioner promises, measured through QUIC itself.

mod common;

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use lockstep_conditioner::{ConditionedSocket, DirectionStats, LinkConfig};
use quinn::{Connection, Endpoint, TransportConfig};
use tokio::time::{sleep, timeout, Instant};

/// Upper bound on every test, far above what each needs, so a hang fails
/// instead of stalling the suite.
const TEST_LIMIT: Duration = Duration::from_secs(10);

const LOCALHOST: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(Ipv4Addr::LOCALHOST), 0);

/// Both ends of one connection; the client's socket is conditioned.
struct Pair {
    client: Connection,
    server: Connection,
    socket: Arc<ConditionedSocket>,
    _endpoints: (Endpoint, Endpoint),
}

/// LAN-sized first RTT guess, so a handshake packet lost on a lossy link is
/// resent after tens of milliseconds rather than quinn's default second.
fn transport() -> Arc<TransportConfig> {
    let mut transport = TransportConfig::default();
    transport.initial_rtt(Duration::from_millis(20));
    Arc::new(transport)
}

/// Connects a plain server to a client whose path is `link` both ways.
async fn connect(link: LinkConfig) -> Pair {
    let (mut server_config, mut client_config) = common::tls_pair();
    server_config.transport_config(transport());
    client_config.transport_config(transport());
    let server = Endpoint::server(server_config, LOCALHOST).expect("server binds");
    let (mut client, socket) = lockstep_conditioner::endpoint(
        quinn::EndpointConfig::default(),
        None,
        LOCALHOST,
        link,
        link,
    )
    .expect("conditioned client binds");
    client.set_default_client_config(client_config);
    let (client_conn, server_conn) = common::handshake(&client, &server).await;
    Pair {
        client: client_conn,
        server: server_conn,
        socket,
        _endpoints: (client, server),
    }
}

/// Echoes every datagram back until the connection closes.
fn echo_datagrams(conn: Connection) {
    tokio::spawn(async move {
        while let Ok(datagram) = conn.read_datagram().await {
            if conn.send_datagram(datagram).is_err() {
                break;
            }
        }
    });
}

/// Sends `count` datagrams one after the other and returns each round trip.
#[allow(
    clippy::disallowed_methods,
    reason = "measures real round trips through the conditioned link"
)]
async fn datagram_round_trips(conn: &Connection, count: u32) -> Vec<Duration> {
    let mut trips = Vec::new();
    for i in 0..count {
        let started = Instant::now();
        conn.send_datagram(Bytes::from(i.to_be_bytes().to_vec()))
            .expect("datagram sent");
        let echo = conn.read_datagram().await.expect("echo arrives");
        assert_eq!(&echo[..], i.to_be_bytes());
        trips.push(started.elapsed());
    }
    trips.sort();
    trips
}

#[tokio::test]
async fn latency_in_each_direction_adds_up_in_the_round_trip() {
    timeout(TEST_LIMIT, async {
        let pair = connect(LinkConfig {
            latency: Duration::from_millis(20),
            ..LinkConfig::default()
        })
        .await;
        echo_datagrams(pair.server.clone());

        let trips = datagram_round_trips(&pair.client, 20).await;
        let rtt = pair.client.rtt();
        println!(
            "20 ms each way: quinn rtt {rtt:?}, echo round trips {:?}..{:?}",
            trips[0], trips[19]
        );

        assert!(trips[0] >= Duration::from_millis(40), "{trips:?}");
        assert!(rtt >= Duration::from_millis(40), "{rtt:?}");
        assert!(rtt < Duration::from_millis(80), "{rtt:?}");
        let stats = pair.socket.stats();
        assert!(
            stats.up.delivered > 20 && stats.down.delivered > 20,
            "{stats:?}"
        );
        assert_eq!(stats.up.lost + stats.down.lost, 0);
    })
    .await
    .expect("test finished in time");
}

#[tokio::test]
async fn lossy_link_drops_datagrams_but_streams_arrive_intact() {
    const DATAGRAMS: usize = 2000;
    const STREAM_BYTES: usize = 100_000;
    timeout(TEST_LIMIT, async {
        let pair = connect(LinkConfig {
            loss: 0.3,
            seed: 1,
            ..LinkConfig::default()
        })
        .await;

        let received = Arc::new(AtomicUsize::new(0));
        let server = pair.server.clone();
        let counter = received.clone();
        tokio::spawn(async move {
            while server.read_datagram().await.is_ok() {
                counter.fetch_add(1, Ordering::Relaxed);
            }
        });
        let server = pair.server.clone();
        let receiver = tokio::spawn(async move {
            let (_, mut recv) = server.accept_bi().await.unwrap();
            recv.read_to_end(2 * STREAM_BYTES).await.unwrap()
        });

        let payload: Vec<u8> = (0..STREAM_BYTES).map(|i| (i % 251) as u8).collect();
        let (mut send, _recv) = pair.client.open_bi().await.unwrap();
        let writer = {
            let payload = payload.clone();
            tokio::spawn(async move {
                send.write_all(&payload).await.unwrap();
                send.finish().unwrap();
                send
            })
        };
        // Steady pace: one datagram a millisecond, two seconds in all.
        let mut tick = tokio::time::interval(Duration::from_millis(1));
        for id in 0..DATAGRAMS as u32 {
            tick.tick().await;
            pair.client
                .send_datagram(Bytes::from(id.to_be_bytes().to_vec()))
                .unwrap();
        }

        let arrived = receiver.await.unwrap();
        let _send = writer.await.unwrap();
        assert!(
            arrived == payload,
            "stream corrupted: {} bytes",
            arrived.len()
        );
        // Datagrams still in flight when the stream ended.
        sleep(Duration::from_millis(200)).await;

        let received = received.load(Ordering::Relaxed);
        let stats = pair.socket.stats();
        println!("30% loss: {received} of {DATAGRAMS} datagrams arrived; {stats:?}");
        // How many datagrams a lost packet takes depends on how quinn packed
        // them, which follows the machine's load (a busy machine packs
        // several into a packet, between the stream's packets): under load
        // 1778 of 2000 arrived once with 27% of packets lost. So the count
        // is only bounded: some lost, most through; the packet loss below
        // is what the conditioner decides.
        assert!(
            (DATAGRAMS / 2..DATAGRAMS).contains(&received),
            "{received} of {DATAGRAMS} datagrams arrived"
        );
        for direction in [stats.up, stats.down] {
            let loss = direction.lost as f64 / direction.sent as f64;
            assert!((0.25..0.35).contains(&loss), "{stats:?}");
        }
    })
    .await
    .expect("test finished in time");
}

#[tokio::test]
async fn a_clean_link_passes_every_datagram_through_untouched() {
    timeout(TEST_LIMIT, async {
        let pair = connect(LinkConfig::default()).await;
        echo_datagrams(pair.server.clone());

        let trips = datagram_round_trips(&pair.client, 20).await;
        let rtt = pair.client.rtt();
        println!(
            "clean: quinn rtt {rtt:?}, echo round trips {:?}..{:?} (median {:?})",
            trips[0], trips[19], trips[10]
        );

        // The round trips are printed, not bounded: on a loaded machine a
        // clean loopback round trip took a median of 6 ms, which is the
        // scheduler's, not the link's. What the link owes is to hold
        // nothing back: every datagram through once, none lost, doubled
        // or reordered.
        assert_eq!(trips.len(), 20);
        let stats = pair.socket.stats();
        for direction in [stats.up, stats.down] {
            assert!(direction.sent > 20, "{stats:?}");
            assert_eq!(
                direction,
                DirectionStats {
                    sent: direction.sent,
                    delivered: direction.sent,
                    ..DirectionStats::default()
                },
                "{stats:?}"
            );
        }
    })
    .await
    .expect("test finished in time");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jitter_duplicates_and_reordering_leave_streams_intact() {
    const STREAM_BYTES: usize = 200_000;
    timeout(TEST_LIMIT, async {
        let pair = connect(LinkConfig {
            latency: Duration::from_millis(5),
            jitter: Duration::from_millis(3),
            duplicate: 0.05,
            reorder: 0.05,
            seed: 2,
            ..LinkConfig::default()
        })
        .await;

        let server = pair.server.clone();
        let receiver = tokio::spawn(async move {
            let mut recv = server.accept_uni().await.expect("stream opened");
            recv.read_to_end(2 * STREAM_BYTES)
                .await
                .expect("stream read")
        });
        let payload: Vec<u8> = (0..STREAM_BYTES).map(|i| (i % 253) as u8).collect();
        let mut send = pair.client.open_uni().await.unwrap();
        send.write_all(&payload).await.unwrap();
        send.finish().unwrap();

        let arrived = receiver.await.unwrap();
        assert!(
            arrived == payload,
            "stream corrupted: {} bytes",
            arrived.len()
        );
        // Past the last ACK's delay (25 ms), latency, jitter and hold, so
        // every copy that was queued has left.
        sleep(Duration::from_millis(200)).await;

        let stats = pair.socket.stats();
        println!("jitter, duplicates, reordering: {stats:?}");
        for direction in [stats.up, stats.down] {
            assert!(
                direction.duplicated > 0 && direction.reordered > 0,
                "{stats:?}"
            );
            assert_eq!(
                direction.delivered,
                direction.sent + direction.duplicated,
                "every copy leaves once its time comes: {stats:?}"
            );
        }
    })
    .await
    .expect("test finished in time");
}
