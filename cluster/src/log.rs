//! The event log: every thing that matters in a cluster's run, in the
//! order it happened, with its simulated time and who saw it. A test
//! asserts on it, and two runs with the same seed produce the same log.

use std::fmt;
use std::time::Duration;

/// Who an [`Entry`] is about: the server, or a client by its name.
pub const SERVER: &str = "server";

/// One thing that happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Simulated time since the cluster started.
    pub at: Duration,
    /// [`SERVER`] or the client's name.
    pub who: String,
    /// What happened, as `word key=value ...` (the server's lines are its
    /// [`lockstep_server::ServerEvent`]s as the binary prints them).
    pub what: String,
}

impl fmt::Display for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:>8} ms {}: {}",
            self.at.as_millis(),
            self.who,
            self.what
        )
    }
}

/// The log of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Log(Vec<Entry>);

impl Log {
    pub(crate) fn push(&mut self, at: Duration, who: &str, what: String) {
        self.0.push(Entry {
            at,
            who: who.to_string(),
            what,
        });
    }

    /// Every entry, oldest first.
    pub fn entries(&self) -> &[Entry] {
        &self.0
    }

    /// What `who` saw whose line starts with `word`, oldest first.
    pub fn lines(&self, who: &str, word: &str) -> Vec<&str> {
        self.0
            .iter()
            .filter(|e| e.who == who && e.what.starts_with(word))
            .map(|e| e.what.as_str())
            .collect()
    }

    /// Whether any entry of anyone starts with `word`.
    pub fn any(&self, word: &str) -> bool {
        self.0.iter().any(|e| e.what.starts_with(word))
    }
}

impl fmt::Display for Log {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for entry in &self.0 {
            writeln!(f, "{entry}")?;
        }
        Ok(())
    }
}

/// The value of `key` in a `word key=value ...` line, if it has one.
pub fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.split(' ')
        .find_map(|part| part.strip_prefix(key)?.strip_prefix('='))
}
