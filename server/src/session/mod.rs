//! The session: the lobby and the [`Relay`] of the running game, as a pure
//! state machine in the quinn-proto style.
//!
//! The driver (`io/session.rs`) feeds it [`Event`]s (already decoded, and
//! stamped with the connection they came from, so nobody can speak for
//! another player) and calls [`Session::poll`] every [`POLL_INTERVAL`],
//! each time with `now`, the time since the server started. The session
//! answers with [`Action`]s (control messages, bundle datagrams, closes,
//! replies to joins, events to print) that the driver carries out in
//! order. It reads no clock and owns no socket, so every rule is tested
//! with explicit time; the one thing it does itself is write each game's
//! replay, through `io/recording.rs`, so a bundle is on disk before it is
//! sent.
//!
//! Its driving API is public so that a driver other than the QUIC one can
//! run it: the in-memory cluster (`lockstep-cluster`) wires it to clients
//! on a simulated clock. Such a driver turns an [`Outgoing`] into frames
//! with [`Outgoing::frames`] and a client's control message into an
//! [`Event`] with [`Event::from_message`], as the QUIC driver does.
//!
//! Clients are players or spectators. A player that reconnects under its
//! name while the game runs takes its slot back: the relay removes the old
//! connection's slot, then brings the player back a moment later, after it
//! has fast-forwarded through the history it is sent. Spectators get the
//! same history and bundles but send no inputs, so nobody waits for them.
//!
//! Between games the players wait in the lobby: each is ready or not, and
//! a game starts when every one of them is ready and enough are there. A
//! player that has played what it wanted of a game says GameDone instead
//! of Leave: it leaves the game but stays connected, and when the game is
//! over it is back in the lobby for the next one (a rematch, with a new
//! seed and a new replay).
//!
//! This file holds the state and the event handling, the game's start and
//! end, departures, hash verdicts and the announcements of the game speed
//! that [`SpeedControl`] picks; `admission.rs` decides who gets in
//! (names, slots, rejoins, takeovers), `lobby.rs` who is ready and when a
//! game starts, `fanout.rs` what goes out to every client (bundle
//! datagrams, repeats, the lag indicator) and `laggards.rs` how often the
//! inputs the relay stood in for are reported.

mod admission;
mod fanout;
#[cfg(test)]
mod harness;
mod laggards;
mod lobby;
mod resuming;
mod wire;

pub use admission::MAX_NAME_CHARS;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::Duration;

use bytes::Bytes;
use lockstep_protocol::{
    Bundle, DesyncNotice, GameSummary, InputDatagram, Percent, Platform, PlayerId, Refusal,
    ReplayHeader, Resume, RosterEntry, SelfTest, ServerMessage, SnapshotChunk, Start, Tick,
    PROTOCOL_VERSION,
};
use tracing::{debug, info, warn};

use crate::desync_check::{DesyncCheck, Pinpoint, PINPOINT_WAIT};
use crate::io::recording::Recorder;
use crate::relay::{Departure, DropReason, Relay};
use crate::snapshots::{Offer, Snapshots};
use crate::speed::{lead_ticks, CapacityReport, SpeedChange, SpeedControl};
use crate::{Config, OnDesync, ServerEvent};
use laggards::{LaggardReports, Report};

/// How often the driver calls [`Session::poll`] to check timeouts and
/// repeat unacknowledged bundles. Well under one 60 Hz tick, so a lost
/// datagram during a stall is repaired within about two ticks.
pub const POLL_INTERVAL: Duration = Duration::from_millis(10);

/// Identifies one QUIC connection (quinn's `stable_id`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ConnId(pub usize);

/// What QUIC knows about a connection's path and the session needs: the
/// driver reads it when the client joins and again at every poll.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkStats {
    /// Smoothed round-trip time: the ping of the lag indicator.
    pub rtt: Duration,
    /// Largest datagram the path carries now (0 if the peer takes none):
    /// bundle datagrams are cut to fit.
    pub max_datagram_size: usize,
}

/// What a connection's writer task puts on its control stream.
#[derive(Debug, Clone, PartialEq)]
pub enum Outgoing {
    /// One control message.
    Message(ServerMessage),
    /// One control message already encoded as a frame, shared by every
    /// client it goes to (encoded once, not once per client).
    Frame(Bytes),
    /// Past bundles from `first_tick`, cut into History messages by the
    /// writer so the session never waits on a long history.
    History {
        /// Tick of `bundles[0]`.
        first_tick: Tick,
        /// The bundles.
        bundles: Vec<Bundle>,
    },
    /// A verified snapshot, cut into Snapshot messages by the writer.
    Snapshot {
        /// The tick it is the state after.
        tick: Tick,
        /// The encoded world, shared with every joiner.
        bytes: Bytes,
    },
}

