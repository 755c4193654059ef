//! Drives a [`Session`] the way the driver does, on a clock the test moves:
//! events go in at the harness's `now`, [`Harness::advance`] polls every
//! [`POLL_INTERVAL`] like the driver's timer, and every call returns the
//! actions the session asked for, with readers that decode them.

use std::io::Write;
use std::ops::Range;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use lockstep_protocol::{
    decode, Bundle, BundleDatagram, Buttons, FrameReader, Input, InputDatagram, Lobby, Percent,
    Platform, Refusal, Resume, SelfTest, ServerDatagram, ServerMessage, SnapshotChunk, Start, Tick,
    MAX_DATAGRAM_SIZE,
};

use super::{Action, CloseCode, ConnId, Event, Join, LinkStats, Outgoing, Session, POLL_INTERVAL};
use crate::{CapacityReport, Config, Recorder, ServerEvent};

/// The path every test client has unless a test says otherwise.
pub(super) const LINK: LinkStats = LinkStats {
    rtt: Duration::from_millis(20),
    max_datagram_size: MAX_DATAGRAM_SIZE,
    reliable: false,
};

/// The machine every test client runs on: `target=<triple>`, nothing
/// else known.
pub(super) fn platform(triple: &str) -> Platform {
    Platform {
        target: triple.into(),
        ..Platform::default()
    }
}

/// The triple of [`platform`] every test client has unless a test joins
/// with [`Harness::join_on`].
pub(super) const TRIPLE: &str = "x86_64-unknown-linux-gnu";

/// Wall-clock time the test games start at (names their replays).
const UNIX_TIME: u64 = 1_795_268_199;

pub(super) fn ms(millis: u64) -> Duration {
    Duration::from_millis(millis)
}

pub(super) fn conn(id: usize) -> ConnId {
    ConnId(id)
}

/// A session and the time it is at.
pub(super) struct Harness {
    pub(super) session: Session,
    pub(super) now: Duration,
    /// Writes the replays the session asks for, as the driver's does.
    recorder: Recorder,
}

impl Harness {
    pub(super) fn new(config: Config) -> Harness {
        Harness {
            session: Session::new(config),
            now: Duration::ZERO,
            recorder: Recorder::new(),
        }
    }

    /// A server whose games need `players` players, recording nothing and
    /// waiting for late inputs as long as it takes (the tests of waits,
    /// drops and takeovers need the wait; [`Config::new`] stands in for
    /// inputs [`crate::DEFAULT_LAGGARD_TOLERANCE`] late).
    pub(super) fn players(players: u8) -> Harness {
        Harness::new(Config {
            players,
            replay_dir: None,
            laggard_tolerance: None,
            ..Config::new(crate::TEST_GAME)
        })
    }

    /// Hands the session one event at the current time.
    pub(super) fn event(&mut self, event: Event) -> Out {
        self.session.handle(event, self.now);
        self.actions()
    }

    /// Connection `id` joins as a player called `name`.
    pub(super) fn join(&mut self, id: usize, name: &str) -> Out {
        self.joins(id, name, false, platform(TRIPLE))
    }

    /// Connection `id` joins as a player called `name` running on
    /// `platform`.
    pub(super) fn join_on(&mut self, id: usize, name: &str, platform: Platform) -> Out {
        self.joins(id, name, false, platform)
    }

    /// Connection `id` joins as a player called `name` whose machine
    /// computed `self_tests` for the games it has.
    pub(super) fn join_with_self_tests(
        &mut self,
        id: usize,
        name: &str,
        self_tests: Vec<SelfTest>,
    ) -> Out {
        self.joins_with_self_tests(id, name, false, self_tests)
    }

    /// Connection `id` joins as a spectator called `name` whose machine
    /// computed `self_tests` for the games it has.
    pub(super) fn spectate_with_self_tests(
        &mut self,
        id: usize,
        name: &str,
        self_tests: Vec<SelfTest>,
    ) -> Out {
        self.joins_with_self_tests(id, name, true, self_tests)
    }

    fn joins_with_self_tests(
        &mut self,
        id: usize,
        name: &str,
        spectate: bool,
        self_tests: Vec<SelfTest>,
    ) -> Out {
        self.event(Event::Join(
            conn(id),
            Box::new(Join {
                name: name.to_string(),
                spectate,
                ready: true,
                platform: platform(TRIPLE),
                self_tests,
                link: LINK,
                unix_time: UNIX_TIME,
                resume: None,
            }),
        ))
    }

