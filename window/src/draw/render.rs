//! Draws a frame of any game: the game's picture, its scores and the
//! HUD.
//!
//! # How it works
//!
//! The frontend steps the simulation at a fixed rate and draws at whatever
//! rate the display allows, so a frame usually falls between two ticks. It
//! hands [`Renderer::draw`] the states before and after the current tick
//! and how far between them the frame is (`alpha`); the game's [`View`]
//! answers with its picture between the two, which keeps motion smooth at
//! any frame rate, and [`crate::draw::picture`] draws it. Nothing here reads a clock or changes a
//! state: the numbers the HUD shows arrive ready-made in [`Hud`].
//!
//! Every frame is laid out from the canvas' current output size: the
//! game's field ([`View::field`]), plus a margin for what it draws around
//! it and the score line, is scaled to fit the window with its aspect
//! ratio kept and centred, with black bars on the sides that are left over
//! ([`Layout`]). [`Renderer::world_to_screen`] exposes that mapping so
//! tests can find where a body was drawn.
//!
//! The score strip, the HUD block and the banner are drawn over the arena.
//! Each frame they are sized for the window and then placed by the
//! `overlay` module, which keeps them apart at any window size: the HUD
//! moves below the strip when the strip reaches into its corner, and in a
//! window too small for everything it leaves out its least needed lines.
//!
//! Text is written with [`crate::draw::text`], in the players' colours of
//! [`crate::draw::colour`].

use glam::Vec2;
use lockstep_engine::view::{Area, Point};
use lockstep_engine::{Picture, View};
use lockstep_protocol::{Percent, PlayerId};
use sdl2::pixels::Color;
use sdl2::rect::Rect;
use sdl2::render::WindowCanvas;

use crate::draw::colour::player_colour;
use crate::draw::layout::{Layout, LETTERBOX};
use crate::draw::overlay::{self, HudBlock, HudLine, Placed, PlacedHud, Wanted};
use crate::draw::picture::{draw_picture, Roster};
use crate::draw::pixels::{extent, extent_i32, pixel};
use crate::draw::text::{backing, printable, text, text_width, GLYPH, HUD_TEXT, PAD};

/// What the HUD shows; the frontend fills it every frame.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Hud {
    /// Frames drawn per second, as measured by the frontend.
    pub fps: f32,
    /// Simulation updates (ticks) per second: below the tick rate means the
    /// game is stalling or the machine is too slow.
    pub ups: f32,
    /// The tick being shown.
    pub tick: u32,
    /// Ticks between sampling an input and simulating it: the lockstep
    /// latency budget.
    pub input_delay: u8,
    /// How long a press takes to show, milliseconds, where it is known
    /// (networked play).
    pub input_lag_ms: Option<f32>,
    /// Round-trip time to the server, once measured; `None` offline or
    /// before the first measurement.
    pub rtt_ms: Option<f32>,
    /// Frames on which the simulation had to wait for someone's input.
    pub stalls: u64,
    /// The current world hash: players compare it by eye when hunting a
    /// desync.
    pub hash: u64,
    /// The game speed when the server has slowed the game below full
    /// speed for a machine that cannot keep up (it explains a low UPS);
    /// `None` at full speed.
    pub speed: Option<Percent>,
    /// One line about the session, e.g. "connected", "waiting for players
    /// 2/3", "solo", "replay".
    pub status: String,
    /// A big centred message, e.g. "Waiting for players" or
    /// "Disconnected: ...".
    pub banner: Option<String>,
}

/// Banner text.
pub const BANNER_TEXT: Color = Color::RGB(255, 255, 255);

/// Draws frames; keeps only what must stay steady from frame to frame.
#[derive(Debug, Default)]
pub struct Renderer {
    /// The widest statistics line seen so far, in characters. The HUD
    /// backing never gets narrower than this, so it does not twitch as
    /// digits come and go. The status line is left out: a long message
    /// widens the backing only while it is shown.
    hud_columns: usize,
    /// The game's picture, kept so each frame reuses its memory.
    picture: Picture,
}

