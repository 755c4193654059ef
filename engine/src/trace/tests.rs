use super::*;

/// A small computation with three trace points and two phases; `line`
/// tells the test which line the middle one is on.
fn compute(x: f32) -> (f32, u32) {
    let a = double(x);
    end_phase("first");
    let line = line!() + 1;
    let b = trace("sum", [a + 1.0, a - 1.0]);
    let _ = trace("count", 7_u32);
    end_phase("second");
    (b[0] + b[1], line)
}

fn double(x: f32) -> f32 {
    trace("double", x * 2.0)
}

#[test]
fn tracing_off_records_nothing_and_changes_nothing() {
    assert_eq!(trace("x", 1.5_f32), 1.5);
    assert_eq!(compute(3.0).0, 12.0);
    let ((value, _), trace) = record(5, || compute(3.0));
    assert_eq!(value, 12.0);
    assert_eq!(trace.entries.len(), 3);
    assert_eq!(trace.dropped, 0);
    assert_eq!(compute(3.0).0, 12.0);
}

#[test]
fn each_value_is_recorded_with_its_file_line_label_tick_and_phase() {
    let ((_, line), trace) = record(9, || compute(1.0));
    let sum = &trace.entries[1];
    assert!(sum.file.ends_with("trace/tests.rs"), "{sum:?}");
    assert_eq!(sum.line, line);
    assert_eq!(sum.label, "sum");
    assert_eq!(sum.tick, 9);
    assert_eq!(sum.phase, "second");
    assert_eq!(trace.entries[0].phase, "first");
    assert_eq!(sum.value.kind, Kind::F32);
    assert_eq!(
        sum.value.bits,
        vec![u64::from(3.0_f32.to_bits()), u64::from(1.0_f32.to_bits())]
    );
    assert_eq!(sum.value.bits_text(), "[0x40400000,0x3f800000]");
    assert_eq!(sum.value.number_text(), "[3.0,1.0]");
    assert_eq!(trace.entries[2].value.bits_text(), "7");
    assert_eq!(
        sum.place(),
        format!("{}:{line} sum tick=9 phase=second", sum.file)
    );
}

