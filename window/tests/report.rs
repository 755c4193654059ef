//! `lockstep-client report`: the picture of a whole game, drawn from its
//! replay without a display; and replays of the previous format, which
//! must still verify.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use lockstep_protocol::{GameEvent, Tick};
use lockstep_testkit::{client_bin, read_replay, verified, Client, Server, TempDir};
use lockstep_window::draw::chart::Mark;
use lockstep_window::draw::screenshot::load_png_rgb;
use lockstep_window::screens::report::Layout;

/// A game recorded by the server of replay format 3 (before the status
/// samples): two bots, seed 5, 244 ticks, every hash agreed.
const FORMAT_3: &str = "tests/fixtures/format3-2players-244ticks.lsreplay";

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(FORMAT_3)
}

/// Runs `report` on `replay` into `out`, `width` pixels wide, without a
/// display.
fn report(replay: &Path, out: &Path, width: u32) -> std::process::Output {
    Command::new(client_bin())
        .arg("report")
        .arg(replay)
        .arg("--out")
        .arg(out)
        .args(["--width", &width.to_string()])
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .expect("report runs")
}

/// The pixel at (x, y) of an RGB picture `width` wide.
fn pixel(pixels: &[u8], width: u32, x: i32, y: i32) -> (u8, u8, u8) {
    let at = 3 * (y as usize * width as usize + x as usize);
    (pixels[at], pixels[at + 1], pixels[at + 2])
}

/// Whether some column within two pixels of `x`, at row `y`, has `mark`'s
/// colour.
fn has_mark(pixels: &[u8], width: u32, x: i32, y: i32, mark: Mark) -> bool {
    let c = mark.colour();
    (x - 2..=x + 2).any(|x| pixel(pixels, width, x, y) == (c.r, c.g, c.b))
}

#[test]
fn a_format_3_replay_still_verifies_and_has_a_report() {
    let out = verified(&fixture(), &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("verified ticks=244 checks=32"), "{stdout}");
    assert!(
        stdout.contains("final tick=244 hash=b94b401223e6cfeb"),
        "{stdout}"
    );

    let dir = TempDir::new("report-old");
    let png = dir.0.join("old.png");
    let run = report(&fixture(), &png, 800);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(
        stdout.contains("ticks=244 players=2 verdict=verified"),
        "{stdout}"
    );
    let (width, height, _) = load_png_rgb(&png).expect("the report is a PNG");
    assert_eq!((width, height), Layout::new(800, 2).size);
}

#[test]
fn the_report_of_a_game_with_a_drop_and_a_desync_marks_both() {
    // The default drop timeout (2 s): a shorter one drops a player of a
    // busy test machine too, not only the one killed.
    let mut server = Server::start(3, &["--seed", "41", "--hash-interval", "15"]);
    // Every client dumps the desync's ticks: into a temporary directory,
    // not the working directory.
    let dumps = TempDir::new("report-dumps");
    let bot = |name: &str, seed: u64, extra: &[&str]| {
        let mut command = lockstep_testkit::headless_bot(&server, name, seed, 900);
        command.arg("--dump-dir").arg(&dumps.0).args(extra);
        Client::spawn(name, &mut command)
    };
    let steady = bot("steady", 1, &[]);
    let faulty = bot("faulty", 2, &["--inject-desync-at", "293"]);
    let victim = bot("victim", 3, &[]);
    let path = server.recording_path();
    server.wait_for("desync tick=", Duration::from_secs(30));
    // SIGKILL: the victim says nothing, the server drops it on silence.
    lockstep_testkit::signal(victim.child.id(), "KILL");
    let dropped = server.wait_for("dropped player=", Duration::from_secs(10));
    assert!(dropped.contains("name=victim"), "{dropped}");
    for client in [steady, faulty] {
        let finished = client.finish(Duration::from_secs(60));
        assert!(finished.success, "{}: {}", finished.name, finished.stderr);
    }
    server.wait_for("verdict ", Duration::from_secs(10));

    let replay = read_replay(&path);
    assert!(
        replay.statuses.len() > 20,
        "a few status samples a second: {}",
        replay.statuses.len()
    );
    let first = replay
        .events
        .iter()
        .find_map(|(_, e)| match e {
            GameEvent::Desync { first, .. } => *first,
            GameEvent::Speed { .. } => None,
        })
        .expect("the desync is recorded with its first tick");
    assert_eq!(first, Tick(293));
    let (drop_tick, _, _) = replay.departures[0].clone();
    let ticks = replay.bundles.len() as u32;

    let dir = TempDir::new("report");
    let png = dir.0.join("report.png");
    let run = report(&path, &png, 1000);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&run.stderr)
    );
    // The replay verifies; the game had a desync, said with who diverged
    // and against whom.
    assert!(stdout.contains("players=3 verdict=desync\n"), "{stdout}");
    let desync = stdout
        .lines()
        .find(|l| l.starts_with("desync "))
        .unwrap_or_else(|| panic!("no desync line: {stdout}"));
    assert!(
        desync.contains(" first=293 diverged=faulty against="),
        "{desync}"
    );
    // The others in roster order, which is the order they joined in.
    let against = desync
        .split_whitespace()
        .find_map(|field| field.strip_prefix("against="))
        .unwrap_or_default();
    let mut others: Vec<&str> = against.split(',').collect();
    others.sort_unstable();
    assert_eq!(others, ["steady", "victim"], "{desync}");
    let (width, height, pixels) = load_png_rgb(&png).expect("the report is a PNG");
    let layout = Layout::new(1000, 3);
    assert_eq!((width, height), layout.size);
    // Both markers cross the middle of the events panel at their ticks.
    let middle = layout.events.y() + layout.events.height() as i32 / 2;
    let desync_x = layout.x_of(first, ticks);
    let drop_x = layout.x_of(drop_tick, ticks);
    assert!(
        has_mark(&pixels, width, desync_x, middle, Mark::Desync),
        "no desync marker at x={desync_x}"
    );
    assert!(
        has_mark(&pixels, width, drop_x, middle, Mark::Drop),
        "no drop marker at x={drop_x} (tick {drop_tick} of {ticks})"
    );
    // And nowhere else is a drop: the picture is not just painted over.
    let far = layout.events.x() + 4;
    assert!(!has_mark(&pixels, width, far, middle, Mark::Drop));
    // The victim's own panel shows its drop too, and the server's samples
    // drew its ping.
    let victim_slot = lockstep_testkit::slot_of(&replay, "victim");
    let index = replay
        .header
        .roster
        .iter()
        .position(|r| r.id == victim_slot)
        .expect("the victim is in the roster");
    let panel = layout.player(index);
    let panel_middle = panel.y() + panel.height() as i32 / 2;
    assert!(has_mark(&pixels, width, drop_x, panel_middle, Mark::Drop));
    let ping = lockstep_window::screens::report::PING;
    let ping_drawn = (panel.y()..panel.bottom()).any(|y| {
        (panel.x()..panel.right()).any(|x| pixel(&pixels, width, x, y) == (ping.r, ping.g, ping.b))
    });
    assert!(ping_drawn, "no ping line in the victim's panel");
    if let Some(keep) = std::env::var_os("LOCKSTEP_KEEP_REPORT") {
        let _ = std::fs::copy(&png, keep);
    }
}
