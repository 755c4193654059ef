//! The browser peer in a real headless Chromium, in live games with native
//! headless clients on loopback: the page the server serves, its wasm
//! simulation and its WebSocket. `scripts/browser/drive.mjs` opens the
//! page through the DevTools protocol and prints its console on stdout, so
//! a page is read like a native client (its `final` line).
//!
//! Needs what `make test` builds first: the binaries (`cargo build
//! --bins`) and the page (`make web`, in `target/web`, where the server
//! looks by default), Debian's `chromium` and node 20 or later.

use std::time::Duration;

use lockstep_testkit::browser::{chromium_target, patient, repo};
use lockstep_testkit::{Client, Server, TempDir};

/// Longest a game of these tests may take, as a last guard: a browser
/// starting on a loaded machine takes seconds.
const GUARD: Duration = Duration::from_secs(180);

/// A headless Chromium on the server's page (`target/web`) with `query`,
/// driven with `extra` options of the driver; its stdout is the page's
/// console.
fn browser(server: &mut Server, name: &str, query: &str, extra: &[&str]) -> Client {
    lockstep_testkit::browser::page_built(
        &repo().join("target/web"),
        "run `make web` first (make test does)",
    );
    lockstep_testkit::browser::browser(server, name, query, extra)
}

/// The verdict line, once the server printed it.
fn verdict(server: &mut Server) -> String {
    server.wait_for("verdict ", GUARD)
}

#[test]
fn a_browser_bot_and_two_native_bots_end_on_the_same_hash() {
    let _serial = lockstep_testkit::one_at_a_time();
    let mut server = Server::start(3, &patient(&["--seed", "81", "--no-record"]));
    let natives = [1, 2].map(|seed| Client::headless_bot(&server, &format!("n{seed}"), seed, 600));
    let page = browser(&mut server, "web", "bot=3&ticks=600&ready=1", &[]);
    let page = page.finish(GUARD);
    let ends: Vec<(u32, String)> = natives
        .into_iter()
        .map(|c| c.finish(GUARD).last_final_line())
        .chain([page.last_final_line()])
        .collect();
    assert_eq!(ends[0].0, 600);
    assert!(ends.iter().all(|end| *end == ends[0]), "{ends:?}");
    let target = chromium_target(&mut server, "web", GUARD);
    let target = target.as_str();
    let verdict = verdict(&mut server);
    assert!(verdict.starts_with("verdict agreed "), "{verdict}");
    assert!(verdict.contains(target), "{verdict} names {target}");
    assert!(
        !server.seen.iter().any(|line| line.starts_with("desync")),
        "{:?}",
        server.seen
    );
    // The page says what the native client says at the end.
    assert!(
        page.stdout
            .lines()
            .any(|line| line.starts_with("stats stalled_ticks=")),
        "{}",
        page.stdout
    );
    // For the ball game it loaded the light module, without Topple.
    assert!(
        page.stdout
            .contains("lockstep-web: module lockstep_web_light games=balls tally\n"),
        "{}",
        page.stdout
    );
}

#[test]
fn a_browser_plays_tally_and_its_injected_desync_is_named_like_any_other() {
    let _serial = lockstep_testkit::one_at_a_time();
    let mut server = Server::start(
        3,
        &patient(&["--game", "tally", "--seed", "82", "--no-record"]),
    );
    // The natives write their dumps of the desync; not into the tree.
    let dumps = TempDir::new("browser-desync-dumps");
    let natives = [1, 2].map(|seed| {
        let mut command = lockstep_testkit::headless_bot(&server, &format!("n{seed}"), seed, 300);
        command.arg("--dump-dir").arg(&dumps.0);
        Client::spawn(&format!("n{seed}"), &mut command)
    });
    let page = browser(
        &mut server,
        "webfault",
        "bot=3&ticks=300&ready=1&desync=100",
        &[],
    );
    // Hashes are compared every 15 ticks: the desync shows at 105, and the
    // per-tick hashes place its start at 100.
    let line = server.wait_for("desync tick=", GUARD);
    assert_eq!(line, "desync tick=105 diverged=webfault first=100");
    let page_end = page.finish(GUARD).last_final_line();
    let ends: Vec<(u32, String)> = natives
        .into_iter()
        .map(|c| c.finish(GUARD).last_final_line())
        .collect();
    assert_eq!(ends[0], ends[1]);
    assert_eq!(ends[0].0, 300);
    assert_ne!(page_end, ends[0]);
    let verdict = verdict(&mut server);
    assert!(
        verdict.starts_with("verdict diverged ") && verdict.contains("diverged=webfault@wasm32"),
        "{verdict}"
    );
}

