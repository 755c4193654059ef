//! The seam between the engine and a game: what the lockstep core needs
//! from any deterministic simulation, as ggrs's `Config` is for ggrs.
//!
//! The engine never looks inside a game. It builds one from a [`Setup`]
//! everyone agrees on, steps it with one input per player per tick,
//! compares its hash, and snapshots it through serde (postcard keeps every
//! float bit). The ball game of `lockstep-balls` implements [`Game`]; so does
//! Tally (`games/tally`), which the engine's unit tests and its example
//! play: the seam is real.

use std::fmt::Debug;

use lockstep_protocol::{
    decode, Bundle, GameSpec, Input, PlayerId, PlayerInput, ReplayHeader, Settings, Start, Tick,
    MAX_GAME_SETTINGS_LEN,
};
use serde::de::DeserializeOwned;
use serde::Serialize;

/// What every peer builds the same starting state from: the server's
/// Start, a replay header, or the options of an offline run. `S` is the
/// game's own settings ([`Game::Settings`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setup<S> {
    /// Seed of every random choice the game makes.
    pub seed: u64,
    /// Ticks per second: the fixed step is `1 / tick_rate`.
    pub tick_rate: u16,
    /// The game's own settings (the ball game's ball count).
    pub settings: S,
    /// The starting roster, ascending by id.
    pub players: Vec<PlayerId>,
}

/// Why a Start or a replay cannot set up a game.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    /// It is another game than the one asked for.
    #[error("this is a game of {found}, not of {expected}")]
    OtherGame {
        /// The game the code was built for.
        expected: &'static str,
        /// The game named.
        found: String,
    },
    /// The settings do not decode as the game's settings, or, given as
    /// `KEY=VALUE` pairs, the game's parser refuses them.
    #[error("the game {game} refuses its settings: {why}")]
    Settings {
        /// The game.
        game: &'static str,
        /// The decoder's complaint.
        why: String,
    },
}

/// A game asked to step by a measured dt that steps only by its fixed
/// tick ([`Game::VARIABLE_STEP`] is false).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the game {game} steps only by its fixed tick, not by a measured dt")]
pub struct FixedStepOnly {
    /// The game.
    pub game: &'static str,
}

impl<S> Setup<S> {
    /// The game the server announced, if it is `G`.
    pub fn from_start<G: HasBots<Settings = S>>(start: &Start) -> Result<Self, SetupError> {
        Ok(Setup {
            seed: start.seed,
            tick_rate: start.tick_rate,
            settings: settings_of::<G>(&start.spec)?,
            players: start.roster.iter().map(|r| r.id).collect(),
        })
    }

    /// The game a replay recorded, if it is `G`.
    pub fn from_header<G: HasBots<Settings = S>>(
        header: &ReplayHeader,
    ) -> Result<Self, SetupError> {
        Ok(Setup {
            seed: header.seed,
            tick_rate: header.tick_rate,
            settings: settings_of::<G>(&header.spec)?,
            players: header.roster.iter().map(|r| r.id).collect(),
        })
    }
}

/// `spec`'s settings, if it names `G`: decoded, or parsed by the game
/// when the host gave them as `KEY=VALUE` pairs (a host built without the
/// game), so every peer builds the same settings from the same pairs.
pub fn settings_of<G: HasBots>(spec: &GameSpec) -> Result<G::Settings, SetupError> {
    if spec.name != G::NAME {
        return Err(SetupError::OtherGame {
            expected: G::NAME,
            found: spec.name.clone(),
        });
    }
    let why = |why: String| SetupError::Settings { game: G::NAME, why };
    match &spec.settings {
        Settings::Encoded(bytes) => {
            decode(bytes, MAX_GAME_SETTINGS_LEN).map_err(|e| why(e.to_string()))
        }
        Settings::Given(pairs) => G::parse_settings(pairs).map_err(why),
    }
}

/// `G` with `settings`, as Start and the replay header carry it.
pub fn spec_of<G: Game>(settings: &G::Settings) -> GameSpec {
    GameSpec {
        name: G::NAME.to_string(),
        // Settings are a handful of plain values: encoding cannot fail.
        settings: Settings::Encoded(postcard::to_stdvec(settings).unwrap_or_default()),
    }
}

