//! The messages themselves. Variant order is part of the wire format: append
//! new variants, never reorder (the golden tests pin the bytes).

use serde::{Deserialize, Serialize};

use crate::{GameSpec, Input, Percent, Platform, PlayerId, Tick, TraceReport};

/// Client → server, on the control stream.
// Hello, the largest by far, is sent once per connection and decoded once:
// boxing it would cost an allocation and buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ClientMessage {
    /// First frame of every connection. Must stay variant 0 forever.
    Hello(Hello),
    /// The player leaves on purpose (Esc, `--ticks` reached). The server drops
    /// it after the last tick it sent an input for.
    Leave,
    /// The hash of the client's world after `tick` ticks, sent every
    /// [`Start::hash_interval`] ticks so the server can compare peers.
    HashReport {
        /// World tick the hash belongs to (a multiple of the interval).
        tick: Tick,
        /// `World::hash()` at that tick.
        hash: u64,
    },
    /// Inputs sent on the reliable stream instead of as a datagram: only
    /// for comparing the two transports (`--inputs-over-stream`); the
    /// server treats them exactly like an [`InputDatagram`].
    Inputs(InputDatagram),
    /// The answer to a [`DesyncNotice`]: this client's world hash after
    /// every tick from the notice's `since` to its `tick`, so the server
    /// can name the first tick where the machines part.
    TickHashes {
        /// The notice's tick: which desync this answers.
        tick: Tick,
        /// Tick of `hashes[0]` (later than `since` when the client no
        /// longer keeps the earliest ticks).
        first_tick: Tick,
        /// The hashes of `first_tick`, `first_tick + 1`, ..., at most
        /// [`MAX_TICK_HASHES`], ending at `tick`.
        hashes: Vec<u64>,
    },
    /// How fast this client's machine can run the game, and how far it is
    /// behind. Sent four times a second while the game runs; the server
    /// slows the game down for everyone when a player's machine cannot
    /// keep up ([`ServerMessage::Speed`]).
    Capacity {
        /// The ticks per second the client's loop would manage if it did
        /// nothing but run them (the simulation and everything else each
        /// tick costs, waiting left out), as a share of the nominal tick
        /// rate.
        percent: Percent,
        /// The client's world tick when it measured `behind_us`.
        tick: Tick,
        /// How late its ticks are against their schedule: real time owed
        /// beyond the tick due now, in microseconds (0 when on time).
        behind_us: u32,
    },
    /// The player is ready for the next game (`true`) or not yet
    /// (`false`). Only counts in the lobby: the server ignores it during a
    /// game and from spectators. A game starts when every player in the
    /// lobby is ready and at least [`GameSettings::players_needed`] are
    /// there. [`Hello::ready`] sets the state a player joins with; after a
    /// game every player is not ready again until it says so.
    Ready(bool),
    /// The player has played all it wanted of the running game (`--ticks`
    /// of a client that plays more than one of `--games`) and stays for
    /// the next. The server takes it out of the game like
    /// [`ClientMessage::Leave`], after the last tick it sent an input for,
    /// but keeps the connection in the lobby. Once every player of the game
    /// is done or gone the game is over, and the server sends everyone
    /// still there the lobby ([`ServerMessage::Lobby`], with the game just
    /// played as [`Lobby::last`]); the next game starts on the same
    /// connections when they are all ready again.
    GameDone,
    /// Part of this client's world state at a tick the server asked for
    /// ([`ServerMessage::SnapshotRequest`]). The server trusts it only if
    /// the whole state hashes to what the majority reported for that tick.
    Snapshot(SnapshotChunk),
    /// This client's game refuses the settings of the game the server
    /// hosts (as the lobby's [`GameSettings::spec`] gives them), for the
    /// reason given in one sentence (at most [`MAX_REASON_CHARS`]
    /// characters are kept): it leaves, and the server tells the host
    /// and the lobby why. Sent by a client whose server was built without
    /// the game and carries its settings as given.
    CannotPlay(String),
    /// The snapshot the server started this client from
    /// ([`Start::snapshot`]) is not the world the majority reported: it
    /// does not decode as a state of that tick, or its hash is not
    /// [`Start::snapshot_hash`]. Says why in one sentence (at most
    /// [`MAX_REASON_CHARS`] characters are kept). The client starts nothing
    /// and waits for another Start; the server names the player who sent
    /// the snapshot and starts the client again from another player's, or
    /// from tick 0. A server that verified the snapshot itself refuses the
    /// client instead: its machine computes the world differently.
    BadSnapshot {
        /// The snapshot's tick, as the Start gave it.
        tick: Tick,
        /// Why, in one sentence.
        reason: String,
    },
    /// The sync trace of the first divergent tick of a desync
    /// ([`ServerMessage::Pinpointed`]'s `first`): the values this player's
    /// game traced as it stepped that tick again, cut to fit a message.
    /// The server compares a diverged player's with a majority player's
    /// and tells everyone the first value computed differently
    /// ([`ServerMessage::TraceDiff`]).
    Trace {
        /// The tick the trace is of.
        tick: Tick,
        /// The values.
        report: TraceReport,
    },
}

