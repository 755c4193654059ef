//! A game written outside this repository's workspace, in the browser: the
//! page of the flock of `examples/flock/`, which `make test` builds as the
//! guide says (`scripts/build-web.sh --manifest-path
//! examples/flock/Cargo.toml`, into `target/flock-web`): lockstep's page
//! with the flock's library as its wasm module. Served by the stock server
//! built without the flock, with the guide's command, it plays in one game
//! with two native flock bots (`flock-client`, which `make test` builds
//! into `target/debug`) over QUIC and its WebSocket on loopback; all three
//! end on one hash and the server's verdict agrees, naming the browser.
//!
//! Needs Debian's `chromium` and node 20 or later, as the page's own
//! tests (`web/tests/chromium.rs`).

use std::path::PathBuf;
use std::time::Duration;

use lockstep_testkit::browser::{browser, chromium_target, page_built, repo};
use lockstep_testkit::{guide, headless_bot_of, workspace_bin, Client, Server};

/// Longest a game of this test may take, as a last guard: a browser
/// starting on a loaded machine takes seconds.
const GUARD: Duration = Duration::from_secs(180);

/// Ticks the game lasts.
const TICKS: u32 = 600;

/// The flock's page, where `make test` builds it.
fn flock_page() -> PathBuf {
    let dir = repo().join("target/flock-web");
    page_built(
        &dir,
        "LOCKSTEP_WEB_OUT=target/flock-web scripts/build-web.sh \
         --manifest-path examples/flock/Cargo.toml builds it (make test does)",
    );
    dir
}

#[test]
fn the_flocks_page_plays_beside_two_native_flock_bots_to_one_hash_on_the_stock_server() {
    let _serial = lockstep_testkit::one_at_a_time();
    let page = flock_page();
    // The commands of the guide's section on the browser.
    let commands = guide::sh_commands("docs/guide/your-game.md", Some(". In the browser"));
    let [build, host] = commands.as_slice() else {
        panic!("the guide's section builds the page and hosts it: {commands:?}");
    };
    // What make test runs, but for where the page goes.
    assert!(build[0].ends_with("scripts/build-web.sh"), "{build:?}");
    assert_eq!(build[1..], ["--manifest-path", "Cargo.toml"]);
    // The host's command, serving the page make test built.
    assert!(host[0].ends_with("/lockstep-server"), "{host:?}");
    let mut args: Vec<&str> = host[1..].iter().map(String::as_str).collect();
    let dir = args
        .iter()
        .position(|&arg| arg == "--web-dir")
        .expect("the host serves the page")
        + 1;
    args[dir] = page.to_str().expect("a UTF-8 path");
    args.extend(["--seed", "21", "--no-record"]);
    let args = lockstep_testkit::browser::patient(&args);
    let mut server = Server::start(3, &args);
    server.wait_for("hosting flock", GUARD);

    let flock_client = workspace_bin("flock-client");
    let natives = [1u64, 2].map(|seed| {
        let name = format!("n{seed}");
        let mut command = headless_bot_of(&flock_client, &server, &name, seed, TICKS);
        Client::spawn(&name, &mut command)
    });
    let page = browser(
        &mut server,
        "web",
        &format!("bot=3&ticks={TICKS}&ready=1"),
        &[],
    );
    let page = page.finish(GUARD);
    let ends: Vec<(u32, String)> = natives
        .into_iter()
        .map(|native| native.finish(GUARD).final_line())
        .chain([page.last_final_line()])
        .collect();
    assert_eq!(ends[0].0, TICKS);
    assert!(ends.iter().all(|end| *end == ends[0]), "{ends:?}");
    // The page announced the flock's self-test, computed in the browser.
    assert!(
        page.stdout
            .lines()
            .any(|line| line.contains("preflight flock=")),
        "{}",
        page.stdout
    );

    let target = chromium_target(&mut server, "web", GUARD);
    let target = target.as_str();
    let verdict = server.wait_for("verdict ", GUARD);
    assert!(verdict.starts_with("verdict agreed "), "{verdict}");
    assert!(verdict.contains(target), "{verdict} names {target}");
    assert!(
        !server.seen.iter().any(|line| line.starts_with("desync")),
        "{:?}",
        server.seen
    );
}