/// A deterministic game the lockstep engine can drive.
///
/// The contract: two values built from the same [`Setup`] and stepped with
/// the same inputs have the same [`hash`](Game::hash) and compare equal, on
/// every machine; a value serialised and deserialised is equal to the
/// original (the snapshot carries the whole state, RNG included). One
/// provided method stands outside it: [`Game::step_variable`], a step by
/// a measured dt for the game loop lab, which games whose rules allow a
/// real-valued dt implement.
pub trait Game: Clone + PartialEq + Debug + Serialize + DeserializeOwned {
    /// The game's name on the wire, in replays and on the command line
    /// (`--game`): lower-case letters, digits and `-`.
    const NAME: &'static str;

    /// The settings the host chooses for a game (the ball game's ball
    /// count), carried by Start and the replay header as their postcard
    /// encoding. `()` for a game without settings.
    type Settings: Clone + Debug + PartialEq + Default + Serialize + DeserializeOwned + Send;

    /// The names [`Game::step_phases`] calls its phases by, in order: what
    /// fault injection may name (`--inject-desync-phase`).
    const PHASES: &'static [&'static str] = &["step"];

    /// How often a client's history ring keeps a whole state (for desync
    /// dumps and the snapshots the server asks for): every tick for a
    /// small state; a large one (a physics world) keeps one every
    /// `STATE_EVERY` ticks and steps on from it with the kept bundles when
    /// a tick between is asked for, so ten seconds of history cost
    /// `600 / STATE_EVERY` states.
    const STATE_EVERY: u32 = 1;

    /// The state every peer starts from.
    fn start(setup: &Setup<Self::Settings>) -> Self;

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

    /// Whether [`Game::step_variable`] steps by the `dt` it is given. A
    /// game whose rules are per tick (a counter that halves every tick)
    /// keeps the default, `false`, and can only be stepped by
    /// [`Game::step`].
    const VARIABLE_STEP: bool = false;

    /// Advances one step of `dt` seconds (finite, not negative) instead of
    /// the fixed tick of [`Setup::tick_rate`], with the inputs rule of
    /// [`Game::step`]: what the game loop lab's variable-step strategies
    /// run, to show what a variable step does to a game.
    ///
    /// Outside the determinism contract: `dt` comes from the wall clock,
    /// so two machines, or two runs, never step alike. Only solo play in
    /// the lab calls it; anything shared, replayed or hashed uses
    /// [`Game::step`], whose results a game that implements this must not
    /// change. A game without [`Game::VARIABLE_STEP`] keeps the default,
    /// which changes nothing and says the game cannot.
    fn step_variable(&mut self, _inputs: &[PlayerInput], _dt: f32) -> Result<(), FixedStepOnly> {
        Err(FixedStepOnly { game: Self::NAME })
    }

    /// Fault injection for desync tests: the smallest change to one field;
    /// returns that field's path as the dump diff names it, or `None` when
    /// the game offers no such change.
    fn nudge(&mut self) -> Option<&'static str> {
        None
    }
}

/// A game with seeded computer players: what headless bots, `sim`,
/// `synctest`, solo play and a game's self-test play with.
pub trait HasBots: Game {
    /// What the game is, in a few words, with its settings: help texts
    /// list each game as `NAME (ABOUT)` ([`describe_games`](crate::describe_games)).
    const ABOUT: &'static str;

    /// One computer player's state.
    type Bot: Clone + Debug + Send;

    /// The bot of `player` in a game seeded with `seed`: two machines
    /// build the same bot from the same numbers.
    fn bot(seed: u64, player: PlayerId) -> Self::Bot;

    /// The input `bot` chooses for player `me` in this state.
    fn bot_input(&self, bot: &mut Self::Bot, me: PlayerId) -> Input;

    /// The settings given on the command line as `KEY=VALUE` pairs
    /// (`--balls 12` is the pair `balls=12`); the defaults for the keys
    /// left out. The default accepts no key.
    fn parse_settings(pairs: &[(String, String)]) -> Result<Self::Settings, String> {
        match pairs.first() {
            None => Ok(Self::Settings::default()),
            Some((key, _)) => Err(format!("the game {} has no setting {key:?}", Self::NAME)),
        }
    }

    /// The settings in a few words, for the lobby and the server list
    /// ("24 balls"); empty for a game without settings.
    fn describe_settings(_settings: &Self::Settings) -> String {
        String::new()
    }

    /// The hash [`HasBots::self_test`] must give, pinned by the game's
    /// authors from the machines they checked (a golden row of the
    /// self-test), or `None`. A host built without the game (which cannot
    /// compute the self-test itself) refuses a client whose machine
    /// computes another: see [`HasBots::self_test`].
    const SELF_TEST_PIN: Option<u64> = None;

