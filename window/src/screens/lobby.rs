//! The lobby screen: who waits for the next game (name, colour, ping,
//! platform, ready or not), the game's settings, the verification code of
//! the server's certificate, the last game's scores, the button that
//! says ready, and a QR code of the address a phone's browser opens to
//! join.
//!
//! Its loop (`wait`, between the games of a series) turns the server's
//! lobby events and the player's keys, clicks and buttons into a
//! [`LobbyView`], and says ready when the player does; [`draw`] only draws
//! that view. Every element's place comes from [`layout`], a pure function
//! of the window size and the number of players, so the screen and a
//! screenshot test agree on where to look.

use lockstep_protocol::{verification_code, Lobby, PlayerId};
use sdl2::controller::Button;
use sdl2::keyboard::Keycode;
use sdl2::pixels::Color;
use sdl2::rect::Rect;
use sdl2::render::WindowCanvas;

use crate::draw::colour::player_colour;
use crate::draw::qr;
use crate::draw::text::{printable, text, text_width, GLYPH, PAD};
use crate::screens::screen::{Screen, WindowError};
use lockstep_client::io::clock;
use lockstep_client::io::link::{NetClient, NetCommand, NetEvent, Started};
use lockstep_client::play::notice::Notice;
use lockstep_client::play::PlayError;
use lockstep_client::play::PlayOptions;
use lockstep_client::window_options::WindowOptions;
use lockstep_engine::games::Games;

/// Behind everything: the arena's surround, so the lobby reads as the
/// same game.
const BACKGROUND: Color = Color::RGB(20, 22, 30);
/// Ordinary text.
pub const LOBBY_TEXT: Color = Color::RGB(205, 210, 222);
/// The verification code: a colour of its own, so people find it at a
/// glance and a screenshot test can tell it apart.
pub const CODE_TEXT: Color = Color::RGB(255, 222, 120);
/// The ready mark of a player who is ready.
pub const READY_TEXT: Color = Color::RGB(150, 255, 180);
/// The mark of a player who is not ready yet.
const WAITING_TEXT: Color = Color::RGB(140, 140, 150);
/// The button while this player is not ready: it asks to be pressed.
const BUTTON_IDLE: Color = Color::RGB(70, 90, 140);
/// The button once this player is ready.
const BUTTON_READY: Color = Color::RGB(40, 130, 70);

/// Columns of a player row before the ping: the swatch, a space and a
/// name of up to 32 characters cut to this many.
const NAME_COLUMNS: usize = 18;

/// What the lobby screen shows; the window's loop keeps it up to date.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LobbyView {
    /// The lobby as the server last sent it; `None` before the first.
    pub lobby: Option<Lobby>,
    /// The verification code of the certificate the server presented.
    pub code: Option<String>,
    /// This client's slot.
    pub me: Option<PlayerId>,
    /// Whether this client said it is ready.
    pub ready: bool,
    /// The last game this client played, as its own world ended it.
    pub last: Option<LastScores>,
    /// One line about what happens next.
    pub status: String,
    /// The next game and its settings in a few words ("balls (24
    /// balls)"), as the client's list of games describes them.
    pub game: String,
    /// The address a browser opens to join the same server (its web page
    /// is on the port of its QUIC one), shown as a QR code for phones.
    pub browser: Option<String>,
}

/// The scores of the last game this client played: its world knows them,
/// the server never simulates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LastScores {
    /// The tick this client's game ended at.
    pub tick: u32,
    /// Every player's goals, in slot order, with its name.
    pub scores: Vec<(PlayerId, String, u32)>,
}

