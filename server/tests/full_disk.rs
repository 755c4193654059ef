//! The disk filling up while the server records: real processes over real
//! QUIC on loopback, the replay directory a tmpfs of a few pages, mounted
//! in a mount namespace of the server's own (`unshare`) so nothing outside
//! sees it. The game plays on to one hash, the server says once that the
//! recording stopped and where the file ends, the file ends cleanly after
//! that bundle, and `--resume` on it goes on from there: the bots, ahead
//! of the file, start again from tick 0 and finish on one hash.
//!
//! Mounting needs root and `unshare`; without them the tests say so and
//! pass without running.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use lockstep_testkit::{
    clock, field, finish_in_lockstep, last_line, read_replay, server_bin, verified, Client, Server,
};

/// The tmpfs the replays go to: one page. The header takes a few hundred
/// bytes and a game of two bots adds some 30 bytes a tick (its bundle,
/// hash reports, status samples), so the file outgrows it after little
/// more than two seconds of game, long before [`TICKS`].
const DISK_SIZE: &str = "4k";

/// The game's length: 10 s at 60 ticks a second, most of it after the
/// disk filled.
const TICKS: u32 = 600;

/// Mounts a tmpfs of `$SIZE` over the server's `--replay-dir` and runs the
/// server (`$0`) with its arguments (`$@`).
const MOUNT_AND_RUN: &str = r#"
    prev=
    for arg in "$@"; do
      [ "$prev" = --replay-dir ] && dir=$arg
      prev=$arg
    done
    mount -t tmpfs -o size="$SIZE" tmpfs "$dir" || exit 1
    exec "$0" "$@"
"#;

/// Why a tmpfs cannot be mounted for the server here, if it cannot.
fn cannot_mount() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let uid = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().next());
    if uid != Some("0") {
        return Some("not root".into());
    }
    match Command::new("unshare").arg("--version").output() {
        Ok(out) if out.status.success() => None,
        _ => Some("no `unshare`".into()),
    }
}

/// A server for two players whose replay directory is a full-to-be tmpfs.
fn server_on_a_small_disk(extra: &[&str]) -> Server {
    let mut command = Command::new("unshare");
    command
        .args(["--mount", "--propagation", "private", "sh", "-c"])
        .arg(MOUNT_AND_RUN)
        .arg(server_bin())
        .env("SIZE", DISK_SIZE);
    Server::start_command(command, "127.0.0.1:0", 2, extra)
}

fn bots(server: &Server, extra: &[&str]) -> Vec<Client> {
    (0..2)
        .map(|i| {
            let name = format!("bot{i}");
            let mut command = lockstep_testkit::headless_bot(server, &name, 40 + i, TICKS);
            Client::spawn(&name, command.args(extra))
        })
        .collect()
}

/// The `recording stopped` line, once it comes, and the first tick it
/// says the file lacks.
fn recording_stopped(server: &mut Server) -> (String, usize) {
    let line = server.wait_for("recording stopped ", Duration::from_secs(60));
    assert!(
        line.ends_with(r#" error="No space left on device (os error 28)""#),
        "{line}"
    );
    let ticks = field(&line, "ticks")
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("no ticks in {line:?}"));
    assert!(
        ticks < TICKS as usize / 2,
        "the disk filled late, at tick {ticks}: {line}"
    );
    (line, ticks)
}

