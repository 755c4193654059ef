//! The field-by-field comparison of two states, and the `desync-diff`
//! report built on it.
//!
//! Both states go through serde's JSON data model, so any [`Game`] can be
//! compared without the engine knowing its fields: the diff names each
//! differing field by its path (`balls[3].vel.y`) with both values, floats
//! with their bit patterns, since a desync is often one ulp.

use std::path::Path;

use serde::Serialize;

use crate::determinism::desync::{DesyncDump, DumpError};
use crate::game::Game;
use crate::trace;

/// One field that differs between two worlds.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldDiff {
    /// Where, e.g. `balls[3].vel.y`.
    pub path: String,
    /// The value in the first world (`None`: missing there).
    pub left: Option<Leaf>,
    /// The value in the second world.
    pub right: Option<Leaf>,
}

/// A scalar of the world's state.
#[derive(Debug, Clone, PartialEq)]
pub enum Leaf {
    /// A float, kept as its bits.
    Float(u32),
    /// An integer.
    Int(i128),
    /// Anything else (booleans, strings, null), as JSON text.
    Other(String),
}

/// Values longer than this many characters are shown by their start.
const LONG_VALUE: usize = 64;

impl std::fmt::Display for Leaf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Leaf::Float(bits) => write!(f, "{:?} (bits 0x{bits:08x})", f32::from_bits(*bits)),
            Leaf::Int(v) => write!(f, "{v}"),
            // A long value (a game's opaque blob, such as a physics
            // world's bytes) by its start and length: the fields a game
            // names are where to look.
            Leaf::Other(text) if text.chars().count() > LONG_VALUE => {
                let start: String = text.chars().take(LONG_VALUE / 2).collect();
                write!(f, "{start}... ({} characters)", text.chars().count())
            }
            Leaf::Other(text) => f.write_str(text),
        }
    }
}

impl std::fmt::Display for FieldDiff {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let show = |leaf: &Option<Leaf>| {
            leaf.as_ref()
                .map_or("(missing)".to_string(), |l| l.to_string())
        };
        write!(
            f,
            "{}: {} != {}",
            self.path,
            show(&self.left),
            show(&self.right)
        )
    }
}

/// Every field of `a` and `b` whose value differs (fields in name order,
/// list elements in index order).
pub fn diff_worlds<G: Serialize>(a: &G, b: &G) -> Vec<FieldDiff> {
    let (Ok(a), Ok(b)) = (serde_json::to_value(a), serde_json::to_value(b)) else {
        return Vec::new();
    };
    let mut diffs = Vec::new();
    diff_values("", Some(&a), Some(&b), &mut diffs);
    diffs
}

/// Compares two subtrees; a side that is `None` is missing (a shorter
/// list), and all of the other side's leaves are reported against it.
fn diff_values(
    path: &str,
    a: Option<&serde_json::Value>,
    b: Option<&serde_json::Value>,
    out: &mut Vec<FieldDiff>,
) {
    use serde_json::Value;
    match (a, b) {
        (Some(Value::Object(x)), Some(Value::Object(y))) => {
            for (key, value) in x {
                diff_values(&join(path, key), Some(value), y.get(key), out);
            }
            for (key, value) in y.iter().filter(|(k, _)| !x.contains_key(*k)) {
                diff_values(&join(path, key), None, Some(value), out);
            }
        }
        (Some(Value::Array(x)), Some(Value::Array(y))) => {
            for i in 0..x.len().max(y.len()) {
                diff_values(
                    &element(path, i, x.len().max(y.len())),
                    x.get(i),
                    y.get(i),
                    out,
                );
            }
        }
        (Some(x), Some(y))
            if !x.is_object() && !x.is_array() && !y.is_object() && !y.is_array() =>
        {
            let (left, right) = (leaf(x), leaf(y));
            if left != right {
                out.push(FieldDiff {
                    path: path.to_string(),
                    left: Some(left),
                    right: Some(right),
                });
            }
        }
        (x, y) => {
            let mut left = Vec::new();
            let mut right = Vec::new();
            if let Some(x) = x {
                leaves(path, x, &mut left);
            }
            if let Some(y) = y {
                leaves(path, y, &mut right);
            }
            out.extend(left.into_iter().map(|(path, value)| FieldDiff {
                path,
                left: Some(value),
                right: None,
            }));
            out.extend(right.into_iter().map(|(path, value)| FieldDiff {
                path,
                left: None,
                right: Some(value),
            }));
        }
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// The path of element `i` of a list of `len`: glam serialises a `Vec2`
/// as `[x, y]`, which reads better as `.x` and `.y`.
fn element(path: &str, i: usize, len: usize) -> String {
    let vector = len == 2 && (path.ends_with("pos") || path.ends_with("vel"));
    match (vector, i) {
        (true, 0) => format!("{path}.x"),
        (true, _) => format!("{path}.y"),
        (false, _) => format!("{path}[{i}]"),
    }
}

fn leaves(path: &str, value: &serde_json::Value, out: &mut Vec<(String, Leaf)>) {
    use serde_json::Value;
    match value {
        Value::Object(fields) => {
            for (key, field) in fields {
                leaves(&join(path, key), field, out);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                leaves(&element(path, i, items.len()), item, out);
            }
        }
        other => out.push((path.to_string(), leaf(other))),
    }
}

fn leaf(value: &serde_json::Value) -> Leaf {
    match value {
        serde_json::Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(v), _, _) => Leaf::Int(i128::from(v)),
            (_, Some(v), _) => Leaf::Int(i128::from(v)),
            // Floats are taken as f32 (the games here use no f64), and
            // f32 -> f64 -> f32 is exact, so these are the original bits.
            (_, _, Some(v)) => Leaf::Float((v as f32).to_bits()),
            _ => Leaf::Other(n.to_string()),
        },
        other => Leaf::Other(other.to_string()),
    }
}

