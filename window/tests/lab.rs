//! The game loop lab in a real SDL2 window under Xvfb: the screenshot shows
//! the strip chart, real per-tick costs make the loops fail as the seeds
//! say they do, every game plays in it, and a game that steps only by its
//! tick is not handed a variable step.

use std::time::Duration;

use lockstep_testkit::{under_xvfb, TempDir};
use lockstep_window::draw::screenshot::load_png_rgb;
use lockstep_window::screens::lab::{layout, FRAME_BAR, STEP_BAR};

/// Pixels of exactly `colour` inside `rect`, and outside it.
fn count(
    image: &(u32, u32, Vec<u8>),
    colour: sdl2::pixels::Color,
    rect: sdl2::rect::Rect,
) -> (usize, usize) {
    let (width, _, data) = image;
    let (mut inside, mut outside) = (0, 0);
    for (index, pixel) in data.chunks_exact(3).enumerate() {
        if pixel != [colour.r, colour.g, colour.b] {
            continue;
        }
        let x = (index % *width as usize) as i32;
        let y = (index / *width as usize) as i32;
        if rect.contains_point((x, y)) {
            inside += 1;
        } else {
            outside += 1;
        }
    }
    (inside, outside)
}

/// A `key=value` field of the lab's report line.
fn field(stdout: &str, key: &str) -> u64 {
    let line = stdout
        .lines()
        .find(|l| l.starts_with("lab "))
        .unwrap_or_else(|| panic!("no report line in {stdout:?}"));
    line.split_whitespace()
        .find_map(|f| f.strip_prefix(&format!("{key}=")))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {key} in {line:?}"))
}

/// Runs the lab with `args` to the end and returns its stdout.
fn lab(name: &str, args: &[&str]) -> String {
    let mut all = vec!["lab"];
    all.extend_from_slice(args);
    let finished = under_xvfb(name, &all).finish(Duration::from_secs(60));
    assert!(
        finished.success,
        "lab {args:?} failed:\nstdout: {}\nstderr: {}",
        finished.stdout, finished.stderr
    );
    finished.stdout
}

/// Runs `lockstep-client` with `args`, which must fail; its complaints
/// (the stderr lines of the client itself).
fn refused(name: &str, args: &[&str]) -> Vec<String> {
    let finished = under_xvfb(name, args).finish(Duration::from_secs(60));
    assert!(!finished.success, "{args:?} ran:\n{}", finished.stdout);
    assert!(!finished.stderr.contains("panicked"), "{}", finished.stderr);
    finished
        .stderr
        .lines()
        .filter(|l| l.starts_with("lockstep-client: "))
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_screenshot_shows_the_strip_chart_of_frame_times_and_steps() {
    let dir = TempDir::new("lab");
    let shot = dir.0.join("lab.png");
    let stdout = lab(
        "lab-chart",
        &[
            "--strategy",
            "fixed-interp",
            "--frames",
            "90",
            "--screenshot",
            &shot.to_string_lossy(),
        ],
    );
    assert_eq!(field(&stdout, "frames"), 90);
    let image = load_png_rgb(&shot).expect("screenshot is a PNG");
    assert_eq!((image.0, image.1), (1280, 720));
    let chart = layout((1280, 720)).chart;
    // Some 90 bars of about 17 ms on a 20 ms scale, 2 px wide: thousands
    // of pixels of the bar colour, and (almost) none anywhere else.
    let (bars, elsewhere) = count(&image, FRAME_BAR, chart);
    assert!(bars > 3_000, "only {bars} frame-time pixels in the chart");
    assert!(
        elsewhere < 50,
        "{elsewhere} frame-time pixels outside the chart"
    );
    let (steps, _) = count(&image, STEP_BAR, chart);
    assert!(
        steps > 500,
        "only {steps} steps-per-frame pixels in the chart"
    );
}

#[test]
fn a_tick_costlier_than_its_time_spirals_without_a_guard() {
    // 30 ms of work per 16.7 ms tick: each frame owes more ticks than the
    // last, until the lab's update budget (250 ms) cuts frames short.
    // Nothing is discarded, so the debt grows: every cut frame lasts at
    // least 250 ms and simulates at most 9 ticks, 150 ms, and from about
    // the sixth frame on every frame is cut.
    let stdout = lab(
        "lab-spiral",
        &[
            "--strategy",
            "fixed",
            "--tick-cost-ms",
            "30",
            "--frames",
            "14",
        ],
    );
    assert!(field(&stdout, "max_steps") >= 4, "{stdout}");
    assert_eq!(field(&stdout, "discarded_ms"), 0, "{stdout}");
    assert!(field(&stdout, "pending_ms") > 500, "{stdout}");
}

#[test]
fn max_loops_turns_the_spiral_into_slow_motion() {
    // The same load under MAX_LOOPS 2: never more than 2 ticks a frame,
    // and the time they cannot cover is discarded.
    let stdout = lab(
        "lab-max-loops",
        &[
            "--strategy",
            "fixed",
            "--tick-cost-ms",
            "30",
            "--max-loops",
            "2",
            "--frames",
            "40",
        ],
    );
    assert!(field(&stdout, "max_steps") <= 2, "{stdout}");
    assert!(field(&stdout, "discarded_ms") > 0, "{stdout}");
    assert!(
        field(&stdout, "game_ms") < field(&stdout, "real_ms"),
        "{stdout}"
    );
}

/// Runs the lab on `game` with `args` for 20 frames, and checks it drew
/// them all; its stdout.
fn twenty_frames_of(game: &str, args: &[&str]) -> String {
    let mut all = vec!["--game", game, "--frames", "20"];
    all.extend_from_slice(args);
    let stdout = lab(&format!("lab-{game}"), &all);
    assert_eq!(field(&stdout, "frames"), 20, "{stdout}");
    stdout
}

#[test]
fn the_physics_game_steps_by_each_frames_measured_dt() {
    let stdout = twenty_frames_of("physics", &["--set", "bodies=40", "--strategy", "variable"]);
    // One update a frame, whatever it lasted.
    assert_eq!(field(&stdout, "max_steps"), 1, "{stdout}");
}

#[test]
fn tally_plays_under_a_fixed_step_with_bots_of_its_own() {
    twenty_frames_of("tally", &["--bots", "7", "--strategy", "fixed-interp"]);
}

#[test]
fn a_game_that_steps_only_by_its_tick_refuses_a_variable_strategy() {
    let said = refused(
        "lab-tally-variable",
        &[
            "lab",
            "--game",
            "tally",
            "--strategy",
            "variable-max",
            "--frames",
            "5",
        ],
    );
    assert_eq!(
        said,
        [
            "lockstep-client: the game tally steps only by its fixed tick, and the strategy \
             variable-max steps by a measured dt: try fixed, fixed-max, fixed-interp or mixed"
        ]
    );
}

#[test]
fn an_unknown_game_or_setting_is_refused_as_solo_play_refuses_it() {
    for (name, choice) in [
        ("unknown-game", ["--game", "nope"]),
        ("unknown-setting", ["--set", "colour=red"]),
    ] {
        let mut lab = vec!["lab", "--frames", "5"];
        lab.extend(choice);
        let mut solo = vec!["solo", "--ticks", "5"];
        solo.extend(choice);
        let by_lab = refused(&format!("lab-{name}"), &lab);
        assert_eq!(by_lab.len(), 1, "{by_lab:?}");
        assert_eq!(by_lab, refused(&format!("solo-{name}"), &solo));
    }
}
