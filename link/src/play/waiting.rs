//! The lag indicator in words: whom a stalled game waits for, from the
//! server's last word on the players.

use std::time::Duration;

use lockstep_protocol::{PeerStatus, PlayerId};

/// How long the game must wait before the lag line names whom it waits for
/// (shorter waits are ordinary jitter).
pub(super) const SHOWN_AFTER: Duration = Duration::from_millis(500);

/// What the game waits for, from the server's last word on the players
/// (`status`): the players it waits for, each with its link, named by
/// `name`; this machine itself (`me`) as our own inputs, late at the
/// server; the server when it names nobody.
pub(super) fn line(
    status: &PeerStatus,
    me: Option<PlayerId>,
    name: impl Fn(PlayerId) -> String,
) -> String {
    let waited: Vec<String> = status
        .peers
        .iter()
        .filter(|p| p.waited_for)
        .map(|p| {
            let who = if Some(p.player) == me {
                "our own inputs".to_string()
            } else {
                name(p.player)
            };
            format!(
                "{who} (ping {} ms, {} ticks behind, heard {} ms ago)",
                p.ping_ms, p.ticks_behind, p.silent_ms
            )
        })
        .collect();
    if waited.is_empty() {
        "waiting for the server".into()
    } else {
        format!("waiting for {}", waited.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockstep_protocol::{Peer, Tick};

    #[test]
    fn the_wait_names_the_players_waited_for_and_this_machine_as_its_own_inputs() {
        let peer = |id: u8, waited_for: bool| Peer {
            player: PlayerId(id),
            ping_ms: 12 + u16::from(id),
            ticks_behind: u16::from(id),
            silent_ms: 100 * u32::from(id),
            waited_for,
            slack: None,
        };
        let status = PeerStatus {
            next_tick: Tick(40),
            peers: vec![peer(0, false), peer(1, true), peer(2, true)],
        };
        let name = |p: PlayerId| format!("bot{}", p.0);
        assert_eq!(
            line(&status, Some(PlayerId(0)), name),
            "waiting for bot1 (ping 13 ms, 1 ticks behind, heard 100 ms ago), \
             bot2 (ping 14 ms, 2 ticks behind, heard 200 ms ago)"
        );
        assert_eq!(
            line(&status, Some(PlayerId(2)), name),
            "waiting for bot1 (ping 13 ms, 1 ticks behind, heard 100 ms ago), \
             our own inputs (ping 14 ms, 2 ticks behind, heard 200 ms ago)"
        );
        let nobody = PeerStatus {
            peers: vec![peer(1, false)],
            ..status
        };
        assert_eq!(line(&nobody, None, name), "waiting for the server");
    }
}
