//! The browser and build, as the Hello tells the server
//! ([`Platform`]): the page gathers what the browser says of itself
//! ([`Browser`]: `navigator.userAgentData` and its high-entropy values
//! where there are any, else the user agent string), and this turns it
//! into the fields a native client fills from its build and `/proc`.
//!
//! The target reads `wasm32-unknown-unknown/{browser}-{major}/{os}/{arch}`
//! (`wasm32-unknown-unknown/chromium-156/linux/x86_64`): the compiled code
//! is the same everywhere, the engine that runs it is not.

use lockstep_protocol::Platform;
use serde::Deserialize;

/// The target triple the page is compiled for.
const TRIPLE: &str = "wasm32-unknown-unknown";

/// What the page learned of the browser; every field may be empty.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Browser {
    /// `navigator.userAgent`.
    pub user_agent: String,
    /// `userAgentData.fullVersionList` (or `brands`): brand and version.
    pub brands: Vec<Brand>,
    /// `userAgentData.platform` ("Linux", "Windows", "macOS").
    pub platform: String,
    /// `architecture` ("x86", "arm").
    pub architecture: String,
    /// `bitness` ("64").
    pub bitness: String,
}

/// One brand of `userAgentData`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Brand {
    /// "Chromium", "Google Chrome", "Not)A;Brand".
    pub brand: String,
    /// "156.0.8078.108" or "156".
    pub version: String,
}

/// The Hello's platform of this page in `browser`.
pub fn platform(browser: &Browser) -> Platform {
    let (name, version) = browser_name(browser);
    let os = os_name(browser);
    let arch = arch_name(browser);
    // WebKitGTK's releases are 2.N: its minor is what tells them apart.
    let parts = if name == WEBKITGTK { 2 } else { 1 };
    let major = version.split('.').take(parts).collect::<Vec<_>>().join(".");
    let major = if major.is_empty() { "unknown" } else { &major };
    let part = |text: &str| {
        let cleaned: String = text
            .to_lowercase()
            .chars()
            .map(|c| match c {
                'a'..='z' | '0'..='9' | '.' | '_' | '-' => c,
                _ => '-',
            })
            .collect();
        if cleaned.is_empty() {
            "unknown".to_string()
        } else {
            cleaned
        }
    };
    let bits = match browser.bitness.as_str() {
        "" => String::new(),
        bits => format!(" {bits}-bit"),
    };
    let machine = match browser.architecture.as_str() {
        "" => arch.clone(),
        architecture => format!("{architecture}{bits}"),
    };
    Platform {
        target: format!(
            "{TRIPLE}/{}-{}/{}/{}",
            part(&name),
            part(major),
            part(&os),
            part(&arch)
        ),
        os: os.to_lowercase(),
        cpu: format!(
            "{name} {} on {} {machine}",
            if version.is_empty() {
                "unknown"
            } else {
                &version
            },
            if browser.platform.is_empty() {
                &os
            } else {
                &browser.platform
            }
        ),
        features: vec!["wasm".into()],
        rustc: env!("LOCKSTEP_RUSTC_VERSION").into(),
        profile: profile().into(),
        build: env!("CARGO_PKG_VERSION").into(),
    }
}

/// `debug` or `release`, as the build script saw it.
fn profile() -> &'static str {
    env!("LOCKSTEP_PROFILE")
}

/// What the platform calls WebKitGTK, the engine of GNOME's browsers and
/// of WebKit's own MiniBrowser.
const WEBKITGTK: &str = "WebKitGTK";

/// The browser's name and version: the most specific real brand of
/// `userAgentData` (a vendor's over plain Chromium, never the made-up
/// "Not A Brand" entry), else what the user agent string says of its
/// engine ([`named_by_user_agent`]).
fn browser_name(browser: &Browser) -> (String, String) {
    let real = |b: &&Brand| {
        let lower = b.brand.to_lowercase();
        !lower.contains("not") || !lower.contains("brand")
    };
    let brands: Vec<&Brand> = browser.brands.iter().filter(real).collect();
    let chosen = brands
        .iter()
        .find(|b| b.brand != "Chromium")
        .or_else(|| brands.first());
    match chosen {
        Some(brand) => (brand.brand.clone(), brand.version.clone()),
        None => named_by_user_agent(&browser.user_agent),
    }
}

