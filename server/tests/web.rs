//! The web door against a real server: hostile HTTP requests and broken
//! WebSockets while two bots play, and Hellos over the WebSocket that the
//! server refuses. Each bad connection closes alone; the game never
//! notices.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use lockstep_protocol::{
    decode, encode, ClientMessage, Hello, Platform, ServerMessage, WebMessage, MAX_MESSAGE_SIZE,
    MAX_WEB_MESSAGE, PROTOCOL_VERSION, WEB_CLOSE_BASE,
};
use lockstep_server::MAX_WEB_CONNECTIONS;
use lockstep_testkit::{clock, finish_in_lockstep, Client, Server, TempDir};
use tokio_tungstenite::tungstenite::protocol::Role;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

/// The last guard of every read: a generous bound on a busy machine, never
/// the thing a test measures.
const GUARD: Duration = Duration::from_secs(30);

const PAGE: &str = "<!doctype html><title>lockstep</title>";

/// A web directory with a page and a script.
fn web_dir() -> TempDir {
    let dir = TempDir::new("web");
    std::fs::write(dir.0.join("index.html"), PAGE).expect("page written");
    std::fs::write(dir.0.join("app.js"), "export {};").expect("script written");
    dir
}

fn connect(addr: &str) -> TcpStream {
    let stream = TcpStream::connect(addr).expect("the web door accepts");
    stream.set_read_timeout(Some(GUARD)).expect("timeout set");
    stream
}

/// Everything the server sends until it closes; a reset counts as the
/// end (a server that closed on a peer still writing may reset).
fn read_to_end(stream: &mut TcpStream) -> String {
    let mut received = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        match stream.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => received.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
            Err(e) => panic!("the server neither answered nor closed: {e}"),
        }
    }
    String::from_utf8_lossy(&received).into_owned()
}

/// Sends `request` and returns the whole answer.
fn ask(addr: &str, request: &[u8]) -> String {
    let mut stream = connect(addr);
    // A server that answers early may close before all of it is written.
    let _ = stream.write_all(request);
    read_to_end(&mut stream)
}

