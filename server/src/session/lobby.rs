//! The lobby: who is ready, when a game starts, what everyone in the lobby
//! is told, and each game's seed.
//!
//! # Rules
//! - A player joins ready or not, as its Hello says (bots and headless
//!   clients join ready, a person in a window presses a key), and changes
//!   its mind with [`lockstep_protocol::ClientMessage::Ready`] while no
//!   game runs. During a game, and from spectators or strangers, the
//!   message changes nothing.
//! - A game starts as soon as every player in the lobby is ready and at
//!   least `--players` are there ([`ready_to_start`]). So when everyone
//!   joins ready, the game starts once `--players` have joined, as it
//!   always did; a player who is not ready holds the start, and more
//!   players may join meanwhile.
//! - A player leaving the lobby may let the others start.
//! - When a game starts every player is not ready again: after the game
//!   each says again whether it wants the next one.
//! - Every client in the lobby gets the lobby whenever it changes, and
//!   every [`LOBBY_REFRESH`] for the pings.
//! - Game `n` plays [`game_seed`]`(seed, n)`: the server's seed for the
//!   first, a different one derived from it for each rematch, so a series
//!   of games is reproducible from the first seed.

use std::time::Duration;

use bytes::Bytes;
use lockstep_protocol::{
    encode_frame, GameSettings, GameSummary, LobbyPlayer, Refusal, ServerMessage, MAX_REASON_CHARS,
};
use tracing::{debug, info, warn};

use super::{Action, ConnId, Outgoing, Role, Session};
use crate::relay::DropReason;
use crate::ServerEvent;

/// How often the lobby goes to everyone in it even when nobody joined,
/// left or changed its mind: the pings it shows stay fresh.
const LOBBY_REFRESH: Duration = Duration::from_secs(1);

/// What the lobby keeps between games.
#[derive(Debug, Default)]
pub(super) struct Lobby {
    /// Games started so far: the running game's number, from 1.
    pub(super) games: u32,
    /// The game that ended last, shown to everyone in the lobby.
    pub(super) last_game: Option<GameSummary>,
    /// When the lobby was last sent to everyone in it.
    pub(super) last_sent: Duration,
    /// Why the next game does not start although everyone is ready
    /// ([`lockstep_protocol::Lobby::held`]).
    pub(super) held: Option<String>,
    /// Why a player's client could not play the game's settings, the
    /// latest one ([`Session::cannot_play`]): shown in the lobby for as
    /// long as the server runs, as the settings never change.
    pub(super) refused: Option<String>,
    /// The wall-clock time (Unix seconds) of the latest join or ready
    /// change: a game that starts because a player left the lobby, which
    /// carries no time, is named after it.
    pub(super) unix_time: u64,
}

/// Whether a lobby whose players are ready or not as `ready` says starts a
/// game that needs `needed` players: all of them ready, and enough of them.
pub(super) fn ready_to_start(ready: impl IntoIterator<Item = bool>, needed: u8) -> bool {
    let mut players = 0usize;
    for ready in ready {
        if !ready {
            return false;
        }
        players += 1;
    }
    players >= usize::from(needed).max(1)
}

/// What the players' self-test hashes say ([`self_test_verdict`]).
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    /// Every player computed the same.
    Agree,
    /// More than half computed `majority`; the others are `minority`.
    Outvoted {
        majority: u64,
        minority: Vec<(ConnId, u64)>,
    },
    /// They differ and no hash has more than half.
    Split,
}

/// Whether `players`' self-test hashes agree, and if not, whether a
/// strict majority decides: never one player's word against another's.
pub(super) fn self_test_verdict(players: &[(ConnId, u64)]) -> Verdict {
    let mut counts = std::collections::BTreeMap::<u64, usize>::new();
    for (_, hash) in players {
        *counts.entry(*hash).or_default() += 1;
    }
    if counts.len() <= 1 {
        return Verdict::Agree;
    }
    match counts.iter().find(|(_, n)| **n * 2 > players.len()) {
        Some((&majority, _)) => Verdict::Outvoted {
            majority,
            minority: players
                .iter()
                .filter(|(_, hash)| *hash != majority)
                .copied()
                .collect(),
        },
        None => Verdict::Split,
    }
}

