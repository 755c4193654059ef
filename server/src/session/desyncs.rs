//! What the session makes of the players' hash reports: the desync check
//! ([`crate::desync_check`]) compares them, every client hears of a desync
//! at once (each dumps the tick), the players are asked for their per-tick
//! hashes to pinpoint where it began, and the desync is announced once
//! they answer or the wait is over. When the game ends, its verdict says
//! which machines agreed. A game resumed after a restart judges the
//! reports its replay holds first, so the verdict remembers them.

use std::collections::BTreeSet;
use std::time::Duration;

use lockstep_protocol::{DesyncNotice, PlayerId, ServerMessage, Tick};
use tracing::{debug, info, warn};

use super::traces::{TraceWait, MAX_TRACE_WAITS};
use super::{Action, ConnId, Role, Session};
use crate::desync_check::{Desync, Pinpoint, PINPOINT_WAIT};
use crate::recording::Recording;
use crate::{OnDesync, ServerEvent};

impl Session {
    /// A player's world hash at `tick`: recorded, and compared once every
    /// player's report of the tick is in.
    pub(super) fn take_hash_report(&mut self, conn: ConnId, tick: Tick, hash: u64, now: Duration) {
        let Some(Role::Player(player)) = self.clients.get(&conn).map(|c| c.role) else {
            return;
        };
        let Some(game) = &mut self.game else {
            return;
        };
        if game.hashes.report(player, tick, hash) && game.recording {
            let recording = Recording::Hash { tick, player, hash };
            self.actions.push(Action::Record(recording));
        }
        self.judge_hashes(now);
    }

    /// A player's answer to the desync notice of `tick`: its hashes from
    /// `first_tick` on. Only a player's answer to a pending desync counts.
    pub(super) fn take_tick_hashes(
        &mut self,
        conn: ConnId,
        tick: Tick,
        first_tick: Tick,
        hashes: Vec<u64>,
        now: Duration,
    ) {
        let Some(Role::Player(player)) = self.clients.get(&conn).map(|c| c.role) else {
            return;
        };
        let pending = self
            .game
            .as_mut()
            .and_then(|game| game.pinpoints.iter_mut().find(|p| p.desync.tick == tick));
        let Some(pinpoint) = pending else {
            debug!(%player, %tick, "tick hashes for no pending desync ignored");
            return;
        };
        if let Err(e) = pinpoint.answer(player, first_tick, hashes) {
            debug!(%player, %tick, %first_tick, error = %e, "tick hashes ignored");
        }
        self.settle_pinpoints(Some(now));
    }

    /// Compares the hash reports that are complete. Every client is told
    /// of a new desync at once (it dumps the tick), and its players are
    /// asked for their per-tick hashes; the desync is announced once
    /// [`Session::settle_pinpoints`] has them.
    fn judge_hashes(&mut self, now: Duration) {
        let Some(game) = &mut self.game else {
            return;
        };
        let relay = &game.relay;
        let desyncs = game.hashes.judge(|tick| relay.players_at(tick));
        for desync in desyncs {
            self.pinpoint(desync, now);
        }
        self.settle_pinpoints(Some(now));
    }

    /// Tells every client of a new desync and asks its reporters still
    /// connected for their per-tick hashes.
    fn pinpoint(&mut self, desync: Desync, now: Duration) {
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
        if let Some(game) = &mut self.game {
            let pinpoint = Pinpoint::new(desync, asked, now + PINPOINT_WAIT);
            game.pinpoints.push_back(pinpoint);
        }
    }

    /// Judges the hash reports of a game resumed from its replay, as the
    /// server that recorded them did, so the verdict counts them and names
    /// whom they found diverged. Every tick the file holds reports of is
    /// judged at once: a report that never reached the file was lost with
    /// the crash, like any in flight. A desync the file records was
    /// announced before the restart; one it lacks (the server died while
    /// pinpointing it) is pinpointed again, with nobody to ask, and
    /// announced by the next [`Session::settle_pinpoints`].
    pub(super) fn judge_recorded(
        &mut self,
        reports: Vec<(Tick, PlayerId, u64)>,
        announced: &BTreeSet<Tick>,
        now: Duration,
    ) {
        let Some(game) = &mut self.game else {
            return;
        };
        for (tick, player, hash) in reports {
            game.hashes.report(player, tick, hash);
        }
        let desyncs = game.hashes.judge(|_| Vec::new());
        for desync in desyncs {
            if announced.contains(&desync.tick) {
                info!(tick = %desync.tick, diverged = ?desync.diverged, "desync known from the replay");
            } else {
                self.pinpoint(desync, now);
            }
        }
    }

    /// Announces the desyncs whose per-tick hashes are in (or whose wait
    /// is over at `now`; every one when `now` is `None`, as the game
    /// ends), oldest first: the line with the first divergent tick, and
    /// [`ServerMessage::Pinpointed`] to every client so it dumps that
    /// tick. With [`OnDesync::Stop`] the first one ends the game.
    pub(super) fn settle_pinpoints(&mut self, now: Option<Duration>) {
        loop {
            let Some(game) = &mut self.game else {
                return;
            };
            let due = game
                .pinpoints
                .front()
                .is_some_and(|pinpoint| now.is_none_or(|now| pinpoint.is_due(now)));
            if !due {
                return;
            }
            let Some(pinpoint) = game.pinpoints.pop_front() else {
                return;
            };
            let first = pinpoint.first();
            let desync = pinpoint.desync;
            let names: Vec<String> = desync.diverged.iter().map(|&id| self.name_of(id)).collect();
            warn!(tick = %desync.tick, diverged = ?names, majority = ?desync.majority, first = ?first, "desync");
            if self.game.as_ref().is_some_and(|g| g.recording) {
                let diverged = desync.diverged.clone();
                let event = lockstep_protocol::GameEvent::Desync { diverged, first };
                let recording = Recording::Event(desync.tick, event);
                self.actions.push(Action::Record(recording));
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
                if let Some(game) = &mut self.game {
                    if game.traces.len() == MAX_TRACE_WAITS {
                        game.traces.pop_front();
                    }
                    let wait = TraceWait::new(first, &desync.diverged, &desync.reporters);
                    game.traces.push_back(wait);
                }
            }
            if now.is_some() && self.config.on_desync == OnDesync::Stop {
                let tick = self.game.as_ref().map_or(Tick(0), |g| g.relay.next_tick());
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

    /// Prints the verdict of the running game, if one runs: how many ticks
    /// and reports it rests on, and which machines agreed or diverged. The
    /// stand-ins not yet reported come first.
    pub(super) fn report_verdict(&mut self) {
        let unreported = self
            .game
            .as_mut()
            .map(|game| game.laggards.flush_all())
            .unwrap_or_default();
        for report in unreported {
            self.report_laggard(report);
        }
        let Some(game) = &self.game else {
            return;
        };
        let diverged_players = game.hashes.diverged();
        let mut agreed = Vec::new();
        let mut diverged = Vec::new();
        for (player, platform) in &game.platforms {
            if diverged_players.contains(player) {
                diverged.push(format!("{}@{}", self.name_of(*player), platform.triple()));
            } else {
                agreed.push(platform.triple().to_string());
            }
        }
        let verdict = ServerEvent::Verdict {
            ticks: game.relay.next_tick(),
            checks: game.hashes.compared(),
            agreed,
            diverged,
        };
        info!(%verdict, "game verdict");
        self.emit(verdict);
    }
}
