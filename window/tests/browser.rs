//! The server browser in a real SDL2 window under Xvfb: started with
//! neither --connect nor --join, the client lists the servers advertised
//! on loopback, and its screenshot shows their rows, the one whose
//! fingerprint changed in red.

use std::time::Duration;

use lockstep_protocol::verification_code;
use lockstep_testkit::{client_bin, field, under_xvfb, xvfb_command, Client, Server, TempDir};
use lockstep_window::draw::screenshot::load_png_rgb;
use lockstep_window::draw::text::HUD_TEXT;
use lockstep_window::screens::browser::{SELECTED, WARNING};
use sdl2::pixels::Color;

fn pixel(image: &(u32, u32, Vec<u8>), x: u32, y: u32) -> Color {
    let (w, _, data) = image;
    let i = (y as usize * *w as usize + x as usize) * 3;
    Color::RGB(data[i], data[i + 1], data[i + 2])
}

/// A discovery port of this test's own in `base..base + 3000`, so the
/// browser lists this test's servers only, whatever else runs on this
/// machine (and never the default port).
fn discovery_port(base: u32) -> String {
    (base + std::process::id() % 3_000).to_string()
}

#[test]
fn the_browser_lists_the_servers_on_the_lan_and_marks_a_changed_fingerprint() {
    let port = discovery_port(40_000);
    let name = format!("browsed-{}", std::process::id());
    let mut server = Server::start(3, &["--name", &name, "--discovery-port", &port]);
    server.wait_for("advertising name=", Duration::from_secs(5));
    // A second server, listed after the first, whose name is on file with
    // another certificate.
    let changed = format!("browsed-changed-{}", std::process::id());
    let mut impostor = Server::start(2, &["--name", &changed, "--discovery-port", &port]);
    impostor.wait_for("advertising name=", Duration::from_secs(5));
    let dir = TempDir::new("browser");
    let shot = dir.0.join("browser.png");
    let known = dir.0.join("known_servers");
    std::fs::write(&known, format!("@{changed} {}\n", "ab".repeat(32))).expect("seed the file");
    let shot_arg = shot.to_string_lossy().to_string();
    let finished = under_xvfb(
        "browser",
        &[
            "--discovery-interface",
            "lo",
            "--discovery-port",
            &port,
            "--known-servers",
            &known.to_string_lossy(),
            "--browser-screenshot",
            &shot_arg,
        ],
    )
    .finish(Duration::from_secs(30));
    assert!(finished.success, "{}", finished.stderr);
    // What the browser showed, as `list` lines.
    let line = finished
        .stdout
        .lines()
        .find(|l| field(l, "name") == Some(name.as_str()))
        .unwrap_or_else(|| panic!("the browser did not list {name}: {}", finished.stdout));
    assert_eq!(field(line, "players"), Some("0/3"));
    assert_eq!(
        field(line, "code"),
        Some(verification_code(&server.fingerprint).as_str())
    );

    let image = load_png_rgb(&shot).expect("the screenshot is a PNG");
    assert_eq!((image.0, image.1), (1280, 720));
    // The chosen row (the first server) is lit: find its band at the
    // left edge of the window.
    let band: Vec<u32> = (0..image.1)
        .filter(|&y| pixel(&image, 10, y) == SELECTED)
        .collect();
    assert!(!band.is_empty(), "no row is lit");
    let (top, bottom) = (band[0], band[band.len() - 1]);
    assert!(bottom - top >= 8, "the lit row is {top}..{bottom}");
    // Text in it: the name on the left and the code on the right (the
    // address field's text, lit when no server is listed, stops far
    // short of the code's column), none of it the warning red.
    let text_in = |xs: std::ops::Range<u32>| {
        xs.flat_map(|x| (top..=bottom).map(move |y| (x, y)))
            .filter(|&(x, y)| pixel(&image, x, y) == HUD_TEXT)
            .count()
    };
    assert!(text_in(16..150) > 50, "no name drawn in the row");
    assert!(text_in(520..1000) > 50, "no code drawn in the row");
    let red = (0..image.0)
        .flat_map(|x| (top..=bottom).map(move |y| (x, y)))
        .filter(|&(x, y)| pixel(&image, x, y) == WARNING)
        .count();
    assert_eq!(
        red, 0,
        "a server never trusted before is not marked changed"
    );
    // The impostor's row, right below, says its fingerprint changed.
    let row_below = (bottom + 1)..=(bottom + 1 + (bottom - top));
    let red_below = (520..1000)
        .flat_map(|x| row_below.clone().map(move |y| (x, y)))
        .filter(|&(x, y)| pixel(&image, x, y) == WARNING)
        .count();
    assert!(red_below > 50, "the changed fingerprint is not shown");
    let impostor_line = finished
        .stdout
        .lines()
        .find(|l| field(l, "name") == Some(changed.as_str()))
        .expect("the impostor is listed");
    assert_eq!(field(impostor_line, "trust"), Some("changed"));
}

#[test]
fn enter_in_the_browser_joins_the_server_and_plays_it_in_a_new_window() {
    let port = discovery_port(43_000);
    let name = format!("entered-{}", std::process::id());
    let mut server = Server::start(1, &["--name", &name, "--discovery-port", &port]);
    server.wait_for("advertising name=", Duration::from_secs(5));
    let dir = TempDir::new("browser-enter");
    let known = dir.0.join("known_servers");
    // Inside one Xvfb display of its own: the client, and Enter pressed in
    // the browser's window every half second for as long as it is open
    // (Enter on a list whose row has not appeared yet, on a busy machine,
    // does nothing); the window is looked up again each time. No count
    // bounds the loop: the client's own exit ends it, and the test's
    // timeout is the last guard.
    let script = r#"
        "$0" "$@" & client=$!
        while kill -0 "$client" 2>/dev/null; do
          window=$(xdotool search --name "servers on the LAN" 2>/dev/null | head -n 1)
          [ -n "$window" ] && xdotool key --window "$window" Return 2>/dev/null
          sleep 0.5
        done
        wait "$client"
    "#;
    let mut command = xvfb_command();
    command
        .args(["sh", "-c", script])
        .arg(client_bin())
        .args(["--discovery-interface", "lo", "--discovery-port", &port])
        .args(["--name", "tester", "--bot", "1", "--ticks", "60"])
        .arg("--known-servers")
        .arg(&known);
    let finished = Client::spawn("browser-enter", &mut command).finish(Duration::from_secs(120));
    let (tick, _) = finished.final_line();
    assert_eq!(tick, 60);
    assert!(
        finished
            .stderr
            .contains(&format!("trusting the server {name}")),
        "{}",
        finished.stderr
    );
    server.wait_for("joined player=0 name=tester", Duration::from_secs(5));
}