/// The name and version a user agent string gives. Every browser on an
/// iPhone or iPad runs Apple's WebKit whatever its name (`CriOS`,
/// `FxiOS`), so it is Mobile Safari of that iOS there; elsewhere the most
/// specific token wins (Edge and Opera also say Chrome, Chrome also says
/// Safari). `AppleWebKit` without Chrome is Safari only on a Mac: on any
/// other system it is WebKitGTK (or WPE), whose `Version/60.5` is a
/// constant of the library, not its version; its version is read from a
/// `WebKitGTK/2.50.6` token where the embedder adds one (the test
/// drivers do), and is unknown otherwise.
fn named_by_user_agent(ua: &str) -> (String, String) {
    let version_after = |token: &str| -> Option<String> {
        let at = ua.find(token)? + token.len();
        Some(
            ua[at..]
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect(),
        )
    };
    if ua.contains("iPhone") || ua.contains("iPad") || ua.contains("iPod") {
        // "CPU iPhone OS 17_4 like Mac OS X": the OS's WebKit.
        let os = ua.find(" OS ").map(|at| {
            ua[at + 4..]
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '_')
                .map(|c| if c == '_' { '.' } else { c })
                .collect::<String>()
        });
        let version = version_after("Version/").or(os).unwrap_or_default();
        return ("Mobile Safari".into(), version);
    }
    for (token, name) in [
        ("Edg/", "Edge"),
        ("OPR/", "Opera"),
        ("Firefox/", "Firefox"),
        ("HeadlessChrome/", "Chrome"),
        ("Chrome/", "Chrome"),
        ("Chromium/", "Chromium"),
    ] {
        if let Some(version) = version_after(token) {
            return (name.into(), version);
        }
    }
    if ua.contains("AppleWebKit/") {
        if ua.contains("Mac OS X") || ua.contains("Macintosh") {
            return (
                "Safari".into(),
                version_after("Version/").unwrap_or_default(),
            );
        }
        return (
            WEBKITGTK.into(),
            version_after("WebKitGTK/").unwrap_or_default(),
        );
    }
    ("unknown".into(), String::new())
}

/// The operating system, lower case.
fn os_name(browser: &Browser) -> String {
    let named = match browser.platform.to_lowercase().as_str() {
        "" => None,
        "macos" | "mac os x" => Some("macos".to_string()),
        "chrome os" | "chromeos" => Some("chromeos".to_string()),
        other => Some(other.to_string()),
    };
    named.unwrap_or_else(|| {
        let ua = &browser.user_agent;
        let os = if ua.contains("Windows") {
            "windows"
        } else if ua.contains("iPhone") || ua.contains("iPad") {
            "ios"
        } else if ua.contains("Mac OS X") {
            "macos"
        } else if ua.contains("Android") {
            "android"
        } else if ua.contains("CrOS") {
            "chromeos"
        } else if ua.contains("Linux") {
            "linux"
        } else {
            "unknown"
        };
        os.to_string()
    })
}

