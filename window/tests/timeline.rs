//! The replay window's timeline under Xvfb: it is drawn along the bottom
//! with the position, and a click on it seeks backward (xdotool clicks, as
//! a person would), to the exact state a straight re-simulation reaches.

use std::path::Path;
use std::time::Duration;

use lockstep_protocol::Tick;
use lockstep_testkit::{click_after_screenshot, verified, Client, TempDir};
use lockstep_window::draw::screenshot::load_png_rgb;
use lockstep_window::draw::timeline::Timeline;

/// The format 3 fixture of `report.rs`: 244 ticks.
const REPLAY: &str = "tests/fixtures/format3-2players-244ticks.lsreplay";
const WINDOW: (u32, u32) = (640, 360);

#[test]
fn a_click_on_the_timeline_seeks_back_to_the_exact_state() {
    let replay = Path::new(env!("CARGO_MANIFEST_DIR")).join(REPLAY);
    let dir = TempDir::new("timeline");
    let shot = dir.0.join("timeline.png");
    let line = Timeline {
        total: 244,
        marks: Vec::new(),
    };
    let bar = Timeline::area(WINDOW);
    let target = line.x_of(bar, Tick(20));
    // Inside one Xvfb display: the replay from tick 200, photographed on
    // its first frame; then a click on the bar at tick 20, and Esc.
    let mut command = click_after_screenshot(
        "replay",
        &shot,
        (target, bar.center().y()),
        "sleep 0.3; xdotool key Escape",
    );
    command
        .arg("replay")
        .arg(&replay)
        .args([
            "--seek",
            "200",
            "--speed",
            "0.25",
            "--window-size",
            "640x360",
        ])
        .arg("--screenshot")
        .arg(&shot);
    let finished = Client::spawn("replay", &mut command).finish(Duration::from_secs(60));
    assert!(finished.success, "{}", finished.stderr);
    let (tick, hash) = finished.final_line();
    assert!(
        (20..120).contains(&tick),
        "the click did not seek back from 200 to about 20: tick {tick}"
    );
    // The state after seeking back is the straight re-simulation's.
    let straight = verified(&replay, &["--ticks", &tick.to_string()]);
    let stdout = String::from_utf8_lossy(&straight.stdout);
    assert!(
        stdout.contains(&format!("final tick={tick} hash={hash}")),
        "{stdout}"
    );
    // The first frame shows the bar played up to tick 200, the position
    // drawn there.
    let (width, _, pixels) = load_png_rgb(&shot).expect("the screenshot is a PNG");
    let at = |x: i32, y: i32| {
        let i = 3 * (y as usize * width as usize + x as usize);
        (pixels[i], pixels[i + 1], pixels[i + 2])
    };
    let head = line.x_of(bar, Tick(200));
    assert_eq!(at(head, bar.center().y()), (240, 240, 240), "the position");
    assert_eq!(at(bar.x() + 30, bar.center().y()), (90, 110, 160), "played");
    assert_ne!(
        at(head + 20, bar.center().y()),
        (90, 110, 160),
        "not played"
    );
}