impl Renderer {
    /// A renderer that has drawn nothing yet.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Draws the world at `lerp(previous, current, alpha)` (alpha in
    /// `[0, 1]`, clamped) plus the HUD, fitted to the canvas' current output
    /// size with the arena's aspect ratio kept (letterboxed) and centred.
    ///
    /// Draws in output pixels: it resets the canvas scale to 1 and expects
    /// no logical size to be set. It does not present the canvas, so a
    /// screenshot can still be taken before [`WindowCanvas::present`].
    pub fn draw<G: View>(
        &mut self,
        canvas: &mut WindowCanvas,
        previous: &G,
        current: &G,
        alpha: f32,
        roster: &Roster,
        hud: &Hud,
    ) -> Result<(), String> {
        canvas.set_scale(1.0, 1.0)?;
        let (width, height) = canvas.output_size()?;
        canvas.set_draw_color(LETTERBOX);
        canvas.clear();
        let layout = Layout::fit(Rect::new(0, 0, width, height), current.field());
        self.picture.clear();
        G::view(
            previous,
            current,
            clamped(alpha),
            roster.me,
            &mut self.picture,
        );
        draw_picture(canvas, &layout, &self.picture, roster)?;
        let lines = hud_lines(hud);
        let [statistics @ .., _status] = &lines;
        let widest = statistics.iter().map(String::len).max().unwrap_or(0);
        self.hud_columns = self.hud_columns.max(widest);
        let banner = hud.banner.as_deref();
        let scores = current.scores();
        let overlays = Overlays::plan(&layout, &scores, roster, &lines, self.hud_columns, banner);
        overlays.draw(canvas, &lines)
    }

    /// Draws the world alone, without HUD or banner, fitted into `area` of
    /// the canvas like [`Self::draw`] fits it into the whole window, so a
    /// frontend with panels of its own (the game loop lab) keeps them
    /// clear. Clears nothing outside the arena view, and does not present.
    pub fn draw_world<G: View>(
        canvas: &mut WindowCanvas,
        area: Rect,
        previous: &G,
        current: &G,
        alpha: f32,
        roster: &Roster,
    ) -> Result<(), String> {
        canvas.set_scale(1.0, 1.0)?;
        let layout = Layout::fit(area, current.field());
        let mut picture = Picture::new();
        G::view(previous, current, clamped(alpha), roster.me, &mut picture);
        draw_picture(canvas, &layout, &picture, roster)?;
        match ScoreStrip::new(&layout, &current.scores(), roster) {
            Some(strip) => strip.draw(canvas, strip.rect),
            None => Ok(()),
        }
    }

    /// Maps a position of a game's picture to the pixel it is drawn at on
    /// a canvas of the given output size, for a field of size `field` from
    /// the picture's origin (used by the screenshot tests to know where to
    /// look).
    #[must_use]
    pub fn world_to_screen(output: (u32, u32), field: Vec2, pos: Vec2) -> (i32, i32) {
        let field = Area::new(Point::new(0.0, 0.0), Point::new(field.x, field.y));
        let layout = Layout::fit(Rect::new(0, 0, output.0, output.1), field);
        let screen = layout.to_screen(Point::new(pos.x, pos.y));
        (pixel(screen.x), pixel(screen.y))
    }

    /// Where [`Self::draw`] puts the score strip of `world` on a canvas of
    /// the given output size, backing included (used by the screenshot test
    /// to know where to look); `None` without scores. Nothing else is
    /// drawn over it. Only a banner in a window too flat for both hides
    /// it; then this is where it would have been.
    #[must_use]
    pub fn score_strip<G: View>(output: (u32, u32), world: &G, roster: &Roster) -> Option<Rect> {
        let layout = Layout::fit(Rect::new(0, 0, output.0, output.1), world.field());
        ScoreStrip::new(&layout, &world.scores(), roster).map(|strip| strip.rect)
    }
}

/// The overlays of one frame (score strip, HUD block and banner), sized
/// for the window and placed apart by [`overlay::place`].
#[derive(Debug)]
struct Overlays {
    /// The score strip, if there are scores.
    scores: Option<ScoreStrip>,
    /// The banner, if there is a message.
    banner: Option<Banner>,
    /// Text magnification of the HUD.
    hud_size: i32,
    /// Where each goes, and which HUD lines are shown.
    placed: Placed,
}

