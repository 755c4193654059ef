//! What the player asked of a networked game beyond the server's Start:
//! the bot, the last tick, a series of games, dumps and recording. (What
//! only tests and measurements set is [`PlayHooks`].)

use lockstep_engine::lockstep::net_game::GameOptions;
use std::path::PathBuf;

use super::notice::Notices;
use crate::hooks::PlayHooks;

/// What the player asked for beyond the server's Start.
#[derive(Debug, Clone)]
pub struct PlayOptions {
    /// Play seeded pseudo-random inputs; `None` uses the frontend's input.
    pub bot: Option<u64>,
    /// Leave once the world reaches this tick (or, before the last of
    /// `games`, say GameDone and wait in the lobby for the next game).
    pub ticks: Option<u32>,
    /// Games to play back to back on this connection, each to `ticks`
    /// (1 plays one game and leaves, as a client always did).
    pub games: u32,
    /// Say ready in every lobby at once: bots, headless clients and
    /// `--ready`. A person in a window otherwise presses a key.
    pub auto_ready: bool,
    /// Where desync dumps are written.
    pub dump_dir: PathBuf,
    /// Snapshots kept, fault injection and the input delay.
    pub game: GameOptions,
    /// Record the game to this replay file.
    pub record: Option<PathBuf>,
    /// Where the game's notices go (the binary prints them).
    pub notices: Notices,
    /// Departures from real play, for tests and measurements (none by
    /// default).
    pub hooks: PlayHooks,
}

impl PlayOptions {
    /// The options of game `game` (from 1) of a series of `games`: each
    /// game its own recording, `FILE` for the first and `STEM-gameN.EXT`
    /// for each later one.
    #[must_use]
    pub fn for_game(&self, game: u32) -> PlayOptions {
        let record = self.record.as_ref().map(|path| {
            if game <= 1 {
                return path.clone();
            }
            let stem = path.file_stem().unwrap_or_default().to_string_lossy();
            let name = match path.extension() {
                Some(ext) => format!("{stem}-game{game}.{}", ext.to_string_lossy()),
                None => format!("{stem}-game{game}"),
            };
            path.with_file_name(name)
        });
        PlayOptions {
            record,
            ..self.clone()
        }
    }

    /// Whether game `game` (from 1) is the last of the series: after it
    /// the client leaves instead of waiting for the next.
    #[must_use]
    pub fn is_last(&self, game: u32) -> bool {
        game >= self.games
    }
}
