//! The server's side of the cluster: the real [`Session`], and what the
//! QUIC driver (`lockstep_server`'s `io/session.rs` and
//! `io/connection.rs`) does around it, in memory: a connection's first
//! frame is its Hello and becomes a join, later frames and datagrams are
//! decoded with the real codec into events, and the session's actions go
//! out on the wire.
//!
//! Left to the real server and its own tests: the handshake's checks
//! before a join (protocol version, password), the rate limits and the
//! cap on connections without a Hello.

use std::collections::BTreeMap;
use std::time::Duration;

use bytes::Bytes;
use lockstep_client::link::connection::Failure;
use lockstep_protocol::{
    decode, encode_frame, ClientDatagram, ClientMessage, FrameReader, ServerMessage,
    MAX_DATAGRAM_SIZE,
};
use lockstep_server::session::{Action, ConnId, Event, Join, Session, POLL_INTERVAL};
use lockstep_server::{Config, Recorder};

use crate::log::{Log, SERVER};
use crate::network::{Delivery, Path, ToClient, ToServer, Wire};

/// The simulated wall clock at the cluster's start, in seconds since the
/// Unix epoch: replays are named after it (2026-01-01T00:00:00Z).
const UNIX_START: u64 = 1_767_225_600;

/// A connection as the server knows it.
#[derive(Debug)]
struct Conn {
    /// The client at its other end.
    client: usize,
    reader: FrameReader,
    /// Its Hello arrived and went to the session as a join.
    joined: bool,
}

/// A running server.
#[derive(Debug)]
pub(crate) struct Host {
    session: Session,
    conns: BTreeMap<ConnId, Conn>,
    /// Writes the replays the session asks for, as the real server does.
    recorder: Recorder,
    /// When the periodic poll is next due.
    next_poll: Duration,
}

impl Host {
    /// A server started at `now` with `config`, resuming the game it names.
    pub(crate) fn start(mut config: Config, now: Duration) -> Host {
        let resume = config.resume.take();
        let mut host = Host {
            session: Session::new(config),
            conns: BTreeMap::new(),
            recorder: Recorder::new(),
            next_poll: now + POLL_INTERVAL,
        };
        if let Some(game) = resume {
            host.session.resume(game, now);
        }
        host
    }

    /// Client `client` opened connection `conn`.
    pub(crate) fn accept(&mut self, conn: ConnId, client: usize) {
        self.conns.insert(
            conn,
            Conn {
                client,
                reader: FrameReader::new(),
                joined: false,
            },
        );
    }

