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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    /// The value, by its bits.
    pub value: Value,
}

impl Entry {
    /// `FILE:LINE LABEL tick=T phase=P`: where and when, without the value.
    pub fn place(&self) -> String {
        format!(
            "{}:{} {} tick={} phase={}",
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
        self.line == other.line && self.label == other.label && same_file(&self.file, &other.file)
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
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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
    if ACTIVE.load(Ordering::Relaxed) == 0 {
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
    if ACTIVE.load(Ordering::Relaxed) != 0 {
        traced(Location::caller(), label, &mut value);
    }
    value
}

/// [`trace`]'s work when something listens.
#[cold]
#[inline(never)]
fn traced<V: Traced>(at: &'static Location<'static>, label: &'static str, value: &mut V) {
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
                value: value.value(),
            });
        }
    });
}

#[cfg(test)]
mod tests;