    /// Connection `id` joins as a spectator called `name`.
    pub(super) fn spectate(&mut self, id: usize, name: &str) -> Out {
        self.joins(id, name, true, platform(TRIPLE))
    }

    /// Connection `id` joins as a player called `name` who is not ready
    /// yet (a person in a window).
    pub(super) fn join_not_ready(&mut self, id: usize, name: &str) -> Out {
        self.joining(id, name, false, false, platform(TRIPLE))
    }

    /// Connection `id` says it is ready for the next game, or not.
    pub(super) fn ready(&mut self, id: usize, ready: bool) -> Out {
        self.event(Event::Ready {
            conn: conn(id),
            ready,
            unix_time: UNIX_TIME,
        })
    }

    /// Connection `id` says it is done with the running game.
    pub(super) fn game_done(&mut self, id: usize) -> Out {
        self.event(Event::GameDone(conn(id)))
    }

    fn joins(&mut self, id: usize, name: &str, spectate: bool, platform: Platform) -> Out {
        self.joining(id, name, spectate, true, platform)
    }

    /// Connection `id` joins as `name`, a player that lost its
    /// connection and kept its world of the game of `seed` up to bundle
    /// `next_bundle`.
    pub(super) fn join_keeping(
        &mut self,
        id: usize,
        name: &str,
        seed: u64,
        next_bundle: u32,
    ) -> Out {
        self.event(Event::Join(
            conn(id),
            Box::new(Join {
                name: name.to_string(),
                spectate: false,
                ready: true,
                platform: platform(TRIPLE),
                self_tests: honest_self_tests(),
                link: LINK,
                unix_time: UNIX_TIME,
                resume: Some(Resume {
                    seed,
                    next_bundle: Tick(next_bundle),
                }),
            }),
        ))
    }

    fn joining(
        &mut self,
        id: usize,
        name: &str,
        spectate: bool,
        ready: bool,
        platform: Platform,
    ) -> Out {
        self.event(Event::Join(
            conn(id),
            Box::new(Join {
                name: name.to_string(),
                spectate,
                ready,
                platform,
                self_tests: honest_self_tests(),
                link: LINK,
                unix_time: UNIX_TIME,
                resume: None,
            }),
        ))
    }

    /// Connection `id` sends inputs for `ticks` (any buttons), acknowledging
    /// every bundle made so far, as a client on a clean link would.
    pub(super) fn inputs(&mut self, id: usize, ticks: Range<u32>) -> Out {
        let datagram = InputDatagram {
            bundles_ack: self.next_tick(),
            first_tick: Tick(ticks.start),
            inputs: ticks.map(|_| input()).collect(),
        };
        self.event(Event::Inputs(conn(id), datagram))
    }

    /// Connection `id` says Leave.
    pub(super) fn leave(&mut self, id: usize) -> Out {
        self.event(Event::Leave(conn(id)))
    }

    /// Connection `id` is lost.
    pub(super) fn disconnect(&mut self, id: usize) -> Out {
        self.event(Event::Disconnected(conn(id), "connection lost".into()))
    }

    /// Connection `id` reports its world hash at `tick`.
    pub(super) fn hash(&mut self, id: usize, tick: u32, hash: u64) -> Out {
        self.event(Event::HashReport(conn(id), Tick(tick), hash))
    }

    /// Connection `id` answers the desync notice of `tick` with its
    /// hashes from `first_tick` on.
    pub(super) fn tick_hashes(
        &mut self,
        id: usize,
        tick: u32,
        first_tick: u32,
        hashes: Vec<u64>,
    ) -> Out {
        self.event(Event::TickHashes(
            conn(id),
            Tick(tick),
            Tick(first_tick),
            hashes,
        ))
    }

    /// Connection `id` reports that its machine sustains `percent` of the
    /// tick rate, and that it is on time at the next tick to bundle.
    pub(super) fn capacity(&mut self, id: usize, percent: u16) -> Out {
        let tick = self.next_tick().0;
        self.capacity_behind(id, percent, tick, Duration::ZERO)
    }

