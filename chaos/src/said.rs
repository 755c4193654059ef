//! What the processes said, and the lines the run looks for in it.
//!
//! Every line any process of the run prints goes into one timeline, in
//! the order the run read it. The server's events (its stdout, whose
//! wording is part of its interface: `lockstep_server::ServerEvent`), the
//! clients' notices (stderr, `lockstep-client: ...`) and their `final`
//! lines (stdout) are what the answers and the checks read; the parsers
//! here name each line the run relies on, so a change of wording fails
//! their tests rather than a run.

use std::fmt;
use std::time::Duration;

/// Which output of a process a line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Its stdout: the server's events, a client's `stats` and `final`.
    Out,
    /// Its stderr: the server's log, a client's notices.
    Err,
}

/// One line a process printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Said {
    /// When the run read it, since the run started.
    pub at: Duration,
    /// Who: `server`, `bot3`, `watcher`, `guest1`.
    pub who: String,
    /// Which output.
    pub stream: Stream,
    /// The line.
    pub line: String,
}

impl Said {
    /// A server event line starting with `event` (`rejoined`,
    /// `substituted`, ...).
    pub fn is_event(&self, event: &str) -> bool {
        self.who == SERVER
            && self.stream == Stream::Out
            && self
                .line
                .strip_prefix(event)
                .is_some_and(|rest| rest.starts_with(' '))
    }

    /// A server event `event` about the player called `name`.
    pub fn is_event_about(&self, event: &str, name: &str) -> bool {
        self.is_event(event) && field(&self.line, "name") == Some(name)
    }

    /// A server event that names `name` in any way: its `name`, the
    /// slowest machine of a speed change, or among the diverged.
    pub fn mentions(&self, name: &str) -> bool {
        if self.who != SERVER || self.stream != Stream::Out {
            return false;
        }
        let listed = |key| field(&self.line, key).is_some_and(|v| v.split(',').any(|n| n == name));
        field(&self.line, "name") == Some(name) || listed("slowest") || listed("diverged")
    }

    /// A notice of the client `who`.
    pub fn is_notice_of(&self, who: &str) -> bool {
        self.who == who && self.stream == Stream::Err
    }
}

impl fmt::Display for Said {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.who, self.line)
    }
}

/// The server's name in the timeline.
pub const SERVER: &str = "server";

/// The value of the `key=value` field of a line.
pub fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.split_whitespace()
        .find_map(|f| f.strip_prefix(key)?.strip_prefix('='))
}

/// A numeric `key=value` field.
pub fn number(line: &str, key: &str) -> Option<u32> {
    field(line, key)?.parse().ok()
}

/// The address and fingerprint of `listening on ADDR fingerprint=HEX`.
pub fn listening(line: &str) -> Option<(&str, &str)> {
    let rest = line.strip_prefix("listening on ")?;
    rest.split_once(" fingerprint=")
}

/// The tick and hash of `final tick=N hash=H`.
pub fn final_line(line: &str) -> Option<(u32, &str)> {
    let rest = line.strip_prefix("final tick=")?;
    let (tick, hash) = rest.split_once(" hash=")?;
    Some((tick.parse().ok()?, hash))
}

/// A `desync tick=X diverged=A,B first=F|unknown` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DesyncLine {
    /// The tick whose reported hashes differed.
    pub tick: u32,
    /// Who diverged, by name.
    pub diverged: Vec<String>,
    /// The first divergent tick, when pinpointed.
    pub first: Option<u32>,
}

/// The server's desync line, parsed.
pub fn desync(line: &str) -> Option<DesyncLine> {
    if !line.starts_with("desync ") {
        return None;
    }
    Some(DesyncLine {
        tick: number(line, "tick")?,
        diverged: field(line, "diverged")?
            .split(',')
            .filter(|n| !n.is_empty())
            .map(str::to_string)
            .collect(),
        first: number(line, "first"),
    })
}

/// The tick a client caught up at, and the snapshot it started from (none
/// when it started from tick 0 or from its own world), from `caught up
/// with the game at tick T in N ms from ...`.
pub fn caught_up(line: &str) -> Option<(u32, Option<u32>)> {
    let (_, rest) = line.split_once("caught up with the game at tick ")?;
    let tick = rest.split_whitespace().next()?.parse().ok()?;
    let snapshot = rest
        .split_once("from the snapshot of tick ")
        .and_then(|(_, s)| s.split_whitespace().next()?.parse().ok());
    Some((tick, snapshot))
}

