//! A real SDL2 window under Xvfb: the screenshot must show every disc and
//! ball where the simulation says they are, and the HUD clear of the
//! score strip; with vsync the game still ticks by its own clock.

use std::time::Duration;

use lockstep_balls::engine::setup;
use lockstep_balls::WorldConfig;
use lockstep_client::io::clock;
use lockstep_testkit::{under_xvfb, Client, Finished, Server, TempDir};
use lockstep_window::draw::colour::player_colour;
use lockstep_window::draw::picture::Roster;
use lockstep_window::draw::render::Renderer;
use lockstep_window::draw::screenshot::load_png_rgb;
use lockstep_window::draw::text::HUD_TEXT;

/// The HUD block (top left) and the score strip (top centre) are drawn over
/// the arena; points under them are not checked.
const OVERLAY_HEIGHT: i32 = 80;

fn pixel(image: &(u32, u32, Vec<u8>), (x, y): (i32, i32)) -> [u8; 3] {
    let (w, _, data) = image;
    let i = (y as usize * *w as usize + x as usize) * 3;
    [data[i], data[i + 1], data[i + 2]]
}

fn close(a: [u8; 3], b: [u8; 3], tolerance: i32) -> bool {
    a.iter()
        .zip(b)
        .all(|(&x, y)| (i32::from(x) - i32::from(y)).abs() <= tolerance)
}

/// Solo with the local disc played by bot 9 and world seed 9, `extra`
/// flags added: exactly the offline game of [`seed_9`], so a test knows
/// where things are.
fn solo_seed_9(name: &str, ticks: u32, extra: &[&str]) -> Finished {
    let ticks = ticks.to_string();
    let mut args = vec!["solo", "--bots", "2", "--seed", "9", "--bot", "9"];
    args.extend(["--ticks", &ticks]);
    args.extend(extra);
    under_xvfb(name, &args).finish(Duration::from_secs(60))
}

/// The offline three-player game of seed 9 after `ticks` at `tick_rate`.
fn seed_9(ticks: u32, tick_rate: u16) -> lockstep_balls::World {
    lockstep_engine::offline(&setup(3, 9, WorldConfig::DEFAULT_BALLS, tick_rate), ticks)
}

/// [`solo_seed_9`] for 90 ticks with a screenshot of the last one into
/// `shot`, in a window of `size`.
fn solo_screenshot(name: &str, shot: &std::path::Path, size: &str) -> Finished {
    let shot = shot.to_string_lossy().to_string();
    let flags = ["--screenshot", &shot, "--screenshot-tick", "90"];
    solo_seed_9(name, 90, &[&flags[..], &["--window-size", size]].concat())
}

#[test]
fn the_screenshot_shows_discs_and_balls_where_the_simulation_puts_them() {
    let dir = TempDir::new("render");
    let shot = dir.0.join("solo.png");
    let finished = solo_screenshot("solo", &shot, "1280x720");
    let (tick, hash) = finished.final_line();
    let world = seed_9(90, 60);
    assert_eq!(tick, 90);
    assert_eq!(hash, format!("{:016x}", world.hash()));

    let image = load_png_rgb(&shot).expect("screenshot is a PNG");
    assert_eq!((image.0, image.1), (1280, 720));
    let arena = world.arena();
    let field = glam::Vec2::new(arena.width, arena.height);
    for disc in world.discs() {
        let at = Renderer::world_to_screen((1280, 720), field, disc.pos);
        if at.1 < OVERLAY_HEIGHT {
            continue;
        }
        let c = player_colour(disc.player);
        let seen = pixel(&image, at);
        assert!(
            close(seen, [c.r, c.g, c.b], 40),
            "disc of player {} at {at:?}: pixel {seen:?}, expected {:?}",
            disc.player,
            (c.r, c.g, c.b)
        );
    }
    // Balls are light; the floor is dark. Each ball's centre must be light.
    let light = |p: [u8; 3]| p.iter().map(|&v| u32::from(v)).sum::<u32>() > 450;
    let mut checked = 0;
    for ball in world.balls() {
        let at = Renderer::world_to_screen((1280, 720), field, ball.pos);
        if at.1 < OVERLAY_HEIGHT {
            continue;
        }
        let overlaps_disc = world
            .discs()
            .iter()
            .any(|d| (d.pos - ball.pos).length() < d.radius + ball.radius);
        if overlaps_disc {
            continue;
        }
        checked += 1;
        let seen = pixel(&image, at);
        assert!(light(seen), "ball at {at:?}: pixel {seen:?} is not a ball");
    }
    assert!(checked >= 15, "only {checked} balls could be checked");
    // And an empty spot of the floor is dark: the check above can fail.
    let corner = Renderer::world_to_screen(
        (1280, 720),
        field,
        glam::Vec2::new(arena.width * 0.5, arena.height - 5.0),
    );
    assert!(
        !light(pixel(&image, corner))
            || world.balls().iter().any(|b| {
                (b.pos - glam::Vec2::new(arena.width * 0.5, arena.height - 5.0)).length() < 40.0
            })
    );
}