/// Waits until the server's log says it verified a snapshot of a tick
/// after `tick`: every player has played past it.
fn wait_for_snapshot_after(server: &Server, tick: usize) {
    let deadline = clock::now() + Duration::from_secs(60);
    loop {
        let past = server
            .log()
            .iter()
            .filter(|l| l.contains("snapshot verified"))
            .filter_map(|l| field(l, "tick")?.parse::<usize>().ok())
            .any(|verified| verified > tick);
        if past {
            return;
        }
        assert!(
            clock::now() < deadline,
            "no snapshot verified after tick {tick}; the server's log:\n{}",
            server.log().join("\n")
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A copy in `dir` of the replay the server writes to `path` inside its
/// own mount namespace (read through `/proc/PID/root`).
fn copy_out(server: &Server, path: &Path, dir: &Path) -> PathBuf {
    let inside = Path::new("/proc")
        .join(server.child.id().to_string())
        .join("root")
        .join(path.strip_prefix("/").expect("an absolute path"));
    let copy = dir.join("copied.lsreplay");
    std::fs::copy(&inside, &copy).expect("the replay copies out of the tmpfs");
    copy
}

#[test]
fn a_disk_that_fills_mid_game_stops_the_recording_once_and_the_game_plays_on_to_one_hash() {
    if let Some(why) = cannot_mount() {
        eprintln!("note: cannot mount a small disk for the server ({why}); test skipped");
        return;
    }
    let _serial = lockstep_testkit::one_at_a_time();
    let mut server = server_on_a_small_disk(&["--seed", "71"]);
    let clients = bots(&server, &[]);
    let replay = server.recording_path();
    let (line, ticks) = recording_stopped(&mut server);
    assert!(
        line.starts_with(&format!("recording stopped path={} ", replay.display())),
        "{line}"
    );

    let (_, (tick, _)) = finish_in_lockstep(clients, Duration::from_secs(120));
    assert_eq!(tick, TICKS);
    let verdict = server.wait_for("verdict ", Duration::from_secs(30));
    assert!(verdict.starts_with("verdict agreed "), "{verdict}");
    server.wait_for("game over tick=", Duration::from_secs(30));
    let stopped = server
        .seen
        .iter()
        .filter(|l| l.starts_with("recording"))
        .collect::<Vec<_>>();
    assert_eq!(
        stopped,
        [&format!("recording path={}", replay.display()), &line],
        "one line when the recording started, one when it stopped"
    );
    // The log, whose lines before the game's end are all read once that
    // is, warns once too.
    server.wait_for_log("game over", Duration::from_secs(60));
    let warnings = server
        .log()
        .iter()
        .filter(|l| l.contains("recording stopped"))
        .count();
    assert_eq!(warnings, 1, "{:?}", server.log());

    // The file ends after the bundle of the tick before the one the line
    // names, with nothing half written after it, and verifies to there.
    let copy = copy_out(&server, &replay, &server.replays.0);
    let file = std::fs::File::open(&copy).expect("the copy opens");
    let outcome = lockstep_protocol::Replay::read(file).expect("a replay");
    assert!(outcome.problem.is_none(), "{:?}", outcome.problem);
    assert_eq!(outcome.replay.bundles.len(), ticks);
    assert_eq!(outcome.replay.end, None);
    let prefix = verified(&copy, &[]);
    let end = last_line(&prefix);
    assert!(end.starts_with(&format!("final tick={ticks} ")), "{end}");
}

#[test]
fn a_server_that_dies_after_its_disk_filled_resumes_where_the_file_ends() {
    if let Some(why) = cannot_mount() {
        eprintln!("note: cannot mount a small disk for the server ({why}); test skipped");
        return;
    }
    let _serial = lockstep_testkit::one_at_a_time();
    // A verified snapshot every second tells when the bots are past the
    // file's end.
    let mut server = server_on_a_small_disk(&["--seed", "72", "--snapshot-secs", "1"]);
    let clients = bots(&server, &["--reconnect-secs", "60"]);
    let replay = server.recording_path();
    let (_, ticks) = recording_stopped(&mut server);
    wait_for_snapshot_after(&server, ticks);
    // The file has not changed since the recording stopped: copied out,
    // it is what the server leaves when it dies now.
    let copy = copy_out(&server, &replay, &server.replays.0);

    // Started again on a disk with room, on the copy: the bots played
    // past its end, so they start again from tick 0 and the game goes on
    // from the file's end.
    let mut resumed = Server::resume(server, &copy, &[]);
    let resuming = resumed.wait_for("resuming tick=", Duration::from_secs(60));
    assert_eq!(
        field(&resuming, "tick"),
        Some(ticks.to_string().as_str()),
        "{resuming}"
    );
    resumed.wait_for_all("reconnected player=", 2, Duration::from_secs(30));
    resumed.wait_for("resumed tick=", Duration::from_secs(30));
    let (finished, (tick, hash)) = finish_in_lockstep(clients, Duration::from_secs(120));
    assert_eq!(tick, TICKS);
    for bot in &finished {
        assert!(
            bot.stderr.contains("joining the game afresh"),
            "{}: {}",
            bot.name,
            bot.stderr
        );
    }

    // The one file holds the game from tick 0: the bundles before the
    // disk filled, then the resumed game's, and passes through the bots'
    // final hash.
    let recorded = read_replay(&copy);
    assert!(recorded.bundles.len() >= TICKS as usize);
    let at_end = verified(&copy, &["--ticks", &TICKS.to_string()]);
    assert_eq!(
        last_line(&at_end),
        format!("final tick={TICKS} hash={hash}")
    );
}
