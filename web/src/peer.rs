//! The browser peer: the driver of the pure [`Connection`] over a
//! WebSocket, and the game it plays, given the time by the page.
//!
//! The page owns the WebSocket and the clock; it tells the peer what
//! happened ([`WebPeer::opened`], [`WebPeer::received`],
//! [`WebPeer::closed`], and [`WebPeer::pump`] from a timer of a few
//! milliseconds and from every message), and carries out the [`Op`]s the
//! peer queues, in order. The peer carries out the connection's
//! [`Action`]s as the native client's network thread does with QUIC:
//!
//! ```text
//! Connect         => Op::Open (a WebSocket to the page's own host, /ws)
//! Send(message)   => Op::Send(kind 0 + the message's postcard body)
//! Datagram(bytes) => Op::Send(kind 1 + the datagram)
//! Welcome, Event  => the lobby, the game
//! Close           => Op::Close
//! ```
//!
//! A WebSocket that closes, or never opens, is a failure the connection
//! judges as it judges QUIC's: a server gone without a word is lost (and
//! reconnected to during a game), one that never answered was not there,
//! and one that closed with a reason (close code 4000 + the QUIC code)
//! meant it. The game ticks in [`WebPeer::pump`], never in the page's
//! drawing: a page that draws slowly, or not at all, still keeps up.

use std::collections::VecDeque;
use std::time::Duration;

use lockstep_link::connection::{
    Action, Closed, Config, Connection, Ending, Failure, Hooks, NetCommand, NetEvent, PathStats,
    Started,
};
use lockstep_link::play::LoopOptions;
use lockstep_protocol::{
    decode, encode, ClientMessage, Hello, Input, Lobby, Platform, PlayerId, SelfTest,
    ServerMessage, Tick, MAX_DATAGRAM_SIZE, MAX_MESSAGE_SIZE, PROTOCOL_VERSION,
};
use lockstep_protocol::{WebMessage, WEB_CLOSE_BASE};
use web_time::Instant;

use lockstep_engine::lockstep::net_game::{Fault, GameOptions};

use crate::games::PageGames;
use crate::options::WebOptions;
use crate::play::{GameView, Running};

/// How long a page that lost the server keeps trying to reconnect, as the
/// native client does by default (its `DEFAULT_RECONNECT`).
pub const RECONNECT_FOR: Duration = Duration::from_secs(60);

/// The least time a reconnecting page gives a new WebSocket to open.
/// The connection gives a QUIC attempt half a second, but Chromium holds a
/// WebSocket back for seconds once others to the same host have failed
/// (while the server was down): given less, every attempt was given up
/// before it could open and the page never reconnected.
pub const WEBSOCKET_OPEN: Duration = Duration::from_secs(6);

/// The close code of a page that leaves on purpose: QUIC's code 0, the
/// native client's.
const CLOSE_LEAVE: u16 = WEB_CLOSE_BASE;

/// What the page does with its WebSocket, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// Open a new WebSocket to `/ws` (closing any old one without a word),
    /// binary type `arraybuffer`.
    Open,
    /// Send one binary message.
    Send(Vec<u8>),
    /// Close the WebSocket with this code and reason; its own close event
    /// is then ignored.
    Close {
        /// 4000 + the QUIC close code, or 1000 when there is nothing to say.
        code: u16,
        /// Why, in words.
        reason: String,
    },
}

/// Where the page is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Opening the WebSocket, or waiting for the server's welcome.
    Connecting,
    /// Welcomed; waiting for the game.
    Lobby,
    /// In a game.
    Playing,
    /// Over: left, refused, ended or lost.
    Ended,
}

impl Phase {
    /// The phase's name in `window.lockstep.state()`.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Connecting => "connecting",
            Phase::Lobby => "lobby",
            Phase::Playing => "playing",
            Phase::Ended => "ended",
        }
    }
}

/// The WebSocket as the peer knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Socket {
    /// None open (never, or we closed it).
    None,
    /// Asked to open; give up on it at the deadline, if any.
    Opening(Option<Duration>),
    /// Open.
    Open,
}

