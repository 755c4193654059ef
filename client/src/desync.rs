//! Desync diagnosis: a ring of recent snapshots, dumps written when the
//! server reports a desync, and the field-by-field diff of two dumps.
//!
//! Every simulated tick goes into a [`History`] ring (snapshot, hash and the
//! bundle that produced it), like OpenRA's sync reports. When the server
//! says tick `T` diverged, each client writes [`DesyncDump`] for `T` twice:
//! as JSON to read, and as postcard bytes that keep every float bit. Then
//! `lockstep-client desync-diff A B` names the first fields that differ,
//! with both values and their bit patterns.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use lockstep_protocol::{Bundle, PlayerId, Tick};
use serde::{Deserialize, Serialize};

use lockstep_sim::World;

/// Version of the dump layout, stored in every dump.
pub const DUMP_FORMAT: u32 = 1;

/// Ticks of history kept by default: 10 s at 60 Hz, far more than the
/// server needs to gather and compare one round of reports.
pub const DEFAULT_HISTORY: usize = 600;

/// One simulated tick as remembered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Frame {
    /// The bundle that was applied to reach `world`.
    pub bundle: Bundle,
    /// The world after the tick (`world.tick()` is its number).
    pub world: World,
    /// `world.hash()`.
    pub hash: u64,
}

/// The last ticks' frames, oldest first.
#[derive(Debug)]
pub struct History {
    frames: VecDeque<Frame>,
    capacity: usize,
}

impl History {
    /// A ring that keeps the last `capacity` ticks (at least one).
    pub fn new(capacity: usize) -> Self {
        History {
            frames: VecDeque::new(),
            capacity: capacity.max(1),
        }
    }

    /// Remembers the tick that produced `world`. Reuses the oldest frame's
    /// allocations once the ring is full.
    pub fn record(&mut self, bundle: &Bundle, world: &World, hash: u64) {
        if self.frames.len() == self.capacity {
            if let Some(mut oldest) = self.frames.pop_front() {
                oldest.bundle.clone_from(bundle);
                oldest.world.clone_from(world);
                oldest.hash = hash;
                self.frames.push_back(oldest);
                return;
            }
        }
        self.frames.push_back(Frame {
            bundle: bundle.clone(),
            world: world.clone(),
            hash,
        });
    }

    /// The most recent frame.
    pub fn latest(&self) -> Option<&Frame> {
        self.frames.back()
    }

    /// The frame whose world is at `tick`, if still kept.
    pub fn at(&self, tick: Tick) -> Option<&Frame> {
        self.frames.iter().find(|f| f.world.tick() == tick)
    }

    /// A dump of `tick` with every kept bundle up to it, or `None` if the
    /// tick has left the ring (or not happened yet).
    pub fn dump(&self, tick: Tick, player: PlayerId, name: &str) -> Option<DesyncDump> {
        let frame = self.at(tick)?;
        let inputs = self
            .frames
            .iter()
            .filter(|f| f.world.tick() <= tick)
            .map(|f| (f.world.tick(), f.bundle.clone()))
            .collect();
        Some(DesyncDump {
            format: DUMP_FORMAT,
            player,
            name: name.to_string(),
            tick,
            hash: format!("{:016x}", frame.hash),
            world: frame.world.clone(),
            inputs,
        })
    }
}

/// Everything one client knew about a diverged tick.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DesyncDump {
    /// [`DUMP_FORMAT`] of the writer.
    pub format: u32,
    /// The writing client's slot.
    pub player: PlayerId,
    /// The writing client's name.
    pub name: String,
    /// The diverged tick.
    pub tick: Tick,
    /// `world.hash()` as 16 hex digits.
    pub hash: String,
    /// The world after `tick`.
    pub world: World,
    /// The bundles of the ticks before it that were still kept, with the
    /// tick each one produced.
    pub inputs: Vec<(Tick, Bundle)>,
}

/// Why a dump could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum DumpError {
    /// The file system refused.
    #[error("cannot access {}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The JSON form could not be produced or parsed.
    #[error("{} is not a readable desync dump: {source}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// The parser's complaint.
        source: serde_json::Error,
    },
    /// The binary form could not be produced or parsed.
    #[error("{} is not a binary desync dump: {source}", path.display())]
    Binary {
        /// The file.
        path: PathBuf,
        /// The decoder's complaint.
        source: postcard::Error,
    },
    /// A dump written by another version of this program.
    #[error("{} has dump format {found}; this program reads format {DUMP_FORMAT}", path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// Its format number.
        found: u32,
    },
}

