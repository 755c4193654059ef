//! `lockstep-client`'s command line: parses it (`args/`), starts tracing,
//! runs the chosen mode in the client library with the games the binary
//! hands it ([`main`]) and prints what it returns: its stdout lines, or
//! the error on stderr with exit status 1. It names no game.

mod args;
mod windowed;

use std::process::ExitCode;
use std::sync::OnceLock;

use clap::{CommandFactory, FromArgMatches};
use lockstep_client::games::{ForGame, Games, Playable};
use lockstep_client::play::connect;
use lockstep_client::play::headless::Headless;
use lockstep_client::play::notice::{Notice, Notices};
use lockstep_client::tools::desync_diff::{self, DesyncDiffError};
use lockstep_client::tools::trace_diff::{self, TraceDiffError};
use lockstep_client::tools::verify::{self, ReplayOptions};
use lockstep_client::window_options::ViewOptions;
use lockstep_engine::determinism::synctest;
use lockstep_engine::timing::loops::{self, trace};
use lockstep_engine::{describe_games, final_line};
use lockstep_engine::{Bots, Setup};
use lockstep_protocol::{PlayerId, Tick};

use args::commands::Command;
use args::join::{Destination, Join};
use args::Cli;

/// Every phase `--inject-desync-phase` may name, from the games [`main`]
/// was given: set before the command line is parsed, which checks the
/// flag against it.
static PHASES: OnceLock<Vec<&'static str>> = OnceLock::new();

/// Every phase `--inject-desync-phase` may name: the roster change, then
/// the phases of each of `games`.
fn phases_of(games: &impl Games) -> Vec<&'static str> {
    struct Phases;
    impl ForGame for Phases {
        type Output = &'static [&'static str];
        fn run<G: Playable>(self) -> Self::Output {
            G::PHASES
        }
    }
    let mut all = vec!["roster"];
    for game in games.hosted() {
        for &phase in games.run(game.name(), Phases).unwrap_or_default() {
            if !all.contains(&phase) {
                all.push(phase);
            }
        }
    }
    all
}

/// The phases [`main`] set ([`phases_of`] its games).
fn phases() -> &'static [&'static str] {
    PHASES.get().map_or(&[], Vec::as_slice)
}

/// The command line, its help naming `games`.
fn command(games: &impl Games) -> clap::Command {
    let hosted = games.hosted();
    let default = hosted.first().map_or("", |game| game.name());
    let help = format!("The game: {} [default: {default}]", describe_games(hosted));
    let game = |command: clap::Command| command.mut_arg("game", |arg| arg.help(help.clone()));
    Cli::command()
        .mut_subcommand("sim", game)
        .mut_subcommand("synctest", game)
        .mut_subcommand("solo", game)
        .mut_subcommand("lab", game)
}

/// Runs `lockstep-client` with the process's arguments, playing any of
/// `games`: what the binary's `main` calls.
pub fn main<G: Games>(games: &G) -> ExitCode {
    PHASES.get_or_init(|| phases_of(games));
    let matches = command(games).get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .init();
    match run(cli, games) {
        Ok(lines) => {
            print(&lines);
            ExitCode::SUCCESS
        }
        Err(e) => {
            // Like diff(1), differing dumps print their report and fail.
            if let Some(DesyncDiffError::Differ { lines, .. }) = e.downcast_ref() {
                print(lines);
            }
            if let Some(TraceDiffError::Differ { lines }) = e.downcast_ref() {
                print(lines);
            }
            eprintln!(
                "lockstep-client: {}",
                lockstep_protocol::error_chain(e.as_ref())
            );
            ExitCode::FAILURE
        }
    }
}

/// Prints `lines` on stdout; stops quietly when the reader went away
/// (`lockstep-client loops | head`).
fn print(lines: &[String]) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    for line in lines {
        if writeln!(out, "{line}").is_err() {
            return;
        }
    }
}

/// Prints the notices of a networked game on stderr as they come, until
/// the game is over: `lockstep-client: NOTICE`, a fast-forward's progress
/// redrawn in place on a terminal (and left out elsewhere).
fn print_notices(notices: std::sync::mpsc::Receiver<Notice>) {
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let mut progress_shown = false;
    for notice in notices {
        match notice {
            Notice::CatchingUp { .. } if terminal => {
                eprint!("\r{notice}");
                progress_shown = true;
            }
            Notice::CatchingUp { .. } => {}
            notice => {
                if std::mem::take(&mut progress_shown) {
                    eprintln!();
                }
                eprintln!("lockstep-client: {notice}");
            }
        }
    }
}

