//! A desync, as a networked game meets it: the notice and the banner,
//! this client's dump of the diverged tick, its per-tick hashes for the
//! server to find where the desync began, and then the dump of that tick.

use lockstep_protocol::{DesyncNotice, Tick};

use super::notice::Notice;
use super::NetPlay;
use crate::games::ClientGame;
use crate::io::link::NetCommand;

impl<G: ClientGame> NetPlay<G> {
    /// Announces a desync on stderr and the HUD, writes this client's
    /// dump of the diverged tick, and answers with its per-tick hashes so
    /// the server can find where the desync began.
    pub(super) fn on_desync(&mut self, notice: &DesyncNotice) {
        let names = self.game.names(&notice.diverged).join(", ");
        let message = format!(
            "desync at tick {}: {names} diverged{}",
            notice.tick,
            self.write_dump(notice.tick)
        );
        self.options.notices.say(Notice::Desync(message));
        self.desync = Some(format!("DESYNC at tick {}: {names} diverged", notice.tick));
        if let Some((first_tick, hashes)) = self.game.tick_hashes(notice) {
            self.net
                .send(NetCommand::TickHashes(notice.tick, first_tick, hashes));
        }
    }

    /// Announces where the desync of `tick` began and dumps that tick too.
    pub(super) fn on_pinpointed(&mut self, tick: Tick, first: Tick) {
        let dump = if first == tick {
            String::new()
        } else {
            self.write_dump(first)
        };
        self.options
            .notices
            .say(Notice::Pinpointed { tick, first, dump });
        if let Some(banner) = &mut self.desync {
            banner.push_str(&format!(" (from tick {first})"));
        }
    }

    /// Writes this client's dump of `tick`; says where, or why not.
    fn write_dump(&self, tick: Tick) -> String {
        match self.game.desync_dump(tick) {
            Some(dump) => match dump.write(&self.options.dump_dir) {
                Ok((json, bin)) => {
                    format!("; dump written to {} and {}", json.display(), bin.display())
                }
                Err(e) => format!("; dump not written: {e}"),
            },
            None => format!("; tick {tick} is no longer in the history, no dump written"),
        }
    }
}