/// Most characters of a [`ClientMessage::CannotPlay`] or
/// [`ClientMessage::BadSnapshot`] reason the server keeps and shows.
pub const MAX_REASON_CHARS: usize = 200;

/// Bytes of snapshot one [`SnapshotChunk`] carries at most: well inside
/// [`crate::MAX_MESSAGE_SIZE`] with the chunk's other fields.
pub const SNAPSHOT_CHUNK_BYTES: usize = 32 * 1024;

/// The largest snapshot anyone accepts: a ball game of 1000 balls is
/// about 40 KB, so this leaves room for growth while bounding what a malicious
/// peer can make the other side hold.
pub const MAX_SNAPSHOT_SIZE: u32 = 4 * 1024 * 1024;

/// One piece of a world snapshot (the postcard encoding of the game's
/// state after `tick` ticks), cut to fit the control stream's frames.
/// Chunks travel in order, `offset` 0 first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotChunk {
    /// The world tick the state belongs to.
    pub tick: Tick,
    /// Length of the whole snapshot, at most [`MAX_SNAPSHOT_SIZE`].
    pub total_len: u32,
    /// Where `bytes` go in the whole.
    pub offset: u32,
    /// At most [`SNAPSHOT_CHUNK_BYTES`].
    pub bytes: Vec<u8>,
}

impl SnapshotChunk {
    /// `bytes`, the state after `tick` ticks, cut into chunks of at most
    /// [`SNAPSHOT_CHUNK_BYTES`] in order. One empty chunk for an empty
    /// snapshot (which the receiver refuses).
    pub fn split(tick: Tick, bytes: &[u8]) -> Vec<SnapshotChunk> {
        let total_len = u32::try_from(bytes.len()).unwrap_or(u32::MAX);
        if bytes.is_empty() {
            return vec![SnapshotChunk {
                tick,
                total_len,
                offset: 0,
                bytes: Vec::new(),
            }];
        }
        bytes
            .chunks(SNAPSHOT_CHUNK_BYTES)
            .enumerate()
            .map(|(i, part)| SnapshotChunk {
                tick,
                total_len,
                offset: (i * SNAPSHOT_CHUNK_BYTES) as u32,
                bytes: part.to_vec(),
            })
            .collect()
    }
}

/// Most hashes one [`ClientMessage::TickHashes`] may carry: 17 s of play
/// at 60 Hz, more than the ticks between two hash reports at any sensible
/// interval; at most 10 KiB on the wire.
pub const MAX_TICK_HASHES: usize = 1024;

/// A client introducing itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    /// Must equal the server's [`crate::PROTOCOL_VERSION`]; first field so it
    /// can be read whatever follows.
    pub protocol_version: u16,
    /// Display name, unique within a session. Reconnecting under the name
    /// of a player of the running game takes that player's slot back.
    pub name: String,
    /// Watch without playing: receive bundles, send no inputs, never make
    /// the players wait.
    pub spectate: bool,
    /// The session password, if the server asks for one. Travels inside
    /// TLS, so only the authenticated server sees it.
    pub password: Option<String>,
    /// The machine and build the client runs on, for the server to show
    /// and record (never to decide anything from).
    pub platform: Platform,
    /// The hash this client's build computes for the self-test of every
    /// game it can play ([`SelfTest`], at most [`MAX_SELF_TESTS`]): a
    /// server whose own build computes another for the game it hosts, or
    /// a client without that game, is refused before the game could
    /// desync.
    pub self_tests: Vec<SelfTest>,
    /// Whether the player is ready for the game as it joins: bots and
    /// headless clients are (so scripts need nobody to press a key), a
    /// person in a window says so in the lobby ([`ClientMessage::Ready`]).
    pub ready: bool,
    /// Set by a client that lost its connection during a game and kept its
    /// world: the server (the same one, or one restarted with `--resume`)
    /// sends only the bundles it lacks, and it plays on from its own state.
    pub resume: Option<Resume>,
}

/// Most games one [`Hello`] may carry a self-test hash for.
pub const MAX_SELF_TESTS: usize = 16;

