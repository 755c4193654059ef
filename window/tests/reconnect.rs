//! A window whose server dies: under Xvfb, the game stands still with its
//! world kept and the banner says the server is lost and the client is
//! reconnecting; the screenshot shows it.

use std::time::Duration;

use lockstep_testkit::{windowed, Client, Server, TempDir};
use lockstep_window::draw::render::BANNER_TEXT;
use lockstep_window::draw::screenshot::load_png_rgb;

#[test]
fn a_window_that_lost_its_server_says_it_is_reconnecting() {
    let mut server = Server::start(2, &["--seed", "29"]);
    let dir = TempDir::new("reconnect");
    let shot = dir.0.join("reconnecting.png");
    let shot_arg = shot.to_string_lossy().to_string();
    let window = windowed(
        &server,
        "viewer",
        &[
            "--bot",
            "7",
            "--ticks",
            "100000",
            "--window-size",
            "640x360",
            "--reconnect-secs",
            "2",
            "--screenshot",
            &shot_arg,
            "--screenshot-reconnecting",
        ],
    );
    let bot = Client::headless_bot(&server, "bot", 1, 100_000);
    server.wait_for("start players=", Duration::from_secs(20));
    lockstep_testkit::wait_for_bundles(&server.recording_path(), 120);
    let _ = server.child.kill();
    let finished = window.finish(Duration::from_secs(40));
    drop(bot);
    // No server came back within 2 s: the window gives up and says why.
    assert!(!finished.success);
    assert!(
        finished
            .stderr
            .contains("lost the server: nothing heard from it for 5 s; reconnecting for up to 2 s"),
        "{}",
        finished.stderr
    );
    if let Some(keep) = std::env::var_os("LOCKSTEP_KEEP_SHOT") {
        std::fs::copy(&shot, keep).expect("the screenshot is copied");
    }
    let (width, height, pixels) = load_png_rgb(&shot).expect("the screenshot is a PNG");
    assert_eq!((width, height), (640, 360));
    // The banner's large text sits across the middle of the arena.
    let text = pixels
        .chunks_exact(3)
        .enumerate()
        .filter(|(i, p)| {
            let y = *i as u32 / width;
            (height / 3..2 * height / 3).contains(&y)
                && (p[0], p[1], p[2]) == (BANNER_TEXT.r, BANNER_TEXT.g, BANNER_TEXT.b)
        })
        .count();
    assert!(text > 1500, "only {text} pixels of text across the middle");
}