/// What a client brings when it joins, from its Hello and its connection.
#[derive(Debug)]
pub struct Join {
    /// The name from its Hello.
    pub name: String,
    /// Whether it only watches.
    pub spectate: bool,
    /// Whether it is ready for the game as it joins (its Hello says).
    pub ready: bool,
    /// Its machine and build, as its Hello claims (sanitized): shown and
    /// recorded, never trusted.
    pub platform: Platform,
    /// The self-test hashes of the games it has; the one of the hosted
    /// game is compared with [`Config::self_test`]
    /// before it gets anything.
    pub self_tests: Vec<SelfTest>,
    /// Its path, as QUIC sees it at the join.
    pub link: LinkStats,
    /// Seconds since the Unix epoch: the replay of a game this join starts
    /// is named after it.
    pub unix_time: u64,
    /// The game it kept through a lost connection, from its Hello.
    pub resume: Option<Resume>,
}

/// What happened on a connection, as the driver tells the session.
#[derive(Debug)]
pub enum Event {
    /// A client said a valid Hello and wants in. The session answers with
    /// [`Action::Reply`]; a refused join is released right after. Boxed:
    /// joins are rare next to the inputs this enum mostly carries.
    Join(ConnId, Box<Join>),
    /// A decoded input datagram (or Inputs message).
    Inputs(ConnId, InputDatagram),
    /// The client said Leave.
    Leave(ConnId),
    /// The client says it is ready for the next game, or not.
    Ready {
        /// Who.
        conn: ConnId,
        /// Ready or not.
        ready: bool,
        /// Seconds since the Unix epoch: a game this starts is named
        /// after it.
        unix_time: u64,
    },
    /// The client has played what it wanted of the running game and stays
    /// for the next.
    GameDone(ConnId),
    /// The client's world hash at a tick.
    HashReport(ConnId, Tick, u64),
    /// The client's answer to a desync notice: for the desync at the
    /// first tick, its hashes from the second tick on.
    TickHashes(ConnId, Tick, Tick, Vec<u64>),
    /// The connection is gone (closed, lost, or broke the protocol).
    Disconnected(ConnId, String),
    /// Fresh path facts for a connection (the driver sends them with every
    /// poll; RTT and datagram size change over a connection's life).
    Link(ConnId, LinkStats),
    /// The client's report of what its machine sustains.
    Capacity(ConnId, CapacityReport),
    /// A piece of the snapshot the client was asked for.
    Snapshot(ConnId, SnapshotChunk),
}

/// Which QUIC close code a connection is closed with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloseCode {
    /// [`crate::CLOSE_SHUTDOWN`].
    Shutdown,
    /// [`crate::CLOSE_DROPPED`].
    Dropped,
}

/// What the session asks the driver to do, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Queue something on the connection's control stream (dropped, with a
    /// debug line, if the writer's queue is full).
    Control(ConnId, Outgoing),
    /// Send one bundle datagram.
    Datagram(ConnId, Bytes),
    /// Answer the connection's [`Event::Join`].
    Reply(ConnId, Result<(), Refusal>),
    /// Close the connection; the session has forgotten it.
    Close(ConnId, CloseCode, &'static str),
    /// The session has forgotten the connection without closing it: its
    /// writer flushes what is queued (an Ended, a Refused) and finishes
    /// the stream, and the client closes.
    Release(ConnId),
    /// Tell whoever runs the server.
    Report(ServerEvent),
}

/// Actions waiting for the driver. A field of its own, so handlers can
/// queue actions while they walk the clients.
#[derive(Debug, Default)]
struct Actions(VecDeque<Action>);

impl Actions {
    fn send(&mut self, conn: ConnId, message: ServerMessage) {
        self.0
            .push_back(Action::Control(conn, Outgoing::Message(message)));
    }