/// The browser peer. See the [module docs](self).
#[derive(Debug)]
pub struct WebPeer {
    options: WebOptions,
    name: String,
    connection: Connection,
    epoch: Instant,
    now: Duration,
    socket: Socket,
    tx_bytes: u64,
    rx_bytes: u64,
    phase: Phase,
    player: Option<PlayerId>,
    players_needed: u8,
    lobby: Option<Lobby>,
    last_lobby_line: String,
    game: Option<Box<dyn Running>>,
    /// The page's input: the keyboard, a controller or the touch stick.
    input: Input,
    ready: bool,
    ended: Option<String>,
    /// The page's frame time, for the input lag of the `stats` line.
    frame: Option<Duration>,
    /// The games the page plays.
    games: &'static dyn PageGames,
    /// Their self-tests, as the Hello announced them.
    self_tests: Vec<SelfTest>,
    /// The target the Hello announces.
    target: String,
    ops: VecDeque<Op>,
    lines: VecDeque<String>,
}

impl WebPeer {
    /// A peer that joins as `name` (unless the options name another),
    /// announcing `platform` and the self-tests of `games` computed in
    /// the page, which it plays; `epoch` is the instant `now`
    /// (here and in every later call) counts from. It asks at once to
    /// open the WebSocket.
    pub fn new(
        options: WebOptions,
        name: String,
        platform: Platform,
        games: &'static dyn PageGames,
        epoch: Instant,
    ) -> WebPeer {
        let self_tests = games.self_tests();
        let name = options.name.clone().unwrap_or(name);
        let target = platform.target.clone();
        let hello = Hello {
            protocol_version: PROTOCOL_VERSION,
            name: name.clone(),
            spectate: options.spectate,
            password: options.password.clone(),
            platform,
            self_tests: self_tests.clone(),
            ready: options.joins_ready(),
            resume: None,
        };
        let config = Config {
            hello,
            hooks: Hooks::default(),
            reliable: true,
            reconnect: RECONNECT_FOR,
        };
        let mut peer = WebPeer {
            ready: options.joins_ready(),
            options,
            name,
            connection: Connection::new(config, epoch),
            epoch,
            now: Duration::ZERO,
            socket: Socket::None,
            tx_bytes: 0,
            rx_bytes: 0,
            phase: Phase::Connecting,
            player: None,
            players_needed: 0,
            lobby: None,
            last_lobby_line: String::new(),
            game: None,
            input: Input::default(),
            ended: None,
            frame: None,
            games,
            self_tests,
            target,
            ops: VecDeque::new(),
            lines: VecDeque::new(),
        };
        let preflight: Vec<String> = peer
            .self_tests
            .iter()
            .map(|t| format!("{}={:016x}", t.game, t.hash))
            .collect();
        peer.say(format!("preflight {}", preflight.join(" ")));
        peer.say(format!("connecting as {}", peer.name));
        peer.carry_out();
        peer
    }

    fn say(&mut self, line: String) {
        self.lines.push_back(format!("lockstep-web: {line}"));
    }

    /// The next thing to do with the WebSocket.
    pub fn next_op(&mut self) -> Option<Op> {
        self.ops.pop_front()
    }

    /// The next line for the console.
    pub fn next_line(&mut self) -> Option<String> {
        self.lines.pop_front()
    }

    /// What QUIC would know of the path: the round trip the server
    /// measures to us, and the bytes counted here.
    fn path(&self) -> PathStats {
        let lobby_ping = || {
            let me = self.player?;
            let lobby = self.lobby.as_ref()?;
            let player = lobby.players.iter().find(|p| p.id == me)?;
            Some(Duration::from_millis(u64::from(player.ping_ms)))
        };
        let rtt = self
            .game
            .as_ref()
            .and_then(|game| game.server_rtt())
            .or_else(lobby_ping)
            .unwrap_or_default();
        PathStats {
            rtt,
            tx_bytes: self.tx_bytes,
            rx_bytes: self.rx_bytes,
            max_datagram_size: MAX_DATAGRAM_SIZE,
        }
    }

