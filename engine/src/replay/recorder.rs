//! Recording a game as the client sees it (`--record FILE`): the same
//! append-only format the server writes (docs/replay-format.md), with this
//! client's own hashes as the reports, so the file verifies on its own.
//!
//! Pure of clocks: the header's start time is passed in by the caller.

use std::io::Write;

use lockstep_protocol::{
    Bundle, Platform, PlayerId, Record, ReplayError, ReplayHeader, ReplayWriter, RosterEntry,
    Start, Tick, PROTOCOL_VERSION,
};

use crate::game::{Game, Setup};

/// The slot a spectator's recording files its hash reports under: the
/// replay format names a player for every report, and a spectator has
/// none. No game gives out this slot.
pub const SPECTATOR_REPORTS: PlayerId = PlayerId(u8::MAX);

/// Hash report interval of a solo recording (the server's default).
const SOLO_HASH_INTERVAL: u16 = 15;

/// What wrote a client recording, as its header says (the workspace
/// shares one version, so this is the client's).
fn build() -> String {
    concat!("lockstep-client ", env!("CARGO_PKG_VERSION")).to_string()
}

/// The header of a networked game's recording, from its Start. A client
/// knows only its own `platform` (the server's replay has everyone's): it
/// is filed under the client's slot, or [`SPECTATOR_REPORTS`] for a
/// spectator, like its hash reports.
pub fn networked_header(
    start: &Start,
    recorder: &str,
    started_unix: u64,
    platform: Platform,
) -> ReplayHeader {
    ReplayHeader {
        protocol_version: PROTOCOL_VERSION,
        build: build(),
        recorder: recorder.to_string(),
        started_unix,
        seed: start.seed,
        tick_rate: start.tick_rate,
        input_delay: start.input_delay,
        hash_interval: start.hash_interval,
        spec: start.spec.clone(),
        roster: start.roster.clone(),
        platforms: vec![(start.you.unwrap_or(SPECTATOR_REPORTS), platform)],
    }
}

/// The header of a solo game's recording. It lists no platforms: a solo
/// game is not a claim about agreement between machines.
pub fn solo_header<G: Game>(
    setup: &Setup<G::Settings>,
    roster: Vec<RosterEntry>,
    started_unix: u64,
) -> ReplayHeader {
    ReplayHeader {
        protocol_version: PROTOCOL_VERSION,
        build: build(),
        recorder: "solo".into(),
        started_unix,
        seed: setup.seed,
        tick_rate: setup.tick_rate,
        input_delay: 0,
        hash_interval: SOLO_HASH_INTERVAL,
        spec: crate::spec_of::<G>(&setup.settings),
        roster,
        platforms: Vec::new(),
    }
}

/// Writes every tick's bundle, and a hash report every `hash_interval`
/// ticks, to `W`.
#[derive(Debug)]
pub struct Recorder<W: Write> {
    writer: ReplayWriter<W>,
    reporter: PlayerId,
    hash_interval: u32,
}

impl<W: Write> Recorder<W> {
    /// Writes the header; hash reports are filed under `reporter` (this
    /// client's slot, or [`SPECTATOR_REPORTS`]).
    pub fn new(out: W, header: &ReplayHeader, reporter: PlayerId) -> Result<Self, ReplayError> {
        Ok(Recorder {
            writer: ReplayWriter::new(out, header)?,
            reporter,
            hash_interval: u32::from(header.hash_interval.max(1)),
        })
    }

    /// Records the bundle that took `game` to its current tick, and the
    /// game's hash on report ticks.
    pub fn tick<G: Game>(&mut self, bundle: &Bundle, game: &G) -> Result<(), ReplayError> {
        let now = game.tick();
        self.writer
            .write_bundle(Tick(now.0.saturating_sub(1)), bundle)?;
        if now.0.is_multiple_of(self.hash_interval) {
            self.writer.write(&Record::Hash {
                tick: now,
                player: self.reporter,
                hash: game.hash(),
            })?;
        }
        Ok(())
    }

    /// Writes the End record and returns the output.
    pub fn finish(self, reason: &str) -> Result<W, ReplayError> {
        self.writer.finish(reason)
    }
}
