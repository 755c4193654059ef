//! Finding servers on the LAN: a server advertises itself, `list` finds
//! it with every field right, `--join NAME` plays a game, and a server
//! that shows up under a known name with another certificate is refused.
//!
//! The LAN is real: two network namespaces joined by a veth pair, made
//! and removed by the test (a broadcast domain of its own, 10.77.0.0/24,
//! reaching nothing else). Where namespaces cannot be made (not root, no
//! `ip`), the same tests run on loopback, saying so.

use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use lockstep_protocol::{verification_code, PROTOCOL_VERSION};
use lockstep_testkit::{client_bin, clock, field, server_bin, Client, Server, TempDir};

/// The server's address inside the test LAN.
const SERVER_IP: &str = "10.77.0.1";

/// The longest a server or client of these tests may take to say or do
/// what it is waited for: a last guard, far beyond what a loaded machine
/// needs.
const GUARD: Duration = Duration::from_secs(60);

/// Where the tests run their servers and clients.
enum Lan {
    /// Two namespaces joined by a veth pair: the server in `server`, the
    /// clients in `clients`. Removed when dropped, whatever the test did.
    Namespaces { server: String, clients: String },
    /// This machine's loopback, discovery limited to it.
    Loopback,
}

impl Lan {
    /// A fresh pair of namespaces, or loopback with a note where they
    /// cannot be made.
    fn new() -> Lan {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let tag = format!("{}{n}", std::process::id() % 1_000_000);
        let (server, clients) = (format!("lsd{tag}s"), format!("lsd{tag}c"));
        let lan = Lan::Namespaces {
            server: server.clone(),
            clients: clients.clone(),
        };
        let (veth_s, veth_c) = (format!("v{tag}s"), format!("v{tag}c"));
        let steps: Vec<Vec<&str>> = vec![
            vec!["netns", "add", &server],
            vec!["netns", "add", &clients],
            vec![
                "link", "add", &veth_s, "type", "veth", "peer", "name", &veth_c,
            ],
            vec!["link", "set", &veth_s, "netns", &server],
            vec!["link", "set", &veth_c, "netns", &clients],
            vec!["-n", &server, "addr", "add", "10.77.0.1/24", "dev", &veth_s],
            vec![
                "-n",
                &clients,
                "addr",
                "add",
                "10.77.0.2/24",
                "dev",
                &veth_c,
            ],
            vec!["-n", &server, "link", "set", &veth_s, "up"],
            vec!["-n", &clients, "link", "set", &veth_c, "up"],
            vec!["-n", &server, "link", "set", "lo", "up"],
            vec!["-n", &clients, "link", "set", "lo", "up"],
        ];
        for step in steps {
            match Command::new("ip").args(&step).output() {
                Ok(out) if out.status.success() => {}
                failed => {
                    let why = match failed {
                        Ok(out) => String::from_utf8_lossy(&out.stderr).trim().to_string(),
                        Err(e) => e.to_string(),
                    };
                    // `lan` drops here and removes what was made.
                    drop(lan);
                    let _ = Command::new("ip").args(["link", "del", &veth_s]).output();
                    eprintln!(
                        "note: cannot make network namespaces (`ip {}`: {why}); testing \
                         discovery on loopback instead",
                        step.join(" ")
                    );
                    return Lan::Loopback;
                }
            }
        }
        lan
    }

    /// A command running `bin` with `args` where the clients live, looking
    /// for servers there only.
    fn client(&self, args: &[&str]) -> Command {
        let mut command = match self {
            Lan::Namespaces { clients, .. } => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", clients]).arg(client_bin());
                c
            }
            Lan::Loopback => Command::new(client_bin()),
        };
        command.args(args);
        if let Lan::Loopback = self {
            command.args(["--discovery-interface", "lo"]);
        }
        command
    }

    /// A server for `players` called `name`, advertising (on every network
    /// of its namespace, or on loopback).
    fn server(&self, players: u8, name: &str, extra: &[&str]) -> Server {
        let mut args = vec!["--name", name];
        args.extend(extra);
        match self {
            Lan::Namespaces { server, .. } => {
                let mut command = Command::new("ip");
                command.args(["netns", "exec", server]).arg(server_bin());
                Server::start_command(command, "0.0.0.0:0", players, &args)
            }
            Lan::Loopback => Server::start(players, &args),
        }
    }

    /// The address clients reach a server at.
    fn server_addr(&self, server: &Server) -> String {
        let port = server.addr.rsplit_once(':').map(|(_, p)| p).unwrap_or("");
        match self {
            Lan::Namespaces { .. } => format!("{SERVER_IP}:{port}"),
            Lan::Loopback => format!("127.0.0.1:{port}"),
        }
    }
}

