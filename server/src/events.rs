//! What the server tells whoever runs it: one [`ServerEvent`] per thing
//! worth a line, and the line the binary prints for it (tests and scripts
//! read those lines, so their wording is part of the interface).

use std::net::SocketAddr;
use std::time::Duration;

use lockstep_protocol::{Percent, Platform, PlayerId, Tick};

use crate::{DropReason, SpeedReason};

/// Things worth telling whoever runs the server (the binary prints them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerEvent {
    /// A client took a lobby slot.
    Joined {
        /// Its slot.
        player: PlayerId,
        /// Its name.
        name: String,
    },
    /// The machine a client that took a lobby slot runs on, as it claims
    /// (a line of its own after [`ServerEvent::Joined`]).
    Platform {
        /// Its slot.
        player: PlayerId,
        /// Its name.
        name: String,
        /// Its machine and build.
        platform: Platform,
    },
    /// A player in the lobby said it is ready for the next game, or not
    /// (not printed for the state a player joins with).
    Ready {
        /// Its slot.
        player: PlayerId,
        /// Its name.
        name: String,
        /// Ready or not.
        ready: bool,
    },
    /// A lobby player's client cannot play the hosted game's settings.
    CannotPlay {
        /// Its slot.
        player: PlayerId,
        /// Its name.
        name: String,
        /// Why, as its game says.
        reason: String,
    },
    /// A joiner found that the snapshot it was started from, which a
    /// player sent and the server could not check (a game it was built
    /// without), is not the majority's world: the sender is named and its
    /// snapshots dropped, and the joiner starts again from another.
    SnapshotRefused {
        /// The sender's slot.
        player: PlayerId,
        /// The sender's name.
        name: String,
        /// The snapshot's tick.
        tick: Tick,
        /// The joiner's name.
        by: String,
        /// Why, as the joiner says.
        reason: String,
    },
    /// A client was turned away.
    Refused {
        /// Its address.
        remote: SocketAddr,
        /// The sentence it was sent.
        reason: String,
    },
    /// Everyone in the lobby was ready, enough players were there, and a
    /// game began.
    Started {
        /// Names in slot order.
        players: Vec<String>,
        /// The game's world seed (each rematch gets a new one).
        seed: u64,
    },
    /// A player was removed from the running game.
    Dropped {
        /// Its slot.
        player: PlayerId,
        /// Its name.
        name: String,
        /// First tick simulated without it.
        tick: Tick,
        /// Why.
        reason: DropReason,
    },
    /// The relay stood in for a late player's inputs
    /// ([`lockstep_protocol::Bundle::substituted`]). One event reports
    /// `count` stand-ins for the player since its previous one: the first
    /// after a quiet while at once, then at most one every few seconds, so a
    /// player late on every tick does not fill the output.
    Substituted {
        /// Its slot.
        player: PlayerId,
        /// Its name.
        name: String,
        /// The tick of the first stand-in reported.
        tick: Tick,
        /// The longest any of them waited for the player's input after
        /// the other inputs of its tick arrived.
        waited: Duration,
        /// How many stand-ins this reports.
        count: u32,
    },
    /// A player came back and takes part again from `tick`.
    Rejoined {
        /// Its slot.
        player: PlayerId,
        /// Its name.
        name: String,
        /// First tick it plays again.
        tick: Tick,
    },
    /// Peers reported different hashes.
    Desync {
        /// The first tick whose hashes differ.
        tick: Tick,
        /// Names of the players newly found diverged.
        diverged: Vec<String>,
        /// The first tick whose hashes differ, from the players' per-tick
        /// hashes; `None` when too few players answered to tell.
        first: Option<Tick>,
    },
    /// A diverged and a majority player's sync traces of a desync's first
    /// tick, compared.
    Traced {
        /// The tick.
        tick: Tick,
        /// The diverged player's name.
        diverged: String,
        /// The majority player's name.
        majority: String,
        /// The comparison's first line: `first differing value: ...`.
        first: String,
    },
    /// A game is being recorded.
    Recording {
        /// The replay file.
        path: std::path::PathBuf,
    },
    /// Writing the game's replay failed (the disk is full, say): the game
    /// goes on unrecorded, and nothing more is said about its recording.
    /// The file was cut back to its last whole record, so it ends cleanly
    /// after the bundle of `ticks - 1`; `--resume` would go on from
    /// `ticks`.
    RecordingStopped {
        /// The replay file.
        path: std::path::PathBuf,
        /// The first tick whose bundle is not in the file: it holds the
        /// bundles of the ticks before.
        ticks: Tick,
        /// What the write failed with, as the system says it.
        error: String,
    },
    /// What the game showed about determinism, once it is over (however
    /// it ended): whether every machine computed the same hashes.
    Verdict {
        /// Ticks bundled.
        ticks: Tick,
        /// Hash reports compared.
        checks: u64,
        /// Target triples of the roster players that never diverged, in
        /// slot order (the whole roster when the game agreed).
        agreed: Vec<String>,
        /// `name@triple` of every player found diverged, in slot order;
        /// empty when the game agreed.
        diverged: Vec<String>,
    },
    /// The game speed changes for everyone from `from_tick` on.
    Speed {
        /// The new speed.
        percent: Percent,
        /// First tick paced at it.
        from_tick: Tick,
        /// Why it changed.
        reason: SpeedReason,
        /// Name of the slowest machine's player.
        slowest: String,
        /// That machine's capacity, as it last reported it.
        capacity: Percent,
        /// How far behind its schedule the game is at `from_tick`, time
        /// every client forgives there.
        postpone: Duration,
    },
    /// The server advertises itself on the LAN.
    Advertising {
        /// The name it advertises.
        name: String,
        /// The networks it advertises on, `interface:address` each.
        networks: Vec<String>,
        /// The UDP port it answers probes on.
        discovery_port: u16,
    },
    /// The server goes on with a game it was running when it died (read
    /// from its replay) and waits for its players to reconnect.
    Resuming {
        /// The first tick of the resumed game.
        tick: Tick,
        /// Names of the players it waits for, in slot order.
        waiting: Vec<String>,
    },
    /// A player of a resumed game reconnected and keeps its slot.
    Reconnected {
        /// Its slot.
        player: PlayerId,
        /// Its name.
        name: String,
        /// The tick the resumed game goes on from.
        tick: Tick,
    },
    /// The resumed game runs again: its first tick is bundled.
    Resumed {
        /// That tick.
        tick: Tick,
    },
    /// Every player left or was done with the game; the server is back
    /// in the lobby.
    GameOver {
        /// First tick that was never bundled.
        tick: Tick,
    },
}

