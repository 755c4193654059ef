//! `lockstep-server`: the relay's command line, hosting the games this
//! project ships.

fn main() -> std::process::ExitCode {
    lockstep_server::main(lockstep_games::HOSTED)
}
