//! The server browser's window: draws the [`Browser`] over the servers
//! the [`Finder`] hears, and turns keys, clicks and controller buttons
//! into its [`Press`]es.
//!
//! ```text
//! loop {
//!     events => presses => browser.press(...)  (a choice ends the loop)
//!     every ROWS_EVERY: rows = finder.servers() with their standing
//!     draw title, header, rows (the chosen one lit), the address field, help
//! }
//! ```

use std::time::Duration;

use sdl2::controller::Button;
use sdl2::keyboard::Keycode;
use sdl2::pixels::Color;
use sdl2::rect::Rect;

use crate::draw::text::{printable, text, GLYPH, HUD_TEXT};
use crate::screens::screen::{Screen, WindowError};
use lockstep_client::discovery::browser::{Browser, Choice, Press, Row};
use lockstep_client::discovery::Standing;
use lockstep_client::io::clock;
use lockstep_client::io::discovery::Finder;
use lockstep_client::tools::list::{server_line, standing};
use lockstep_client::window_options::{
    BrowseOptions, Browsed, WindowOptions, BROWSER_SCREENSHOT_WAIT,
};

/// How often the rows are refreshed from the finder (and the
/// known-servers file re-read): live, without reading the file every
/// frame.
const ROWS_EVERY: Duration = Duration::from_millis(250);

/// One frame's time: the browser changes a few times a second at most.
const FRAME: Duration = Duration::from_millis(30);

/// Behind everything.
pub const BACKGROUND: Color = Color::RGB(20, 22, 30);
/// Behind the chosen row.
pub const SELECTED: Color = Color::RGB(46, 58, 88);
/// Column titles, help and what is not joinable.
pub const DIM: Color = Color::RGB(140, 148, 165);
/// A fingerprint that changed.
pub const WARNING: Color = Color::RGB(255, 82, 82);
/// Why the last Enter did not join.
pub const NOTE: Color = Color::RGB(255, 196, 40);

/// Columns of each field, in characters: name, address, players, ping;
/// the code takes the rest.
const COLUMNS: [usize; 4] = [18, 23, 14, 8];

/// Characters a line must fit: the columns and the longest code.
const LINE_CHARS: usize = 18 + 23 + 14 + 8 + 34;

/// Runs the browser until the player picks a server or closes it.
pub(crate) fn run(options: BrowseOptions) -> anyhow::Result<Browsed> {
    let finder = Finder::start(&options.finder)?;
    let window = WindowOptions {
        title: "servers on the LAN".into(),
        ..options.window.clone()
    };
    let mut screen = Screen::open(&window)?;
    let mut browser = Browser::default();
    let mut rows: Vec<Row> = Vec::new();
    let mut refreshed: Option<Duration> = None;
    let start = clock::now();
    loop {
        let now = clock::since(start);
        if refreshed.is_none_or(|at| now >= at + ROWS_EVERY) {
            rows = finder
                .servers()
                .into_iter()
                .map(|found| Row {
                    standing: standing(&found, &options.known_servers),
                    found,
                })
                .collect();
            refreshed = Some(now);
        }
        let pumped = screen.pump();
        if pumped.quit {
            return Ok(Browsed::Nothing(Vec::new()));
        }
        let layout = Layout::of(&screen);
        let presses = pumped
            .keys
            .iter()
            .filter_map(|&key| key_press(key))
            .chain(pumped.text.into_iter().map(Press::Text))
            .chain(pumped.buttons.iter().filter_map(|&b| button_press(b)))
            .chain(
                pumped
                    .clicks
                    .iter()
                    .filter_map(|&(_, y)| layout.row_at(y, rows.len()).map(Press::Click)),
            );
        for press in presses.collect::<Vec<_>>() {
            match browser.press(press, &rows) {
                Some(Choice::Server(found)) => return Ok(Browsed::Server(found)),
                Some(Choice::Address(address)) => return Ok(Browsed::Address(address)),
                None => {}
            }
        }
        draw(&mut screen, &layout, &browser, &rows, now).map_err(WindowError::Sdl)?;
        if let Some(path) = &options.screenshot {
            let every_ping = !rows.is_empty() && rows.iter().all(|r| r.found.ping.is_some());
            // Two refreshes in, every server that heard the first probe
            // has answered it.
            let settled = now >= 2 * ROWS_EVERY;
            if (every_ping && settled) || now >= BROWSER_SCREENSHOT_WAIT {
                crate::draw::screenshot::save_png(&screen.canvas, path)
                    .map_err(WindowError::from)?;
                let lines = rows.iter().map(|r| server_line(&r.found, &r.standing));
                return Ok(Browsed::Nothing(lines.collect()));
            }
        }
        screen.present();
        std::thread::sleep(FRAME);
    }
}

fn key_press(key: Keycode) -> Option<Press> {
    match key {
        Keycode::Up => Some(Press::Up),
        Keycode::Down | Keycode::Tab => Some(Press::Down),
        Keycode::Return | Keycode::KpEnter => Some(Press::Enter),
        Keycode::Backspace => Some(Press::Backspace),
        _ => None,
    }
}

fn button_press(button: Button) -> Option<Press> {
    match button {
        Button::DPadUp => Some(Press::Up),
        Button::DPadDown => Some(Press::Down),
        Button::A | Button::Start => Some(Press::Enter),
        _ => None,
    }
}

