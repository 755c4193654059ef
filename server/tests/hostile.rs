//! Hostile and broken peers against a real server: garbage, oversized
//! frames, wrong ALPN and version, a client that never says Hello, inputs
//! outside the window, repeats, per-tick hashes nobody asked for, ready
//! toggles during the game, an impostor using a player's name and a
//! datagram flood. The honest players must not notice.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use lockstep_protocol::quic::FingerprintVerifier;
use lockstep_protocol::{
    decode, encode, encode_frame, Buttons, ClientDatagram, ClientMessage, FrameReader, Hello,
    Input, InputDatagram, Platform, ServerDatagram, ServerMessage, Tick, ALPN, MAX_DATAGRAM_SIZE,
    PROTOCOL_VERSION,
};
use lockstep_testkit::{read_replay, slot_of, Client, Server};

/// Bits no honest input ever sets (the simulation ignores them): inputs
/// carrying them can only have come from the attacker.
const MARK: Buttons = Buttons(0b1110_0000);

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

/// A QUIC connection to the server with any ALPN, pinned to its certificate.
async fn connect(server: &Server, alpn: &[u8]) -> Result<quinn::Connection, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = Arc::new(FingerprintVerifier::new(
        Some(&server.fingerprint),
        provider.clone(),
    ));
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| e.to_string())?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    tls.alpn_protocols = vec![alpn.to_vec()];
    let crypto =
        quinn::crypto::rustls::QuicClientConfig::try_from(tls).map_err(|e| e.to_string())?;
    let mut endpoint = quinn::Endpoint::client("127.0.0.1:0".parse().expect("address"))
        .map_err(|e| e.to_string())?;
    endpoint.set_default_client_config(quinn::ClientConfig::new(Arc::new(crypto)));
    let addr = server.addr.parse().expect("server address");
    endpoint
        .connect(addr, "lockstep")
        .map_err(|e| e.to_string())?
        .await
        .map_err(|e| e.to_string())
}

fn hello(name: &str, version: u16) -> Vec<u8> {
    encode_frame(&ClientMessage::Hello(Hello {
        protocol_version: version,
        name: name.into(),
        spectate: false,
        password: None,
        platform: Platform::default(),
        self_tests: vec![lockstep_protocol::SelfTest {
            game: "balls".into(),
            hash: lockstep_balls::self_test(),
            pinned: None,
        }],
        ready: true,
        resume: None,
    }))
    .expect("hello encodes")
}

/// Reads control messages until one matches, or the stream ends.
async fn read_until(
    recv: &mut quinn::RecvStream,
    reader: &mut FrameReader,
    wanted: impl Fn(&ServerMessage) -> bool,
) -> Option<ServerMessage> {
    let mut chunk = [0u8; 4096];
    loop {
        while let Ok(Some(message)) = reader.next_message::<ServerMessage>() {
            if wanted(&message) {
                return Some(message);
            }
        }
        match recv.read(&mut chunk).await {
            Ok(Some(n)) => reader.push(&chunk[..n]),
            _ => return None,
        }
    }
}

/// The reason a connection was closed with.
async fn close_reason(conn: &quinn::Connection) -> String {
    match tokio::time::timeout(Duration::from_secs(10), conn.closed()).await {
        Ok(quinn::ConnectionError::ApplicationClosed(close)) => {
            String::from_utf8_lossy(&close.reason).into_owned()
        }
        Ok(other) => other.to_string(),
        Err(_) => "still open".into(),
    }
}

fn input(buttons: Buttons) -> Input {
    Input {
        buttons,
        axes: None,
    }
}

