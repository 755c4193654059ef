//! The peer against a fake server in memory: WebSocket messages in, ops
//! out, on a clock the test moves.

use std::time::Duration;

use lockstep_engine::games::Games;
use lockstep_engine::{apply, spec_of, Game, Setup};
use lockstep_protocol::WebMessage;
use lockstep_protocol::{
    decode, encode, Bundle, BundleDatagram, ClientDatagram, ClientMessage, DesyncNotice,
    GameSettings, Lobby, LobbyPlayer, Platform, PlayerId, PlayerInput, RosterEntry, ServerDatagram,
    ServerMessage, Start, Tick, MAX_DATAGRAM_SIZE, MAX_MESSAGE_SIZE,
};
use lockstep_tally::Tally;
use lockstep_topple::Physics;

use super::*;

/// What the peer sent, decoded.
#[derive(Debug, Default)]
struct Sent {
    messages: Vec<ClientMessage>,
    datagrams: Vec<ClientDatagram>,
    opens: usize,
    closes: Vec<(u16, String)>,
}

/// A server of one game of Tally that bundles each input as it arrives.
struct FakeServer {
    peer: WebPeer,
    now: Duration,
    sent: Sent,
    /// Every bundle sent, from tick 0.
    bundles: Vec<Bundle>,
    players: Vec<PlayerId>,
}

fn control(message: &ServerMessage) -> Vec<u8> {
    let body = encode(message, MAX_MESSAGE_SIZE).unwrap();
    WebMessage::Control(&body).to_bytes()
}

fn tally_start(you: Option<PlayerId>, players: &[PlayerId]) -> Start {
    Start {
        seed: 11,
        tick_rate: 60,
        input_delay: 3,
        spec: spec_of::<Tally>(&()),
        roster: players
            .iter()
            .map(|&id| RosterEntry {
                id,
                name: format!("p{id}"),
            })
            .collect(),
        hash_interval: 30,
        you,
        first_input_tick: Tick(0),
        history: 0,
        snapshot: None,
        snapshot_hash: None,
        resume: None,
    }
}

impl FakeServer {
    fn new(query: &str) -> FakeServer {
        let peer = WebPeer::new(
            WebOptions::parse(query),
            "web".into(),
            Platform::default(),
            &lockstep_games::Shipped,
            crate::clock::now(),
        );
        let mut server = FakeServer {
            peer,
            now: Duration::ZERO,
            sent: Sent::default(),
            bundles: Vec::new(),
            players: vec![PlayerId(0)],
        };
        server.collect();
        server
    }

    /// Takes the peer's ops, decoding what it sent.
    fn collect(&mut self) {
        while let Some(op) = self.peer.next_op() {
            match op {
                Op::Open => self.sent.opens += 1,
                Op::Close { code, reason } => self.sent.closes.push((code, reason)),
                Op::Send(bytes) => match WebMessage::parse(&bytes).unwrap() {
                    WebMessage::Control(body) => {
                        self.sent
                            .messages
                            .push(decode(body, MAX_MESSAGE_SIZE).unwrap());
                    }
                    WebMessage::Datagram(body) => {
                        self.sent
                            .datagrams
                            .push(decode(body, MAX_DATAGRAM_SIZE).unwrap());
                    }
                },
            }
        }
    }

    fn send(&mut self, message: &ServerMessage) {
        self.peer.received(&control(message), self.now);
        self.collect();
    }

    /// Opens the socket and lets the peer in, ready.
    fn welcome(&mut self) {
        self.peer.opened(self.now);
        self.collect();
        self.send(&ServerMessage::Welcome {
            player: PlayerId(0),
            players_needed: 1,
        });
    }

    /// Bundles every input the peer sent since the last call, for the
    /// ticks not bundled yet (the other players hold nothing).
    fn bundle_inputs(&mut self) {
        for datagram in std::mem::take(&mut self.sent.datagrams) {
            let ClientDatagram::Inputs(inputs) = datagram;
            for (i, input) in inputs.inputs.iter().enumerate() {
                let tick = inputs.first_tick.0 as usize + i;
                if tick != self.bundles.len() {
                    continue;
                }
                let bundle = Bundle {
                    inputs: self
                        .players
                        .iter()
                        .map(|&player| PlayerInput {
                            player,
                            input: if player == PlayerId(0) {
                                *input
                            } else {
                                Default::default()
                            },
                        })
                        .collect(),
                    ..Bundle::default()
                };
                let datagram = ServerDatagram::Bundles(BundleDatagram {
                    inputs_ack: Tick(tick as u32 + 1),
                    first_tick: Tick(tick as u32),
                    bundles: vec![bundle.clone()],
                });
                self.bundles.push(bundle);
                let body = encode(&datagram, MAX_DATAGRAM_SIZE).unwrap();
                let bytes = WebMessage::Datagram(&body).to_bytes();
                self.peer.received(&bytes, self.now);
                self.collect();
            }
        }
    }

