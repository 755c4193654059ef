//! Which game a server hosts: its name and its own settings, as the wire
//! and the replay files carry them.
//!
//! The protocol knows no game. A game names itself (`balls`, `tally`) and
//! encodes its settings itself (postcard of its own settings type); the
//! relay carries both as they are, and every peer builds the same game
//! from them. A host built without the game it hosts cannot encode its
//! settings: it carries them as the host gave them, `KEY=VALUE` pairs
//! ([`Settings::Given`]), and every peer's game parses them the same way.

use serde::{Deserialize, Serialize};

/// Longest game name, in bytes.
pub const MAX_GAME_NAME_LEN: usize = 32;

/// Largest encoded settings accepted: a game's settings are a handful of
/// numbers, and the bound keeps a hostile peer from making anyone hold
/// much.
pub const MAX_GAME_SETTINGS_LEN: usize = 1024;

/// Most `KEY=VALUE` pairs [`Settings::Given`] may hold.
pub const MAX_GIVEN_SETTINGS: usize = 32;

/// The ball game's name: the only game replay formats 3 and 4 and the
/// protocol before version 9 knew.
pub const BALLS_GAME: &str = "balls";

/// A game and its settings.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GameSpec {
    /// The game's name: lower-case ASCII letters, digits and `-`, at most
    /// [`MAX_GAME_NAME_LEN`] bytes.
    pub name: String,
    /// The game's settings, encoded by the game or as the host gave them.
    pub settings: Settings,
}

/// A game's settings on the wire and in replays.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Settings {
    /// As the game encodes them (postcard of its settings type), at most
    /// [`MAX_GAME_SETTINGS_LEN`] bytes; empty for a game without settings.
    /// What a host built with the game sends.
    Encoded(Vec<u8>),
    /// As the host gave them (`--set KEY=VALUE`), in order: what a host
    /// built without the game sends, and every peer's game parses. At most
    /// [`MAX_GIVEN_SETTINGS`] pairs of printable text, keys not empty,
    /// [`MAX_GAME_SETTINGS_LEN`] bytes of keys and values in all.
    Given(Vec<(String, String)>),
}

impl Settings {
    /// The pairs as a person reads them: `boids=64 speed=2`; empty for
    /// encoded settings (only the game can read those).
    pub fn given_text(&self) -> String {
        match self {
            Settings::Encoded(_) => String::new(),
            Settings::Given(pairs) => pairs
                .iter()
                .map(|(key, value)| format!("{key}={value}"))
                .collect::<Vec<_>>()
                .join(" "),
        }
    }
}

/// Why a [`GameSpec`] is refused before any game looks at it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GameSpecError {
    /// The name is empty, too long or has other characters than
    /// lower-case letters, digits and `-`.
    #[error("{0:?} is not a game name (lower-case letters, digits and '-', at most {MAX_GAME_NAME_LEN})")]
    Name(String),
    /// The settings are larger than [`MAX_GAME_SETTINGS_LEN`].
    #[error("the game's settings are {0} bytes, more than {MAX_GAME_SETTINGS_LEN}")]
    Settings(usize),
    /// Given settings with too many pairs, an empty key or a control
    /// character.
    #[error("the game's settings are not {MAX_GIVEN_SETTINGS} or fewer KEY=VALUE pairs of printable text with a key: {0}")]
    Given(String),
}

impl GameSpec {
    /// The ball game with `balls` balls, as formats before the game was
    /// named wrote it: its settings are the postcard of the ball count.
    pub fn balls(balls: u16) -> GameSpec {
        GameSpec {
            name: BALLS_GAME.to_string(),
            // A u16 always encodes (a varint of at most 3 bytes).
            settings: Settings::Encoded(postcard::to_stdvec(&balls).unwrap_or_default()),
        }
    }