impl std::fmt::Display for ServerEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServerEvent::Joined { player, name } => write!(f, "joined player={player} name={name}"),
            ServerEvent::Platform {
                player,
                name,
                platform,
            } => write!(f, "platform player={player} name={name} {platform}"),
            ServerEvent::Ready {
                player,
                name,
                ready,
            } => write!(f, "ready player={player} name={name} ready={ready}"),
            ServerEvent::CannotPlay {
                player,
                name,
                reason,
            } => write!(
                f,
                "cannot-play player={player} name={name} reason={reason:?}"
            ),
            ServerEvent::SnapshotRefused {
                player,
                name,
                tick,
                by,
                reason,
            } => write!(
                f,
                "snapshot-refused player={player} name={name} tick={tick} by={by} reason={reason:?}"
            ),
            ServerEvent::Refused { remote, reason } => {
                write!(f, "refused remote={remote} reason={reason:?}")
            }
            ServerEvent::Started { players, seed } => {
                write!(f, "start players={} seed={seed}", players.join(","))
            }
            ServerEvent::Dropped {
                player,
                name,
                tick,
                reason,
            } => write!(
                f,
                "dropped player={player} name={name} tick={tick} reason={}",
                reason.as_str()
            ),
            ServerEvent::Substituted {
                player,
                name,
                tick,
                waited,
                count,
            } => write!(
                f,
                "substituted player={player} name={name} tick={tick} waited_ms={} count={count}",
                waited.as_millis()
            ),
            ServerEvent::Rejoined { player, name, tick } => {
                write!(f, "rejoined player={player} name={name} tick={tick}")
            }
            ServerEvent::Desync {
                tick,
                diverged,
                first,
            } => {
                write!(
                    f,
                    "desync tick={tick} diverged={} first=",
                    diverged.join(",")
                )?;
                match first {
                    Some(first) => write!(f, "{first}"),
                    None => f.write_str("unknown"),
                }
            }
            ServerEvent::Traced {
                tick,
                diverged,
                majority,
                first,
            } => write!(
                f,
                "traced tick={tick} diverged={diverged} majority={majority} {first}"
            ),
            ServerEvent::Recording { path } => write!(f, "recording path={}", path.display()),
            ServerEvent::RecordingStopped { path, ticks, error } => write!(
                f,
                "recording stopped path={} ticks={ticks} error={error:?}",
                path.display()
            ),
            ServerEvent::Resuming { tick, waiting } => {
                write!(f, "resuming tick={tick} waiting={}", waiting.join(","))
            }
            ServerEvent::Reconnected { player, name, tick } => {
                write!(f, "reconnected player={player} name={name} tick={tick}")
            }
            ServerEvent::Resumed { tick } => write!(f, "resumed tick={tick}"),
            ServerEvent::Verdict {
                ticks,
                checks,
                agreed,
                diverged,
            } if diverged.is_empty() => write!(
                f,
                "verdict agreed ticks={ticks} checks={checks} platforms={}",
                agreed.join(",")
            ),
            ServerEvent::Verdict {
                ticks,
                checks,
                agreed,
                diverged,
            } => write!(
                f,
                "verdict diverged ticks={ticks} checks={checks} diverged={} majority={}",
                diverged.join(","),
                agreed.join(",")
            ),
            ServerEvent::Speed {
                percent,
                from_tick,
                reason,
                slowest,
                capacity,
                postpone,
            } => write!(
                f,
                "speed percent={} from_tick={from_tick} reason={} slowest={slowest} capacity={} \
                 postpone_ms={}",
                percent.0,
                reason.as_str(),
                capacity.0,
                postpone.as_millis()
            ),
            ServerEvent::Advertising {
                name,
                networks,
                discovery_port,
            } => write!(
                f,
                "advertising name={name} networks={} discovery_port={discovery_port}",
                networks.join(",")
            ),
            ServerEvent::GameOver { tick } => write!(f, "game over tick={tick}"),
        }
    }
}