/// One game's self-test hash, as a client's build computes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SelfTest {
    /// The game's name ([`GameSpec::name`]).
    pub game: String,
    /// The hash of the game's self-test: a short, crowded game every build
    /// plays the same way.
    pub hash: u64,
    /// The hash the game pins for its self-test, if it pins one: what the
    /// machines its authors checked computed. A host built without the
    /// game refuses a client whose `hash` is not this.
    pub pinned: Option<u64>,
}

/// Where a reconnecting client's game stands ([`Hello::resume`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resume {
    /// The world seed of the game it played ([`Start::seed`]): a server
    /// now running another game sends it that game from its start instead.
    pub seed: u64,
    /// The first bundle it does not hold: every earlier one arrived.
    pub next_bundle: Tick,
}

/// Server → client, on the control stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ServerMessage {
    /// The server will not take this client. Must stay variant 0 forever so
    /// clients of any version can read why.
    Refused(Refusal),
    /// Hello accepted; the client waits in the lobby.
    Welcome {
        /// The slot this client will play in.
        player: PlayerId,
        /// Players needed before the game starts.
        players_needed: u8,
    },
    /// Everybody is here: the game begins at tick 0.
    Start(Start),
    /// The server is shutting down or the game was ended by the server.
    Ended {
        /// One readable sentence.
        reason: String,
    },
    /// Peers reported different hashes for a tick.
    Desync(DesyncNotice),
    /// Past bundles for a client joining a running game, in order, before
    /// it plays live: `Start::history` bundles in all, in chunks.
    History {
        /// Tick of `bundles[0]`.
        first_tick: Tick,
        /// Consecutive bundles.
        bundles: Vec<Bundle>,
    },
    /// Who the game is waiting for and how every player's link looks; sent
    /// a few times a second while a game runs (the lag indicator).
    PeerStatus(PeerStatus),
    /// The first tick where the machines of a desync part, found from the
    /// players' [`ClientMessage::TickHashes`]: clients dump that tick too.
    Pinpointed {
        /// The desync's tick, as its [`DesyncNotice`] said.
        tick: Tick,
        /// The first tick whose hashes differ (at most `tick`).
        first: Tick,
    },
    /// The game speed changes for everyone: ticks from `from_tick` on last
    /// `100 / percent` times their nominal length. Only the pacing of wall
    /// time changes, never a tick's game time, so the simulation is the
    /// same at any speed. Announced ahead of `from_tick`, so that every
    /// client switches at the same tick; a client joining a running game
    /// gets the speed in force after its Start.
    Speed {
        /// First tick paced at the new speed.
        from_tick: Tick,
        /// The new speed (100 is full speed).
        percent: Percent,
        /// How much later than their schedule every tick from `from_tick`
        /// on is due, in microseconds: the time the game fell behind its
        /// schedule while a machine could not keep up. Every client
        /// forgives it at the same tick, rather than the slow machine
        /// making it up by running flat out while the others wait for it.
        postpone_us: u32,
    },
    /// The lobby as it stands, sent to every client in it whenever it
    /// changes (a player joins, leaves or changes its ready state, a game
    /// ends) and every second for the pings. Never sent while a game runs.
    Lobby(Lobby),
    /// Send the server your world state after `tick` ticks
    /// ([`ClientMessage::Snapshot`]): the majority of the players reported
    /// the same hash for it, so a state that hashes to it can stand in for
    /// every bundle before it when someone joins.
    SnapshotRequest {
        /// A tick whose hash the majority confirmed, recent enough that
        /// clients still keep it in their history ring.
        tick: Tick,
    },
    /// The verified world state a joining client starts from, before its
    /// History ([`Start::snapshot`]).
    Snapshot(SnapshotChunk),
    /// The sync traces of a diverged player and a majority player for the
    /// first divergent tick, compared: the first value computed
    /// differently, with its file and line, and the values around it, at
    /// most [`crate::MAX_TRACE_LINES`] lines.
    TraceDiff {
        /// The tick the traces are of.
        tick: Tick,
        /// The diverged player whose trace was compared.
        diverged: String,
        /// The majority player whose trace it was compared with.
        majority: String,
        /// The report, `first differing value: ...` first.
        lines: Vec<String>,
    },
}

/// Who waits in the lobby, for which game, and how the last game went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lobby {
    /// Every player in the lobby, ascending by slot.
    pub players: Vec<LobbyPlayer>,
    /// The game that starts when everybody is ready.
    pub next: GameSettings,
    /// The game that ended last on this server, if one did: clients show
    /// its scores (their own world has them; the server never simulates).
    pub last: Option<GameSummary>,
    /// Why the next game does not start although everyone is ready, in
    /// one sentence for everyone in the lobby: the players' machines
    /// computed the game's self-test differently and no majority agrees,
    /// so nobody's is trusted.
    pub held: Option<String>,
}

