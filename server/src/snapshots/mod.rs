//! Verified snapshots: a state a joining client starts from instead of
//! tick 0, supplied by a player and trusted only once it hashes to what
//! the majority reported.
//!
//! The server never simulates. It does know, from the hash reports
//! ([`crate::desync_check`]), which hash the majority of the players
//! computed for a tick. Every [`Snapshots::interval`] ticks it asks one
//! player (in turn) for its world after the latest such confirmed tick;
//! the player sends the postcard of its game state in chunks, and the server
//! decodes it and hashes it with the simulation's own hash. A state that
//! equals the confirmed hash is as good as the bundles before it, so the
//! relay drops those (the replay on disk keeps them). Anything else (a
//! wrong hash, garbage, an oversized or out-of-order chunk, silence) is
//! refused, its sender logged, and the next player asked.
//!
//! A server built without the game cannot decode or hash its states. It
//! asks all the same, and keeps the last [`MAX_UNCHECKED`] snapshots as
//! sent, each with the majority's hash and its sender: a joiner starts
//! from the newest and checks it on its own machine (the Start carries
//! the hash). A joiner that finds it off ([`Snapshots::disputed`]) names
//! its sender, whose snapshots are all dropped, and is started again
//! from the next (another player's, by the rotation) or from tick 0. The
//! relay keeps every bundle of such a game, so that tick 0 is always
//! there. A joiner's word costs at most its own catch-up and the
//! snapshots it disputes; it cannot put a wrong world in anyone's game,
//! because every joiner checks what it starts from.
//!
//! ```text
//! poll(now, confirmed, next_tick, players) -> Some((player, tick))   ask
//! offer(player, chunk, now)               -> Incomplete | Verified | Kept | Refused
//! for_joiner()                            -> the snapshot a joiner starts from
//! disputed(tick, sender)                  -> a joiner found it off
//! ```
//!
//! Pure, like the relay: the session passes the time and the facts.

use std::collections::BTreeSet;
use std::time::Duration;

use bytes::Bytes;
use lockstep_engine::HostedGame;
use lockstep_protocol::{PlayerId, SnapshotChunk, Tick, MAX_SNAPSHOT_SIZE};

/// Seconds of game time between two snapshots by default. A join costs
/// re-simulating at most this much play plus the confirmation lag (the
/// next hash report and a round trip, about 30 ticks): 630 ticks of 60 Hz.
/// With 1000 balls a tick costs 0.4 ms here (1.2 ms on a loaded machine),
/// so that is 0.25 s (0.75 s loaded): under a second at the largest world
/// the server allows. At 30 s the worst case is 1830 ticks, 0.7 s idle but
/// 2.3 s loaded (BENCHMARKS.md, "Snapshots"). The price of asking often is
/// small: one player sends 0.6 to 21 KB (24 to 1000 balls) every 10 s, and
/// the server decodes and hashes it in well under a millisecond; the
/// bundles held between snapshots are 80 KB at most with 8 players.
pub const DEFAULT_INTERVAL_SECS: u16 = 10;

/// How long the asked player has to deliver its whole snapshot before the
/// server gives up on it and asks another: a snapshot is tens of KB, a
/// fraction of a second on any link that can play.
pub const SNAPSHOT_WAIT: Duration = Duration::from_secs(5);

/// How far behind the newest bundle a confirmed tick may be and still be
/// asked for: clients keep their last 600 ticks (`DEFAULT_HISTORY`), so
/// half of that leaves room for a slow client and a slow link.
pub const MAX_SNAPSHOT_AGE: u32 = 300;

/// How many snapshots of a game the server cannot check it keeps: a
/// joiner that finds the newest off goes back to the one before, another
/// player's, then to tick 0.
pub const MAX_UNCHECKED: usize = 3;

/// A snapshot whose hash the majority confirmed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    /// The world tick it is the state after.
    pub tick: Tick,
    /// The majority's hash of that world, which it hashes to.
    pub hash: u64,
    /// The postcard of the world, as the player sent it.
    pub bytes: Bytes,
}

/// A snapshot of a game the server was built without: as its sender sent
/// it, for joiners to check against the majority's hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unchecked {
    /// The world tick it claims to be the state after.
    pub tick: Tick,
    /// The majority's hash of that world.
    pub hash: u64,
    /// Who sent it.
    pub sender: PlayerId,
    /// The bytes it sent.
    pub bytes: Bytes,
}

/// The snapshot a joiner starts from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Served {
    /// Its tick.
    pub tick: Tick,
    /// The majority's hash of that world: the joiner checks it.
    pub hash: u64,
    /// The bytes.
    pub bytes: Bytes,
    /// Who sent it, when the server could not check it; `None` for one it
    /// verified.
    pub sender: Option<PlayerId>,
}