    /// Moves the clock on by `step` `times`, pumping and bundling.
    fn run(&mut self, step: Duration, times: u32) {
        for _ in 0..times {
            self.now += step;
            self.peer.pump(self.now);
            self.collect();
            self.bundle_inputs();
        }
    }

    fn lines(&mut self) -> Vec<String> {
        std::iter::from_fn(|| self.peer.next_line()).collect()
    }
}

#[test]
fn the_hello_carries_the_name_the_preflight_and_readiness_over_a_reliable_link() {
    let mut server = FakeServer::new("?bot=3&ready=1&name=web-bot");
    assert_eq!(server.sent.opens, 1, "it opens the WebSocket at once");
    assert_eq!(server.peer.phase(), Phase::Connecting);
    server.peer.opened(Duration::from_millis(5));
    server.collect();
    let [ClientMessage::Hello(hello)] = server.sent.messages.as_slice() else {
        panic!("{:?}", server.sent.messages);
    };
    assert_eq!(hello.name, "web-bot");
    assert!(hello.ready);
    assert_eq!(
        hello.self_tests,
        Games::self_tests(&lockstep_games::Shipped)
    );
    let lines = server.lines();
    assert!(
        lines[0].starts_with("lockstep-web: preflight balls="),
        "{lines:?}"
    );
}

#[test]
fn a_bot_plays_to_its_last_tick_reports_hashes_and_prints_the_native_lines() {
    let mut server = FakeServer::new("?bot=5&ticks=90&name=web");
    server.welcome();
    assert_eq!(server.peer.phase(), Phase::Lobby);
    server.send(&ServerMessage::Start(tally_start(
        Some(PlayerId(0)),
        &[PlayerId(0)],
    )));
    assert_eq!(server.peer.phase(), Phase::Playing);
    // Two seconds of 4 ms timers: 90 ticks at 60 Hz and then some.
    server.run(Duration::from_millis(4), 500);
    assert_eq!(server.peer.phase(), Phase::Ended);
    let reports: Vec<Tick> = server
        .sent
        .messages
        .iter()
        .filter_map(|m| match m {
            ClientMessage::HashReport { tick, .. } => Some(*tick),
            _ => None,
        })
        .collect();
    assert_eq!(reports, [Tick(30), Tick(60), Tick(90)]);
    assert!(matches!(
        server.sent.messages.last(),
        Some(ClientMessage::Leave)
    ));
    assert_eq!(server.sent.closes, [(4000, "player left".to_string())]);
    // The world the server's bundles make is the one the page reports.
    let setup = Setup::from_start::<Tally>(&tally_start(None, &[PlayerId(0)])).unwrap();
    let mut world = Tally::start(&setup);
    for bundle in &server.bundles[..90] {
        apply(&mut world, bundle);
    }
    let lines = server.lines();
    let n = lines.len();
    assert!(
        lines[n - 3].starts_with("stats stalled_ticks="),
        "{lines:?}"
    );
    assert_eq!(lines[n - 2], lockstep_engine::final_line(90, world.hash()));
    assert_eq!(lines[n - 1], "lockstep-web: ended: left the game");
}

#[test]
fn a_person_holds_the_page_input_and_the_state_shows_it() {
    let mut server = FakeServer::new("?name=ann");
    server.welcome();
    server.send(&ServerMessage::Lobby(Lobby {
        players: vec![LobbyPlayer {
            id: PlayerId(0),
            name: "ann".into(),
            ready: false,
            ping_ms: 12,
            platform: "wasm32".into(),
        }],
        next: GameSettings {
            game: 1,
            players_needed: 2,
            tick_rate: 60,
            input_delay: 3,
            spec: spec_of::<Tally>(&()),
            seed: 1,
        },
        last: None,
        held: None,
    }));
    server.peer.set_ready(true);
    server.collect();
    assert!(server.sent.messages.contains(&ClientMessage::Ready(true)));
    let state = crate::view::state(&server.peer);
    assert_eq!(state.phase, "lobby");
    assert_eq!(state.rtt_ms, 12.0);
    assert!(state
        .preflight
        .iter()
        .any(|t| t.game == "tally" && t.offered));
    server.send(&ServerMessage::Start(tally_start(
        Some(PlayerId(0)),
        &[PlayerId(0)],
    )));
    server
        .peer
        .set_input(crate::input::page_input(16, Some((1.0, 0.0))));
    server.run(Duration::from_millis(4), 100);
    let state = crate::view::state(&server.peer);
    assert_eq!(state.phase, "playing");
    assert_eq!((state.last_input.buttons, state.last_input.x), (16, 127));
    assert!(state.tick > 10, "{}", state.tick);
    let mut scene = Vec::new();
    server.peer.scene(&mut scene);
    assert_eq!(
        scene[..4],
        [0.0, 0.0, 1600.0, 900.0],
        "a Tally picture: its field"
    );
}