/// One player waiting in the lobby.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LobbyPlayer {
    /// Its slot: the colour it plays in.
    pub id: PlayerId,
    /// Its display name.
    pub name: String,
    /// Whether it is ready for the next game.
    pub ready: bool,
    /// Round-trip time between the server and this player, milliseconds.
    pub ping_ms: u16,
    /// The target triple its client was built for, as its Hello claims
    /// (at most [`crate::MAX_PLATFORM_CHARS`] characters).
    pub platform: String,
}

/// The rules of the next game, as its [`Start`] will give them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameSettings {
    /// Which game of this server it is, from 1.
    pub game: u32,
    /// Players needed before the game starts (more may join).
    pub players_needed: u8,
    /// Simulation steps per second.
    pub tick_rate: u16,
    /// Ticks between sampling a local input and simulating it, until each
    /// client adapts its own.
    pub input_delay: u8,
    /// Which game, with its settings.
    pub spec: GameSpec,
    /// The world seed of this game: the server's `--seed` for the first,
    /// a new one derived from it for each later game.
    pub seed: u64,
}

/// A game that is over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameSummary {
    /// Which game of this server it was, from 1.
    pub game: u32,
    /// Its world seed.
    pub seed: u64,
    /// Ticks bundled.
    pub ticks: Tick,
}

/// The server's view of every player's link.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeerStatus {
    /// The first tick not yet bundled: what everybody waits for.
    pub next_tick: Tick,
    /// One entry per player still in the game, ascending by id.
    pub peers: Vec<Peer>,
}

/// One player's link as the server sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Peer {
    /// Who.
    pub player: PlayerId,
    /// Round-trip time between the server and this player, milliseconds.
    pub ping_ms: u16,
    /// How many ticks this player's inputs trail the player furthest ahead.
    pub ticks_behind: u16,
    /// Milliseconds since anything arrived from this player.
    pub silent_ms: u32,
    /// Whether the next tick waits for this player's input while others'
    /// inputs are already further ahead.
    pub waited_for: bool,
    /// How early this player's recent inputs arrived; `None` until the
    /// server has timed some. Each client sets its input delay from its
    /// own.
    pub slack: Option<Slack>,
}

/// How long before they were needed one player's inputs reached the
/// server, over its inputs for the ticks from `from` on (a few seconds of
/// them). An input for tick `t` is needed when the clients step tick `t`:
/// the game's start plus `t + 1` ticks on the server's clock (the clients'
/// clocks started when Start reached them, so a bundle sent then arrives
/// just in time). Negative: late, the game waited for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Slack {
    /// The first tick whose input is counted.
    pub from: Tick,
    /// The 1st percentile, milliseconds: all but the latest one in a
    /// hundred inputs had at least this much.
    pub p1_ms: i16,
    /// The 10th percentile, milliseconds: what most inputs had, whatever
    /// a rare hiccup did.
    pub p10_ms: i16,
}

/// The server's verdict on a tick where the reported hashes differ.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DesyncNotice {
    /// The tick whose hashes differ (the first reported one).
    pub tick: Tick,
    /// Players whose hash differs from the majority; every reporter when
    /// there is no majority (for example one player against one).
    pub diverged: Vec<PlayerId>,
    /// The hash most players reported, if a strict majority agreed.
    pub majority: Option<u64>,
    /// The last tick whose hashes were compared before `tick` (0 when
    /// none was): every player answers with its hashes from here to
    /// `tick` ([`ClientMessage::TickHashes`]).
    pub since: Tick,
}

/// Why a client was refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refusal {
    /// One readable sentence for the user.
    pub reason: String,
}

