//! Snapshots in a running game: the requests for them (see
//! `crate::snapshots`), and a joiner's word that the one it was started
//! from is not the majority's world.
//!
//! A joiner checks every snapshot it starts from against the majority's
//! hash, which its Start carries. One the server could not check (a game
//! it was built without) that a joiner finds off is its sender's: the
//! sender is named, its snapshots are dropped, and the joiner is started
//! again from the next or from tick 0. One the server verified itself
//! that a joiner finds off says the joiner's machine computes the game
//! differently: it is refused, saying so.

use std::time::Duration;

use lockstep_protocol::{PlayerId, Refusal, ServerMessage, SnapshotChunk, Tick, MAX_REASON_CHARS};
use tracing::{debug, info, warn};

use super::{ConnId, Role, Session};
use crate::relay::DropReason;
use crate::snapshots::Offer;
use crate::ServerEvent;

/// What a client was started from, kept until it says the snapshot was
/// off or starts from it: enough to start it again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ServedTo {
    /// The snapshot's tick.
    pub(super) tick: Tick,
    /// Who sent it; `None` for a snapshot the server verified.
    pub(super) sender: Option<PlayerId>,
    /// The first tick it sends inputs for (a player's).
    pub(super) first_input_tick: Tick,
}

impl Session {
    /// Asks the next player for a snapshot when one is due (see
    /// `snapshots.rs`), and reports a request that went unanswered.
    pub(super) fn ask_for_snapshot(&mut self, now: Duration) {
        let Some(game) = &mut self.game else {
            return;
        };
        let relay = &game.relay;
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
            game.snapshots
                .poll(now, game.hashes.confirmed(), next_tick, &players);
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
    pub(super) fn take_snapshot(&mut self, conn: ConnId, chunk: SnapshotChunk) {
        let Some(Role::Player(player)) = self.clients.get(&conn).map(|c| c.role) else {
            return;
        };
        let Some(game) = &mut self.game else {
            return;
        };
        let offer = game.snapshots.offer(player, chunk);
        self.snapshot_outcome(offer);
    }

    /// Logs what a snapshot came to; a verified one lets the relay forget
    /// the bundles before it that no client still needs.
    pub(super) fn snapshot_outcome(&mut self, offer: Offer) {
        match offer {
            Offer::Incomplete => {}
            Offer::Refused { player, tick, why } => {
                let name = self.name_of(player);
                warn!(%player, %name, %tick, reason = %why, "snapshot refused");
            }
            Offer::Kept { player, tick } => {
                let name = self.name_of(player);
                let bytes = self
                    .game
                    .as_ref()
                    .and_then(|g| g.snapshots.for_joiner())
                    .map_or(0, |s| s.bytes.len());
                info!(%player, %name, %tick, bytes, "snapshot kept for joiners to check");
            }
            Offer::Verified(tick) => {
                let Some(game) = &mut self.game else {
                    return;
                };
                let relay = &mut game.relay;
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
                let bytes = game.snapshots.latest().map_or(0, |v| v.bytes.len());
                info!(%tick, bytes, dropped, kept = relay.next_tick().since(relay.first_kept()), "snapshot verified");
            }
        }
    }

    /// A joiner says the snapshot of `tick` it was started from is not
    /// the majority's world. Only the joiner's own last snapshot counts.
    pub(super) fn bad_snapshot(&mut self, conn: ConnId, tick: Tick, reason: &str, now: Duration) {
        let Some(client) = self.clients.get_mut(&conn) else {
            return;
        };
        let Some(served) = client.served.filter(|s| s.tick == tick) else {
            debug!(name = %client.name, %tick, "a snapshot report for no snapshot sent: ignored");
            return;
        };
        client.served = None;
        let by = client.name.clone();
        let role = client.role;
        let reason: String = reason
            .chars()
            .filter(|c| !c.is_control())
            .take(MAX_REASON_CHARS)
            .collect();
        let Some(sender) = served.sender else {
            // The server hashed this world itself and found the majority's
            // hash: the joiner's machine computes it differently.
            let said = format!(
                "your machine does not find the server's verified snapshot of tick {tick} to be \
                 the world the players computed ({reason}): it computes this game differently"
            );
            warn!(name = %by, %tick, %reason, "a joiner disputes a verified snapshot: refused");
            self.actions
                .send(conn, ServerMessage::Refused(Refusal { reason: said }));
            self.remove(conn, DropReason::Left, "disputes a verified snapshot", now);
            return;
        };
        let name = self.name_of(sender);
        warn!(player = %sender, %name, %tick, %by, %reason, "snapshot refused by a joiner");
        self.emit(ServerEvent::SnapshotRefused {
            player: sender,
            name,
            tick,
            by,
            reason,
        });
        if let Some(game) = &mut self.game {
            game.snapshots.disputed(tick, sender);
        }
        let you = match role {
            Role::Player(player) => Some(player),
            Role::Spectator => None,
        };
        if let Some(next) = self.send_game_so_far(conn, you, served.first_input_tick) {
            if let Some(client) = self.clients.get_mut(&conn).filter(|_| you.is_none()) {
                client.ack = next;
            }
        }
    }
}