impl Overlays {
    /// Sizes the overlays for `layout`'s window and places them. `lines`
    /// are the HUD's, from [`hud_lines`]; the statistics among them get
    /// a backing `statistics_columns` wide at least.
    fn plan(
        layout: &Layout,
        scores: &[(PlayerId, u32)],
        roster: &Roster,
        lines: &[String; 6],
        statistics_columns: usize,
        banner: Option<&str>,
    ) -> Overlays {
        let size = layout.text_size();
        let scores = ScoreStrip::new(layout, scores, roster);
        let banner = banner.map(|message| Banner::new(layout, message));
        let status = lines.len() - 1;
        let hud = HudBlock {
            lines: (0..)
                .zip(lines)
                .zip(HUD_LINE_RANKS)
                .map(|((row, line), rank)| {
                    let columns = if row == status {
                        line.len()
                    } else {
                        statistics_columns.max(line.len())
                    };
                    HudLine {
                        width: extent(text_width(columns, size)),
                        rank,
                    }
                })
                .collect(),
            line_height: extent(hud_line_height(size)),
            pad: extent(PAD * size),
        };
        let placed = overlay::place(&Wanted {
            window: layout.area,
            gap: PAD * size,
            scores: scores.as_ref().map(|strip| strip.rect),
            banner: banner.as_ref().map(|banner| banner.rect),
            hud,
        });
        Overlays {
            scores,
            banner,
            hud_size: size,
            placed,
        }
    }

    /// Draws every overlay that has a place; `lines` are the HUD's.
    fn draw(&self, canvas: &mut WindowCanvas, lines: &[String]) -> Result<(), String> {
        if let (Some(strip), Some(rect)) = (&self.scores, self.placed.scores) {
            strip.draw(canvas, rect)?;
        }
        if let Some(hud) = &self.placed.hud {
            draw_hud(canvas, hud, self.hud_size, lines)?;
        }
        if let (Some(banner), Some(rect)) = (&self.banner, self.placed.banner) {
            banner.draw(canvas, rect)?;
        }
        Ok(())
    }
}

/// `alpha` inside `[0, 1]`; a NaN (a clock that went wrong) draws the
/// latest state.
fn clamped(alpha: f32) -> f32 {
    if alpha.is_nan() {
        1.0
    } else {
        alpha.clamp(0.0, 1.0)
    }
}

/// How much each line of [`hud_lines`] is needed, in the same order (0 is
/// needed most): in a window without room for every line, the highest
/// numbers are left out first. The status line (which carries the lag
/// indicator) stays longest, then the tick with the input delay, then the
/// stalls; the hash, compared by eye only when hunting a desync, goes
/// first.
const HUD_LINE_RANKS: [u8; 6] = [4, 1, 3, 2, 5, 0];

/// The HUD's lines, top to bottom: statistics, then the status line.
fn hud_lines(hud: &Hud) -> [String; 6] {
    let rtt = hud
        .rtt_ms
        .map_or_else(|| "RTT -".to_owned(), |ms| format!("RTT {ms:.1} ms"));
    [
        match hud.speed {
            Some(speed) => format!("FPS {:.1}  UPS {:.1}  speed {speed}", hud.fps, hud.ups),
            None => format!("FPS {:.1}  UPS {:.1}", hud.fps, hud.ups),
        },
        match hud.input_lag_ms {
            Some(lag) => format!("tick {}  delay {} ({lag:.0} ms)", hud.tick, hud.input_delay),
            None => format!("tick {}  delay {}", hud.tick, hud.input_delay),
        },
        rtt,
        format!("stalls {}", hud.stalls),
        // The high half is enough to compare by eye and fits the box.
        format!("hash {:08x}", hud.hash >> 32),
        printable(&hud.status),
    ]
}

/// Pixels from the top of one HUD line to the top of the next.
fn hud_line_height(size: i32) -> i32 {
    (GLYPH + 2) * size
}

/// The HUD's backing at `hud.rect` with its shown lines stacked on it.
fn draw_hud(
    canvas: &mut WindowCanvas,
    hud: &PlacedHud,
    size: i32,
    lines: &[String],
) -> Result<(), String> {
    backing(canvas, hud.rect)?;
    let x = hud.rect.x() + PAD * size;
    let shown = lines.iter().zip(&hud.shown).filter(|(_, &shown)| shown);
    for (row, (line, _)) in (0..).zip(shown) {
        let y = hud.rect.y() + PAD * size + row * hud_line_height(size);
        text(canvas, x, y, size, line, HUD_TEXT)?;
    }
    Ok(())
}

