//! The browser peer in every engine a LAN party brings: V8 (Chromium),
//! SpiderMonkey (Firefox) and JavaScriptCore (WebKitGTK), in one live game
//! with a native headless client on loopback. `scripts/browser/drive.mjs
//! --engine` opens the page the server serves in each and prints its
//! console on stdout, so a page is read like a native client (its `final`
//! line); the verdict names each engine with its version.
//!
//! Needs what `make test` builds first: the binaries (`cargo build
//! --bins`) and the page (`make web`, in `target/web`), and Debian's
//! `chromium`, `firefox-esr`, `libwebkit2gtk-4.1-0` and `xvfb`, and node 20
//! or later (`scripts/install-deps.sh` installs them).

use std::time::Duration;

use lockstep_testkit::browser::{browser_in, engine_target, page_built, patient, repo, Engine};
use lockstep_testkit::{Client, Server, TempDir};

/// Longest a game of these tests may take, as a last guard: three
/// browsers starting on a loaded machine take seconds each.
const GUARD: Duration = Duration::from_secs(180);

/// `engine` on the server's page (`target/web`) as `name`, with `query`.
fn page(engine: Engine, server: &mut Server, name: &str, query: &str) -> Client {
    page_built(
        &repo().join("target/web"),
        "run `make web` first (make test does)",
    );
    // Small windows: three engines drawing at 60 Hz in software share
    // the machine with the game.
    browser_in(engine, server, name, query, &["--size", "800x450"])
}

#[test]
fn a_native_bot_and_a_page_in_each_engine_end_on_one_hash_named_by_engine() {
    let _serial = lockstep_testkit::one_at_a_time();
    let mut server = Server::start(4, &patient(&["--seed", "91", "--no-record"]));
    let native = Client::headless_bot(&server, "native", 1, 600);
    let pages: Vec<(Engine, Client)> = Engine::ALL
        .into_iter()
        .zip(2u64..)
        .map(|(engine, seed)| {
            let query = format!("bot={seed}&ticks=600&ready=1");
            (engine, page(engine, &mut server, engine.flag(), &query))
        })
        .collect();
    let mut ends = vec![native.finish(GUARD).last_final_line()];
    for (engine, client) in pages {
        let finished = client.finish(GUARD);
        assert!(
            !finished.stdout.contains("page error:"),
            "{}: {}",
            engine.flag(),
            finished.stdout
        );
        ends.push(finished.last_final_line());
    }
    assert_eq!(ends[0].0, 600);
    assert!(ends.iter().all(|end| *end == ends[0]), "{ends:?}");
    let verdict = server.wait_for("verdict ", GUARD);
    assert!(verdict.starts_with("verdict agreed "), "{verdict}");
    for engine in Engine::ALL {
        let target = engine_target(engine, &mut server, engine.flag(), GUARD);
        // A version, not "unknown": WebKitGTK's is the one its driver
        // adds to the user agent (its own says Version/60.5 on every
        // release).
        let browser = target.split('/').nth(1).unwrap_or_default();
        assert!(!browser.ends_with("-unknown"), "{target}");
        assert!(verdict.contains(&target), "{verdict} names {target}");
    }
    assert!(
        !server.seen.iter().any(|line| line.starts_with("desync")),
        "{:?}",
        server.seen
    );
}

#[test]
fn a_desync_injected_in_the_firefox_page_is_named() {
    let _serial = lockstep_testkit::one_at_a_time();
    let mut server = Server::start(3, &patient(&["--seed", "92", "--no-record"]));
    // The natives write their dumps of the desync; not into the tree.
    let dumps = TempDir::new("firefox-desync-dumps");
    let natives = [1, 2].map(|seed| {
        let mut command = lockstep_testkit::headless_bot(&server, &format!("n{seed}"), seed, 300);
        command.arg("--dump-dir").arg(&dumps.0);
        Client::spawn(&format!("n{seed}"), &mut command)
    });
    let faulty = page(
        Engine::Firefox,
        &mut server,
        "foxfault",
        "bot=3&ticks=300&ready=1&desync=100",
    );
    // Hashes are compared every 15 ticks: the desync shows at 105, and the
    // per-tick hashes place its start at 100.
    let line = server.wait_for("desync tick=", GUARD);
    assert_eq!(line, "desync tick=105 diverged=foxfault first=100");
    let page_end = faulty.finish(GUARD).last_final_line();
    let ends: Vec<(u32, String)> = natives
        .into_iter()
        .map(|c| c.finish(GUARD).last_final_line())
        .collect();
    assert_eq!(ends[0], ends[1]);
    assert_ne!(page_end, ends[0]);
    let target = engine_target(Engine::Firefox, &mut server, "foxfault", GUARD);
    let verdict = server.wait_for("verdict ", GUARD);
    assert!(
        verdict.starts_with("verdict diverged ")
            && verdict.contains(&format!("diverged=foxfault@{target}")),
        "{verdict}"
    );
}

/// The ball game with player 0 holding the page's stick at `x`, `y`,
/// computed natively through the page's own input path.
fn native_stick(x: f32, y: f32) -> String {
    use lockstep_engine::games::Games;
    let offline = lockstep_web::offline::Offline::new("balls=24", 2, "5", 120)
        .expect("pairs")
        .with_stick(x, y);
    lockstep_games::Shipped
        .run("balls", offline)
        .expect("balls is shipped")
        .expect("runs")
}

/// The page's `?boundary=1` check in each engine: NaNs with payloads (f32
/// and f64, quiet, signalling, negative), infinities and -0 go from JS
/// through the page's stick into a ball game; SpiderMonkey canonicalises
/// a NaN's payload where V8 keeps it, and either way the game must take
/// it as a stick at rest, on the hash the native build computes.
#[test]
fn values_that_are_not_numbers_reach_the_game_alike_in_every_engine() {
    let _serial = lockstep_testkit::one_at_a_time();
    let mut server = Server::start(2, &patient(&["--no-record"]));
    let at_rest = native_stick(0.0, 0.0);
    let held = native_stick(0.0, 0.8);
    assert_ne!(at_rest, held);
    for engine in Engine::ALL {
        page_built(
            &repo().join("target/web"),
            "run `make web` first (make test does)",
        );
        let out = browser_in(
            engine,
            &mut server,
            engine.flag(),
            "boundary=1",
            &["--exit-on", "boundary done"],
        )
        .finish(GUARD);
        let said = |prefix: &str| {
            out.stdout
                .lines()
                .find_map(|line| line.strip_prefix(prefix))
                .unwrap_or_else(|| panic!("{}: no {prefix:?} in\n{}", engine.flag(), out.stdout))
                .to_string()
        };
        assert_eq!(said("boundary at_rest "), at_rest, "{}", engine.flag());
        assert_eq!(said("boundary held "), held, "{}", engine.flag());
        assert_eq!(
            said("boundary done "),
            "same=21 differ=0",
            "{}: {}",
            engine.flag(),
            out.stdout
        );
    }
}
