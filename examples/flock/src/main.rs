//! `flock-client`: lockstep's client with the flock in its list of games.
//! Every command of `lockstep-client` works on it: a headless bot, the
//! window, `solo`, `sim`, `synctest`, `replay --verify`, `desync-diff`,
//! `report`.

lockstep_engine::game_list!(
    /// The games this client plays: the flock (add lockstep's own after it,
    /// `lockstep_balls::World` and the rest, to play those too).
    struct Games: flock::Flock
);

fn main() -> std::process::ExitCode {
    lockstep_cli::main(&Games)
}