    /// The WebSocket opened.
    pub fn opened(&mut self, now: Duration) {
        self.now = now;
        if let Socket::Opening(_) = self.socket {
            self.socket = Socket::Open;
            self.connection.handle_connected(now);
            self.carry_out();
        }
    }

    /// One binary message arrived. A malformed one ends the connection,
    /// as a malformed message on QUIC's control stream does.
    pub fn received(&mut self, bytes: &[u8], now: Duration) {
        self.now = now;
        if self.socket != Socket::Open {
            return;
        }
        self.rx_bytes += bytes.len() as u64;
        match WebMessage::parse(bytes) {
            Ok(WebMessage::Control(body)) => {
                match decode::<ServerMessage>(body, MAX_MESSAGE_SIZE) {
                    Ok(message) => self.connection.handle_message(message, now),
                    Err(e) => self.fail_malformed(&e.to_string()),
                }
            }
            Ok(WebMessage::Datagram(body)) => self.connection.handle_datagram(body, now),
            Err(e) => self.fail_malformed(&e.to_string()),
        }
        self.carry_out();
    }

    fn fail_malformed(&mut self, why: &str) {
        self.drop_socket();
        let reason = format!("the server sent a malformed message: {why}");
        self.connection
            .handle_failure(Failure::Other, reason, self.now);
    }

    /// Closes the WebSocket in use without a word, if there is one.
    fn drop_socket(&mut self) {
        if self.socket != Socket::None {
            self.socket = Socket::None;
            self.ops.push_back(Op::Close {
                code: 1000,
                reason: String::new(),
            });
        }
    }

    /// The WebSocket closed (or failed: the page reports an error as a
    /// close) with `code` and the server's `reason`.
    pub fn closed(&mut self, code: u16, reason: &str, now: Duration) {
        self.now = now;
        let (failure, why) = match self.socket {
            Socket::None => return,
            Socket::Opening(_) => (
                Failure::NoServer,
                "no lockstep server answered (is it running, with its web door open?)".to_string(),
            ),
            Socket::Open if (WEB_CLOSE_BASE..WEB_CLOSE_BASE + 1000).contains(&code) => (
                Failure::Other,
                format!("the server closed the connection: {reason}"),
            ),
            Socket::Open => (
                Failure::ServerLost,
                format!("lost the server: the connection closed (code {code})"),
            ),
        };
        self.socket = Socket::None;
        self.connection.handle_failure(failure, why, now);
        self.carry_out();
    }

    /// The page's player holds `input` now.
    pub fn set_input(&mut self, input: Input) {
        self.input = input;
        if let Some(game) = &mut self.game {
            game.hold(input);
        }
        self.flush_game();
        self.carry_out();
    }

    /// The page's frame time (between two drawings).
    pub fn set_frame_time(&mut self, frame: Duration) {
        self.frame = Some(frame);
    }

    /// The player says it is ready for the next game, or not.
    pub fn set_ready(&mut self, ready: bool) {
        self.ready = ready;
        self.command(NetCommand::Ready(ready));
    }

    /// The player leaves.
    pub fn leave(&mut self) {
        self.command(NetCommand::Leave);
    }

    fn command(&mut self, command: NetCommand) {
        let path = self.path();
        self.connection.handle_command(command, self.now, path);
        self.carry_out();
    }

    /// Runs what is due at `now`: the connection's timers (resends,
    /// heartbeats, statistics, reconnecting), an answer that did not come
    /// in time, and the game's ticks.
    pub fn pump(&mut self, now: Duration) {
        self.now = now;
        if let Socket::Opening(Some(deadline)) = self.socket {
            if deadline <= now {
                self.drop_socket();
                let why = "no lockstep server answered in time".to_string();
                self.connection.handle_failure(Failure::NoServer, why, now);
            }
        }
        if self.connection.poll_timeout().is_some_and(|at| at <= now) {
            let path = self.path();
            self.connection.handle_timeout(now, path);
        }
        self.carry_out();
        let Some(game) = self.game.as_mut().filter(|_| self.phase == Phase::Playing) else {
            return;
        };
        let frame = game.run_ticks(now, self.input);
        let (finished, playing) = (frame.finished, game.is_playing());
        self.flush_game();
        if finished {
            self.finish();
        } else if !playing {
            self.end("the server removed this player from the game".into());
            self.leave();
        }
        self.carry_out();
    }

