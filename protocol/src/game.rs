//! Which game a server hosts: its name and its own settings, as the wire
//! and the replay files carry them.
//!
//! The protocol knows no game. A game names itself (`balls`, `tally`) and
//! encodes its settings itself (postcard of its own settings type); the
//! relay carries both as they are, and every peer builds the same game
//! from them.

use serde::{Deserialize, Serialize};

/// Longest game name, in bytes.
pub const MAX_GAME_NAME_LEN: usize = 32;

/// Largest encoded settings accepted: a game's settings are a handful of
/// numbers, and the bound keeps a hostile peer from making anyone hold
/// much.
pub const MAX_GAME_SETTINGS_LEN: usize = 1024;

/// The ball game's name: the only game replay formats 3 and 4 and the
/// protocol before version 9 knew.
pub const BALLS_GAME: &str = "balls";

/// A game and its settings.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GameSpec {
    /// The game's name: lower-case ASCII letters, digits and `-`, at most
    /// [`MAX_GAME_NAME_LEN`] bytes.
    pub name: String,
    /// The game's settings as the game encodes them (postcard), at most
    /// [`MAX_GAME_SETTINGS_LEN`] bytes; empty for a game without settings.
    pub settings: Vec<u8>,
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
}

impl GameSpec {
    /// The ball game with `balls` balls, as formats before the game was
    /// named wrote it: its settings are the postcard of the ball count.
    pub fn balls(balls: u16) -> GameSpec {
        GameSpec {
            name: BALLS_GAME.to_string(),
            // A u16 always encodes (a varint of at most 3 bytes).
            settings: postcard::to_stdvec(&balls).unwrap_or_default(),
        }
    }

    /// Checks the name's characters and the settings' size.
    pub fn check(&self) -> Result<(), GameSpecError> {
        check_game_name(&self.name)?;
        if self.settings.len() > MAX_GAME_SETTINGS_LEN {
            return Err(GameSpecError::Settings(self.settings.len()));
        }
        Ok(())
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
        assert_eq!(GameSpec::balls(24).settings, vec![24]);
        assert_eq!(GameSpec::balls(300).settings, vec![0xac, 0x02]);
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
            settings: vec![0; MAX_GAME_SETTINGS_LEN + 1],
        };
        assert_eq!(
            spec.check(),
            Err(GameSpecError::Settings(MAX_GAME_SETTINGS_LEN + 1))
        );
    }
}
