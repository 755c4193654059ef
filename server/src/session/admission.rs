//! Who gets in: a join's name is checked, a lobby player gets the first
//! free slot, a spectator gets the game so far, and a player of the
//! running game that connects again under its name takes its slot back.
//!
//! A reconnection never pushes out a live player: the old connection must
//! first fall silent for [`TAKEOVER_SILENCE`], and a reconnection still
//! facing a live old connection after [`TAKEOVER_PATIENCE`] is refused.
//! Once the old slot has been bundled out, the player comes back a lead of
//! ticks ahead, after fast-forwarding through the history it is sent.

use std::collections::BTreeSet;
use std::time::Duration;

use lockstep_protocol::{PlayerId, Refusal, ServerMessage, Tick};
use tracing::info;

use super::{Action, Client, CloseCode, ConnId, LinkStats, Outgoing, Role, Session};
use crate::relay::DropReason;
use crate::ServerEvent;

/// Silence after which a player's slot may be taken over by a new
/// connection under its name. An honest client sends something every
/// 100 ms at least, so half a second of silence means it is gone; a live
/// player cannot be pushed out by someone borrowing its name.
const TAKEOVER_SILENCE: Duration = Duration::from_millis(500);

/// How long a reconnection waits for the old connection to fall silent
/// before it is refused.
const TAKEOVER_PATIENCE: Duration = Duration::from_secs(3);

/// Longest accepted player name, in characters.
pub const MAX_NAME_CHARS: usize = 32;

impl Session {
    /// Answers a join ([`super::Event::Join`]) and starts the game when
    /// the lobby is full.
    pub(super) fn admit(
        &mut self,
        conn: ConnId,
        name: String,
        spectate: bool,
        link: LinkStats,
        unix_time: u64,
        now: Duration,
    ) {
        let client = Client {
            name,
            role: Role::Spectator,
            link,
            last_sent: now,
            ack: Tick(0),
            rejoining: false,
            joined_at: now,
        };
        let result = self.join(conn, client, spectate, now);
        let refused = result.is_err();
        self.actions.push(Action::Reply(conn, result));
        if refused {
            self.actions.push(Action::Release(conn));
        }
        let players = self
            .clients
            .values()
            .filter(|c| matches!(c.role, Role::Player(_)))
            .count();
        if self.relay.is_none() && players == usize::from(self.config.players) {
            self.start(now, unix_time);
        }
    }

    fn join(
        &mut self,
        conn: ConnId,
        mut client: Client,
        spectate: bool,
        now: Duration,
    ) -> Result<(), Refusal> {
        let name = client.name.clone();
        let refuse = |reason: String| {
            info!(%name, %reason, "join refused");
            Err(Refusal { reason })
        };
        if name.trim().is_empty()
            || name.chars().count() > MAX_NAME_CHARS
            || name.chars().any(char::is_control)
        {
            return refuse(format!(
                "the name must be 1 to {MAX_NAME_CHARS} printable characters"
            ));
        }
        if spectate {
            info!(%name, "spectator joined");
            if let Some(relay) = &self.relay {
                let start = self.start_message(None, Tick(0), relay.next_tick());
                let history = relay.history(Tick(0), relay.next_tick()).to_vec();
                client.ack = relay.next_tick();
                self.actions.send(conn, ServerMessage::Start(start));
                self.actions.push(Action::Control(
                    conn,
                    Outgoing::History {
                        first_tick: Tick(0),
                        bundles: history,
                    },
                ));
            }
            self.clients.insert(conn, client);
            return Ok(());
        }
        if self.relay.is_some() {
            return self.rejoin(conn, client, now);
        }
        let taken = self
            .clients
            .values()
            .any(|c| c.name == name && matches!(c.role, Role::Player(_)));
        if taken {
            return refuse(format!("the name {name:?} is already taken in this game"));
        }
        let used: BTreeSet<PlayerId> = self
            .clients
            .values()
            .filter_map(|c| match c.role {
                Role::Player(p) => Some(p),
                Role::Spectator => None,
            })
            .collect();
        let Some(id) = (0..=u8::MAX).map(PlayerId).find(|id| !used.contains(id)) else {
            return refuse("the server is full".into());
        };
        client.role = Role::Player(id);
        self.actions.send(
            conn,
            ServerMessage::Welcome {
                player: id,
                players_needed: self.config.players,
            },
        );
        info!(player = %id, %name, "joined the lobby");
        self.emit(ServerEvent::Joined { player: id, name });
        self.clients.insert(conn, client);
        Ok(())
    }

