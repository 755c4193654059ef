//! `flock-offline`: the flock's offline game and replay verification with
//! nothing but the game and lockstep's engine, for targets `flock-client`
//! cannot be built for (wasm32, which has no sockets). It prints what
//! `flock-client sim` and `flock-client replay FILE --verify --headless`
//! print; lockstep's `make cross` runs the golden table with it under
//! node. See `lockstep_engine::offline_tool`.
//!
//! ```text
//! flock-offline sim [--players P] [--seed S] [--boids B] [--ticks T] [--tick-rate R]
//! flock-offline replay FILE --verify --headless
//! ```

fn main() -> std::process::ExitCode {
    lockstep_engine::offline_tool::main::<flock::Flock>("flock-offline")
}