impl DesyncDump {
    /// Writes `DIR/desync-tT-NAME.json` and `.bin`; returns both paths.
    pub fn write(&self, dir: &Path) -> Result<(PathBuf, PathBuf), DumpError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| DumpError::Io { path, source }
        };
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let safe: String = self
            .name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let stem = format!("desync-t{}-{}", self.tick, safe);
        let json_path = dir.join(format!("{stem}.json"));
        let bin_path = dir.join(format!("{stem}.bin"));
        let json = serde_json::to_vec_pretty(self).map_err(|source| DumpError::Json {
            path: json_path.clone(),
            source,
        })?;
        std::fs::write(&json_path, json).map_err(io(&json_path))?;
        let bin = postcard::to_stdvec(self).map_err(|source| DumpError::Binary {
            path: bin_path.clone(),
            source,
        })?;
        std::fs::write(&bin_path, bin).map_err(io(&bin_path))?;
        Ok((json_path, bin_path))
    }

    /// Reads a dump: `.json` as JSON, anything else as the binary form.
    pub fn load(path: &Path) -> Result<DesyncDump, DumpError> {
        let bytes = std::fs::read(path).map_err(|source| DumpError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let dump: DesyncDump = if path.extension().is_some_and(|e| e == "json") {
            serde_json::from_slice(&bytes).map_err(|source| DumpError::Json {
                path: path.to_path_buf(),
                source,
            })?
        } else {
            postcard::from_bytes(&bytes).map_err(|source| DumpError::Binary {
                path: path.to_path_buf(),
                source,
            })?
        };
        if dump.format != DUMP_FORMAT {
            return Err(DumpError::Format {
                path: path.to_path_buf(),
                found: dump.format,
            });
        }
        Ok(dump)
    }
}

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

impl std::fmt::Display for Leaf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Leaf::Float(bits) => write!(f, "{:?} (bits 0x{bits:08x})", f32::from_bits(*bits)),
            Leaf::Int(v) => write!(f, "{v}"),
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
pub fn diff_worlds(a: &World, b: &World) -> Vec<FieldDiff> {
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
            // Every float of the world is an f32, and f32 -> f64 -> f32 is
            // exact, so these are the original bits.
            (_, _, Some(v)) => Leaf::Float((v as f32).to_bits()),
            _ => Leaf::Other(n.to_string()),
        },
        other => Leaf::Other(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockstep_sim::offline::{self, SimOptions};
    use lockstep_sim::WorldConfig;

    fn world() -> World {
        offline::run(SimOptions {
            players: 3,
            seed: 4,
            ticks: 120,
            balls: WorldConfig::DEFAULT_BALLS,
            tick_rate: 60,
        })
    }

    #[test]
    fn identical_worlds_have_no_differences() {
        assert!(diff_worlds(&world(), &world()).is_empty());
    }

    #[test]
    fn a_one_ulp_nudge_is_named_with_both_bit_patterns() {
        let a = world();
        let mut b = a.clone();
        let path = b.nudge_one_ulp().unwrap();
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
        let a = world();
        let mut b = a.clone();
        b.remove_player(PlayerId(2));
        let diffs = diff_worlds(&a, &b);
        assert!(diffs
            .iter()
            .any(|d| d.path.starts_with("discs[2]") && d.right.is_none()));
    }

    #[test]
    fn the_ring_keeps_only_the_last_ticks() {
        let mut history = History::new(3);
        let mut w = World::new(WorldConfig::new(1, 60), &[PlayerId(0)]);
        for _ in 0..5 {
            w.step(&[]);
            history.record(&Bundle::default(), &w, w.hash());
        }
        assert!(history.at(Tick(2)).is_none());
        assert_eq!(history.at(Tick(5)).map(|f| f.hash), Some(w.hash()));
        let dump = history.dump(Tick(4), PlayerId(0), "ada").unwrap();
        assert_eq!(dump.inputs.len(), 2);
        assert_eq!(dump.world.tick(), Tick(4));
    }

    #[test]
    fn dumps_round_trip_through_both_files_and_refuse_other_formats() {
        let mut history = History::new(8);
        let w = world();
        history.record(&Bundle::default(), &w, w.hash());
        let dump = history.dump(w.tick(), PlayerId(1), "b/o b").unwrap();
        let dir = std::env::temp_dir().join(format!("lockstep-dump-{}", std::process::id()));
        let (json, bin) = dump.write(&dir).unwrap();
        assert!(json.ends_with("desync-t120-b_o_b.json"), "{json:?}");
        assert_eq!(DesyncDump::load(&json).unwrap(), dump);
        assert_eq!(DesyncDump::load(&bin).unwrap(), dump);
        let mut other = dump.clone();
        other.format = 99;
        std::fs::write(&bin, postcard::to_stdvec(&other).unwrap()).unwrap();
        assert!(matches!(
            DesyncDump::load(&bin),
            Err(DumpError::Format { found: 99, .. })
        ));
        std::fs::write(&bin, b"garbage").unwrap();
        assert!(matches!(
            DesyncDump::load(&bin),
            Err(DumpError::Binary { .. })
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