    /// A player of the running game connects again under its name: its old
    /// slot (if still there) is dropped, and it comes back once that slot
    /// has been bundled out.
    fn rejoin(&mut self, conn: ConnId, mut client: Client, now: Duration) -> Result<(), Refusal> {
        let Some(player) = self
            .roster
            .iter()
            .find(|r| r.name == client.name)
            .map(|r| r.id)
        else {
            let reason = "a game is already running on this server: watch it with --spectate, \
                          or join the next one"
                .to_string();
            info!(name = %client.name, %reason, "join refused");
            return Err(Refusal { reason });
        };
        if self
            .clients
            .values()
            .any(|c| c.rejoining && c.role == Role::Player(player))
        {
            let reason = format!("{} is already reconnecting", client.name);
            info!(%reason, "join refused");
            return Err(Refusal { reason });
        }
        info!(%player, name = %client.name, "player reconnecting");
        client.role = Role::Player(player);
        client.rejoining = true;
        client.joined_at = now;
        self.clients.insert(conn, client);
        self.advance(now);
        Ok(())
    }

    /// Drops the old slots of reconnecting players once their old
    /// connection fell silent, and refuses reconnections whose old
    /// connection is still alive after [`TAKEOVER_PATIENCE`]. Returns
    /// whether a slot was dropped.
    pub(super) fn take_over_slots(&mut self, now: Duration) -> bool {
        let Some(relay) = &self.relay else {
            return false;
        };
        let mut takeovers = Vec::new();
        let mut refused = Vec::new();
        for (&conn, client) in self.clients.iter().filter(|(_, c)| c.rejoining) {
            let Role::Player(player) = client.role else {
                continue;
            };
            match relay.silence(player, now) {
                Some(quiet) if quiet >= TAKEOVER_SILENCE => takeovers.push(player),
                Some(_) if now.saturating_sub(client.joined_at) >= TAKEOVER_PATIENCE => {
                    refused.push(conn);
                }
                _ => {}
            }
        }
        for conn in refused {
            if let Some(client) = self.clients.remove(&conn) {
                let reason = format!(
                    "the name {:?} belongs to a player who is still connected",
                    client.name
                );
                info!(name = %client.name, %reason, "reconnection refused");
                self.actions
                    .send(conn, ServerMessage::Refused(Refusal { reason }));
                self.actions.push(Action::Release(conn));
            }
        }
        let dropped = !takeovers.is_empty();
        for player in takeovers {
            let old = self
                .clients
                .iter()
                .find(|(_, c)| c.role == Role::Player(player) && !c.rejoining)
                .map(|(&id, _)| id);
            if let Some(old) = old {
                if self.clients.remove(&old).is_some() {
                    self.actions.push(Action::Close(
                        old,
                        CloseCode::Dropped,
                        "the player connected again elsewhere",
                    ));
                }
            }
            if let Some(relay) = &mut self.relay {
                if let Some(departure) = relay.remove(player, DropReason::Reconnected) {
                    self.report_departure(departure);
                }
            }
        }
        dropped
    }

    /// Finishes the rejoins whose old slot is gone: the player comes back
    /// after a lead long enough to fast-forward through the history.
    pub(super) fn complete_rejoins(&mut self, now: Duration) {
        let Some(relay) = &mut self.relay else {
            return;
        };
        let next = relay.next_tick();
        // One second of game, plus a tick for every thousand ticks of
        // history to replay (a catch-up runs at about a million ticks/s).
        let lead = u32::from(self.config.tick_rate) + next.0 / 1000;
        let mut started = Vec::new();
        for (&conn, client) in self.clients.iter_mut().filter(|(_, c)| c.rejoining) {
            let Role::Player(player) = client.role else {
                continue;
            };
            let Some(first) = relay.rejoin(player, lead, now) else {
                continue;
            };
            client.rejoining = false;
            started.push((conn, player, first));
        }
        for (conn, player, first) in started {
            let Some(relay) = &self.relay else {
                return;
            };
            let history = relay.history(Tick(0), next).to_vec();
            let start = self.start_message(Some(player), first, next);
            if self.clients.contains_key(&conn) {
                self.actions.send(conn, ServerMessage::Start(start));
                self.actions.push(Action::Control(
                    conn,
                    Outgoing::History {
                        first_tick: Tick(0),
                        bundles: history,
                    },
                ));
            }
            let name = self.name_of(player);
            info!(%player, %name, first_tick = %first, "player rejoins");
            self.emit(ServerEvent::Rejoined {
                player,
                name,
                tick: first,
            });
        }
    }
}
