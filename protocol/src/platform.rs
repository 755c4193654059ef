//! What machine and build a client runs on, as it tells the server in its
//! Hello: people use lockstep to show that a simulation computes the same
//! bits on different machines, and a verdict means little without knowing
//! which machines took part.
//!
//! Every field is the client's own claim. The server shows it and records
//! it, and never decides anything from it: [`Platform::sanitized`] bounds
//! and cleans every field before it is stored or printed.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Longest platform field kept, in characters: a CPU model name or a
/// `rustc -V` line is well under this; anything longer is cut.
pub const MAX_PLATFORM_CHARS: usize = 128;

/// Most CPU features kept: the float-relevant ones a client reports are a
/// handful.
pub const MAX_PLATFORM_FEATURES: usize = 16;

/// A client's machine and build.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Platform {
    /// Target triple the client was built for (`x86_64-unknown-linux-gnu`):
    /// the first thing that differs between machines that disagree.
    pub target: String,
    /// Operating system it runs on (`linux`, `macos`, `windows`).
    pub os: String,
    /// CPU model name (`/proc/cpuinfo` on Linux), or `unknown`: two CPUs of
    /// one architecture can still round differently (FMA, x87).
    pub cpu: String,
    /// Float-relevant CPU features detected at run time (`sse2`, `avx2`,
    /// `fma`, `neon`): what a compiler may have used.
    pub features: Vec<String>,
    /// Compiler that built the client (`rustc -V`): code generation, and so
    /// float results, may change between compiler versions.
    pub rustc: String,
    /// Build profile (`debug`, `release`): optimisation may reorder float
    /// operations where the language allows it.
    pub profile: String,
    /// The client's version (`CARGO_PKG_VERSION`).
    pub build: String,
}

impl Platform {
    /// The target triple, `unknown` if the client did not say.
    pub fn triple(&self) -> &str {
        if self.target.is_empty() {
            "unknown"
        } else {
            &self.target
        }
    }

    /// This platform with every field cut to [`MAX_PLATFORM_CHARS`], at
    /// most [`MAX_PLATFORM_FEATURES`] features, and control characters
    /// replaced: safe to keep and print whatever the client sent. Fields
    /// printed without quotes also lose spaces, quotes and commas, so a
    /// claim cannot pose as another `key=value`.
    #[must_use]
    pub fn sanitized(&self) -> Platform {
        Platform {
            target: clean(&self.target, true),
            os: clean(&self.os, true),
            cpu: clean(&self.cpu, false),
            features: self
                .features
                .iter()
                .take(MAX_PLATFORM_FEATURES)
                .map(|f| clean(f, true))
                .collect(),
            rustc: clean(&self.rustc, false),
            profile: clean(&self.profile, true),
            build: clean(&self.build, true),
        }
    }
}

/// At most [`MAX_PLATFORM_CHARS`] characters of `field`, with control
/// characters (and, for a `bare` field, spaces, quotes and commas) as `?`.
fn clean(field: &str, bare: bool) -> String {
    field
        .chars()
        .take(MAX_PLATFORM_CHARS)
        .map(|c| {
            let unsafe_bare = bare && (c.is_whitespace() || c == '"' || c == ',');
            if c.is_control() || unsafe_bare {
                '?'
            } else {
                c
            }
        })
        .collect()
}

/// One line of `key=value` pairs, the free-text fields quoted:
/// `target=x86_64-unknown-linux-gnu os=linux cpu="AMD EPYC 7B13"
/// features=sse2,avx2,fma rustc="rustc 1.95.0 (...)" profile=debug
/// build=0.1.0`. Sanitized first, so it is one line whatever was sent.
impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = self.sanitized();
        write!(
            f,
            "target={} os={} cpu={:?} features={} rustc={:?} profile={} build={}",
            p.triple(),
            p.os,
            p.cpu,
            p.features.join(","),
            p.rustc,
            p.profile,
            p.build
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Platform {
        Platform {
            target: "x86_64-unknown-linux-gnu".into(),
            os: "linux".into(),
            cpu: "AMD EPYC 7B13".into(),
            features: vec!["sse2".into(), "avx2".into(), "fma".into()],
            rustc: "rustc 1.95.0 (abc 2026-01-01)".into(),
            profile: "debug".into(),
            build: "0.1.0".into(),
        }
    }

    #[test]
    fn displays_as_one_line_of_key_value_pairs() {
        assert_eq!(
            sample().to_string(),
            "target=x86_64-unknown-linux-gnu os=linux cpu=\"AMD EPYC 7B13\" \
             features=sse2,avx2,fma rustc=\"rustc 1.95.0 (abc 2026-01-01)\" \
             profile=debug build=0.1.0"
        );
        assert_eq!(Platform::default().triple(), "unknown");
    }

    #[test]
    fn hostile_fields_are_cut_and_cannot_forge_lines_or_pairs() {
        let hostile = Platform {
            target: "x".repeat(10 * MAX_PLATFORM_CHARS),
            os: "linux\nverdict agreed".into(),
            cpu: "\"quoted\"\r\n".into(),
            features: vec!["a,b".into(); 10 * MAX_PLATFORM_FEATURES],
            ..sample()
        };
        let clean = hostile.sanitized();
        assert_eq!(clean.target.chars().count(), MAX_PLATFORM_CHARS);
        assert_eq!(clean.os, "linux?verdict?agreed");
        assert_eq!(clean.features.len(), MAX_PLATFORM_FEATURES);
        assert_eq!(clean.features[0], "a?b");
        let line = hostile.to_string();
        assert!(!line.contains('\n') && !line.contains('\r'), "{line}");
        assert!(line.contains("cpu=\"\\\"quoted\\\"??\""), "{line}");
        assert_eq!(clean.sanitized(), clean, "sanitizing twice changes nothing");
    }
}
