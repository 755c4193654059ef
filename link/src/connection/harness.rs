//! Drives a [`Connection`] the way the driver does, on a clock the test
//! moves: everything goes in at the harness's `now`, [`Harness::advance`]
//! fires the connection's timer whenever it falls due on the way, and
//! every call returns the actions the connection asked for, with readers
//! that decode them.

use std::time::Duration;

use web_time::Instant;

use lockstep_protocol::{
    decode, encode, Bundle, BundleDatagram, Buttons, ClientDatagram, ClientMessage, Hello, Input,
    InputDatagram, Platform, PlayerId, RosterEntry, ServerDatagram, ServerMessage, Start, Tick,
    MAX_DATAGRAM_SIZE,
};

use super::reconnect::RECONNECT_ATTEMPT;
use super::{
    Action, Closed, Config, Connection, Ending, Failure, Hooks, LinkStats, NetCommand, NetEvent,
    PathStats,
};

pub(super) fn ms(millis: u64) -> Duration {
    Duration::from_millis(millis)
}

/// The input of a player holding button pattern `n`.
pub(super) fn input(n: u8) -> Input {
    Input {
        buttons: Buttons(n),
        axes: None,
    }
}

/// The reason the driver gives for a server that went silent.
pub(super) const SILENT: &str = "lost the server: nothing heard from it for 5 s";

/// How long the test clients keep trying to reconnect.
const WINDOW: Duration = Duration::from_secs(60);

/// A player called ann who reconnects for [`WINDOW`].
pub(super) fn config() -> Config {
    Config {
        hello: Hello {
            protocol_version: lockstep_protocol::PROTOCOL_VERSION,
            name: "ann".into(),
            spectate: false,
            password: None,
            platform: Platform::default(),
            self_tests: vec![lockstep_protocol::SelfTest {
                game: "balls".into(),
                hash: 42,
                pinned: None,
            }],
            ready: true,
            resume: None,
        },
        hooks: Hooks::default(),
        reliable: false,
        reconnect: WINDOW,
    }
}

/// The Start of a fresh game of `seed` at 60 Hz, ann playing in slot 0.
pub(super) fn start(seed: u64) -> Start {
    Start {
        seed,
        tick_rate: 60,
        input_delay: 3,
        spec: lockstep_protocol::GameSpec::balls(1),
        roster: vec![RosterEntry {
            id: PlayerId(0),
            name: "ann".into(),
        }],
        hash_interval: 60,
        you: Some(PlayerId(0)),
        first_input_tick: Tick(0),
        history: 0,
        snapshot: None,
        snapshot_hash: None,
        resume: None,
    }
}

/// The server's answer to a Hello that kept the game of `seed` up to
/// bundle `tick`: go on from there.
pub(super) fn resuming(seed: u64, tick: u32) -> Start {
    Start {
        resume: Some(Tick(tick)),
        history: 20,
        ..start(seed)
    }
}

/// `count` bundles of a game nobody plays in (their content does not
/// matter to the connection).
pub(super) fn bundles(count: u32) -> Vec<Bundle> {
    (0..count).map(|_| Bundle::default()).collect()
}

/// A connection and the time it is at.
pub(super) struct Harness {
    pub(super) connection: Connection,
    pub(super) now: Duration,
    /// The instant the connection's time counts from.
    pub(super) epoch: Instant,
    /// What QUIC knows of the path, as the driver would pass it.
    pub(super) path: PathStats,
}

impl Harness {
    /// A connection with `config` created at time zero; what it asked for
    /// first (to connect).
    pub(super) fn new(config: Config) -> (Harness, Out) {
        let epoch = now();
        let mut h = Harness {
            connection: Connection::new(config, epoch),
            now: Duration::ZERO,
            epoch,
            path: PathStats {
                rtt: ms(20),
                tx_bytes: 1_000,
                rx_bytes: 2_000,
                max_datagram_size: MAX_DATAGRAM_SIZE,
            },
        };
        let out = h.actions();
        (h, out)
    }

    /// A connection with `config` whose first QUIC connection came up at
    /// time zero; its Hello taken.
    pub(super) fn connected(config: Config) -> Harness {
        let (mut h, _) = Harness::new(config);
        h.connect();
        h
    }

    /// A connection in the game of `seed` since time zero.
    pub(super) fn playing(config: Config, seed: u64) -> Harness {
        let mut h = Harness::connected(config);
        h.message(ServerMessage::Start(start(seed)));
        h
    }

    /// A game of `seed` played since time zero, its bundles `0..5`
    /// received, and the server then lost: the connection waits to
    /// reconnect, and told the frontend so.
    pub(super) fn lost_after_five_bundles(config: Config, seed: u64) -> Harness {
        let window = config.reconnect;
        let mut h = Harness::playing(config, seed);
        h.bundles(0, 5, 0);
        let out = h.fail(Failure::ServerLost);
        assert_eq!(
            out.events(),
            vec![NetEvent::Reconnecting {
                reason: SILENT.into(),
                for_secs: window.as_secs()
            }]
        );
        h
    }

    /// Waits out the pause before the next attempt and connects; what the
    /// connection asked then (its Hello).
    pub(super) fn reconnect(&mut self) -> Out {
        let out = self.advance_to_timeout();
        assert_eq!(out.connects(), vec![Some(RECONNECT_ATTEMPT)]);
        self.connect()
    }

    /// The instant `at` (connection time) stands for.
    pub(super) fn instant(&self, at: Duration) -> Instant {
        self.epoch + at
    }

    /// The QUIC connection asked for came up.
    pub(super) fn connect(&mut self) -> Out {
        self.connection.handle_connected(self.now);
        self.actions()
    }