/// Everything a client needs to build the same world as every other client.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Start {
    /// Seed of the world's random generator.
    pub seed: u64,
    /// Simulation steps per second.
    pub tick_rate: u16,
    /// Ticks between sampling a local input and simulating it.
    pub input_delay: u8,
    /// Which game, with its settings: every client builds it from them.
    pub spec: GameSpec,
    /// Every player of the game, in slot order: the world starts with
    /// these players at tick 0.
    pub roster: Vec<RosterEntry>,
    /// Clients report their world hash every this many ticks.
    pub hash_interval: u16,
    /// The receiving client's own slot; `None` for a spectator.
    pub you: Option<PlayerId>,
    /// First tick this client sends inputs for: 0 at the start of a game,
    /// later for a player that rejoins a running game.
    pub first_input_tick: Tick,
    /// Bundles of ticks `0..history` follow as [`ServerMessage::History`]
    /// (a client joining a running game fast-forwards through them);
    /// later ones arrive as datagrams. With a [`Start::snapshot`], the
    /// History starts at the snapshot's tick instead of 0.
    pub history: u32,
    /// The tick of a world state that follows as
    /// [`ServerMessage::Snapshot`] chunks: the client starts from it and
    /// fast-forwards only the bundles after it. `None` at the start of a
    /// game and before the server holds a snapshot.
    pub snapshot: Option<Tick>,
    /// The hash the majority of the players reported for the world at
    /// [`Start::snapshot`]: the client starts from the snapshot only if it
    /// hashes to this, and says [`ClientMessage::BadSnapshot`] otherwise.
    /// A server built with the game verified it already; one without it
    /// cannot, so the joiner's check is what keeps a tampered snapshot
    /// out. `None` when no snapshot follows.
    pub snapshot_hash: Option<u64>,
    /// The answer to a [`Hello::resume`]: the client keeps the world it
    /// has, and the History that follows starts at this tick, the first
    /// bundle it lacked (no snapshot comes). `None` for every other Start.
    pub resume: Option<Tick>,
}

/// One player of the roster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RosterEntry {
    /// Slot.
    pub id: PlayerId,
    /// Display name.
    pub name: String,
}

/// Client → server, as a QUIC datagram.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ClientDatagram {
    /// Local inputs not yet acknowledged by the server.
    Inputs(InputDatagram),
}

/// The client's unacknowledged inputs, for consecutive ticks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputDatagram {
    /// The first bundle tick the client is missing: it holds every bundle
    /// before it, so the server stops repeating them.
    pub bundles_ack: Tick,
    /// Tick of `inputs[0]`.
    pub first_tick: Tick,
    /// Inputs for `first_tick`, `first_tick + 1`, ...
    pub inputs: Vec<Input>,
}

/// Server → client, as a QUIC datagram.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ServerDatagram {
    /// Complete bundles the client has not acknowledged yet.
    Bundles(BundleDatagram),
}

/// [`ServerDatagram`] over borrowed bundles, for encoding only: the same
/// variant and fields in the same order, so postcard writes the same bytes
/// (a slice and a `Vec` encode alike). Keeps the server from copying every
/// bundle for every client on every tick.
#[derive(Serialize)]
pub(crate) enum ServerDatagramRef<'a> {
    Bundles(BundleDatagramRef<'a>),
}

/// [`BundleDatagram`] over borrowed bundles; see [`ServerDatagramRef`].
#[derive(Serialize)]
pub(crate) struct BundleDatagramRef<'a> {
    pub(crate) inputs_ack: Tick,
    pub(crate) first_tick: Tick,
    pub(crate) bundles: &'a [Bundle],
}

/// Consecutive complete bundles.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BundleDatagram {
    /// The first tick the server still needs this client's input for: the
    /// client stops repeating inputs before it.
    pub inputs_ack: Tick,
    /// Tick of `bundles[0]`.
    pub first_tick: Tick,
    /// Bundles for `first_tick`, `first_tick + 1`, ...
    pub bundles: Vec<Bundle>,
}

/// Everything that happens at one tick: each active player's input, and the
/// players removed or added at this tick.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bundle {
    /// Players that leave the game at this tick, before it is simulated.
    /// Every client removes them at the same tick.
    pub left: Vec<PlayerId>,
    /// Players that come back at this tick (after `left`, before the
    /// step): every client adds their disc at the same tick.
    pub joined: Vec<PlayerId>,
    /// One input per remaining active player, in ascending [`PlayerId`] order.
    pub inputs: Vec<PlayerInput>,
    /// Players whose entry in `inputs` is the server's stand-in, not what
    /// they sent: their input was still missing the laggard tolerance
    /// (`lockstep-server --laggard-ms`) after every other input of the tick
    /// had arrived, so the server repeated their input of the previous
    /// bundle (the default input if there was none). Ascending. Clients
    /// apply the bundle as it is, so the game stays deterministic; the mark
    /// tells a late player its input was replaced, and replays keep it.
    /// Last, and one byte when empty, as it almost always is.
    pub substituted: Vec<PlayerId>,
}

/// One player's input inside a bundle, stamped by the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayerInput {
    /// Who sent it (the connection's player, never what a client claims).
    pub player: PlayerId,
    /// What they pressed.
    pub input: Input,
}
