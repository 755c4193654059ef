//! The lobby in a real window under Xvfb: a person's window holds the
//! start until its player clicks ready (xdotool clicks), the lobby screen lists the players with
//! their colours and ready marks and shows the server's verification code,
//! and after a game it shows that game's scores before the rematch.

use std::time::Duration;

use lockstep_protocol::{verification_code, PlayerId};
use lockstep_testkit::{click_after_screenshot, headless_bot, windowed, Client, Server, TempDir};
use lockstep_window::draw::colour::player_colour;
use lockstep_window::draw::screenshot::load_png_rgb;
use lockstep_window::screens::lobby::{browser_code_at, layout, CODE_TEXT, READY_TEXT};

type Image = (u32, u32, Vec<u8>);

const WINDOW: (u32, u32) = (1280, 720);

fn pixel(image: &Image, (x, y): (i32, i32)) -> [u8; 3] {
    let (w, _, data) = image;
    let i = (y as usize * *w as usize + x as usize) * 3;
    [data[i], data[i + 1], data[i + 2]]
}

fn close(a: [u8; 3], b: sdl2::pixels::Color, tolerance: i32) -> bool {
    a.iter()
        .zip([b.r, b.g, b.b])
        .all(|(&x, y)| (i32::from(x) - i32::from(y)).abs() <= tolerance)
}

/// The points of `rect` whose pixel is `colour`.
fn points_of(
    image: &Image,
    rect: sdl2::rect::Rect,
    colour: sdl2::pixels::Color,
) -> Vec<(i32, i32)> {
    (rect.top()..rect.bottom())
        .flat_map(|y| (rect.left()..rect.right()).map(move |x| (x, y)))
        .filter(|&at| close(pixel(image, at), colour, 8))
        .collect()
}

#[test]
fn a_window_holds_the_start_until_its_player_clicks_ready() {
    let mut server = Server::start(2, &["--seed", "11"]);
    let dir = TempDir::new("lobby-ready");
    let shot = dir.0.join("lobby.png");
    // Inside one Xvfb display: the client, then, once it has photographed
    // the full lobby, a click on its ready button, as a person would.
    let button = layout(WINDOW, 2).button.center();
    let mut command = click_after_screenshot("lockstep.*ann", &shot, (button.x(), button.y()), "");
    command
        .args([
            "--connect",
            &server.addr,
            "--fingerprint",
            &server.fingerprint,
        ])
        .args(["--name", "ann", "--ticks", "60", "--screenshot-lobby", "1"])
        .arg("--screenshot")
        .arg(&shot);
    let window = Client::spawn("ann", &mut command);
    // ann first, so she has slot 0 and the bot slot 1.
    server.wait_for("joined player=0 name=ann", Duration::from_secs(30));
    let bot = Client::headless_bot(&server, "bot", 1, 60);
    server.wait_for("start players=", Duration::from_secs(30));
    let order = |needle: &str| {
        server
            .seen
            .iter()
            .position(|l| l.starts_with(needle))
            .unwrap_or_else(|| panic!("no {needle:?} in {:?}", server.seen))
    };
    // The bot joined ready and both were there, yet the game waited for
    // ann's click.
    assert!(order("joined player=1 name=bot") < order("ready player=0 name=ann ready=true"));
    assert!(order("ready player=0 name=ann ready=true") < order("start players=ann,bot"));
    let ends = [window, bot].map(|c| c.finish(Duration::from_secs(60)).final_line());
    assert_eq!(ends[0], ends[1]);
    assert_eq!(ends[0].0, 60);

    // The screenshot is of the lobby before ann said ready.
    let image = load_png_rgb(&shot).expect("the lobby screenshot is a PNG");
    assert_eq!((image.0, image.1), WINDOW);
    let at = layout(WINDOW, 2);
    for (id, swatch) in at.swatches.iter().enumerate() {
        let seen = pixel(&image, (swatch.center().x(), swatch.center().y()));
        assert!(
            close(seen, player_colour(PlayerId(id as u8)), 3),
            "swatch of player {id}: {seen:?}"
        );
    }
    assert!(
        points_of(&image, at.marks[0], READY_TEXT).is_empty(),
        "ann is not ready yet"
    );
    assert!(
        points_of(&image, at.marks[1], READY_TEXT).len() > 20,
        "the bot is ready"
    );
    // The code line is written in the code's colour, as long as
    // "server code: " and the code of the server's fingerprint (8 by 8
    // glyphs, twice as big in a 720-pixel window).
    let written = points_of(&image, at.code, CODE_TEXT);
    assert!(written.len() > 200, "{} code pixels", written.len());
    let left = written.iter().map(|p| p.0).min().unwrap_or_default();
    let right = written.iter().map(|p| p.0).max().unwrap_or_default();
    let columns = "server code: ".len() + verification_code(&server.fingerprint).len();
    let expected = (columns as i32) * 16;
    assert!(
        (right - left + 1 - expected).abs() <= 16,
        "the code line spans {} pixels, {columns} columns are {expected}",
        right - left + 1
    );
    assert!((left - at.code.left()).abs() <= 2);
    // The QR code of the address a phone's browser opens: white and black
    // modules in its square.
    let url = format!("http://{}/", server.addr);
    let square = browser_code_at(&url, WINDOW, &at).expect("room for the QR code");
    let white = points_of(&image, square, sdl2::pixels::Color::RGB(255, 255, 255));
    let black = points_of(&image, square, sdl2::pixels::Color::RGB(0, 0, 0));
    let area = (square.width() * square.height()) as usize;
    assert_eq!(
        white.len() + black.len(),
        area,
        "only modules in the square"
    );
    assert!(black.len() > area / 4 && white.len() > area / 4);
}

#[test]
fn after_a_game_the_lobby_shows_its_scores_and_the_rematch_follows() {
    let mut server = Server::start(2, &["--seed", "9"]);
    let dir = TempDir::new("lobby-rematch");
    let shot = dir.0.join("rematch.png");
    let shot_arg = shot.to_string_lossy().to_string();
    let window = windowed(
        &server,
        "win",
        &[
            "--bot",
            "5",
            "--ticks",
            "200",
            "--games",
            "2",
            "--screenshot",
            &shot_arg,
            "--screenshot-lobby",
            "2",
        ],
    );
    server.wait_for("joined player=0 name=win", Duration::from_secs(30));
    let mut command = headless_bot(&server, "bot", 1, 200);
    command.args(["--games", "2"]);
    let bot = Client::spawn("bot", &mut command);
    let finals = [window, bot].map(|c| c.finish(Duration::from_secs(90)).final_lines());
    assert_eq!(finals[0].len(), 2, "{finals:?}");
    assert_eq!(finals[0], finals[1]);
    server.wait_for_all("start players=win,bot", 2, Duration::from_secs(10));

    let image = load_png_rgb(&shot).expect("the lobby screenshot is a PNG");
    let at = layout(WINDOW, 2);
    // Both players' scores, each in its colour.
    for id in 0..2 {
        let written = points_of(&image, at.scores, player_colour(PlayerId(id)));
        assert!(
            written.len() > 40,
            "player {id}'s score covers {} pixels",
            written.len()
        );
    }
    // The window photographs the lobby before it says ready again.
    assert!(points_of(&image, at.marks[0], READY_TEXT).is_empty());
}