/// The third player: plays along with marked inputs, sprinkles garbage,
/// out-of-window inputs and repeats, then floods. Returns why the server
/// disconnected it.
async fn mallory(server: &Server) -> String {
    let conn = connect(server, ALPN).await.expect("mallory connects");
    let (mut send, mut recv) = conn.open_bi().await.expect("stream");
    send.write_all(&hello("mallory", PROTOCOL_VERSION))
        .await
        .expect("hello");
    let mut reader = FrameReader::new();
    let Some(ServerMessage::Start(start)) = read_until(&mut recv, &mut reader, |m| {
        matches!(m, ServerMessage::Start(_))
    })
    .await
    else {
        panic!("mallory never got Start");
    };
    assert!(start.you.is_some());
    let mut bundles_ack = Tick(0);
    let mut next_input = 0u32;
    let mut garbage = 0x1234_5678_u64;
    let mut pace = tokio::time::interval(Duration::from_millis(16));
    for round in 0..300u32 {
        pace.tick().await;
        // Keep up with the game: inputs up to our ack plus the delay.
        while let Ok(Ok(bytes)) =
            tokio::time::timeout(Duration::from_millis(1), conn.read_datagram()).await
        {
            if let Ok(ServerDatagram::Bundles(d)) = decode(&bytes, MAX_DATAGRAM_SIZE) {
                let end = d.first_tick.plus(d.bundles.len() as u32);
                if d.first_tick <= bundles_ack && end > bundles_ack {
                    bundles_ack = end;
                }
            }
        }
        let through = bundles_ack.0 + u32::from(start.input_delay);
        let mut inputs = Vec::new();
        let first = next_input;
        while next_input < through {
            inputs.push(input(MARK));
            next_input += 1;
        }
        let honest = ClientDatagram::Inputs(InputDatagram {
            bundles_ack,
            first_tick: Tick(first),
            inputs,
        });
        let bytes = encode(&honest, MAX_DATAGRAM_SIZE).expect("encodes");
        let _ = conn.send_datagram(Bytes::from(bytes));
        // Garbage bytes.
        garbage = garbage.wrapping_mul(6364136223846793005).wrapping_add(1);
        let _ = conn.send_datagram(Bytes::from(garbage.to_le_bytes().repeat(3)));
        if round % 50 == 0 {
            // Per-tick hashes nobody asked for (no desync is pending):
            // a long answer, an empty one, one past the end of time.
            for (first_tick, count) in [(0, 5000), (10, 0), (u32::MAX, 3)] {
                let answer = ClientMessage::TickHashes {
                    tick: Tick(15),
                    first_tick: Tick(first_tick),
                    hashes: vec![u64::MAX; count],
                };
                let frame = encode_frame(&answer).expect("encodes");
                send.write_all(&frame).await.expect("tick hashes");
            }
            // Changing its mind about being ready, mid-game: ignored.
            for ready in [false, true, false] {
                let frame = encode_frame(&ClientMessage::Ready(ready)).expect("encodes");
                send.write_all(&frame).await.expect("ready");
            }
        }
        if round % 10 == 0 && next_input >= 5 {
            // Inputs far outside the window, and repeats of the last five
            // ticks already sent, with other buttons (the first input of a
            // tick wins).
            for first_tick in [Tick(next_input + 100_000), Tick(next_input - 5)] {
                let odd = ClientDatagram::Inputs(InputDatagram {
                    bundles_ack,
                    first_tick,
                    inputs: vec![input(Buttons::ALL); 5],
                });
                let bytes = encode(&odd, MAX_DATAGRAM_SIZE).expect("encodes");
                let _ = conn.send_datagram(Bytes::from(bytes));
            }
        }
    }
    // The flood.
    for _ in 0..5000 {
        if conn.send_datagram(Bytes::from_static(&[0u8; 32])).is_err() {
            break;
        }
        tokio::task::yield_now().await;
    }
    close_reason(&conn).await
}

