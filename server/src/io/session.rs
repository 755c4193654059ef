//! The session's driver: the one task around the pure [`Session`].
//!
//! It owns what the session must not: each joined connection's transport
//! (a [`Peer`]: a QUIC connection or a WebSocket) and the answer to its
//! join, the replay files (a [`Recorder`]), and the clock. Every event
//! from a connection task and every [`POLL_INTERVAL`] it hands the session
//! `now` (time since the server started), then carries out the session's
//! [`Action`]s in order, so a status queued before a bundle datagram still
//! leaves in the same packet, and a bundle is on disk before it is sent.
//!
//! ```text
//! loop {
//!     event from a connection => session.handle(event, now)
//!     poll timer              => refresh link stats; session.poll(now)
//!     shutdown                => break
//!     while let Some(action) = session.next_action() { execute(action) }
//! }
//! ```

use std::collections::BTreeMap;
use std::future::Future;
use std::time::Duration;

use lockstep_protocol::{Platform, Refusal};
use tokio::sync::{mpsc, oneshot, watch};

use super::clock::{self, Uptime};
use super::peer::Peer;
use super::recording::Recorder;
use crate::beacon::Occupancy;
use crate::session::{Action, CloseCode, ConnId, Event, Join, Session, POLL_INTERVAL};
use crate::{Config, ServerEvent, CLOSE_DROPPED, CLOSE_SHUTDOWN};

/// Time the writers get to put the shutdown's Ended message on the wire
/// before the connections close.
const SHUTDOWN_FLUSH: Duration = Duration::from_millis(100);

/// The shortest wait for a session deadline: a timer's resolution, and a
/// floor that keeps a deadline in the past from spinning the loop.
const MIN_WAKE: Duration = Duration::from_millis(1);

/// What connection tasks tell the driver.
#[derive(Debug)]
pub(crate) enum ConnEvent {
    /// A client said a valid Hello and wants in.
    Join {
        /// The connection.
        conn_id: ConnId,
        /// The name from its Hello.
        name: String,
        /// Whether it only watches.
        spectate: bool,
        /// Whether it is ready for the game as it joins.
        ready: bool,
        /// Its machine and build, sanitized (boxed: the channel carries
        /// every input as a [`ConnEvent::Session`], which should not pay
        /// for a rare join's size).
        platform: Box<Platform>,
        /// The self-test hashes of the games it has.
        self_tests: Vec<lockstep_protocol::SelfTest>,
        /// The game it kept through a lost connection.
        resume: Option<lockstep_protocol::Resume>,
        /// Its transport, for control messages, datagrams, link stats and
        /// closing.
        peer: Peer,
        /// Where the session's verdict goes.
        reply: oneshot::Sender<Result<(), Refusal>>,
    },
    /// Anything else a joined client did, in the session's terms (never
    /// a [`Event::Join`]: a join must come with its connection).
    Session(Event),
}

/// A joined connection, as long as the session knows it.
#[derive(Debug)]
struct Conn {
    peer: Peer,
    /// Taken when the session replies to the join.
    reply: Option<oneshot::Sender<Result<(), Refusal>>>,
}

struct Driver {
    session: Session,
    uptime: Uptime,
    conns: BTreeMap<ConnId, Conn>,
    /// Writes the replays the session asks for.
    recorder: Recorder,
    events: Option<mpsc::UnboundedSender<ServerEvent>>,
    /// The LAN beacon's view of the session.
    occupancy: watch::Sender<Occupancy>,
}

