//! Whether and when to connect again after a QUIC connection failed.
//!
//! A server lost during a game may be back soon: someone starts it again
//! with `--resume`, or the path heals. So the connection keeps the game
//! and tries again for the configured window, an attempt every
//! [`RECONNECT_EVERY`], each waiting at most [`RECONNECT_ATTEMPT`] for the
//! server to answer.
//!
//! # Rules
//! - Only a game is worth reconnecting for: outside one, or with a zero
//!   window, a failure ends the connection.
//! - A lost server (silent, or reset) starts reconnecting; the frontend
//!   hears of it once, and the window runs from then.
//! - While reconnecting, an attempt that finds no server is tried again;
//!   any other failure ends the connection, and so does any failure once
//!   the window is over.
//! - A connection that got back into the game gives a later loss the
//!   whole window again.

use std::time::Duration;

use super::{Closed, Failure, NetEvent};

/// Pause between two attempts to reconnect.
pub(super) const RECONNECT_EVERY: Duration = Duration::from_millis(100);

/// How long one attempt to reconnect waits for the server to answer: on a
/// LAN it answers in milliseconds, or it is not there yet. With the pause,
/// a server started again is found within 0.6 s (QUIC would send the
/// attempt's first packet again only after a second).
pub(super) const RECONNECT_ATTEMPT: Duration = Duration::from_millis(500);

/// What to do after a failure.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Verdict {
    /// Connect again at `at`, after telling the frontend `announce` (the
    /// first loss only).
    Retry {
        at: Duration,
        announce: Option<NetEvent>,
    },
    /// Give up: how the connection ended.
    GiveUp(Closed),
}

/// The reconnection window and where it stands.
#[derive(Debug)]
pub(super) struct Reconnect {
    /// How long to keep trying; zero never tries.
    window: Duration,
    /// How the server was lost and when to give up on it, while
    /// reconnecting.
    lost: Option<(String, Duration)>,
}

impl Reconnect {
    pub(super) fn new(window: Duration) -> Reconnect {
        Reconnect { window, lost: None }
    }

    /// The server let the connection back into the game: a later loss has
    /// the whole window again.
    pub(super) fn back_in_game(&mut self) {
        self.lost = None;
    }

    /// A QUIC connection, or an attempt to open one, failed at `now` as
    /// `failure` says (`reason` in words); `game_kept` says whether there
    /// is a game to go back to.
    pub(super) fn after(
        &mut self,
        failure: Failure,
        reason: String,
        game_kept: bool,
        now: Duration,
    ) -> Verdict {
        let retry = !self.window.is_zero()
            && game_kept
            && match failure {
                Failure::ServerLost => true,
                Failure::NoServer => self.lost.is_some(),
                Failure::Other => false,
            };
        if !retry {
            return Verdict::GiveUp(Closed::Lost(reason));
        }
        let mut announce = None;
        let (reason, give_up) = self.lost.get_or_insert_with(|| {
            announce = Some(NetEvent::Reconnecting {
                reason: reason.clone(),
                for_secs: self.window.as_secs(),
            });
            (reason, now + self.window)
        });
        if now >= *give_up {
            return Verdict::GiveUp(Closed::Lost(format!(
                "{reason}; no server to reconnect to in {} s",
                self.window.as_secs()
            )));
        }
        Verdict::Retry {
            at: now + RECONNECT_EVERY,
            announce,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use lockstep_protocol::ServerMessage;

    use super::super::harness::{config, ms, resuming, Harness, SILENT};
    use super::super::{Action, Closed, Config, Ending, Failure, NetEvent};
    use super::RECONNECT_ATTEMPT;

    #[test]
    fn a_server_lost_in_the_lobby_ends_the_connection() {
        let mut h = Harness::connected(config());
        let out = h.fail(Failure::ServerLost);
        assert_eq!(
            out.0,
            vec![Action::Close {
                closed: Closed::Lost(SILENT.into()),
                ending: Ending::Release
            }]
        );
    }

    #[test]
    fn with_no_reconnect_window_a_loss_ends_the_game() {
        let mut h = Harness::playing(
            Config {
                reconnect: Duration::ZERO,
                ..config()
            },
            1,
        );
        assert_eq!(
            h.fail(Failure::ServerLost).closed(),
            Some((Closed::Lost(SILENT.into()), Ending::Release))
        );
    }

    #[test]
    fn a_server_lost_during_a_game_is_tried_again_until_the_window_closes() {
        let window = Duration::from_secs(1);
        let mut h = Harness::lost_after_five_bundles(
            Config {
                reconnect: window,
                ..config()
            },
            7,
        );
        // Connected again, but lost before the game took it back: the window
        // runs on.
        h.reconnect();
        assert!(h.fail(Failure::ServerLost).events().is_empty());
        for _ in 0..100 {
            assert_eq!(
                h.advance_to_timeout().connects(),
                vec![Some(RECONNECT_ATTEMPT)]
            );
            let out = h.fail(Failure::NoServer);
            assert!(
                out.events().is_empty(),
                "the frontend heard of the loss once"
            );
            if let Some(closed) = out.closed() {
                assert!(h.now >= window);
                assert_eq!(
                    closed,
                    (
                        Closed::Lost(format!("{SILENT}; no server to reconnect to in 1 s")),
                        Ending::Release
                    )
                );
                return;
            }
            assert!(h.now < window);
        }
        panic!("still reconnecting at {:?}", h.now);
    }

    #[test]
    fn an_attempt_that_finds_no_server_is_tried_again_only_while_reconnecting() {
        let mut h = Harness::playing(config(), 1);
        assert_eq!(
            h.fail(Failure::NoServer).closed(),
            Some((
                Closed::Lost("no lockstep server answered".into()),
                Ending::Release
            ))
        );
    }

    #[test]
    fn a_failure_that_would_fail_again_ends_the_connection_even_while_reconnecting() {
        let mut h = Harness::lost_after_five_bundles(config(), 7);
        h.advance_to_timeout();
        assert_eq!(
            h.fail(Failure::Other).closed(),
            Some((
                Closed::Lost("the server sent a malformed message".into()),
                Ending::Release
            ))
        );
    }

    #[test]
    fn a_connection_back_in_the_game_gives_a_later_loss_the_whole_window_again() {
        let window = Duration::from_secs(1);
        let mut h = Harness::lost_after_five_bundles(
            Config {
                reconnect: window,
                ..config()
            },
            7,
        );
        h.reconnect();
        h.message(ServerMessage::Start(resuming(7, 5)));
        h.advance(ms(800));
        let again = h.fail(Failure::ServerLost);
        assert_eq!(
            again.events(),
            vec![NetEvent::Reconnecting {
                reason: SILENT.into(),
                for_secs: 1
            }]
        );
        while h.now < window + ms(500) {
            assert_eq!(
                h.advance_to_timeout().connects(),
                vec![Some(RECONNECT_ATTEMPT)]
            );
            assert_eq!(h.fail(Failure::NoServer).closed(), None);
        }
    }
}
