//! The client's offline tools as the tests run them: a replay verified,
//! two desync dumps compared.

use std::path::Path;
use std::process::{Command, Output};

use crate::{client_bin, TempDir};

/// Runs `lockstep-client replay FILE --verify --headless`, plus `extra`,
/// to its end.
pub fn verify(file: &Path, extra: &[&str]) -> Output {
    Command::new(client_bin())
        .arg("replay")
        .arg(file)
        .args(["--verify", "--headless"])
        .args(extra)
        .output()
        .expect("replay runs")
}

/// [`verify`], failing the test (with the client's stderr) unless the
/// replay verified.
pub fn verified(file: &Path, extra: &[&str]) -> Output {
    let out = verify(file, extra);
    assert!(
        out.status.success(),
        "{} did not verify: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `bin desync-diff` of the dumps `a` and `b` in `dumps` (the client
/// binary, or another built with other games): what it printed and how
/// it exited.
pub fn desync_diff(bin: &Path, dumps: &TempDir, a: &str, b: &str) -> Output {
    Command::new(bin)
        .arg("desync-diff")
        .arg(dumps.0.join(a))
        .arg(dumps.0.join(b))
        .output()
        .expect("desync-diff runs")
}
