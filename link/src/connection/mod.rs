//! The client's control protocol as a pure state machine in the
//! quinn-proto style: what the client says to the server and when, with no
//! socket, no tokio and no clock.
//!
//! The driver (the client's `io::link`) owns the QUIC endpoint and connections and
//! reads the clock. It hands the [`Connection`] whatever happens, each time
//! with `now`, the time since the connection's epoch (the clock the
//! [`Link`] runs on), and carries out the [`Action`]s it answers with, in
//! order:
//!
//! ```text
//! loop {
//!     while let Some(action) = connection.poll_action() {
//!         Connect         => open a QUIC connection and its control stream;
//!                            connection.handle_connected(now), or on error
//!                            connection.handle_failure(failure, reason, now)
//!         Send(message)   => write it on the control stream
//!         Datagram(bytes) => send it
//!         Welcome         => record a server trusted on first use; tell the frontend
//!         Event(event)    => tell the frontend
//!         Close           => end the QUIC connection as asked; return how it ended
//!     }
//!     select! {
//!         message on the control stream => connection.handle_message(message, now)
//!         datagram                      => connection.handle_datagram(&bytes, now)
//!         command from the frontend     => connection.handle_command(command, now, path)
//!         connection.poll_timeout()     => connection.handle_timeout(now, path)
//!         the QUIC connection fails     => connection.handle_failure(failure, reason, now)
//!     }
//! }
//! ```
//!
//! One `Connection` lives as long as the frontend's `NetClient`: when the
//! server is lost during a game, it asks the driver for new QUIC
//! connections in turn, keeping the game's seed and first missing bundle
//! for the next Hello.
//!
//! # Rules
//! - Every QUIC connection begins with the Hello; it carries the game kept
//!   through a lost connection ([`Hello::resume`]), if any.
//! - A Start resets the datagram exchange and starts it: from tick 0, from
//!   the snapshot the game is joined from, or from the tick the kept game
//!   resumes at. It resumes only the game kept (its seed and first missing
//!   bundle); any other Start is a fresh join.
//! - A game joined from a snapshot starts once the snapshot's chunks are
//!   all in (`snapshot.rs`); bad chunks end the connection.
//! - Each bundle reaches the frontend once, in order, from datagrams and
//!   History alike (the [`Link`]'s rule).
//! - A local input goes to the link and out as a datagram at once (at the
//!   next resend check when the link's pace holds it back), or, with the
//!   test [`Hooks`], after `send_delay` at the next resend check or on the
//!   control stream. The ticks the game's
//!   schedule says are due get the held input when the frontend is late
//!   ([`crate::input_schedule`]), never over the stream.
//! - GameDone forgets the kept game and resets the exchange: a loss then
//!   has nothing to keep.
//! - A server lost during a game is reconnected to for a while
//!   (`reconnect.rs` says how long and how often).
//! - A server that welcomes us to its lobby while we keep a game came back
//!   without it: the connection ends.
//! - Between QUIC connections there is nothing to send on: commands are
//!   dropped (the server that comes back will not want them), and Leave
//!   ends the connection. What a failed connection was asked and had not
//!   done yet is dropped with it.
//! - Link statistics go to the frontend as soon as a QUIC connection is
//!   up, then every `STATS_EVERY`.

mod driver;
mod frontend;
#[cfg(test)]
mod harness;
mod hooks;
mod reconnect;
mod snapshot;
#[cfg(test)]
mod tests;

pub use driver::{Action, Config, Ending, Failure, PathStats};
pub use frontend::{Closed, LinkStats, NetCommand, NetEvent, Started};
pub use hooks::Hooks;
pub use snapshot::SnapshotError;

use std::collections::VecDeque;
use std::time::Duration;

use web_time::Instant;

use lockstep_protocol::{
    decode, ClientMessage, Hello, Input, InputDatagram, Resume, ServerDatagram, ServerMessage,
    SnapshotChunk, Start, Tick, MAX_DATAGRAM_SIZE,
};
use tracing::debug;

use crate::datagrams::{Link, NewBundles, RESEND_AFTER};
use crate::input_schedule::InputSchedule;
use reconnect::{Reconnect, Verdict, RECONNECT_ATTEMPT};
use snapshot::Joining;

/// How often link statistics go to the frontend (HUD refresh rate).
const STATS_EVERY: Duration = Duration::from_millis(250);

/// How often the link is asked whether to repeat inputs or send a
/// heartbeat, and inputs held by `send_delay` are released: a repeat is
/// then at most a third of [`RESEND_AFTER`] late.
const RESEND_CHECK: Duration = Duration::from_nanos(RESEND_AFTER.as_nanos() as u64 / 3);

