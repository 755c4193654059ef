//! What a host needs of a game it never simulates: the server and the
//! tools take a game as a value ([`HostedGame`]), chosen by name at run
//! time from the list a binary offers.
//!
//! The relay only carries inputs, yet it still checks what it can for
//! whatever game it hosts: it parses and shows the game's settings, runs
//! the game's preflight to refuse a client whose build computes other
//! bits, and hashes the snapshots players send before a joiner starts
//! from one. [`Hosted`] gives every [`Game`](crate::Game) with bots these
//! for free.

use std::marker::PhantomData;
use std::path::Path;

use lockstep_protocol::{decode, GameSpec, Tick, MAX_SNAPSHOT_SIZE};

use crate::determinism::desync::DumpError;
use crate::determinism::diff::{compare_dumps, DiffReport};
use crate::game::{settings_of, spec_of, HasBots, SetupError};

/// A game as a host sees it, without its type.
pub trait HostedGame: Send + Sync {
    /// Its name ([`Game::NAME`](crate::Game::NAME)).
    fn name(&self) -> &'static str;

    /// What it is, in a few words ([`HasBots::ABOUT`]).
    fn about(&self) -> &'static str;

    /// Its default settings, encoded.
    fn default_spec(&self) -> GameSpec;

    /// The settings given as `KEY=VALUE` pairs, encoded
    /// ([`HasBots::parse_settings`]).
    fn parse_settings(&self, pairs: &[(String, String)]) -> Result<GameSpec, String>;

    /// The settings of `spec` in a few words ("24 balls"), or why they are
    /// not this game's.
    fn describe(&self, spec: &GameSpec) -> Result<String, SetupError>;

    /// The hash of the game's self-test ([`HasBots::self_test`]).
    fn self_test(&self) -> u64;

    /// The hash the game pins for its self-test ([`HasBots::SELF_TEST_PIN`]).
    fn self_test_pin(&self) -> Option<u64>;

    /// The tick and hash of a snapshot a player sent (the postcard of the
    /// game's state), or why it is not a state of this game.
    fn snapshot(&self, bytes: &[u8]) -> Result<(Tick, u64), String>;

    /// Compares two desync dumps of this game field by field
    /// (`desync-diff`).
    fn compare_dumps(&self, a: &Path, b: &Path, max: usize) -> Result<DiffReport, DumpError>;
}

impl std::fmt::Debug for dyn HostedGame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HostedGame({})", self.name())
    }
}

/// [`HostedGame`] for the game type `G`.
pub struct Hosted<G>(PhantomData<fn() -> G>);

impl<G> Hosted<G> {
    /// The host's view of `G`.
    pub const fn new() -> Self {
        Hosted(PhantomData)
    }
}

impl<G> Default for Hosted<G> {
    fn default() -> Self {
        Hosted::new()
    }
}

impl<G: HasBots> HostedGame for Hosted<G> {
    fn name(&self) -> &'static str {
        G::NAME
    }

    fn about(&self) -> &'static str {
        G::ABOUT
    }

    fn default_spec(&self) -> GameSpec {
        spec_of::<G>(&G::Settings::default())
    }

    fn parse_settings(&self, pairs: &[(String, String)]) -> Result<GameSpec, String> {
        G::parse_settings(pairs).map(|settings| spec_of::<G>(&settings))
    }

    fn describe(&self, spec: &GameSpec) -> Result<String, SetupError> {
        settings_of::<G>(spec).map(|settings| G::describe_settings(&settings))
    }

    fn self_test(&self) -> u64 {
        G::self_test()
    }

    fn self_test_pin(&self) -> Option<u64> {
        G::SELF_TEST_PIN
    }

    fn snapshot(&self, bytes: &[u8]) -> Result<(Tick, u64), String> {
        let state: G = decode(bytes, MAX_SNAPSHOT_SIZE as usize)
            .map_err(|e| format!("not a state of the game {}: {e}", G::NAME))?;
        Ok((state.tick(), state.hash()))
    }

    fn compare_dumps(&self, a: &Path, b: &Path, max: usize) -> Result<DiffReport, DumpError> {
        compare_dumps::<G>(a, b, max)
    }
}