    /// Checks the name's characters and the settings' size (and, given
    /// ones, their pairs).
    pub fn check(&self) -> Result<(), GameSpecError> {
        check_game_name(&self.name)?;
        match &self.settings {
            Settings::Encoded(bytes) if bytes.len() > MAX_GAME_SETTINGS_LEN => {
                Err(GameSpecError::Settings(bytes.len()))
            }
            Settings::Encoded(_) => Ok(()),
            Settings::Given(pairs) => check_given(pairs),
        }
    }
}

/// Checks `KEY=VALUE` pairs as [`Settings::Given`] may carry them.
pub fn check_given(pairs: &[(String, String)]) -> Result<(), GameSpecError> {
    let len: usize = pairs.iter().map(|(k, v)| k.len() + v.len()).sum();
    if len > MAX_GAME_SETTINGS_LEN {
        return Err(GameSpecError::Settings(len));
    }
    let printable = |s: &str| !s.chars().any(char::is_control);
    let bad = if pairs.len() > MAX_GIVEN_SETTINGS {
        Some(format!("{} pairs", pairs.len()))
    } else {
        pairs
            .iter()
            .find(|(k, v)| k.is_empty() || k.contains('=') || !printable(k) || !printable(v))
            .map(|(k, v)| format!("{k:?}={v:?}"))
    };
    match bad {
        Some(why) => Err(GameSpecError::Given(why)),
        None => Ok(()),
    }
}

/// Checks that `name` can name a game (see [`GameSpec::name`]).
pub fn check_game_name(name: &str) -> Result<(), GameSpecError> {
    let fits = !name.is_empty()
        && name.len() <= MAX_GAME_NAME_LEN
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if fits {
        Ok(())
    } else {
        Err(GameSpecError::Name(name.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ball_games_settings_are_the_varint_of_its_ball_count() {
        assert_eq!(GameSpec::balls(24).settings, Settings::Encoded(vec![24]));
        assert_eq!(
            GameSpec::balls(300).settings,
            Settings::Encoded(vec![0xac, 0x02])
        );
        assert_eq!(GameSpec::balls(24).name, "balls");
    }

    #[test]
    fn a_game_name_is_short_lower_case_ascii() {
        assert!(check_game_name("balls").is_ok());
        assert!(check_game_name("physics-2").is_ok());
        for bad in ["", "Balls", "a b", "é", &"x".repeat(MAX_GAME_NAME_LEN + 1)] {
            assert_eq!(
                check_game_name(bad),
                Err(GameSpecError::Name(bad.to_string()))
            );
        }
    }

    #[test]
    fn oversized_settings_are_refused() {
        let spec = GameSpec {
            name: "tally".into(),
            settings: Settings::Encoded(vec![0; MAX_GAME_SETTINGS_LEN + 1]),
        };
        assert_eq!(
            spec.check(),
            Err(GameSpecError::Settings(MAX_GAME_SETTINGS_LEN + 1))
        );
        let long = GameSpec {
            name: "flock".into(),
            settings: Settings::Given(vec![("k".into(), "v".repeat(MAX_GAME_SETTINGS_LEN))]),
        };
        assert_eq!(
            long.check(),
            Err(GameSpecError::Settings(MAX_GAME_SETTINGS_LEN + 1))
        );
    }

    #[test]
    fn given_settings_are_a_few_printable_pairs_with_keys() {
        let given = |pairs: &[(&str, &str)]| GameSpec {
            name: "flock".into(),
            settings: Settings::Given(
                pairs
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
        };
        let good = given(&[("boids", "64"), ("speed", "")]);
        assert_eq!(good.check(), Ok(()));
        assert_eq!(good.settings.given_text(), "boids=64 speed=");
        for bad in [
            given(&[("", "1")]),
            given(&[("a=b", "1")]),
            given(&[("boids", "6\n4")]),
            given(&vec![("k", "v"); MAX_GIVEN_SETTINGS + 1]),
        ] {
            assert!(
                matches!(bad.check(), Err(GameSpecError::Given(_))),
                "{bad:?} passed"
            );
        }
        assert_eq!(GameSpec::balls(24).settings.given_text(), "");
    }
}