/// Actions waiting for the driver. A field of its own, so handlers can
/// queue actions while they change the exchange.
#[derive(Debug, Default)]
struct Actions(VecDeque<Action>);

impl Actions {
    fn push(&mut self, action: Action) {
        self.0.push_back(action);
    }

    fn send(&mut self, message: ClientMessage) {
        self.push(Action::Send(message));
    }

    fn event(&mut self, event: NetEvent) {
        self.push(Action::Event(event));
    }

    fn deliver(&mut self, new: Option<NewBundles>) {
        if let Some(new) = new {
            self.event(new.into());
        }
    }
}

/// The client's side of the control protocol, for as long as it wants to
/// be connected: one QUIC connection, or after the server was lost during
/// a game, the next ones in turn. See the [module docs](self).
#[derive(Debug)]
pub struct Connection {
    config: Config,
    /// The instant `now` counts from, never read from a clock here: the
    /// frontend's schedules and the events' arrival times are instants.
    epoch: Instant,
    /// The time of the latest call: the input schedule's next due time
    /// counts from it.
    now: Duration,
    phase: Phase,
    /// The game we are in, and the first bundle we lack (the link's, while
    /// it runs): a reconnection asks to go on from there.
    kept: Option<Resume>,
    /// Whether and when to connect again after a failure.
    reconnect: Reconnect,
    actions: Actions,
}

#[derive(Debug)]
enum Phase {
    /// The driver is opening a QUIC connection.
    Connecting,
    /// A QUIC connection is up.
    Connected(Box<Exchange>),
    /// Between two attempts to reconnect: the next one at this time.
    Waiting(Duration),
    /// Over: the Close action went out.
    Closed,
}

/// What lives and dies with one QUIC connection.
#[derive(Debug)]
struct Exchange {
    link: Link,
    /// The held input and the game's schedule, for inputs on schedule.
    on_schedule: InputSchedule,
    /// Ticks whose input went on schedule (the statistics report them).
    inputs_on_schedule: u64,
    /// Inputs held back by `send_delay`, with when they may go.
    held: VecDeque<(Duration, Tick, Input)>,
    /// A Start from a snapshot, until the snapshot is all in.
    joining: Option<Joining>,
    /// When the link is next asked whether inputs are due, and held ones
    /// released (only while the game runs).
    next_resend: Duration,
    /// When statistics next go to the frontend.
    next_stats: Duration,
}

impl Exchange {
    /// A QUIC connection up at `now`: statistics go out at once, and the
    /// resend check runs as soon as a game starts.
    fn new(now: Duration, reliable: bool) -> Exchange {
        Exchange {
            link: Link::new(reliable),
            on_schedule: InputSchedule::default(),
            inputs_on_schedule: 0,
            held: VecDeque::new(),
            joining: None,
            next_resend: now,
            next_stats: now,
        }
    }

    /// Forgets the game's exchange: nothing more to send or repeat for it.
    fn reset(&mut self) {
        self.link = Link::new(self.link.is_reliable());
        self.on_schedule = InputSchedule::default();
        self.held.clear();
    }

    /// Sends the link's input datagram for `now`, if one fits the path and
    /// the pace lets it go (else the resend check sends it when it does).
    fn send_inputs(&mut self, now: Duration, path: PathStats, actions: &mut Actions) {
        if !self.link.may_send(now) {
            return;
        }
        if let Some(bytes) = self.link.next_datagram(now, path.max_datagram_size) {
            actions.push(Action::Datagram(bytes));
        }
    }

    /// Gives the held input to every tick the schedule says is due by
    /// `now` and the frontend has not sent yet.
    fn send_on_schedule(&mut self, now: Duration, path: PathStats, actions: &mut Actions) {
        let Some((tick, input)) = self.on_schedule.due(now) else {
            return;
        };
        let given = self.link.queue_input(tick, input);
        if !given.is_empty() {
            self.inputs_on_schedule += u64::from(given.end.since(given.start));
            debug!(first = %given.start, last = %tick, "inputs sent on schedule before the frame sampled them");
            self.send_inputs(now, path, actions);
        }
    }

    /// Releases the inputs `send_delay` held until `now`, and repeats
    /// inputs or sends a heartbeat when the link says so.
    fn resend(&mut self, now: Duration, path: PathStats, actions: &mut Actions) {
        // A check missed by a whole period is not made up: it would only
        // send the same datagram twice.
        self.next_resend = if now >= self.next_resend + RESEND_CHECK {
            now + RESEND_CHECK
        } else {
            self.next_resend + RESEND_CHECK
        };
        let mut released = false;
        while let Some((_, tick, input)) = self.held.pop_front_if(|(at, _, _)| *at <= now) {
            self.link.queue_input(tick, input);
            released = true;
        }
        if released || self.link.due(now) {
            self.send_inputs(now, path, actions);
        }
    }

