//! The page's light module: lockstep's page (`lockstep-web`) with the
//! games that need no physics engine, about a fifth of the full module's
//! download. `scripts/build-web.sh` builds it beside the full one and
//! writes its games into `modules.json`; the page loads it when the game
//! it needs is among them (the server's hosted game, or the game of an
//! offline mode), and the full module otherwise.

lockstep_engine::game_list!(
    /// The ball game and Tally, in the order of the full list: the ball
    /// game first, the default of the page's `?sim=` in both modules.
    pub struct Light: lockstep_balls::World, lockstep_tally::Tally
);

/// Offers the page its games as the module loads, before the page makes
/// its peer.
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen(start)]
pub fn start() {
    lockstep_web::games::offer(&Light);
}

#[cfg(test)]
mod tests {
    use lockstep_engine::games::Games;

    use super::Light;

    /// Each game of the light module is the full module's game of that
    /// name, with the same self-test, and the first game is the same: a
    /// page plays the same game whichever module it loaded.
    #[test]
    fn the_light_modules_games_are_the_full_modules_own_in_its_order() {
        let light = Light.hosted();
        let full = lockstep_games::Shipped.hosted();
        assert_eq!(light[0].name(), full[0].name());
        let names: Vec<&str> = light.iter().map(|game| game.name()).collect();
        assert_eq!(names, ["balls", "tally"]);
        for game in light {
            let same = full
                .iter()
                .find(|other| other.name() == game.name())
                .expect("the full module has every game of the light one");
            assert_eq!(game.self_test(), same.self_test(), "{}", game.name());
        }
    }
}
