//! Two traces side by side: the first value computed differently, named by
//! the file and line that computed it.

use super::Entry;

/// Where two traces part.
#[derive(Debug, Clone, PartialEq)]
pub enum TraceDiff {
    /// Every value the same, at the same points.
    Agree {
        /// How many values each trace holds.
        values: usize,
    },
    /// Entry `at` was traced at the same point in both, with other bits.
    Value {
        /// Its index; every entry before it agreed.
        at: usize,
    },
    /// Entry `at` was traced at different points: the two steps took
    /// different paths through the code (or are of different games).
    Path {
        /// Its index; every entry before it agreed.
        at: usize,
    },
    /// One trace ends at `at` where the other goes on.
    Length {
        /// The shorter trace's length; every entry before it agreed.
        at: usize,
    },
}

/// Compares traces `a` and `b` entry by entry.
pub fn diff(a: &[Entry], b: &[Entry]) -> TraceDiff {
    for (at, (x, y)) in a.iter().zip(b).enumerate() {
        if !x.same_point(y) || x.tick != y.tick {
            return TraceDiff::Path { at };
        }
        if x.value != y.value {
            return TraceDiff::Value { at };
        }
    }
    if a.len() == b.len() {
        TraceDiff::Agree { values: a.len() }
    } else {
        TraceDiff::Length {
            at: a.len().min(b.len()),
        }
    }
}

impl TraceDiff {
    /// The report of this difference between `a` and `b`: one verdict
    /// line (`first differing value: FILE:LINE LABEL tick=T phase=P a=BITS
    /// b=BITS (N values agreed before it)`), then up to `context` entries
    /// either side of it, `>` marking the one that differs.
    pub fn report(&self, a: &[Entry], b: &[Entry], context: usize) -> Vec<String> {
        let at = match *self {
            TraceDiff::Agree { values } => {
                return vec![format!(
                    "trace: the traces agree ({})",
                    plural(values, "value")
                )];
            }
            TraceDiff::Value { at } | TraceDiff::Path { at } | TraceDiff::Length { at } => at,
        };
        let agreed = plural(at, "value");
        let verdict = match (self, a.get(at), b.get(at)) {
            (TraceDiff::Value { .. }, Some(x), Some(y)) => format!(
                "first differing value: {} a={} b={} ({agreed} agreed before it)",
                x.place(),
                x.value.bits_text(),
                y.value.bits_text()
            ),
            (_, Some(x), Some(y)) => format!(
                "first differing value: the steps part after {agreed}: a traced {} where b traced {}",
                x.place(),
                y.place()
            ),
            (_, Some(x), None) => format!(
                "first differing value: b's trace ends after {agreed}; a's goes on with {}",
                x.place()
            ),
            (_, None, Some(y)) => format!(
                "first differing value: a's trace ends after {agreed}; b's goes on with {}",
                y.place()
            ),
            (_, None, None) => format!("trace: the traces agree ({agreed})"),
        };
        let mut lines = vec![verdict];
        let from = at.saturating_sub(context);
        let to = (at + context + 1).min(a.len().max(b.len()));
        for i in from..to {
            let mark = if i == at { '>' } else { ' ' };
            lines.push(format!("  {mark} {}", side_by_side(a.get(i), b.get(i))));
        }
        lines
    }
}

/// One entry of both traces: its place and both values, or the one.
fn side_by_side(x: Option<&Entry>, y: Option<&Entry>) -> String {
    let shown = |e: &Entry| {
        let number = e.value.number_text();
        if number.is_empty() || number == e.value.bits_text() {
            e.value.bits_text()
        } else {
            format!("{} ({number})", e.value.bits_text())
        }
    };
    match (x, y) {
        (Some(x), Some(y)) if x.same_point(y) && x.value == y.value => {
            format!("{} a=b={}", x.place(), shown(x))
        }
        (Some(x), Some(y)) if x.same_point(y) => {
            format!("{} a={} b={}", x.place(), shown(x), shown(y))
        }
        (Some(x), Some(y)) => format!(
            "a: {} {} | b: {} {}",
            x.place(),
            shown(x),
            y.place(),
            shown(y)
        ),
        (Some(x), None) => format!("a: {} {} | b: (ended)", x.place(), shown(x)),
        (None, Some(y)) => format!("a: (ended) | b: {} {}", y.place(), shown(y)),
        (None, None) => String::new(),
    }
}

fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}