    fn report_stats(&mut self, path: PathStats, actions: &mut Actions) {
        self.next_stats += STATS_EVERY;
        actions.event(NetEvent::Stats(LinkStats {
            rtt: path.rtt,
            tx_bytes: path.tx_bytes,
            rx_bytes: path.rx_bytes,
            jitter: self.link.jitter(),
            irregularity: self.link.irregularity(),
            inputs_on_schedule: self.inputs_on_schedule,
        }));
    }

    /// When the first of the exchange's timers is due, seen at `now`.
    fn next_timeout(&self, now: Duration) -> Duration {
        let resend = self.link.started().then_some(self.next_resend);
        [self.on_schedule.next_due(now), resend]
            .into_iter()
            .flatten()
            .fold(self.next_stats, Duration::min)
    }
}

impl Connection {
    /// A connection that asks the driver to connect at once. `epoch` is the
    /// instant the times given to it count from.
    pub fn new(config: Config, epoch: Instant) -> Connection {
        let mut connection = Connection {
            reconnect: Reconnect::new(config.reconnect),
            config,
            epoch,
            now: Duration::ZERO,
            phase: Phase::Connecting,
            kept: None,
            actions: Actions::default(),
        };
        connection.connect();
        connection
    }

    /// The next thing for the driver to do.
    pub fn poll_action(&mut self) -> Option<Action> {
        self.actions.0.pop_front()
    }

    /// When [`Connection::handle_timeout`] is next due; `None` while the
    /// driver connects and once the connection is over.
    pub fn poll_timeout(&self) -> Option<Duration> {
        match &self.phase {
            Phase::Connected(exchange) => Some(exchange.next_timeout(self.now)),
            Phase::Waiting(at) => Some(*at),
            Phase::Connecting | Phase::Closed => None,
        }
    }

    /// Whether the connection asked to close: nothing written after that
    /// matters any more.
    pub fn is_closed(&self) -> bool {
        matches!(self.phase, Phase::Closed)
    }

    /// The QUIC connection asked for is up, its control stream open.
    pub fn handle_connected(&mut self, now: Duration) {
        self.now = now;
        if !matches!(self.phase, Phase::Connecting) {
            return;
        }
        self.phase = Phase::Connected(Box::new(Exchange::new(now, self.config.reliable)));
        let hello = Hello {
            resume: self.kept,
            ..self.config.hello.clone()
        };
        self.actions.send(ClientMessage::Hello(hello));
    }

    /// The QUIC connection in use, or the attempt to open one, failed as
    /// `failure` says; `reason` says it in words. Decides whether to try
    /// again.
    pub fn handle_failure(&mut self, failure: Failure, reason: String, now: Duration) {
        self.now = now;
        if self.is_closed() {
            return;
        }
        self.kept = self.resume();
        self.phase = Phase::Connecting;
        // What was asked of the failed connection and not done dies with it.
        self.actions.0.clear();
        match self
            .reconnect
            .after(failure, reason, self.kept.is_some(), now)
        {
            Verdict::Retry { at, announce } => {
                if let Some(event) = announce {
                    self.actions.event(event);
                }
                self.phase = Phase::Waiting(at);
            }
            Verdict::GiveUp(closed) => self.close(closed, Ending::Release),
        }
    }

