//! What the page shows and tests read: the peer's state as one plain
//! object (JSON across the boundary), for the lobby, the HUD and
//! `window.lockstep.state()`.

use lockstep_protocol::Input;
use serde::Serialize;

use crate::peer::WebPeer;

/// The peer's state. Field names are the page's (camelCase).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct State {
    /// `connecting`, `lobby`, `playing` or `ended`.
    pub phase: &'static str,
    /// The world's tick (0 before a game).
    pub tick: u32,
    /// Our slot, once welcomed.
    pub player: Option<u8>,
    /// The input last sent (the bot's), or the page's input now.
    pub last_input: InputView,
    /// The input delay in force, ticks.
    pub delay: u32,
    /// Ticks that waited for their bundle.
    pub stalls: u64,
    /// The world's hash, 16 hex digits.
    pub hash: String,
    /// The game speed, percent.
    pub speed: u16,
    /// The round trip to the server, milliseconds.
    pub rtt_ms: f64,
    /// The player's name.
    pub name: String,
    /// Whether we said we are ready.
    pub ready: bool,
    /// The game played, once one started.
    pub game: Option<String>,
    /// The players of the game, with their scores.
    pub players: Vec<PlayerView>,
    /// What the banner says.
    pub banner: Option<String>,
    /// Why it ended.
    pub ended: Option<String>,
    /// The lobby, once the server sent one.
    pub lobby: Option<LobbyView>,
    /// The preflight: every game's self-test hash, computed in the page.
    pub preflight: Vec<SelfTestView>,
    /// The target the Hello announces for this page.
    pub target: String,
}

/// An input as numbers.
#[derive(Debug, Serialize)]
pub struct InputView {
    /// The button bits (up 1, down 2, left 4, right 8, boost 16).
    pub buttons: u8,
    /// The stick's x, -127..=127 (0 without a stick).
    pub x: i8,
    /// The stick's y, -127..=127, down positive.
    pub y: i8,
    /// Whether the stick is in use.
    pub stick: bool,
}

impl From<Input> for InputView {
    fn from(input: Input) -> Self {
        let [x, y] = input.axes.unwrap_or([0, 0]);
        InputView {
            buttons: input.buttons.0,
            x,
            y,
            stick: input.axes.is_some(),
        }
    }
}

/// One player of the game.
#[derive(Debug, Serialize)]
pub struct PlayerView {
    /// Slot (its colour).
    pub id: u8,
    /// Name.
    pub name: String,
    /// Score (goals, Topple's bodies knocked off); `null` in a game
    /// that keeps none (Tally), which then shows no score strip.
    pub score: Option<u32>,
}

/// The lobby.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LobbyView {
    /// Who waits.
    pub players: Vec<LobbyPlayerView>,
    /// The next game in a few words ("balls (24 balls)").
    pub game: String,
    /// Players the game waits for.
    pub needed: u8,
    /// Ticks per second.
    pub tick_rate: u16,
}

/// One player in the lobby.
#[derive(Debug, Serialize)]
pub struct LobbyPlayerView {
    /// Slot.
    pub id: u8,
    /// Name.
    pub name: String,
    /// Ready for the next game.
    pub ready: bool,
    /// Its round trip to the server, milliseconds.
    pub ping: u16,
    /// Its target, as its Hello claims.
    pub platform: String,
}

/// One game's self-test.
#[derive(Debug, Serialize)]
pub struct SelfTestView {
    /// The game.
    pub game: String,
    /// Its hash, 16 hex digits.
    pub hash: String,
    /// Whether this is the game the lobby offers.
    pub offered: bool,
}

/// The state of `peer`.
pub fn state(peer: &WebPeer) -> State {
    let view = peer.game_view();
    let offered = peer.lobby().map(|lobby| lobby.next.spec.name.clone());
    State {
        phase: peer.phase().name(),
        tick: view.as_ref().map_or(0, |v| v.tick),
        player: peer.player().map(|p| p.0),
        last_input: view
            .as_ref()
            .filter(|v| v.me.is_some())
            .map_or(peer.input(), |v| v.last_input)
            .into(),
        delay: view.as_ref().map_or(0, |v| v.delay),
        stalls: view.as_ref().map_or(0, |v| v.stalls),
        hash: view
            .as_ref()
            .map_or(String::new(), |v| format!("{:016x}", v.hash)),
        speed: view.as_ref().map_or(100, |v| v.speed),
        rtt_ms: peer.rtt().as_secs_f64() * 1000.0,
        name: peer.name().to_string(),
        ready: peer.ready(),
        game: view.as_ref().map(|v| v.game.clone()),
        players: view.as_ref().map_or(Vec::new(), |v| {
            v.players
                .iter()
                .map(|(id, name, score)| PlayerView {
                    id: id.0,
                    name: name.clone(),
                    score: *score,
                })
                .collect()
        }),
        banner: view.and_then(|v| v.banner),
        ended: peer.ended().map(str::to_string),
        lobby: peer.lobby().map(|lobby| LobbyView {
            players: lobby
                .players
                .iter()
                .map(|p| LobbyPlayerView {
                    id: p.id.0,
                    name: p.name.clone(),
                    ready: p.ready,
                    ping: p.ping_ms,
                    platform: p.platform.clone(),
                })
                .collect(),
            game: peer.games().describe(&lobby.next.spec),
            needed: lobby.next.players_needed,
            tick_rate: lobby.next.tick_rate,
        }),
        preflight: peer
            .self_tests()
            .iter()
            .map(|t| SelfTestView {
                game: t.game.clone(),
                hash: format!("{:016x}", t.hash),
                offered: offered.as_deref() == Some(t.game.as_str()),
            })
            .collect(),
        target: peer.target().to_string(),
    }
}

/// [`state`] as JSON.
pub fn state_json(peer: &WebPeer) -> String {
    serde_json::to_string(&state(peer)).unwrap_or_else(|_| "{}".into())
}
