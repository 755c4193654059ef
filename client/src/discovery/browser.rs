//! The server browser's state: which row is chosen, what is typed in the
//! address field, and what a key, a click or a button asks for. No SDL
//! here (the window only draws it and turns its events into [`Press`]es),
//! so every rule is tested without a display.
//!
//! The rows are the servers found on the LAN, then one more: the address
//! field, for a server that is not advertised. Up and Down move between
//! them, typing goes to the field, Enter (or a click, or the controller's
//! A) joins the chosen row, unless its fingerprint changed since it was
//! trusted (it is refused, as `--join` refuses it) or it speaks another
//! protocol version (it would refuse us).

use std::net::SocketAddr;

use lockstep_protocol::PROTOCOL_VERSION;

use crate::discovery::Found;
use crate::discovery::Standing;

/// Longest address that can be typed: a host name and a port.
const MAX_ADDRESS_CHARS: usize = 80;

/// One server as the browser lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// What the LAN says of it.
    pub found: Found,
    /// How it stands with the known-servers file.
    pub standing: Standing,
}

/// What the player did, in the browser's terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Press {
    /// Up arrow, D-pad up.
    Up,
    /// Down arrow, D-pad down.
    Down,
    /// Enter, the controller's A.
    Enter,
    /// Backspace.
    Backspace,
    /// Text typed.
    Text(String),
    /// A click on row `n` (the address field is the row after the
    /// servers).
    Click(usize),
}

/// Where the player chose to go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// A server on the LAN.
    Server(Found),
    /// An address typed in the field.
    Address(String),
}

/// The browser's state.
#[derive(Debug, Default)]
pub struct Browser {
    /// The chosen row: a server's index, or the server count for the
    /// address field.
    selected: usize,
    /// The name and address of the chosen server, so the choice stays on
    /// it when rows come and go above it (two servers may share a name).
    selected_server: Option<(String, SocketAddr)>,
    /// What is typed in the address field.
    pub address: String,
    /// Why the last Enter did not join, shown under the list.
    pub message: Option<String>,
}

impl Browser {
    /// The chosen row among `rows` (and the address field after them).
    pub fn selected(&self, rows: &[Row]) -> usize {
        if let Some((name, addr)) = &self.selected_server {
            let same = |r: &Row| r.found.name() == name.as_str() && r.found.addr() == *addr;
            if let Some(i) = rows.iter().position(same) {
                return i;
            }
        }
        self.selected.min(rows.len())
    }

    /// Whether the address field is chosen.
    pub fn on_address(&self, rows: &[Row]) -> bool {
        self.selected(rows) == rows.len()
    }

    fn select(&mut self, i: usize, rows: &[Row]) {
        self.selected = i.min(rows.len());
        self.selected_server = rows
            .get(self.selected)
            .map(|r| (r.found.name().to_string(), r.found.addr()));
    }

    /// Takes one press with `rows` on screen; a choice ends the browsing.
    pub fn press(&mut self, press: Press, rows: &[Row]) -> Option<Choice> {
        let at = self.selected(rows);
        match press {
            Press::Up => self.select(at.saturating_sub(1), rows),
            Press::Down => self.select(at + 1, rows),
            Press::Backspace => {
                self.address.pop();
            }
            Press::Text(text) => {
                self.select(rows.len(), rows);
                for c in text.chars().filter(|c| !c.is_control()) {
                    if self.address.chars().count() < MAX_ADDRESS_CHARS {
                        self.address.push(c);
                    }
                }
            }
            Press::Click(i) => {
                self.select(i, rows);
                if i < rows.len() {
                    return self.choose(rows);
                }
            }
            Press::Enter => return self.choose(rows),
        }
        None
    }

