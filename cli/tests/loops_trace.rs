//! `lockstep-client loops --trace` reproduces the worked examples of the
//! seed articles: the binary runs a strategy on a fake clock and prints
//! `frame=I steps=K alpha=A` per frame.

use std::process::Command;

/// Runs `loops --trace` on `strategy` with ticks of `tick_ms`, frames of
/// `frame_ms` (a comma-separated list used in turn) and `extra` flags, for
/// `frames` frames; returns its stdout lines.
fn trace(
    strategy: &str,
    tick_ms: &str,
    frame_ms: &str,
    frames: u32,
    extra: &[&str],
) -> Vec<String> {
    let frames = frames.to_string();
    let output = Command::new(env!("CARGO_BIN_EXE_lockstep-client"))
        .args([
            "loops",
            "--trace",
            "--strategy",
            strategy,
            "--tick-ms",
            tick_ms,
        ])
        .args(["--frame-ms", frame_ms, "--frames", &frames])
        .args(extra)
        .output()
        .expect("the client runs");
    assert!(
        output.status.success(),
        "loops --trace {strategy} {extra:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .expect("UTF-8 output")
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The lines `frame=1..` with these steps and alphas.
fn expected(frames: &[(u32, &str)]) -> Vec<String> {
    (1..)
        .zip(frames)
        .map(|(frame, (steps, alpha))| format!("frame={frame} steps={steps} alpha={alpha}"))
        .collect()
}

#[test]
fn flipcode_30_fps_at_20_ticks_a_second_runs_0_1_1_ticks_per_frame() {
    // Flipcode ("Main Loop with Fixed Time Steps"), TICK_TIME 50
    // ms, 30 fps: "only 33.33333 milliseconds have elapsed, not enough to
    // fulfill a single game logic tick ... so we just skip the game logic
    // and render a frame. Next time the time elapsed is 66.666666666, so we
    // run one logic tick ... getting 16.666666666 milliseconds left ...
    // Next tick we have 16.66666+33.3333333333 = 50 milliseconds, so we run
    // a tick, get a remainder of 0 milliseconds, render, and go on and
    // on". The frames are 33.334, 33.333 and 33.333 ms so that three of
    // them are exactly 100 ms, as three thirds are. Alpha is the tip's
    // percentWithinTick = min(1, (time1 - time0) / TICK_TIME): 33.334/50,
    // 16.667/50, 0/50.
    let lines = trace("fixed", "50", "33.334,33.333,33.333", 6, &[]);
    let cycle = [(0, "0.667"), (1, "0.333"), (1, "0.000")];
    assert_eq!(lines, expected(&[cycle, cycle].concat()));
}

#[test]
fn flipcode_100_ms_frames_run_two_ticks_each() {
    // Flipcode: "let's say that rendering each frame takes 100
    // milliseconds ... the loop will execute twice for each frame rendered
    // (at 10 fps)".
    let lines = trace("fixed", "50", "100", 5, &[]);
    assert_eq!(lines, expected(&[(2, "0.000"); 5]));
}

#[test]
fn flipcode_50_ms_frames_run_one_tick_each() {
    // Flipcode: "If each render takes 50 milliseconds (say you got a better
    // videocard), the loop will be done just once and you'll be achieving
    // 20 fps."
    let lines = trace("fixed", "50", "50", 4, &[]);
    assert_eq!(lines, expected(&[(1, "0.000"); 4]));
}

#[test]
fn seed_002_one_second_frames_simulate_twice_each() {
    // The functional loop ("A purely functional fixed timestep loop"), first test
    // ride: the fake clock advances one second (1000 jiffies) per call and
    // Δt = 500, so every frame prints two "Simulating" lines (t=0, t=500,
    // then t=1000, t=1500, ...) before "Rendering...", with no lag left.
    // The run shown ends after the frame simulating t=10000 and t=10500:
    // 11 frames.
    let lines = trace("fixed", "500", "1000", 11, &[]);
    assert_eq!(lines, expected(&[(2, "0.000"); 11]));
}

#[test]
fn seed_002_60_fps_at_50_hz_skips_a_simulation_every_fifth_frame() {
    // The functional loop, second run: frames of floor(1000/60) = 16 jiffies, Δt = 20.
    // "the first frame ran without simulation because there was not
    // enough lag. The second frame had enough lag for one simulation and
    // left 12ms lag ... The third frame had thus 12ms plus its own 16ms
    // for a total of 28ms ... until in the sixth frame we reach the point
    // where there is not enough lag". Its output, 16 "Rendering..." lines:
    // none, then t=0 (lag 32), t=20 (28), t=40 (24), t=60 (20), none,
    // t=80 (32), ... So the lag after each frame is 16, 12, 8, 4, 0, and
    // its α = lag / Δt is 0.8, 0.6, 0.4, 0.2, 0.
    let lines = trace("fixed", "20", "16", 16, &[]);
    let cycle = [
        (0, "0.800"),
        (1, "0.600"),
        (1, "0.400"),
        (1, "0.200"),
        (1, "0.000"),
    ];
    let frames: Vec<(u32, &str)> = cycle.iter().copied().cycle().take(16).collect();
    assert_eq!(lines, expected(&frames));
}

#[test]
fn max_loops_caps_the_ticks_and_discards_down_to_one_pending_tick() {
    // Flipcode's MAX_LOOPS guard: 300 ms frames owe 6 ticks of 50 ms, only
    // 2 run, and pending time is cut to one tick: percentWithinTick is
    // min(1, 50/50) = 1, "numLoops overflow causing percent > 1". The next
    // frame runs that pending tick and one more of its own.
    let lines = trace("fixed", "50", "300", 3, &["--max-loops", "2"]);
    assert_eq!(lines, expected(&[(2, "1.000"); 3]));
}

#[test]
fn networked_play_ignores_max_loops_and_catches_up_in_full() {
    // Flipcode: "If you're playing a network game you usually can't just
    // slow down the game time unless all machines do the same, so you
    // can't use the MAX_LOOPS guard."
    let lines = trace(
        "fixed",
        "50",
        "300",
        3,
        &["--max-loops", "2", "--networked"],
    );
    assert_eq!(lines, expected(&[(6, "0.000"); 3]));
}

#[test]
fn a_maximum_delta_slows_game_time_instead() {
    // fx-game-loops' maxDelta: a 300 ms frame counts as 100 ms, two ticks of
    // 50 ms; the rest never reaches the accumulator.
    let lines = trace("fixed", "50", "300", 2, &["--max-delta-ms", "100"]);
    assert_eq!(lines, expected(&[(2, "0.000"); 2]));
}

#[test]
fn variable_steps_update_once_per_frame() {
    let lines = trace("variable", "50", "16,300", 2, &[]);
    assert_eq!(lines, expected(&[(1, "1.000"); 2]));
}

#[test]
fn an_unknown_strategy_is_refused_by_name() {
    let output = Command::new(env!("CARGO_BIN_EXE_lockstep-client"))
        .args(["loops", "--trace", "--strategy", "fast", "--tick-ms", "16"])
        .args(["--frame-ms", "16"])
        .output()
        .expect("the client runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("fixed-interp"), "{stderr}");
}

#[test]
fn without_trace_the_ladder_is_listed() {
    let output = Command::new(env!("CARGO_BIN_EXE_lockstep-client"))
        .arg("loops")
        .output()
        .expect("the client runs");
    assert!(output.status.success());
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(stdout.lines().count(), 8, "{stdout}");
    assert!(stdout.contains("fixed-interp"), "{stdout}");
}