/// The CPU architecture in Rust's words (`x86_64`, `aarch64`).
fn arch_name(browser: &Browser) -> String {
    let arch = match (browser.architecture.as_str(), browser.bitness.as_str()) {
        ("x86", "64") => Some("x86_64"),
        ("x86", "32") => Some("x86"),
        ("arm", "64") => Some("aarch64"),
        ("arm", "32") => Some("arm"),
        _ => None,
    };
    let ua = &browser.user_agent;
    let arch = arch.unwrap_or(
        if ua.contains("x86_64") || ua.contains("Win64") || ua.contains("x64") {
            "x86_64"
        } else if ua.contains("aarch64") || ua.contains("arm64") {
            "aarch64"
        } else if ua.contains("iPhone") || ua.contains("iPad") {
            // Every iOS that runs WebAssembly runs on 64-bit ARM.
            "aarch64"
        } else if ua.contains("armv7") || ua.contains("armv8l") {
            "arm"
        } else if ua.contains("i686") || ua.contains("i386") {
            "x86"
        } else {
            "unknown"
        },
    );
    arch.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brand(brand: &str, version: &str) -> Brand {
        Brand {
            brand: brand.into(),
            version: version.into(),
        }
    }

    #[test]
    fn chromium_with_high_entropy_values_names_itself_exactly() {
        let browser = Browser {
            user_agent: "Mozilla/5.0 (X11; Linux x86_64) HeadlessChrome/156.0.0.0".into(),
            brands: vec![
                brand("Not)A;Brand", "8.0.0.0"),
                brand("Chromium", "156.0.8078.108"),
            ],
            platform: "Linux".into(),
            architecture: "x86".into(),
            bitness: "64".into(),
        };
        let platform = platform(&browser);
        assert_eq!(
            platform.target,
            "wasm32-unknown-unknown/chromium-156/linux/x86_64"
        );
        assert_eq!(platform.os, "linux");
        assert_eq!(platform.cpu, "Chromium 156.0.8078.108 on Linux x86 64-bit");
        assert_eq!(platform.features, ["wasm"]);
        assert!(platform.rustc.starts_with("rustc "), "{}", platform.rustc);
        assert_eq!(platform.build, env!("CARGO_PKG_VERSION"));
    }

    #[test]
    fn a_vendor_brand_wins_over_chromium_and_odd_characters_become_dashes() {
        let browser = Browser {
            brands: vec![
                brand("Chromium", "150"),
                brand("Google Chrome", "150"),
                brand("Not-A.Brand", "99"),
            ],
            platform: "macOS".into(),
            architecture: "arm".into(),
            bitness: "64".into(),
            ..Browser::default()
        };
        assert_eq!(
            platform(&browser).target,
            "wasm32-unknown-unknown/google-chrome-150/macos/aarch64"
        );
    }

    /// The target of a page whose browser says only `user_agent`.
    fn target_of(user_agent: &str) -> String {
        platform(&Browser {
            user_agent: user_agent.into(),
            ..Browser::default()
        })
        .target
        .trim_start_matches("wasm32-unknown-unknown/")
        .to_string()
    }

    /// Real user agents, desktop and mobile, of every engine.
    #[test]
    fn each_engine_is_named_by_what_it_is_not_what_it_claims() {
        for (user_agent, target) in [
            (
                "Mozilla/5.0 (X11; Linux x86_64; rv:153.0) Gecko/20100101 Firefox/153.0",
                "firefox-153/linux/x86_64",
            ),
            (
                "Mozilla/5.0 (Android 14; Mobile; rv:153.0) Gecko/153.0 Firefox/153.0",
                "firefox-153/android/unknown",
            ),
            (
                "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0",
                "firefox-128/windows/x86_64",
            ),
            // WebKitGTK's MiniBrowser as Debian ships it: Version/60.5 is
            // a constant of the library, not a Safari.
            (
                "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/605.1.15 (KHTML, like Gecko) \
                 Version/60.5 Safari/605.1.15",
                "webkitgtk-unknown/linux/x86_64",
            ),
            // The same with the version the drivers add.
            (
                "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/605.1.15 (KHTML, like Gecko) \
                 Version/60.5 Safari/605.1.15 WebKitGTK/2.50.6",
                "webkitgtk-2.50/linux/x86_64",
            ),
            (
                "Mozilla/5.0 (X11; Linux aarch64) AppleWebKit/605.1.15 (KHTML, like Gecko) \
                 Version/60.5 Safari/605.1.15 WebKitGTK/2.48.1",
                "webkitgtk-2.48/linux/aarch64",
            ),
            (
                "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 \
                 (KHTML, like Gecko) Version/18.1 Safari/605.1.15",
                "safari-18/macos/unknown",
            ),
            (
                "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 \
                 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
                "mobile-safari-18/ios/aarch64",
            ),
            (
                "Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 \
                 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1",
                "mobile-safari-17/ios/aarch64",
            ),
            // Chrome and Firefox on an iPhone run Apple's WebKit, of its iOS.
            (
                "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 \
                 (KHTML, like Gecko) CriOS/123.0.6312.52 Mobile/15E148 Safari/604.1",
                "mobile-safari-17/ios/aarch64",
            ),
            (
                "Mozilla/5.0 (iPhone; CPU iPhone OS 16_7 like Mac OS X) AppleWebKit/605.1.15 \
                 (KHTML, like Gecko) FxiOS/124.0 Mobile/15E148 Safari/605.1.15",
                "mobile-safari-16/ios/aarch64",
            ),
            (
                "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) \
                 Chrome/131.0.0.0 Mobile Safari/537.36",
                "chrome-131/android/unknown",
            ),
            (
                "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) \
                 Chrome/131.0.0.0 Safari/537.36 Edg/131.0.2903.86",
                "edge-131/windows/x86_64",
            ),
            (
                "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) \
                 HeadlessChrome/156.0.0.0 Safari/537.36",
                "chrome-156/linux/x86_64",
            ),
        ] {
            assert_eq!(target_of(user_agent), target, "{user_agent}");
        }
    }

    #[test]
    fn a_webkitgtk_page_says_its_library_version_or_that_it_is_unknown() {
        let said = |user_agent: &str| {
            platform(&Browser {
                user_agent: user_agent.into(),
                ..Browser::default()
            })
            .cpu
        };
        assert_eq!(
            said("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/60.5 Safari/605.1.15 WebKitGTK/2.50.6"),
            "WebKitGTK 2.50.6 on linux x86_64"
        );
        assert_eq!(
            said("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/60.5 Safari/605.1.15"),
            "WebKitGTK unknown on linux x86_64"
        );
    }

    #[test]
    fn without_user_agent_data_the_user_agent_string_is_read() {
        let firefox = Browser {
            user_agent: "Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0"
                .into(),
            ..Browser::default()
        };
        let platform = platform(&firefox);
        assert_eq!(
            platform.target,
            "wasm32-unknown-unknown/firefox-140/linux/x86_64"
        );
        assert_eq!(platform.cpu, "Firefox 140.0 on linux x86_64");
        assert_eq!(
            super::platform(&Browser::default()).target,
            "wasm32-unknown-unknown/unknown-unknown/unknown/unknown"
        );
    }
}