/// The size of the two bot windows of `make demo` (scripts/demo.sh), the
/// smallest it opens.
const DEMO_BOT_WINDOW: (u32, u32) = (640, 360);

#[test]
fn at_the_demo_window_size_the_hud_text_stays_off_the_score_strip() {
    let dir = TempDir::new("render-demo-size");
    let shot = dir.0.join("solo.png");
    let size = format!("{}x{}", DEMO_BOT_WINDOW.0, DEMO_BOT_WINDOW.1);
    let finished = solo_screenshot("solo-small", &shot, &size);
    assert_eq!(finished.final_line().0, 90);
    // The same world as the solo game (see the test above), and solo's
    // roster: you are named after the mode, then the bots.
    let world = seed_9(90, 60);
    let roster = Roster {
        players: [(0, "solo"), (1, "bot 1"), (2, "bot 2")]
            .map(|(id, name)| (lockstep_protocol::PlayerId(id), name.to_owned()))
            .to_vec(),
        me: Some(lockstep_protocol::PlayerId(0)),
    };
    let strip = Renderer::score_strip(DEMO_BOT_WINDOW, &world, &roster).expect("scores");

    let image = load_png_rgb(&shot).expect("screenshot is a PNG");
    assert_eq!((image.0, image.1), DEMO_BOT_WINDOW);
    let points = (0..image.1 as i32).flat_map(|y| (0..image.0 as i32).map(move |x| (x, y)));
    let hud_text: Vec<(i32, i32)> = points
        .filter(|&at| close(pixel(&image, at), [HUD_TEXT.r, HUD_TEXT.g, HUD_TEXT.b], 3))
        .collect();
    assert!(hud_text.len() > 300, "only {} HUD pixels", hud_text.len());
    // The block of HUD text, as the picture shows it, is clear of the strip.
    let left = hud_text.iter().map(|p| p.0).min().unwrap_or_default();
    let right = hud_text.iter().map(|p| p.0).max().unwrap_or_default();
    let top = hud_text.iter().map(|p| p.1).min().unwrap_or_default();
    let bottom = hud_text.iter().map(|p| p.1).max().unwrap_or_default();
    let hud = sdl2::rect::Rect::new(
        left,
        top,
        (right - left + 1) as u32,
        (bottom - top + 1) as u32,
    );
    assert!(
        !hud.has_intersection(strip),
        "HUD text {hud:?} overlaps the score strip {strip:?}"
    );
    // And the strip is where the renderer says: every player's score is
    // written on it in their colour.
    for (id, _) in &roster.players {
        let c = player_colour(*id);
        let (x0, y0) = (strip.left(), strip.top());
        let written = (y0..strip.bottom())
            .flat_map(|y| (x0..strip.right()).map(move |x| (x, y)))
            .filter(|&at| close(pixel(&image, at), [c.r, c.g, c.b], 10))
            .count();
        assert!(
            written > 40,
            "player {id}'s score covers {written} pixels of the strip"
        );
    }
}

