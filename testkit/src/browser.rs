//! A page of a server's in a browser engine: `scripts/browser/drive.mjs`
//! opens it in a headless Chromium (DevTools protocol), a headless
//! Firefox (WebDriver BiDi) or WebKitGTK's MiniBrowser on a private Xvfb,
//! and prints its console on stdout, so a page is read like a native
//! client (its `final` line). Needs node 20 or later, the engine's Debian
//! package (`chromium`, `firefox-esr`, `libwebkit2gtk-4.1-0` and `xvfb`),
//! and the page built where the server serves it from.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{Client, Server};

/// The repository's root: the test kit lives in it.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("testkit/ is in the repository")
        .to_path_buf()
}

/// The page in `dir`, which `hint` builds: fails saying so when it is
/// missing.
pub fn page_built(dir: &Path, hint: &str) {
    let page = dir.join("index.html");
    assert!(
        page.exists() && dir.join("lockstep_web_bg.wasm").exists(),
        "the page in {} is missing: {hint}",
        dir.display()
    );
}

/// A browser engine the driver opens pages in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// V8, in Debian's Chromium.
    Chromium,
    /// SpiderMonkey, in Debian's Firefox ESR.
    Firefox,
    /// JavaScriptCore, in Debian's WebKitGTK.
    Webkit,
}

impl Engine {
    /// Every engine, in the order the driver lists them.
    pub const ALL: [Engine; 3] = [Engine::Chromium, Engine::Firefox, Engine::Webkit];

    /// The driver's `--engine` value.
    pub fn flag(self) -> &'static str {
        match self {
            Engine::Chromium => "chromium",
            Engine::Firefox => "firefox",
            Engine::Webkit => "webkit",
        }
    }

    /// How the page names this engine in its platform target
    /// (`wasm32-unknown-unknown/{browser}-{version}/...`).
    pub fn browser(self) -> &'static str {
        match self {
            Engine::Chromium => "chromium",
            Engine::Firefox => "firefox",
            Engine::Webkit => "webkitgtk",
        }
    }
}

/// A headless Chromium on `server`'s page as `name`, with `query`, driven
/// with `extra` options of the driver; its stdout is the page's console.
/// It leaves after the page's first `final` line, or after 170 s.
pub fn browser(server: &mut Server, name: &str, query: &str, extra: &[&str]) -> Client {
    browser_in(Engine::Chromium, server, name, query, extra)
}

/// [`browser`] in `engine`.
pub fn browser_in(
    engine: Engine,
    server: &mut Server,
    name: &str,
    query: &str,
    extra: &[&str],
) -> Client {
    let mut command = Command::new("node");
    command
        .arg("--experimental-websocket")
        .arg("--no-warnings")
        .arg(repo().join("scripts/browser/drive.mjs"))
        .args(["--engine", engine.flag()])
        .args(["--timeout", "170"])
        .args(extra)
        .arg(format!("http://{}/?name={name}&{query}", server.web_addr()));
    Client::spawn(name, &mut command)
}

/// The platform target of the Chromium page called `name` in `server`'s
/// game ([`engine_target`]).
pub fn chromium_target(server: &mut Server, name: &str, guard: std::time::Duration) -> String {
    engine_target(Engine::Chromium, server, name, guard)
}

/// The platform target of the page called `name` in `server`'s game, from
/// the server's `platform` line for it (the page may join before or after
/// the others: it is found by its name), once it says `engine` ran the
/// page.
pub fn engine_target(
    engine: Engine,
    server: &mut Server,
    name: &str,
    guard: std::time::Duration,
) -> String {
    let platform = server.wait_for_line(
        "the page's platform line",
        |line| line.starts_with("platform ") && crate::field(line, "name") == Some(name),
        guard,
    );
    let target = crate::field(&platform, "target").unwrap_or_default();
    let expected = format!("wasm32-unknown-unknown/{}-", engine.browser());
    assert!(target.starts_with(&expected), "{platform}: not {expected}");
    target.to_string()
}

/// `args` for a server whose game has a page in it, with a silent player
/// dropped after 60 s instead of the default 2: a headless browser on a
/// loaded two-core machine can go quiet for seconds (while it compiles
/// the module's optimising tier, or the scheduler serves the other test's
/// processes), and the default once dropped a page mid-game. A player
/// that really goes away closes its connection, which ends it at once.
pub fn patient<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let mut all = args.to_vec();
    all.extend(["--drop-timeout-ms", "60000"]);
    all
}
