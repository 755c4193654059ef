//! The session task: owns the lobby and the [`Relay`] of the running game.
//!
//! Connection tasks feed it [`SessionEvent`]s (already decoded, and stamped
//! with the connection they came from, so nobody can speak for another
//! player); it answers with control messages and bundle datagrams.

use std::collections::BTreeMap;
use std::time::Duration;

use bytes::Bytes;
use lockstep_protocol::{
    DesyncNotice, InputDatagram, PlayerId, Refusal, ReplayHeader, RosterEntry, ServerMessage,
    Start, Tick, MAX_DATAGRAM_SIZE, PROTOCOL_VERSION,
};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tracing::{debug, info, warn};

use crate::hash_check::HashCheck;
use crate::recording::Recorder;
use crate::relay::{Drop, DropReason, Relay};
use crate::{Config, OnDesync, ServerEvent};

/// How often the session checks timeouts and repeats unacknowledged
/// bundles. Well under one 60 Hz tick, so a lost datagram during a stall is
/// repaired within about two ticks.
const POLL_INTERVAL: Duration = Duration::from_millis(10);

/// Repeat unacknowledged bundles to a client we have sent nothing to for
/// this long. Longer than a tick (new bundles carry the repeats for free
/// while the game runs) and short enough to repair a loss during a stall.
const RESEND_AFTER: Duration = Duration::from_millis(30);

/// Longest accepted player name, in characters.
pub const MAX_NAME_CHARS: usize = 32;

/// Identifies one QUIC connection (quinn's `stable_id`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct ConnId(pub usize);

/// What connection tasks tell the session.
#[derive(Debug)]
pub(crate) enum SessionEvent {
    /// A client said a valid Hello and wants a slot.
    Join {
        conn_id: ConnId,
        name: String,
        conn: quinn::Connection,
        control: mpsc::Sender<ServerMessage>,
        reply: oneshot::Sender<Result<PlayerId, Refusal>>,
    },
    /// A decoded input datagram.
    Inputs(ConnId, InputDatagram),
    /// The client said Leave.
    Leave(ConnId),
    /// The client's world hash at a tick.
    HashReport(ConnId, Tick, u64),
    /// The connection is gone (closed, lost, or broke the protocol).
    Disconnected(ConnId, String),
}

#[derive(Debug)]
struct Member {
    conn_id: ConnId,
    name: String,
    conn: quinn::Connection,
    control: mpsc::Sender<ServerMessage>,
    last_sent: Instant,
}

pub(crate) struct Session {
    config: Config,
    members: BTreeMap<PlayerId, Member>,
    relay: Option<Relay>,
    hashes: HashCheck,
    recorder: Option<Recorder>,
    epoch: Instant,
    events: Option<mpsc::UnboundedSender<ServerEvent>>,
}

impl Session {
    pub(crate) fn new(config: Config, events: Option<mpsc::UnboundedSender<ServerEvent>>) -> Self {
        Session {
            config,
            members: BTreeMap::new(),
            relay: None,
            hashes: HashCheck::new(),
            recorder: None,
            epoch: Instant::now(),
            events,
        }
    }

    fn now(&self) -> Duration {
        self.epoch.elapsed()
    }

    fn emit(&self, event: ServerEvent) {
        if let Some(events) = &self.events {
            // The receiver going away only means nobody prints events.
            let _ = events.send(event);
        }
    }

    /// Runs until `shutdown` fires or every event sender is gone.
    pub(crate) async fn run(
        mut self,
        mut rx: mpsc::Receiver<SessionEvent>,
        shutdown: impl std::future::Future<Output = ()>,
    ) {
        let mut poll = tokio::time::interval(POLL_INTERVAL);
        poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tokio::pin!(shutdown);
        loop {
            tokio::select! {
                event = rx.recv() => match event {
                    Some(event) => self.handle(event),
                    None => break,
                },
                _ = poll.tick() => self.poll(),
                _ = &mut shutdown => break,
            }
        }
        self.shut_down().await;
    }

