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
    let major = version.split('.').next().unwrap_or_default();
    let major = if major.is_empty() { "unknown" } else { major };
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

/// The browser's name and version: the most specific real brand of
/// `userAgentData` (a vendor's over plain Chromium, never the made-up
/// "Not A Brand" entry), else what the user agent string says.
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
    if let Some(brand) = chosen {
        return (brand.brand.clone(), brand.version.clone());
    }
    let ua = &browser.user_agent;
    // Most specific first: Edge and Opera also say Chrome, and Chrome
    // also says Safari.
    for (token, name) in [
        ("Edg/", "Edge"),
        ("OPR/", "Opera"),
        ("Firefox/", "Firefox"),
        ("HeadlessChrome/", "Chrome"),
        ("Chrome/", "Chrome"),
        ("Version/", "Safari"),
    ] {
        if let Some(at) = ua.find(token) {
            let version: String = ua[at + token.len()..]
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            return (name.into(), version);
        }
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
