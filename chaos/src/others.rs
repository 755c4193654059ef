//! The run's other machines in the game ([`crate::peers`]): started
//! beside the bots with [`crate::io::peer`]'s commands, and asked to stop
//! at the end.

use std::time::Duration;

use crate::io::peer::{aarch64_command, browser_command, STOP_GRACE};
use crate::io::process::{Proc, ProcError, Signal};
use crate::peers::Peer;
use crate::run::{Run, PATIENCE};

impl Run<'_> {
    /// Starts `peer` as a bot of the game, to its end.
    pub(crate) fn start_peer(&mut self, peer: Peer) -> Result<(), ProcError> {
        let seed = peer.bot_seed(self.schedule.seed);
        let ticks = self.schedule.ticks();
        let command = match peer {
            Peer::Browser => {
                // The page gives up on its own after its last guard; the
                // run judges it stuck well before.
                let timeout = self.bound(ticks) + PATIENCE;
                let web = self.addr.to_string();
                browser_command(&web, &Peer::page_query(self.schedule.seed, ticks), timeout)
            }
            Peer::Aarch64 => {
                let client = self.aarch64.clone().unwrap_or_default();
                let bot = ["--bot".to_string(), seed.to_string()];
                let bot: Vec<&str> = bot.iter().map(String::as_str).collect();
                self.client_args(aarch64_command(&client), peer.name(), self.addr, &bot)
            }
        };
        let proc = Proc::spawn(peer.name(), peer.name(), command, &self.dir.join("logs"))?;
        self.peer_procs.push((peer, proc));
        Ok(())
    }

    /// Asks every peer still running to stop (SIGTERM: the browser's
    /// driver closes Chromium), and SIGKILLs those still there after
    /// [`STOP_GRACE`].
    pub(crate) fn stop_peers(&mut self) {
        for (_, proc) in &mut self.peer_procs {
            let _ = proc.signal(Signal::Term);
        }
        // Not `wait`, which a run asked to end early no longer does.
        let until = self.clock.now() + STOP_GRACE;
        while self.clock.now() < until {
            self.pump();
            if self.peer_procs.iter().all(|(_, proc)| proc.exited_now()) {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        for (_, proc) in &mut self.peer_procs {
            proc.kill();
        }
    }
}
