//! What the process-level benchmarks share: their environment knobs, the
//! CPU time of another process, and the summaries they print (median and
//! spread, percentiles).

#![allow(
    dead_code,
    reason = "shared by several bench binaries; not every one uses each helper"
)]

use std::str::FromStr;

/// The environment variable `key` parsed as a `T`, or `default` when it is
/// unset or does not parse.
pub fn env_or<T: FromStr>(key: &str, default: T) -> T {
    std::env::var(key)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The comma-separated environment variable `key` (or `default` when it is
/// unset), each item parsed as a `T`. Panics naming the item that does not
/// parse: a typo in a benchmark knob should stop the run, not be ignored.
pub fn env_list<T: FromStr>(key: &str, default: &str) -> Vec<T> {
    let value = std::env::var(key).unwrap_or_else(|_| default.to_string());
    value
        .split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(|item| {
            item.parse()
                .unwrap_or_else(|_| panic!("{key}: cannot read {item:?}"))
        })
        .collect()
}

/// CPU seconds (user + system) used so far by `pid`, from /proc/PID/stat.
pub fn cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the parenthesised command name; utime and stime are
    // fields 14 and 15 of the whole line.
    let after = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = after.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    // USER_HZ is 100 on every Linux configuration this runs on.
    Some((utime + stime) / 100.0)
}

/// (median, min, max) of a non-empty sample.
pub fn spread(values: &mut [f64]) -> (f64, f64, f64) {
    values.sort_by(|a, b| a.total_cmp(b));
    (
        values[values.len() / 2],
        values[0],
        values[values.len() - 1],
    )
}

/// The `q`-quantile (0 < q <= 1) of an ascending, non-empty sample by the
/// nearest-rank rule: the smallest value with at least `q` of the sample at
/// or below it, so p99 of 1,200 values is the 1,188th.
pub fn percentile<T: Copy>(sorted: &[T], q: f64) -> T {
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}
