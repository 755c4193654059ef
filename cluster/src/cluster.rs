//! The [`Cluster`]: one server and its clients on one simulated clock.

use std::time::{Duration, Instant};

use lockstep_client::link::connection::{
    self, Action, Connection, Failure, Hooks, NetCommand, NetEvent,
};
use lockstep_conditioner::LinkConfig;
use lockstep_engine::lockstep::net_game::{GameOptions, NetGame};
use lockstep_engine::HasBots;
use lockstep_protocol::{encode_frame, FrameReader, Hello, Platform, SelfTest, ServerMessage};
use lockstep_server::session::ConnId;
use lockstep_server::Config;

use crate::frontend::{Frontend, Out};
use crate::host::Host;
use crate::log::{Log, SERVER};
use crate::network::{Delivery, Path, ToClient, ToServer, Wire};

/// The step of the simulated clock: everything due within a step happens
/// at its end, in the order it was sent. A millisecond is finer than any
/// timer of the system (the server polls every 10 ms, a tick lasts
/// 16.7 ms) and coarse enough that a minute of play is 60 000 steps.
pub const STEP: Duration = Duration::from_millis(1);

/// How long a client takes to notice a server that died: the QUIC idle
/// timeout the server sets (`lockstep_server::idle_timeout`), five seconds
/// at the default drop timeout.
pub const SERVER_LOST_AFTER: Duration = Duration::from_secs(5);

/// How long a first connection waits for a server that is not there
/// before it fails (a reconnection waits what its `Connect` says).
const NO_ANSWER_AFTER: Duration = Duration::from_secs(5);

/// What one client is and does.
#[derive(Debug, Clone)]
pub struct ClientSpec {
    /// Its name (the event log's `who`).
    pub name: String,
    /// Watch instead of play.
    pub spectate: bool,
    /// Its path to the server, both directions alike; the link's seed is
    /// replaced by the cluster's.
    pub link: LinkConfig,
    /// Snapshots kept, fault injection, a pinned input delay.
    pub game: GameOptions,
    /// End each game when the world reaches this tick; `None` plays on.
    pub ticks: Option<u32>,
    /// Games to play on one connection (GameDone between them, Leave after
    /// the last).
    pub games: u32,
    /// How long to try to reconnect to a server lost during a game.
    pub reconnect: Duration,
    /// Hold every input this long before sending it (a machine too slow
    /// to keep up, see `connection::Config::send_delay`).
    pub send_delay: Duration,
}

impl ClientSpec {
    /// A bot called `name` on a clean path, playing one game until it
    /// leaves at `ticks`, reconnecting for a minute.
    pub fn player(name: &str, ticks: u32) -> ClientSpec {
        ClientSpec {
            name: name.to_string(),
            spectate: false,
            link: LinkConfig::default(),
            game: GameOptions::default(),
            ticks: Some(ticks),
            games: 1,
            reconnect: Duration::from_secs(60),
            send_delay: Duration::ZERO,
        }
    }

    /// The same client on `link`.
    #[must_use]
    pub fn on(self, link: LinkConfig) -> ClientSpec {
        ClientSpec { link, ..self }
    }
}

/// Identifies a client of a cluster, in the order they joined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ClientId(pub usize);

#[derive(Debug)]
struct Client<G: HasBots> {
    name: String,
    connection: Connection,
    /// The QUIC connection in use or being opened.
    conn: Option<ConnId>,
    reader: FrameReader,
    frontend: Frontend<G>,
    /// The frontend does nothing until then (the connection runs on).
    frozen_until: Duration,
    /// Events for the frontend that came while it was frozen.
    pending: Vec<NetEvent>,
    /// The whole process does nothing until then, its connection too.
    stopped_until: Duration,
    /// What arrived while the process was stopped, in order: it waits in
    /// the socket's buffer.
    held: Vec<(ConnId, ToClient)>,
    /// When the server was last heard on the connection in use.
    heard: Duration,
}

/// A server and its clients in memory. See the [crate docs](crate).
#[derive(Debug)]
pub struct Cluster<G: HasBots> {
    now: Duration,
    /// The instant simulated time counts from, for the instants the
    /// connection deals in: read once, as any origin would do, and never
    /// compared with the clock again.
    epoch: Instant,
    seed: u64,
    host: Option<Host>,
    /// What the clients say in their Hello about the hosted game.
    self_test: SelfTest,
    clients: Vec<Client<G>>,
    paths: Vec<Path>,
    wire: Wire,
    next_conn: usize,
    log: Log,
}

