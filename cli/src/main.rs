//! `lockstep-client`: the client's command line, playing the games this
//! project ships.

fn main() -> std::process::ExitCode {
    lockstep_cli::main(&lockstep_games::Shipped)
}