    fn push(&mut self, action: Action) {
        self.0.push_back(action);
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Player(PlayerId),
    Spectator,
}

#[derive(Debug)]
struct Client {
    name: String,
    role: Role,
    /// The machine it runs on, for the log, the replay and the verdict.
    platform: Platform,
    link: LinkStats,
    /// When a bundle datagram last went to it: one left alone too long
    /// gets its repeats again.
    last_sent: Duration,
    /// A spectator's first unacknowledged bundle (players' acks live in
    /// the relay).
    ack: Tick,
    /// A reconnected player waiting for its old slot to be bundled out.
    rejoining: bool,
    /// When a reconnection asked for its slot.
    joined_at: Duration,
    /// Ready for the next game (counts in the lobby only).
    ready: bool,
    /// Said GameDone: out of the running game, waiting for the next.
    done: bool,
    /// The game it kept through a lost connection: it is sent only the
    /// bundles it lacks.
    resume: Option<Resume>,
}

/// The lobby, the running game and every client of the server.
#[derive(Debug)]
pub struct Session {
    config: Config,
    clients: BTreeMap<ConnId, Client>,
    /// The running game's roster (names of every slot, for rejoins).
    roster: Vec<RosterEntry>,
    /// The machine of every slot of the running game, in slot order: the
    /// starting players', updated when a player comes back on another.
    platforms: Vec<(PlayerId, Platform)>,
    relay: Option<Relay>,
    hashes: DesyncCheck,
    /// Desyncs waiting for the players' per-tick hashes, oldest first;
    /// each is announced once pinpointed.
    pinpoints: VecDeque<Pinpoint>,
    /// The running game's speed, from the players' capacities.
    speed: SpeedControl,
    /// The tick the speed in force was announced from.
    speed_from: Tick,
    recorder: Option<Recorder>,
    /// The running game's latest verified snapshot and the request for
    /// the next.
    snapshots: Snapshots,
    last_status: Duration,
    /// Players the server has warned it waits for (once per episode).
    waiting_warned: BTreeSet<PlayerId>,
    /// The inputs the relay stood in for, reported at a bounded rate.
    laggards: LaggardReports,
    /// The relay's departure count at the last [`Session::forget_departed`].
    departures_seen: u64,
    /// Games started so far: the running game's number, from 1.
    games: u32,
    /// The world seed of the running (or last) game.
    seed: u64,
    /// The game that ended last, for the lobby.
    last_game: Option<GameSummary>,
    /// When the lobby was last sent to everyone in it.
    last_lobby: Duration,
    /// The wall-clock time (Unix seconds) of the latest join or ready
    /// change: a game that starts because a player left the lobby, which
    /// carries no time, is named after it.
    unix_time: u64,
    /// Set while a game resumed after a restart waits for its players.
    resuming: Option<resuming::Resuming>,
    actions: Actions,
}

impl Session {
    /// A session in the lobby, hosting `config`'s game. A game to resume
    /// ([`Config::resume`]) is not taken from it: the driver hands it to
    /// [`Session::resume`] with the time it starts at.
    pub fn new(config: Config) -> Self {
        let speed = SpeedControl::new(config.tick_rate);
        let game = config.game;
        Session {
            seed: config.seed,
            config,
            clients: BTreeMap::new(),
            roster: Vec::new(),
            platforms: Vec::new(),
            relay: None,
            hashes: DesyncCheck::new(),
            pinpoints: VecDeque::new(),
            speed,
            speed_from: Tick(0),
            recorder: None,
            snapshots: Snapshots::new(game, 0),
            last_status: Duration::ZERO,
            waiting_warned: BTreeSet::new(),
            laggards: LaggardReports::default(),
            departures_seen: 0,
            games: 0,
            last_game: None,
            last_lobby: Duration::ZERO,
            unix_time: 0,
            resuming: None,
            actions: Actions::default(),
        }
    }

    /// The next thing the driver should do, oldest first.
    pub fn next_action(&mut self) -> Option<Action> {
        self.actions.0.pop_front()
    }

    fn emit(&mut self, event: ServerEvent) {
        self.actions.push(Action::Report(event));
    }

    /// Takes one event that happened at `now`.
    pub fn handle(&mut self, event: Event, now: Duration) {
        match event {
            Event::Join(conn, join) => self.admit(conn, *join, now),
            Event::Inputs(conn, datagram) => {
                let (Some(relay), Some(client)) = (&mut self.relay, self.clients.get_mut(&conn))
                else {
                    return;
                };
                match client.role {
                    Role::Player(player) => {
                        let outcome = relay.receive(player, &datagram, now);
                        if outcome.out_of_window > 0 || outcome.conflicting > 0 {
                            debug!(%player, ?outcome, "inputs ignored");
                        }
                    }
                    Role::Spectator => {
                        let ack = datagram.bundles_ack.min(relay.next_tick());
                        if ack > client.ack {
                            client.ack = ack;
                        }
                    }
                }
                self.advance(now);
            }
            Event::HashReport(conn, tick, hash) => {
                let Some(Role::Player(player)) = self.clients.get(&conn).map(|c| c.role) else {
                    return;
                };
                if self.hashes.report(player, tick, hash) {
                    if let Some(recorder) = &mut self.recorder {
                        recorder.hash(tick, player, hash);
                    }
                }
                self.judge_hashes(now);
            }
            Event::TickHashes(conn, tick, first_tick, hashes) => {
                let Some(Role::Player(player)) = self.clients.get(&conn).map(|c| c.role) else {
                    return;
                };
                let Some(pinpoint) = self.pinpoints.iter_mut().find(|p| p.desync.tick == tick)
                else {
                    debug!(%player, %tick, "tick hashes for no pending desync ignored");
                    return;
                };
                if let Err(e) = pinpoint.answer(player, first_tick, hashes) {
                    debug!(%player, %tick, %first_tick, error = %e, "tick hashes ignored");
                }
                self.settle_pinpoints(Some(now));
            }
            Event::Leave(conn) => self.remove(conn, DropReason::Left, "left", now),
            Event::Ready {
                conn,
                ready,
                unix_time,
            } => {
                self.unix_time = unix_time;
                self.set_ready(conn, ready, now);
            }
            Event::GameDone(conn) => self.game_done(conn, now),
            Event::Disconnected(conn, why) => {
                self.remove(conn, DropReason::Disconnected, &why, now)
            }
            Event::Link(conn, link) => {
                if let Some(client) = self.clients.get_mut(&conn) {
                    client.link = link;
                }
            }
            Event::Snapshot(conn, chunk) => self.take_snapshot(conn, chunk),
            Event::Capacity(conn, report) => {
                let Some(Role::Player(player)) =
                    self.clients.get(&conn).filter(|c| !c.done).map(|c| c.role)
                else {
                    return;
                };
                if self.relay.is_none() || !self.config.speed_control {
                    return;
                }
                let before = self.speed.speed();
                if let Some(change) = self.speed.report(player, report, now) {
                    self.announce_speed(change, before);
                }
            }
        }
    }