    /// `ticks` was reached: the `stats` and `final` lines, then leave.
    fn finish(&mut self) {
        let frame = if self.options.bot.is_some() {
            None
        } else {
            self.frame
        };
        if let Some(game) = &self.game {
            self.lines.extend(game.report(frame));
        }
        self.leave();
    }

    /// Hands what the game said to the connection and the console.
    fn flush_game(&mut self) {
        let Some(game) = &mut self.game else {
            return;
        };
        let outbox = game.outbox();
        let commands = std::mem::take(&mut outbox.commands);
        let lines = std::mem::take(&mut outbox.lines);
        self.lines.extend(lines);
        let path = self.path();
        for command in commands {
            self.connection.handle_command(command, self.now, path);
        }
    }

    /// Carries out every action the connection asks for.
    fn carry_out(&mut self) {
        while let Some(action) = self.connection.poll_action() {
            match action {
                Action::Connect { answer_within } => {
                    let within = answer_within.map(|d| d.max(WEBSOCKET_OPEN));
                    self.socket = Socket::Opening(within.map(|d| self.now + d));
                    self.ops.push_back(Op::Open);
                }
                Action::Send(message) => self.send(&message),
                Action::Datagram(bytes) => {
                    let bytes = WebMessage::Datagram(&bytes).to_bytes();
                    self.tx_bytes += bytes.len() as u64;
                    self.ops.push_back(Op::Send(bytes));
                }
                Action::Welcome {
                    player,
                    players_needed,
                } => {
                    self.player = Some(player);
                    self.players_needed = players_needed;
                    if self.phase == Phase::Connecting {
                        self.phase = Phase::Lobby;
                    }
                    self.say(format!(
                        "welcome: player {player}; the game needs {players_needed} players"
                    ));
                }
                Action::Event(event) => self.event(event),
                Action::Close { closed, ending } => self.close(closed, ending),
            }
        }
    }

    fn send(&mut self, message: &ClientMessage) {
        if self.socket != Socket::Open {
            return;
        }
        match encode(message, MAX_MESSAGE_SIZE) {
            Ok(body) => {
                let bytes = WebMessage::Control(&body).to_bytes();
                self.tx_bytes += bytes.len() as u64;
                self.ops.push_back(Op::Send(bytes));
            }
            Err(e) => self.say(format!("cannot encode a message: {e}")),
        }
    }

    fn close(&mut self, closed: Closed, ending: Ending) {
        if self.socket != Socket::None {
            let (code, reason) = match ending {
                Ending::Close(reason) | Ending::Linger(reason) => (CLOSE_LEAVE, reason.to_string()),
                Ending::Release => (1000, String::new()),
            };
            self.ops.push_back(Op::Close { code, reason });
            self.socket = Socket::None;
        }
        let why = match closed {
            Closed::Left => "left the game".to_string(),
            Closed::Refused(reason) => format!("the server refused to let us join: {reason}"),
            Closed::CannotPlay(reason) => {
                format!(
                    "cannot play the server's game: {reason}; the server and its lobby were told"
                )
            }
            Closed::Ended(reason) => format!("the server ended the game: {reason}"),
            Closed::Lost(reason) => reason,
        };
        self.end(why);
    }

    fn end(&mut self, why: String) {
        if self.phase != Phase::Ended {
            self.phase = Phase::Ended;
            self.say(format!("ended: {why}"));
            self.ended = Some(why);
        }
    }

