//! `lockstep-balls`: the ball game's offline game and replay verification
//! with nothing but the game and the engine, for targets the full client
//! cannot be built for (wasm32). See [`lockstep_engine::offline_tool`].
//!
//! ```text
//! lockstep-balls sim [--players P] [--seed S] [--balls B] [--ticks T] [--tick-rate R]
//! lockstep-balls replay FILE --verify --headless
//! ```

fn main() -> std::process::ExitCode {
    lockstep_engine::offline_tool::main::<lockstep_balls::World>("lockstep-balls")
}
