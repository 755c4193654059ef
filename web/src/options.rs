//! What the page's address asks of the peer: the URL parameters tests and
//! bots use, as the native client's command line gives them
//! (`--name`, `--bot`, `--ticks`, `--ready`, `--inject-desync-at`,
//! `--password`, `--spectate`).

use lockstep_protocol::Tick;

/// The peer's options, from the page's query string.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WebOptions {
    /// `name=`: the player's name; `None` lets the page choose one.
    pub name: Option<String>,
    /// `bot=SEED`: play the game's seeded bot instead of a person, exactly
    /// like the native `--bot SEED` (a bot is ready at once).
    pub bot: Option<u64>,
    /// `ticks=N`: leave once the world reaches this tick, printing the
    /// `stats` and `final` lines.
    pub ticks: Option<u32>,
    /// `ready=1`: be ready for the game at once.
    pub ready: bool,
    /// `desync=TICK`: nudge the world by one ulp in every step from this
    /// tick on, to test the desync check (`--inject-desync-at`).
    pub desync: Option<Tick>,
    /// `password=`: the session password, if the server has one.
    pub password: Option<String>,
    /// `spectate=1`: watch without playing.
    pub spectate: bool,
}

impl WebOptions {
    /// The options of `query` (`location.search`, with or without its
    /// `?`). Unknown parameters and values that do not parse are ignored:
    /// a typo in an address must not stop the page.
    pub fn parse(query: &str) -> WebOptions {
        let mut options = WebOptions::default();
        for pair in query.trim_start_matches('?').split('&') {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let value = decode_component(value);
            match key {
                "name" if !value.trim().is_empty() => options.name = Some(value.trim().into()),
                "bot" => options.bot = value.parse().ok(),
                "ticks" => options.ticks = value.parse().ok(),
                "ready" => options.ready = flag(&value),
                "desync" => options.desync = value.parse().ok().map(Tick),
                "password" if !value.is_empty() => options.password = Some(value),
                "spectate" => options.spectate = flag(&value),
                _ => {}
            }
        }
        options
    }

    /// Whether the player is ready as it joins: a bot always is.
    pub fn joins_ready(&self) -> bool {
        self.ready || self.bot.is_some()
    }
}

/// `1`, `true`, `yes` or nothing at all (`?ready`) switch a flag on.
fn flag(value: &str) -> bool {
    matches!(value, "" | "1" | "true" | "yes" | "on")
}

/// Undoes the URL encoding of one query component: `+` is a space, `%XX`
/// a byte; text that is not UTF-8 afterwards keeps replacement marks.
fn decode_component(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = text
                    .get(i + 1..i + 3)
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                match hex {
                    Some(byte) => {
                        out.push(byte);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            byte => out.push(byte),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bot_page_reads_its_parameters_like_the_native_flags() {
        let options = WebOptions::parse("?bot=3&ticks=600&ready=1&name=web%20one&desync=300");
        assert_eq!(
            options,
            WebOptions {
                name: Some("web one".into()),
                bot: Some(3),
                ticks: Some(600),
                ready: true,
                desync: Some(Tick(300)),
                password: None,
                spectate: false,
            }
        );
        assert!(options.joins_ready());
    }

    #[test]
    fn bad_or_unknown_parameters_are_ignored() {
        let options = WebOptions::parse("bot=x&ticks=-1&zoom=2&name=&spectate&password=a+b%zz");
        assert_eq!(options.bot, None);
        assert_eq!(options.ticks, None);
        assert_eq!(options.name, None);
        assert!(options.spectate);
        assert_eq!(options.password.as_deref(), Some("a b%zz"));
        assert!(!options.joins_ready());
        assert_eq!(WebOptions::parse(""), WebOptions::default());
    }
}
