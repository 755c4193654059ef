//! Topple on this side: each ram's score. (How it looks is the window
//! crate's `games/physics.rs`.)

use lockstep_protocol::PlayerId;
use lockstep_topple::Physics;

use super::ClientGame;

impl ClientGame for Physics {
    fn scores(&self) -> Vec<(PlayerId, u32)> {
        self.rams().iter().map(|r| (r.player, r.score)).collect()
    }
}