/// The world seed of game `game` (from 1) of a server started with
/// `first`: `first` itself for the first game, then a splitmix64 step of
/// `first` and the game number, so every rematch gets a seed unlike the
/// others and the whole series follows from the first seed.
pub(crate) fn game_seed(first: u64, game: u32) -> u64 {
    if game <= 1 {
        return first;
    }
    let mut z = first.wrapping_add(u64::from(game).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Session {
    /// The lobby changed (a join, a departure, a ready toggle): start the
    /// game if everyone is ready, else tell everyone in the lobby.
    pub(super) fn lobby_changed(&mut self, now: Duration, unix_time: u64) {
        if self.game.is_some() {
            return;
        }
        let ready = self
            .clients
            .values()
            .filter(|c| matches!(c.role, Role::Player(_)))
            .map(|c| c.ready);
        self.lobby.held = None;
        if !ready_to_start(ready, self.config.players) {
            self.send_lobby();
            return;
        }
        if self.config.self_test.is_none() && !self.self_tests_agree(now) {
            return;
        }
        self.start(now, unix_time);
    }

    /// Whether the players' self-test hashes agree, for a game the server
    /// was not built with (it cannot compute the hash itself). A minority
    /// is refused and leaves, each told its hash and the majority's; with
    /// no majority nobody's is trusted: the game is held and everyone in
    /// the lobby is told who computes what.
    fn self_tests_agree(&mut self, now: Duration) -> bool {
        let players: Vec<(ConnId, u64)> = self
            .clients
            .iter()
            .filter(|(_, c)| matches!(c.role, Role::Player(_)))
            .map(|(conn, c)| (*conn, c.self_test))
            .collect();
        let game = self.config.spec.name.clone();
        match self_test_verdict(&players) {
            Verdict::Agree => true,
            Verdict::Outvoted { majority, minority } => {
                for (conn, hash) in minority {
                    let reason = format!(
                        "this machine computes {game}'s self-test as {hash:016x}, the other \
                         players' machines as {majority:016x}; it would desync the game"
                    );
                    let name = self.clients.get(&conn).map(|c| c.name.clone());
                    info!(name = name.as_deref().unwrap_or("?"), %reason, "refused at the start");
                    self.actions
                        .send(conn, ServerMessage::Refused(Refusal { reason }));
                    self.clients.remove(&conn);
                    self.actions.push(Action::Release(conn));
                }
                // The majority may start now, if enough of them are left.
                self.lobby_changed(now, self.lobby.unix_time);
                false
            }
            Verdict::Split => {
                let who: Vec<String> = players
                    .iter()
                    .filter_map(|(conn, hash)| {
                        let c = self.clients.get(conn)?;
                        Some(format!("{} {hash:016x}", c.name))
                    })
                    .collect();
                let held = format!(
                    "the players' machines compute {game}'s self-test differently and no \
                     majority agrees ({}): nobody's is trusted, and the game waits for a player \
                     whose machine settles it",
                    who.join(", ")
                );
                warn!(%held, "game held");
                self.lobby.held = Some(held);
                self.send_lobby();
                false
            }
        }
    }

    /// A player says it is ready for the next game, or not: only in the
    /// lobby, and only a player's word counts.
    pub(super) fn set_ready(&mut self, conn: ConnId, ready: bool, now: Duration) {
        if self.game.is_some() {
            debug!(conn = conn.0, ready, "ready ignored: a game runs");
            return;
        }
        let Some(client) = self.clients.get_mut(&conn) else {
            debug!(conn = conn.0, ready, "ready ignored: no such client");
            return;
        };
        let Role::Player(player) = client.role else {
            debug!(name = %client.name, ready, "ready ignored: a spectator");
            return;
        };
        if client.ready == ready {
            return;
        }
        client.ready = ready;
        let name = client.name.clone();
        info!(%player, %name, ready, "ready changed");
        self.emit(ServerEvent::Ready {
            player,
            name,
            ready,
        });
        self.lobby_changed(now, self.lobby.unix_time);
    }

    /// A player has played what it wanted of the running game: it leaves
    /// the game after the last tick it sent an input for, and waits in the
    /// lobby for the next. Ignored outside a game and from spectators.
    pub(super) fn game_done(&mut self, conn: ConnId, now: Duration) {
        let Some(client) = self.clients.get_mut(&conn) else {
            return;
        };
        let (Role::Player(player), Some(game)) = (client.role, &mut self.game) else {
            debug!(name = %client.name, "game done ignored: no game of its own runs");
            return;
        };
        if client.done || client.rejoining {
            return;
        }
        let Some(departure) = game.relay.remove(player, DropReason::Finished) else {
            return;
        };
        client.done = true;
        info!(%player, name = %client.name, "done with this game; waits for the next");
        self.report_departure(departure);
        self.advance(now);
    }

    /// Sends the lobby again when it has not gone out for a while (the
    /// pings change), as long as a client waits in it.
    pub(super) fn refresh_lobby(&mut self, now: Duration) {
        if self.clients.is_empty() || now.saturating_sub(self.lobby.last_sent) < LOBBY_REFRESH {
            return;
        }
        self.lobby.last_sent = now;
        self.send_lobby();
    }

    /// A player's game refuses the hosted game's settings (a server built
    /// without the game carries them as given): the player leaves, and the
    /// host and everyone in the lobby are told why, from then on. Only a
    /// lobby player's word is taken, and it decides nothing for the others.
    pub(super) fn cannot_play(&mut self, conn: ConnId, reason: &str, now: Duration) {
        let Some(client) = self.clients.get(&conn) else {
            return;
        };
        let (Role::Player(player), None) = (client.role, &self.game) else {
            debug!(name = %client.name, "cannot-play ignored: not a lobby player");
            return;
        };
        let name = client.name.clone();
        let reason: String = reason
            .chars()
            .filter(|c| !c.is_control())
            .take(MAX_REASON_CHARS)
            .collect();
        let spec = &self.config.spec;
        let given = match spec.settings.given_text() {
            text if text.is_empty() => String::new(),
            text => format!(" {text}"),
        };
        let said = format!("{name}'s client cannot play {}{given}: {reason}", spec.name);
        info!(%player, %name, %reason, "cannot play the game's settings");
        self.emit(ServerEvent::CannotPlay {
            player,
            name,
            reason,
        });
        self.lobby.refused = Some(said);
        self.remove(conn, DropReason::Left, "cannot play the game", now);
    }

    /// The lobby as it stands, as everyone in it is told.
    fn lobby_message(&self) -> lockstep_protocol::Lobby {
        let mut players: Vec<LobbyPlayer> = self
            .clients
            .values()
            .filter_map(|c| match c.role {
                Role::Player(id) => Some(LobbyPlayer {
                    id,
                    name: c.name.clone(),
                    ready: c.ready,
                    ping_ms: c.link.rtt.as_millis().min(u128::from(u16::MAX)) as u16,
                    platform: c.platform.triple().to_string(),
                }),
                Role::Spectator => None,
            })
            .collect();
        players.sort_by_key(|p| p.id);
        let game = self.lobby.games.saturating_add(1);
        lockstep_protocol::Lobby {
            players,
            next: GameSettings {
                game,
                players_needed: self.config.players,
                tick_rate: self.config.tick_rate,
                input_delay: self.config.input_delay,
                spec: self.config.spec.clone(),
                seed: game_seed(self.config.seed, game),
            },
            last: self.lobby.last_game,
            held: self
                .lobby
                .held
                .clone()
                .or_else(|| self.lobby.refused.clone()),
        }
    }

    /// Sends the lobby to every client in it, encoded once.
    pub(super) fn send_lobby(&mut self) {
        let frame = match encode_frame(&ServerMessage::Lobby(self.lobby_message())) {
            Ok(frame) => Bytes::from(frame),
            Err(e) => {
                warn!(error = %e, "lobby not encodable");
                return;
            }
        };
        for &conn in self.clients.keys() {
            self.actions
                .push(Action::Control(conn, Outgoing::Frame(frame.clone())));
        }
    }
}

#[cfg(test)]
mod tests {
    use lockstep_protocol::{GameSummary, PlayerId, ServerMessage, Tick};

    use super::super::harness::{ms, Harness};
    use super::super::CloseCode;
    use super::{game_seed, ready_to_start};
    use crate::Config;

    #[test]
    fn a_game_needs_enough_players_and_every_one_of_them_ready() {
        assert!(!ready_to_start([], 2));
        assert!(!ready_to_start([true], 2));
        assert!(ready_to_start([true, true], 2));
        assert!(ready_to_start([true, true, true], 2), "more may join");
        assert!(!ready_to_start([true, false, true], 2));
        assert!(!ready_to_start([], 0), "never a game of nobody");
    }

    #[test]
    fn rematches_get_new_seeds_that_follow_from_the_first() {
        assert_eq!(game_seed(42, 1), 42);
        let seeds: Vec<u64> = (1..=50).map(|game| game_seed(42, game)).collect();
        let mut distinct = seeds.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), seeds.len());
        assert_eq!(game_seed(42, 2), game_seed(42, 2));
        assert_ne!(game_seed(42, 2), game_seed(43, 2));
    }

    #[test]
    fn a_player_who_is_not_ready_holds_the_start_until_it_is() {
        let mut h = Harness::players(2);
        h.join(1, "ann");
        let bob = h.join_not_ready(2, "bob");
        assert!(bob.starts(1).is_empty());
        let lobby = bob.lobbies(1).pop().expect("ann is told bob joined");
        let ready: Vec<(&str, bool)> = lobby
            .players
            .iter()
            .map(|p| (p.name.as_str(), p.ready))
            .collect();
        assert_eq!(ready, [("ann", true), ("bob", false)]);
        assert_eq!(lobby.next.game, 1);
        assert_eq!(lobby.next.players_needed, 2);
        assert_eq!(lobby.last, None);

        // More players may join meanwhile; the game waits for bob.
        let cat = h.join(3, "cat");
        assert!(cat.starts(3).is_empty());
        assert_eq!(cat.lobbies(1).pop().unwrap().players.len(), 3);

        let ready = h.ready(2, true);
        assert_eq!(
            ready.reports(),
            vec![
                "ready player=1 name=bob ready=true",
                "start players=ann,bob,cat seed=1"
            ]
        );
        for id in 1..=3 {
            assert_eq!(ready.starts(id).len(), 1);
        }
    }

    #[test]
    fn a_player_may_take_its_ready_back() {
        let mut h = Harness::players(3);
        h.join(1, "ann");
        h.join(2, "bob");
        let undecided = h.ready(2, false);
        assert_eq!(
            undecided.reports(),
            vec!["ready player=1 name=bob ready=false"]
        );
        assert!(!undecided.lobbies(1)[0].players[1].ready);
        // Saying it twice changes nothing and tells nobody.
        assert!(h.ready(2, false).0.is_empty());
        assert!(h.join(3, "cat").starts(1).is_empty());
        assert_eq!(h.ready(2, true).starts(1).len(), 1);
    }

    #[test]
    fn the_not_ready_player_leaving_the_lobby_lets_the_others_start() {
        let mut h = Harness::players(2);
        h.join(1, "ann");
        h.join_not_ready(2, "bob");
        h.join(3, "cat");
        let gone = h.disconnect(2);
        assert!(gone.released(2));
        assert_eq!(gone.reports(), vec!["start players=ann,cat seed=1"]);
        assert_eq!(gone.starts(1).len(), 1);
    }

    #[test]
    fn a_ready_player_leaving_leaves_the_others_waiting_and_told() {
        let mut h = Harness::players(3);
        h.join(1, "ann");
        h.join(2, "bob");
        let gone = h.leave(2);
        assert!(gone.starts(1).is_empty());
        let names: Vec<String> = gone.lobbies(1)[0]
            .players
            .iter()
            .map(|p| p.name.clone())
            .collect();
        assert_eq!(names, ["ann"]);
    }

    #[test]
    fn ready_from_a_spectator_a_stranger_or_during_a_game_changes_nothing() {
        let mut h = Harness::players(2);
        h.join(1, "ann");
        h.spectate(2, "sam");
        assert!(h.ready(2, true).0.is_empty(), "a spectator is no player");
        assert!(h.ready(2, false).0.is_empty());
        assert!(h.ready(9, true).0.is_empty(), "nobody on connection 9");
        assert!(h.game_done(1).0.is_empty(), "no game to be done with");
        h.join(3, "bob");
        assert_eq!(h.next_tick(), Tick(0), "the game runs");
        for id in [1, 2, 3, 9] {
            assert!(h.ready(id, false).0.is_empty());
            assert!(h.ready(id, true).0.is_empty());
        }
        assert!(h.game_done(2).0.is_empty(), "a spectator plays no game");
        h.inputs(1, 0..5);
        h.inputs(3, 0..5);
        assert_eq!(h.next_tick(), Tick(5), "the game went on");
    }

    #[test]
    fn the_lobby_is_sent_again_every_second_for_the_pings() {
        let mut h = Harness::players(2);
        h.join(1, "ann");
        assert!(h.advance(ms(500)).lobbies(1).is_empty());
        assert_eq!(h.advance(ms(600)).lobbies(1).len(), 1);
    }

    #[test]
    fn players_done_with_a_game_meet_again_in_the_lobby_for_a_rematch() {
        let mut h = Harness::new(Config {
            players: 2,
            replay_dir: None,
            laggard_tolerance: None,
            seed: 7,
            ..Config::new(crate::TEST_GAME)
        });
        h.join(1, "ann");
        h.join(2, "bob");
        h.spectate(3, "sam");
        h.inputs(1, 0..10);
        h.inputs(2, 0..8);
        // ann is done: she leaves the game after her last input (tick 9)
        // but stays connected. The bundle of bob's drop tick, 12, is the
        // game's last: it says he left.
        let ann_done = h.game_done(1);
        assert_eq!(
            ann_done.reports(),
            vec!["dropped player=0 name=ann tick=10 reason=finished"]
        );
        assert_eq!(ann_done.closed(1), None);
        h.inputs(2, 8..12);
        let bob_done = h.game_done(2);
        let reports = bob_done.reports();
        assert_eq!(
            reports,
            vec![
                "dropped player=1 name=bob tick=12 reason=finished",
                "verdict agreed ticks=13 checks=0 platforms=x86_64-unknown-linux-gnu,\
                 x86_64-unknown-linux-gnu",
                "game over tick=13"
            ]
        );
        // The spectator is let go as before; the players stay, not ready,
        // and learn how the game went.
        assert!(bob_done.messages(3).contains(&ServerMessage::Ended {
            reason: "the game is over: every player left".into()
        }));
        assert!(bob_done.released(3));
        for id in 1..=2 {
            assert_eq!(bob_done.closed(id), None);
            assert!(!bob_done.released(id));
            let lobby = bob_done.lobbies(id).pop().expect("the lobby");
            assert!(lobby.players.iter().all(|p| !p.ready));
            assert_eq!(
                lobby.last,
                Some(GameSummary {
                    game: 1,
                    seed: 7,
                    ticks: Tick(13)
                })
            );
            assert_eq!(lobby.next.game, 2);
            assert_eq!(lobby.next.seed, game_seed(7, 2));
        }

        // Both ready again: game 2 on the same connections, a new seed.
        assert!(h.ready(1, true).starts(1).is_empty());
        let rematch = h.ready(2, true);
        let seed = game_seed(7, 2);
        assert_eq!(
            rematch.reports()[1],
            format!("start players=ann,bob seed={seed}")
        );
        let start = &rematch.starts(1)[0];
        assert_eq!(start.seed, seed);
        assert_eq!(start.you, Some(PlayerId(0)));
        assert_eq!(h.next_tick(), Tick(0));
        h.inputs(1, 0..3);
        let played = h.inputs(2, 0..3);
        assert_eq!(played.datagrams(1)[0].bundles.len(), 3);

        // A done player whose connection drops while the others play on
        // is let go without touching the game.
        h.inputs(1, 3..6);
        h.game_done(1);
        let lost = h.disconnect(1);
        assert!(lost.released(1));
        assert_eq!(lost.closed(1), None::<(CloseCode, &str)>);
        assert!(lost.reports().is_empty());
    }
}