    /// Connection `id` reports that its machine sustains `percent` of the
    /// tick rate, and that it was `behind` its schedule at `tick`.
    pub(super) fn capacity_behind(
        &mut self,
        id: usize,
        percent: u16,
        tick: u32,
        behind: Duration,
    ) -> Out {
        let report = CapacityReport {
            percent: Percent(percent),
            tick: Tick(tick),
            behind,
        };
        self.event(Event::Capacity(conn(id), report))
    }

    /// Connection `id` says it is alive without new inputs.
    pub(super) fn heartbeat(&mut self, id: usize) -> Out {
        let datagram = InputDatagram {
            bundles_ack: self.next_tick(),
            first_tick: self.next_tick(),
            inputs: Vec::new(),
        };
        self.event(Event::Inputs(conn(id), datagram))
    }

    /// Moves the clock on by `by`, polling every [`POLL_INTERVAL`] on the
    /// way, as the driver's timer does.
    pub(super) fn advance(&mut self, by: Duration) -> Out {
        let end = self.now + by;
        let mut out = Out::default();
        while self.now + POLL_INTERVAL <= end {
            self.now += POLL_INTERVAL;
            self.session.poll(self.now);
            out.0.extend(self.actions().0);
        }
        self.now = end;
        out
    }

    /// Moves the clock on to `at` (see [`Harness::advance`]).
    pub(super) fn advance_to(&mut self, at: Duration) -> Out {
        self.advance(at.saturating_sub(self.now))
    }

    /// Players 1 and 2 report the majority's `hash` of `tick`, and the
    /// one asked for its snapshot sends `bytes`: which one that was.
    pub(super) fn snapshot_round(&mut self, tick: u32, hash: u64, bytes: &[u8]) -> usize {
        self.hash(1, tick, hash);
        let mut out = self.hash(2, tick, hash);
        out.0.extend(self.advance(POLL_INTERVAL).0);
        let id = [1, 2]
            .into_iter()
            .find(|&id| {
                out.messages(id).into_iter().any(
                    |m| matches!(m, ServerMessage::SnapshotRequest { tick: t } if t == Tick(tick)),
                )
            })
            .expect("a player asked for the snapshot");
        for chunk in SnapshotChunk::split(Tick(tick), bytes) {
            self.event(Event::Snapshot(conn(id), chunk));
        }
        id
    }

    /// The relay's next tick to bundle (0 before the game).
    pub(super) fn next_tick(&self) -> Tick {
        self.session
            .game
            .as_ref()
            .map_or(Tick(0), |game| game.relay.next_tick())
    }

    /// Every action the session has queued. The replay writes among them
    /// are carried out as the driver does, in order, and the report of a
    /// replay opened follows the write that opened it.
    pub(super) fn actions(&mut self) -> Out {
        let mut out = Vec::new();
        while let Some(action) = self.session.next_action() {
            let opened = match &action {
                Action::Record(recording) => self.recorder.record(recording.clone()),
                _ => None,
            };
            out.push(action);
            out.extend(opened.map(Action::Report));
        }
        Out(out)
    }
}

pub(super) fn input() -> Input {
    Input {
        buttons: Buttons(1),
        axes: None,
    }
}

/// Actions of one step, in the order the session asked for them.
#[derive(Debug, Default)]
pub(super) struct Out(pub(super) Vec<Action>);

impl Out {
    /// Control messages queued for `id`, shared frames decoded, apart
    /// from the lobby updates that come with every join, departure and
    /// ready change (read by [`Out::lobbies`]) and histories (read by
    /// [`Out::histories`]).
    pub(super) fn messages(&self, id: usize) -> Vec<ServerMessage> {
        self.every_message(id)
            .into_iter()
            .filter(|message| !matches!(message, ServerMessage::Lobby(_)))
            .collect()
    }

    /// The lobby updates queued for `id`, in order.
    pub(super) fn lobbies(&self, id: usize) -> Vec<Lobby> {
        self.every_message(id)
            .into_iter()
            .filter_map(|message| match message {
                ServerMessage::Lobby(lobby) => Some(lobby),
                _ => None,
            })
            .collect()
    }

    /// The Start messages queued for `id`.
    pub(super) fn starts(&self, id: usize) -> Vec<Start> {
        self.every_message(id)
            .into_iter()
            .filter_map(|message| match message {
                ServerMessage::Start(start) => Some(start),
                _ => None,
            })
            .collect()
    }

