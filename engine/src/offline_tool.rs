//! The offline game and replay verification as a small program of its own
//! for one game, for targets the full client cannot be built for (wasm32,
//! where there are no QUIC sockets): `lockstep-balls` for the ball game,
//! `lockstep-topple` for Topple. It prints exactly what `lockstep-client
//! sim` and `lockstep-client replay FILE --verify --headless` print, so the
//! same scripts compare them.
//!
//! ```text
//! PROGRAM sim [--players P] [--seed S] [--ticks T] [--tick-rate R] [--trace TICKS] [--KEY VALUE]...
//! PROGRAM replay FILE --verify --headless
//! PROGRAM trace-diff A B
//! ```
//!
//! `--KEY VALUE` is the game's setting `KEY` (`--balls 24`, `--bodies 300`).
//! `--trace T` or `--trace FROM..TO` prints the sync trace of those ticks'
//! steps ([`crate::trace`]) before the final line, for `lockstep-client
//! trace-diff` to compare with another target's.

use std::path::Path;

use crate::final_line;
use crate::game::{offline, offline_traced, HasBots, Setup};
use crate::replay::playback as replay;
use lockstep_protocol::PlayerId;

/// The usage line of `program`.
pub fn usage(program: &str) -> String {
    format!(
        "usage: {program} sim [--players P] [--seed S] [--ticks T] [--tick-rate R] [--trace TICKS] [--KEY VALUE]...\n       \
         {program} replay FILE --verify --headless\n       \
         {program} trace-diff A B"
    )
}

