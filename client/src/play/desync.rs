//! The desync dumps this client writes: the loop announces a desync and
//! where it began, and this driver writes its dump of the tick concerned
//! before the notice is said, so the notice says where the dump went.

use lockstep_protocol::Tick;

use super::notice::Notice;
use super::NetPlay;
use crate::games::Playable;

impl<G: Playable> NetPlay<G> {
    /// `notice` with the dump it asks for written: the diverged tick's,
    /// and the first divergent tick's once it is pinpointed (unless that
    /// is the diverged tick itself, dumped already).
    pub(super) fn with_dump(&self, notice: Notice) -> Notice {
        match notice {
            Notice::Desync { tick, names, .. } => Notice::Desync {
                tick,
                names,
                dump: self.write_dump(tick),
            },
            Notice::Pinpointed { tick, first, .. } if first != tick => Notice::Pinpointed {
                tick,
                first,
                dump: self.write_dump(first),
            },
            notice => notice,
        }
    }

    /// Writes this client's dump of `tick`; says where, or why not.
    fn write_dump(&self, tick: Tick) -> String {
        match self.play.game().desync_dump(tick) {
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