/// Shows the lobby until the server starts game `game`; `None` when the
/// player quit. R, Space, a click on the button or the controller's A
/// toggle ready; a player who says ready at once (a bot, `--ready`) says so
/// in every lobby, after the lobby screenshot if one is asked for.
pub(crate) fn wait(
    games: &impl Games,
    screen: &mut Screen,
    net: &NetClient,
    view: &mut LobbyView,
    options: &mut WindowOptions,
    game: u32,
    play_options: &PlayOptions,
) -> Result<Option<Started>, WindowError> {
    let shot_here = options.screenshot_lobby == Some(game) && options.screenshot.is_some();
    // Whether this client still has to say it is ready by itself in this
    // lobby: after a game everyone starts not ready; before the first, the
    // Hello said it unless a screenshot had to come first.
    let mut auto_ready_due = play_options.auto_ready && (game > 1 || !view.ready);
    loop {
        let frame_start = clock::now();
        let pumped = screen.pump();
        if pumped.quit {
            return Ok(None);
        }
        let mut toggle = pumped
            .keys
            .iter()
            .any(|key| matches!(*key, Keycode::R | Keycode::Space | Keycode::Return))
            || pumped.buttons.contains(&Button::A);
        let rows = view.lobby.as_ref().map_or(0, |l| l.players.len());
        let output = screen.canvas.output_size().map_err(WindowError::Sdl)?;
        toggle |= pumped
            .clicks
            .iter()
            .any(|&(x, y)| hits_button(output, rows, x, y));
        while let Ok(event) = net.events().try_recv() {
            match event {
                NetEvent::Started(started) => return Ok(Some(started)),
                NetEvent::Welcome {
                    player,
                    first_use,
                    fingerprint,
                    ..
                } => {
                    if let Some(first_use) = first_use {
                        play_options.notices.say(Notice::FirstUse(first_use));
                    }
                    view.me = Some(player);
                    view.code = fingerprint.map(|f| verification_code(&f));
                }
                NetEvent::Lobby(lobby) => {
                    // A host without the game gives its settings as pairs,
                    // which this client's game may refuse: leave, saying
                    // why (the Closed that follows ends the lobby).
                    if let Some(why) = games.refuses(&lobby.next.spec) {
                        net.send(NetCommand::CannotPlay(why));
                    }
                    view.game = games.describe(&lobby.next.spec);
                    view.lobby = Some(lobby);
                }
                NetEvent::Closed(closed) => return Err(PlayError::from(closed).into()),
                _ => {}
            }
        }
        let lobby_shown = view.lobby.as_ref().is_some_and(|l| {
            l.players.len() >= usize::from(l.next.players_needed) && (game == 1 || l.last.is_some())
        });
        if toggle && view.me.is_some() {
            view.ready = !view.ready;
            net.send(NetCommand::Ready(view.ready));
        }
        let waiting_for_shot = shot_here && options.screenshot.is_some();
        if auto_ready_due && view.lobby.is_some() && !waiting_for_shot {
            auto_ready_due = false;
            view.ready = true;
            net.send(NetCommand::Ready(true));
        }
        view.status = status(view);
        draw(&mut screen.canvas, view).map_err(WindowError::Sdl)?;
        if shot_here && lobby_shown {
            if let Some(path) = options.screenshot.take() {
                crate::draw::screenshot::save_png(&screen.canvas, &path)?;
            }
        }
        screen.present();
        screen.pace(frame_start);
    }
}

/// What the lobby waits for, in words.
fn status(view: &LobbyView) -> String {
    let Some(lobby) = &view.lobby else {
        return match (view.me, &view.last) {
            (Some(_), Some(_)) => "the game goes on for the others; waiting for its end...".into(),
            (Some(_), None) => "waiting for the lobby...".into(),
            (None, _) => "connecting...".into(),
        };
    };
    if let Some(held) = &lobby.held {
        return held.clone();
    }
    if view.me.is_none() {
        return "watching: the game starts when the players are ready".into();
    }
    let missing = usize::from(lobby.next.players_needed).saturating_sub(lobby.players.len());
    let unready: Vec<&str> = lobby
        .players
        .iter()
        .filter(|p| !p.ready && Some(p.id) != view.me)
        .map(|p| p.name.as_str())
        .collect();
    if !view.ready {
        "press R, Space or the button when you are ready".into()
    } else if missing > 0 {
        format!("waiting for {missing} more player(s) to join")
    } else if !unready.is_empty() {
        format!("waiting for {} to be ready", unready.join(", "))
    } else {
        "starting...".into()
    }
}

