//! The web door's HTTP, as pure functions: the request head parsed, the
//! page's files looked up, the answer written out.
//!
//! The rules it keeps, each tested below:
//! - a request head is at most [`MAX_HEAD`] bytes; a longer one is
//!   answered and the connection closed;
//! - only `GET` and `HEAD`; one request per connection;
//! - a file is served only from the table built at startup
//!   ([`WebFiles`]): a request target is looked up in it as a name, never
//!   joined to a path, so `..`, percent-encoded dots, absolute-form
//!   targets, `//` and backslashes name no file and get 404;
//! - `GET /ws` with a valid WebSocket upgrade gets `101 Switching
//!   Protocols` and the `Sec-WebSocket-Accept` RFC 6455 asks for.
//!
//! `io/web.rs` owns the sockets and carries out what this decides.

use std::collections::BTreeMap;
use std::io::Write;

use base64::Engine;
use bytes::Bytes;
use lockstep_protocol::WEB_SOCKET_PATH;

/// The largest request head read: a browser's is under 2 KiB, and a
/// bounded head keeps a slow or hostile peer from costing memory.
pub(crate) const MAX_HEAD: usize = 8 * 1024;

/// The page the root (`/`) serves.
const INDEX: &str = "index.html";

/// The file whose text is the hosted game's name, which the page reads to
/// choose its wasm module; made by the server, never read from the page's
/// directory.
pub(crate) const HOSTED_GAME: &str = "hosted-game.txt";

/// The GUID RFC 6455 appends to a client's key to prove the server speaks
/// WebSocket.
const WEBSOCKET_GUID: &str = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/// The page's files, in memory: every name the door can serve.
#[derive(Debug, Default)]
pub(crate) struct WebFiles {
    files: BTreeMap<String, WebFile>,
}

#[derive(Debug)]
struct WebFile {
    content_type: &'static str,
    plain: Bytes,
    /// The gzip of the file, when it is smaller.
    gzip: Option<Bytes>,
}

impl WebFiles {
    /// The table of `entries` (a file name and its bytes): those whose
    /// name [`is_servable`] is, each with its gzip if that is smaller.
    pub(crate) fn new(entries: impl IntoIterator<Item = (String, Vec<u8>)>) -> WebFiles {
        let files = entries
            .into_iter()
            .filter(|(name, _)| is_servable(name))
            .map(|(name, bytes)| {
                let gzip = gzip(&bytes).filter(|packed| packed.len() < bytes.len());
                let file = WebFile {
                    content_type: content_type(&name),
                    plain: Bytes::from(bytes),
                    gzip: gzip.map(Bytes::from),
                };
                (name, file)
            })
            .collect();
        WebFiles { files }
    }

    /// Serves `game`'s name as [`HOSTED_GAME`], in place of any file of
    /// that name; a name no game could have is not served.
    pub(crate) fn host(&mut self, game: &str) {
        let file = lockstep_protocol::check_game_name(game)
            .ok()
            .map(|()| WebFile {
                content_type: content_type(HOSTED_GAME),
                plain: Bytes::from(game.to_string()),
                gzip: None,
            });
        match file {
            Some(file) => self.files.insert(HOSTED_GAME.to_string(), file),
            None => self.files.remove(HOSTED_GAME),
        };
    }

    /// Whether the page itself (`index.html`) is there.
    pub(crate) fn has_page(&self) -> bool {
        self.files.contains_key(INDEX)
    }

    /// The file a request target names, if the table has it.
    fn lookup(&self, target: &str) -> Option<&WebFile> {
        let path = target.split(['?', '#']).next().unwrap_or_default();
        let name = match path.strip_prefix('/')? {
            "" => INDEX,
            name => name,
        };
        is_servable(name).then(|| self.files.get(name)).flatten()
    }
}

/// Whether a file name may be served: letters, digits, `.`, `_` and `-`
/// only, not hidden (no leading dot, so never `.` or `..`).
pub(crate) fn is_servable(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

fn content_type(name: &str) -> &'static str {
    let extension = name.rsplit_once('.').map_or("", |(_, ext)| ext);
    match extension {
        "html" | "htm" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript",
        "wasm" => "application/wasm",
        "css" => "text/css",
        "png" => "image/png",
        "svg" => "image/svg+xml",
        "json" => "application/json",
        "ico" => "image/x-icon",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

fn gzip(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(bytes).ok()?;
    encoder.finish().ok()
}

/// The method of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Method {
    Get,
    Head,
    Other,
}

/// A request head, with the headers the door reads.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Request {
    method: Option<Method>,
    target: String,
    upgrade: Option<String>,
    connection: Option<String>,
    websocket_key: Option<String>,
    websocket_version: Option<String>,
    accept_encoding: Option<String>,
}

