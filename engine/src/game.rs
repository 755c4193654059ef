//! The seam between the engine and a game: what the lockstep core needs
//! from any deterministic simulation, as ggrs's `Config` is for ggrs.
//!
//! The engine never looks inside a game. It builds one from a [`Setup`]
//! everyone agrees on, steps it with one input per player per tick,
//! compares its hash, and snapshots it through serde (postcard keeps every
//! float bit). The ball game of `lockstep-sim` implements [`Game`]; so does
//! the counter game in `engine/examples/`, which shows the seam is real.

use lockstep_protocol::{Bundle, PlayerId, PlayerInput, ReplayHeader, Start, Tick};
use serde::de::DeserializeOwned;
use serde::Serialize;

/// What every peer builds the same starting state from: the server's
/// Start, a replay header, or the options of an offline run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setup {
    /// Seed of every random choice the game makes.
    pub seed: u64,
    /// Ticks per second: the fixed step is `1 / tick_rate`.
    pub tick_rate: u16,
    /// Size of the ball game's arena population, carried by Start and the
    /// replay header; a game without balls ignores it.
    pub balls: u16,
    /// The starting roster, ascending by id.
    pub players: Vec<PlayerId>,
}

impl Setup {
    /// The game the server announced.
    pub fn from_start(start: &Start) -> Setup {
        Setup {
            seed: start.seed,
            tick_rate: start.tick_rate,
            balls: start.balls,
            players: start.roster.iter().map(|r| r.id).collect(),
        }
    }

    /// The game a replay recorded.
    pub fn from_header(header: &ReplayHeader) -> Setup {
        Setup {
            seed: header.seed,
            tick_rate: header.tick_rate,
            balls: header.balls,
            players: header.roster.iter().map(|r| r.id).collect(),
        }
    }
}

/// A deterministic game the lockstep engine can drive.
///
/// The contract: two values built from the same [`Setup`] and stepped with
/// the same inputs have the same [`hash`](Game::hash) and compare equal, on
/// every machine; a value serialised and deserialised is equal to the
/// original (the snapshot carries the whole state, RNG included).
pub trait Game: Clone + PartialEq + std::fmt::Debug + Serialize + DeserializeOwned {
    /// The state every peer starts from.
    fn start(setup: &Setup) -> Self;

    /// Advances one tick. `inputs` holds at most one entry per active
    /// player; a player without one behaves as if nothing was pressed.
    fn step(&mut self, inputs: &[PlayerInput]);

    /// Ticks stepped so far.
    fn tick(&self) -> Tick;

    /// Checksum of the whole state, compared between peers.
    fn hash(&self) -> u64;

    /// Takes a player out before a tick (it left or was dropped). A game
    /// whose players never leave may keep the default, which ignores it.
    fn remove_player(&mut self, _player: PlayerId) {}

    /// Brings a player of the starting roster back before a tick (it
    /// rejoined). The default ignores it, like [`Game::remove_player`].
    fn add_player(&mut self, _player: PlayerId) {}

    /// Whether `player` takes part now (false once removed).
    fn has_player(&self, _player: PlayerId) -> bool {
        true
    }

    /// Advances one tick exactly as [`Game::step`] does, calling
    /// `after(phase, self)` after each phase of the step, in order: the
    /// inputs applied, movement, collisions... whatever the game's phases
    /// are. A desync dump hashes the state at each call, so `desync-diff`
    /// can say in which phase two machines first part (Factorio's heavy
    /// mode, Quantum's partial checksums). When `after` changes nothing,
    /// the result must equal [`Game::step`]'s. The default is one phase,
    /// `"step"`.
    fn step_phases(
        &mut self,
        inputs: &[PlayerInput],
        after: &mut dyn FnMut(&'static str, &mut Self),
    ) {
        self.step(inputs);
        after("step", self);
    }

    /// Fault injection for desync tests: the smallest change to one field;
    /// returns that field's path as the dump diff names it, or `None` when
    /// the game offers no such change.
    fn nudge(&mut self) -> Option<&'static str> {
        None
    }
}

/// Applies one bundle: departures first, then returns, then the inputs.
/// The one place a bundle turns into a step, shared by live play, solo
/// play, replays and verification.
pub fn apply<G: Game>(game: &mut G, bundle: &Bundle) {
    change_roster(game, bundle);
    game.step(&bundle.inputs);
}

/// [`apply`] with a call after the roster changes (phase `"roster"`) and
/// after each phase of the step ([`Game::step_phases`]).
pub fn apply_phases<G: Game>(
    game: &mut G,
    bundle: &Bundle,
    after: &mut dyn FnMut(&'static str, &mut G),
) {
    change_roster(game, bundle);
    after("roster", game);
    game.step_phases(&bundle.inputs, after);
}

/// The bundle's departures, then its returns.
fn change_roster<G: Game>(game: &mut G, bundle: &Bundle) {
    for &left in &bundle.left {
        game.remove_player(left);
    }
    for &joined in &bundle.joined {
        game.add_player(joined);
    }
}
