//! The sync trace on the wire: what a player sends after a desync is
//! pinpointed (the values its game traced in the first divergent tick,
//! each with the file and line that computed it), so the server can name
//! the first value computed differently without the game's code.

use serde::{Deserialize, Serialize};

/// Most places one [`TraceReport`] names.
pub const MAX_TRACE_PLACES: usize = 512;
/// Most values one [`TraceReport`] carries; a longer trace is cut, and
/// [`TraceReport::total`] says how long it was.
pub const MAX_TRACE_VALUES: usize = 8192;
/// Most words of one value (an array's elements).
pub const MAX_TRACE_WORDS: usize = 16;
/// Most characters of a place's file, label or phase.
pub const MAX_TRACE_TEXT: usize = 200;
/// Most lines of a [`crate::ServerMessage::TraceDiff`], and characters
/// of each.
pub const MAX_TRACE_LINES: usize = 16;
/// See [`MAX_TRACE_LINES`].
pub const MAX_TRACE_LINE_CHARS: usize = 400;

/// Where values were traced: a `trace` call of the game's, in a phase.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TracePlace {
    /// The source file, as the compiler named it.
    pub file: String,
    /// The line.
    pub line: u32,
    /// The game's label for the value.
    pub label: String,
    /// The phase of the step.
    pub phase: String,
}

/// One traced value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TracedValue {
    /// Its place, an index into [`TraceReport::places`].
    pub place: u16,
    /// Which element of a list it is of, if any.
    pub index: Option<u32>,
    /// How its words read: 0 f32 bits, 1 f64 bits, 2 a signed integer, 3
    /// an unsigned one, 4 a bool.
    pub kind: u8,
    /// Its words, one per element.
    pub bits: Vec<u64>,
}

/// The values a player's game traced in one tick, in order, as
/// [`crate::ClientMessage::Trace`] carries them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceReport {
    /// The places the values name.
    pub places: Vec<TracePlace>,
    /// The first values of the trace, in the order they were computed.
    pub values: Vec<TracedValue>,
    /// How many values the whole trace holds (more than `values` when it
    /// was cut to fit a message).
    pub total: u32,
}

impl TraceReport {
    /// Why this report is malformed, if it is: too many places or
    /// values, texts too long, a value of a place that is not there, of
    /// an unknown kind or with too many words.
    pub fn problem(&self) -> Option<String> {
        if self.places.len() > MAX_TRACE_PLACES || self.values.len() > MAX_TRACE_VALUES {
            return Some(format!(
                "{} places and {} values, more than {MAX_TRACE_PLACES} and {MAX_TRACE_VALUES}",
                self.places.len(),
                self.values.len()
            ));
        }
        let long = |text: &str| text.chars().count() > MAX_TRACE_TEXT;
        if self
            .places
            .iter()
            .any(|p| long(&p.file) || long(&p.label) || long(&p.phase))
        {
            return Some(format!(
                "a place's text is over {MAX_TRACE_TEXT} characters"
            ));
        }
        let bad = self.values.iter().position(|v| {
            usize::from(v.place) >= self.places.len()
                || v.kind > 4
                || v.bits.is_empty()
                || v.bits.len() > MAX_TRACE_WORDS
        });
        if let Some(at) = bad {
            return Some(format!(
                "value {at} names no place, or has no kind or words"
            ));
        }
        if usize::try_from(self.total).unwrap_or(usize::MAX) < self.values.len() {
            return Some("it holds more values than its total".into());
        }
        None
    }
}