#[test]
fn a_windowed_client_stays_in_lockstep_with_headless_bots() {
    let mut server = Server::start(3, &["--seed", "21"]);
    let dir = TempDir::new("window");
    let shot = dir.0.join("net.png");
    let shot_arg = shot.to_string_lossy().to_string();
    let window = under_xvfb(
        "window",
        &[
            "--connect",
            &server.addr,
            "--fingerprint",
            &server.fingerprint,
            "--name",
            "windowed",
            "--bot",
            "5",
            "--ticks",
            "300",
            "--screenshot",
            &shot_arg,
            "--screenshot-tick",
            "240",
        ],
    );
    let bots: Vec<Client> = (0..2)
        .map(|i| Client::headless_bot(&server, &format!("bot{i}"), i, 300))
        .collect();
    server.wait_for("start players=", Duration::from_secs(20));
    let mut finals = vec![window.finish(Duration::from_secs(60)).final_line()];
    for bot in bots {
        finals.push(bot.finish(Duration::from_secs(60)).final_line());
    }
    assert!(finals.iter().all(|f| *f == finals[0]), "{finals:?}");
    let image = load_png_rgb(&shot).expect("screenshot is a PNG");
    for id in 0..3 {
        let c = player_colour(lockstep_protocol::PlayerId(id));
        let (_, _, data) = &image;
        let found = data
            .chunks_exact(3)
            .filter(|p| close([p[0], p[1], p[2]], [c.r, c.g, c.b], 10))
            .count();
        assert!(
            found > 300,
            "player {id}'s colour covers only {found} pixels"
        );
    }
}

#[test]
fn with_vsync_the_game_still_ticks_at_its_own_rate() {
    // At 30 ticks a second, 60 ticks take two seconds of game time however
    // many frames the display shows in them: a loop that ticked once per
    // presented frame would be done in one second at 60 Hz.
    let started = clock::now();
    let finished = solo_seed_9("solo-vsync", 60, &["--tick-rate", "30", "--vsync"]);
    let took = clock::since(started);
    let world = seed_9(60, 30);
    assert_eq!(
        finished.final_line(),
        (60, format!("{:016x}", world.hash()))
    );
    assert!(
        took >= Duration::from_millis(1900),
        "60 ticks at 30 Hz took {took:?}"
    );
}

/// Solo play is any game of the list: Tally against two bots, the local
/// player a bot too, ends where the offline game of three bots does.
#[test]
fn solo_plays_the_game_it_is_given_as_the_offline_game_does() {
    let finished = solo_seed_9("solo-tally", 60, &["--game", "tally"]);
    let offline = std::process::Command::new(lockstep_testkit::client_bin())
        .args(["sim", "--game", "tally", "--players", "3", "--seed", "9"])
        .args(["--ticks", "60"])
        .output()
        .expect("sim runs");
    let line = String::from_utf8_lossy(&offline.stdout);
    let (tick, hash) = finished.final_line();
    assert_eq!(line.trim(), format!("final tick={tick} hash={hash}"));
    let balls = solo_seed_9("solo-balls", 60, &[]).final_line();
    assert_ne!(balls.1, hash, "the ball game and Tally ended alike");
}

