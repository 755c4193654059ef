//! A headless Chromium on a server's page: `scripts/browser/drive.mjs`
//! opens the page through the DevTools protocol and prints its console on
//! stdout, so a page is read like a native client (its `final` line).
//! Needs Debian's `chromium` and node 20 or later, and the page built
//! where the server serves it from.

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

/// A headless Chromium on `server`'s page as `name`, with `query`, driven
/// with `extra` options of the driver; its stdout is the page's console.
/// It leaves after the page's first `final` line, or after 170 s.
pub fn browser(server: &mut Server, name: &str, query: &str, extra: &[&str]) -> Client {
    let mut command = Command::new("node");
    command
        .arg("--experimental-websocket")
        .arg("--no-warnings")
        .arg(repo().join("scripts/browser/drive.mjs"))
        .args(["--timeout", "170"])
        .args(extra)
        .arg(format!("http://{}/?name={name}&{query}", server.web_addr()));
    Client::spawn(name, &mut command)
}

/// The platform target of the Chromium page called `name` in `server`'s
/// game, from the server's `platform` line for it (the page may join
/// before or after the others: it is found by its name), once it says a
/// Chromium ran the page.
pub fn chromium_target(server: &mut Server, name: &str, guard: std::time::Duration) -> String {
    let platform = server.wait_for_line(
        "the page's platform line",
        |line| line.starts_with("platform ") && crate::field(line, "name") == Some(name),
        guard,
    );
    let target = crate::field(&platform, "target").unwrap_or_default();
    assert!(
        target.starts_with("wasm32-unknown-unknown/chromium-"),
        "{platform}"
    );
    target.to_string()
}