#[test]
fn a_desync_notice_is_answered_with_the_tick_hashes() {
    let mut server = FakeServer::new("?bot=1");
    server.welcome();
    server.send(&ServerMessage::Start(tally_start(
        Some(PlayerId(0)),
        &[PlayerId(0)],
    )));
    server.run(Duration::from_millis(4), 200);
    server.send(&ServerMessage::Desync(DesyncNotice {
        tick: Tick(30),
        diverged: vec![PlayerId(0)],
        majority: None,
        since: Tick(0),
    }));
    assert!(server
        .sent
        .messages
        .iter()
        .any(|m| matches!(m, ClientMessage::TickHashes { tick: Tick(30), .. })));
    let state = crate::view::state(&server.peer);
    assert!(state.banner.unwrap().starts_with("DESYNC at tick 30"));
}

#[test]
fn malformed_messages_end_the_connection_without_a_panic() {
    for garbage in [&[][..], &[9, 1, 2], &[0, 0xff, 0xff, 0xff], &[1, 0xff]] {
        let mut server = FakeServer::new("");
        server.welcome();
        server.peer.received(garbage, server.now);
        server.collect();
        server.run(Duration::from_millis(10), 10);
        if garbage != [1, 0xff] {
            assert_eq!(server.peer.phase(), Phase::Ended, "{garbage:?}");
            assert!(server.peer.ended().unwrap().contains("malformed"));
        }
    }
}

#[test]
fn a_server_that_never_answers_ends_the_page_and_one_lost_in_a_game_is_reconnected() {
    let mut server = FakeServer::new("");
    server.peer.closed(1006, "", Duration::from_millis(3));
    server.collect();
    assert_eq!(server.peer.phase(), Phase::Ended);

    let mut server = FakeServer::new("?bot=2");
    server.welcome();
    server.send(&ServerMessage::Start(tally_start(
        Some(PlayerId(0)),
        &[PlayerId(0)],
    )));
    server.run(Duration::from_millis(4), 50);
    server.peer.closed(1006, "", server.now);
    server.collect();
    assert_eq!(server.peer.phase(), Phase::Playing);
    server.run(Duration::from_millis(50), 10);
    assert!(server.sent.opens >= 2, "it opens a new WebSocket");
    assert!(server.lines().iter().any(|l| l.contains("reconnecting")));
}

#[test]
fn a_reconnecting_page_gives_a_websocket_the_browser_holds_back_six_seconds_to_open() {
    let mut server = FakeServer::new("?bot=2");
    server.welcome();
    server.send(&ServerMessage::Start(tally_start(
        Some(PlayerId(0)),
        &[PlayerId(0)],
    )));
    server.peer.closed(1006, "", server.now);
    server.run(Duration::from_millis(200), 1);
    assert_eq!(server.sent.opens, 2, "the reconnection's WebSocket");
    // Neither opened nor closed: the browser holds it back. It is kept
    // well past the half second a QUIC attempt gets...
    let asked = server.now;
    while server.now < asked + WEBSOCKET_OPEN - Duration::from_millis(100) {
        server.run(Duration::from_millis(100), 1);
    }
    assert_eq!(server.sent.opens, 2, "given up on too soon");
    // ...and given up on after six seconds, for another.
    server.run(Duration::from_millis(100), 4);
    assert_eq!(server.sent.opens, 3);
    assert_eq!(server.peer.phase(), Phase::Playing);
}

#[test]
fn a_start_of_topple_plays_topple_and_draws_its_bodies() {
    let mut server = FakeServer::new("?bot=4&ticks=60&name=web");
    server.welcome();
    let start = Start {
        spec: spec_of::<Physics>(&Default::default()),
        ..tally_start(Some(PlayerId(0)), &[PlayerId(0)])
    };
    server.send(&ServerMessage::Start(start.clone()));
    assert_eq!(server.peer.phase(), Phase::Playing);
    server.run(Duration::from_millis(4), 100);
    let mut scene = Vec::new();
    server.peer.scene(&mut scene);
    assert_eq!(
        scene[..4],
        [-24.0, -17.0, 24.0, 10.0],
        "a Topple picture: its field"
    );
    server.run(Duration::from_millis(4), 500);
    assert_eq!(server.peer.phase(), Phase::Ended);
    let setup = Setup::from_start::<Physics>(&Start { you: None, ..start }).unwrap();
    let mut world = Physics::start(&setup);
    for bundle in &server.bundles[..60] {
        apply(&mut world, bundle);
    }
    let lines = server.lines();
    assert!(
        lines.contains(&lockstep_engine::final_line(60, world.hash())),
        "{lines:?}"
    );
}
