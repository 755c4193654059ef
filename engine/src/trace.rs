//! The sync trace: values a game computes, each with the source line that
//! computed it, so that two machines that disagree can be compared value
//! by value and the first one computed differently named by its file and
//! line (Recoil's sync debugger does this for the writes to its state).
//!
//! A game calls [`trace`] where a value matters, like `dbg!`:
//!
//! ```
//! use lockstep_engine::trace::trace;
//! let speed = trace("ball.speed", 3.0_f32 * 0.5);
//! let pos = trace("ball.pos", [1.0_f32, speed]);
//! # assert_eq!(pos, [1.0, 1.5]);
//! ```
//!
//! It returns the value unchanged and, while playing, costs one relaxed
//! load of a counter: nothing is recorded. A trace is made on demand, by
//! stepping a tick again from a state the history kept inside [`record`]:
//! a desync dump does it for the diverged tick, `sim --trace` for the
//! ticks asked. [`diff`] compares two traces and says where they part.
//!
//! Fault injection for tests reuses the same points: [`with_fault`] makes
//! the first value traced under a label in a step one unit in the last
//! place off, as a machine that computes that line differently would.

use std::borrow::Cow;
use std::cell::RefCell;
use std::panic::Location;
use std::sync::atomic::{AtomicUsize, Ordering};

use lockstep_protocol::{
    TracePlace, TraceReport, TracedValue, MAX_TRACE_PLACES, MAX_TRACE_TEXT, MAX_TRACE_VALUES,
    MAX_TRACE_WORDS,
};
use serde::{Deserialize, Serialize};

mod diff;
mod value;

pub use diff::{diff, TraceDiff};
pub use value::{Kind, Traced, Value};

/// The most entries one [`record`] keeps; the rest are counted in
/// [`Trace::dropped`]. A tick of the physics game traces a few thousand.
pub const MAX_ENTRIES: usize = 200_000;

/// How many recorders and armed faults there are, on any thread: while it
/// is 0, [`trace`] does nothing but read it.
static ACTIVE: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static LOCAL: RefCell<Local> = const {
        RefCell::new(Local {
            recording: None,
            fault: None,
        })
    };
}

/// This thread's recorder and armed fault.
struct Local {
    recording: Option<Recording>,
    fault: Option<Armed>,
}

struct Recording {
    tick: u32,
    entries: Vec<Entry>,
    /// The first entry whose phase is not known yet.
    phase_from: usize,
    dropped: u64,
}

struct Armed {
    label: String,
    hit: bool,
}

/// One traced value: where it was computed and its bits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The tick being stepped.
    pub tick: u32,
    /// The phase of the step it was traced in ([`end_phase`]); empty if the
    /// step named none after it.
    pub phase: Cow<'static, str>,
    /// The source file of the [`trace`] call, as the compiler names it.
    pub file: Cow<'static, str>,
    /// Its line.
    pub line: u32,
    /// The label the game gave it.
    pub label: Cow<'static, str>,
    /// Which element of a list it is of ([`trace_item`]), if any.
    pub index: Option<u32>,
    /// The value, by its bits.
    pub value: Value,
}

impl Entry {
    /// `FILE:LINE LABEL[INDEX] tick=T phase=P`: where and when, without
    /// the value.
    pub fn place(&self) -> String {
        let index = self.index.map_or(String::new(), |i| format!("[{i}]"));
        format!(
            "{}:{} {}{index} tick={} phase={}",
            self.file,
            self.line,
            self.label,
            self.tick,
            if self.phase.is_empty() {
                "-"
            } else {
                &self.phase
            }
        )
    }

    /// Whether `other` was traced by the same call: the same label and
    /// line, and the same file once the paths' prefixes are set aside (two
    /// builds may name a file from different directories).
    pub fn same_point(&self, other: &Entry) -> bool {
        self.line == other.line
            && self.label == other.label
            && self.index == other.index
            && same_file(&self.file, &other.file)
    }