    fn handle(&mut self, event: SessionEvent) {
        match event {
            SessionEvent::Join {
                conn_id,
                name,
                conn,
                control,
                reply,
            } => {
                let result = self.join(conn_id, name, conn, control);
                // A dropped reply means the connection task already ended.
                let _ = reply.send(result);
                if self.relay.is_none() && self.members.len() == usize::from(self.config.players) {
                    self.start();
                }
            }
            SessionEvent::Inputs(conn_id, datagram) => {
                let now = self.now();
                let Some(player) = self.player_of(conn_id) else {
                    return;
                };
                let Some(relay) = &mut self.relay else {
                    return;
                };
                let outcome = relay.receive(player, &datagram, now);
                if outcome.out_of_window > 0 {
                    debug!(%player, ?outcome, "inputs outside the window ignored");
                }
                self.advance();
            }
            SessionEvent::Leave(conn_id) => self.remove(conn_id, DropReason::Left, "left"),
            SessionEvent::HashReport(conn_id, tick, hash) => {
                if let Some(player) = self.player_of(conn_id) {
                    if self.hashes.report(player, tick, hash) {
                        if let Some(recorder) = &mut self.recorder {
                            recorder.hash(tick, player, hash);
                        }
                    }
                    self.judge_hashes();
                }
            }
            SessionEvent::Disconnected(conn_id, why) => {
                self.remove(conn_id, DropReason::Disconnected, &why)
            }
        }
    }

    fn player_of(&self, conn_id: ConnId) -> Option<PlayerId> {
        self.members
            .iter()
            .find(|(_, m)| m.conn_id == conn_id)
            .map(|(&id, _)| id)
    }

    fn join(
        &mut self,
        conn_id: ConnId,
        name: String,
        conn: quinn::Connection,
        control: mpsc::Sender<ServerMessage>,
    ) -> Result<PlayerId, Refusal> {
        let refuse = |reason: String| {
            info!(%name, %reason, "join refused");
            Err(Refusal { reason })
        };
        if self.relay.is_some() {
            return refuse(
                "a game is already running on this server; try again when it ends".into(),
            );
        }
        if name.trim().is_empty() || name.chars().count() > MAX_NAME_CHARS {
            return refuse(format!(
                "the name must be 1 to {MAX_NAME_CHARS} characters long"
            ));
        }
        if self.members.values().any(|m| m.name == name) {
            return refuse(format!("the name {name:?} is already taken in this game"));
        }
        let Some(id) = (0..=u8::MAX)
            .map(PlayerId)
            .find(|id| !self.members.contains_key(id))
        else {
            return refuse("the server is full".into());
        };
        let welcome = ServerMessage::Welcome {
            player: id,
            players_needed: self.config.players,
        };
        if control.try_send(welcome).is_err() {
            return refuse("the connection is not accepting messages".into());
        }
        info!(player = %id, %name, "joined the lobby");
        self.emit(ServerEvent::Joined {
            player: id,
            name: name.clone(),
        });
        self.members.insert(
            id,
            Member {
                conn_id,
                name,
                conn,
                control,
                last_sent: Instant::now(),
            },
        );
        Ok(id)
    }

    fn start(&mut self) {
        let roster: Vec<RosterEntry> = self
            .members
            .iter()
            .map(|(&id, m)| RosterEntry {
                id,
                name: m.name.clone(),
            })
            .collect();
        for (&id, member) in &self.members {
            let start = Start {
                seed: self.config.seed,
                tick_rate: self.config.tick_rate,
                input_delay: self.config.input_delay,
                balls: self.config.balls,
                roster: roster.clone(),
                hash_interval: self.config.hash_interval,
                you: id,
            };
            if member
                .control
                .try_send(ServerMessage::Start(start))
                .is_err()
            {
                warn!(player = %id, "could not queue Start; the drop timeout will remove it");
            }
        }
        let ids: Vec<PlayerId> = self.members.keys().copied().collect();
        self.relay = Some(Relay::new(&ids, self.config.drop_timeout, self.now()));
        self.hashes = HashCheck::new();
        self.start_recording(roster.clone());
        info!(players = ids.len(), seed = self.config.seed, "game started");
        self.emit(ServerEvent::Started {
            players: roster.into_iter().map(|r| r.name).collect(),
            seed: self.config.seed,
        });
    }

