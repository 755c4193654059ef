//! The running game: what exists from a game's Start to its end and means
//! nothing in the lobby ([`RunningGame`]), how a game starts, what a
//! player's departure does, and how a game ends.

use std::collections::{BTreeSet, VecDeque};

use lockstep_protocol::{
    GameSummary, Platform, PlayerId, ReplayHeader, RosterEntry, ServerMessage, Start, Tick,
    PROTOCOL_VERSION,
};
use tracing::{info, warn};

use super::laggards::{LaggardReports, Report};
use super::lobby::game_seed;
use super::{Action, CloseCode, ConnId, Role, Session};
use crate::desync_check::{DesyncCheck, Pinpoint};
use crate::recording::Recording;
use crate::relay::{Departure, Relay};
use crate::snapshots::Snapshots;
use crate::speed::SpeedControl;
use crate::{Config, ServerEvent};

/// A game in progress. The session holds one from the game's Start to its
/// end and none in the lobby, so nothing here needs a meaning between
/// games.
#[derive(Debug)]
pub(super) struct RunningGame {
    /// The game's world seed (each rematch gets a new one).
    pub(super) seed: u64,
    /// The names of every slot, for rejoins.
    pub(super) roster: Vec<RosterEntry>,
    /// The machine of every slot, in slot order: the starting players',
    /// updated when a player comes back on another.
    pub(super) platforms: Vec<(PlayerId, Platform)>,
    /// The game's inputs, bundled tick by tick.
    pub(super) relay: Relay,
    /// The players' hash reports, compared to find desyncs.
    pub(super) hashes: DesyncCheck,
    /// Desyncs waiting for the players' per-tick hashes, oldest first;
    /// each is announced once pinpointed.
    pub(super) pinpoints: VecDeque<Pinpoint>,
    /// Pinpointed desyncs waiting for two players' sync traces of their
    /// first tick, oldest first, at most [`super::traces::MAX_TRACE_WAITS`].
    pub(super) traces: VecDeque<super::traces::TraceWait>,
    /// The game's speed, from the players' capacities.
    pub(super) speed: SpeedControl,
    /// The tick the speed in force was announced from.
    pub(super) speed_from: Tick,
    /// Whether the game's replay is written ([`Action::Record`]): the
    /// server records its games, or the game was resumed from its replay.
    pub(super) recording: bool,
    /// The latest verified snapshot and the request for the next.
    pub(super) snapshots: Snapshots,
    /// Players the server has warned it waits for (once per episode).
    pub(super) waiting_warned: BTreeSet<PlayerId>,
    /// The inputs the relay stood in for, reported at a bounded rate.
    pub(super) laggards: LaggardReports,
    /// The relay's departure count at the last [`Session::forget_departed`].
    pub(super) departures_seen: u64,
    /// Set while a game resumed after a restart waits for its players.
    pub(super) resuming: Option<Resuming>,
}

/// A game resumed after a restart, until it runs again: who has not
/// reconnected yet, and until when they may (`resuming.rs`).
#[derive(Debug)]
pub(super) struct Resuming {
    /// The first tick of the resumed game.
    pub(super) tick: Tick,
    /// Players of the game not back yet.
    pub(super) waiting: BTreeSet<PlayerId>,
    /// When those still missing are dropped.
    pub(super) until: std::time::Duration,
}

impl RunningGame {
    /// A game of `roster`, playing on `platforms`, whose inputs `relay`
    /// bundles, at full speed announced from `speed_from`, recording
    /// nothing yet.
    pub(super) fn new(
        config: &Config,
        seed: u64,
        roster: Vec<RosterEntry>,
        platforms: Vec<(PlayerId, Platform)>,
        relay: Relay,
        speed_from: Tick,
    ) -> RunningGame {
        RunningGame {
            seed,
            roster,
            platforms,
            relay,
            hashes: DesyncCheck::new(),
            pinpoints: VecDeque::new(),
            traces: VecDeque::new(),
            speed: SpeedControl::new(config.tick_rate),
            speed_from,
            recording: false,
            snapshots: Snapshots::new(
                config.game,
                u32::from(config.snapshot_secs) * u32::from(config.tick_rate),
            ),
            waiting_warned: BTreeSet::new(),
            laggards: LaggardReports::default(),
            departures_seen: 0,
            resuming: None,
        }
    }

    /// The Start a client of this game gets: as `you` (a spectator has no
    /// slot), giving inputs from `first_input_tick`, with `history`
    /// bundles to fast-forward through.
    pub(super) fn start_message(
        &self,
        config: &Config,
        you: Option<PlayerId>,
        first_input_tick: Tick,
        history: Tick,
    ) -> Start {
        Start {
            seed: self.seed,
            tick_rate: config.tick_rate,
            input_delay: config.input_delay,
            spec: config.spec.clone(),
            roster: self.roster.clone(),
            hash_interval: config.hash_interval,
            you,
            first_input_tick,
            history: history.0,
            snapshot: None,
            snapshot_hash: None,
            resume: None,
        }
    }
}