/// Where things go in a window of the screen's size.
struct Layout {
    width: i32,
    height: i32,
    /// Text magnification.
    size: i32,
    /// Height of one row.
    line: i32,
    /// Left margin.
    left: i32,
    /// Top of the first server row.
    rows_top: i32,
}

impl Layout {
    fn of(screen: &Screen) -> Layout {
        let (width, height) = screen.canvas.output_size().unwrap_or((1280, 720));
        let (width, height) = (width as i32, height as i32);
        let size = (width / ((LINE_CHARS as i32 + 4) * GLYPH)).clamp(1, 3);
        let line = (GLYPH + 10) * size;
        Layout {
            width,
            height,
            size,
            line,
            left: 2 * GLYPH * size,
            rows_top: 2 * GLYPH * size + 3 * line,
        }
    }

    /// The row (a server, or the address field after them) at `y`.
    fn row_at(&self, y: i32, servers: usize) -> Option<usize> {
        if y < self.rows_top {
            return None;
        }
        let row = ((y - self.rows_top) / self.line) as usize;
        (row <= servers).then_some(row)
    }

    fn column(&self, n: usize) -> i32 {
        let chars: usize = COLUMNS[..n].iter().sum();
        self.left + chars as i32 * GLYPH * self.size
    }

    fn text_y(&self, row_top: i32) -> i32 {
        row_top + (self.line - GLYPH * self.size) / 2
    }
}

/// `s` cut to `chars` characters, printable.
fn cell(s: &str, chars: usize) -> String {
    let s = printable(s);
    if s.chars().count() < chars {
        s
    } else {
        s.chars().take(chars.saturating_sub(2)).collect::<String>() + "~"
    }
}

fn draw(
    screen: &mut Screen,
    layout: &Layout,
    browser: &Browser,
    rows: &[Row],
    now: Duration,
) -> Result<(), String> {
    let canvas = &mut screen.canvas;
    canvas.set_draw_color(BACKGROUND);
    canvas.clear();
    let size = layout.size;
    let title_size = size * 2;
    text(
        canvas,
        layout.left,
        GLYPH * size,
        title_size,
        "Games on the LAN",
        HUD_TEXT,
    )?;
    let header_top = layout.rows_top - layout.line;
    let header = ["NAME", "ADDRESS", "PLAYERS", "PING", "CODE"];
    for (i, title) in header.iter().enumerate() {
        text(
            canvas,
            layout.column(i),
            layout.text_y(header_top),
            size,
            title,
            DIM,
        )?;
    }
    let selected = browser.selected(rows);
    for (i, row) in rows.iter().enumerate() {
        let top = layout.rows_top + i as i32 * layout.line;
        if i == selected {
            canvas.set_draw_color(SELECTED);
            canvas.fill_rect(Rect::new(
                layout.left / 2,
                top,
                (layout.width - layout.left) as u32,
                layout.line as u32,
            ))?;
        }
        let a = &row.found.announcement;
        let players = format!(
            "{}/{}{}",
            a.players,
            a.needed,
            if a.playing { " playing" } else { "" }
        );
        let ping = row
            .found
            .ping
            .map_or_else(|| "-".to_string(), |p| format!("{} ms", p.as_millis()));
        let (code, colour) = match (&row.standing, a.protocol_version) {
            (Standing::Changed { .. }, _) => ("FINGERPRINT CHANGED".to_string(), WARNING),
            (_, v) if v != lockstep_protocol::PROTOCOL_VERSION => (format!("version {v}"), DIM),
            _ => (a.code(), HUD_TEXT),
        };
        let cells = [
            cell(a.name.as_str(), COLUMNS[0]),
            cell(&row.found.addr().to_string(), COLUMNS[1]),
            cell(&players, COLUMNS[2]),
            cell(&ping, COLUMNS[3]),
            code,
        ];
        for (n, content) in cells.iter().enumerate() {
            let colour = if n == 4 { colour } else { HUD_TEXT };
            text(
                canvas,
                layout.column(n),
                layout.text_y(top),
                size,
                content,
                colour,
            )?;
        }
    }
    if rows.is_empty() {
        let dots = ".".repeat(1 + (now.as_millis() / 500 % 3) as usize);
        text(
            canvas,
            layout.left,
            layout.text_y(layout.rows_top - layout.line),
            size,
            &format!("looking for games on the LAN{dots}"),
            DIM,
        )?;
    }
    let field_top = layout.rows_top + rows.len() as i32 * layout.line;
    if browser.on_address(rows) {
        canvas.set_draw_color(SELECTED);
        canvas.fill_rect(Rect::new(
            layout.left / 2,
            field_top,
            (layout.width - layout.left) as u32,
            layout.line as u32,
        ))?;
    }
    let cursor = if browser.on_address(rows) { "_" } else { "" };
    text(
        canvas,
        layout.left,
        layout.text_y(field_top),
        size,
        &format!(
            "or type an address: {}{cursor}",
            printable(&browser.address)
        ),
        HUD_TEXT,
    )?;
    if let Some(message) = &browser.message {
        text(
            canvas,
            layout.left,
            layout.text_y(field_top + layout.line),
            size,
            &printable(message),
            NOTE,
        )?;
    }
    let help = "Up/Down choose   Enter, click or A join   Esc leave   \
                compare the CODE with the one the server printed";
    text(
        canvas,
        layout.left,
        layout.height - 2 * GLYPH * size,
        size,
        help,
        DIM,
    )?;
    Ok(())
}