    /// The QUIC connection failed as `failure` says; a `failure` of
    /// [`Failure::ServerLost`] is told as [`SILENT`].
    pub(super) fn fail(&mut self, failure: Failure) -> Out {
        let reason = match failure {
            Failure::ServerLost => SILENT,
            Failure::NoServer => "no lockstep server answered",
            Failure::Other => "the server sent a malformed message",
        };
        self.connection
            .handle_failure(failure, reason.into(), self.now);
        self.actions()
    }

    /// A control message arrives.
    pub(super) fn message(&mut self, message: ServerMessage) -> Out {
        self.connection.handle_message(message, self.now);
        self.actions()
    }

    /// A datagram arrives carrying `count` bundles from `first_tick` on,
    /// acknowledging our inputs before `inputs_ack`.
    pub(super) fn bundles(&mut self, first_tick: u32, count: u32, inputs_ack: u32) -> Out {
        let datagram = ServerDatagram::Bundles(BundleDatagram {
            inputs_ack: Tick(inputs_ack),
            first_tick: Tick(first_tick),
            bundles: bundles(count),
        });
        let bytes = encode(&datagram, MAX_DATAGRAM_SIZE).unwrap();
        self.datagram(&bytes)
    }

    /// A datagram of `bytes` arrives.
    pub(super) fn datagram(&mut self, bytes: &[u8]) -> Out {
        self.connection.handle_datagram(bytes, self.now);
        self.actions()
    }

    /// The frontend says `command`.
    pub(super) fn command(&mut self, command: NetCommand) -> Out {
        self.connection.handle_command(command, self.now, self.path);
        self.actions()
    }

    /// The frontend sends its input `input` for `tick`.
    pub(super) fn input(&mut self, tick: u32, input: Input) -> Out {
        self.command(NetCommand::Input(Tick(tick), input))
    }

    /// Moves the clock on by `by`, firing the connection's timer each time
    /// it falls due on the way, as the driver's `select!` does.
    pub(super) fn advance(&mut self, by: Duration) -> Out {
        let end = self.now + by;
        let mut out = Out::default();
        while let Some(at) = self.connection.poll_timeout().filter(|&at| at <= end) {
            self.now = self.now.max(at);
            self.connection.handle_timeout(self.now, self.path);
            out.0.extend(self.actions().0);
        }
        self.now = end;
        out
    }

    /// Moves the clock on to the connection's next timeout and fires it.
    pub(super) fn advance_to_timeout(&mut self) -> Out {
        let at = self.connection.poll_timeout().expect("a timer is armed");
        self.advance(at.saturating_sub(self.now))
    }

    /// Every action the connection has queued.
    pub(super) fn actions(&mut self) -> Out {
        Out(std::iter::from_fn(|| self.connection.poll_action()).collect())
    }
}

/// Actions of one step, in the order the connection asked for them.
#[derive(Debug, Default)]
pub(super) struct Out(pub(super) Vec<Action>);

impl Out {
    /// The control messages to write, in order.
    pub(super) fn sent(&self) -> Vec<ClientMessage> {
        self.0
            .iter()
            .filter_map(|action| match action {
                Action::Send(message) => Some(message.clone()),
                _ => None,
            })
            .collect()
    }

    /// The Hello written, if one was.
    pub(super) fn hello(&self) -> Option<Hello> {
        self.sent().into_iter().find_map(|message| match message {
            ClientMessage::Hello(hello) => Some(hello),
            _ => None,
        })
    }

    /// The input datagrams to send, decoded.
    pub(super) fn datagrams(&self) -> Vec<InputDatagram> {
        self.0
            .iter()
            .filter_map(|action| match action {
                Action::Datagram(bytes) => {
                    let ClientDatagram::Inputs(datagram) =
                        decode(bytes, MAX_DATAGRAM_SIZE).unwrap();
                    Some(datagram)
                }
                _ => None,
            })
            .collect()
    }

    /// Events for the frontend, apart from the statistics (read by
    /// [`Out::stats`]).
    pub(super) fn events(&self) -> Vec<NetEvent> {
        self.0
            .iter()
            .filter_map(|action| match action {
                Action::Event(NetEvent::Stats(_)) => None,
                Action::Event(event) => Some(event.clone()),
                _ => None,
            })
            .collect()
    }

    /// The statistics for the frontend, in order.
    pub(super) fn stats(&self) -> Vec<LinkStats> {
        self.0
            .iter()
            .filter_map(|action| match action {
                Action::Event(NetEvent::Stats(stats)) => Some(*stats),
                _ => None,
            })
            .collect()
    }

    /// The bundles delivered to the frontend: first tick and count of
    /// each delivery.
    pub(super) fn deliveries(&self) -> Vec<(u32, usize)> {
        self.events()
            .into_iter()
            .filter_map(|event| match event {
                NetEvent::Bundles {
                    first_tick,
                    bundles,
                } => Some((first_tick.0, bundles.len())),
                _ => None,
            })
            .collect()
    }

    /// The attempts to connect asked for: how long each waits for an
    /// answer.
    pub(super) fn connects(&self) -> Vec<Option<Duration>> {
        self.0
            .iter()
            .filter_map(|action| match action {
                Action::Connect { answer_within } => Some(*answer_within),
                _ => None,
            })
            .collect()
    }

    /// How the connection closed, if it did.
    pub(super) fn closed(&self) -> Option<(Closed, Ending)> {
        self.0.iter().find_map(|action| match action {
            Action::Close { closed, ending } => Some((closed.clone(), *ending)),
            _ => None,
        })
    }
}

/// The instant a test connection counts from.
#[allow(
    clippy::disallowed_methods,
    reason = "a test connection needs an epoch; only its offsets matter"
)]
fn now() -> Instant {
    Instant::now()
}
