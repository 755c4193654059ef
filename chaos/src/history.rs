//! The run's history: every fault as it was done (when, in game ticks
//! and in real time since the game started, to whom), what the system
//! said about it, and whether that was the answer expected of it.

use std::fmt;
use std::time::Duration;

use crate::said::Said;
use crate::schedule::Fault;

/// Lines of what the system said kept per fault; the rest are counted.
const SAID_SHOWN: usize = 12;

/// One fault, done.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Its number in the schedule, from 1.
    pub number: usize,
    /// The fault.
    pub fault: Fault,
    /// When it was done, real time since the game started.
    pub at: Duration,
    /// The game's tick then (bundled ticks in the replay).
    pub tick: u32,
    /// The game's tick when the answer came, or the wait for it ended.
    pub end_tick: u32,
    /// What the system said about it, in order.
    pub said: Vec<Said>,
    /// How long the answer took, from the fault.
    pub took: Duration,
    /// The answer found, in words, or what was missing or wrong.
    pub answer: Result<String, String>,
}

impl Entry {
    /// Whether it got the answer expected.
    pub fn answered(&self) -> bool {
        self.answer.is_ok()
    }
}

impl fmt::Display for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "fault {} at {:.1} s tick {}: {}",
            self.number,
            self.at.as_secs_f64(),
            self.tick,
            self.fault
        )?;
        for said in self.said.iter().take(SAID_SHOWN) {
            writeln!(f, "  {said}")?;
        }
        if self.said.len() > SAID_SHOWN {
            writeln!(f, "  ({} more lines)", self.said.len() - SAID_SHOWN)?;
        }
        match &self.answer {
            Ok(answer) => write!(
                f,
                "  answered in {:.1} s: {answer}",
                self.took.as_secs_f64()
            ),
            Err(missing) => write!(
                f,
                "  NO ANSWER after {:.1} s: {missing}",
                self.took.as_secs_f64()
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::said::{Stream, SERVER};
    use crate::schedule::Bot;

    #[test]
    fn an_entry_reads_as_the_fault_what_was_said_and_the_answer() {
        let entry = Entry {
            number: 3,
            fault: Fault::Kill { bot: Bot(4) },
            at: Duration::from_millis(41_230),
            tick: 2437,
            end_tick: 2700,
            said: vec![Said {
                at: Duration::ZERO,
                who: SERVER.into(),
                stream: Stream::Out,
                line: "rejoined player=3 name=bot4 tick=2600".into(),
            }],
            took: Duration::from_millis(2_950),
            answer: Ok("rejoined at tick 2600".into()),
        };
        assert_eq!(
            entry.to_string(),
            "fault 3 at 41.2 s tick 2437: kill bot4\n  server: rejoined player=3 name=bot4 \
             tick=2600\n  answered in 3.0 s: rejoined at tick 2600"
        );
        let missing = Entry {
            answer: Err("no rejoined line for bot4".into()),
            said: Vec::new(),
            ..entry
        };
        assert!(!missing.answered());
        assert!(missing
            .to_string()
            .ends_with("  NO ANSWER after 3.0 s: no rejoined line for bot4"));
    }
}