    /// Tells every client the new speed, the tick it starts at (a moment
    /// of play at the `before` speed after the next tick to bundle, and
    /// never before an earlier announcement's tick) and the backlog every
    /// client forgives there.
    fn announce_speed(&mut self, change: SpeedChange, before: Percent) {
        let Some(relay) = &self.relay else {
            return;
        };
        let lead = lead_ticks(self.config.tick_rate, before);
        let from_tick = relay.next_tick().plus(lead).max(self.speed_from);
        self.speed_from = from_tick;
        let postpone = self.speed.backlog_at(from_tick, before);
        // The inputs are timed against the schedule the clients will keep.
        let full_ns = 1_000_000_000 / u64::from(self.config.tick_rate.max(1));
        let tick = Duration::from_nanos(change.percent.tick_ns(full_ns));
        let sent = Duration::from_micros(postpone.as_micros().min(u128::from(u32::MAX)) as u64);
        if let Some(relay) = &mut self.relay {
            relay.change_pace(from_tick, tick, sent);
        }
        let slowest = self.name_of(change.slowest);
        info!(
            percent = change.percent.0,
            %from_tick,
            reason = change.reason.as_str(),
            %slowest,
            capacity = change.capacity.0,
            postpone_ms = postpone.as_millis() as u64,
            "game speed"
        );
        if let Some(recorder) = &mut self.recorder {
            let percent = change.percent;
            recorder.event(from_tick, lockstep_protocol::GameEvent::Speed { percent });
        }
        self.tell_everyone(&ServerMessage::Speed {
            from_tick,
            percent: change.percent,
            postpone_us: sent.as_micros() as u32,
        });
        self.emit(ServerEvent::Speed {
            percent: change.percent,
            from_tick,
            reason: change.reason,
            slowest,
            capacity: change.capacity,
            postpone,
        });
    }

    /// Queues `message` for every client, players and spectators.
    fn tell_everyone(&mut self, message: &ServerMessage) {
        for &conn in self.clients.keys() {
            self.actions.send(conn, message.clone());
        }
    }

    /// How many players are in and whether they play, for the LAN beacon.
    pub fn occupancy(&self) -> crate::Occupancy {
        crate::Occupancy {
            players: u8::try_from(self.connected_players().len()).unwrap_or(u8::MAX),
            playing: self.relay.is_some(),
        }
    }

    /// The slots of the players connected now.
    fn connected_players(&self) -> BTreeSet<PlayerId> {
        self.clients
            .values()
            .filter_map(|c| match c.role {
                Role::Player(player) => Some(player),
                Role::Spectator => None,
            })
            .collect()
    }

    fn player_conn(&self, player: PlayerId) -> Option<ConnId> {
        self.clients
            .iter()
            .find(|(_, c)| c.role == Role::Player(player))
            .map(|(&id, _)| id)
    }

    fn name_of(&self, player: PlayerId) -> String {
        self.roster
            .iter()
            .find(|r| r.id == player)
            .map(|r| r.name.clone())
            .or_else(|| {
                self.clients
                    .values()
                    .find(|c| c.role == Role::Player(player))
                    .map(|c| c.name.clone())
            })
            .unwrap_or_else(|| format!("player{player}"))
    }