/// The whole program: runs the command line's command for `G`, prints its
/// lines, or says what is wrong on stderr and fails.
pub fn main<G: HasBots>(program: &str) -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().is_some_and(|a| a == "trace-diff") {
        return trace_diff_main(program, &args[1..]);
    }
    match run::<G>(program, &args) {
        Ok(lines) => {
            for line in lines {
                println!("{line}");
            }
            std::process::ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("{program}: {message}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// `trace-diff A B`, like `lockstep-client trace-diff`: the report on
/// stdout, exit 1 if the traces differ, 2 if they cannot be compared.
pub fn trace_diff_main(program: &str, args: &[String]) -> std::process::ExitCode {
    let [a, b] = args else {
        eprintln!("{}", usage(program));
        return std::process::ExitCode::from(2);
    };
    let read = |path: &String| {
        std::fs::read(path)
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .map_err(|e| format!("cannot read {path}: {e}"))
    };
    let compared = read(a).and_then(|a_text| {
        let b_text = read(b)?;
        crate::trace::diff_outputs((a, &a_text), (b, &b_text), 3)
    });
    match compared {
        Ok((lines, differ)) => {
            for line in lines {
                println!("{line}");
            }
            std::process::ExitCode::from(u8::from(differ))
        }
        Err(message) => {
            eprintln!("{program}: {message}");
            std::process::ExitCode::from(2)
        }
    }
}

/// Runs the command in `args` (without the program name) for the game `G`:
/// the lines to print, or what is wrong.
pub fn run<G: HasBots>(program: &str, args: &[String]) -> Result<Vec<String>, String> {
    match args.first().map(String::as_str) {
        Some("sim") => sim::<G>(program, &args[1..]),
        Some("replay") => verify::<G>(program, &args[1..]),
        _ => Err(usage(program)),
    }
}

/// `sim`: the whole game with a bot for every player; the client's
/// defaults.
fn sim<G: HasBots>(program: &str, args: &[String]) -> Result<Vec<String>, String> {
    let (mut players, mut seed, mut ticks, mut tick_rate) = (4u8, 1u64, 600u32, 60u16);
    let mut settings = Vec::new();
    let mut traced = None;
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        let value = rest
            .next()
            .ok_or_else(|| format!("{flag} needs a value\n{}", usage(program)))?;
        let bad = |_| format!("{flag}: not a number: {value:?}");
        match flag.as_str() {
            "--players" => players = value.parse().map_err(bad)?,
            "--seed" => seed = value.parse().map_err(bad)?,
            "--ticks" => ticks = value.parse().map_err(bad)?,
            "--tick-rate" => tick_rate = value.parse().map_err(bad)?,
            "--trace" => traced = Some(crate::trace::parse_ticks(value)?),
            other => match other.strip_prefix("--") {
                Some(key) if !key.is_empty() => settings.push((key.to_string(), value.clone())),
                _ => return Err(format!("unknown option {other}\n{}", usage(program))),
            },
        }
    }
    if players == 0 || tick_rate == 0 {
        return Err("--players and --tick-rate must be at least 1".into());
    }
    let setup = Setup {
        seed,
        tick_rate,
        settings: G::parse_settings(&settings)?,
        players: (0..players).map(PlayerId).collect(),
    };
    let Some(traced) = traced else {
        let game = offline::<G>(&setup, ticks);
        return Ok(vec![final_line(game.tick().0, game.hash())]);
    };
    let (game, trace) = offline_traced::<G>(&setup, ticks, traced);
    let mut lines = crate::trace::output_lines(&trace);
    lines.push(final_line(game.tick().0, game.hash()));
    Ok(lines)
}

/// `replay FILE --verify --headless`: re-simulates a recording and checks
/// every recorded hash.
fn verify<G: HasBots>(program: &str, args: &[String]) -> Result<Vec<String>, String> {
    let (files, flags): (Vec<&String>, Vec<&String>) =
        args.iter().partition(|a| !a.starts_with("--"));
    let [file] = files[..] else {
        return Err(usage(program));
    };
    if !flags.iter().any(|f| *f == "--verify") {
        return Err(format!(
            "only --verify is available here\n{}",
            usage(program)
        ));
    }
    let (recording, problem) = replay::open(Path::new(file)).map_err(|e| e.to_string())?;
    let verified = replay::verify::<G>(recording, None, |_, _| {})
        .map_err(|e| format!("{file}: {e}; this program plays only the game {}", G::NAME))?;
    verified
        .conclude(Path::new(file), problem)
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Tally;
    use crate::Game;

    fn args(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn sim_prints_the_final_line_of_the_offline_game() {
        let lines = run::<Tally>("t", &args("sim --players 3 --seed 9 --ticks 40")).unwrap();
        let setup = Setup {
            seed: 9,
            tick_rate: 60,
            settings: (),
            players: (0..3).map(PlayerId).collect(),
        };
        let game = offline::<Tally>(&setup, 40);
        assert_eq!(lines, [final_line(40, game.hash())]);
    }

    #[test]
    fn sim_prints_the_trace_of_the_ticks_asked_before_the_final_line() {
        let plain = run::<Tally>("t", &args("sim --players 2 --ticks 10")).unwrap();
        let lines = run::<Tally>("t", &args("sim --players 2 --ticks 10 --trace 4..5")).unwrap();
        assert_eq!(lines.last(), plain.last());
        let entries = crate::trace::entries_of("sim", &lines.join("\n")).unwrap();
        // Two counters of two values and the drift, in each of two ticks.
        assert_eq!(entries.len(), 10);
        assert_eq!((entries[0].tick, entries[9].tick), (4, 5));
        assert_eq!(entries[9].label, "drift");
        assert!(run::<Tally>("t", &args("sim --trace 0"))
            .unwrap_err()
            .contains("not a tick"));
    }

    #[test]
    fn bad_arguments_are_refused_with_a_reason() {
        let refuse = |line: &str| run::<Tally>("t", &args(line)).unwrap_err();
        assert!(refuse("").starts_with("usage: t sim"));
        assert!(refuse("sim --players").contains("needs a value"));
        assert!(refuse("sim --players x").contains("not a number"));
        assert!(refuse("sim --players 0").contains("at least 1"));
        assert!(refuse("sim --balls 3").contains("no setting \"balls\""));
        assert!(refuse("replay f").contains("only --verify"));
        assert!(refuse("replay /nonexistent --verify").contains("/nonexistent"));
    }
}