/// Every player's goals in their colour, in one line along the top.
#[derive(Debug)]
struct ScoreStrip {
    /// Each entry's text and colour, left to right.
    entries: Vec<(String, Color)>,
    /// Text magnification.
    size: i32,
    /// Where it would like to be, backing included.
    rect: Rect,
}

impl ScoreStrip {
    /// Spaces between two entries.
    const GAP: usize = 3;

    /// The strip of `world`'s scores, centred just above the top wall, in
    /// text twice the HUD's size (smaller if that is wider than the area);
    /// in an area too flat for that, as high as it allows, over the wall.
    /// `None` without scores.
    fn new(layout: &Layout, scores: &[(PlayerId, u32)], roster: &Roster) -> Option<ScoreStrip> {
        let entries: Vec<(String, Color)> = scores
            .iter()
            .map(|&(player, score)| {
                (
                    format!("{} {score}", roster.name(player)),
                    player_colour(player),
                )
            })
            .collect();
        if entries.is_empty() {
            return None;
        }
        let columns = entries.iter().map(|(entry, _)| entry.len()).sum::<usize>()
            + Self::GAP * (entries.len() - 1);
        let outer_width = |size: i32| text_width(columns, size) + 2 * PAD * size;
        let mut size = 2 * layout.text_size();
        while size > 1 && outer_width(size) > extent_i32(layout.area.width()) {
            size -= 1;
        }
        let height = GLYPH * size + PAD * size;
        let above_wall = layout.above_the_field();
        let top = (pixel(above_wall.y) - height - 1).max(layout.area.y());
        let left = pixel(above_wall.x) - outer_width(size) / 2;
        let rect = Rect::new(left, top, extent(outer_width(size)), extent(height));
        Some(ScoreStrip {
            entries,
            size,
            rect,
        })
    }

    /// Draws the strip with its backing filling `rect`.
    fn draw(&self, canvas: &mut WindowCanvas, rect: Rect) -> Result<(), String> {
        let size = self.size;
        backing(canvas, rect)?;
        let mut x = rect.x() + PAD * size;
        let y = rect.y() + PAD * size / 2;
        for (entry, colour) in &self.entries {
            text(canvas, x, y, size, entry, *colour)?;
            x += text_width(entry.len() + Self::GAP, size);
        }
        Ok(())
    }
}

/// A big message across the middle of the window, on a strip as wide as
/// the arena view.
#[derive(Debug)]
struct Banner {
    /// The message, made printable.
    message: String,
    /// Text magnification.
    size: i32,
    /// Where it would like to be, backing included: centred on the field.
    rect: Rect,
}

impl Banner {
    /// The banner for `message`, in text three times the HUD's size,
    /// shrunk until it fits the arena view.
    fn new(layout: &Layout, message: &str) -> Banner {
        let message = printable(message);
        let (left, right) = layout.view_columns();
        let (view_left, view_right) = (pixel(left), pixel(right));
        let view_width = view_right - view_left;
        let mut size = 3 * layout.text_size();
        while size > 1 && text_width(message.len(), size) + 2 * PAD * size > view_width {
            size -= 1;
        }
        let centre = layout.to_screen(layout.field.centre());
        let height = GLYPH * size + 4 * PAD * size;
        let top = pixel(centre.y) - height / 2;
        let rect = Rect::new(view_left, top, extent(view_width), extent(height));
        Banner {
            message,
            size,
            rect,
        }
    }

    /// Draws the banner's strip filling `rect`, the message centred on it.
    fn draw(&self, canvas: &mut WindowCanvas, rect: Rect) -> Result<(), String> {
        let size = self.size;
        backing(canvas, rect)?;
        let centre = rect.center();
        let x = centre.x() - text_width(self.message.len(), size) / 2;
        let y = centre.y() - GLYPH * size / 2;
        text(canvas, x, y, size, &self.message, BANNER_TEXT)
    }
}

#[cfg(test)]
mod tests {
    use lockstep_balls::World;

    use super::*;

    /// The ball game's field: any field is laid out alike.
    const FIELD: Vec2 = Vec2::new(1600.0, 900.0);
    /// The margin every renderer shows around a field 1600 wide.
    const MARGIN: f32 = 48.0;

