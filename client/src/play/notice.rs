//! Where a game's [`Notice`]s go: the library says them
//! ([`Notices::say`]) and the binary prints them on stderr as
//! `lockstep-client: NOTICE`, as the server's binary prints its events.
//! The library itself prints nothing, so a frontend without a terminal (a
//! test harness) takes the same notices as values. What they say is the
//! play loop's (`lockstep_link::play::notice`).

use std::sync::mpsc::Sender;

pub use lockstep_link::play::Notice;

/// Where notices go: to the binary's printer, or nowhere.
#[derive(Debug, Clone, Default)]
pub struct Notices(Option<Sender<Notice>>);

impl Notices {
    /// Notices sent to `sender` (the binary's printer reads the other
    /// end).
    pub fn to(sender: Sender<Notice>) -> Notices {
        Notices(Some(sender))
    }

    /// Says `notice`; nothing if nobody listens.
    pub fn say(&self, notice: Notice) {
        if let Some(sender) = &self.0 {
            let _ = sender.send(notice);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notices_reach_whoever_listens_and_nobody_else() {
        let (sender, receiver) = std::sync::mpsc::channel();
        let notices = Notices::to(sender);
        notices.say(Notice::Lag("waiting for bob".into()));
        assert_eq!(
            receiver.try_recv(),
            Ok(Notice::Lag("waiting for bob".into()))
        );
        Notices::default().say(Notice::Lag("nobody hears this".into()));
    }
}
