//! The binding to the page: a [`Peer`] the page's script creates, tells
//! what happens (with `performance.now()` in milliseconds) and asks what
//! to do. Nothing here decides anything; [`WebPeer`] does.

use std::time::Duration;

use wasm_bindgen::prelude::*;

use crate::input::page_input;
use crate::options::WebOptions;
use crate::peer::{Op, WebPeer};
use crate::platform::{platform, Browser};

/// The peer, as the page holds it.
#[wasm_bindgen]
pub struct Peer {
    peer: WebPeer,
    /// `performance.now()` when the peer was made: its epoch.
    start_ms: f64,
    scene: Vec<f32>,
}

/// One thing to do with the WebSocket: `kind` 0 open, 1 send `bytes`,
/// 2 close with `code` and `reason`.
#[wasm_bindgen]
pub struct WebOp {
    kind: u8,
    bytes: Vec<u8>,
    code: u16,
    reason: String,
}

#[wasm_bindgen]
impl WebOp {
    /// 0 open, 1 send, 2 close.
    #[wasm_bindgen(getter)]
    pub fn kind(&self) -> u8 {
        self.kind
    }

    /// What to send.
    #[wasm_bindgen(getter)]
    pub fn bytes(&self) -> Vec<u8> {
        self.bytes.clone()
    }

    /// The close code.
    #[wasm_bindgen(getter)]
    pub fn code(&self) -> u16 {
        self.code
    }

    /// The close reason.
    #[wasm_bindgen(getter)]
    pub fn reason(&self) -> String {
        self.reason.clone()
    }
}

#[wasm_bindgen]
impl Peer {
    /// A peer for the page at `query` (`location.search`), playing as
    /// `name`, in the browser `browser` describes (JSON, see
    /// `platform::Browser`), at `now_ms`. Runs the preflight.
    #[wasm_bindgen(constructor)]
    pub fn new(query: &str, name: &str, browser: &str, now_ms: f64) -> Peer {
        let options = WebOptions::parse(query);
        let browser: Browser = serde_json::from_str(browser).unwrap_or_default();
        let peer = WebPeer::new(
            options,
            name.to_string(),
            platform(&browser),
            crate::games::offered(),
            crate::clock::now(),
        );
        Peer {
            peer,
            start_ms: now_ms,
            scene: Vec::new(),
        }
    }

    fn since(&self, now_ms: f64) -> Duration {
        Duration::from_secs_f64((now_ms - self.start_ms).max(0.0) / 1000.0)
    }

    /// The WebSocket opened.
    pub fn opened(&mut self, now_ms: f64) {
        let now = self.since(now_ms);
        self.peer.opened(now);
    }

    /// A binary message arrived.
    pub fn received(&mut self, bytes: &[u8], now_ms: f64) {
        let now = self.since(now_ms);
        self.peer.received(bytes, now);
        self.peer.pump(now);
    }

    /// The WebSocket closed (an error counts as a close).
    pub fn closed(&mut self, code: u16, reason: &str, now_ms: f64) {
        let now = self.since(now_ms);
        self.peer.closed(code, reason, now);
    }

    /// Runs what is due: timers and ticks.
    pub fn pump(&mut self, now_ms: f64) {
        let now = self.since(now_ms);
        self.peer.pump(now);
    }

    /// The page's input: button bits, and a stick at `x`, `y` (-1..=1)
    /// when `stick`.
    pub fn set_input(&mut self, buttons: u8, x: f32, y: f32, stick: bool) {
        self.peer
            .set_input(page_input(buttons, stick.then_some((x, y))));
    }

    /// The time between the page's last two drawings, milliseconds.
    pub fn set_frame_time(&mut self, ms: f64) {
        if ms.is_finite() && ms > 0.0 {
            self.peer
                .set_frame_time(Duration::from_secs_f64(ms / 1000.0));
        }
    }

    /// Ready for the next game, or not.
    pub fn set_ready(&mut self, ready: bool) {
        self.peer.set_ready(ready);
    }

    /// Leave the game and close the connection.
    pub fn leave(&mut self) {
        self.peer.leave();
    }

    /// The next thing to do with the WebSocket, if any.
    pub fn next_op(&mut self) -> Option<WebOp> {
        self.peer.next_op().map(|op| match op {
            Op::Open => WebOp {
                kind: 0,
                bytes: Vec::new(),
                code: 0,
                reason: String::new(),
            },
            Op::Send(bytes) => WebOp {
                kind: 1,
                bytes,
                code: 0,
                reason: String::new(),
            },
            Op::Close { code, reason } => WebOp {
                kind: 2,
                bytes: Vec::new(),
                code,
                reason,
            },
        })
    }

    /// The next line for the console, if any.
    pub fn next_line(&mut self) -> Option<String> {
        self.peer.next_line()
    }

    /// The state, as JSON (see `view::State`).
    pub fn state(&self) -> String {
        crate::view::state_json(&self.peer)
    }

    /// The picture to draw, between the last two ticks (see `picture`).
    pub fn scene(&mut self) -> Vec<f32> {
        self.scene.clear();
        self.peer.scene(&mut self.scene);
        self.scene.clone()
    }
}

/// [`simulate`] with player 0 holding the page's stick at `x`, `y` on
/// every tick, through the path the page's input takes into the game
/// (`Peer::set_input`): the page's `?boundary=1` check feeds NaNs with
/// payloads through it in every engine.
#[wasm_bindgen]
pub fn simulate_stick(
    game: &str,
    settings: &str,
    players: u8,
    seed: &str,
    ticks: u32,
    x: f32,
    y: f32,
) -> String {
    crate::offline::Offline::new(settings, players, seed, ticks)
        .and_then(|offline| crate::games::offered().simulate(game, offline.with_stick(x, y)))
        .unwrap_or_else(|why| format!("lockstep-web: {why}"))
}

/// A game offline, every player a bot, exactly as `lockstep-client sim
/// --game G --set K=V... --players P --seed S --ticks T` runs it: the
/// page's benchmark (`?sim=T`) times it against the native build, and its
/// golden rows (`?row=...`) run so in every engine. `game` empty is the
/// first of the list, `settings` is `K=V` pairs joined by commas, `seed`
/// a u64 in decimal. Returns the `final` line, or why the game cannot run.
#[wasm_bindgen]
pub fn simulate(game: &str, settings: &str, players: u8, seed: &str, ticks: u32) -> String {
    crate::offline::Offline::new(settings, players, seed, ticks)
        .and_then(|offline| crate::games::offered().simulate(game, offline))
        .unwrap_or_else(|why| format!("lockstep-web: {why}"))
}

/// The names of the games this module offers, separated by spaces, in the
/// order of its list: what `scripts/build-web.sh` asks a module built
/// with fewer games, to tell the page when it is enough.
#[wasm_bindgen]
pub fn games() -> String {
    let names: Vec<&str> = crate::games::offered()
        .hosted()
        .iter()
        .map(|game| game.name())
        .collect();
    names.join(" ")
}