fn get(addr: &str, target: &str) -> String {
    ask(
        addr,
        format!("GET {target} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes(),
    )
}

fn status(answer: &str) -> &str {
    answer.lines().next().unwrap_or_default()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

type Socket = WebSocketStream<tokio::net::TcpStream>;

/// A WebSocket to the server's `/ws`, upgraded by hand.
async fn websocket(addr: &str) -> Socket {
    let mut stream = tokio::net::TcpStream::connect(addr)
        .await
        .expect("the web door accepts");
    let request = "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
                   Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
    tokio::io::AsyncWriteExt::write_all(&mut stream, request.as_bytes())
        .await
        .expect("upgrade sent");
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let mut byte = [0u8; 1];
        let n = tokio::io::AsyncReadExt::read(&mut stream, &mut byte)
            .await
            .expect("upgrade answered");
        assert_eq!(n, 1, "closed during the upgrade: {head:?}");
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head);
    assert!(head.starts_with("HTTP/1.1 101 "), "{head}");
    assert!(
        head.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"),
        "{head}"
    );
    WebSocketStream::from_raw_socket(stream, Role::Client, None).await
}

/// What the server sent until it closed: its control messages and the
/// close frame's code and reason.
async fn until_closed(socket: &mut Socket) -> (Vec<ServerMessage>, Option<(u16, String)>) {
    let mut messages = Vec::new();
    loop {
        let next = tokio::time::timeout(GUARD, socket.next()).await;
        match next.expect("the server closes the WebSocket") {
            Some(Ok(Message::Binary(bytes))) => {
                if let Ok(WebMessage::Control(body)) = WebMessage::parse(&bytes) {
                    messages.push(decode(body, MAX_MESSAGE_SIZE).expect("a server message"));
                }
            }
            Some(Ok(Message::Close(frame))) => {
                let close = frame.map(|f| (u16::from(f.code), f.reason.to_string()));
                return (messages, close);
            }
            Some(Ok(_)) => {}
            Some(Err(_)) | None => return (messages, None),
        }
    }
}

/// Sends one message and returns the close the server answers with.
async fn send_and_close(addr: &str, message: Message) -> Option<(u16, String)> {
    let mut socket = websocket(addr).await;
    // An oversized message may be refused while it is still being sent.
    let _ = socket.send(message).await;
    until_closed(&mut socket).await.1
}

fn hello(version: u16, password: Option<&str>) -> Message {
    let hello = ClientMessage::Hello(Hello {
        protocol_version: version,
        name: "browser".into(),
        spectate: false,
        password: password.map(str::to_string),
        platform: Platform::default(),
        self_tests: vec![lockstep_protocol::SelfTest {
            game: "balls".into(),
            hash: lockstep_balls::self_test(),
            pinned: None,
        }],
        ready: true,
        resume: None,
    });
    let body = encode(&hello, MAX_MESSAGE_SIZE).expect("hello encodes");
    Message::Binary(WebMessage::Control(&body).to_bytes().into())
}

/// The Refused message and the close a Hello gets.
fn refused(server: &mut Server, message: Message) -> (String, (u16, String)) {
    let addr = server.web_addr();
    let (messages, close) = runtime().block_on(async {
        let mut socket = websocket(&addr).await;
        socket.send(message).await.expect("hello sent");
        until_closed(&mut socket).await
    });
    let reason = match messages.as_slice() {
        [ServerMessage::Refused(refusal)] => refusal.reason.clone(),
        other => panic!("not one Refused message: {other:?}"),
    };
    (reason, close.expect("a close frame"))
}

#[test]
fn hostile_web_peers_close_only_their_own_connection_while_a_game_plays() {
    let dir = web_dir();
    let dir_arg = dir.0.to_str().expect("a UTF-8 path");
    let mut server = Server::start(2, &["--seed", "71", "--web-dir", dir_arg]);
    let addr = server.web_addr();
    let bots: Vec<Client> = (0..2)
        .map(|i| Client::headless_bot(&server, &format!("bot{i}"), i, 900))
        .collect();

    let page = get(&addr, "/");
    assert_eq!(status(&page), "HTTP/1.1 200 OK", "{page}");
    assert!(
        page.contains("Content-Type: text/html; charset=utf-8\r\n"),
        "{page}"
    );
    assert!(page.ends_with(PAGE), "{page}");
    let script = get(&addr, "/app.js?v=1");
    assert!(
        script.contains("Content-Type: text/javascript\r\n"),
        "{script}"
    );

    let long_path = format!("/{}", "a".repeat(100 * 1024));
    for target in [
        "/../Cargo.toml",
        "/%2e%2e/%2e%2e/etc/passwd",
        "/etc/passwd",
        "http://x/../../etc/passwd",
        "//etc/passwd",
        "/..\\..\\Cargo.toml",
        &long_path,
    ] {
        let answer = get(&addr, target);
        assert_eq!(
            status(&answer),
            "HTTP/1.1 404 Not Found",
            "{}",
            &target[..target.len().min(40)]
        );
    }

    let mut endless = b"GET / HTTP/1.1\r\n".to_vec();
    while endless.len() <= 9 * 1024 {
        endless.extend_from_slice(b"X-Filler: 0123456789abcdef\r\n");
    }
    let answer = ask(&addr, &endless);
    assert_eq!(
        status(&answer),
        "HTTP/1.1 431 Request Header Fields Too Large"
    );

    // A connection that says nothing is closed by the server.
    let mut silent = connect(&addr);
    assert_eq!(read_to_end(&mut silent), "");

    let rt = runtime();
    let protocol = Some(WEB_CLOSE_BASE + 3);
    let garbage = rt.block_on(send_and_close(&addr, Message::Binary(vec![9, 9, 9].into())));
    assert_eq!(garbage.as_ref().map(|c| c.0), protocol, "{garbage:?}");
    let text = rt.block_on(send_and_close(&addr, Message::Text("hello".into())));
    assert_eq!(text.as_ref().map(|c| c.0), protocol, "{text:?}");
    let oversized = vec![0u8; MAX_WEB_MESSAGE + 100];
    let oversized = rt.block_on(send_and_close(&addr, Message::Binary(oversized.into())));
    assert!(matches!(oversized, None | Some((4003, _))), "{oversized:?}");

    // Beyond the cap, new connections are closed at once. This comes
    // last: the server frees the idle connections' places only as their
    // tasks see them close, so a connection made right after they go may
    // still find the door full.
    let idle: Vec<TcpStream> = (0..MAX_WEB_CONNECTIONS).map(|_| connect(&addr)).collect();
    let mut over = connect(&addr);
    let _ = over.write_all(b"GET / HTTP/1.1\r\n\r\n");
    assert_eq!(read_to_end(&mut over), "", "no answer beyond the cap");
    server.wait_for_log("too many web connections", GUARD);
    drop(idle);

    // Once they are gone the page is served again, and the game went on.
    let deadline = clock::now() + GUARD;
    loop {
        let answer = get(&addr, "/");
        if status(&answer) == "HTTP/1.1 200 OK" {
            break;
        }
        assert!(
            clock::now() < deadline,
            "the page is not served after the idle connections closed: {answer:?}"
        );
        // How often to ask again, not a wait for the answer.
        std::thread::sleep(Duration::from_millis(20));
    }
    let (finished, end) = finish_in_lockstep(bots, Duration::from_secs(120));
    assert_eq!(end.0, 900);
    for bot in &finished {
        assert!(!bot.stdout.contains("desync"), "{}", bot.stdout);
    }
    server.wait_for("game over", GUARD);
    assert!(
        !server.seen.iter().any(|line| line.contains("desync")),
        "{}",
        server.seen.join("\n")
    );
}

#[test]
fn a_hello_of_another_version_over_the_websocket_is_refused_naming_both() {
    let mut server = Server::start(2, &[]);
    let (reason, close) = refused(&mut server, hello(PROTOCOL_VERSION + 1, None));
    assert!(reason.contains("protocol version mismatch"), "{reason}");
    assert!(
        reason.contains(&format!("version {PROTOCOL_VERSION}")),
        "{reason}"
    );
    assert!(
        reason.contains(&format!("version {}", PROTOCOL_VERSION + 1)),
        "{reason}"
    );
    assert_eq!(close, (WEB_CLOSE_BASE + 2, reason));
    server.wait_for("refused remote=", GUARD);
}

#[test]
fn a_wrong_password_over_the_websocket_is_refused() {
    let mut server = Server::start(2, &["--password", "open sesame"]);
    let (reason, close) = refused(&mut server, hello(PROTOCOL_VERSION, Some("guess")));
    assert_eq!(reason, "wrong password");
    assert_eq!(close, (WEB_CLOSE_BASE + 2, reason));
}
