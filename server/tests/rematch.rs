//! Rematches: headless bots play several games back to back on one
//! connection each, the server recording every game to its own replay.

use std::path::PathBuf;
use std::time::Duration;

use lockstep_testkit::{field, headless_bot, last_line, verified, Client, Finished, Server};

const TICKS: u32 = 300;

#[test]
fn bots_play_two_games_back_to_back_and_both_replays_verify() {
    let mut server = Server::start(3, &["--seed", "5"]);
    let bots: Vec<Client> = (0..3)
        .map(|i| {
            let name = format!("bot{i}");
            let mut command = headless_bot(&server, &name, i, TICKS);
            command.args(["--games", "2"]);
            Client::spawn(&name, &mut command)
        })
        .collect();
    let finished: Vec<Finished> = bots
        .into_iter()
        .map(|bot| bot.finish(Duration::from_secs(120)))
        .collect();

    // Two finals each, game by game the same on every bot, and the two
    // games different.
    let finals: Vec<Vec<(u32, String)>> = finished.iter().map(Finished::final_lines).collect();
    for (bot, lines) in finished.iter().zip(&finals) {
        assert_eq!(lines.len(), 2, "{}: {}", bot.name, bot.stdout);
        assert_eq!(
            bot.stdout
                .lines()
                .filter(|l| l.starts_with("stats "))
                .count(),
            2
        );
        assert!(lines.iter().all(|(tick, _)| *tick == TICKS), "{lines:?}");
    }
    assert!(finals.iter().all(|f| *f == finals[0]), "{finals:?}");
    assert_ne!(finals[0][0].1, finals[0][1].1, "a new seed, a new game");

    // The second game has a seed of its own, and each game its replay.
    let starts = server.wait_for_all("start players=", 2, Duration::from_secs(10));
    let seeds: Vec<&str> = starts.iter().filter_map(|l| field(l, "seed")).collect();
    assert_eq!(seeds[0], "5");
    assert_ne!(seeds[0], seeds[1]);
    server.wait_for_all("game over", 2, Duration::from_secs(10));
    let replays: Vec<PathBuf> = server
        .wait_for_all("recording path=", 2, Duration::from_secs(10))
        .iter()
        .map(|l| PathBuf::from(l.trim_start_matches("recording path=")))
        .collect();
    assert_ne!(replays[0], replays[1]);
    // Every bot finished each game on purpose; nobody left before the end.
    let reasons: Vec<&str> = server
        .seen
        .iter()
        .filter(|l| l.starts_with("dropped"))
        .filter_map(|l| field(l, "reason"))
        .collect();
    assert_eq!(
        reasons,
        ["finished", "finished", "finished", "left", "left", "left"]
    );
    for (replay, (_, hash)) in replays.iter().zip(&finals[0]) {
        let out = verified(replay, &["--ticks", &TICKS.to_string()]);
        assert_eq!(last_line(&out), format!("final tick={TICKS} hash={hash}"));
    }
}

#[test]
fn one_game_is_still_the_default_and_prints_what_it_always_did() {
    let mut server = Server::start(2, &["--seed", "3"]);
    let bots: Vec<Client> = (0..2)
        .map(|i| Client::headless_bot(&server, &format!("bot{i}"), i, 120))
        .collect();
    for bot in bots {
        let finished = bot.finish(Duration::from_secs(60));
        let lines: Vec<&str> = finished.stdout.lines().collect();
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(lines[0].starts_with("stats "));
        assert!(lines[1].starts_with("final tick=120 "));
    }
    server.wait_for("game over", Duration::from_secs(10));
    let reasons: Vec<&str> = server
        .seen
        .iter()
        .filter(|l| l.starts_with("dropped"))
        .filter_map(|l| field(l, "reason"))
        .collect();
    assert_eq!(reasons, ["left", "left"]);
}
