//! `lockstep-physics`: Topple's offline game and replay verification with
//! nothing but the game and the engine, for targets the full client cannot
//! be built for (wasm32). See [`lockstep_engine::offline_tool`].
//!
//! ```text
//! lockstep-physics sim [--players P] [--seed S] [--bodies B] [--ticks T] [--tick-rate R]
//! lockstep-physics replay FILE --verify --headless
//! ```

fn main() -> std::process::ExitCode {
    lockstep_engine::offline_tool::main::<lockstep_physics::Physics>("lockstep-physics")
}
