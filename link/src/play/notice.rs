//! What a game in progress has to tell whoever runs it, as values: the
//! play loop ([`super::Play`]) puts them in its outbox, and each frontend
//! says them its own way (the native binary prints them on stderr as
//! `lockstep-client: NOTICE`, the page as `lockstep-web: NOTICE` on its
//! console). The native driver says a few of its own in the same way
//! (the server trusted on first use, the recording). Each carries the
//! words it is printed in.

use std::path::PathBuf;

use lockstep_protocol::Tick;

/// One thing worth saying, each with the words the binary prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// The server was trusted on first use: which fingerprint was recorded
    /// where.
    FirstUse(String),
    /// `--record` on a game joined from the server's snapshot: the client
    /// never had the ticks before it, so it records nothing.
    NotRecordingJoined {
        /// The file it would have written.
        path: PathBuf,
        /// The snapshot's tick.
        tick: Tick,
    },
    /// The recording could not start, stopped or could not be finished.
    Recording(String),
    /// The server was lost during the game; the client tries to reconnect.
    Reconnecting {
        /// How it was lost, in words.
        reason: String,
        /// How long it keeps trying.
        for_secs: u64,
    },
    /// Reconnected, and the game goes on from the world kept.
    Reconnected {
        /// The tick the kept world stood at.
        at: Tick,
        /// The bundles the server holds from here on.
        goes_on_from: u32,
    },
    /// Reconnected to a game that cannot go on from the world kept: it is
    /// joined afresh.
    Rejoined,
    /// The snapshot the server started this game from is not the
    /// majority's world: the server was told, and starts the game again
    /// from another snapshot or from tick 0.
    SnapshotRefused {
        /// The snapshot's tick.
        tick: Tick,
        /// Why, in words.
        why: String,
    },
    /// The server asked for a snapshot this client could not encode.
    SnapshotNotSent {
        /// The tick asked for.
        tick: Tick,
        /// Why.
        why: String,
    },
    /// The server stood in for this player's late inputs (see
    /// `replaced.rs`), or the game waits for a late peer: one line.
    Lag(String),
    /// A fast-forward's progress: worth a line redrawn in place on a
    /// terminal, and nothing elsewhere.
    CatchingUp {
        /// Ticks simulated so far.
        done: u32,
        /// Ticks to simulate.
        total: u32,
    },
    /// A fast-forward is over.
    CaughtUp {
        /// The tick reached.
        tick: Tick,
        /// How long it took, milliseconds.
        ms: u128,
        /// Where it started, in words (" from tick 0", " from the snapshot
        /// of tick T (N ticks re-simulated)", ...).
        from: String,
    },
    /// The server found that peers' hashes differ: who, and the dump.
    Desync {
        /// The diverged tick.
        tick: Tick,
        /// Who diverged, by name.
        names: String,
        /// Where this machine's dump of the tick went, in words: empty
        /// from the play loop, which writes no file; a driver that writes
        /// the dump says where.
        dump: String,
    },
    /// The server found where the desync of `tick` began.
    Pinpointed {
        /// The desync's tick.
        tick: Tick,
        /// Its first tick.
        first: Tick,
        /// Where that tick's dump went, in words: empty from the play
        /// loop (a driver that writes dumps fills it in), and when it is
        /// the desync's own tick.
        dump: String,
    },
    /// The server compared a diverged and a majority player's sync traces
    /// of a desync's first tick: the first value computed differently.
    TraceDiff {
        /// The tick.
        tick: Tick,
        /// The diverged player compared.
        diverged: String,
        /// The majority player.
        majority: String,
        /// The server's report, `first differing value: ...` first.
        lines: Vec<String>,
    },
}

impl std::fmt::Display for Notice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Notice::FirstUse(line) | Notice::Recording(line) | Notice::Lag(line) => {
                f.write_str(line)
            }
            Notice::NotRecordingJoined { path, tick } => write!(
                f,
                "not recording to {}: this game was joined from the server's snapshot of tick \
                 {tick}, so this client never had its first {tick} ticks; the server's replay \
                 (its --replay-dir) holds the whole game",
                path.display()
            ),
            Notice::Reconnecting { reason, for_secs } => {
                write!(f, "{reason}; reconnecting for up to {for_secs} s")
            }
            Notice::Reconnected { at, goes_on_from } => write!(
                f,
                "reconnected at tick {at}; the game goes on from tick {goes_on_from}"
            ),
            Notice::Rejoined => f.write_str("reconnected; joining the game afresh"),
            Notice::SnapshotRefused { tick: _, why } => write!(
                f,
                "{why}; the server was told, and starts this game again from another snapshot \
                 or from tick 0"
            ),
            Notice::SnapshotNotSent { tick, why } => {
                write!(f, "cannot send a snapshot of tick {tick}: {why}")
            }
            Notice::CatchingUp { done, total } => {
                write!(f, "catching up: tick {done} of {total}")
            }
            Notice::CaughtUp { tick, ms, from } => {
                write!(f, "caught up with the game at tick {tick} in {ms} ms{from}")
            }
            Notice::Desync { tick, names, dump } => {
                write!(f, "desync at tick {tick}: {names} diverged{dump}")
            }
            Notice::Pinpointed { tick, first, dump } => {
                write!(f, "the desync at tick {tick} began at tick {first}{dump}")
            }
            Notice::TraceDiff {
                tick,
                diverged,
                majority,
                lines,
            } => {
                write!(f, "traces of tick {tick}, {diverged} against {majority}:")?;
                for line in lines {
                    write!(f, "\n  {line}")?;
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notices_read_as_the_lines_the_client_always_printed() {
        let joined = Notice::NotRecordingJoined {
            path: "bot1.lsreplay".into(),
            tick: Tick(240),
        };
        assert_eq!(
            joined.to_string(),
            "not recording to bot1.lsreplay: this game was joined from the server's snapshot \
             of tick 240, so this client never had its first 240 ticks; the server's replay \
             (its --replay-dir) holds the whole game"
        );
        let pinpointed = Notice::Pinpointed {
            tick: Tick(300),
            first: Tick(293),
            dump: "; dump written".into(),
        };
        assert_eq!(
            pinpointed.to_string(),
            "the desync at tick 300 began at tick 293; dump written"
        );
        let caught_up = Notice::CaughtUp {
            tick: Tick(900),
            ms: 12,
            from: " from tick 0".into(),
        };
        assert_eq!(
            caught_up.to_string(),
            "caught up with the game at tick 900 in 12 ms from tick 0"
        );
        let desync = Notice::Desync {
            tick: Tick(300),
            names: "bot1".into(),
            dump: "; dump written".into(),
        };
        assert_eq!(
            desync.to_string(),
            "desync at tick 300: bot1 diverged; dump written"
        );
    }
}