    /// Joins the chosen row, or says why not.
    fn choose(&mut self, rows: &[Row]) -> Option<Choice> {
        let Some(row) = rows.get(self.selected(rows)) else {
            let address = self.address.trim();
            if address.is_empty() {
                self.message = Some("type the server's address, HOST:PORT, then Enter".into());
                return None;
            }
            return Some(Choice::Address(address.to_string()));
        };
        let found = &row.found;
        if let Standing::Changed { under, .. } = &row.standing {
            self.message = Some(format!(
                "refusing {}: its fingerprint changed (another certificate is on file for {under})",
                found.name()
            ));
            return None;
        }
        let version = found.announcement.protocol_version;
        if version != PROTOCOL_VERSION {
            self.message = Some(format!(
                "{} speaks protocol version {version}, this client {PROTOCOL_VERSION}; use \
                 matching builds",
                found.name()
            ));
            return None;
        }
        Some(Choice::Server(found.clone()))
    }
}

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;
    use std::time::Duration;

    use lockstep_protocol::Announcement;

    use super::*;

    fn row(name: &str, standing: Standing) -> Row {
        Row {
            found: Found {
                announcement: Announcement {
                    name: name.into(),
                    host: Ipv4Addr::new(10, 77, 0, 1).into(),
                    port: 7777,
                    players: 1,
                    needed: 2,
                    playing: false,
                    tick_rate: 60,
                    spec: lockstep_protocol::GameSpec::balls(24),
                    input_delay: 3,
                    password: false,
                    protocol_version: PROTOCOL_VERSION,
                    fingerprint: [1; 32],
                    echo: None,
                },
                ping: Some(Duration::from_millis(1)),
                last_heard: Duration::ZERO,
            },
            standing,
        }
    }

    #[test]
    fn arrows_move_between_the_servers_and_the_address_field() {
        let rows = [row("a", Standing::New), row("b", Standing::Known)];
        let mut browser = Browser::default();
        assert_eq!(browser.selected(&rows), 0);
        browser.press(Press::Up, &rows);
        assert_eq!(browser.selected(&rows), 0);
        browser.press(Press::Down, &rows);
        browser.press(Press::Down, &rows);
        assert!(browser.on_address(&rows));
        browser.press(Press::Down, &rows);
        assert!(browser.on_address(&rows));
        browser.press(Press::Up, &rows);
        assert_eq!(
            browser.press(Press::Enter, &rows),
            Some(Choice::Server(rows[1].found.clone()))
        );
    }

    #[test]
    fn the_choice_follows_its_server_when_rows_appear_above_it() {
        let before = [row("m", Standing::New)];
        let mut browser = Browser::default();
        browser.press(Press::Click(0), &before);
        let after = [row("a", Standing::New), row("m", Standing::New)];
        assert_eq!(browser.selected(&after), 1);
    }

    #[test]
    fn the_second_of_two_servers_sharing_a_name_can_be_chosen() {
        let mut twin = row("a", Standing::New);
        twin.found.announcement.port = 7778;
        let rows = [row("a", Standing::New), twin];
        let mut browser = Browser::default();
        browser.press(Press::Down, &rows);
        assert_eq!(browser.selected(&rows), 1);
        assert_eq!(
            browser.press(Press::Enter, &rows),
            Some(Choice::Server(rows[1].found.clone()))
        );
    }

    #[test]
    fn a_click_on_a_row_joins_it() {
        let rows = [row("a", Standing::New), row("b", Standing::New)];
        let mut browser = Browser::default();
        assert_eq!(
            browser.press(Press::Click(1), &rows),
            Some(Choice::Server(rows[1].found.clone()))
        );
    }

    #[test]
    fn a_typed_address_is_joined_and_an_empty_one_explained() {
        let rows = [row("a", Standing::New)];
        let mut browser = Browser::default();
        browser.press(Press::Text("10.0.0.5:77".into()), &rows);
        assert!(browser.on_address(&rows));
        browser.press(Press::Text("78".into()), &rows);
        browser.press(Press::Backspace, &rows);
        assert_eq!(
            browser.press(Press::Enter, &rows),
            Some(Choice::Address("10.0.0.5:777".into()))
        );
        let mut empty = Browser::default();
        assert_eq!(empty.press(Press::Enter, &[]), None);
        assert!(empty.message.is_some());
    }

    #[test]
    fn a_server_whose_fingerprint_changed_is_refused() {
        let changed = Standing::Changed {
            expected: "aa".into(),
            under: "@a".into(),
        };
        let rows = [row("a", changed)];
        let mut browser = Browser::default();
        assert_eq!(browser.press(Press::Enter, &rows), None);
        let message = browser.message.clone().unwrap();
        assert!(message.contains("fingerprint changed"), "{message}");
    }

    #[test]
    fn a_server_of_another_protocol_version_is_explained_not_joined() {
        let mut old = row("old", Standing::New);
        old.found.announcement.protocol_version = PROTOCOL_VERSION - 1;
        let mut browser = Browser::default();
        assert_eq!(browser.press(Press::Enter, &[old]), None);
        assert!(browser.message.unwrap().contains("protocol version"));
    }
}