/// Why a snapshot was not trusted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// Nobody asked this player, or for this tick.
    #[error("not asked for a snapshot of tick {0}")]
    NotAsked(Tick),
    /// The total length is zero or over [`MAX_SNAPSHOT_SIZE`], or changed
    /// between chunks.
    #[error("bad length {0}")]
    BadLength(u32),
    /// A chunk that does not continue where the last one ended, or runs
    /// past the announced length.
    #[error("chunk at offset {offset} of {len} bytes does not follow byte {expected}")]
    OutOfOrder {
        /// Where the chunk claimed to go.
        offset: u32,
        /// Its length.
        len: usize,
        /// Where the next chunk had to go.
        expected: usize,
    },
    /// The bytes are not a state of the game (the game says why).
    #[error("{0}")]
    Undecodable(String),
    /// A state, but of another tick.
    #[error("the state is at tick {0}")]
    WrongTick(Tick),
    /// A world whose hash is not the majority's.
    #[error("hash {got:016x} is not the confirmed {confirmed:016x}")]
    HashMismatch {
        /// What the snapshot hashes to.
        got: u64,
        /// What the majority reported.
        confirmed: u64,
    },
    /// The player did not deliver within [`SNAPSHOT_WAIT`], or left.
    #[error("no snapshot within the wait")]
    TimedOut,
}

/// What an offered chunk led to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Offer {
    /// More chunks are due.
    Incomplete,
    /// The snapshot is complete and equals the confirmed hash: it is now
    /// [`Snapshots::latest`].
    Verified(Tick),
    /// The snapshot of a game the server cannot check is complete: kept
    /// for joiners, who check it.
    Kept {
        /// Who sent it.
        player: PlayerId,
        /// Its tick.
        tick: Tick,
    },
    /// Not trusted; the sender is not asked again this round.
    Refused {
        /// Who sent it.
        player: PlayerId,
        /// The tick asked for.
        tick: Tick,
        /// Why.
        why: Refusal,
    },
}

/// The request in flight.
#[derive(Debug)]
struct Asking {
    player: PlayerId,
    tick: Tick,
    confirmed: u64,
    since: Duration,
    bytes: Vec<u8>,
    total_len: Option<u32>,
}

/// The latest verified snapshot of a game and the request for the next.
#[derive(Debug)]
pub struct Snapshots {
    /// The game whose states are checked; `None` for a game the server
    /// was not built with, whose snapshots joiners check.
    game: Option<&'static dyn HostedGame>,
    interval: u32,
    latest: Option<Verified>,
    /// Without the game: the last snapshots, oldest first.
    unchecked: Vec<Unchecked>,
    asking: Option<Asking>,
    /// Players refused since the last verified snapshot: asked again only
    /// once everyone has been.
    refused: BTreeSet<PlayerId>,
    /// The player asked last, for the rotation.
    last_asked: Option<PlayerId>,
}

impl Snapshots {
    /// A game of `game` (`None`: one the server lacks) that asks for a
    /// snapshot every `interval` ticks (never when 0).
    pub fn new(game: Option<&'static dyn HostedGame>, interval: u32) -> Self {
        Snapshots {
            game,
            interval,
            latest: None,
            unchecked: Vec::new(),
            asking: None,
            refused: BTreeSet::new(),
            last_asked: None,
        }
    }

    /// The latest verified snapshot.
    pub fn latest(&self) -> Option<&Verified> {
        self.latest.as_ref()
    }

    /// The snapshot a joiner starts from: the latest verified one, or
    /// without the game the newest kept; `None` from tick 0.
    pub fn for_joiner(&self) -> Option<Served> {
        if let Some(v) = &self.latest {
            return Some(Served {
                tick: v.tick,
                hash: v.hash,
                bytes: v.bytes.clone(),
                sender: None,
            });
        }
        self.unchecked.last().map(|u| Served {
            tick: u.tick,
            hash: u.hash,
            bytes: u.bytes.clone(),
            sender: Some(u.sender),
        })
    }

    /// A joiner found `sender`'s snapshot of `tick` off the majority's
    /// world: every snapshot of `sender`'s is dropped, and it is not asked
    /// again until everyone else has been. Whether that snapshot was
    /// still here (a joiner's word about one already dropped changes
    /// nothing).
    pub fn disputed(&mut self, tick: Tick, sender: PlayerId) -> bool {
        let held = self
            .unchecked
            .iter()
            .any(|u| u.tick == tick && u.sender == sender);
        if held {
            self.unchecked.retain(|u| u.sender != sender);
            self.refused.insert(sender);
        }
        held
    }

    /// The tick of the newest snapshot kept, checked or not.
    fn newest(&self) -> Tick {
        let verified = self.latest.as_ref().map_or(Tick(0), |v| v.tick);
        let unchecked = self.unchecked.last().map_or(Tick(0), |u| u.tick);
        verified.max(unchecked)
    }

    /// Whom to ask for which tick now, if anyone: when the latest
    /// `confirmed` tick (with its majority hash) is an interval past the
    /// latest snapshot and recent enough against `next_tick` that clients
    /// still hold it; the next of `players` in turn, skipping those
    /// refused this round. A request unanswered for [`SNAPSHOT_WAIT`] is
    /// refused as [`Refusal::TimedOut`] (returned as the second value).
    pub fn poll(
        &mut self,
        now: Duration,
        confirmed: Option<(Tick, u64)>,
        next_tick: Tick,
        players: &[PlayerId],
    ) -> (Option<(PlayerId, Tick)>, Option<Offer>) {
        let mut timed_out = None;
        if let Some(asking) = &self.asking {
            if now.saturating_sub(asking.since) < SNAPSHOT_WAIT {
                return (None, None);
            }
            timed_out = self.refuse(Refusal::TimedOut);
        }
        (
            self.next_request(now, confirmed, next_tick, players),
            timed_out,
        )
    }