    /// The entry as one line of text: `trace ` and its JSON, what `sim
    /// --trace` prints on any target and [`Entry::parse_line`] reads.
    pub fn to_line(&self) -> String {
        format!("trace {}", serde_json::to_string(self).unwrap_or_default())
    }

    /// An entry printed by [`Entry::to_line`], or `None` for any other line.
    pub fn parse_line(line: &str) -> Option<Result<Entry, serde_json::Error>> {
        let json = line.trim_end().strip_prefix("trace {")?;
        Some(serde_json::from_str(&format!("{{{json}")))
    }
}

fn same_file(a: &str, b: &str) -> bool {
    let a = a.replace('\\', "/");
    let b = b.replace('\\', "/");
    a == b || a.ends_with(&format!("/{b}")) || b.ends_with(&format!("/{a}"))
}

/// What one [`record`] traced.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trace {
    /// The values, in the order they were computed.
    pub entries: Vec<Entry>,
    /// Values traced past [`MAX_ENTRIES`], not kept.
    pub dropped: u64,
}

/// A recorder or fault of this thread, counted in [`ACTIVE`] while it
/// lives; what it replaced is put back when it goes, even on a panic.
struct Scope<T: 'static> {
    slot: fn(&mut Local) -> &mut Option<T>,
    outer: Option<Option<T>>,
}

impl<T: 'static> Scope<T> {
    fn open(slot: fn(&mut Local) -> &mut Option<T>, mine: T) -> Scope<T> {
        let outer = LOCAL.with(|local| slot(&mut local.borrow_mut()).replace(mine));
        ACTIVE.fetch_add(1, Ordering::Relaxed);
        Scope {
            slot,
            outer: Some(outer),
        }
    }

    /// Ends the scope and returns what it held.
    fn close(mut self) -> Option<T> {
        let outer = self.outer.take().flatten();
        LOCAL.with(|local| std::mem::replace((self.slot)(&mut local.borrow_mut()), outer))
    }
}