/// What `desync-diff` found: the lines to print, and whether the worlds
/// differ (the command then exits 1, like diff(1)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffReport {
    /// The report, one line each.
    pub lines: Vec<String>,
    /// Number of differing fields; 0 when the worlds are identical.
    pub differing: usize,
}

/// Loads two dumps and compares their worlds, listing at most `max`
/// differing fields.
pub fn compare_dumps<G: Game>(a: &Path, b: &Path, max: usize) -> Result<DiffReport, DumpError> {
    let left: DesyncDump<G> = DesyncDump::load(a)?;
    let right: DesyncDump<G> = DesyncDump::load(b)?;
    let describe = |label: &str, path: &Path, dump: &DesyncDump<G>| {
        format!(
            "{label}: {} ({}) tick={} hash={}",
            path.display(),
            dump.name,
            dump.tick,
            dump.hash
        )
    };
    let mut lines = vec![describe("a", a, &left), describe("b", b, &right)];
    if left.tick != right.tick {
        lines.push(format!(
            "note: the dumps are of different ticks ({} and {})",
            left.tick, right.tick
        ));
    }
    if left.tick == right.tick {
        lines.extend(compare_phases(&left, &right));
        lines.extend(compare_traces(&left, &right));
    }
    let diffs = diff_worlds(&left.world, &right.world);
    if diffs.is_empty() {
        lines.push("no difference: the worlds are identical".into());
    } else {
        lines.push(format!("differing fields: {}", diffs.len()));
        lines.extend(diffs.iter().take(max).map(|d| format!("  {d}")));
        if diffs.len() > max {
            lines.push(format!("  ... and {} more (see --max)", diffs.len() - max));
        }
    }
    Ok(DiffReport {
        lines,
        differing: diffs.len(),
    })
}

/// The hashes after each phase of the dumped tick's step, side by side,
/// and the verdict: the first phase where they differ, or that the step
/// agrees everywhere and the states were changed outside it.
fn compare_phases<G: Game>(a: &DesyncDump<G>, b: &DesyncDump<G>) -> Vec<String> {
    if a.phases.is_empty() || b.phases.is_empty() {
        return vec!["phases: not recorded (the tick before had left a history)".into()];
    }
    let width = a.phases.iter().map(|p| p.phase.len()).max().unwrap_or(0);
    let mut lines = vec![format!(
        "phases of tick {}'s step, redone from tick {}:",
        a.tick,
        a.tick.0.saturating_sub(1)
    )];
    let mut first = None;
    for (x, y) in a.phases.iter().zip(&b.phases) {
        let same = x.phase == y.phase && x.hash == y.hash;
        let sign = if same { "=" } else { "!=" };
        lines.push(format!(
            "  {:width$}  {} {sign} {}",
            x.phase, x.hash, y.hash
        ));
        if !same && first.is_none() {
            first = Some(x.phase.clone());
        }
    }
    if a.phases.len() != b.phases.len() {
        lines.push(format!(
            "  the games have different phases ({} and {})",
            a.phases.len(),
            b.phases.len()
        ));
    }
    for (label, dump) in [("a", a), ("b", b)] {
        if dump.phases.last().is_some_and(|p| p.hash != dump.hash) {
            lines.push(format!(
                "{label} ({}): the step redone does not give the recorded hash {}: \
                 its state was changed outside the step",
                dump.name, dump.hash
            ));
        }
    }
    lines.push(match (first, a.hash == b.hash) {
        (Some(phase), _) if phase == "before" => {
            "first difference: before the step (the states of the tick before differ)".into()
        }
        (Some(phase), _) => format!("first difference: phase {phase}"),
        (None, false) => "first difference: after the step (every phase agrees)".into(),
        (None, true) => "every phase agrees".into(),
    });
    lines
}