    /// The connections' clients, for [`Host::kill`].
    pub(crate) fn connections(&self) -> impl Iterator<Item = (ConnId, usize)> + '_ {
        self.conns.iter().map(|(&id, conn)| (id, conn.client))
    }

    /// Something arrived on connection `conn` at `now`.
    pub(crate) fn receive(&mut self, conn: ConnId, what: ToServer, now: Duration, paths: &[Path]) {
        let Some(known) = self.conns.get_mut(&conn) else {
            return;
        };
        match what {
            ToServer::Frame(bytes) => {
                known.reader.push(&bytes);
                let mut events = Vec::new();
                loop {
                    match known.reader.next_message::<ClientMessage>() {
                        Ok(Some(ClientMessage::Hello(hello))) if !known.joined => {
                            known.joined = true;
                            events.push(Event::Join(
                                conn,
                                Box::new(Join {
                                    name: hello.name,
                                    spectate: hello.spectate,
                                    ready: hello.ready,
                                    platform: hello.platform.sanitized(),
                                    self_tests: hello.self_tests,
                                    link: paths[known.client].server_stats(),
                                    unix_time: unix_time(now),
                                    resume: hello.resume,
                                }),
                            ));
                        }
                        Ok(Some(message)) if known.joined => {
                            events.extend(Event::from_message(conn, message, unix_time(now)));
                        }
                        Ok(Some(_)) | Err(_) => {
                            events.push(Event::Disconnected(conn, "broke the protocol".into()));
                            break;
                        }
                        Ok(None) => break,
                    }
                }
                for event in events {
                    self.session.handle(event, now);
                }
            }
            ToServer::Datagram(bytes) if known.joined => {
                if let Ok(ClientDatagram::Inputs(inputs)) = decode(&bytes, MAX_DATAGRAM_SIZE) {
                    self.session.handle(Event::Inputs(conn, inputs), now);
                }
            }
            ToServer::Datagram(_) => {}
            ToServer::Closed(why) => {
                self.conns.remove(&conn);
                self.session.handle(Event::Disconnected(conn, why), now);
            }
        }
    }

    /// The periodic poll and the session's deadlines, if due at `now`.
    pub(crate) fn poll(&mut self, now: Duration, paths: &[Path]) {
        let deadline = self.session.next_deadline().is_some_and(|at| at <= now);
        if now < self.next_poll && !deadline {
            return;
        }
        if now >= self.next_poll {
            self.next_poll += POLL_INTERVAL;
        }
        for (&id, conn) in &self.conns {
            if conn.joined {
                let link = paths[conn.client].server_stats();
                self.session.handle(Event::Link(id, link), now);
            }
        }
        self.session.poll(now);
    }

    /// Carries out the session's actions at `now`, as the QUIC driver does.
    pub(crate) fn execute(
        &mut self,
        now: Duration,
        wire: &mut Wire,
        paths: &mut [Path],
        log: &mut Log,
    ) {
        while let Some(action) = self.session.next_action() {
            match action {
                Action::Control(id, outgoing) => {
                    let Some(conn) = self.conns.get(&id) else {
                        continue;
                    };
                    let client = conn.client;
                    match outgoing.frames() {
                        Ok(frames) => {
                            for frame in frames {
                                send_frame(wire, &mut paths[client], client, id, frame, now);
                            }
                        }
                        Err(e) => log.push(now, SERVER, format!("unencodable message: {e}")),
                    }
                }
                Action::Datagram(id, bytes) => {
                    let Some(conn) = self.conns.get(&id) else {
                        continue;
                    };
                    let client = conn.client;
                    for at in paths[client].send_down(now, bytes.len()) {
                        wire.schedule(
                            at,
                            Delivery::Down(client, id, ToClient::Datagram(bytes.clone())),
                        );
                    }
                }
                Action::Reply(_, Ok(())) => {}
                Action::Reply(id, Err(refusal)) => {
                    let Some(conn) = self.conns.get(&id) else {
                        continue;
                    };
                    let client = conn.client;
                    log.push(now, SERVER, format!("refused reason={:?}", refusal.reason));
                    if let Ok(frame) = encode_frame(&ServerMessage::Refused(refusal)) {
                        send_frame(wire, &mut paths[client], client, id, frame.into(), now);
                    }
                }
                Action::Close(id, _, reason) => {
                    if let Some(conn) = self.conns.remove(&id) {
                        let at = paths[conn.client].stream_arrival(now);
                        let failed = ToClient::Failed(
                            Failure::Other,
                            format!("the server closed the connection: {reason}"),
                        );
                        wire.schedule(at, Delivery::Down(conn.client, id, failed));
                    }
                }
                Action::Release(id) => {
                    if let Some(conn) = self.conns.remove(&id) {
                        let at = paths[conn.client].stream_arrival(now);
                        wire.schedule(at, Delivery::Down(conn.client, id, ToClient::StreamEnd));
                    }
                }
                Action::Report(event) => log.push(now, SERVER, event.to_string()),
                Action::Record(recording) => {
                    if let Some(event) = self.recorder.record(recording) {
                        log.push(now, SERVER, event.to_string());
                    }
                }
            }
        }
    }
}

/// Puts one control frame for client `client` on the wire.
fn send_frame(
    wire: &mut Wire,
    path: &mut Path,
    client: usize,
    conn: ConnId,
    frame: Bytes,
    now: Duration,
) {
    path.count_frame(false, frame.len());
    let at = path.stream_arrival(now);
    wire.schedule(at, Delivery::Down(client, conn, ToClient::Frame(frame)));
}

/// The simulated wall clock at `now`.
fn unix_time(now: Duration) -> u64 {
    UNIX_START + now.as_secs()
}