/// Where each element of the lobby screen goes, for a window size and a
/// number of players.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LobbyLayout {
    /// Text magnification.
    pub size: i32,
    /// Height of one line of text with its spacing, pixels.
    pub line: i32,
    /// Left edge of the text.
    pub left: i32,
    /// Top of the title line.
    pub title: i32,
    /// The line of the verification code.
    pub code: Rect,
    /// Top of the heading of the player list.
    pub heading: i32,
    /// Each player row's colour swatch, in list order.
    pub swatches: Vec<Rect>,
    /// Each player row's ready mark, in list order.
    pub marks: Vec<Rect>,
    /// Top of the settings line.
    pub settings: i32,
    /// Top of the seed line, under it.
    pub seed: i32,
    /// Top of the line that names the last game.
    pub last_game: i32,
    /// The last game's scores, under that line.
    pub scores: Rect,
    /// The ready button.
    pub button: Rect,
    /// Top of the status line.
    pub status: i32,
}

/// Lays out the lobby screen for a window of `output` pixels with
/// `players` rows: text twice as big from about 720 pixels of height up,
/// one line per row, the button under the last game's line.
#[must_use]
pub fn layout(output: (u32, u32), players: usize) -> LobbyLayout {
    let (width, height) = (output.0 as i32, output.1 as i32);
    let size = if height >= 600 && width >= 1000 { 2 } else { 1 };
    let glyph = GLYPH * size;
    let line = glyph * 2;
    let left = 4 * glyph;
    let row_width = text_width(80, size).min(width - 2 * left).max(0);
    let mut y = 2 * glyph;
    let title = y;
    y += line;
    let code = Rect::new(left, y, row_width as u32, glyph as u32);
    y += 2 * line;
    let heading = y;
    y += line;
    let mut swatches = Vec::with_capacity(players);
    let mut marks = Vec::with_capacity(players);
    let mark_x = left + text_width(2 + NAME_COLUMNS + 14 + 28, size);
    for _ in 0..players {
        swatches.push(Rect::new(left, y, glyph as u32, glyph as u32));
        marks.push(Rect::new(
            mark_x,
            y,
            text_width(9, size) as u32,
            glyph as u32,
        ));
        y += line;
    }
    y += line / 2;
    let settings = y;
    y += line;
    let seed = y;
    y += 3 * line / 2;
    let last_game = y;
    y += line;
    let scores = Rect::new(left, y, row_width as u32, glyph as u32);
    y += 2 * line;
    let button_width = text_width(24, size) + 4 * PAD * size;
    let button = Rect::new(
        left,
        y,
        button_width as u32,
        (glyph + 4 * PAD * size) as u32,
    );
    y += button.height() as i32 + line;
    LobbyLayout {
        size,
        line,
        left,
        title,
        code,
        heading,
        swatches,
        marks,
        settings,
        seed,
        last_game,
        scores,
        button,
        status: y,
    }
}

