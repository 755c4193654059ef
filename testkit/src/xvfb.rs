//! Programs on a virtual display of their own: the window tests run the
//! client under Xvfb, each test on a display no other test shares.

use std::path::Path;
use std::process::Command;

use crate::{client_bin, Client};

/// Starts a display of its own (1280x720, 24 bits) and runs the program
/// and arguments that follow on it, then ends the display.
///
/// Xvfb chooses the display itself (`-displayfd`): it takes the first
/// number whose lock it wins. `xvfb-run -a` chose by looking for lock
/// files first, so two runs started at the same moment, as the tests of a
/// binary and two binaries at once do, could both pick one number.
const ON_XVFB: &str = r#"
    dir=$(mktemp -d) || exit 1
    xvfb=
    trap '[ -n "$xvfb" ] && kill "$xvfb" 2>/dev/null && wait "$xvfb"; rm -rf "$dir"' EXIT
    trap 'exit 143' TERM INT
    mkfifo "$dir/display" || exit 1
    Xvfb -displayfd 3 -screen 0 1280x720x24 -nolisten tcp 3>"$dir/display" 2>"$dir/log" &
    xvfb=$!
    read -r display <"$dir/display"
    if [ -z "$display" ]; then
      echo "Xvfb did not start:" >&2
      cat "$dir/log" >&2
      exit 1
    fi
    DISPLAY=":$display" "$@"
"#;

/// A command that runs what is added to it (a program and its arguments)
/// on a fresh Xvfb display of its own, 1280x720; the display ends with it.
pub fn xvfb_command() -> Command {
    assert!(
        Path::new("/usr/bin/Xvfb").exists(),
        "Xvfb is missing: install xvfb (make test does)"
    );
    let mut command = Command::new("sh");
    command.args(["-c", ON_XVFB, "on-xvfb"]);
    command
}

/// Runs `args` of the client inside a fresh Xvfb display, 1280x720.
pub fn under_xvfb(name: &str, args: &[&str]) -> Client {
    let mut command = xvfb_command();
    command.arg(client_bin()).args(args);
    Client::spawn(name, &mut command)
}

/// A command that runs the client under Xvfb and, once the client has
/// written its screenshot `shot`, clicks at `at` in its window (found by
/// a title matching `window`), runs the shell commands `then`, and waits
/// for the client to exit, as a person would; add the client's own
/// arguments (its `--screenshot` among them) and [`Client::spawn`] it.
pub fn click_after_screenshot(window: &str, shot: &Path, at: (i32, i32), then: &str) -> Command {
    let script = r#"
        "$0" "$@" & client=$!
        for _ in $(seq 300); do
          [ -s "$SHOT" ] && break
          sleep 0.1
        done
        window=$(xdotool search --name "$WINDOW" 2>/dev/null | head -n 1)
        xdotool mousemove --window "$window" "$X" "$Y" click 1
        eval "$THEN"
        wait "$client"
    "#;
    let mut command = xvfb_command();
    command
        .args(["sh", "-c", script])
        .arg(client_bin())
        .env("SHOT", shot)
        .env("WINDOW", window)
        .env("X", at.0.to_string())
        .env("Y", at.1.to_string())
        .env("THEN", then);
    command
}