impl<G: HasBots> Cluster<G> {
    /// A server running `config` (resuming the game it names) at time
    /// zero, no clients yet; `seed` decides every loss, delay and bot.
    pub fn new(config: Config, seed: u64) -> Cluster<G> {
        let self_test = SelfTest {
            game: G::NAME.to_string(),
            hash: config.self_test.unwrap_or_else(G::self_test),
            pinned: G::SELF_TEST_PIN,
        };
        let mut cluster = Cluster {
            now: Duration::ZERO,
            epoch: lockstep_client::io::clock::now(),
            seed,
            host: None,
            self_test,
            clients: Vec::new(),
            paths: Vec::new(),
            wire: Wire::default(),
            next_conn: 1,
            log: Log::default(),
        };
        cluster.start_server(config);
        cluster
    }

    /// Simulated time since the cluster started.
    pub fn now(&self) -> Duration {
        self.now
    }

    /// The event log so far.
    pub fn log(&self) -> &Log {
        &self.log
    }

    /// A client joins now: it starts connecting at once.
    pub fn join(&mut self, spec: ClientSpec) -> ClientId {
        let index = self.clients.len();
        let config = connection::Config {
            hello: Hello {
                protocol_version: lockstep_protocol::PROTOCOL_VERSION,
                name: spec.name.clone(),
                spectate: spec.spectate,
                password: None,
                platform: Platform {
                    target: "in-memory".into(),
                    ..Platform::default()
                },
                self_tests: vec![self.self_test.clone()],
                ready: true,
                resume: None,
            },
            hooks: Hooks {
                send_delay: spec.send_delay,
                ..Hooks::default()
            },
            reliable: false,
            reconnect: spec.reconnect,
        };
        let bot_seed = self.seed ^ (index as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.paths.push(Path::new(spec.link, self.seed, index));
        self.clients.push(Client {
            name: spec.name,
            connection: Connection::new(config, self.epoch + self.now),
            conn: None,
            reader: FrameReader::new(),
            frontend: Frontend::new(spec.game, bot_seed, spec.ticks, spec.games, self.epoch),
            frozen_until: Duration::ZERO,
            pending: Vec::new(),
            stopped_until: Duration::ZERO,
            held: Vec::new(),
            heard: self.now,
        });
        self.log
            .push(self.now, &self.clients[index].name.clone(), "joins".into());
        self.drive_connection(index);
        ClientId(index)
    }

    /// The game `client` is playing now, if any.
    pub fn game(&self, client: ClientId) -> Option<&NetGame<G>> {
        self.clients[client.0].frontend.game()
    }

    /// The tick and hash `client`'s world had when its last game ended.
    pub fn final_hash(&self, client: ClientId) -> Option<(lockstep_protocol::Tick, u64)> {
        self.clients[client.0].frontend.last_final
    }

    /// Whether `client`'s connection is over.
    pub fn is_closed(&self, client: ClientId) -> bool {
        self.clients[client.0].frontend.closed
    }

    /// `client`'s frontend stops for `duration` from now: no frames, no
    /// inputs, events queue up (a frozen window, a stalled game thread);
    /// its connection keeps running, as the network thread would. A whole
    /// process that stops is [`Cluster::stop`].
    pub fn freeze(&mut self, client: ClientId, duration: Duration) {
        let client = &mut self.clients[client.0];
        client.frozen_until = self.now + duration;
        let name = client.name.clone();
        self.log.push(
            self.now,
            &name,
            format!("frozen ms={}", duration.as_millis()),
        );
    }

    /// `client`'s whole process stops for `duration` from now (SIGSTOP, a
    /// suspended laptop): no frames, no timers, and what arrives waits in
    /// the socket's buffer. When it goes on, a server silent for
    /// [`SERVER_LOST_AFTER`] by then is lost, as QUIC's idle timer says
    /// before the buffer is read; else the buffer is read in order.
    pub fn stop(&mut self, client: ClientId, duration: Duration) {
        let client = &mut self.clients[client.0];
        client.stopped_until = self.now + duration;
        client.frozen_until = client.stopped_until;
        let name = client.name.clone();
        self.log.push(
            self.now,
            &name,
            format!("stopped ms={}", duration.as_millis()),
        );
    }

    /// The server dies now: its session is dropped with whatever it had
    /// not sent, and its clients notice [`SERVER_LOST_AFTER`] later.
    pub fn kill_server(&mut self) {
        let Some(host) = self.host.take() else {
            return;
        };
        for (conn, client) in host.connections() {
            let failed = ToClient::Failed(
                Failure::ServerLost,
                "lost the server: nothing heard from it for 5 s".into(),
            );
            self.wire.schedule(
                self.now + SERVER_LOST_AFTER,
                Delivery::Down(client, conn, failed),
            );
        }
        drop(host);
        self.log.push(self.now, SERVER, "killed".into());
    }

    /// A server starts now with `config` (after [`Cluster::kill_server`],
    /// typically with [`Config::resume`] set).
    pub fn start_server(&mut self, config: Config) {
        self.log.push(self.now, SERVER, "started".into());
        self.host = Some(Host::start(config, self.now));
        self.execute_server();
    }

    /// Runs the cluster for `duration` of simulated time.
    pub fn run_for(&mut self, duration: Duration) {
        let until = self.now + duration;
        while self.now < until {
            self.step();
        }
    }

    /// Runs until `done` holds, for at most `limit` of simulated time;
    /// whether it held.
    pub fn run_until(
        &mut self,
        limit: Duration,
        mut done: impl FnMut(&Cluster<G>) -> bool,
    ) -> bool {
        let until = self.now + limit;
        while self.now < until {
            if done(self) {
                return true;
            }
            self.step();
        }
        done(self)
    }

    /// Runs until every client's connection is over and the server has
    /// heard the last of them, for at most `limit`; whether that happened.
    pub fn run_until_closed(&mut self, limit: Duration) -> bool {
        self.run_until(limit, |c| {
            c.wire.is_empty() && c.clients.iter().all(|client| client.frontend.closed)
        })
    }

    /// One step of the clock: deliveries, the server's poll, then each
    /// client's timers and frame, in join order.
    pub fn step(&mut self) {
        self.now += STEP;
        let now = self.now;
        while let Some(delivery) = self.wire.next_arrived(now) {
            match delivery {
                Delivery::Up(conn, what) => {
                    if let Some(host) = &mut self.host {
                        host.receive(conn, what, now, &self.paths);
                        self.execute_server();
                    }
                }
                Delivery::Down(index, conn, what) => self.deliver(index, conn, what),
            }
        }
        if let Some(host) = &mut self.host {
            host.poll(now, &self.paths);
            self.execute_server();
        }
        for index in 0..self.clients.len() {
            match self.clients[index].stopped_until {
                until if until > now => continue,
                Duration::ZERO => {}
                _ => self.go_on(index),
            }
            let client = &mut self.clients[index];
            if client.connection.poll_timeout().is_some_and(|at| at <= now) {
                let path = self.paths[index].client_stats();
                client.connection.handle_timeout(now, path);
                self.drive_connection(index);
            }
            self.frame(index);
        }
    }

    fn execute_server(&mut self) {
        if let Some(host) = &mut self.host {
            host.execute(self.now, &mut self.wire, &mut self.paths, &mut self.log);
        }
    }

    /// Client `index`'s stopped process goes on: its connection finds
    /// the server lost if it was silent too long, else reads what waited.
    fn go_on(&mut self, index: usize) {
        let now = self.now;
        let client = &mut self.clients[index];
        client.stopped_until = Duration::ZERO;
        let held = std::mem::take(&mut client.held);
        let name = client.name.clone();
        self.log.push(now, &name, "continued".into());
        let silence = now.saturating_sub(client.heard);
        if client.conn.is_some() && silence >= SERVER_LOST_AFTER {
            client.conn = None;
            let why = format!(
                "lost the server: nothing heard from it for {} s",
                silence.as_secs()
            );
            client
                .connection
                .handle_failure(Failure::ServerLost, why, now);
            self.drive_connection(index);
            return;
        }
        for (conn, what) in held {
            self.deliver(index, conn, what);
        }
    }

    /// Something arrived for client `index` on connection `conn`.
    fn deliver(&mut self, index: usize, conn: ConnId, what: ToClient) {
        let now = self.now;
        let client = &mut self.clients[index];
        if client.stopped_until > now {
            client.held.push((conn, what));
            return;
        }
        if client.conn != Some(conn) {
            return;
        }
        client.heard = now;
        match what {
            ToClient::Connected => client.connection.handle_connected(now),
            ToClient::Frame(bytes) => {
                client.reader.push(&bytes);
                loop {
                    match client.reader.next_message::<ServerMessage>() {
                        Ok(Some(message)) => client.connection.handle_message(message, now),
                        Ok(None) => break,
                        Err(e) => {
                            client.conn = None;
                            let why = format!("malformed control message: {e}");
                            client.connection.handle_failure(Failure::Other, why, now);
                            break;
                        }
                    }
                }
            }
            ToClient::Datagram(bytes) => client.connection.handle_datagram(&bytes, now),
            ToClient::StreamEnd => {
                client.conn = None;
                if !client.connection.is_closed() {
                    let why = "the server ended the control stream".to_string();
                    client
                        .connection
                        .handle_failure(Failure::NoServer, why, now);
                }
            }
            ToClient::Failed(failure, why) => {
                client.conn = None;
                client.connection.handle_failure(failure, why, now);
            }
        }
        self.drive_connection(index);
    }

    /// Carries out everything client `index`'s connection asked for, as
    /// `lockstep_client::io::link` does; the frontend's answers go back in.
    fn drive_connection(&mut self, index: usize) {
        let now = self.now;
        while let Some(action) = self.clients[index].connection.poll_action() {
            let client = &mut self.clients[index];
            let path = &mut self.paths[index];
            match action {
                Action::Connect { answer_within } => {
                    let conn = ConnId(self.next_conn);
                    self.next_conn += 1;
                    client.conn = Some(conn);
                    client.heard = now;
                    client.reader = FrameReader::new();
                    match &mut self.host {
                        Some(host) => {
                            host.accept(conn, index);
                            let up = Delivery::Down(index, conn, ToClient::Connected);
                            self.wire.schedule(now + path.rtt(), up);
                        }
                        None => {
                            let failed = ToClient::Failed(
                                Failure::NoServer,
                                "no answer from the server".into(),
                            );
                            let at = now + answer_within.unwrap_or(NO_ANSWER_AFTER);
                            self.wire.schedule(at, Delivery::Down(index, conn, failed));
                        }
                    }
                }
                Action::Send(message) => {
                    let (Some(conn), Ok(frame)) = (client.conn, encode_frame(&message)) else {
                        continue;
                    };
                    path.count_frame(true, frame.len());
                    let at = path.stream_arrival(now);
                    self.wire
                        .schedule(at, Delivery::Up(conn, ToServer::Frame(frame.into())));
                }
                Action::Datagram(bytes) => {
                    let Some(conn) = client.conn else {
                        continue;
                    };
                    let bytes = bytes::Bytes::from(bytes);
                    for at in path.send_up(now, bytes.len()) {
                        self.wire
                            .schedule(at, Delivery::Up(conn, ToServer::Datagram(bytes.clone())));
                    }
                }
                Action::Welcome {
                    player,
                    players_needed,
                } => self.tell_frontend(
                    index,
                    NetEvent::Welcome {
                        player,
                        players_needed,
                        first_use: None,
                        fingerprint: None,
                    },
                ),
                Action::Event(event) => self.tell_frontend(index, event),
                Action::Close { closed, ending } => {
                    if let Some(conn) = client.conn.take() {
                        let why = match ending {
                            connection::Ending::Close(why) | connection::Ending::Linger(why) => {
                                why.to_string()
                            }
                            connection::Ending::Release => "released".to_string(),
                        };
                        let at = path.stream_arrival(now);
                        self.wire
                            .schedule(at, Delivery::Up(conn, ToServer::Closed(why)));
                    }
                    self.tell_frontend(index, NetEvent::Closed(closed));
                }
            }
        }
    }

    /// Hands the frontend an event, or keeps it while the frontend is
    /// frozen.
    fn tell_frontend(&mut self, index: usize, event: NetEvent) {
        let client = &mut self.clients[index];
        if client.frozen_until > self.now {
            client.pending.push(event);
            return;
        }
        let out = client.frontend.handle(event, self.now);
        self.carry_out(index, out);
    }

    /// Client `index`'s frame, unless its frontend is frozen; events kept
    /// while it was come first.
    fn frame(&mut self, index: usize) {
        let now = self.now;
        let client = &mut self.clients[index];
        if client.frozen_until > now {
            return;
        }
        if client.frozen_until > Duration::ZERO {
            client.frozen_until = Duration::ZERO;
            let name = client.name.clone();
            self.log.push(now, &name, "thawed".into());
            for event in std::mem::take(&mut self.clients[index].pending) {
                self.tell_frontend(index, event);
            }
        }
        let out = self.clients[index].frontend.frame(now);
        self.carry_out(index, out);
    }

    /// Logs what the frontend said and gives its commands to the
    /// connection.
    fn carry_out(&mut self, index: usize, out: Out) {
        let name = self.clients[index].name.clone();
        for line in out.lines {
            self.log.push(self.now, &name, line);
        }
        if out.commands.is_empty() {
            return;
        }
        for command in out.commands {
            let path = self.paths[index].client_stats();
            let leave = matches!(command, NetCommand::Leave);
            self.clients[index]
                .connection
                .handle_command(command, self.now, path);
            if leave {
                break;
            }
        }
        self.drive_connection(index);
    }
}
