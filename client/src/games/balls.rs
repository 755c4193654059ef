//! The ball game on this side: its goals are its scores. (How it looks is
//! the window crate's `games/balls.rs`.)

use lockstep_balls::World;
use lockstep_protocol::PlayerId;

use super::ClientGame;

impl ClientGame for World {
    fn scores(&self) -> Vec<(PlayerId, u32)> {
        World::scores(self)
            .iter()
            .map(|score| (score.player, score.goals))
            .collect()
    }
}
