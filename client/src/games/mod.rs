//! The games this client plays, chosen by name at run time: the engine's
//! list of games ([`Games`]) and code generic over the game
//! ([`ForGame`]), which the binary's list implements. The client names no
//! game: a game brings what this side needs of it in its own crate.

pub use lockstep_engine::games::{ForGame, Games, Playable};