/// Runs the command; returns the stdout lines of a normal finish.
fn run(cli: Cli, games: &impl Games) -> anyhow::Result<Vec<String>> {
    match cli.command {
        Some(Command::Sim {
            players,
            seed,
            ticks,
            game,
            tick_rate,
            trace,
        }) => {
            let offline = Offline {
                players,
                seed,
                tick_rate,
                settings: game.pairs(),
                ticks,
                check_distance: None,
                trace,
            };
            games.run(&game.name(games), offline)?
        }
        Some(Command::Synctest {
            ticks,
            check_distance,
            seed,
            players,
            game,
        }) => {
            let offline = Offline {
                players,
                seed,
                tick_rate: 60,
                settings: game.pairs(),
                ticks,
                check_distance: Some(check_distance),
                trace: None,
            };
            games.run(&game.name(games), offline)?
        }
        Some(Command::DesyncDiff { a, b, max }) => Ok(desync_diff::compare(games, &a, &b, max)?),
        Some(Command::TraceDiff { a, b, context }) => Ok(trace_diff::compare(&a, &b, context)?),
        Some(Command::Replay {
            file,
            headless: true,
            window,
            ..
        }) => verify::run(
            games,
            ReplayOptions {
                file,
                ticks: window.ticks,
            },
        ),
        Some(Command::Replay {
            file,
            verify,
            speed,
            seek,
            window,
            ..
        }) => windowed::replay(
            games,
            verify::open(&file)?,
            window.options(None),
            ViewOptions {
                speed,
                seek: seek.map(Tick),
                verify,
            },
        ),
        Some(Command::Report { replay, out, width }) => windowed::report(
            games,
            lockstep_client::tools::report::ReportOptions { replay, out, width },
        ),
        Some(Command::Solo(args)) => {
            let (solo, window) = args.options();
            windowed::solo(games, solo, window)
        }
        Some(Command::Lab(args)) => windowed::lab(games, args.start()),
        Some(Command::Loops(args)) => match args.trace_options() {
            Some(options) => Ok(trace::run(&options)?),
            None => Ok(loops::ladder()),
        },
        Some(Command::List(args)) => Ok(lockstep_client::tools::list::run(
            &args.discovery.options(),
            std::time::Duration::from_secs_f64(args.seconds),
            &args.known_servers,
        )?),
        None => match cli.play.destination()? {
            Destination::Join(join) => {
                let Join {
                    mut options,
                    headless,
                    window,
                } = *join;
                let (sender, notices) = std::sync::mpsc::channel();
                let printer = std::thread::spawn(move || print_notices(notices));
                options.play.notices = Notices::to(sender);
                let lines = if headless {
                    connect::run(games, options, Headless(games))
                } else {
                    windowed::connect(games, options, window)
                };
                // Every sender went with the options: the printer has
                // printed everything once it returns.
                let _ = printer.join();
                lines
            }
            Destination::Done(lines) => Ok(lines),
        },
    }
}

/// `sim` and `synctest`: a game of bots only, straight or under the sync
/// test, whatever the game.
struct Offline {
    players: u8,
    seed: u64,
    tick_rate: u16,
    /// The game's settings, KEY=VALUE.
    settings: Vec<(String, String)>,
    ticks: u32,
    /// Run under the sync test, restoring from this many ticks back.
    check_distance: Option<u32>,
    /// Print the sync trace of these ticks.
    trace: Option<std::ops::RangeInclusive<u32>>,
}

impl ForGame for Offline {
    type Output = anyhow::Result<Vec<String>>;

    fn run<G: Playable>(self) -> Self::Output {
        let settings = G::parse_settings(&self.settings).map_err(anyhow::Error::msg)?;
        let setup = Setup {
            seed: self.seed,
            tick_rate: self.tick_rate,
            settings,
            players: (0..self.players).map(PlayerId).collect(),
        };
        if let Some(traced) = self.trace {
            let (game, trace) = lockstep_engine::offline_traced::<G>(&setup, self.ticks, traced);
            let mut lines = lockstep_engine::trace::output_lines(&trace);
            lines.push(final_line(game.tick().0, game.hash()));
            return Ok(lines);
        }
        let game: G = match self.check_distance {
            None => lockstep_engine::offline(&setup, self.ticks),
            Some(distance) => {
                let mut bots = Bots::<G>::new(setup.seed, &setup.players);
                synctest::check(
                    G::start(&setup),
                    |game| bots.inputs(game),
                    self.ticks,
                    distance,
                )?
            }
        };
        Ok(vec![final_line(game.tick().0, game.hash())])
    }
}

#[cfg(test)]
mod tests {
    use lockstep_games::Shipped;

    use super::*;

    #[test]
    fn the_phases_are_the_roster_and_every_games_own_once() {
        struct Own;
        impl ForGame for Own {
            type Output = &'static [&'static str];
            fn run<G: Playable>(self) -> Self::Output {
                G::PHASES
            }
        }
        let phases = phases_of(&Shipped);
        assert_eq!(phases[0], "roster");
        for game in Shipped.hosted() {
            for phase in Shipped.run(game.name(), Own).expect("listed") {
                assert_eq!(phases.iter().filter(|p| *p == phase).count(), 1, "{phase}");
            }
        }
    }

    #[test]
    fn the_help_of_game_lists_every_game_and_the_default() {
        let mut command = command(&Shipped);
        let sim = command.find_subcommand_mut("sim").expect("sim");
        let help = sim.render_long_help().to_string();
        for game in Shipped.hosted() {
            assert!(
                help.contains(&format!("{} ({})", game.name(), game.about())),
                "{help}"
            );
        }
        assert!(help.contains("[default: balls]"), "{help}");
    }
}