impl Drop for Lan {
    fn drop(&mut self) {
        if let Lan::Namespaces { server, clients } = self {
            // Deleting a namespace deletes the veth end inside it, and so
            // the pair.
            for ns in [server, clients] {
                let _ = Command::new("ip")
                    .args(["netns", "del", ns.as_str()])
                    .output();
            }
        }
    }
}

/// A server name no other test run uses.
fn unique_name(label: &str) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("{label}-{}-{n}", std::process::id())
}

/// Runs `list` where the clients are, with `known` as the known-servers
/// file; its output.
fn list(lan: &Lan, known: &std::path::Path, seconds: &str) -> Output {
    lan.client(&["list", "--seconds", seconds])
        .env(lockstep_protocol::KNOWN_SERVERS_ENV, known)
        .output()
        .expect("list runs")
}

/// The `server ...` line of `list`'s output for `name`, if any.
fn line_for(out: &Output, name: &str) -> Option<String> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find(|l| field(l, "name") == Some(name))
        .map(str::to_string)
}

#[test]
fn list_finds_a_server_on_the_lan_with_every_field_right() {
    let lan = Lan::new();
    let name = unique_name("den");
    let mut server = lan.server(2, &name, &[]);
    let code = server.wait_for("verification code=", Duration::from_secs(5));
    assert_eq!(
        code,
        format!(
            "verification code={}",
            verification_code(&server.fingerprint)
        )
    );
    server.wait_for("advertising name=", Duration::from_secs(5));
    let known = TempDir::new("known");
    let out = list(&lan, &known.0.join("known_servers"), "1");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = line_for(&out, &name).unwrap_or_else(|| {
        panic!(
            "list did not find {name}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert!(line.starts_with("server name="), "{line}");
    assert_eq!(
        field(&line, "addr"),
        Some(lan.server_addr(&server).as_str())
    );
    assert_eq!(field(&line, "players"), Some("0/2"));
    assert_eq!(
        field(&line, "version"),
        Some(PROTOCOL_VERSION.to_string().as_str())
    );
    assert_eq!(
        field(&line, "fingerprint"),
        Some(server.fingerprint.as_str())
    );
    assert_eq!(
        field(&line, "code"),
        Some(verification_code(&server.fingerprint).as_str())
    );
    assert_eq!(field(&line, "trust"), Some("new"));
    let ping: u64 = field(&line, "ping_ms")
        .and_then(|p| p.parse().ok())
        .expect("a ping");
    assert!(ping < 1000, "{line}");
}

#[test]
fn a_server_told_not_to_advertise_is_not_listed() {
    let lan = Lan::new();
    let name = unique_name("quiet");
    let mut server = lan.server(2, &name, &["--no-advertise"]);
    server.wait_for("verification code=", Duration::from_secs(5));
    let known = TempDir::new("known");
    let out = list(&lan, &known.0.join("known_servers"), "1.2");
    assert!(out.status.success());
    assert_eq!(line_for(&out, &name), None);
}

#[test]
fn two_bots_joining_by_name_play_in_lockstep_and_the_server_is_remembered() {
    let lan = Lan::new();
    let name = unique_name("arena");
    let mut server = lan.server(2, &name, &[]);
    server.wait_for("advertising name=", Duration::from_secs(5));
    let known = TempDir::new("known");
    let file = known.0.join("known_servers");
    let bots: Vec<Client> = (1..=2)
        .map(|seed| {
            let mut command = lan.client(&[
                "--join",
                &name,
                "--headless",
                "--name",
                &format!("bot{seed}"),
                "--bot",
                &seed.to_string(),
                "--ticks",
                "120",
            ]);
            command.env(lockstep_protocol::KNOWN_SERVERS_ENV, &file);
            Client::spawn(&format!("bot{seed}"), &mut command)
        })
        .collect();
    let (finished, (tick, _)) = lockstep_testkit::finish_in_lockstep(bots, Duration::from_secs(60));
    assert_eq!(tick, 120);
    assert!(
        finished
            .iter()
            .any(|f| f.stderr.contains("trusting the server") && f.stderr.contains(&name)),
        "nobody said the server was trusted on first use: {finished:?}"
    );
    let recorded = std::fs::read_to_string(&file).expect("the known-servers file");
    let expected = format!("@{name} {}", server.fingerprint);
    assert!(recorded.lines().any(|l| l == expected), "{recorded}");
    let addr_line = format!("{} {}", lan.server_addr(&server), server.fingerprint);
    assert!(recorded.lines().any(|l| l == addr_line), "{recorded}");
    // Now the list says the server is known.
    let out = list(&lan, &file, "1");
    let line = line_for(&out, &name).expect("still listed");
    assert_eq!(field(&line, "trust"), Some("known"));
}

#[test]
fn a_server_advertising_another_fingerprint_under_a_known_name_is_refused() {
    let lan = Lan::new();
    let name = unique_name("impostor");
    let mut server = lan.server(1, &name, &[]);
    server.wait_for("advertising name=", Duration::from_secs(5));
    let known = TempDir::new("known");
    let file = known.0.join("known_servers");
    let trusted = "ab".repeat(32);
    std::fs::write(&file, format!("@{name} {trusted}\n")).expect("seed the file");
    let out = list(&lan, &file, "1");
    let line = line_for(&out, &name).expect("listed");
    assert_eq!(field(&line, "trust"), Some("changed"));
    let out = lan
        .client(&["--join", &name, "--headless", "--bot", "1", "--ticks", "30"])
        .env(lockstep_protocol::KNOWN_SERVERS_ENV, &file)
        .output()
        .expect("the client runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "joined anyway: {stderr}");
    assert!(
        stderr.contains(&format!("refusing to join {name}"))
            && stderr.contains(&trusted)
            && stderr.contains(&server.fingerprint),
        "{stderr}"
    );
    // Nobody joined, and the file still holds only the trusted line.
    assert!(
        server.seen.iter().all(|l| !l.starts_with("joined")),
        "{:?}",
        server.seen
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        format!("@{name} {trusted}\n")
    );
}

#[test]
fn joining_a_name_two_servers_share_or_nobody_has_is_a_clear_error() {
    let lan = Lan::new();
    let name = unique_name("twin");
    let mut first = lan.server(2, &name, &[]);
    let mut second = lan.server(2, &name, &[]);
    // Both answer probes before the client asks: one that started late
    // would not be heard in the client's settling time, and the client,
    // having heard one server of the name, would join it and wait in its
    // lobby for a second player who never comes.
    for server in [&mut first, &mut second] {
        server.wait_for("advertising name=", GUARD);
    }
    let known = TempDir::new("known");
    let file = known.0.join("known_servers");
    let join = |label: &str, name: &str| {
        let mut command = lan.client(&["--join", name, "--headless", "--bot", "1"]);
        command.env(lockstep_protocol::KNOWN_SERVERS_ENV, &file);
        // A last guard: a client that wrongly joined waits in the lobby.
        Client::spawn(label, &mut command).finish(GUARD)
    };
    let out = join("twin", &name);
    assert!(!out.success);
    assert!(
        out.stderr
            .contains(&format!("2 servers are called {name:?}")),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains(&lan.server_addr(&first))
            && out.stderr.contains(&lan.server_addr(&second)),
        "{}",
        out.stderr
    );
    let out = join("nobody", &unique_name("nobody"));
    assert!(!out.success);
    assert!(out.stderr.contains("answered on the LAN"), "{}", out.stderr);
}

#[test]
fn the_advertised_player_count_follows_the_lobby() {
    let lan = Lan::new();
    let name = unique_name("lobby");
    let mut server = lan.server(2, &name, &[]);
    server.wait_for("advertising name=", Duration::from_secs(5));
    let known = TempDir::new("known");
    let file = known.0.join("known_servers");
    let players_listed = |expected: &str| {
        let deadline = clock::now() + Duration::from_secs(10);
        loop {
            let out = list(&lan, &file, "0.5");
            let line = line_for(&out, &name);
            if line.as_deref().and_then(|l| field(l, "players")) == Some(expected) {
                return;
            }
            assert!(
                clock::now() < deadline,
                "never listed with {expected}: {line:?}"
            );
        }
    };
    players_listed("0/2");
    let mut command = lan.client(&["--join", &name, "--headless", "--bot", "1"]);
    command.env(lockstep_protocol::KNOWN_SERVERS_ENV, &file);
    let waiting = Client::spawn("waiting", &mut command);
    server.wait_for("joined player=", Duration::from_secs(10));
    players_listed("1/2");
    drop(waiting);
    players_listed("0/2");
}
