//! The run's other machines: beside the six native bots, a browser peer
//! (the server's own page in a headless Chromium, its simulation compiled
//! to wasm) and an aarch64 bot (the client built for aarch64, under
//! qemu-user), where they exist. They play the whole game as bots do, and
//! no fault is aimed at them; they live through every server restart and
//! every other player's fault, must reconnect after each restart and end
//! on everyone's hash, and the server's verdict names their machines.
//!
//! This module is the rules (names, seeds, the page's address, how much
//! longer a run with them may take); [`crate::io::peer`] starts them.

use std::fmt;

/// One of the other machines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Peer {
    /// The page in a headless Chromium.
    Browser,
    /// The aarch64 client under qemu-user.
    Aarch64,
}

impl Peer {
    /// Both, in the order they join.
    pub const ALL: [Peer; 2] = [Peer::Browser, Peer::Aarch64];

    /// Its player name in the game, and its name in the run's history.
    pub fn name(self) -> &'static str {
        match self {
            Peer::Browser => "web",
            Peer::Aarch64 => "arm",
        }
    }

    /// What the summary line calls it.
    pub fn kind(self) -> &'static str {
        match self {
            Peer::Browser => "browser",
            Peer::Aarch64 => "aarch64",
        }
    }

    /// Its bot's seed: after the six bots' (`seed * 16 + 1..=6`).
    pub fn bot_seed(self, seed: u64) -> u64 {
        let slot = match self {
            Peer::Browser => 7,
            Peer::Aarch64 => 8,
        };
        seed.wrapping_mul(16).wrapping_add(slot)
    }

    /// The page's query for the browser peer: the native client's
    /// `--name`, `--bot` and `--ticks` (a bot is ready at once).
    pub fn page_query(seed: u64, ticks: u32) -> String {
        let peer = Peer::Browser;
        format!(
            "name={}&bot={}&ticks={ticks}&ready=1",
            peer.name(),
            peer.bot_seed(seed)
        )
    }
}

impl fmt::Display for Peer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How many times the game time left a run may take before it is judged
/// stuck: three with native processes only; six with a browser or qemu
/// beside them, which share the machine's cores with them and run the
/// game several times slower than a native bot.
pub fn patience_factor(peers: &[Peer]) -> u64 {
    if peers.is_empty() {
        3
    } else {
        6
    }
}

/// The summary's `peers=` field, in the order given: `browser,aarch64`;
/// `None` without peers (the summary then has no such field).
pub fn summary_field(peers: &[Peer]) -> Option<String> {
    if peers.is_empty() {
        return None;
    }
    let kinds: Vec<&str> = peers.iter().map(|p| p.kind()).collect();
    Some(format!("peers={}", kinds.join(",")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peers_have_their_own_names_and_seeds_after_the_six_bots() {
        assert_eq!(Peer::Browser.name(), "web");
        assert_eq!(Peer::Aarch64.to_string(), "arm");
        // The bots are seed * 16 + 1..=6.
        assert_eq!(Peer::Browser.bot_seed(7), 7 * 16 + 7);
        assert_eq!(Peer::Aarch64.bot_seed(7), 7 * 16 + 8);
        assert_eq!(
            Peer::Aarch64.bot_seed(u64::MAX),
            u64::MAX.wrapping_mul(16) + 8
        );
    }

    #[test]
    fn the_page_is_asked_to_play_the_browser_bot_to_the_games_end() {
        assert_eq!(
            Peer::page_query(3, 7200),
            "name=web&bot=55&ticks=7200&ready=1"
        );
    }

    #[test]
    fn a_run_with_peers_waits_longer_and_says_which_it_had() {
        assert_eq!(patience_factor(&[]), 3);
        assert_eq!(patience_factor(&[Peer::Aarch64]), 6);
        assert_eq!(summary_field(&[]), None);
        assert_eq!(
            summary_field(&Peer::ALL).as_deref(),
            Some("peers=browser,aarch64")
        );
        assert_eq!(
            summary_field(&[Peer::Aarch64]).as_deref(),
            Some("peers=aarch64")
        );
    }
}