/// A client's notice that it is back in the game after losing the
/// server: with its world (`reconnected at tick ...`) or afresh.
pub fn reconnected_notice(line: &str) -> bool {
    line.contains("reconnected at tick ") || line.contains("reconnected; joining the game afresh")
}

/// The server's log line saying why the connection of the client called
/// `name` ended (`connection ended name=NAME reason=...`).
pub fn connection_ended(said: &Said, name: &str) -> bool {
    said.who == SERVER
        && said.stream == Stream::Err
        && said.line.contains("connection ended")
        && field(&said.line, "name") == Some(name)
}

/// The server's log line for a spectator called `name` joining (`true`)
/// or leaving (`false`), if `said` is one.
pub fn spectator_log(said: &Said, name: &str) -> Option<bool> {
    if said.who != SERVER || said.stream != Stream::Err || field(&said.line, "name") != Some(name) {
        return None;
    }
    if said.line.contains("spectator joined") {
        Some(true)
    } else if said.line.contains("spectator left") {
        Some(false)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(line: &str) -> Said {
        Said {
            at: Duration::ZERO,
            who: SERVER.into(),
            stream: Stream::Out,
            line: line.into(),
        }
    }

    #[test]
    fn server_events_are_found_by_their_word_and_the_name_they_are_about() {
        let line = server("rejoined player=2 name=bot3 tick=801");
        assert!(line.is_event("rejoined"));
        assert!(line.is_event_about("rejoined", "bot3"));
        assert!(!line.is_event_about("rejoined", "bot33"));
        assert!(!line.is_event("rejoin"));
        assert!(line.mentions("bot3"));
        let speed = server(
            "speed percent=60 from_tick=900 reason=slow slowest=bot4 capacity=55 postpone_ms=0",
        );
        assert!(speed.mentions("bot4") && !speed.mentions("bot3"));
        let desync = server("desync tick=300 diverged=bot1,bot2 first=293");
        assert!(desync.mentions("bot2") && !desync.mentions("bot3"));
        let mut log = server("rejoined player=2 name=bot3 tick=801");
        log.stream = Stream::Err;
        assert!(!log.is_event("rejoined") && !log.mentions("bot3"));
    }

    #[test]
    fn the_lines_the_run_relies_on_parse() {
        assert_eq!(
            listening("listening on 127.0.0.1:4000 fingerprint=ab12"),
            Some(("127.0.0.1:4000", "ab12"))
        );
        assert_eq!(
            final_line("final tick=7200 hash=0123456789abcdef"),
            Some((7200, "0123456789abcdef"))
        );
        assert_eq!(
            desync("desync tick=300 diverged=faulty first=293"),
            Some(DesyncLine {
                tick: 300,
                diverged: vec!["faulty".into()],
                first: Some(293),
            })
        );
        assert_eq!(
            desync("desync tick=300 diverged=a,b first=unknown").map(|d| d.first),
            Some(None)
        );
        assert_eq!(desync("desynced"), None);
        assert_eq!(
            caught_up(
                "lockstep-client: caught up with the game at tick 1262 in 410 ms from the \
                 snapshot of tick 1080 (182 ticks re-simulated)"
            ),
            Some((1262, Some(1080)))
        );
        assert_eq!(
            caught_up("lockstep-client: caught up with the game at tick 900 in 12 ms from tick 0"),
            Some((900, None))
        );
        assert!(reconnected_notice(
            "lockstep-client: reconnected at tick 600; the game goes on from tick 600"
        ));
        assert!(reconnected_notice(
            "lockstep-client: reconnected; joining the game afresh"
        ));
    }

    #[test]
    fn spectators_coming_and_going_and_ended_connections_are_read_from_the_servers_log() {
        let mut said = server(
            "2026-01-01T00:00:00.000000Z  INFO lockstep_server::session::admission: spectator \
             joined name=guest1",
        );
        said.stream = Stream::Err;
        assert_eq!(spectator_log(&said, "guest1"), Some(true));
        assert_eq!(spectator_log(&said, "guest2"), None);
        said.line =
            "... INFO lockstep_server::session: spectator left name=guest1 why=closed".into();
        assert_eq!(spectator_log(&said, "guest1"), Some(false));
        said.line =
            "... INFO connection{remote=127.0.0.1:57333}: lockstep_server::io::connection: \
                     connection ended name=bot3 reason=too many datagrams (more than 240 a second)"
                .into();
        assert!(connection_ended(&said, "bot3"));
        assert!(!connection_ended(&said, "bot33"));
    }
}