    fn start_recording(&mut self, roster: Vec<RosterEntry>) {
        let Some(dir) = &self.config.replay_dir else {
            return;
        };
        let header = ReplayHeader {
            protocol_version: PROTOCOL_VERSION,
            build: concat!("lockstep-server ", env!("CARGO_PKG_VERSION")).to_string(),
            recorder: "server".into(),
            started_unix: unix_now(),
            seed: self.config.seed,
            tick_rate: self.config.tick_rate,
            input_delay: self.config.input_delay,
            hash_interval: self.config.hash_interval,
            balls: self.config.balls,
            roster,
        };
        match Recorder::create(dir, &header) {
            Ok(recorder) => {
                info!(path = %recorder.path().display(), "recording");
                self.emit(ServerEvent::Recording {
                    path: recorder.path().to_path_buf(),
                });
                self.recorder = Some(recorder);
            }
            Err(e) => warn!(dir = %dir.display(), error = %e, "cannot record this game"),
        }
    }

    fn remove(&mut self, conn_id: ConnId, reason: DropReason, why: &str) {
        let Some(player) = self.player_of(conn_id) else {
            return;
        };
        match &mut self.relay {
            None => {
                if let Some(member) = self.members.remove(&player) {
                    info!(%player, name = %member.name, why, "left the lobby");
                }
            }
            Some(relay) => {
                if let Some(drop) = relay.remove(player, reason) {
                    self.report_drop(drop);
                    self.advance();
                }
            }
        }
    }

    fn report_drop(&mut self, drop: Drop) {
        let name = self
            .members
            .get(&drop.player)
            .map(|m| m.name.clone())
            .unwrap_or_default();
        warn!(player = %drop.player, %name, tick = %drop.tick, reason = drop.reason.as_str(), "player dropped");
        if let Some(recorder) = &mut self.recorder {
            recorder.left(drop.tick, drop.player, drop.reason.as_str());
        }
        self.emit(ServerEvent::Dropped {
            player: drop.player,
            name,
            tick: drop.tick,
            reason: drop.reason,
        });
    }

    /// Bundles what became complete, sends it, and ends the game when
    /// nobody is left.
    fn advance(&mut self) {
        let Some(relay) = &mut self.relay else {
            return;
        };
        let from = relay.next_tick();
        if relay.complete() > 0 {
            if let Some(recorder) = &mut self.recorder {
                for (tick, bundle) in relay.bundles_from(from) {
                    recorder.bundle(tick, bundle);
                }
            }
            self.broadcast();
        }
        self.forget_departed();
    }

    fn forget_departed(&mut self) {
        let Some(relay) = &self.relay else {
            return;
        };
        let active: Vec<PlayerId> = relay.players().collect();
        let departed: Vec<PlayerId> = self
            .members
            .keys()
            .filter(|id| !active.contains(id))
            .copied()
            .collect();
        for id in departed {
            if let Some(member) = self.members.remove(&id) {
                member
                    .conn
                    .close(crate::CLOSE_DROPPED, b"removed from the game");
            }
        }
        if relay.is_empty() {
            let tick = relay.next_tick();
            info!(%tick, "game over: no players left");
            self.emit(ServerEvent::GameOver { tick });
            self.relay = None;
            if let Some(recorder) = self.recorder.take() {
                recorder.finish("every player left");
            }
        }
    }