    fn next_request(
        &mut self,
        now: Duration,
        confirmed: Option<(Tick, u64)>,
        next_tick: Tick,
        players: &[PlayerId],
    ) -> Option<(PlayerId, Tick)> {
        let (tick, hash) = confirmed?;
        let due = self.newest().plus(self.interval);
        if self.interval == 0 || tick < due || next_tick.since(tick) > MAX_SNAPSHOT_AGE {
            return None;
        }
        if players.iter().all(|p| self.refused.contains(p)) {
            self.refused.clear();
        }
        let after = |p: &&PlayerId| self.last_asked.is_none_or(|last| **p > last);
        let candidates = || players.iter().filter(|p| !self.refused.contains(p));
        // In turn by id, whatever order `players` comes in: the next id
        // after the last asked, or from the lowest again.
        let player = *candidates()
            .filter(after)
            .min()
            .or_else(|| candidates().min())?;
        self.last_asked = Some(player);
        self.asking = Some(Asking {
            player,
            tick,
            confirmed: hash,
            since: now,
            bytes: Vec::new(),
            total_len: None,
        });
        Some((player, tick))
    }

    /// A player left: a request to it is refused at once, so the next
    /// poll asks someone else.
    pub fn forget(&mut self, player: PlayerId) -> Option<Offer> {
        match &self.asking {
            Some(asking) if asking.player == player => self.refuse(Refusal::TimedOut),
            _ => None,
        }
    }

    fn refuse(&mut self, why: Refusal) -> Option<Offer> {
        let asking = self.asking.take()?;
        self.refused.insert(asking.player);
        Some(Offer::Refused {
            player: asking.player,
            tick: asking.tick,
            why,
        })
    }

    /// Takes a chunk of `player`'s snapshot; verifies the whole once the
    /// last chunk is in.
    pub fn offer(&mut self, player: PlayerId, chunk: SnapshotChunk) -> Offer {
        let Some(asking) = self
            .asking
            .as_mut()
            .filter(|a| a.player == player && a.tick == chunk.tick)
        else {
            // Not a request in flight: nothing to cancel, nobody to blame
            // beyond the log.
            return Offer::Refused {
                player,
                tick: chunk.tick,
                why: Refusal::NotAsked(chunk.tick),
            };
        };
        let len = chunk.total_len;
        if len == 0 || len > MAX_SNAPSHOT_SIZE || asking.total_len.is_some_and(|l| l != len) {
            return self
                .refuse(Refusal::BadLength(len))
                .unwrap_or(Offer::Incomplete);
        }
        asking.total_len = Some(len);
        let expected = asking.bytes.len();
        if chunk.offset as usize != expected || expected + chunk.bytes.len() > len as usize {
            let why = Refusal::OutOfOrder {
                offset: chunk.offset,
                len: chunk.bytes.len(),
                expected,
            };
            return self.refuse(why).unwrap_or(Offer::Incomplete);
        }
        asking.bytes.extend_from_slice(&chunk.bytes);
        if asking.bytes.len() < len as usize {
            return Offer::Incomplete;
        }
        let Some(game) = self.game else {
            let (tick, sender, hash) = (asking.tick, asking.player, asking.confirmed);
            let bytes = Bytes::from(std::mem::take(&mut asking.bytes));
            self.asking = None;
            self.refused.clear();
            if self.unchecked.len() == MAX_UNCHECKED {
                self.unchecked.remove(0);
            }
            self.unchecked.push(Unchecked {
                tick,
                hash,
                sender,
                bytes,
            });
            return Offer::Kept {
                player: sender,
                tick,
            };
        };
        match verify(game, &asking.bytes, asking.tick, asking.confirmed) {
            Ok(()) => {
                let (tick, hash) = (asking.tick, asking.confirmed);
                let bytes = Bytes::from(std::mem::take(&mut asking.bytes));
                self.asking = None;
                self.refused.clear();
                self.latest = Some(Verified { tick, hash, bytes });
                Offer::Verified(tick)
            }
            Err(why) => self.refuse(why).unwrap_or(Offer::Incomplete),
        }
    }
}

/// Whether `bytes` are a state of `game` after `tick` ticks that hashes to
/// `confirmed`, with the game's own hash.
pub fn verify(
    game: &dyn HostedGame,
    bytes: &[u8],
    tick: Tick,
    confirmed: u64,
) -> Result<(), Refusal> {
    let (at, got) = game.snapshot(bytes).map_err(Refusal::Undecodable)?;
    if at != tick {
        return Err(Refusal::WrongTick(at));
    }
    if got != confirmed {
        return Err(Refusal::HashMismatch { got, confirmed });
    }
    Ok(())
}

#[cfg(test)]
mod tests;