/// Runs the session until `shutdown` fires or every connection task and
/// the accept loop are gone, then tells every client and closes every
/// connection.
pub(crate) async fn run(
    config: Config,
    events: Option<mpsc::UnboundedSender<ServerEvent>>,
    mut rx: mpsc::Receiver<ConnEvent>,
    occupancy: watch::Sender<Occupancy>,
    shutdown: impl Future<Output = ()>,
) {
    let mut config = config;
    let resume = config.resume.take();
    let mut driver = Driver {
        session: Session::new(config),
        uptime: Uptime::start(),
        conns: BTreeMap::new(),
        recorder: Recorder::new(),
        events,
        occupancy,
    };
    if let Some(game) = resume {
        let now = driver.uptime.now();
        driver.session.resume(game, now);
        driver.execute();
    }
    let mut poll = tokio::time::interval(POLL_INTERVAL);
    poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tokio::pin!(shutdown);
    loop {
        let deadline = driver.deadline();
        tokio::select! {
            event = rx.recv() => match event {
                Some(event) => driver.handle(event),
                None => break,
            },
            _ = poll.tick() => driver.poll(),
            _ = tokio::time::sleep_until(deadline.unwrap_or_else(clock::now)), if deadline.is_some() => driver.poll(),
            _ = &mut shutdown => break,
        }
        driver.execute();
        driver.publish_occupancy();
    }
    driver.session.announce_shutdown();
    driver.execute();
    tokio::time::sleep(SHUTDOWN_FLUSH).await;
    driver.session.shut_down();
    driver.execute();
}

impl Driver {
    fn handle(&mut self, event: ConnEvent) {
        let now = self.uptime.now();
        match event {
            ConnEvent::Join {
                conn_id,
                name,
                spectate,
                ready,
                platform,
                self_tests,
                resume,
                peer,
                reply,
            } => {
                let link = peer.link();
                let joined = Conn {
                    peer,
                    reply: Some(reply),
                };
                self.conns.insert(conn_id, joined);
                let join = Event::Join(
                    conn_id,
                    Box::new(Join {
                        name,
                        spectate,
                        ready,
                        platform: *platform,
                        self_tests,
                        link,
                        unix_time: clock::unix_seconds(),
                        resume,
                    }),
                );
                self.session.handle(join, now);
            }
            ConnEvent::Session(event) => self.session.handle(event, now),
        }
    }

    /// When the session wants a poll before the next periodic one; never
    /// sooner than a millisecond from now, so a deadline the poll does not
    /// clear cannot spin the loop.
    fn deadline(&self) -> Option<tokio::time::Instant> {
        let at = self.session.next_deadline()?;
        let soonest = self.uptime.now() + MIN_WAKE;
        Some(self.uptime.instant(at.max(soonest)))
    }

    fn poll(&mut self) {
        let now = self.uptime.now();
        for (&id, conn) in &self.conns {
            self.session.handle(Event::Link(id, conn.peer.link()), now);
        }
        self.session.poll(now);
    }

    /// Tells the LAN beacon how many players are in, if that changed.
    fn publish_occupancy(&mut self) {
        let now = self.session.occupancy();
        self.occupancy.send_if_modified(|published| {
            let changed = *published != now;
            *published = now;
            changed
        });
    }

    /// Carries out everything the session asked for, in order.
    fn execute(&mut self) {
        while let Some(action) = self.session.next_action() {
            match action {
                Action::Control(id, outgoing) => {
                    if let Some(conn) = self.conns.get(&id) {
                        conn.peer.send_control(outgoing);
                    }
                }
                Action::Datagram(id, bytes) => {
                    if let Some(conn) = self.conns.get(&id) {
                        conn.peer.send_datagram(bytes);
                    }
                }
                Action::Reply(id, result) => {
                    let reply = self.conns.get_mut(&id).and_then(|c| c.reply.take());
                    if let Some(reply) = reply {
                        // A dropped receiver means the connection task
                        // already ended.
                        let _ = reply.send(result);
                    }
                }
                Action::Close(id, code, reason) => {
                    if let Some(conn) = self.conns.remove(&id) {
                        let code = match code {
                            CloseCode::Shutdown => CLOSE_SHUTDOWN,
                            CloseCode::Dropped => CLOSE_DROPPED,
                        };
                        conn.peer.close(code, reason);
                    }
                }
                Action::Release(id) => {
                    self.conns.remove(&id);
                }
                Action::Report(event) => self.report(event),
                Action::Record(recording) => {
                    if let Some(event) = self.recorder.record(recording) {
                        self.report(event);
                    }
                }
            }
        }
    }

    /// Tells whoever runs the server, if anyone listens.
    fn report(&self, event: ServerEvent) {
        if let Some(events) = &self.events {
            // The receiver going away only means nobody prints events.
            let _ = events.send(event);
        }
    }
}