    /// Compares the hash reports that are complete and announces desyncs.
    fn judge_hashes(&mut self) {
        let Some(relay) = &self.relay else {
            return;
        };
        let desyncs = self.hashes.judge(|tick| relay.players_at(tick));
        for desync in desyncs {
            let names: Vec<String> = desync
                .diverged
                .iter()
                .map(|id| {
                    self.members
                        .get(id)
                        .map_or_else(|| format!("player{id}"), |m| m.name.clone())
                })
                .collect();
            warn!(tick = %desync.tick, diverged = ?names, majority = ?desync.majority, "desync");
            self.emit(ServerEvent::Desync {
                tick: desync.tick,
                diverged: names.clone(),
            });
            let notice = ServerMessage::Desync(DesyncNotice {
                tick: desync.tick,
                diverged: desync.diverged.clone(),
                majority: desync.majority,
            });
            for member in self.members.values() {
                let _ = member.control.try_send(notice.clone());
            }
            if self.config.on_desync == OnDesync::Stop {
                self.end_game(&format!(
                    "desync at tick {}: {} diverged",
                    desync.tick,
                    names.join(", ")
                ));
                return;
            }
        }
    }

    /// Ends the running game for everyone with `reason`.
    fn end_game(&mut self, reason: &str) {
        let tick = self.relay.as_ref().map_or(Tick(0), Relay::next_tick);
        for member in self.members.values() {
            let _ = member.control.try_send(ServerMessage::Ended {
                reason: reason.to_string(),
            });
        }
        // The connection tasks see the members go: their writers flush the
        // Ended message and the clients close.
        self.members.clear();
        self.relay = None;
        if let Some(recorder) = self.recorder.take() {
            recorder.finish(reason);
        }
        info!(%tick, %reason, "game ended by the server");
        self.emit(ServerEvent::GameOver { tick });
    }

    fn poll(&mut self) {
        let now = self.now();
        let Some(relay) = &mut self.relay else {
            return;
        };
        let drops = relay.poll_timeouts(now);
        for drop in &drops {
            self.report_drop(*drop);
        }
        if !drops.is_empty() {
            self.advance();
        }
        self.resend_stale();
    }

    fn broadcast(&mut self) {
        let ids: Vec<PlayerId> = self.members.keys().copied().collect();
        for id in ids {
            self.send_bundles(id);
        }
    }

    fn resend_stale(&mut self) {
        let Some(relay) = &self.relay else {
            return;
        };
        let stale: Vec<PlayerId> = self
            .members
            .iter()
            .filter(|(&id, m)| !relay.is_up_to_date(id) && m.last_sent.elapsed() >= RESEND_AFTER)
            .map(|(&id, _)| id)
            .collect();
        for id in stale {
            self.send_bundles(id);
        }
    }

    fn send_bundles(&mut self, id: PlayerId) {
        let (Some(relay), Some(member)) = (&self.relay, self.members.get_mut(&id)) else {
            return;
        };
        let limit = member
            .conn
            .max_datagram_size()
            .unwrap_or(0)
            .min(MAX_DATAGRAM_SIZE);
        let Some(bytes) = relay.datagram_for(id, limit) else {
            return;
        };
        if let Err(e) = member.conn.send_datagram(Bytes::from(bytes)) {
            debug!(player = %id, error = %e, "datagram not sent");
        }
        member.last_sent = Instant::now();
    }

    async fn shut_down(&mut self) {
        for member in self.members.values() {
            let _ = member.control.try_send(ServerMessage::Ended {
                reason: "the server is shutting down".into(),
            });
        }
        // Give the writer tasks a moment to put Ended on the wire.
        tokio::time::sleep(Duration::from_millis(100)).await;
        for member in self.members.values() {
            member
                .conn
                .close(crate::CLOSE_SHUTDOWN, b"the server is shutting down");
        }
        self.members.clear();
        if let Some(recorder) = self.recorder.take() {
            recorder.finish("the server shut down");
        }
    }
}

/// Seconds since the Unix epoch, for the replay header and file name.
#[allow(
    clippy::disallowed_methods,
    reason = "a replay records when its game started; nothing simulates with it"
)]
fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