/// Why a request head is not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HeadError {
    /// Over [`MAX_HEAD`] bytes, and its first line already: the target is
    /// longer than any file name, so it names none.
    TargetTooLong,
    /// Over [`MAX_HEAD`] bytes.
    TooLarge,
    /// Not HTTP/1.x.
    Malformed,
}

/// Reads a request head from the bytes received so far: `Ok(None)` while
/// it is incomplete and within [`MAX_HEAD`].
pub(crate) fn parse_head(received: &[u8]) -> Result<Option<Request>, HeadError> {
    let end = received.windows(4).position(|w| w == b"\r\n\r\n");
    let too_large = match end {
        Some(end) => end + 4 > MAX_HEAD,
        None => received.len() >= MAX_HEAD,
    };
    if too_large {
        let first_line_fits = received.iter().take(MAX_HEAD).any(|&b| b == b'\n');
        return Err(if first_line_fits {
            HeadError::TooLarge
        } else {
            HeadError::TargetTooLong
        });
    }
    let Some(end) = end else {
        return Ok(None);
    };
    let head = std::str::from_utf8(&received[..end]).map_err(|_| HeadError::Malformed)?;
    let mut lines = head.split("\r\n");
    let mut words = lines.next().unwrap_or_default().split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (words.next(), words.next(), words.next(), words.next())
    else {
        return Err(HeadError::Malformed);
    };
    if !version.starts_with("HTTP/1.") || target.is_empty() {
        return Err(HeadError::Malformed);
    }
    let mut request = Request {
        method: Some(match method {
            "GET" => Method::Get,
            "HEAD" => Method::Head,
            _ => Method::Other,
        }),
        target: target.to_string(),
        ..Request::default()
    };
    for line in lines {
        let (name, value) = line.split_once(':').ok_or(HeadError::Malformed)?;
        let value = Some(value.trim().to_string());
        match name.trim().to_ascii_lowercase().as_str() {
            "upgrade" => request.upgrade = value,
            "connection" => request.connection = value,
            "sec-websocket-key" => request.websocket_key = value,
            "sec-websocket-version" => request.websocket_version = value,
            "accept-encoding" => request.accept_encoding = value,
            _ => {}
        }
    }
    Ok(Some(request))
}

/// Whether a comma-separated header value has `token` (any case).
fn has_token(value: Option<&str>, token: &str) -> bool {
    value.is_some_and(|v| {
        v.split(',').any(|t| {
            t.split(';')
                .next()
                .is_some_and(|t| t.trim().eq_ignore_ascii_case(token))
        })
    })
}

/// What the door answers.
#[derive(Debug)]
pub(crate) struct Reply {
    /// The status line and headers, ending with the blank line.
    pub(crate) head: String,
    /// The body (empty for `HEAD`).
    pub(crate) body: Bytes,
    /// The connection becomes a WebSocket after the head.
    pub(crate) upgrade: bool,
}

/// The answer to `request`.
pub(crate) fn route(request: &Request, files: &WebFiles) -> Reply {
    let method = request.method.unwrap_or(Method::Other);
    if method == Method::Other {
        return error("405 Method Not Allowed", "Allow: GET, HEAD\r\n");
    }
    let path = request.target.split(['?', '#']).next().unwrap_or_default();
    if path == WEB_SOCKET_PATH {
        return upgrade(request, method);
    }
    let Some(file) = files.lookup(&request.target) else {
        return error("404 Not Found", "");
    };
    let (body, encoding) = match &file.gzip {
        Some(gzip) if has_token(request.accept_encoding.as_deref(), "gzip") => {
            (gzip.clone(), "Content-Encoding: gzip\r\n")
        }
        _ => (file.plain.clone(), ""),
    };
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: {}\r\nContent-Length: {}\r\n{encoding}\
         Vary: Accept-Encoding\r\nCache-Control: no-cache\r\nX-Content-Type-Options: nosniff\r\n\
         Connection: close\r\n\r\n",
        file.content_type,
        body.len()
    );
    let body = if method == Method::Head {
        Bytes::new()
    } else {
        body
    };
    Reply {
        head,
        body,
        upgrade: false,
    }
}

/// The answer to a request for the WebSocket endpoint.
fn upgrade(request: &Request, method: Method) -> Reply {
    let key = request.websocket_key.as_deref().filter(|key| {
        base64::engine::general_purpose::STANDARD
            .decode(key)
            .is_ok_and(|nonce| nonce.len() == 16)
    });
    let valid = method == Method::Get
        && has_token(request.upgrade.as_deref(), "websocket")
        && has_token(request.connection.as_deref(), "upgrade");
    let (true, Some(key)) = (valid, key) else {
        return error("400 Bad Request", "");
    };
    if request.websocket_version.as_deref() != Some("13") {
        return error("426 Upgrade Required", "Sec-WebSocket-Version: 13\r\n");
    }
    Reply {
        head: format!(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Accept: {}\r\n\r\n",
            accept_key(key)
        ),
        body: Bytes::new(),
        upgrade: true,
    }
}