#[test]
fn a_recording_inside_another_keeps_its_own_values() {
    let (inner, outer) = record(1, || {
        trace("outer", 1_i32);
        let ((), inner) = record(2, || {
            trace("inner", -1_i32);
        });
        trace("outer", 2_i32);
        inner
    });
    let labels = |t: &Trace| {
        t.entries
            .iter()
            .map(|e| e.label.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(labels(&inner), ["inner"]);
    assert_eq!(inner.entries[0].value.bits_text(), "-1");
    assert_eq!(labels(&outer), ["outer", "outer"]);
}

#[test]
fn a_panic_inside_a_recording_leaves_none_behind() {
    let caught = std::panic::catch_unwind(|| {
        record(1, || {
            trace("x", 1_u8);
            panic!("stop");
        })
    });
    assert!(caught.is_err());
    LOCAL.with(|local| assert!(local.borrow().recording.is_none()));
}

#[test]
fn a_fault_changes_the_first_value_of_its_label_by_one_ulp() {
    let ((value, _), hit) = with_fault("double", || compute(3.0));
    assert!(hit);
    let double = f32::from_bits(6.0_f32.to_bits() + 1);
    assert_eq!(value, (double + 1.0) + (double - 1.0));
    let ((value, _), hit) = with_fault("nowhere", || compute(3.0));
    assert!(!hit);
    assert_eq!(value, 12.0);
    // Only the first value of the label in the scope.
    let (values, _) = with_fault("x", || (trace("x", 1_u32), trace("x", 1_u32)));
    assert_eq!(values, (2, 1));
    let mut array = [1.0_f64, 2.0];
    array.nudge();
    assert_eq!(array, [f64::from_bits(1.0_f64.to_bits() + 1), 2.0]);
    let mut flag = false;
    flag.nudge();
    assert!(flag);
}

#[test]
fn equal_runs_agree_and_a_one_ulp_fault_is_named_by_its_file_and_line() {
    let ((_, _), a) = record(4, || compute(3.0));
    let ((_, _), same) = record(4, || compute(3.0));
    assert_eq!(
        diff(&a.entries, &same.entries),
        TraceDiff::Agree { values: 3 }
    );
    assert_eq!(
        diff(&a.entries, &same.entries).report(&a.entries, &same.entries, 2),
        ["trace: the traces agree (3 values)"]
    );
    let (((_, line), _), b) = record(4, || with_fault("sum", || compute(3.0)));
    let found = diff(&a.entries, &b.entries);
    assert_eq!(found, TraceDiff::Value { at: 1 });
    let report = found.report(&a.entries, &b.entries, 1);
    let file = &a.entries[1].file;
    assert_eq!(
        report[0],
        format!(
            "first differing value: {file}:{line} sum tick=4 phase=second \
             a=[0x40e00000,0x40a00000] b=[0x40e00001,0x40a00000] (1 value agreed before it)"
        )
    );
    assert_eq!(report.len(), 4, "{report:?}");
    assert!(report[1].starts_with("    ") && report[1].contains("double"));
    assert!(
        report[2].starts_with("  > ")
            && report[2].contains("b=[0x40e00001,0x40a00000] ([7.0000005,5.0])"),
        "{report:?}"
    );
    assert!(report[3].contains("count") && report[3].contains("a=b=7"));
}

#[test]
fn traces_that_take_other_paths_or_end_early_say_so() {
    let ((_, _), a) = record(4, || compute(3.0));
    let ((), b) = record(4, || {
        double(3.0);
        end_phase("first");
        trace("other", 1_u8);
    });
    let found = diff(&a.entries, &b.entries);
    assert_eq!(found, TraceDiff::Path { at: 1 });
    let report = found.report(&a.entries, &b.entries, 0);
    assert!(
        report[0].starts_with("first differing value: the steps part after 1 value: a traced ")
            && report[0].contains(" sum tick=4")
            && report[0].contains(" where b traced ")
            && report[0].contains(" other tick=4"),
        "{report:?}"
    );
    let short = &a.entries[..2];
    let found = diff(&a.entries, short);
    assert_eq!(found, TraceDiff::Length { at: 2 });
    let report = found.report(&a.entries, short, 0);
    assert!(
        report[0]
            .starts_with("first differing value: b's trace ends after 2 values; a's goes on with ")
            && report[0].contains(" count tick=4"),
        "{report:?}"
    );
}

#[test]
fn a_point_is_the_same_from_another_directory_and_entries_print_as_lines() {
    let ((_, _), a) = record(4, || compute(3.0));
    let mut moved = a.entries[1].clone();
    moved.file = format!("/home/someone/lockstep/{}", a.entries[1].file).into();
    assert!(moved.same_point(&a.entries[1]));
    let mut windows = a.entries[1].clone();
    windows.file = a.entries[1].file.replace('/', "\\").into();
    assert!(windows.same_point(&a.entries[1]));
    moved.line += 1;
    assert!(!moved.same_point(&a.entries[1]));
    for entry in &a.entries {
        let line = entry.to_line();
        assert!(line.starts_with("trace {"), "{line}");
        assert_eq!(Entry::parse_line(&line).unwrap().unwrap(), *entry);
    }
    assert!(Entry::parse_line("final tick=3 hash=00").is_none());
    assert!(Entry::parse_line("trace {broken").unwrap().is_err());
}

#[test]
fn an_item_is_named_by_its_index_and_only_traced_while_something_listens() {
    let ((), trace) = record(2, || {
        assert!(enabled());
        for (i, x) in [1.0_f32, 2.0].into_iter().enumerate() {
            trace_item("ball.x", i, x);
        }
    });
    assert_eq!(trace.entries[1].index, Some(1));
    assert!(
        trace.entries[1].place().contains(" ball.x[1] tick=2 "),
        "{:?}",
        trace.entries[1]
    );
    assert!(!trace.entries[0].same_point(&trace.entries[1]));
}

#[test]
fn a_recording_keeps_at_most_max_entries_and_counts_the_rest() {
    let ((), trace) = record(1, || {
        for i in 0..MAX_ENTRIES + 3 {
            super::trace("i", i);
        }
    });
    assert_eq!(trace.entries.len(), MAX_ENTRIES);
    assert_eq!(trace.dropped, 3);
}

#[test]
fn ticks_to_trace_are_one_tick_or_a_range() {
    assert_eq!(parse_ticks("6"), Ok(6..=6));
    assert_eq!(parse_ticks("4..6"), Ok(4..=6));
    for bad in ["0", "x", "6..4", "..3", "-1", ""] {
        assert!(parse_ticks(bad).is_err(), "{bad}");
    }
}

#[test]
fn two_outputs_are_compared_by_their_trace_lines_only() {
    let ((_, _), a) = record(4, || compute(3.0));
    let (((_, line), _), b) = record(4, || with_fault("sum", || compute(3.0)));
    let text = |t: &Trace, last: &str| {
        let mut lines: Vec<String> = t.entries.iter().map(Entry::to_line).collect();
        lines.insert(1, "something else".into());
        lines.push(last.into());
        lines.join("\n")
    };
    let (lines, differ) = diff_outputs(
        ("native", &text(&a, "final tick=4 hash=1")),
        ("wine", &text(&b, "final")),
        1,
    )
    .unwrap();
    assert!(differ);
    assert_eq!(lines[0], "a: native (3 values)");
    assert!(
        lines[2].starts_with("first differing value: ")
            && lines[2].contains(&format!(":{line} sum tick=4")),
        "{lines:?}"
    );
    let (lines, differ) = diff_outputs(("x", &text(&a, "")), ("y", &text(&a, "")), 1).unwrap();
    assert!(!differ);
    assert_eq!(lines[2], "trace: the traces agree (3 values)");
    let none = diff_outputs(("x", "final tick=1 hash=0"), ("y", &text(&a, "")), 1).unwrap_err();
    assert!(none.starts_with("x holds no trace line"), "{none}");
    let broken = diff_outputs(("x", "ok\ntrace {\"tick\":"), ("y", &text(&a, "")), 1).unwrap_err();
    assert!(broken.starts_with("x:2: not a trace line"), "{broken}");
}

#[test]
fn a_trace_crosses_the_wire_as_places_and_values_and_back() {
    let ((_, _), trace) = record(4, || compute(3.0));
    let report = to_report(&trace.entries);
    assert_eq!(report.places.len(), 3);
    assert_eq!(report.total, 3);
    assert_eq!(from_report(4, &report).unwrap(), trace.entries);
    let mut bad = report.clone();
    bad.values[0].place = 9;
    assert!(from_report(4, &bad).unwrap_err().contains("names no place"));
    let mut bad = report.clone();
    bad.values[0].kind = 7;
    assert!(from_report(4, &bad).is_err());
    let mut bad = report;
    bad.total = 1;
    assert!(from_report(4, &bad).is_err());
}

#[test]
fn a_long_trace_is_cut_to_fit_a_message_and_says_how_long_it_was() {
    let ((), trace) = record(1, || {
        for i in 0..20_000_usize {
            trace_item("wide", i, [1.5_f32 + i as f32, -2.5, 3.25, 4.0]);
        }
    });
    let report = to_report(&trace.entries);
    let size = postcard::to_stdvec(&report).unwrap().len();
    assert!(size <= REPORT_BUDGET, "{size}");
    assert!(
        report.values.len() > 1000 && report.values.len() < 20_000,
        "{}",
        report.values.len()
    );
    assert_eq!(report.total, 20_000);
    let back = from_report(1, &report).unwrap();
    assert_eq!(back[..], trace.entries[..back.len()]);
}
