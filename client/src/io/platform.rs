//! This machine and build, as the Hello tells the server
//! ([`lockstep_protocol::Platform`]): the server prints it when the player
//! joins and keeps it in its replay, and its end-of-game verdict names the
//! machines that agreed or diverged.
//!
//! The build facts (compiler, target, profile) are captured by `build.rs`;
//! the CPU model and features are read when the client runs, since the
//! same binary may run on different CPUs.

use std::sync::OnceLock;

use lockstep_protocol::Platform;

/// This client's platform, read once per process.
pub fn current() -> Platform {
    static CURRENT: OnceLock<Platform> = OnceLock::new();
    CURRENT.get_or_init(detect).clone()
}

fn detect() -> Platform {
    Platform {
        target: env!("LOCKSTEP_TARGET").into(),
        os: std::env::consts::OS.into(),
        cpu: cpu_model(),
        features: float_features().iter().map(|f| f.to_string()).collect(),
        rustc: env!("LOCKSTEP_RUSTC_VERSION").into(),
        profile: env!("LOCKSTEP_PROFILE").into(),
        build: env!("CARGO_PKG_VERSION").into(),
    }
}

/// The CPU's model name from `/proc/cpuinfo` on Linux, `unknown` where
/// there is none (other systems, most ARM kernels).
fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| model_name(&info))
        .unwrap_or_else(|| "unknown".into())
}

/// The first `model name` line of a `/proc/cpuinfo`.
fn model_name(cpuinfo: &str) -> Option<String> {
    cpuinfo.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        (key.trim() == "model name").then(|| value.trim().to_string())
    })
}

/// The CPU features that change how floats may be computed (vector
/// widths, fused multiply-add), detected at run time.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
fn float_features() -> Vec<&'static str> {
    let mut found = Vec::new();
    if is_x86_feature_detected!("sse2") {
        found.push("sse2");
    }
    if is_x86_feature_detected!("sse4.1") {
        found.push("sse4.1");
    }
    if is_x86_feature_detected!("avx") {
        found.push("avx");
    }
    if is_x86_feature_detected!("avx2") {
        found.push("avx2");
    }
    if is_x86_feature_detected!("fma") {
        found.push("fma");
    }
    found
}

/// See the x86 version.
#[cfg(target_arch = "aarch64")]
fn float_features() -> Vec<&'static str> {
    let mut found = Vec::new();
    if std::arch::is_aarch64_feature_detected!("neon") {
        found.push("neon");
    }
    if std::arch::is_aarch64_feature_detected!("fp") {
        found.push("fp");
    }
    found
}

/// No run-time detection on other architectures.
#[cfg(not(any(target_arch = "x86", target_arch = "x86_64", target_arch = "aarch64")))]
fn float_features() -> Vec<&'static str> {
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_name_is_the_first_one_in_cpuinfo() {
        let info = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\n\n\
                    processor\t: 1\nmodel name\t: Other\n";
        assert_eq!(model_name(info).as_deref(), Some("AMD EPYC 7B13"));
        assert_eq!(model_name("processor\t: 0\nFeatures\t: fp asimd\n"), None);
    }

    #[test]
    fn the_build_facts_come_from_the_build_script() {
        let platform = current();
        assert!(!platform.target.is_empty());
        assert!(platform.rustc.starts_with("rustc "), "{}", platform.rustc);
        assert!(["debug", "release"].contains(&platform.profile.as_str()));
        assert_eq!(platform.build, env!("CARGO_PKG_VERSION"));
    }
}
