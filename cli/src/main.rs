//! `lockstep-client`: parses the command line (`cli.rs`), starts tracing,
//! runs the chosen mode in the library and prints what it returns: its
//! stdout lines, or the error on stderr with exit status 1. The games it
//! plays are listed here, and only here ([`Offered`]).

mod args;
mod windowed;

use clap::Parser;
use lockstep_balls::World;
use lockstep_client::games::{ClientGame, ForGame, Games};
use lockstep_client::play::connect;
use lockstep_client::play::headless::Headless;
use lockstep_client::play::notice::{Notice, Notices};
use lockstep_client::tools::desync_diff::{self, DesyncDiffError};
use lockstep_client::tools::verify::{self, ReplayOptions};
use lockstep_client::window_options::ViewOptions;
use lockstep_engine::determinism::synctest;
use lockstep_engine::final_line;
use lockstep_engine::timing::loops::{self, trace};
use lockstep_engine::{Bots, Game, Hosted, HostedGame, Setup, UnknownGame};
use lockstep_protocol::{PlayerId, Tick};
use lockstep_tally::Tally;
use lockstep_topple::Physics;

use args::commands::Command;
use args::join::{Destination, Join};
use args::Cli;

/// The games this client plays, as hosts see them.
const HOSTED: &[&dyn HostedGame] = &[
    &Hosted::<World>::new(),
    &Hosted::<Tally>::new(),
    &Hosted::<Physics>::new(),
];

/// The games this client plays: `--game`, a server's game, a replay's.
struct Offered;

/// Runs `$code` for the offered game called `$name` with `$run`, the
/// method of the dispatch trait it implements.
macro_rules! offered {
    ($name:expr, $code:expr, $run:ident) => {
        match $name {
            World::NAME => Ok($code.$run::<World>()),
            Tally::NAME => Ok($code.$run::<Tally>()),
            Physics::NAME => Ok($code.$run::<Physics>()),
            _ => Err(UnknownGame {
                name: $name.to_string(),
                offered: HOSTED.iter().map(|game| game.name()).collect(),
            }),
        }
    };
}

impl Games for Offered {
    fn hosted(&self) -> &[&'static dyn HostedGame] {
        HOSTED
    }

    fn run<F: ForGame>(&self, name: &str, code: F) -> Result<F::Output, UnknownGame> {
        offered!(name, code, run)
    }
}

#[cfg(feature = "window")]
impl lockstep_window::games::WindowGames for Offered {
    fn run_windowed<F: lockstep_window::games::ForWindowGame>(
        &self,
        name: &str,
        code: F,
    ) -> Result<F::Output, UnknownGame> {
        offered!(name, code, run)
    }
}

/// Every phase `--inject-desync-phase` may name: the roster change, then
/// the phases of each game offered.
fn phases() -> Vec<&'static str> {
    struct Phases;
    impl ForGame for Phases {
        type Output = &'static [&'static str];
        fn run<G: ClientGame>(self) -> Self::Output {
            G::PHASES
        }
    }
    let mut all = vec!["roster"];
    for game in HOSTED {
        for &phase in Offered.run(game.name(), Phases).unwrap_or_default() {
            if !all.contains(&phase) {
                all.push(phase);
            }
        }
    }
    all
}

fn main() {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .init();
    match run(Cli::parse()) {
        Ok(lines) => print(&lines),
        Err(e) => {
            // Like diff(1), differing dumps print their report and fail.
            if let Some(DesyncDiffError::Differ { lines, .. }) = e.downcast_ref() {
                print(lines);
            }
            eprintln!(
                "lockstep-client: {}",
                lockstep_protocol::error_chain(e.as_ref())
            );
            std::process::exit(1);
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
fn run(cli: Cli) -> anyhow::Result<Vec<String>> {
    match cli.command {
        Some(Command::Sim {
            players,
            seed,
            ticks,
            game,
            tick_rate,
        }) => {
            let offline = Offline {
                players,
                seed,
                tick_rate,
                settings: game.pairs(),
                ticks,
                check_distance: None,
            };
            Offered.run(&game.game, offline)?
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
            };
            Offered.run(&game.game, offline)?
        }
        Some(Command::DesyncDiff { a, b, max }) => Ok(desync_diff::compare(&Offered, &a, &b, max)?),
        Some(Command::Replay {
            file,
            headless: true,
            window,
            ..
        }) => verify::run(
            &Offered,
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
            verify::open(&file)?,
            window.options(None),
            ViewOptions {
                speed,
                seek: seek.map(Tick),
                verify,
            },
        ),
        Some(Command::Report { replay, out, width }) => {
            windowed::report(lockstep_client::tools::report::ReportOptions { replay, out, width })
        }
        Some(Command::Solo(args)) => {
            let (solo, window) = args.options();
            windowed::solo(solo, window)
        }
        Some(Command::Lab(args)) => windowed::lab(args.start()),
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
                    connect::run(&Offered, options, Headless(&Offered))
                } else {
                    windowed::connect(options, window)
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
}

impl ForGame for Offline {
    type Output = anyhow::Result<Vec<String>>;

    fn run<G: ClientGame>(self) -> Self::Output {
        let settings = G::parse_settings(&self.settings).map_err(anyhow::Error::msg)?;
        let setup = Setup {
            seed: self.seed,
            tick_rate: self.tick_rate,
            settings,
            players: (0..self.players).map(PlayerId).collect(),
        };
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
    use super::*;

    /// The list of hosted games and the dispatch name the same games.
    #[test]
    fn every_hosted_game_runs_and_no_other() {
        struct Name;
        impl ForGame for Name {
            type Output = &'static str;
            fn run<G: ClientGame>(self) -> &'static str {
                G::NAME
            }
        }
        for game in HOSTED {
            assert_eq!(Offered.run(game.name(), Name), Ok(game.name()));
        }
        let unknown = Offered.run("chess", Name).unwrap_err();
        assert_eq!(unknown.offered, ["balls", "tally", "physics"]);
    }

    #[test]
    fn the_phases_are_the_roster_and_every_games_own_once() {
        let phases = phases();
        assert_eq!(phases[0], "roster");
        for phase in World::PHASES
            .iter()
            .chain(Tally::PHASES)
            .chain(Physics::PHASES)
        {
            assert_eq!(phases.iter().filter(|p| *p == phase).count(), 1, "{phase}");
        }
    }
}