/// Entries shown either side of the first differing value.
const TRACE_CONTEXT: usize = 3;

/// The values both steps traced, compared: the first computed differently,
/// named by its file and line, with the entries around it; or why there is
/// nothing to compare.
fn compare_traces<G: Game>(a: &DesyncDump<G>, b: &DesyncDump<G>) -> Vec<String> {
    let (Some(x), Some(y)) = (&a.trace, &b.trace) else {
        let missing: Vec<&str> = [("a", &a.trace), ("b", &b.trace)]
            .iter()
            .filter(|(_, trace)| trace.is_none())
            .map(|(label, _)| *label)
            .collect();
        return vec![format!(
            "trace: none in {} (a dump of format 4, or the tick before had left the history)",
            missing.join(" and ")
        )];
    };
    if x.entries.is_empty() && y.entries.is_empty() {
        return vec!["trace: the game traced no values (see lockstep_engine::trace)".into()];
    }
    let mut lines =
        trace::diff(&x.entries, &y.entries).report(&x.entries, &y.entries, TRACE_CONTEXT);
    for (label, trace) in [("a", x), ("b", y)] {
        if trace.dropped > 0 {
            lines.push(format!(
                "trace: {label} kept the first {} values and dropped {}",
                trace.entries.len(),
                trace.dropped
            ));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::determinism::history::History;
    use crate::testing::{play, Tally};
    use lockstep_protocol::{Bundle, PlayerId, Tick};

    #[test]
    fn a_long_value_is_shown_by_its_start_and_length() {
        let long = Leaf::Other(format!("\"{}\"", "ab".repeat(100)));
        let shown = long.to_string();
        assert!(
            shown.starts_with("\"abab") && shown.ends_with("... (202 characters)"),
            "{shown}"
        );
        assert_eq!(Leaf::Other("true".into()).to_string(), "true");
    }

    #[test]
    fn identical_states_have_no_differences() {
        assert!(diff_worlds(&play(3, 50), &play(3, 50)).is_empty());
    }

    #[test]
    fn a_one_ulp_nudge_is_named_with_both_bit_patterns() {
        let a = play(3, 50);
        let mut b = a.clone();
        let path = b.nudge().unwrap();
        let diffs = diff_worlds(&a, &b);
        assert_eq!(diffs.len(), 1, "{diffs:?}");
        assert_eq!(diffs[0].path, path);
        let (Some(Leaf::Float(l)), Some(Leaf::Float(r))) = (&diffs[0].left, &diffs[0].right) else {
            panic!("{diffs:?}");
        };
        assert_eq!(l + 1, *r);
        assert!(diffs[0].to_string().contains(&format!("0x{r:08x}")));
    }

    #[test]
    fn a_removed_player_shows_as_missing_fields() {
        let a = play(3, 50);
        let mut b = a.clone();
        b.remove_player(PlayerId(2));
        let diffs = diff_worlds(&a, &b);
        assert!(diffs
            .iter()
            .any(|d| d.path.starts_with("counters[2]") && d.right.is_none()));
    }

    #[test]
    fn the_report_lists_at_most_max_fields_and_counts_them_all() {
        let dir = std::env::temp_dir().join(format!("lockstep-diff-{}", std::process::id()));
        let write = |game: &Tally, name: &str| {
            let mut history = History::new(1);
            history.record(&Bundle::default(), game, game.hash());
            history
                .dump(
                    game.tick(),
                    &crate::testing::spec(),
                    Some(PlayerId(0)),
                    name,
                )
                .unwrap()
                .write(&dir)
                .unwrap()
                .1
        };
        let a = play(3, 50);
        let mut b = a.clone();
        b.remove_player(PlayerId(1));
        let (left, right) = (write(&a, "a"), write(&b, "b"));
        let report = compare_dumps::<Tally>(&left, &right, 1).unwrap();
        let all = diff_worlds(&a, &b).len();
        assert!(all > 1, "{all}");
        assert_eq!(report.differing, all);
        assert_eq!(
            report.lines[2],
            "phases: not recorded (the tick before had left a history)"
        );
        assert_eq!(
            report.lines[3],
            "trace: none in a and b (a dump of format 4, or the tick before had left the history)"
        );
        assert_eq!(report.lines[4], format!("differing fields: {all}"));
        assert_eq!(report.lines.len(), 7, "{:?}", report.lines);
        assert_eq!(
            report.lines[6],
            format!("  ... and {} more (see --max)", all - 1)
        );
        let same = compare_dumps::<Tally>(&left, &left, 1).unwrap();
        assert_eq!(same.differing, 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The dump of tick 4 of a 2-player Tally, nudged after `phase` of
    /// tick 4's step (`"after"`: after the whole step) when given.
    fn dump_nudged(name: &str, phase: Option<&'static str>) -> DesyncDump<Tally> {
        let mut history = History::new(8);
        let mut game: Tally = play(2, 3);
        history.record(&Bundle::default(), &game, game.hash());
        let bundle = Bundle::default();
        let step =
            |game: &mut Tally, bundle: &Bundle, after: &mut dyn FnMut(&'static str, &mut Tally)| {
                crate::apply_phases(game, bundle, &mut |name, game| {
                    if phase == Some(name) {
                        game.nudge();
                    }
                    after(name, game);
                });
            };
        step(&mut game, &bundle, &mut |_, _| {});
        if phase == Some("after") {
            game.nudge();
        }
        history.record(&bundle, &game, game.hash());
        let mut dump = history
            .dump(Tick(4), &crate::testing::spec(), Some(PlayerId(0)), name)
            .unwrap();
        (dump.phases, dump.trace) = history.redo(Tick(4), step);
        dump
    }

    #[test]
    fn the_phase_report_names_the_first_phase_that_differs() {
        let honest = dump_nudged("ada", None);
        let lines = compare_phases(&honest, &dump_nudged("bob", Some("counters")));
        assert_eq!(lines[0], "phases of tick 4's step, redone from tick 3:");
        assert!(
            lines[1].starts_with("  before  ") && lines[1].contains(" = "),
            "{lines:?}"
        );
        assert!(
            lines[3].starts_with("  counters  ") && lines[3].contains(" != "),
            "{lines:?}"
        );
        assert_eq!(lines.last().unwrap(), "first difference: phase counters");
        let same = compare_phases(&honest, &dump_nudged("cy", None));
        assert_eq!(same.last().unwrap(), "every phase agrees");
    }

    #[test]
    fn the_trace_report_names_the_line_of_the_first_value_computed_differently() {
        let honest = dump_nudged("ada", None);
        let mut faulty = dump_nudged("bob", None);
        let mut game: Tally = play(2, 3);
        let ((), trace) = crate::trace::record(4, || {
            crate::trace::with_fault("drift", || {
                crate::apply_phases(&mut game, &Bundle::default(), &mut |phase, _| {
                    crate::trace::end_phase(phase);
                });
            });
        });
        faulty.trace = Some(trace);
        let lines = compare_traces(&honest, &faulty);
        let drift = honest
            .trace
            .as_ref()
            .and_then(|t| t.entries.iter().find(|e| e.label == "drift"))
            .unwrap();
        assert!(drift.file.ends_with("games/tally/src/game.rs"), "{drift:?}");
        // Two counters of two values each agree before the drift.
        assert!(
            lines[0].starts_with(&format!(
                "first differing value: {}:{} drift tick=4 phase=drift a=0x",
                drift.file, drift.line
            )) && lines[0].ends_with(" (4 values agreed before it)"),
            "{lines:?}"
        );
        assert!(lines.iter().any(|l| l.starts_with("  > ")), "{lines:?}");
        let same = compare_traces(&honest, &dump_nudged("cy", None));
        assert_eq!(same, ["trace: the traces agree (5 values)"]);
        let mut old = dump_nudged("dee", None);
        old.trace = None;
        assert_eq!(
            compare_traces(&honest, &old),
            ["trace: none in b (a dump of format 4, or the tick before had left the history)"]
        );
    }

    #[test]
    fn a_change_outside_the_step_is_told_apart_from_one_inside() {
        let honest = dump_nudged("ada", None);
        let lines = compare_phases(&honest, &dump_nudged("bob", Some("after")));
        assert_eq!(
            lines.last().unwrap(),
            "first difference: after the step (every phase agrees)"
        );
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("b (bob): the step redone does not give")),
            "{lines:?}"
        );
    }
}
