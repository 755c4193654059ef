//! What users read when they are refused: passwords, names in use, a
//! machine that computes the simulation differently, and a server whose
//! certificate changed since it was trusted on first use.

use std::process::Command;
use std::time::Duration;

use lockstep_testkit::{client_bin, Client, Server, TempDir};

fn player(server: &Server, name: &str, extra: &[&str]) -> Client {
    let mut command = lockstep_testkit::headless(server, name);
    command.args(["--bot", "1", "--ticks", "120"]).args(extra);
    Client::spawn(name, &mut command)
}

#[test]
fn a_password_is_required_and_checked_before_a_slot_is_taken() {
    let mut server = Server::start(2, &["--password", "open sesame"]);
    let missing = player(&server, "nopass", &[]).finish(Duration::from_secs(20));
    assert!(!missing.success);
    assert!(
        missing.stderr.contains("this server needs a password"),
        "{}",
        missing.stderr
    );
    let wrong = player(&server, "wrong", &["--password", "sesame"]).finish(Duration::from_secs(20));
    assert!(!wrong.success);
    assert!(wrong.stderr.contains("wrong password"), "{}", wrong.stderr);
    // Neither took a slot: the two right passwords fill the game.
    let right: Vec<Client> = ["a", "b"]
        .iter()
        .map(|name| player(&server, name, &["--password", "open sesame"]))
        .collect();
    let finals: Vec<(u32, String)> = right
        .into_iter()
        .map(|c| c.finish(Duration::from_secs(30)).final_line())
        .collect();
    assert_eq!(finals[0], finals[1]);
    let start = server.wait_for("start players=", Duration::from_secs(5));
    assert!(
        start.starts_with("start players=a,b ") || start.starts_with("start players=b,a "),
        "{start}"
    );
    server.wait_for_log("wrong password", Duration::from_secs(5));
}

#[test]
fn a_client_that_computes_the_simulation_differently_is_refused_before_a_slot_is_taken() {
    let mut server = Server::start(1, &[]);
    let odd = player(&server, "odd", &["--perturb-self-test"]).finish(Duration::from_secs(30));
    assert!(!odd.success);
    let expected = format!("{:016x}", lockstep_balls::self_test());
    let perturbed = format!("{:016x}", lockstep_balls::self_test() ^ 1);
    assert!(
        odd.stderr.contains(&format!(
            "this machine computes the simulation differently (self-test {perturbed}, \
             expected {expected}); it would desync the game"
        )),
        "{}",
        odd.stderr
    );
    // It took no slot: an honest client fills the one-player game.
    let honest = player(&server, "honest", &[]).finish(Duration::from_secs(30));
    honest.final_line();
    server.wait_for("start players=honest ", Duration::from_secs(5));
}

#[test]
fn a_name_in_use_in_the_lobby_is_refused() {
    let mut server = Server::start(3, &[]);
    let first = player(&server, "same", &[]);
    server.wait_for("joined player=", Duration::from_secs(10));
    let second = player(&server, "same", &[]).finish(Duration::from_secs(20));
    assert!(!second.success);
    assert!(
        second.stderr.contains("the name \"same\" is already taken"),
        "{}",
        second.stderr
    );
    drop(first);
}

#[test]
fn a_server_trusted_on_first_use_must_keep_its_certificate() {
    let known = TempDir::new("known");
    let file = known.0.join("known_servers");
    let tofu = |server: &Server, name: &str| {
        Client::spawn(
            name,
            Command::new(client_bin())
                .env("LOCKSTEP_KNOWN_SERVERS", &file)
                .args(["--connect", &server.addr, "--name", name, "--headless"])
                .args(["--bot", "1", "--ticks", "60"]),
        )
    };
    let server = Server::start(1, &[]);
    let first = tofu(&server, "first").finish(Duration::from_secs(20));
    first.final_line();
    assert!(
        first.stderr.contains("trusting the server at")
            && first.stderr.contains(&server.fingerprint),
        "{}",
        first.stderr
    );
    let recorded = std::fs::read_to_string(&file).expect("known servers file");
    assert_eq!(
        recorded.trim(),
        format!("{} {}", server.addr, server.fingerprint)
    );
    // Same server again: no new line, no message.
    let again = tofu(&server, "again").finish(Duration::from_secs(20));
    again.final_line();
    assert!(!again.stderr.contains("trusting"), "{}", again.stderr);

    // Another server (a new identity) on the same address.
    let port = server.addr.clone();
    drop(server);
    let impostor = Server::start_at(&port, 1, &[]);
    assert_ne!(
        impostor.fingerprint,
        recorded.split_whitespace().nth(1).unwrap_or("")
    );
    let refused = tofu(&impostor, "third").finish(Duration::from_secs(20));
    assert!(!refused.success);
    assert!(
        refused.stderr.contains("refusing to connect")
            && refused.stderr.contains("trusted on first use")
            && refused.stderr.contains(&impostor.fingerprint),
        "{}",
        refused.stderr
    );
}