impl<T: 'static> Drop for Scope<T> {
    fn drop(&mut self) {
        if let Some(outer) = self.outer.take() {
            LOCAL.with(|local| *(self.slot)(&mut local.borrow_mut()) = outer);
        }
        ACTIVE.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Runs `f` with tracing on in this thread, every value traced credited to
/// `tick`, and returns what it traced.
pub fn record<R>(tick: u32, f: impl FnOnce() -> R) -> (R, Trace) {
    let fresh = Recording {
        tick,
        entries: Vec::new(),
        phase_from: 0,
        dropped: 0,
    };
    let scope = Scope::open(|local| &mut local.recording, fresh);
    let result = f();
    let trace = scope.close().map_or_else(Trace::default, |r| Trace {
        entries: r.entries,
        dropped: r.dropped,
    });
    (result, trace)
}

/// Ends a phase of the step being recorded: the values traced since the
/// last phase ended are credited to `phase`. Does nothing when nothing
/// records.
pub fn end_phase(phase: &'static str) {
    if !enabled() {
        return;
    }
    LOCAL.with(|local| {
        if let Some(recording) = local.borrow_mut().recording.as_mut() {
            let from = recording.phase_from.min(recording.entries.len());
            for entry in &mut recording.entries[from..] {
                entry.phase = Cow::Borrowed(phase);
            }
            recording.phase_from = recording.entries.len();
        }
    });
}

/// Runs `f` with a fault armed in this thread: the first value traced
/// under `label` is made one unit in the last place off (see
/// [`Traced::nudge`]). Returns `f`'s result and whether the label was met.
pub fn with_fault<R>(label: &str, f: impl FnOnce() -> R) -> (R, bool) {
    let armed = Armed {
        label: label.to_string(),
        hit: false,
    };
    let scope = Scope::open(|local| &mut local.fault, armed);
    let result = f();
    let hit = scope.close().is_some_and(|armed| armed.hit);
    (result, hit)
}

/// Traces `value` under `label` at the caller's line and returns it. Does
/// nothing else unless a [`record`] or a [`with_fault`] runs.
#[inline]
#[track_caller]
pub fn trace<V: Traced>(label: &'static str, mut value: V) -> V {
    if enabled() {
        traced(Location::caller(), label, None, &mut value);
    }
    value
}

/// [`trace`] for element `index` of a list (the fourth ball's position),
/// which the diff names as `LABEL[INDEX]`.
#[inline]
#[track_caller]
pub fn trace_item<V: Traced>(label: &'static str, index: usize, mut value: V) -> V {
    if enabled() {
        let index = u32::try_from(index).unwrap_or(u32::MAX);
        traced(Location::caller(), label, Some(index), &mut value);
    }
    value
}

/// Whether anything listens: a game guards a loop that only traces (every
/// body after a phase) with it, so that the loop costs nothing in play.
#[inline]
pub fn enabled() -> bool {
    ACTIVE.load(Ordering::Relaxed) != 0
}

/// [`trace`]'s work when something listens.
#[cold]
#[inline(never)]
fn traced<V: Traced>(
    at: &'static Location<'static>,
    label: &'static str,
    index: Option<u32>,
    value: &mut V,
) {
    LOCAL.with(|local| {
        let mut local = local.borrow_mut();
        if let Some(fault) = local.fault.as_mut() {
            if !fault.hit && fault.label == label {
                fault.hit = true;
                value.nudge();
            }
        }
        if let Some(recording) = local.recording.as_mut() {
            if recording.entries.len() >= MAX_ENTRIES {
                recording.dropped += 1;
                return;
            }
            let tick = recording.tick;
            recording.entries.push(Entry {
                tick,
                phase: Cow::Borrowed(""),
                file: Cow::Borrowed(at.file()),
                line: at.line(),
                label: Cow::Borrowed(label),
                index,
                value: value.value(),
            });
        }
    });
}

/// What `sim --trace` prints of `trace` before its final line: a line per
/// value ([`Entry::to_line`]), and one saying how many were dropped, if
/// any.
pub fn output_lines(trace: &Trace) -> Vec<String> {
    let mut lines: Vec<String> = trace.entries.iter().map(Entry::to_line).collect();
    if trace.dropped > 0 {
        lines.push(format!(
            "trace: {} values dropped past the limit",
            trace.dropped
        ));
    }
    lines
}

/// The ticks `sim --trace` takes: `T` or `FROM..TO`, both included, from
/// tick 1 on.
pub fn parse_ticks(text: &str) -> Result<std::ops::RangeInclusive<u32>, String> {
    let number = |part: &str| {
        part.trim()
            .parse::<u32>()
            .ok()
            .filter(|&t| t > 0)
            .ok_or_else(|| {
                format!("{text:?} is not a tick or a range of ticks (T or FROM..TO, from 1)")
            })
    };
    let (from, to) = match text.split_once("..") {
        Some((from, to)) => (number(from)?, number(to)?),
        None => (number(text)?, number(text)?),
    };
    if from > to {
        return Err(format!("{text:?}: the range ends before it starts"));
    }
    Ok(from..=to)
}

/// The trace lines ([`Entry::to_line`]) of a program's output, in order;
/// other lines are passed over. A trace line that does not parse is an
/// error naming its line number in `name`.
pub fn entries_of(name: &str, text: &str) -> Result<Vec<Entry>, String> {
    let mut entries = Vec::new();
    for (number, line) in text.lines().enumerate() {
        match Entry::parse_line(line) {
            None => {}
            Some(Ok(entry)) => entries.push(entry),
            Some(Err(e)) => {
                return Err(format!("{name}:{}: not a trace line: {e}", number + 1));
            }
        }
    }
    Ok(entries)
}

/// `trace-diff`: the traces in two programs' outputs (`sim --trace` on two
/// builds or targets), compared; the report's lines, and whether they
/// differ. Outputs without a trace line are an error: there is nothing
/// to compare.
pub fn diff_outputs(
    (a_name, a): (&str, &str),
    (b_name, b): (&str, &str),
    context: usize,
) -> Result<(Vec<String>, bool), String> {
    let a_entries = entries_of(a_name, a)?;
    let b_entries = entries_of(b_name, b)?;
    for (name, entries) in [(a_name, &a_entries), (b_name, &b_entries)] {
        if entries.is_empty() {
            return Err(format!(
                "{name} holds no trace line: make it with sim --trace TICKS (the game must call lockstep_engine::trace)"
            ));
        }
    }
    let mut lines = vec![
        format!("a: {a_name} ({} values)", a_entries.len()),
        format!("b: {b_name} ({} values)", b_entries.len()),
    ];
    let found = diff(&a_entries, &b_entries);
    lines.extend(found.report(&a_entries, &b_entries, context));
    Ok((lines, !matches!(found, TraceDiff::Agree { .. })))
}

/// Bytes a [`TraceReport`] may take, well inside a message
/// ([`lockstep_protocol::MAX_MESSAGE_SIZE`]) with its tick around it.
pub const REPORT_BUDGET: usize = 60 * 1024;

/// `entries` (one tick's) as a player sends them to the server: a table of
/// places and the values, as many of the first as fit [`REPORT_BUDGET`]
/// and the protocol's bounds (longer texts cut to them).
pub fn to_report(entries: &[Entry]) -> TraceReport {
    let cut = |text: &str| text.chars().take(MAX_TRACE_TEXT).collect::<String>();
    let mut places: Vec<TracePlace> = Vec::new();
    let mut values = Vec::new();
    for entry in entries.iter().take(MAX_TRACE_VALUES) {
        let place = TracePlace {
            file: cut(&entry.file),
            line: entry.line,
            label: cut(&entry.label),
            phase: cut(&entry.phase),
        };
        let at = match places.iter().position(|p| *p == place) {
            Some(at) => at,
            None if places.len() < MAX_TRACE_PLACES => {
                places.push(place);
                places.len() - 1
            }
            None => break,
        };
        values.push(TracedValue {
            place: u16::try_from(at).unwrap_or(u16::MAX),
            index: entry.index,
            kind: entry.value.kind.code(),
            bits: entry
                .value
                .bits
                .iter()
                .copied()
                .take(MAX_TRACE_WORDS)
                .collect(),
        });
    }
    let mut report = TraceReport {
        places,
        values,
        total: u32::try_from(entries.len()).unwrap_or(u32::MAX),
    };
    loop {
        let size = postcard::to_stdvec(&report).map_or(usize::MAX, |b| b.len());
        if size <= REPORT_BUDGET || report.values.is_empty() {
            return report;
        }
        // Keep the share of values that fits, a little under.
        let keep = report.values.len() * REPORT_BUDGET / size * 15 / 16;
        report.values.truncate(keep.min(report.values.len() - 1));
    }
}

/// The entries of a report a player sent for `tick`, or why it is not a
/// trace ([`TraceReport::problem`]).
pub fn from_report(tick: u32, report: &TraceReport) -> Result<Vec<Entry>, String> {
    if let Some(problem) = report.problem() {
        return Err(problem);
    }
    report
        .values
        .iter()
        .map(|v| {
            let place = &report.places[usize::from(v.place)];
            Ok(Entry {
                tick,
                phase: Cow::Owned(place.phase.clone()),
                file: Cow::Owned(place.file.clone()),
                line: place.line,
                label: Cow::Owned(place.label.clone()),
                index: v.index,
                value: Value {
                    kind: Kind::from_code(v.kind).ok_or("a value of no kind")?,
                    bits: v.bits.clone(),
                },
            })
        })
        .collect()
}

#[cfg(test)]
mod tests;