/// Draws the lobby screen filling the canvas; does not present.
pub fn draw(canvas: &mut WindowCanvas, view: &LobbyView) -> Result<(), String> {
    canvas.set_scale(1.0, 1.0)?;
    let output = canvas.output_size()?;
    canvas.set_draw_color(BACKGROUND);
    canvas.clear();
    let players = view.lobby.as_ref().map_or(&[][..], |l| &l.players[..]);
    let at = layout(output, players.len());
    let size = at.size;

    let title = match &view.lobby {
        Some(lobby) => format!("LOBBY - game {}", lobby.next.game),
        None => "LOBBY".to_string(),
    };
    text(canvas, at.left, at.title, size + 1, &title, LOBBY_TEXT)?;
    let code = match &view.code {
        Some(code) => format!("server code: {code}"),
        None => "server code: (not known yet)".to_string(),
    };
    text(canvas, at.code.x(), at.code.y(), size, &code, CODE_TEXT)?;
    text(
        canvas,
        at.code.x(),
        at.code.y() + at.line,
        size,
        "compare it with the code the server printed",
        WAITING_TEXT,
    )?;

    let needed = view.lobby.as_ref().map_or(0, |l| l.next.players_needed);
    let heading = format!("Players: {} joined, {} needed", players.len(), needed);
    text(canvas, at.left, at.heading, size, &heading, LOBBY_TEXT)?;
    for ((player, swatch), mark) in players.iter().zip(&at.swatches).zip(&at.marks) {
        canvas.set_draw_color(player_colour(player.id));
        canvas.fill_rect(*swatch)?;
        let you = if Some(player.id) == view.me {
            " (you)"
        } else {
            ""
        };
        let name: String = printable(&format!("{}{you}", player.name))
            .chars()
            .take(NAME_COLUMNS)
            .collect();
        let x = swatch.x() + text_width(2, size);
        text(canvas, x, swatch.y(), size, &name, player_colour(player.id))?;
        let x = x + text_width(NAME_COLUMNS, size);
        let ping = format!("ping {} ms", player.ping_ms);
        text(canvas, x, swatch.y(), size, &ping, LOBBY_TEXT)?;
        let platform: String = printable(&short_platform(&player.platform))
            .chars()
            .take(26)
            .collect();
        let x = x + text_width(14, size);
        text(canvas, x, swatch.y(), size, &platform, LOBBY_TEXT)?;
        let (word, colour) = if player.ready {
            ("READY", READY_TEXT)
        } else {
            ("not ready", WAITING_TEXT)
        };
        text(canvas, mark.x(), mark.y(), size, word, colour)?;
    }

    if let Some(lobby) = &view.lobby {
        let next = &lobby.next;
        let settings = format!(
            "Next game: {}, {} Hz, input delay {}",
            view.game, next.tick_rate, next.input_delay
        );
        text(canvas, at.left, at.settings, size, &settings, LOBBY_TEXT)?;
        let seed = format!("Seed {} (a new one each game)", next.seed);
        text(canvas, at.left, at.seed, size, &seed, LOBBY_TEXT)?;
    }
    draw_last_game(canvas, view, &at)?;
    if let Some(url) = &view.browser {
        draw_browser_code(canvas, url, output, &at)?;
    }

    // A spectator has nothing to be ready for.
    if view.me.is_some() {
        let (label, fill) = if view.ready {
            ("READY - R to undo", BUTTON_READY)
        } else {
            ("Press R: ready", BUTTON_IDLE)
        };
        canvas.set_draw_color(fill);
        canvas.fill_rect(at.button)?;
        let centre = at.button.center();
        let x = centre.x() - text_width(label.len(), size) / 2;
        let y = centre.y() - GLYPH * size / 2;
        text(canvas, x, y, size, label, Color::RGB(255, 255, 255))?;
    }
    let status = printable(&view.status);
    text(canvas, at.left, at.status, size, &status, LOBBY_TEXT)
}

/// Where the QR code of the browser's address `url` goes: at the right,
/// beside the game's settings and the last game (below the player rows,
/// which can span the window); `None` if the window has no room for it.
#[must_use]
pub fn browser_code_at(url: &str, output: (u32, u32), at: &LobbyLayout) -> Option<Rect> {
    let module = 2 * at.size as u32;
    let side = qr::side(url, module)?;
    let caption = text_width(url.len().max(PHONE_CAPTION.len()), 1);
    let width = (side as i32).max(caption);
    let x = output.0 as i32 - at.left - width;
    let bottom = at.settings + side as i32 + 3 * GLYPH * 2;
    let fits = x >= at.left + text_width(SETTINGS_COLUMNS, at.size) && bottom <= output.1 as i32;
    fits.then(|| Rect::new(x, at.settings, side, side))
}

