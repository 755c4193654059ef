//! Recording and replaying: the server's replay of a networked game
//! verifies to the clients' hash in another process, and names each
//! player's last report at its final tick; damaged files are
//! refused with their byte offset; a server killed with SIGKILL leaves a
//! readable replay.

use std::time::Duration;

use lockstep_testkit::{client_bin, last_line, verified, verify, Client, Server, TempDir};

#[test]
fn a_server_replay_verifies_to_the_clients_hash_in_another_process() {
    let mut server = Server::start(3, &["--seed", "41"]);
    let clients: Vec<Client> = (0..3)
        .map(|i| Client::headless_bot(&server, &format!("bot{i}"), i, 600))
        .collect();
    let file = server.recording_path();
    assert!(file.starts_with(&server.replays.0), "{}", file.display());
    let finals: Vec<(u32, String)> = clients
        .into_iter()
        .map(|c| c.finish(Duration::from_secs(60)).final_line())
        .collect();
    server.wait_for("game over", Duration::from_secs(20));

    let out = verified(&file, &["--ticks", "600"]);
    assert_eq!(
        last_line(&out),
        format!("final tick=600 hash={}", finals[0].1)
    );
    // Every client reported a hash every 15 ticks: 40 each up to tick 600.
    let stdout = String::from_utf8_lossy(&out.stdout);
    let checks: u32 = stdout
        .split_whitespace()
        .find_map(|f| f.strip_prefix("checks="))
        .and_then(|v| v.parse().ok())
        .expect("checks");
    assert!(checks >= 120, "{stdout}");
    // The whole file (players leave a few ticks after 600) verifies too,
    // and says each player's last report: at the tick of its final line,
    // with its hash.
    let whole = verified(&file, &[]);
    assert!(String::from_utf8_lossy(&whole.stderr).is_empty());
    let stdout = String::from_utf8_lossy(&whole.stdout);
    for (i, (tick, hash)) in finals.iter().enumerate() {
        let said = format!(" name=bot{i} tick={tick} hash={hash}");
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with("last player=") && l.ends_with(&said)),
            "no line ending {said:?} in {stdout}"
        );
    }
}

#[test]
fn truncated_and_corrupted_replays_are_refused_saying_where() {
    let dir = TempDir::new("damaged");
    let file = dir.0.join("solo.lsreplay");
    // A recorded solo game (under Xvfb: solo play has a window).
    let out = lockstep_testkit::xvfb_command()
        .arg(client_bin())
        .args([
            "solo", "--bots", "3", "--bot", "1", "--ticks", "300", "--record",
        ])
        .arg(&file)
        .output()
        .expect("solo runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let solo_final = last_line(&out);
    let intact = verify(&file, &[]);
    assert!(intact.status.success());
    assert_eq!(last_line(&intact), solo_final);

    let bytes = std::fs::read(&file).expect("replay bytes");
    let cut = dir.0.join("cut.lsreplay");
    std::fs::write(&cut, &bytes[..bytes.len() / 2 + 3]).expect("write");
    let out = verify(&cut, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("truncated at byte"), "{stderr}");
    assert!(stderr.contains("verified"), "{stderr}");

    let mut damaged = bytes.clone();
    let middle = damaged.len() / 2;
    damaged[middle] ^= 0xff;
    let bad = dir.0.join("bad.lsreplay");
    std::fs::write(&bad, &damaged).expect("write");
    let out = verify(&bad, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("corrupt at byte"), "{stderr}");

    let other = dir.0.join("other.lsreplay");
    let mut newer = bytes.clone();
    newer[8] = 99;
    std::fs::write(&other, &newer).expect("write");
    let out = verify(&other, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("format 99 is not supported"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_server_killed_with_sigkill_leaves_a_replay_readable_to_its_last_bundle() {
    let mut server = Server::start(2, &["--seed", "43"]);
    let records = TempDir::new("client-records");
    let clients: Vec<Client> = (0..2)
        .map(|i| {
            let mut command = lockstep_testkit::headless(&server, &format!("bot{i}"));
            command
                .args(["--bot", &i.to_string()])
                .arg("--record")
                .arg(records.0.join(format!("bot{i}.lsreplay")));
            Client::spawn(&format!("bot{i}"), &mut command)
        })
        .collect();
    let file = server.recording_path();
    lockstep_testkit::wait_for_bundles(&file, 180);
    lockstep_testkit::signal(server.child.id(), "KILL");
    let _ = server.child.wait();
    drop(clients);

    let out = verified(&file, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no end record"), "{stderr}");
    let server_ticks: u32 = last_line(&out)
        .strip_prefix("final tick=")
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|t| t.parse().ok())
        .expect("final tick");
    assert!(server_ticks > 100, "only {server_ticks} ticks recorded");
    // The server writes each bundle before sending it, so no client can
    // have simulated a tick the server's file lacks; and the clients'
    // own recordings verify against the server's replay up to their end.
    for i in 0..2 {
        let own = verify(&records.0.join(format!("bot{i}.lsreplay")), &[]);
        let own_last = last_line(&own);
        let own_ticks: u32 = own_last
            .strip_prefix("final tick=")
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(|| panic!("bot{i}: {own_last}"));
        assert!(
            own_ticks <= server_ticks,
            "bot{i} at {own_ticks}, server file {server_ticks}"
        );
        let same_point = verify(&file, &["--ticks", &own_ticks.to_string()]);
        assert_eq!(last_line(&same_point), own_last, "bot{i}");
    }
}

#[test]
fn the_playback_window_verifies_and_shows_the_replay() {
    let dir = TempDir::new("playback");
    let file = dir.0.join("solo.lsreplay");
    let shot = dir.0.join("playback.png");
    let file_arg = file.to_string_lossy().to_string();
    let shot_arg = shot.to_string_lossy().to_string();
    let recorded = lockstep_testkit::under_xvfb(
        "record",
        &[
            "solo", "--bots", "2", "--bot", "3", "--ticks", "240", "--record", &file_arg,
        ],
    )
    .finish(Duration::from_secs(60));
    let solo_final = recorded.final_line();
    let played = lockstep_testkit::under_xvfb(
        "playback",
        &[
            "replay",
            &file_arg,
            "--verify",
            "--screenshot-tick",
            "200",
            "--screenshot",
            &shot_arg,
        ],
    )
    .finish(Duration::from_secs(60));
    assert_eq!(played.final_line(), solo_final);
    let (w, h, pixels) =
        lockstep_window::draw::screenshot::load_png_rgb(&shot).expect("screenshot");
    assert_eq!((w, h), (1280, 720));
    // The three players' colours are on screen.
    for id in 0..3 {
        let c = lockstep_window::draw::colour::player_colour(lockstep_protocol::PlayerId(id));
        let found = pixels
            .chunks_exact(3)
            .filter(|p| p[0] == c.r && p[1] == c.g && p[2] == c.b)
            .count();
        assert!(found > 200, "player {id}: {found} pixels");
    }
}