/// One `--set KEY=VALUE` of the command line, as the pair
/// [`HostedGame::parse_settings`] takes.
pub fn parse_setting(s: &str) -> Result<(String, String), String> {
    let (key, value) = s
        .split_once('=')
        .ok_or_else(|| format!("expected KEY=VALUE, got {s:?}"))?;
    Ok((key.trim().to_string(), value.trim().to_string()))
}

/// A game name no list offers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("there is no game {name:?} here; the games are: {}", offered.join(", "))]
pub struct UnknownGame {
    /// The name asked for.
    pub name: String,
    /// The names offered.
    pub offered: Vec<&'static str>,
}

/// The game called `name` in `games`.
pub fn find_game<'a>(
    games: &[&'a dyn HostedGame],
    name: &str,
) -> Result<&'a dyn HostedGame, UnknownGame> {
    games
        .iter()
        .find(|game| game.name() == name)
        .copied()
        .ok_or_else(|| UnknownGame {
            name: name.to_string(),
            offered: games.iter().map(|game| game.name()).collect(),
        })
}

/// `games` for a help text: `balls (the ball game), tally (counters) or
/// physics (...)`, each as `NAME (ABOUT)`.
pub fn describe_games(games: &[&dyn HostedGame]) -> String {
    let described: Vec<String> = games
        .iter()
        .map(|game| format!("{} ({})", game.name(), game.about()))
        .collect();
    match described.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use lockstep_protocol::encode;

    use super::*;
    use crate::testing::Tally;
    use crate::Game;

    const GAMES: &[&dyn HostedGame] = &[&Hosted::<Tally>::new()];

    #[test]
    fn a_game_is_found_by_its_name_and_an_unknown_name_lists_the_games() {
        assert_eq!(find_game(GAMES, "tally").map(|g| g.name()), Ok("tally"));
        let unknown = find_game(GAMES, "chess").map(|g| g.name()).unwrap_err();
        assert_eq!(
            unknown.to_string(),
            "there is no game \"chess\" here; the games are: tally"
        );
    }

    #[test]
    fn a_snapshot_is_hashed_as_the_game_hashes_it_and_garbage_is_refused() {
        let game = crate::testing::play(3, 40);
        let bytes = encode(&game, MAX_SNAPSHOT_SIZE as usize).unwrap();
        let hosted = Hosted::<Tally>::new();
        assert_eq!(hosted.snapshot(&bytes), Ok((Tick(40), game.hash())));
        assert!(hosted.snapshot(&bytes[..bytes.len() - 1]).is_err());
        assert!(hosted.snapshot(&[]).is_err());
    }

    #[test]
    fn settings_of_another_game_are_refused_with_both_names() {
        let hosted = Hosted::<Tally>::new();
        let other = GameSpec::balls(24);
        assert_eq!(
            hosted.describe(&other),
            Err(SetupError::OtherGame {
                expected: "tally",
                found: "balls".into()
            })
        );
        assert_eq!(hosted.describe(&hosted.default_spec()), Ok(String::new()));
        assert!(hosted
            .parse_settings(&[("balls".into(), "3".into())])
            .unwrap_err()
            .contains("no setting \"balls\""));
    }

    /// A host built without the game carries its settings as given; the
    /// game parses them as it parses its command line.
    #[test]
    fn given_settings_are_parsed_by_the_game() {
        let hosted = Hosted::<Tally>::new();
        let given = |pairs: &[(&str, &str)]| GameSpec {
            name: "tally".into(),
            settings: lockstep_protocol::Settings::Given(
                pairs
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
        };
        assert_eq!(hosted.describe(&given(&[])), Ok(String::new()));
        match hosted.describe(&given(&[("balls", "3")])) {
            Err(SetupError::Settings { game, why }) => {
                assert_eq!(game, "tally");
                assert!(why.contains("no setting \"balls\""), "{why}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_self_test_is_the_same_every_time_and_depends_on_the_game() {
        let hosted = Hosted::<Tally>::new();
        assert_eq!(hosted.self_test(), hosted.self_test());
        assert_ne!(hosted.self_test(), 0);
    }

    #[test]
    fn games_are_described_by_name_and_in_a_few_words() {
        assert_eq!(describe_games(&[]), "");
        assert_eq!(describe_games(GAMES), "tally (counters)");
        let three: [&dyn HostedGame; 3] = [GAMES[0], GAMES[0], GAMES[0]];
        assert_eq!(
            describe_games(&three),
            "tally (counters), tally (counters) or tally (counters)"
        );
    }
}
