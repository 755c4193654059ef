//! The desync dumps this client writes: the loop announces a desync and
//! where it began, and this driver writes its dump of the tick concerned
//! before the notice is said, so the notice says where the dump went.
//!
//! The dump is taken on the game thread (it needs the history), but
//! written on a thread of its own: a physics world's dump is megabytes of
//! JSON, and writing it on the game thread stalled this player for
//! several ticks, so that the server stood in for it right after the
//! desync (Topple, debug builds: 50 to 90 ms of writing; three bots had 9
//! inputs stood in for, 2 once the writing moved here; BENCHMARKS.md,
//! "Desync dumps").
//! Every notice goes through that thread, dump or not, so they are said
//! in the order the loop gave them.

use std::sync::mpsc::{channel, Sender};
use std::thread::JoinHandle;

use lockstep_engine::determinism::desync::DesyncDump;
use lockstep_protocol::Tick;

use super::notice::{Notice, Notices};
use super::NetPlay;
use crate::games::Playable;

/// What the writer thread is handed: a notice, and the dump to write
/// before it is said.
type Job = (Notice, Option<Box<dyn FnOnce() -> String + Send>>);

/// The thread that writes dumps and says notices, in order.
#[derive(Debug)]
pub(super) struct Announcer {
    jobs: Option<Sender<Job>>,
    thread: Option<JoinHandle<()>>,
}

impl Announcer {
    /// A thread saying to `notices`.
    pub(super) fn new(notices: Notices) -> Announcer {
        let (jobs, queue) = channel::<Job>();
        let thread = std::thread::Builder::new()
            .name("desync dumps".into())
            .spawn(move || {
                for (notice, write) in queue {
                    notices.say(match write {
                        Some(write) => with_where(notice, write()),
                        None => notice,
                    });
                }
            });
        match thread {
            Ok(thread) => Announcer {
                jobs: Some(jobs),
                thread: Some(thread),
            },
            // No thread to be had: say and write on the caller's.
            Err(_) => Announcer {
                jobs: None,
                thread: None,
            },
        }
    }

    /// Says `notice` after `write` (if any) has run, whose words say where
    /// the dump went.
    fn announce(&self, notices: &Notices, job: Job) {
        let Some(jobs) = &self.jobs else {
            let (notice, write) = job;
            notices.say(match write {
                Some(write) => with_where(notice, write()),
                None => notice,
            });
            return;
        };
        if let Err(unsent) = jobs.send(job) {
            let (notice, _) = unsent.0;
            notices.say(notice);
        }
    }
}

impl Drop for Announcer {
    /// Waits for the dumps being written and the notices before them.
    fn drop(&mut self) {
        self.jobs = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// `notice` saying where its dump went (`words`).
fn with_where(notice: Notice, words: String) -> Notice {
    match notice {
        Notice::Desync { tick, names, .. } => Notice::Desync {
            tick,
            names,
            dump: words,
        },
        Notice::Pinpointed { tick, first, .. } => Notice::Pinpointed {
            tick,
            first,
            dump: words,
        },
        notice => notice,
    }
}

impl<G: Playable> NetPlay<G> {
    /// Says `notice`, with the dump it asks for written first: the
    /// diverged tick's, and the first divergent tick's once it is
    /// pinpointed (unless that is the diverged tick itself, dumped
    /// already).
    pub(super) fn say(&self, notice: Notice) {
        let dumped = match &notice {
            Notice::Desync { tick, .. } => Some(*tick),
            Notice::Pinpointed { tick, first, .. } if first != tick => Some(*first),
            _ => None,
        };
        let write = dumped.map(|tick| self.dump_writer(tick));
        self.announcer
            .announce(&self.options.notices, (notice, write));
    }

    /// What writes this client's dump of `tick`, taken now, and says
    /// where, or why not.
    fn dump_writer(&self, tick: Tick) -> Box<dyn FnOnce() -> String + Send> {
        let dump: Option<DesyncDump<G>> = self.play.game().desync_dump(tick);
        let dir = self.options.dump_dir.clone();
        Box::new(move || match dump {
            Some(dump) => match dump.write(&dir) {
                Ok((json, bin)) => {
                    format!("; dump written to {} and {}", json.display(), bin.display())
                }
                Err(e) => format!("; dump not written: {e}"),
            },
            None => format!("; tick {tick} is no longer in the history, no dump written"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notices_keep_their_order_and_a_dump_is_written_before_its_notice() {
        let (sender, said) = channel();
        let notices = Notices::to(sender);
        let announcer = Announcer::new(notices.clone());
        let dir = std::env::temp_dir().join(format!("lockstep-announcer-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a scratch folder");
        let file = dir.join("desync-t5-ada.json");
        let written = file.clone();
        let desync = Notice::Desync {
            tick: Tick(5),
            names: "bob".into(),
            dump: String::new(),
        };
        let write: Box<dyn FnOnce() -> String + Send> = Box::new(move || {
            std::fs::write(&written, "{}").expect("the dump written");
            format!("; dump written to {}", written.display())
        });
        announcer.announce(&notices, (desync, Some(write)));
        announcer.announce(&notices, (Notice::Lag("waiting for bob".into()), None));
        drop(announcer);
        let first = said.try_recv().expect("the desync said");
        assert!(file.exists(), "the notice came before its dump");
        assert_eq!(
            first,
            Notice::Desync {
                tick: Tick(5),
                names: "bob".into(),
                dump: format!("; dump written to {}", file.display()),
            }
        );
        assert_eq!(said.try_recv(), Ok(Notice::Lag("waiting for bob".into())));
        std::fs::remove_dir_all(&dir).expect("the scratch folder removed");
    }
}