    #[test]
    fn field_centre_is_drawn_at_the_window_centre() {
        let centre = FIELD * 0.5;
        for output in [(1280, 720), (800, 800), (1920, 600)] {
            let expected = ((output.0 / 2) as i32, (output.1 / 2) as i32);
            assert_eq!(
                Renderer::world_to_screen(output, FIELD, centre),
                expected,
                "{output:?}"
            );
        }
    }

    #[test]
    fn a_narrow_window_is_letterboxed_top_and_bottom() {
        let output = (800, 800);
        let (left, top) = Renderer::world_to_screen(output, FIELD, Vec2::splat(-MARGIN));
        let (right, bottom) = Renderer::world_to_screen(output, FIELD, FIELD + Vec2::splat(MARGIN));
        assert_eq!((left, right), (0, 800));
        assert!(top > 100 && bottom < 700, "{top}..{bottom}");
        assert_eq!(top, 800 - bottom);
    }

    #[test]
    fn a_wide_window_is_pillarboxed_left_and_right() {
        let output = (2000, 600);
        let (left, top) = Renderer::world_to_screen(output, FIELD, Vec2::splat(-MARGIN));
        let (right, _) = Renderer::world_to_screen(output, FIELD, Vec2::splat(FIELD.x + MARGIN));
        assert_eq!(top, 0);
        assert!(left > 0);
        assert_eq!(left, 2000 - right);
    }

    #[test]
    fn hud_shows_the_first_eight_hex_digits_of_the_hash() {
        let hud = Hud {
            hash: 0x1a2b_3c4d_5e6f_7081,
            ..Hud::default()
        };
        assert_eq!(hud_lines(&hud)[4], "hash 1a2b3c4d");
    }

    #[test]
    fn hud_shows_the_game_speed_only_below_full_speed() {
        let mut hud = Hud {
            fps: 60.0,
            ups: 27.0,
            ..Hud::default()
        };
        assert_eq!(hud_lines(&hud)[0], "FPS 60.0  UPS 27.0");
        hud.speed = Some(Percent(45));
        assert_eq!(hud_lines(&hud)[0], "FPS 60.0  UPS 27.0  speed 45%");
    }

    #[test]
    fn hud_shows_a_dash_until_the_rtt_is_known() {
        let mut hud = Hud::default();
        assert_eq!(hud_lines(&hud)[2], "RTT -");
        hud.rtt_ms = Some(1.24);
        assert_eq!(hud_lines(&hud)[2], "RTT 1.2 ms");
    }

    /// A world with a disc, and so a score, for each of `names`.
    fn game_of(names: &[&str]) -> (World, Roster) {
        let ids: Vec<PlayerId> = (0..names.len()).map(|i| PlayerId(i as u8)).collect();
        let world = World::new(lockstep_balls::WorldConfig::new(1, 60), &ids);
        let players = ids
            .iter()
            .zip(names)
            .map(|(&id, name)| (id, (*name).to_owned()));
        let roster = Roster {
            players: players.collect(),
            me: ids.first().copied(),
        };
        (world, roster)
    }

    /// The overlays of a frame of `game` in a window of `size`.
    fn plan(size: (u32, u32), game: &(World, Roster), hud: &Hud) -> Overlays {
        let layout = Layout::fit(Rect::new(0, 0, size.0, size.1), game.0.field());
        let lines = hud_lines(hud);
        // The widest the figures get: FPS and UPS in the hundreds.
        let columns = "FPS 120.0  UPS 120.0".len();
        Overlays::plan(
            &layout,
            &View::scores(&game.0),
            &game.1,
            &lines,
            columns,
            hud.banner.as_deref(),
        )
    }

    /// The HUD of a networked game, with `status` and `banner`.
    fn playing(status: &str, banner: Option<&str>) -> Hud {
        Hud {
            fps: 119.9,
            ups: 60.0,
            tick: 123_456,
            input_delay: 7,
            input_lag_ms: Some(150.0),
            speed: None,
            rtt_ms: Some(123.4),
            stalls: 4321,
            hash: u64::MAX,
            status: status.to_owned(),
            banner: banner.map(str::to_owned),
        }
    }

    /// The window sizes `make demo` opens: two bots, then yours.
    const DEMO_SIZES: [(u32, u32); 2] = [(640, 360), (960, 540)];