    fn event(&mut self, event: NetEvent) {
        match event {
            NetEvent::Lobby(lobby) => self.on_lobby(lobby),
            NetEvent::Started(started) => self.on_start(started),
            NetEvent::Closed(closed) => self.close(closed, Ending::Release),
            event => {
                if let Some(game) = &mut self.game {
                    game.handle(event, self.now);
                }
                self.flush_game();
            }
        }
    }

    fn on_lobby(&mut self, lobby: Lobby) {
        // A host without the game gives its settings as pairs, which this
        // page's game may refuse: leave, saying why (the Closed follows).
        if let Some(why) = self.games.refuses(&lobby.next.spec) {
            self.command(NetCommand::CannotPlay(why));
            return;
        }
        let ready = lobby.players.iter().filter(|p| p.ready).count();
        let held = lobby
            .held
            .as_ref()
            .map_or(String::new(), |held| format!("; held: {held}"));
        let line = format!(
            "lobby: {} players, {ready} ready; next game {} for {} players{held}",
            lobby.players.len(),
            lobby.next.spec.name,
            lobby.next.players_needed
        );
        if line != self.last_lobby_line {
            self.say(line.clone());
            self.last_lobby_line = line;
        }
        // After a game, the server makes everyone not ready.
        if let Some(me) = self.player {
            if let Some(player) = lobby.players.iter().find(|p| p.id == me) {
                self.ready = player.ready;
            }
        }
        self.lobby = Some(lobby);
    }

    fn on_start(&mut self, started: Started) {
        let start = &started.start;
        let you = start
            .you
            .map_or("a spectator".to_string(), |p| format!("player {p}"));
        self.say(format!(
            "start: game {} seed {} with {} players at {} Hz; you are {you}",
            start.spec.name,
            start.seed,
            start.roster.len(),
            start.tick_rate
        ));
        let options = LoopOptions {
            bot: self.options.bot,
            ticks: self.options.ticks,
            game: GameOptions {
                fault: self.options.desync.map(|tick| Fault {
                    tick,
                    phase: None,
                    value: None,
                }),
                ..GameOptions::default()
            },
            ..LoopOptions::default()
        };
        match self.games.start(started, options, self.epoch) {
            Ok(game) => {
                self.game = Some(game);
                self.phase = Phase::Playing;
                self.flush_game();
            }
            Err(why) => {
                self.end(format!("cannot play the server's game: {why}"));
                self.leave();
            }
        }
    }

    /// Where the page is.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Our slot, once welcomed.
    pub fn player(&self) -> Option<PlayerId> {
        self.player
    }

    /// Whether we said we are ready.
    pub fn ready(&self) -> bool {
        self.ready
    }

    /// The player's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The last lobby.
    pub fn lobby(&self) -> Option<&Lobby> {
        self.lobby.as_ref()
    }

    /// Players the game waits for, as the welcome said.
    pub fn players_needed(&self) -> u8 {
        self.players_needed
    }

    /// Why it ended, once it did.
    pub fn ended(&self) -> Option<&str> {
        self.ended.as_deref()
    }

    /// The games the page plays.
    pub fn games(&self) -> &'static dyn PageGames {
        self.games
    }

    /// The preflight announced.
    pub fn self_tests(&self) -> &[SelfTest] {
        &self.self_tests
    }

    /// The target the Hello announces.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// The page's input now.
    pub fn input(&self) -> Input {
        self.input
    }

    /// The game's figures, while one runs (and after it ended).
    pub fn game_view(&self) -> Option<GameView> {
        self.game.as_ref().map(|game| game.view())
    }

    /// The round trip to the server, as it measures it.
    pub fn rtt(&self) -> Duration {
        self.path().rtt
    }

    /// The picture to draw (see [`crate::picture`]); empty before a game.
    pub fn scene(&self, out: &mut Vec<f32>) {
        if let Some(game) = &self.game {
            game.scene(out);
        }
    }

    /// The world's tick, 0 before a game.
    pub fn tick(&self) -> Tick {
        Tick(self.game_view().map_or(0, |view| view.tick))
    }
}

#[cfg(test)]
#[path = "peer_tests.rs"]
mod tests;