/// Draws the QR code of the browser's address with the address under it
/// in small text, where [`browser_code_at`] says.
fn draw_browser_code(
    canvas: &mut WindowCanvas,
    url: &str,
    output: (u32, u32),
    at: &LobbyLayout,
) -> Result<(), String> {
    let Some(place) = browser_code_at(url, output, at) else {
        return Ok(());
    };
    qr::draw(canvas, url, place.x(), place.y(), 2 * at.size as u32)?;
    let y = place.bottom() + GLYPH;
    text(canvas, place.x(), y, 1, PHONE_CAPTION, WAITING_TEXT)?;
    text(canvas, place.x(), y + 2 * GLYPH, 1, url, LOBBY_TEXT)
}

/// Columns the settings, seed and last-game lines take at most, left of
/// the QR code.
const SETTINGS_COLUMNS: usize = 60;

/// A platform as the lobby row has room for it: a browser's
/// `wasm32-unknown-unknown/chromium-156/linux/x86_64` as
/// `wasm32/chromium-156/linux/x86_64`, so its browser shows.
fn short_platform(platform: &str) -> String {
    match platform.strip_prefix("wasm32-unknown-unknown/") {
        Some(browser) => format!("wasm32/{browser}"),
        None => platform.to_string(),
    }
}

/// What the browser's QR code is for.
const PHONE_CAPTION: &str = "phones: scan to join";

/// The last game's line: the server's summary and this client's scores,
/// each player's in its colour.
fn draw_last_game(
    canvas: &mut WindowCanvas,
    view: &LobbyView,
    at: &LobbyLayout,
) -> Result<(), String> {
    let summary = view.lobby.as_ref().and_then(|l| l.last);
    let (Some(last), Some(summary)) = (&view.last, summary) else {
        return Ok(());
    };
    let size = at.size;
    let head = format!(
        "Last game: game {}, seed {}, your last tick {}. Scores:",
        summary.game, summary.seed, last.tick
    );
    text(canvas, at.left, at.last_game, size, &head, LOBBY_TEXT)?;
    let (mut x, y) = (at.scores.x(), at.scores.y());
    for (id, name, goals) in &last.scores {
        let entry = format!("{} {goals}", printable(name));
        text(canvas, x, y, size, &entry, player_colour(*id))?;
        x += text_width(entry.len() + 3, size);
    }
    Ok(())
}

/// Whether a click at (`x`, `y`) hits the ready button of a window of
/// `output` pixels showing `players` rows.
#[must_use]
pub fn hits_button(output: (u32, u32), players: usize, x: i32, y: i32) -> bool {
    layout(output, players).button.contains_point((x, y))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_follow_each_other_and_the_button_comes_after_them() {
        let at = layout((1280, 720), 3);
        assert_eq!(at.size, 2);
        assert_eq!(at.swatches.len(), 3);
        assert!(at
            .swatches
            .windows(2)
            .all(|w| w[1].y() - w[0].y() == at.line));
        assert!(at.swatches[2].bottom() < at.settings);
        assert!(at.scores.bottom() < at.button.top());
        assert!(at.button.bottom() < at.status);
        assert!(at.status < 720, "everything fits a 720p window");
        let small = layout((640, 360), 3);
        assert_eq!(small.size, 1);
        assert!(small.status < 360, "and the demo's small windows");
    }

    #[test]
    fn a_browser_platform_is_shortened_so_its_browser_shows() {
        assert_eq!(
            short_platform("wasm32-unknown-unknown/chromium-156/linux/x86_64"),
            "wasm32/chromium-156/linux/x86_64"
        );
        assert_eq!(
            short_platform("x86_64-unknown-linux-gnu"),
            "x86_64-unknown-linux-gnu"
        );
    }

    #[test]
    fn a_click_on_the_button_hits_it_and_one_beside_it_does_not() {
        let at = layout((1280, 720), 2);
        let centre = at.button.center();
        assert!(hits_button((1280, 720), 2, centre.x(), centre.y()));
        assert!(!hits_button(
            (1280, 720),
            2,
            at.button.right() + 5,
            centre.y()
        ));
    }
}
