//! `lockstep-topple`: Topple's offline game and replay verification with
//! nothing but the game and the engine, for targets the full client cannot
//! be built for (wasm32), and the rapier probe. See
//! [`lockstep_engine::offline_tool`] and [`lockstep_topple::probe`].
//!
//! ```text
//! lockstep-topple sim [--players P] [--seed S] [--bodies B] [--ticks T] [--tick-rate R]
//! lockstep-topple replay FILE --verify --headless
//! lockstep-topple trace-diff A B
//! lockstep-topple probe [--ticks N] [--every K] [--trace TICKS] [SCENARIO...]
//! ```

use std::process::ExitCode;

const PROGRAM: &str = "lockstep-topple";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("sim" | "replay" | "trace-diff") => {
            lockstep_engine::offline_tool::main::<lockstep_topple::Physics>(PROGRAM)
        }
        Some("probe") => match lockstep_topple::probe::command(PROGRAM, &args[1..]) {
            Ok(lines) => {
                for line in lines {
                    println!("{line}");
                }
                ExitCode::SUCCESS
            }
            Err(message) => {
                eprintln!("{PROGRAM}: {message}");
                ExitCode::FAILURE
            }
        },
        _ => {
            eprintln!(
                "{}\n{}",
                lockstep_engine::offline_tool::usage(PROGRAM),
                lockstep_topple::probe::usage(PROGRAM)
            );
            ExitCode::FAILURE
        }
    }
}