    fn start_message(&self, you: Option<PlayerId>, first_input_tick: Tick, history: Tick) -> Start {
        Start {
            seed: self.seed,
            tick_rate: self.config.tick_rate,
            input_delay: self.config.input_delay,
            spec: self.config.spec.clone(),
            roster: self.roster.clone(),
            hash_interval: self.config.hash_interval,
            you,
            first_input_tick,
            history: history.0,
            snapshot: None,
            resume: None,
        }
    }

    fn start(&mut self, now: Duration, unix_time: u64) {
        self.games += 1;
        self.seed = lobby::game_seed(self.config.seed, self.games);
        for client in self.clients.values_mut() {
            client.ready = false;
        }
        let mut roster: Vec<RosterEntry> = self
            .clients
            .values()
            .filter_map(|c| match c.role {
                Role::Player(id) => Some(RosterEntry {
                    id,
                    name: c.name.clone(),
                }),
                Role::Spectator => None,
            })
            .collect();
        roster.sort_by_key(|r| r.id);
        self.roster = roster.clone();
        let mut platforms: Vec<(PlayerId, Platform)> = self
            .clients
            .values()
            .filter_map(|c| match c.role {
                Role::Player(id) => Some((id, c.platform.clone())),
                Role::Spectator => None,
            })
            .collect();
        platforms.sort_by_key(|(id, _)| *id);
        self.platforms = platforms;
        for (&conn, client) in &self.clients {
            let you = match client.role {
                Role::Player(id) => Some(id),
                Role::Spectator => None,
            };
            let start = self.start_message(you, Tick(0), Tick(0));
            self.actions.send(conn, ServerMessage::Start(start));
        }
        let ids: Vec<PlayerId> = roster.iter().map(|r| r.id).collect();
        self.relay = Some(Relay::new(
            &ids,
            self.config.drop_timeout,
            self.config.laggard_tolerance,
            now,
            self.config.tick_rate,
        ));
        self.departures_seen = 0;
        self.hashes = DesyncCheck::new();
        self.snapshots = Snapshots::new(
            self.config.game,
            u32::from(self.config.snapshot_secs) * u32::from(self.config.tick_rate),
        );
        self.speed = SpeedControl::new(self.config.tick_rate);
        self.speed_from = Tick(0);
        self.waiting_warned.clear();
        self.laggards = LaggardReports::default();
        self.start_recording(roster.clone(), unix_time);
        info!(
            players = ids.len(),
            game = self.games,
            seed = self.seed,
            "game started"
        );
        self.emit(ServerEvent::Started {
            players: roster.into_iter().map(|r| r.name).collect(),
            seed: self.seed,
        });
    }

    fn start_recording(&mut self, roster: Vec<RosterEntry>, unix_time: u64) {
        let Some(dir) = &self.config.replay_dir else {
            return;
        };
        let header = ReplayHeader {
            protocol_version: PROTOCOL_VERSION,
            build: concat!("lockstep-server ", env!("CARGO_PKG_VERSION")).to_string(),
            recorder: "server".into(),
            started_unix: unix_time,
            seed: self.seed,
            tick_rate: self.config.tick_rate,
            input_delay: self.config.input_delay,
            hash_interval: self.config.hash_interval,
            spec: self.config.spec.clone(),
            roster,
            platforms: self.platforms.clone(),
        };
        match Recorder::create(dir, &header) {
            Ok(recorder) => {
                info!(path = %recorder.path().display(), "recording");
                let path = recorder.path().to_path_buf();
                self.recorder = Some(recorder);
                self.emit(ServerEvent::Recording { path });
            }
            Err(e) => warn!(dir = %dir.display(), error = %e, "cannot record this game"),
        }
    }

    fn remove(&mut self, conn: ConnId, reason: DropReason, why: &str, now: Duration) {
        let Some(client) = self.clients.get(&conn) else {
            return;
        };
        match (client.role, &mut self.relay) {
            (Role::Spectator, _) => {
                info!(name = %client.name, why, "spectator left");
                self.clients.remove(&conn);
                self.actions.push(Action::Release(conn));
            }
            (Role::Player(player), None) => {
                info!(%player, name = %client.name, why, "left the lobby");
                self.clients.remove(&conn);
                self.actions.push(Action::Release(conn));
                self.lobby_changed(now, self.unix_time);
            }
            (Role::Player(player), Some(_)) if client.done => {
                info!(%player, name = %client.name, why, "left while waiting for the next game");
                self.clients.remove(&conn);
                self.actions.push(Action::Release(conn));
            }
            (Role::Player(player), Some(relay)) => {
                if client.rejoining {
                    self.clients.remove(&conn);
                    self.actions.push(Action::Release(conn));
                    self.advance(now);
                } else if let Some(departure) = relay.remove(player, reason) {
                    self.report_departure(departure);
                    self.advance(now);
                }
            }
        }
    }