    /// A message arrived on the control stream.
    pub fn handle_message(&mut self, message: ServerMessage, now: Duration) {
        self.now = now;
        if !matches!(self.phase, Phase::Connected(_)) {
            return;
        }
        match message {
            ServerMessage::Refused(refusal) => {
                self.close(Closed::Refused(refusal.reason), Ending::Close("refused"));
            }
            ServerMessage::Welcome { .. } if self.kept.is_some() => {
                // Reconnected to a server back in its lobby: it was
                // started again without the game.
                let closed = Closed::Ended(
                    "the server came back without the game (it was started again without \
                     --resume)"
                        .into(),
                );
                self.close(closed, Ending::Close("the game is gone"));
            }
            ServerMessage::Welcome {
                player,
                players_needed,
            } => self.actions.push(Action::Welcome {
                player,
                players_needed,
            }),
            ServerMessage::Start(start) => self.start(start, now),
            ServerMessage::Snapshot(chunk) => self.take_snapshot(chunk),
            ServerMessage::SnapshotRequest { tick } => {
                self.actions.event(NetEvent::SnapshotRequest(tick));
            }
            ServerMessage::Ended { reason } => self.close(Closed::Ended(reason), Ending::Release),
            ServerMessage::Desync(notice) => self.actions.event(NetEvent::Desync(notice)),
            ServerMessage::History {
                first_tick,
                bundles,
            } => {
                if let Phase::Connected(exchange) = &mut self.phase {
                    let new = exchange.link.take_history(first_tick, bundles);
                    self.actions.deliver(new);
                }
            }
            ServerMessage::PeerStatus(status) => self.actions.event(NetEvent::Peers(status)),
            ServerMessage::Pinpointed { tick, first } => {
                self.actions.event(NetEvent::Pinpointed { tick, first });
            }
            ServerMessage::TraceDiff {
                tick,
                diverged,
                majority,
                lines,
            } => {
                self.actions.event(NetEvent::TraceDiff {
                    tick,
                    diverged,
                    majority,
                    lines,
                });
            }
            ServerMessage::Speed {
                from_tick,
                percent,
                postpone_us,
            } => {
                if let Phase::Connected(exchange) = &mut self.phase {
                    exchange.link.set_speed(from_tick, percent);
                }
                let postpone = Duration::from_micros(u64::from(postpone_us));
                self.actions.event(NetEvent::Speed {
                    from_tick,
                    percent,
                    postpone,
                });
            }
            ServerMessage::Lobby(lobby) => self.actions.event(NetEvent::Lobby(lobby)),
        }
    }

    /// A datagram arrived. A malformed one is dropped: the next one repeats
    /// it.
    pub fn handle_datagram(&mut self, bytes: &[u8], now: Duration) {
        self.now = now;
        let Phase::Connected(exchange) = &mut self.phase else {
            return;
        };
        if let Ok(ServerDatagram::Bundles(datagram)) = decode(bytes, MAX_DATAGRAM_SIZE) {
            let new = exchange.link.receive(datagram, now);
            self.actions.deliver(new);
        }
    }

    /// The frontend said something; `path` is the path as QUIC knows it
    /// now.
    pub fn handle_command(&mut self, command: NetCommand, now: Duration, path: PathStats) {
        self.now = now;
        let Phase::Connected(exchange) = &mut self.phase else {
            if matches!(command, NetCommand::Leave) && !self.is_closed() {
                self.close(Closed::Left, Ending::Release);
            }
            return;
        };
        let actions = &mut self.actions;
        let over_stream = self.config.hooks.inputs_over_stream;
        let delay = self.config.hooks.send_delay;
        match command {
            NetCommand::Input(tick, input) if over_stream => {
                actions.send(ClientMessage::Inputs(InputDatagram {
                    bundles_ack: exchange.link.received_through(),
                    first_tick: tick,
                    inputs: vec![input],
                }));
            }
            NetCommand::Input(tick, input) if delay.is_zero() => {
                if !exchange.link.queue_input(tick, input).is_empty() {
                    exchange.send_inputs(now, path, actions);
                }
            }
            NetCommand::Input(tick, input) => exchange.held.push_back((now + delay, tick, input)),
            NetCommand::Hold(_) | NetCommand::Schedule(..) if over_stream => {}
            NetCommand::Hold(input) => exchange.on_schedule.hold(input),
            NetCommand::Schedule(schedule, at) => {
                let at = at.saturating_duration_since(self.epoch);
                exchange.on_schedule.publish(schedule, at);
            }
            NetCommand::Report(tick, hash) => {
                actions.send(ClientMessage::HashReport { tick, hash })
            }
            NetCommand::Capacity(percent, tick, behind) => {
                let behind_us = behind.as_micros().min(u128::from(u32::MAX)) as u32;
                actions.send(ClientMessage::Capacity {
                    percent,
                    tick,
                    behind_us,
                });
            }
            NetCommand::Snapshot(tick, bytes) => {
                for chunk in SnapshotChunk::split(tick, &bytes) {
                    actions.send(ClientMessage::Snapshot(chunk));
                }
            }
            NetCommand::Ready(ready) => actions.send(ClientMessage::Ready(ready)),
            NetCommand::GameDone => {
                actions.send(ClientMessage::GameDone);
                // Out of this game: a loss now has nothing to keep. A
                // straggling bundle of it starts past the fresh link's
                // tick 0 and is ignored.
                self.kept = None;
                exchange.reset();
            }
            NetCommand::TickHashes(tick, first_tick, hashes) => {
                actions.send(ClientMessage::TickHashes {
                    tick,
                    first_tick,
                    hashes,
                });
            }
            NetCommand::Leave => {
                actions.send(ClientMessage::Leave);
                self.close(Closed::Left, Ending::Linger("player left"));
            }
            NetCommand::Trace(tick, report) => {
                actions.send(ClientMessage::Trace { tick, report });
            }
            NetCommand::BadSnapshot(tick, reason) => {
                actions.send(ClientMessage::BadSnapshot { tick, reason });
                // No world of this game to go on with after a loss: the
                // next Start brings one. (A loss before it ends the
                // connection, as one before any game does.)
                self.kept = None;
            }
            NetCommand::CannotPlay(reason) => {
                actions.send(ClientMessage::CannotPlay(reason.clone()));
                self.close(
                    Closed::CannotPlay(reason),
                    Ending::Linger("cannot play the game"),
                );
            }
        }
    }