#[test]
fn hostile_peers_leave_honest_players_in_lockstep_and_the_server_running() {
    let server = Server::start(3, &["--seed", "61"]);
    let rt = runtime();

    // Before the game: a wrong ALPN, a wrong version, garbage, an
    // oversized frame, and a connection that never says Hello.
    let (alpn, version, garbage, oversized, silent) = rt.block_on(async {
        let alpn = connect(&server, b"not-lockstep").await;
        let version = async {
            let conn = connect(&server, ALPN).await.expect("connects");
            let (mut send, mut recv) = conn.open_bi().await.expect("stream");
            send.write_all(&hello("old", 999)).await.expect("hello");
            read_until(&mut recv, &mut FrameReader::new(), |_| true).await
        }
        .await;
        let garbage = async {
            let conn = connect(&server, ALPN).await.expect("connects");
            let (mut send, _recv) = conn.open_bi().await.expect("stream");
            let mut junk = 9u32.to_le_bytes().to_vec();
            junk.extend_from_slice(&[0xde, 0xad, 0xbe, 0xef, 0xff, 0xff, 0xff, 0xff, 0x01]);
            send.write_all(&junk).await.expect("junk");
            close_reason(&conn).await
        }
        .await;
        let oversized = async {
            let conn = connect(&server, ALPN).await.expect("connects");
            let (mut send, _recv) = conn.open_bi().await.expect("stream");
            send.write_all(&u32::MAX.to_le_bytes())
                .await
                .expect("length");
            send.write_all(&[0u8; 1024]).await.expect("body");
            close_reason(&conn).await
        }
        .await;
        let silent = connect(&server, ALPN).await.expect("connects");
        (alpn, version, garbage, oversized, silent)
    });
    assert!(alpn.is_err(), "a wrong ALPN must not connect");
    let Some(ServerMessage::Refused(refusal)) = version else {
        panic!("no refusal for version 999: {version:?}");
    };
    assert!(
        refusal.reason.contains("protocol version mismatch"),
        "{}",
        refusal.reason
    );
    assert!(garbage.contains("malformed control message"), "{garbage}");
    assert!(oversized.contains("exceeds the limit"), "{oversized}");

    // The game: two honest bots and mallory.
    let honest: Vec<Client> = (0..2)
        .map(|i| Client::headless_bot(&server, &format!("honest{i}"), i, 900))
        .collect();
    let (flood_reason, impostor) = rt.block_on(async {
        let impostor = async {
            tokio::time::sleep(Duration::from_secs(3)).await;
            let conn = connect(&server, ALPN).await.expect("connects");
            let (mut send, mut recv) = conn.open_bi().await.expect("stream");
            send.write_all(&hello("honest0", PROTOCOL_VERSION))
                .await
                .expect("hello");
            read_until(&mut recv, &mut FrameReader::new(), |m| {
                matches!(m, ServerMessage::Refused(_))
            })
            .await
        };
        tokio::join!(mallory(&server), impostor)
    });
    assert!(
        flood_reason.contains("too many datagrams"),
        "{flood_reason}"
    );
    let Some(ServerMessage::Refused(refusal)) = impostor else {
        panic!("the impostor was not refused: {impostor:?}");
    };
    assert!(
        refusal.reason.contains("still connected"),
        "{}",
        refusal.reason
    );
    let silent_reason = rt.block_on(close_reason(&silent));
    assert!(silent_reason.contains("no Hello within"), "{silent_reason}");

    let finals: Vec<(u32, String)> = honest
        .into_iter()
        .map(|c| c.finish(Duration::from_secs(60)).final_line())
        .collect();
    assert_eq!(finals[0], finals[1]);
    assert_eq!(finals[0].0, 900);

    // The server is still up, and its log says what happened.
    let mut server = server;
    assert!(server.child.try_wait().expect("status").is_none());
    for needle in [
        "QUIC handshake failed",
        "protocol version mismatch",
        "malformed control message",
        "exceeds the limit",
        "malformed datagrams ignored",
        "too many datagrams",
        "no Hello within",
        "reconnection refused",
    ] {
        server.wait_for_log(needle, Duration::from_secs(5));
    }
    // Mallory's inputs may also have been stood in for ("replaced ...
    // name=mallory") before the drop: only the drop's line counts here.
    let dropped = server.wait_for_line(
        "dropped ... name=mallory",
        |line| line.starts_with("dropped ") && line.contains(" name=mallory tick="),
        Duration::from_secs(10),
    );
    assert!(dropped.contains("reason="), "{dropped}");
    // The log counts the inputs it ignored: mallory's changed repeats.
    let logged = server
        .log()
        .into_iter()
        .find(|l| l.contains("player dropped") && l.contains("name=mallory"))
        .expect("mallory's drop is logged");
    let conflicting: u32 = logged
        .split_whitespace()
        .find_map(|f| f.strip_prefix("conflicting_ignored="))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no count in {logged}"));
    assert!(conflicting > 0, "{logged}");

    // Nobody acted for another player: mallory's marked inputs appear
    // only in mallory's slot of the recorded bundles.
    server.wait_for("game over", Duration::from_secs(20));
    let file = std::fs::read_dir(&server.replays.0)
        .expect("replay dir")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .next()
        .expect("a replay");
    let replay = read_replay(&file);
    let mallory_id = slot_of(&replay, "mallory");
    let mut marked = 0;
    for bundle in &replay.bundles {
        for entry in &bundle.inputs {
            if entry.input.buttons.contains(MARK) {
                assert_eq!(entry.player, mallory_id, "a marked input in another slot");
                marked += 1;
            }
            if entry.player == mallory_id {
                // Repeats and far-ahead inputs never replaced the first.
                assert_ne!(entry.input.buttons, Buttons::ALL);
            }
        }
    }
    assert!(
        marked > 100,
        "only {marked} of mallory's inputs were bundled"
    );
}

