//! A server that cannot start says why on one line of stderr, each cause
//! once, with what to do: the real binary, with a port already taken or an
//! identity directory it cannot use.

use std::net::{TcpListener, UdpSocket};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use lockstep_testkit::{server_bin, Client, TempDir};

/// Runs the server with `args`, a fresh replay directory and the identity
/// in `identity`; it must fail before it serves anything. Returns its one
/// line of stderr, after checking that no part of it is said twice.
fn refused(identity: &Path, args: &[&str]) -> String {
    let replays = TempDir::new("start-errors-replays");
    let mut command = Command::new(server_bin());
    command
        .args(args)
        .args(["--no-advertise", "--identity-dir"])
        .arg(identity)
        .arg("--replay-dir")
        .arg(&replays.0)
        .env_remove("RUST_LOG");
    // A server that started instead would run on: it is killed and the
    // test failed after the timeout.
    let out = Client::spawn("server", &mut command).finish(Duration::from_secs(30));
    assert!(!out.success, "{}", out.stdout);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", out.stderr);
    let line = lines[0].to_string();
    assert!(line.starts_with("lockstep-server: "), "{line}");
    for part in line.split([':', ';']).map(str::trim) {
        if part.len() >= 12 {
            assert_eq!(line.matches(part).count(), 1, "{part:?} said twice: {line}");
        }
    }
    line
}

#[test]
fn a_udp_port_in_use_is_said_once() {
    let taken = UdpSocket::bind("127.0.0.1:0").expect("bind a UDP port");
    let addr = taken.local_addr().expect("its address").to_string();
    let identity = TempDir::new("start-errors-identity");
    let line = refused(&identity.0, &["--listen", &addr, "--no-web"]);
    assert!(
        line.starts_with(&format!("lockstep-server: cannot listen on {addr}: ")),
        "{line}"
    );
    assert_eq!(line.matches("(os error").count(), 1, "{line}");
}

#[test]
fn a_web_port_in_use_is_said_once_with_the_options_that_avoid_it() {
    let taken = TcpListener::bind("127.0.0.1:0").expect("bind a TCP port");
    let port = taken.local_addr().expect("its address").port().to_string();
    let identity = TempDir::new("start-errors-identity");
    let line = refused(
        &identity.0,
        &["--listen", "127.0.0.1:0", "--web-port", &port],
    );
    assert!(
        line.starts_with(
            "lockstep-server: opening the web door (--web-port moves it, --no-web closes it): \
             cannot listen on TCP 127.0.0.1:"
        ),
        "{line}"
    );
    assert_eq!(line.matches("(os error").count(), 1, "{line}");
}

/// An identity directory's files, and what the server must say of them.
struct Damaged {
    label: &'static str,
    files: Vec<(&'static str, Vec<u8>)>,
    /// A directory where the key file should be.
    key_is_a_directory: bool,
    says: &'static str,
    ends: &'static str,
}

/// What a damaged identity directory can really hold (the tests run as
/// root, so permissions do not stop a read): garbage files, an empty key
/// or certificate beside a good one, a directory where the key should be.
/// Each is refused naming the file and saying what to do, and left as it
/// was.
#[test]
fn an_identity_directory_the_server_cannot_use_is_refused_with_what_to_do() {
    let good = TempDir::new("start-errors-good-identity");
    lockstep_server::Identity::load_or_create(&good.0.join("id")).expect("an identity");
    let read = |name: &str| std::fs::read(good.0.join("id").join(name)).expect("read");
    let (cert, key) = (read("cert.der"), read("key.der"));
    let unusable = "; remove the directory to create a new one";
    let cases = [
        Damaged {
            label: "garbage",
            files: vec![
                ("cert.der", b"not a certificate".to_vec()),
                ("key.der", b"not a key".to_vec()),
            ],
            key_is_a_directory: false,
            says: "is unusable: key.der is not a private key and cert.der is not a certificate",
            ends: unusable,
        },
        Damaged {
            label: "empty-key",
            files: vec![("cert.der", cert.clone()), ("key.der", Vec::new())],
            key_is_a_directory: false,
            says: "is unusable: key.der is not a private key",
            ends: unusable,
        },
        Damaged {
            label: "empty-cert",
            files: vec![("cert.der", Vec::new()), ("key.der", key)],
            key_is_a_directory: false,
            says: "is unusable: cert.der is not a certificate",
            ends: unusable,
        },
        Damaged {
            label: "key-is-a-directory",
            files: vec![("cert.der", cert)],
            key_is_a_directory: true,
            says: "cannot read the identity file ",
            ends: "; make it a readable file, or remove the directory to create a new one",
        },
    ];
    for case in cases {
        let label = case.label;
        let identity = TempDir::new(&format!("start-errors-{label}"));
        for (name, contents) in &case.files {
            std::fs::write(identity.0.join(name), contents).expect("write");
        }
        if case.key_is_a_directory {
            std::fs::create_dir(identity.0.join("key.der")).expect("mkdir");
        }
        let line = refused(&identity.0, &["--listen", "127.0.0.1:0", "--no-web"]);
        assert!(
            line.starts_with("lockstep-server: loading the server identity: "),
            "{label}: {line}"
        );
        assert!(line.contains(case.says), "{label}: {line}");
        assert!(line.ends_with(case.ends), "{label}: {line}");
        for (name, contents) in &case.files {
            assert_eq!(
                &std::fs::read(identity.0.join(name)).expect("read"),
                contents,
                "{label}: {name} was changed"
            );
        }
    }
}