    #[test]
    fn at_the_demo_sizes_the_whole_hud_shows_clear_of_the_score_strip() {
        let game = game_of(&["bot-ada", "bot-bob", "you"]);
        let hud = playing("connected, adaptive delay", None);
        for size in DEMO_SIZES {
            let placed = plan(size, &game, &hud).placed;
            let strip = placed.scores.expect("a score strip");
            let block = placed.hud.expect("a HUD");
            assert!(block.shown.iter().all(|&shown| shown), "{size:?}");
            assert!(!block.rect.has_intersection(strip), "{size:?}");
        }
    }

    #[test]
    fn the_hud_moves_below_the_score_strip_only_when_the_strip_reaches_its_corner() {
        let game = game_of(&["bot-ada", "bot-bob", "you"]);
        let hud = playing("connected, adaptive delay", None);
        let small = plan((640, 360), &game, &hud).placed;
        let strip = small.scores.expect("a score strip");
        assert_eq!(small.hud.expect("a HUD").rect.y(), strip.bottom() + PAD);
        let large = plan((1280, 720), &game, &hud).placed;
        assert_eq!(large.hud.expect("a HUD").rect.y(), PAD);
    }

    #[test]
    fn a_score_strip_wider_than_the_window_is_drawn_in_smaller_text() {
        let game = game_of(&["bot-ada", "bot-bob", "you"]);
        let hud = playing("connected", None);
        let wide = plan((1280, 720), &game, &hud).scores.expect("scores");
        let narrow = plan((400, 240), &game, &hud).scores.expect("scores");
        assert_eq!((wide.size, narrow.size), (2, 1));
        assert!(narrow.rect.left() >= 0 && narrow.rect.right() <= 400);
    }

    #[test]
    fn overlays_never_overlap_from_the_smallest_window_to_a_large_one() {
        let games = [
            game_of(&["you"]),
            game_of(&["bot-ada", "bot-bob", "you"]),
            game_of(&["a-rather-long-name"; 8]),
        ];
        let lag = "waiting for bot-ada (ping 250 ms, 15 ticks behind, heard 1200 ms ago)";
        let desync = "DESYNC at tick 123456: hashes differ, dumps written to desync/";
        let huds = [
            playing("connected", None),
            playing(lag, None),
            playing(lag, Some(desync)),
            playing("connected", Some("Catching up: tick 1000 of 20000")),
        ];
        // From the smallest window --window-size allows; odd steps reach
        // many aspect ratios and text sizes, and every short window is
        // tried.
        let widths = (64..=3840).step_by(37).chain([640, 960, 1280, 1920]);
        let sizes: Vec<(u32, u32)> = widths
            .flat_map(|w| {
                let heights = (64..=2160).step_by(29).chain(64..128);
                heights.chain([360, 540, 720]).map(move |h| (w, h))
            })
            .collect();
        for size in sizes {
            for game in &games {
                for hud in &huds {
                    let overlays = plan(size, game, hud);
                    let placed = &overlays.placed;
                    let rects = placed.rects();
                    for (i, a) in rects.iter().enumerate() {
                        for b in &rects[i + 1..] {
                            assert!(!a.has_intersection(*b), "{size:?}: {a:?} overlaps {b:?}");
                        }
                    }
                    // A banner may leave no room for the HUD in a window
                    // under 90 px tall; without one, the lag indicator and
                    // the input delay are always shown.
                    let Some(block) = &placed.hud else {
                        assert!(hud.banner.is_some() && size.1 < 90, "{size:?}: no HUD");
                        continue;
                    };
                    assert!(block.rect.top() >= 0, "{size:?}: {block:?}");
                    assert!(block.rect.bottom() <= size.1 as i32, "{size:?}: {block:?}");
                    let lag_and_delay = block.shown[5] && block.shown[1];
                    assert!(
                        lag_and_delay || (hud.banner.is_some() && size.1 < 90),
                        "{size:?}: {block:?}"
                    );
                    if size.0 >= 640 && size.1 >= 360 {
                        assert!(block.shown.iter().all(|&s| s), "{size:?}: {block:?}");
                        assert!(placed.scores.is_some(), "{size:?}");
                    }
                }
            }
        }
    }
}