    /// The time [`Connection::poll_timeout`] named has come; `path` is the
    /// path as QUIC knows it now.
    pub fn handle_timeout(&mut self, now: Duration, path: PathStats) {
        let due = |at: Option<Duration>| at.is_some_and(|at| at <= now);
        match &mut self.phase {
            Phase::Connected(exchange) => {
                if due(exchange.on_schedule.next_due(self.now)) {
                    exchange.send_on_schedule(now, path, &mut self.actions);
                }
                if exchange.link.started() && exchange.next_resend <= now {
                    exchange.resend(now, path, &mut self.actions);
                }
                if exchange.next_stats <= now {
                    exchange.report_stats(path, &mut self.actions);
                }
            }
            Phase::Waiting(at) if *at <= now => self.connect(),
            Phase::Waiting(_) | Phase::Connecting | Phase::Closed => {}
        }
        self.now = now;
    }

    /// Asks the driver for a QUIC connection.
    fn connect(&mut self) {
        self.phase = Phase::Connecting;
        // A reconnection gives up on a silent server soon and tries again.
        let answer_within = self.kept.is_some().then_some(RECONNECT_ATTEMPT);
        self.actions.push(Action::Connect { answer_within });
    }

    fn close(&mut self, closed: Closed, ending: Ending) {
        self.phase = Phase::Closed;
        self.actions.push(Action::Close { closed, ending });
    }

    /// The game to go on with after a loss: the one kept, lacking the
    /// link's first missing bundle while the link runs.
    fn resume(&self) -> Option<Resume> {
        let kept = self.kept?;
        match &self.phase {
            Phase::Connected(exchange) if exchange.link.started() => Some(Resume {
                next_bundle: exchange.link.received_through(),
                ..kept
            }),
            _ => Some(kept),
        }
    }

    fn start(&mut self, start: Start, now: Duration) {
        let resumed = start.resume.filter(|&tick| {
            self.resume()
                == Some(Resume {
                    seed: start.seed,
                    next_bundle: tick,
                })
        });
        let Phase::Connected(exchange) = &mut self.phase else {
            return;
        };
        // Every game's exchange starts from tick 0 (a rematch after
        // GameDone, too), from the snapshot the game is joined from, or,
        // for the game this client kept while the server was gone, from
        // the tick it resumes at.
        exchange.reset();
        exchange.link.start(start.tick_rate, now);
        if start.you.is_some() {
            exchange.link.inputs_from(start.first_input_tick);
        }
        self.reconnect.back_in_game();
        self.kept = Some(Resume {
            seed: start.seed,
            next_bundle: start.resume.or(start.snapshot).unwrap_or_default(),
        });
        let at = self.epoch + now;
        match (resumed, start.snapshot) {
            (Some(tick), _) => {
                exchange.link.start_at(tick);
                self.actions.event(NetEvent::Resumed { start, at });
            }
            (None, Some(tick)) => {
                exchange.link.start_at(tick);
                exchange.joining = Some(Joining::new(start, now));
            }
            (None, None) => self.actions.event(NetEvent::Started(Started {
                start,
                at,
                snapshot: None,
            })),
        }
    }

    fn take_snapshot(&mut self, chunk: SnapshotChunk) {
        let Phase::Connected(exchange) = &mut self.phase else {
            return;
        };
        let Some(joining) = &mut exchange.joining else {
            debug!(tick = %chunk.tick, "snapshot without a Start ignored");
            return;
        };
        match joining.take(chunk) {
            Ok(false) => {}
            Ok(true) => {
                if let Some(Joining { start, at, bytes }) = exchange.joining.take() {
                    self.actions.event(NetEvent::Started(Started {
                        start,
                        at: self.epoch + at,
                        snapshot: Some(bytes),
                    }));
                }
            }
            Err(error) => {
                let closed = Closed::Lost(format!("the server's snapshot is unusable: {error}"));
                self.close(closed, Ending::Release);
            }
        }
    }
}
