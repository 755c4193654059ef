//! Draws one frame of a bot game and saves it as a PNG, to see what the
//! renderer produces without playing.
//!
//! ```text
//! xvfb-run -a -s "-screen 0 1600x1200x24" \
//!     cargo run -p lockstep-client --example render_demo -- /tmp/render_demo.png [WIDTHxHEIGHT]
//! ```
//!
//! The window is 1280x720 unless a size is given. Three bots play 120
//! ticks; the frame is drawn halfway between the last two ticks with a
//! sample HUD and saved to the given path, then drawn again with a banner
//! and saved next to it with `-banner` added to the file name. After
//! saving, the example checks the first picture:
//! every disc's interpolated centre, mapped with
//! [`Renderer::world_to_screen`], must show that player's colour, and a
//! window whose shape differs from the arena's must have black bars. It
//! exits with an error if not.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use glam::Vec2;
use lockstep_balls::{World, WorldConfig};
use lockstep_engine::Bots;
use lockstep_protocol::PlayerId;
use lockstep_window::draw::colour::player_colour;
use lockstep_window::draw::picture::Roster;
use lockstep_window::draw::render::{Hud, Renderer};
use lockstep_window::draw::screenshot::{load_png_rgb, save_png};

/// Ticks simulated before the frame is drawn: long enough for the bots to
/// spread out and push some balls around.
const TICKS: u32 = 120;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let path = PathBuf::from(
        args.next()
            .context("usage: render_demo <out.png> [WIDTHxHEIGHT]")?,
    );
    let size = match args.next() {
        Some(size) => parse_size(&size)?,
        None => (1280, 720),
    };

    let players = [PlayerId(0), PlayerId(1), PlayerId(2)];
    let config = WorldConfig::new(7, 60);
    let mut world = World::new(config, &players);
    let mut bots = Bots::<World>::new(config.seed, &players);
    let mut previous = world.clone();
    for _ in 0..TICKS {
        previous = world.clone();
        let inputs = bots.inputs(&world);
        world.step(&inputs);
    }

    let roster = Roster {
        players: vec![
            (PlayerId(0), "alice".to_owned()),
            (PlayerId(1), "bob".to_owned()),
            (PlayerId(2), "carol".to_owned()),
        ],
        me: Some(PlayerId(0)),
    };
    let mut hud = Hud {
        fps: 59.8,
        ups: 60.0,
        tick: world.tick().0,
        input_delay: 3,
        input_lag_ms: Some(83.0),
        rtt_ms: Some(1.2),
        stalls: 0,
        hash: world.hash(),
        speed: None,
        status: "connected".to_owned(),
        banner: None,
    };

    let sdl = sdl2::init().map_err(anyhow::Error::msg)?;
    let video = sdl.video().map_err(anyhow::Error::msg)?;
    let window = video
        .window("lockstep render demo", size.0, size.1)
        .resizable()
        .position_centered()
        .build()
        .context("creating the window")?;
    let mut canvas = window
        .into_canvas()
        .build()
        .context("creating the renderer")?;
    println!("renderer: {}", canvas.info().name);

    let alpha = 0.5;
    let mut renderer = Renderer::new();
    renderer
        .draw(&mut canvas, &previous, &world, alpha, &roster, &hud)
        .map_err(anyhow::Error::msg)
        .context("drawing the frame")?;
    save_png(&canvas, &path).context("saving the screenshot")?;
    println!("saved {}", path.display());
    check_picture(&path, &previous, &world, alpha)?;

    hud.banner = Some("Waiting for players 2/3".to_owned());
    hud.status = "waiting for players 2/3".to_owned();
    renderer
        .draw(&mut canvas, &previous, &world, alpha, &roster, &hud)
        .map_err(anyhow::Error::msg)
        .context("drawing the frame with a banner")?;
    let banner_path = with_suffix(&path, "-banner");
    save_png(&canvas, &banner_path).context("saving the banner screenshot")?;
    canvas.present();
    println!("saved {}", banner_path.display());
    Ok(())
}

/// `path` with `suffix` added to the file name, before the extension.
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    let name = match path.extension() {
        Some(ext) => format!("{stem}{suffix}.{}", ext.to_string_lossy()),
        None => format!("{stem}{suffix}"),
    };
    path.with_file_name(name)
}

/// Checks the saved picture against where the renderer says it drew.
fn check_picture(path: &Path, previous: &World, current: &World, alpha: f32) -> anyhow::Result<()> {
    let (width, height, pixels) = load_png_rgb(path).context("loading the screenshot")?;
    let pixel_at = |(x, y): (i32, i32)| -> anyhow::Result<[u8; 3]> {
        let (x, y) = (u32::try_from(x)?, u32::try_from(y)?);
        if x >= width || y >= height {
            bail!("({x}, {y}) is outside the {width}x{height} picture");
        }
        let i = 3 * usize::try_from(y * width + x)?;
        Ok([pixels[i], pixels[i + 1], pixels[i + 2]])
    };

    let arena = current.arena();
    let field = Vec2::new(arena.width, arena.height);
    for disc in current.discs() {
        let old = previous
            .discs()
            .iter()
            .find(|old| old.player == disc.player)
            .map_or(disc.pos, |old| old.pos);
        let pos = old + (disc.pos - old) * alpha;
        let at = Renderer::world_to_screen((width, height), field, pos);
        let got = pixel_at(at)?;
        let colour = player_colour(disc.player);
        let want = [colour.r, colour.g, colour.b];
        if got != want {
            bail!(
                "player {}'s disc centre {at:?} is {got:?}, expected {want:?}",
                disc.player
            );
        }
        println!("player {} disc at {at:?}: {got:?} ok", disc.player);
    }

    // The view keeps the same margin around the field on all four sides,
    // so the field's distance from the window's left and top edges differs
    // only if there are bars; then the bottom-right corner is in one.
    let (left, top) = Renderer::world_to_screen((width, height), field, Vec2::ZERO);
    if (left - top).abs() > 2 {
        let corner = (i32::try_from(width)? - 1, i32::try_from(height)? - 1);
        let got = pixel_at(corner)?;
        if got != [0, 0, 0] {
            bail!("corner {corner:?} is {got:?}, expected a black letterbox bar");
        }
        println!("field starts at ({left}, {top}); corner {corner:?} is a black bar: ok");
    }
    Ok(())
}

/// Parses `WIDTHxHEIGHT`.
fn parse_size(size: &str) -> anyhow::Result<(u32, u32)> {
    let (w, h) = size
        .split_once('x')
        .with_context(|| format!("window size {size:?} is not WIDTHxHEIGHT"))?;
    Ok((
        w.parse().context("window width")?,
        h.parse().context("window height")?,
    ))
}