    fn report_departure(&mut self, departure: Departure) {
        if let Some(report) = self.laggards.flush(departure.player) {
            self.report_laggard(report);
        }
        if let Some(offer) = self.snapshots.forget(departure.player) {
            self.snapshot_outcome(offer);
        }
        let name = self.name_of(departure.player);
        let totals = self
            .relay
            .as_ref()
            .and_then(|relay| relay.input_totals(departure.player))
            .unwrap_or_default();
        warn!(
            player = %departure.player,
            %name,
            tick = %departure.tick,
            reason = departure.reason.as_str(),
            inputs = totals.accepted,
            repeats_ignored = totals.repeated,
            conflicting_ignored = totals.conflicting,
            out_of_window_ignored = totals.out_of_window,
            "player dropped"
        );
        if let Some(recorder) = &mut self.recorder {
            recorder.left(departure.tick, departure.player, departure.reason.as_str());
        }
        for pinpoint in &mut self.pinpoints {
            pinpoint.forget(departure.player);
        }
        self.speed.forget(departure.player);
        self.emit(ServerEvent::Dropped {
            player: departure.player,
            name,
            tick: departure.tick,
            reason: departure.reason,
        });
    }

    /// Bundles what became complete, records and sends it, hands slots
    /// over to reconnecting players, and ends the game when nobody is left.
    fn advance(&mut self, now: Duration) {
        self.bundle_ready(now);
        if self.resuming.is_some() {
            self.settle_resume(now);
        }
        // Runs for every input datagram: the rejoin bookkeeping only when
        // someone is reconnecting.
        if self.clients.values().any(|c| c.rejoining) {
            if self.take_over_slots(now) {
                self.bundle_ready(now);
            }
            self.complete_rejoins(now);
        }
        self.forget_departed();
    }

    /// Closes the connections of players whose slot the relay removed, and
    /// ends the game when nobody is left. Cheap when nobody left since the
    /// last call.
    fn forget_departed(&mut self) {
        let Some(relay) = &self.relay else {
            return;
        };
        if relay.departures() == self.departures_seen && !relay.is_empty() {
            return;
        }
        self.departures_seen = relay.departures();
        let active: BTreeSet<PlayerId> = relay.players().collect();
        let departed: Vec<ConnId> = self
            .clients
            .iter()
            .filter(|(_, c)| !c.rejoining && !c.done)
            .filter(|(_, c)| matches!(c.role, Role::Player(p) if !active.contains(&p)))
            .map(|(&id, _)| id)
            .collect();
        for id in departed {
            if self.clients.remove(&id).is_some() {
                self.actions.push(Action::Close(
                    id,
                    CloseCode::Dropped,
                    "removed from the game",
                ));
            }
        }
        let rejoining = self.clients.values().any(|c| c.rejoining);
        if relay.is_empty() && !rejoining {
            let tick = relay.next_tick();
            info!(%tick, "game over: no players left");
            self.finish_game(tick, "the game is over: every player left");
        }
    }

    /// Reports stand-ins for a late player's inputs, summed (`laggards.rs`).
    fn report_laggard(&mut self, report: Report) {
        let name = self.name_of(report.player);
        warn!(
            player = %report.player,
            %name,
            tick = %report.tick,
            waited_ms = report.waited.as_millis() as u64,
            count = report.count,
            "late inputs stood in for"
        );
        self.emit(ServerEvent::Substituted {
            player: report.player,
            name,
            tick: report.tick,
            waited: report.waited,
            count: report.count,
        });
    }

    /// Ends the game and returns to the lobby: the players that said
    /// GameDone stay for the next game, not ready yet, and get the lobby
    /// with this game's summary; spectators and any other client are told
    /// why it ended and let go. The recording is closed.
    fn finish_game(&mut self, tick: Tick, reason: &str) {
        self.settle_pinpoints(None);
        self.report_verdict();
        let ended = ServerMessage::Ended {
            reason: reason.to_string(),
        };
        let gone: Vec<ConnId> = self
            .clients
            .iter()
            .filter(|(_, c)| !c.done)
            .map(|(&id, _)| id)
            .collect();
        // Released, the writers flush the Ended message and the clients
        // close.
        for conn in gone {
            self.clients.remove(&conn);
            self.actions.send(conn, ended.clone());
            self.actions.push(Action::Release(conn));
        }
        for client in self.clients.values_mut() {
            client.done = false;
            client.ready = false;
        }
        self.last_game = Some(GameSummary {
            game: self.games,
            seed: self.seed,
            ticks: tick,
        });
        self.relay = None;
        self.resuming = None;
        self.roster.clear();
        self.platforms.clear();
        if let Some(recorder) = self.recorder.take() {
            recorder.finish(reason);
        }
        self.emit(ServerEvent::GameOver { tick });
        if !self.clients.is_empty() {
            self.send_lobby();
        }
    }