#[test]
fn a_browser_bot_and_a_native_bot_play_topple_to_the_same_hash() {
    let _serial = lockstep_testkit::one_at_a_time();
    // 48 crates and balls, not 160: the native bot is a debug build, and
    // with the full towers it fell behind on a loaded machine until the
    // server removed it. Rams still knock bodies about from the start.
    let mut server = Server::start(
        2,
        &patient(&[
            "--game",
            "physics",
            "--set",
            "bodies=48",
            "--seed",
            "84",
            "--no-record",
        ]),
    );
    let native = Client::headless_bot(&server, "n1", 1, 600);
    let page = browser(&mut server, "web", "bot=3&ticks=600&ready=1", &[]).finish(GUARD);
    // The light module has no Topple: the page loaded the full one.
    assert!(
        page.stdout
            .contains("lockstep-web: module lockstep_web games=balls tally physics\n"),
        "{}",
        page.stdout
    );
    let page_end = page.last_final_line();
    let native_end = native.finish(GUARD).last_final_line();
    assert_eq!(native_end.0, 600);
    assert_eq!(page_end, native_end);
    let verdict = verdict(&mut server);
    assert!(
        verdict.starts_with("verdict agreed ")
            && verdict.contains("wasm32-unknown-unknown/chromium-"),
        "{verdict}"
    );
    assert!(
        !server.seen.iter().any(|line| line.starts_with("desync")),
        "{:?}",
        server.seen
    );
}

/// `{"x":N,...}` field `key` of the page's state, as the driver printed it.
fn state_number(line: &str, key: &str) -> i64 {
    let at = line
        .find(&format!("\"{key}\":"))
        .unwrap_or_else(|| panic!("no {key} in {line}"));
    let rest = &line[at + key.len() + 3..];
    let end = rest
        .find(|c: char| c != '-' && !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..end]
        .parse()
        .unwrap_or_else(|_| panic!("{key} in {line}"))
}

#[test]
fn a_touch_drag_on_the_stick_steers_the_browser_player_in_lockstep() {
    let _serial = lockstep_testkit::one_at_a_time();
    let mut server = Server::start(2, &patient(&["--seed", "83", "--no-record"]));
    let native = Client::headless_bot(&server, "n1", 1, 600);
    // A person, not a bot: the page's input is what the finger does.
    let page = browser(
        &mut server,
        "thumb",
        "ticks=600&ready=1",
        &["--drag-on", "start:"],
    );
    let page = page.finish(GUARD);
    let native_end = native.finish(GUARD).last_final_line();
    assert_eq!(page.last_final_line(), native_end);
    assert_eq!(native_end.0, 600);
    let state = |label: &str| {
        page.stdout
            .lines()
            .find(|line| line.starts_with(&format!("driver state {label} ")))
            .unwrap_or_else(|| panic!("no {label} state in {}", page.stdout))
            .to_string()
    };
    let (before, held) = (state("before"), state("held"));
    assert_eq!(state_number(&before, "x"), 0, "{before}");
    assert!(
        state_number(&held, "x") > 0,
        "the stick to the right: {held}"
    );
    assert!(held.contains("\"phase\":\"playing\""), "{held}");
    assert!(
        !server.seen.iter().any(|line| line.starts_with("desync")),
        "{:?}",
        server.seen
    );
}