/// A second game in the same window: Tally's bars stand on its floor, one
/// per player, each in its player's colour.
#[test]
fn the_window_draws_tally_one_bar_per_player_in_its_colour() {
    let server = Server::start(2, &["--game", "tally", "--seed", "64", "--no-record"]);
    let dir = TempDir::new("tally-window");
    let shot = dir.0.join("tally.png");
    let shot_arg = shot.to_string_lossy().to_string();
    let window = lockstep_testkit::windowed(
        &server,
        "ada",
        &[
            "--bot",
            "5",
            "--ticks",
            "150",
            "--screenshot",
            &shot_arg,
            "--screenshot-tick",
            "120",
        ],
    );
    let bot = Client::headless_bot(&server, "bob", 6, 150);
    let (_, end) = lockstep_testkit::finish_in_lockstep(vec![window, bot], Duration::from_secs(60));
    assert_eq!(end.0, 150);

    let image = load_png_rgb(&shot).expect("screenshot is a PNG");
    let field = glam::Vec2::new(1600.0, 900.0);
    // Bars stand on the floor in player order, each in the middle of its
    // half of the field; just above the floor every bar is drawn.
    for player in 0..2u8 {
        let foot = glam::Vec2::new(400.0 + 800.0 * f32::from(player), 890.0);
        let at = Renderer::world_to_screen((1280, 720), field, foot);
        let c = player_colour(lockstep_protocol::PlayerId(player));
        let seen = pixel(&image, at);
        assert!(
            close(seen, [c.r, c.g, c.b], 8),
            "bar of player {player} at {at:?}: pixel {seen:?}, expected {:?}",
            (c.r, c.g, c.b)
        );
    }
    // Between the bars is the floor, not a bar.
    let gap = Renderer::world_to_screen((1280, 720), field, glam::Vec2::new(800.0, 890.0));
    let floor = pixel(&image, gap);
    assert!(close(floor, [30, 36, 50], 8), "between the bars: {floor:?}");
}

/// Where Topple's window draws a point of its world, in metres: its view
/// is x -24..24 and y 17 down to -10, in a field of 1600 by 900.
fn topple_at(x: f32, y: f32) -> (i32, i32) {
    let units = 1600.0 / 48.0;
    let field = glam::Vec2::new(1600.0, 900.0);
    let pos = glam::Vec2::new(x + 24.0, 17.0 - y) * units;
    Renderer::world_to_screen((1280, 720), field, pos)
}

/// A third game in the same window: Topple's platform over the pit, its
/// towers standing on it the right way up, early in a game before the
/// rams reach them.
#[test]
fn the_window_draws_topple_towers_standing_on_the_platform() {
    // Two layers of towers (48 bodies): enough for a crate and a ball of
    // each tower, light enough for a debug build's window.
    let server = Server::start(
        2,
        &[
            "--game",
            "physics",
            "--set",
            "bodies=48",
            "--seed",
            "65",
            "--no-record",
        ],
    );
    let dir = TempDir::new("physics-window");
    let shot = dir.0.join("physics.png");
    let shot_arg = shot.to_string_lossy().to_string();
    let window = lockstep_testkit::windowed(
        &server,
        "ada",
        &[
            "--bot",
            "5",
            "--ticks",
            "90",
            "--screenshot",
            &shot_arg,
            "--screenshot-tick",
            "30",
        ],
    );
    let bot = Client::headless_bot(&server, "bob", 6, 90);
    let (_, end) = lockstep_testkit::finish_in_lockstep(vec![window, bot], Duration::from_secs(90));
    assert_eq!(end.0, 90);

    let image = load_png_rgb(&shot).expect("screenshot is a PNG");
    let expect = |what: &str, (x, y): (f32, f32), colour: [u8; 3]| {
        let at = topple_at(x, y);
        let seen = pixel(&image, at);
        assert!(
            close(seen, colour, 8),
            "{what} at {x},{y} m ({at:?}): pixel {seen:?}, expected {colour:?}"
        );
    };
    let (platform, pit, sky) = ([96, 104, 120], [18, 20, 28], [30, 36, 50]);
    let (crate_colour, ball) = ([196, 150, 92], [150, 190, 210]);
    // The first tower's bottom left crate, and the platform under it.
    expect("a crate", (-16.75, 0.47), crate_colour);
    expect("the platform", (-16.75, -0.5), platform);
    expect("the platform", (0.0, -0.5), platform);
    // The middle of its second layer is a ball (left of its spoke).
    expect("a ball", (-15.95, 1.42), ball);
    // Between the middle towers is sky; under the platform the pit.
    expect("the sky", (0.0, 3.0), sky);
    expect("the pit", (0.0, -5.0), pit);
}