#[test]
fn two_hundred_unfinished_handshakes_leave_the_server_small_and_working() {
    let server = Server::start(2, &["--seed", "62"]);
    let before = server.rss_kib();
    let rt = runtime();
    // A client whose incoming packets are all lost sends its first flight
    // over and over and never completes a handshake: the server holds a
    // half-open connection for each.
    let during = rt.block_on(async {
        let lost = lockstep_conditioner::LinkConfig {
            loss: 1.0,
            ..Default::default()
        };
        let mut attempts = Vec::new();
        for _ in 0..200 {
            let (endpoint, _) = lockstep_conditioner::endpoint(
                quinn::EndpointConfig::default(),
                None,
                "127.0.0.1:0".parse().expect("address"),
                lockstep_conditioner::LinkConfig::default(),
                lost,
            )
            .expect("endpoint");
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            let verifier = Arc::new(FingerprintVerifier::new(None, provider.clone()));
            let mut tls = rustls::ClientConfig::builder_with_provider(provider)
                .with_protocol_versions(&[&rustls::version::TLS13])
                .expect("tls")
                .dangerous()
                .with_custom_certificate_verifier(verifier)
                .with_no_client_auth();
            tls.alpn_protocols = vec![ALPN.to_vec()];
            let crypto = quinn::crypto::rustls::QuicClientConfig::try_from(tls).expect("quic");
            let config = quinn::ClientConfig::new(Arc::new(crypto));
            let connecting = endpoint
                .connect_with(config, server.addr.parse().expect("addr"), "lockstep")
                .expect("connect");
            attempts.push((endpoint, connecting));
        }
        tokio::time::sleep(Duration::from_secs(3)).await;
        let during = server.rss_kib();
        drop(attempts);
        during
    });
    // Half-open connections are abandoned at the Hello deadline (5 s).
    std::thread::sleep(Duration::from_secs(6));
    let growth = during.saturating_sub(before);
    println!("server RSS: {before} KiB before, {during} KiB with 200 half-open handshakes (+{growth} KiB)");
    assert!(growth < 16 * 1024, "the server grew by {growth} KiB");
    server.wait_for_log(
        "too many connections without a Hello",
        Duration::from_secs(5),
    );

    // And it still serves a game.
    let finals: Vec<(u32, String)> = (0..2)
        .map(|i| Client::headless_bot(&server, &format!("after{i}"), i, 300))
        .collect::<Vec<_>>()
        .into_iter()
        .map(|c| c.finish(Duration::from_secs(60)).final_line())
        .collect();
    assert_eq!(finals[0], finals[1]);
}