    /// Every control message queued for `id`, lobbies included.
    pub(super) fn every_message(&self, id: usize) -> Vec<ServerMessage> {
        self.control(id)
            .filter_map(|outgoing| match outgoing {
                Outgoing::Message(message) => Some(message.clone()),
                Outgoing::Frame(frame) => {
                    let mut reader = FrameReader::new();
                    reader.push(frame);
                    reader.next_message().unwrap()
                }
                Outgoing::History { .. } | Outgoing::Snapshot { .. } => None,
            })
            .collect()
    }

    /// Histories queued for `id`: first tick and bundles.
    pub(super) fn histories(&self, id: usize) -> Vec<(Tick, Vec<Bundle>)> {
        self.control(id)
            .filter_map(|outgoing| match outgoing {
                Outgoing::History {
                    first_tick,
                    bundles,
                } => Some((*first_tick, bundles.clone())),
                _ => None,
            })
            .collect()
    }

    fn control(&self, id: usize) -> impl Iterator<Item = &Outgoing> {
        self.0.iter().filter_map(move |action| match action {
            Action::Control(to, outgoing) if *to == conn(id) => Some(outgoing),
            _ => None,
        })
    }

    /// Bundle datagrams sent to `id`, as sent.
    pub(super) fn raw_datagrams(&self, id: usize) -> Vec<Bytes> {
        self.0
            .iter()
            .filter_map(|action| match action {
                Action::Datagram(to, bytes) if *to == conn(id) => Some(bytes.clone()),
                _ => None,
            })
            .collect()
    }

    /// Bundle datagrams sent to `id`, decoded.
    pub(super) fn datagrams(&self, id: usize) -> Vec<BundleDatagram> {
        self.raw_datagrams(id)
            .iter()
            .map(|bytes| {
                let ServerDatagram::Bundles(datagram) = decode(bytes, MAX_DATAGRAM_SIZE).unwrap();
                datagram
            })
            .collect()
    }

    /// The bundle of `tick` in any datagram sent to `id`.
    pub(super) fn bundle(&self, id: usize, tick: Tick) -> Option<Bundle> {
        self.datagrams(id).into_iter().find_map(|d| {
            let index = tick.0.checked_sub(d.first_tick.0)? as usize;
            d.bundles.get(index).cloned()
        })
    }

    /// The answer to `id`'s join, if this step gave one.
    pub(super) fn reply(&self, id: usize) -> Option<Result<(), Refusal>> {
        self.0.iter().find_map(|action| match action {
            Action::Reply(to, result) if *to == conn(id) => Some(result.clone()),
            _ => None,
        })
    }

    /// How `id` was closed, if it was.
    pub(super) fn closed(&self, id: usize) -> Option<(CloseCode, &'static str)> {
        self.0.iter().find_map(|action| match action {
            Action::Close(to, code, reason) if *to == conn(id) => Some((*code, *reason)),
            _ => None,
        })
    }

    /// Whether the session let go of `id` without closing it.
    pub(super) fn released(&self, id: usize) -> bool {
        self.0
            .iter()
            .any(|action| *action == Action::Release(conn(id)))
    }

    /// What the server reported, as the binary prints it.
    pub(super) fn reports(&self) -> Vec<String> {
        self.events().iter().map(ToString::to_string).collect()
    }

    /// What the server reported.
    pub(super) fn events(&self) -> Vec<ServerEvent> {
        self.0
            .iter()
            .filter_map(|action| match action {
                Action::Report(event) => Some(event.clone()),
                _ => None,
            })
            .collect()
    }

    /// Index of the first action matching `is`, to check their order.
    pub(super) fn position(&self, is: impl Fn(&Action) -> bool) -> Option<usize> {
        self.0.iter().position(is)
    }
}

/// Log lines written while `f` runs (tracing's `fmt` output, no colours).
pub(super) fn logs_of<T>(f: impl FnOnce() -> T) -> (T, String) {
    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);
    impl Write for Buffer {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let buffer = Buffer::default();
    let writer = buffer.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let result = tracing::subscriber::with_default(subscriber, f);
    let logs = String::from_utf8_lossy(&buffer.0.lock().unwrap()).into_owned();
    (result, logs)
}

/// The self-test of the hosted game as this build computes it: what an
/// honest client of the same build reports.
pub(super) fn honest_self_tests() -> Vec<SelfTest> {
    vec![SelfTest {
        game: crate::TEST_GAME.name().to_string(),
        hash: crate::TEST_GAME.self_test(),
        pinned: None,
    }]
}
