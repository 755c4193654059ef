//! `lockstep-sim`: the offline game and replay verification with nothing
//! but the game and the engine, for targets the full client cannot be
//! built for (wasm32, where there are no QUIC sockets). It prints exactly
//! what `lockstep-client sim` and `lockstep-client replay FILE --verify
//! --headless` print, so the same scripts compare them.
//!
//! ```text
//! lockstep-sim sim [--players P] [--seed S] [--balls B] [--ticks T] [--tick-rate R]
//! lockstep-sim replay FILE --verify --headless
//! ```

use std::path::Path;
use std::process::ExitCode;

use lockstep_engine::final_line;
use lockstep_engine::replay::playback as replay;
use lockstep_sim::offline::{self, SimOptions};
use lockstep_sim::{World, WorldConfig};

const USAGE: &str = "usage: lockstep-sim sim [--players P] [--seed S] [--balls B] [--ticks T] \
                     [--tick-rate R]\n       lockstep-sim replay FILE --verify --headless";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("sim") => sim(&args[1..]),
        Some("replay") => verify(&args[1..]),
        _ => Err(USAGE.to_string()),
    };
    match result {
        Ok(lines) => {
            for line in lines {
                println!("{line}");
            }
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("lockstep-sim: {message}");
            ExitCode::FAILURE
        }
    }
}

/// `sim`: the whole game with a bot for every player; the client's
/// defaults.
fn sim(args: &[String]) -> Result<Vec<String>, String> {
    let mut options = SimOptions {
        players: 4,
        seed: 1,
        ticks: 600,
        balls: WorldConfig::DEFAULT_BALLS,
        tick_rate: 60,
    };
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        let value = rest
            .next()
            .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
        let bad = |_| format!("{flag}: not a number: {value:?}");
        match flag.as_str() {
            "--players" => options.players = value.parse().map_err(bad)?,
            "--seed" => options.seed = value.parse().map_err(bad)?,
            "--balls" => options.balls = value.parse().map_err(bad)?,
            "--ticks" => options.ticks = value.parse().map_err(bad)?,
            "--tick-rate" => options.tick_rate = value.parse().map_err(bad)?,
            other => return Err(format!("unknown option {other}\n{USAGE}")),
        }
    }
    if options.players == 0 || options.tick_rate == 0 {
        return Err("--players and --tick-rate must be at least 1".into());
    }
    let world = offline::run(options);
    Ok(vec![final_line(world.tick().0, world.hash())])
}

/// `replay FILE --verify --headless`: re-simulates a recording and checks
/// every recorded hash.
fn verify(args: &[String]) -> Result<Vec<String>, String> {
    let (files, flags): (Vec<&String>, Vec<&String>) =
        args.iter().partition(|a| !a.starts_with("--"));
    let [file] = files[..] else {
        return Err(USAGE.into());
    };
    if !flags.iter().any(|f| *f == "--verify") {
        return Err(format!("only --verify is available here\n{USAGE}"));
    }
    let (recording, problem) = replay::open(Path::new(file)).map_err(|e| e.to_string())?;
    let verified = replay::verify::<World>(recording, None, |_, _| {})
        .map_err(|e| format!("{file}: {e}; this program plays only the ball game"))?;
    let lines = verified
        .conclude(Path::new(file), problem)
        .map_err(|e| e.to_string())?;
    Ok(lines.to_vec())
}