    /// Prints the verdict of the running game, if one runs: how many ticks
    /// and reports it rests on, and which machines agreed or diverged. The
    /// stand-ins not yet reported come first.
    fn report_verdict(&mut self) {
        for report in self.laggards.flush_all() {
            self.report_laggard(report);
        }
        let Some(relay) = &self.relay else {
            return;
        };
        let diverged_players = self.hashes.diverged();
        let mut agreed = Vec::new();
        let mut diverged = Vec::new();
        for (player, platform) in &self.platforms {
            if diverged_players.contains(player) {
                diverged.push(format!("{}@{}", self.name_of(*player), platform.triple()));
            } else {
                agreed.push(platform.triple().to_string());
            }
        }
        let verdict = ServerEvent::Verdict {
            ticks: relay.next_tick(),
            checks: self.hashes.compared(),
            agreed,
            diverged,
        };
        info!(%verdict, "game verdict");
        self.emit(verdict);
    }

    /// Compares the hash reports that are complete. Every client is told
    /// of a new desync at once (it dumps the tick), and its players are
    /// asked for their per-tick hashes; the desync is announced once
    /// [`Session::settle_pinpoints`] has them.
    fn judge_hashes(&mut self, now: Duration) {
        let Some(relay) = &self.relay else {
            return;
        };
        let desyncs = self.hashes.judge(|tick| relay.players_at(tick));
        for desync in desyncs {
            let notice = ServerMessage::Desync(DesyncNotice {
                tick: desync.tick,
                diverged: desync.diverged.clone(),
                majority: desync.majority,
                since: desync.since,
            });
            self.tell_everyone(&notice);
            let connected = self.connected_players();
            let asked: Vec<PlayerId> = desync
                .reporters
                .iter()
                .copied()
                .filter(|player| connected.contains(player))
                .collect();
            self.pinpoints
                .push_back(Pinpoint::new(desync, asked, now + PINPOINT_WAIT));
        }
        self.settle_pinpoints(Some(now));
    }

    /// Announces the desyncs whose per-tick hashes are in (or whose wait
    /// is over at `now`; every one when `now` is `None`, as the game
    /// ends), oldest first: the line with the first divergent tick, and
    /// [`ServerMessage::Pinpointed`] to every client so it dumps that
    /// tick. With [`OnDesync::Stop`] the first one ends the game.
    fn settle_pinpoints(&mut self, now: Option<Duration>) {
        while let Some(pinpoint) = self.pinpoints.front() {
            if now.is_some_and(|now| !pinpoint.is_due(now)) {
                return;
            }
            let Some(pinpoint) = self.pinpoints.pop_front() else {
                return;
            };
            let first = pinpoint.first();
            let desync = pinpoint.desync;
            let names: Vec<String> = desync.diverged.iter().map(|&id| self.name_of(id)).collect();
            warn!(tick = %desync.tick, diverged = ?names, majority = ?desync.majority, first = ?first, "desync");
            if let Some(recorder) = &mut self.recorder {
                let diverged = desync.diverged.clone();
                let event = lockstep_protocol::GameEvent::Desync { diverged, first };
                recorder.event(desync.tick, event);
            }
            self.emit(ServerEvent::Desync {
                tick: desync.tick,
                diverged: names.clone(),
                first,
            });
            if let Some(first) = first {
                let pinpointed = ServerMessage::Pinpointed {
                    tick: desync.tick,
                    first,
                };
                self.tell_everyone(&pinpointed);
            }
            if now.is_some() && self.config.on_desync == OnDesync::Stop {
                let tick = self.relay.as_ref().map_or(Tick(0), Relay::next_tick);
                let reason = format!(
                    "desync at tick {}: {} diverged",
                    desync.tick,
                    names.join(", ")
                );
                info!(%tick, %reason, "game ended by the server");
                self.finish_game(tick, &reason);
                return;
            }
        }
    }

    /// When the session next has work that cannot wait for the periodic
    /// poll: a late input to stand in for ([`Relay::next_stand_in`]).
    pub fn next_deadline(&self) -> Option<Duration> {
        self.relay.as_ref()?.next_stand_in()
    }