impl Session {
    /// Starts the next game with every player in the lobby: everyone is
    /// sent Start, and the game is recorded, its replay named after
    /// `unix_time`.
    pub(super) fn start(&mut self, now: std::time::Duration, unix_time: u64) {
        self.lobby.games += 1;
        let seed = game_seed(self.config.seed, self.lobby.games);
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
        let mut platforms: Vec<(PlayerId, Platform)> = self
            .clients
            .values()
            .filter_map(|c| match c.role {
                Role::Player(id) => Some((id, c.platform.clone())),
                Role::Spectator => None,
            })
            .collect();
        platforms.sort_by_key(|(id, _)| *id);
        let ids: Vec<PlayerId> = roster.iter().map(|r| r.id).collect();
        let relay = Relay::new(
            &ids,
            self.config.drop_timeout,
            self.config.laggard_tolerance,
            now,
            self.config.tick_rate,
        );
        let game = RunningGame::new(
            &self.config,
            seed,
            roster.clone(),
            platforms,
            relay,
            Tick(0),
        );
        for (&conn, client) in &self.clients {
            let you = match client.role {
                Role::Player(id) => Some(id),
                Role::Spectator => None,
            };
            let start = game.start_message(&self.config, you, Tick(0), Tick(0));
            self.actions.send(conn, ServerMessage::Start(start));
        }
        self.game = Some(game);
        self.start_recording(roster.clone(), unix_time);
        info!(
            players = ids.len(),
            game = self.lobby.games,
            seed,
            "game started"
        );
        self.emit(ServerEvent::Started {
            players: roster.into_iter().map(|r| r.name).collect(),
            seed,
        });
    }

    /// Asks for the running game's replay in the replay directory, if the
    /// server records.
    fn start_recording(&mut self, roster: Vec<RosterEntry>, unix_time: u64) {
        let (Some(dir), Some(game)) = (&self.config.replay_dir, &mut self.game) else {
            return;
        };
        let header = ReplayHeader {
            protocol_version: PROTOCOL_VERSION,
            build: concat!("lockstep-server ", env!("CARGO_PKG_VERSION")).to_string(),
            recorder: "server".into(),
            started_unix: unix_time,
            seed: game.seed,
            tick_rate: self.config.tick_rate,
            input_delay: self.config.input_delay,
            hash_interval: self.config.hash_interval,
            spec: self.config.spec.clone(),
            roster,
            platforms: game.platforms.clone(),
        };
        game.recording = true;
        self.actions.push(Action::Record(Recording::Create {
            dir: dir.clone(),
            header: Box::new(header),
        }));
    }

    /// `player` of the running game plays on `platform` from now on: it
    /// came back on another machine, and the verdict names the one it ends
    /// the game on.
    pub(super) fn set_platform(&mut self, player: PlayerId, platform: Platform) {
        let slot = self
            .game
            .as_mut()
            .and_then(|game| game.platforms.iter_mut().find(|(id, _)| *id == player));
        if let Some(slot) = slot {
            slot.1 = platform;
        }
    }

    /// Tells everyone what the relay decided about a player leaving, and
    /// forgets what the game kept of it.
    pub(super) fn report_departure(&mut self, departure: Departure) {
        let player = departure.player;
        if let Some(report) = self.game.as_mut().and_then(|g| g.laggards.flush(player)) {
            self.report_laggard(report);
        }
        if let Some(offer) = self.game.as_mut().and_then(|g| g.snapshots.forget(player)) {
            self.snapshot_outcome(offer);
        }
        let name = self.name_of(player);
        let Some(game) = &mut self.game else {
            return;
        };
        let totals = game
            .relay
            .input_totals(departure.player)
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
        if game.recording {
            self.actions.push(Action::Record(Recording::Left {
                tick: departure.tick,
                player: departure.player,
                reason: departure.reason,
            }));
        }
        for pinpoint in &mut game.pinpoints {
            pinpoint.forget(departure.player);
        }
        game.speed.forget(departure.player);
        self.emit(ServerEvent::Dropped {
            player: departure.player,
            name,
            tick: departure.tick,
            reason: departure.reason,
        });
    }

    /// Bundles what became complete, records and sends it, hands slots
    /// over to reconnecting players, and ends the game when nobody is left.
    pub(super) fn advance(&mut self, now: std::time::Duration) {
        self.bundle_ready(now);
        if self.game.as_ref().is_some_and(|g| g.resuming.is_some()) {
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
    pub(super) fn forget_departed(&mut self) {
        let Some(game) = &mut self.game else {
            return;
        };
        let relay = &game.relay;
        if relay.departures() == game.departures_seen && !relay.is_empty() {
            return;
        }
        game.departures_seen = relay.departures();
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
    pub(super) fn report_laggard(&mut self, report: Report) {
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
    pub(super) fn finish_game(&mut self, tick: Tick, reason: &str) {
        self.settle_pinpoints(None);
        self.report_verdict();
        // The replay is closed before anyone hears the game is over.
        if let Some(game) = self.game.take() {
            self.lobby.last_game = Some(GameSummary {
                game: self.lobby.games,
                seed: game.seed,
                ticks: tick,
            });
            if game.recording {
                let finish = Recording::Finish(reason.to_string());
                self.actions.push(Action::Record(finish));
            }
        }
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
        self.emit(ServerEvent::GameOver { tick });
        if !self.clients.is_empty() {
            self.send_lobby();
        }
    }
}
