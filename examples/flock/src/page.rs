//! The flock in the browser: lockstep's page (`lockstep-web`), whose wasm
//! module is this crate's library, playing the flock. lockstep's
//! `scripts/build-web.sh --manifest-path Cargo.toml` builds it; the
//! stock server serves it (`lockstep-server --game flock --web-dir
//! target/web`). The page draws the flock with its view (`view.rs`), as
//! the window does.

use wasm_bindgen::prelude::wasm_bindgen;

lockstep_engine::game_list!(
    /// The games the page plays: the flock.
    struct Games: crate::Flock
);

/// Offers the page its games as the module loads, before the page makes
/// its peer.
#[wasm_bindgen(start)]
pub fn start() {
    lockstep_web::games::offer(&Games);
}