    /// The periodic work, every [`POLL_INTERVAL`] and at every
    /// [`Session::next_deadline`]: drops silent players,
    /// stands in for late ones, repeats bundles to clients that lack them,
    /// and sends the lag indicator when no bundle carried it.
    pub fn poll(&mut self, now: Duration) {
        // The players a resumed game still waits for when the wait is over
        // go first, as not back; after that a player back but silent is
        // dropped like any other, or the game could wait for it for ever.
        if self.resuming.is_some() {
            self.settle_resume(now);
        }
        let resuming = self.resuming.as_ref().is_some_and(|r| now < r.until);
        let Some(relay) = &mut self.relay else {
            self.refresh_lobby(now);
            return;
        };
        // A resumed game waits for its players without standing in for or
        // dropping anyone until they are back or the wait is over.
        let (departures, substitutions) = if resuming {
            (Vec::new(), Vec::new())
        } else {
            (relay.poll_timeouts(now), relay.poll_laggards(now))
        };
        for departure in departures {
            self.report_departure(departure);
        }
        for substitution in substitutions {
            debug!(
                player = %substitution.player,
                tick = %substitution.tick,
                waited_ms = substitution.waited.as_millis() as u64,
                "late input stood in for"
            );
            if let Some(report) = self.laggards.stood_in(substitution, now) {
                self.report_laggard(report);
            }
        }
        for report in self.laggards.due(now) {
            self.report_laggard(report);
        }
        self.advance(now);
        self.resend_stale(now);
        self.send_lone_status(now);
        self.settle_pinpoints(Some(now));
        self.ask_for_snapshot(now);
    }

    /// Asks the next player for a snapshot when one is due (see
    /// `snapshots.rs`), and reports a request that went unanswered.
    fn ask_for_snapshot(&mut self, now: Duration) {
        let Some(relay) = &self.relay else {
            return;
        };
        let players: Vec<PlayerId> = self
            .clients
            .values()
            .filter(|c| !c.rejoining && !c.done)
            .filter_map(|c| match c.role {
                Role::Player(player) if relay.is_active(player) => Some(player),
                _ => None,
            })
            .collect();
        let next_tick = relay.next_tick();
        let (ask, timed_out) =
            self.snapshots
                .poll(now, self.hashes.confirmed(), next_tick, &players);
        if let Some(offer) = timed_out {
            self.snapshot_outcome(offer);
        }
        if let Some((player, tick)) = ask {
            if let Some(conn) = self.player_conn(player) {
                debug!(%player, %tick, "snapshot requested");
                self.actions
                    .send(conn, ServerMessage::SnapshotRequest { tick });
            }
        }
    }

    /// A piece of a snapshot from a client: only a player's, and only the
    /// one asked for, counts.
    fn take_snapshot(&mut self, conn: ConnId, chunk: SnapshotChunk) {
        let Some(Role::Player(player)) = self.clients.get(&conn).map(|c| c.role) else {
            return;
        };
        let offer = self.snapshots.offer(player, chunk);
        self.snapshot_outcome(offer);
    }

    /// Logs what a snapshot came to; a verified one lets the relay forget
    /// the bundles before it that no client still needs.
    fn snapshot_outcome(&mut self, offer: Offer) {
        match offer {
            Offer::Incomplete => {}
            Offer::Refused { player, tick, why } => {
                let name = self.name_of(player);
                warn!(%player, %name, %tick, reason = %why, "snapshot refused");
            }
            Offer::Verified(tick) => {
                let Some(relay) = &mut self.relay else {
                    return;
                };
                // A spectator or player still fetching older bundles keeps
                // them until it has them.
                let oldest_ack = self
                    .clients
                    .values()
                    .filter_map(|c| match c.role {
                        Role::Spectator => Some(c.ack),
                        Role::Player(player) => relay.datagram_start(player).map(|(ack, _)| ack),
                    })
                    .min()
                    .unwrap_or(tick);
                let dropped = relay.forget_before(tick.min(oldest_ack));
                let bytes = self.snapshots.latest().map_or(0, |v| v.bytes.len());
                info!(%tick, bytes, dropped, kept = relay.next_tick().since(relay.first_kept()), "snapshot verified");
            }
        }
    }

    /// First half of a shutdown: every client is told the server is going.
    /// The driver gives the writers a moment to put that on the wire, then
    /// calls [`Session::shut_down`].
    pub fn announce_shutdown(&mut self) {
        self.tell_everyone(&ServerMessage::Ended {
            reason: "the server is shutting down".into(),
        });
    }

    /// Closes every connection and the recording, after the verdict of a
    /// game still running.
    pub fn shut_down(&mut self) {
        self.settle_pinpoints(None);
        self.report_verdict();
        self.relay = None;
        for conn in std::mem::take(&mut self.clients).into_keys() {
            self.actions.push(Action::Close(
                conn,
                CloseCode::Shutdown,
                "the server is shutting down",
            ));
        }
        if let Some(recorder) = self.recorder.take() {
            recorder.finish("the server shut down");
        }
    }
}

#[cfg(test)]
mod tests;
