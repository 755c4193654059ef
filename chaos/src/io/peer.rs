//! The commands of the run's other machines ([`crate::peers`]): the
//! browser peer through `scripts/browser/drive.mjs` (node driving
//! Debian's `chromium` over the DevTools protocol, printing the page's
//! console on stdout, so the page is read like a native client), and the
//! aarch64 client under `qemu-aarch64`. What each needs is checked before the run starts, with
//! what to do when it is missing.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The driver of the browser peer, in this repository.
const DRIVER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/browser/drive.mjs");

/// Where Debian's aarch64 C library is, for qemu-user
/// (`libc6-arm64-cross`; `make cross` installs it).
const AARCH64_ROOT: &str = "/usr/aarch64-linux-gnu";

/// How long a peer asked to stop (SIGTERM) gets before SIGKILL: the
/// driver closes its browser on SIGTERM, which SIGKILL would leave behind.
pub const STOP_GRACE: Duration = Duration::from_secs(10);

/// What a peer needs and does not have, with what to do about it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NotReady(pub String);

/// Whether `program` is on `PATH`.
fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

/// The page the server serves from `web_dir` is built, and node and
/// Chromium are here to show it.
pub fn browser_ready(web_dir: &Path) -> Result<(), NotReady> {
    let page = web_dir.join("index.html");
    if !page.is_file() {
        return Err(NotReady(format!(
            "--browser: the page is missing ({}): build it with `make web`",
            page.display()
        )));
    }
    if !Path::new(DRIVER).is_file() {
        return Err(NotReady(format!(
            "--browser: the driver {DRIVER} is missing: run from a checkout of the repository"
        )));
    }
    for (program, package) in [("node", "nodejs (20 or later)"), ("chromium", "chromium")] {
        if !on_path(program) {
            return Err(NotReady(format!(
                "--browser: `{program}` is not on PATH: install {package} (make test does)"
            )));
        }
    }
    Ok(())
}

/// The aarch64 client at `client` exists, and qemu-user with Debian's
/// aarch64 C library is here to run it.
pub fn aarch64_ready(client: &Path) -> Result<(), NotReady> {
    if !client.is_file() {
        return Err(NotReady(format!(
            "--aarch64: {} is missing: build it with scripts/cross-build.sh (make cross does)",
            client.display()
        )));
    }
    if !on_path("qemu-aarch64") || !Path::new(AARCH64_ROOT).is_dir() {
        return Err(NotReady(format!(
            "--aarch64: qemu-aarch64 or {AARCH64_ROOT} is missing: install qemu-user and \
             libc6-arm64-cross (scripts/install-deps.sh cross)"
        )));
    }
    Ok(())
}

/// The browser peer on the page at `web` (`HOST:PORT` of the server's
/// web door) with `query`, leaving when it prints its `final` line, or
/// after `timeout` whatever happens.
pub fn browser_command(web: &str, query: &str, timeout: Duration) -> Command {
    let mut command = Command::new("node");
    command
        .args(["--experimental-websocket", "--no-warnings", DRIVER])
        .args(["--timeout", &timeout.as_secs().to_string()])
        .arg(format!("http://{web}/?{query}"));
    command
}

/// `client` (the aarch64 build of lockstep-client) under qemu-user; the
/// caller adds the client's arguments.
pub fn aarch64_command(client: &PathBuf) -> Command {
    let mut command = Command::new("qemu-aarch64");
    command.args(["-L", AARCH64_ROOT]).arg(client);
    command
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_page_or_aarch64_client_is_named_with_how_to_build_it() {
        let nowhere = std::env::temp_dir().join(format!("lockstep-no-page-{}", std::process::id()));
        let why = browser_ready(&nowhere).unwrap_err().0;
        assert!(
            why.contains("index.html") && why.contains("make web"),
            "{why}"
        );
        let why = aarch64_ready(&nowhere.join("lockstep-client"))
            .unwrap_err()
            .0;
        assert!(
            why.contains("lockstep-client") && why.contains("cross-build"),
            "{why}"
        );
    }

    #[test]
    fn the_browser_is_driven_to_the_page_with_the_bots_query() {
        let command = browser_command("127.0.0.1:4000", "name=web&bot=7", Duration::from_secs(900));
        let args: Vec<String> = command
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(args[2], DRIVER);
        assert_eq!(args[3..5], ["--timeout", "900"]);
        assert_eq!(args[5], "http://127.0.0.1:4000/?name=web&bot=7");
        assert!(Path::new(DRIVER).is_file(), "{DRIVER}");
    }
}