/// The answer to a head that could not be read.
pub(crate) fn refuse_head(error: HeadError) -> Reply {
    match error {
        HeadError::TargetTooLong => self::error("404 Not Found", ""),
        HeadError::TooLarge => self::error("431 Request Header Fields Too Large", ""),
        HeadError::Malformed => self::error("400 Bad Request", ""),
    }
}

/// An error answer with `status` as its text body and `extra` headers.
fn error(status: &str, extra: &str) -> Reply {
    let body = Bytes::from(format!("{status}\n"));
    Reply {
        head: format!(
            "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\n\
             Content-Length: {}\r\n{extra}X-Content-Type-Options: nosniff\r\n\
             Connection: close\r\n\r\n",
            body.len()
        ),
        body,
        upgrade: false,
    }
}

/// The `Sec-WebSocket-Accept` for a client's `Sec-WebSocket-Key`: the
/// base64 of the SHA-1 of the key and the protocol's GUID (RFC 6455, 4.2.2).
pub(crate) fn accept_key(key: &str) -> String {
    let mut context = ring::digest::Context::new(&ring::digest::SHA1_FOR_LEGACY_USE_ONLY);
    context.update(key.as_bytes());
    context.update(WEBSOCKET_GUID.as_bytes());
    base64::engine::general_purpose::STANDARD.encode(context.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files() -> WebFiles {
        WebFiles::new([
            ("index.html".to_string(), b"<!doctype html>".repeat(40)),
            ("game.wasm".to_string(), vec![0, 97, 115, 109]),
            ("game.js".to_string(), b"export {}".to_vec()),
            (".secret".to_string(), b"hidden".to_vec()),
            ("a b".to_string(), b"spaced".to_vec()),
        ])
    }

    fn get(target: &str) -> Reply {
        let head = format!("GET {target} HTTP/1.1\r\nHost: x\r\n\r\n");
        match parse_head(head.as_bytes()) {
            Ok(Some(request)) => route(&request, &files()),
            Ok(None) => panic!("incomplete head for {target:?}"),
            Err(e) => refuse_head(e),
        }
    }

    fn status(reply: &Reply) -> &str {
        reply.head.lines().next().unwrap_or_default()
    }

    fn header<'a>(reply: &'a Reply, name: &str) -> Option<&'a str> {
        reply
            .head
            .lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix(": "))
    }

    #[test]
    fn the_hosted_game_is_served_by_name_in_place_of_a_file_of_the_page() {
        let mut table = WebFiles::new([
            ("index.html".to_string(), b"<!doctype html>".to_vec()),
            (HOSTED_GAME.to_string(), b"from the directory".to_vec()),
        ]);
        table.host("physics");
        let head = format!("GET /{HOSTED_GAME} HTTP/1.1\r\nHost: x\r\n\r\n");
        let request = parse_head(head.as_bytes())
            .expect("a valid head")
            .expect("a whole head");
        let reply = route(&request, &table);
        assert_eq!(status(&reply), "HTTP/1.1 200 OK");
        assert_eq!(
            header(&reply, "Content-Type"),
            Some("text/plain; charset=utf-8")
        );
        assert_eq!(&reply.body[..], b"physics");
        // A name no game could have is not served, not even the page's
        // own file of that name.
        table.host("../etc");
        assert_eq!(status(&route(&request, &table)), "HTTP/1.1 404 Not Found");
    }

    #[test]
    fn the_root_serves_the_page_and_files_carry_their_type() {
        let page = get("/");
        assert_eq!(status(&page), "HTTP/1.1 200 OK");
        assert_eq!(
            header(&page, "Content-Type"),
            Some("text/html; charset=utf-8")
        );
        assert_eq!(header(&page, "Content-Length"), Some("600"));
        assert_eq!(header(&page, "Cache-Control"), Some("no-cache"));
        assert_eq!(header(&page, "X-Content-Type-Options"), Some("nosniff"));
        assert_eq!(header(&page, "Connection"), Some("close"));
        assert_eq!(page.body.len(), 600);
        let wasm = get("/game.wasm?v=3");
        assert_eq!(header(&wasm, "Content-Type"), Some("application/wasm"));
        assert_eq!(&wasm.body[..], &[0, 97, 115, 109]);
        assert_eq!(
            header(&get("/game.js"), "Content-Type"),
            Some("text/javascript")
        );
    }

    #[test]
    fn path_tricks_name_no_file() {
        for target in [
            "/../Cargo.toml",
            "/..",
            "/%2e%2e/%2e%2e/etc/passwd",
            "/etc/passwd",
            "http://x/../../etc/passwd",
            "http://x/index.html",
            "//index.html",
            "/.\\index.html",
            "/\\index.html",
            "/./index.html",
            "/.secret",
            "/a%20b",
            "/index.html/",
            "/nothing.html",
            "*",
        ] {
            assert_eq!(status(&get(target)), "HTTP/1.1 404 Not Found", "{target}");
        }
        assert!(
            !files().files.contains_key("a b"),
            "names are checked at load"
        );
    }

    #[test]
    fn a_head_is_bounded() {
        assert_eq!(parse_head(b"GET / HTTP/1.1\r\nHost: x\r\n"), Ok(None));
        let long_path = format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(100_000));
        assert_eq!(
            parse_head(long_path.as_bytes()).err(),
            Some(HeadError::TargetTooLong)
        );
        assert_eq!(
            status(&get(&format!("/{}", "a".repeat(100_000)))),
            "HTTP/1.1 404 Not Found"
        );
        assert_eq!(
            status(&get(&format!("/{}", "a".repeat(5000)))),
            "HTTP/1.1 404 Not Found"
        );
        let mut many = b"GET / HTTP/1.1\r\n".to_vec();
        while many.len() < MAX_HEAD {
            many.extend_from_slice(b"X-Filler: 0123456789\r\n");
        }
        assert_eq!(parse_head(&many).err(), Some(HeadError::TooLarge));
        many.extend_from_slice(b"\r\n");
        assert_eq!(parse_head(&many).err(), Some(HeadError::TooLarge));
        assert_eq!(
            status(&refuse_head(HeadError::TooLarge)),
            "HTTP/1.1 431 Request Header Fields Too Large"
        );
        for garbage in [
            &b"\x16\x03\x01\r\n\r\n"[..],
            b"GET /\r\n\r\n",
            b"GET / SPDY\r\n\r\n",
        ] {
            assert_eq!(parse_head(garbage).err(), Some(HeadError::Malformed));
        }
    }

    #[test]
    fn only_get_and_head_are_answered() {
        let head = parse_head(b"HEAD /game.js HTTP/1.1\r\n\r\n")
            .unwrap()
            .unwrap();
        let reply = route(&head, &files());
        assert_eq!(header(&reply, "Content-Length"), Some("9"));
        assert!(reply.body.is_empty());
        for method in ["POST", "PUT", "DELETE", "OPTIONS", "get"] {
            let head = format!("{method} / HTTP/1.1\r\n\r\n");
            let reply = route(&parse_head(head.as_bytes()).unwrap().unwrap(), &files());
            assert_eq!(
                status(&reply),
                "HTTP/1.1 405 Method Not Allowed",
                "{method}"
            );
        }
    }

    #[test]
    fn gzip_goes_only_to_who_accepts_it_and_only_when_smaller() {
        let with = |target: &str| {
            let head =
                format!("GET {target} HTTP/1.1\r\nAccept-Encoding: deflate, gzip;q=1\r\n\r\n");
            route(&parse_head(head.as_bytes()).unwrap().unwrap(), &files())
        };
        let page = with("/");
        assert_eq!(header(&page, "Content-Encoding"), Some("gzip"));
        assert!(page.body.len() < 600);
        assert_eq!(header(&get("/"), "Content-Encoding"), None);
        assert_eq!(
            header(&with("/game.wasm"), "Content-Encoding"),
            None,
            "4 bytes"
        );
    }

    #[test]
    fn a_websocket_upgrade_is_recognised_and_answered() {
        let head = b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n\
            Connection: keep-alive, Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
            Sec-WebSocket-Version: 13\r\n\r\n";
        let reply = route(&parse_head(head).unwrap().unwrap(), &files());
        assert!(reply.upgrade);
        assert_eq!(status(&reply), "HTTP/1.1 101 Switching Protocols");
        assert_eq!(
            header(&reply, "Sec-WebSocket-Accept"),
            Some("s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        );
        let plain = get("/ws");
        assert!(!plain.upgrade);
        assert_eq!(status(&plain), "HTTP/1.1 400 Bad Request");
        let old = b"GET /ws HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
            Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 8\r\n\r\n";
        let reply = route(&parse_head(old).unwrap().unwrap(), &files());
        assert_eq!(status(&reply), "HTTP/1.1 426 Upgrade Required");
        let short_key = b"GET /ws HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
            Sec-WebSocket-Key: c2hvcnQ=\r\nSec-WebSocket-Version: 13\r\n\r\n";
        assert!(!route(&parse_head(short_key).unwrap().unwrap(), &files()).upgrade);
    }

    #[test]
    fn the_accept_key_is_rfc_6455s() {
        // The example of RFC 6455, section 1.3.
        assert_eq!(
            accept_key("dGhlIHNhbXBsZSBub25jZQ=="),
            "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        );
    }
}
