//! The command line of `lockstep-client`: every mode, flag and default,
//! and the library's options each mode's flags stand for; `main.rs`
//! passes those to the library. [`join`] is joining a server (the flags
//! without a command), [`commands`] the commands, and [`shared`] the flags
//! and value parsers both use.

pub(crate) mod commands;
pub(crate) mod join;
pub(crate) mod shared;

use clap::Parser;

use commands::Command;
use join::PlayArgs;

/// Deterministic lockstep game client: join a server in a window or as a
/// headless bot, play solo, or run the simulation offline.
#[derive(Debug, Parser)]
#[command(version, args_conflicts_with_subcommands = true)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
    #[command(flatten)]
    pub(crate) play: PlayArgs,
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::{Cli, Command};

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn vsync_is_off_unless_asked_for() {
        let play = |args: &[&str]| Cli::parse_from(args).play.window.options(None);
        assert!(!play(&["lockstep-client"]).vsync);
        assert!(play(&["lockstep-client", "--vsync"]).vsync);
        let Some(Command::Solo(solo)) =
            Cli::parse_from(["lockstep-client", "solo", "--vsync"]).command
        else {
            panic!("not the solo command");
        };
        assert!(solo.options().1.vsync);
    }
}