    /// The preflight: the hash after a short game of bots every build
    /// plays the same way. A server refuses a client whose build computes
    /// another for the game it hosts: a server built with the game
    /// compares it with its own; one built without it, with
    /// [`HasBots::SELF_TEST_PIN`] and with the other players' hashes. The default plays four bots for 120
    /// ticks at 60 Hz with the default settings.
    fn self_test() -> u64 {
        let setup = Setup {
            seed: 0x5e1f_7e57,
            tick_rate: 60,
            settings: Self::Settings::default(),
            players: (0..4).map(PlayerId).collect(),
        };
        offline::<Self>(&setup, 120).hash()
    }
}

/// A game of bots only: `setup` stepped `ticks` times with a bot for every
/// player, seeded with the setup's seed (`lockstep-client sim`).
pub fn offline<G: HasBots>(setup: &Setup<G::Settings>, ticks: u32) -> G {
    let mut game = G::start(setup);
    let mut bots = Bots::<G>::new(setup.seed, &setup.players);
    for _ in 0..ticks {
        let inputs = bots.inputs(&game);
        game.step(&inputs);
    }
    game
}

/// [`offline`], with the sync trace ([`crate::trace`]) of the steps that
/// reach the ticks in `traced`, in order: what `sim --trace` prints, for
/// two builds or targets to compare with `trace-diff`.
pub fn offline_traced<G: HasBots>(
    setup: &Setup<G::Settings>,
    ticks: u32,
    traced: std::ops::RangeInclusive<u32>,
) -> (G, crate::trace::Trace) {
    let mut game = G::start(setup);
    let mut bots = Bots::<G>::new(setup.seed, &setup.players);
    let mut all = crate::trace::Trace::default();
    for _ in 0..ticks {
        let inputs = bots.inputs(&game);
        let reaching = game.tick().0.saturating_add(1);
        if !traced.contains(&reaching) {
            game.step(&inputs);
            continue;
        }
        let ((), trace) = crate::trace::record(reaching, || {
            game.step_phases(&inputs, &mut |phase, _| crate::trace::end_phase(phase));
        });
        all.entries.extend(trace.entries);
        all.dropped += trace.dropped;
    }
    (game, all)
}

/// [`offline`] by variable steps of `dt` seconds each
/// ([`Game::step_variable`]): what a game's tests compare with
/// [`offline`] to show a variable step of the fixed dt is the fixed step.
pub fn offline_variable<G: HasBots>(
    setup: &Setup<G::Settings>,
    ticks: u32,
    dt: f32,
) -> Result<G, FixedStepOnly> {
    let mut game = G::start(setup);
    let mut bots = Bots::<G>::new(setup.seed, &setup.players);
    for _ in 0..ticks {
        let inputs = bots.inputs(&game);
        game.step_variable(&inputs, dt)?;
    }
    Ok(game)
}

/// One bot per player, for a game without people.
#[derive(Debug, Clone)]
pub struct Bots<G: HasBots> {
    /// Each player's bot, ascending by player id.
    bots: Vec<(PlayerId, G::Bot)>,
}

impl<G: HasBots> Bots<G> {
    /// A [`HasBots::bot`] for each of `players`.
    pub fn new(seed: u64, players: &[PlayerId]) -> Self {
        let mut players = players.to_vec();
        players.sort_unstable();
        players.dedup();
        Bots {
            bots: players
                .into_iter()
                .map(|player| (player, G::bot(seed, player)))
                .collect(),
        }
    }

    /// This tick's inputs of every bot whose player is in the game,
    /// ascending by player id.
    pub fn inputs(&mut self, game: &G) -> Vec<PlayerInput> {
        self.bots
            .iter_mut()
            .filter(|(player, _)| game.has_player(*player))
            .map(|(player, bot)| PlayerInput {
                player: *player,
                input: game.bot_input(bot, *player),
            })
            .collect()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{self, Tally};

    #[test]
    fn a_game_steps_only_by_its_tick_unless_it_says_otherwise() {
        const { assert!(!Tally::VARIABLE_STEP) };
        let mut game = Tally::start(&testing::setup(2));
        let before = game.clone();
        assert_eq!(
            game.step_variable(&[], 0.01),
            Err(FixedStepOnly { game: "tally" })
        );
        assert_eq!(game, before, "a refused step changes nothing");
        let refused = offline_variable::<Tally>(&testing::setup(2), 10, 1.0 / 60.0);
        assert_eq!(refused, Err(FixedStepOnly { game: "tally" }));
    }
}
