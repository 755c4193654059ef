//! A game this server was not built with, on a [`Harness`]: the server
//! knows only its name and the settings the host gave, and the players'
//! clients check what it cannot. Their self-tests must match the hash
//! the game pins and each other's (a strict majority decides, never one
//! player against another), and a client whose game refuses the settings
//! leaves with a reason the host and the lobby see.

use lockstep_protocol::{
    GameSpec, Refusal, SelfTest, ServerMessage, Settings, Tick, MAX_REASON_CHARS,
};

use super::harness::{conn, Harness, Out};
use super::Event;
use crate::{Config, ServerEvent};

/// What every honest machine computes for the game's self-test.
const HASH: u64 = 0x0123_4567_89ab_cdef;

/// Another machine's hash.
const ODD: u64 = HASH ^ 1;

fn flock() -> GameSpec {
    GameSpec {
        name: "flock".into(),
        settings: Settings::Given(vec![("boids".into(), "64".into())]),
    }
}

/// A server built without the flock, hosting it for `players` players.
fn hosting(players: u8) -> Harness {
    Harness::new(Config {
        players,
        replay_dir: None,
        ..Config::without_game(flock())
    })
}

fn self_test(hash: u64, pinned: Option<u64>) -> Vec<SelfTest> {
    vec![SelfTest {
        game: "flock".into(),
        hash,
        pinned,
    }]
}

/// The reason of the Refused message `id` was sent after it joined.
fn told_to_go(out: &Out, id: usize) -> String {
    let reasons: Vec<String> = out
        .messages(id)
        .into_iter()
        .filter_map(|message| match message {
            ServerMessage::Refused(Refusal { reason }) => Some(reason),
            _ => None,
        })
        .collect();
    assert!(out.released(id), "{id} is let go");
    match &reasons[..] {
        [reason] => reason.clone(),
        other => panic!("expected one refusal, got {other:?}"),
    }
}

#[test]
fn a_machine_off_the_games_pin_is_refused_naming_both_hashes() {
    let mut h = hosting(2);
    let out = h.join_with_self_tests(1, "ann", self_test(ODD, Some(HASH)));
    assert_eq!(
        out.reply(1),
        Some(Err(Refusal {
            reason: format!(
                "this machine computes flock's self-test as {ODD:016x}, but the game pins \
                 {HASH:016x}; it would desync the game"
            )
        }))
    );
    assert!(out.released(1));
    // On the pin, or a game that pins nothing: in.
    let pinned = h.join_with_self_tests(2, "bob", self_test(HASH, Some(HASH)));
    assert_eq!(pinned.reply(2), Some(Ok(())));
    let unpinned = h.join_with_self_tests(3, "carl", self_test(HASH, None));
    assert_eq!(unpinned.reply(3), Some(Ok(())));
}

#[test]
fn a_client_without_the_game_is_told_in_one_line() {
    let mut h = hosting(2);
    let out = h.join(1, "ann");
    assert_eq!(
        out.reply(1),
        Some(Err(Refusal {
            reason: "this client cannot play flock, the game this server hosts".into()
        }))
    );
}

#[test]
fn players_who_agree_start_with_the_settings_as_the_host_gave_them() {
    let mut h = hosting(2);
    h.join_with_self_tests(1, "ann", self_test(HASH, None));
    let out = h.join_with_self_tests(2, "bob", self_test(HASH, None));
    let starts = out.starts(1);
    assert_eq!(starts.len(), 1, "{:?}", out.every_message(1));
    assert_eq!(starts[0].spec, flock());
    assert_eq!(out.starts(2).len(), 1);
}

#[test]
fn a_minority_is_refused_at_the_start_and_the_majority_plays() {
    let mut h = hosting(3);
    h.join_with_self_tests(1, "ann", self_test(HASH, None));
    h.join_with_self_tests(2, "bob", self_test(HASH, None));
    let out = h.join_with_self_tests(3, "carl", self_test(ODD, None));
    assert_eq!(
        out.reply(3),
        Some(Ok(())),
        "admitted: nothing to compare yet"
    );
    assert_eq!(
        told_to_go(&out, 3),
        format!(
            "this machine computes flock's self-test as {ODD:016x}, the other players' \
             machines as {HASH:016x}; it would desync the game"
        )
    );
    assert!(out.starts(1).is_empty(), "two of the three needed are left");
    let out = h.join_with_self_tests(4, "dave", self_test(HASH, None));
    let roster: Vec<String> = out.starts(1)[0]
        .roster
        .iter()
        .map(|r| r.name.clone())
        .collect();
    assert_eq!(roster, ["ann", "bob", "dave"]);
}

#[test]
fn with_no_majority_nobody_is_trusted_and_everyone_is_told() {
    let mut h = hosting(2);
    h.join_with_self_tests(1, "ann", self_test(HASH, None));
    let out = h.join_with_self_tests(2, "bob", self_test(ODD, None));
    assert!(out.starts(1).is_empty() && out.starts(2).is_empty());
    assert!(!out.released(1) && !out.released(2), "nobody is refused");
    let expected = format!(
        "the players' machines compute flock's self-test differently and no majority agrees \
         (ann {HASH:016x}, bob {ODD:016x}): nobody's is trusted, and the game waits for a \
         player whose machine settles it"
    );
    for id in [1, 2] {
        let lobbies = out.lobbies(id);
        assert_eq!(
            lobbies.last().and_then(|l| l.held.clone()),
            Some(expected.clone())
        );
    }
    // A third machine settles it: bob's is the odd one out.
    let out = h.join_with_self_tests(3, "carl", self_test(HASH, None));
    assert!(told_to_go(&out, 2).contains(&format!("{ODD:016x}")));
    assert_eq!(out.starts(1).len(), 1);
    assert_eq!(out.starts(3).len(), 1);
}

#[test]
fn a_client_whose_game_refuses_the_settings_leaves_and_the_lobby_says_why() {
    let mut h = hosting(3);
    h.join_with_self_tests(1, "ann", self_test(HASH, None));
    h.join_with_self_tests(2, "bob", self_test(HASH, None));
    let why = format!(
        "the game flock refuses its settings: no setting \"boids\"\u{7}{}",
        "x".repeat(300)
    );
    let out = h.event(Event::CannotPlay(conn(2), why));
    assert!(out.released(2));
    let said: String = "the game flock refuses its settings: no setting \"boids\""
        .chars()
        .chain(std::iter::repeat_n('x', 300))
        .take(MAX_REASON_CHARS)
        .collect();
    assert!(out.events().contains(&ServerEvent::CannotPlay {
        player: lockstep_protocol::PlayerId(1),
        name: "bob".into(),
        reason: said.clone(),
    }));
    let held = out.lobbies(1).last().and_then(|l| l.held.clone());
    assert_eq!(
        held,
        Some(format!("bob's client cannot play flock boids=64: {said}"))
    );
    // Later lobbies keep saying it; a stranger's word changes nothing.
    let out = h.join_with_self_tests(3, "carl", self_test(HASH, None));
    assert!(out.lobbies(3).last().and_then(|l| l.held.clone()).is_some());
    let out = h.event(Event::CannotPlay(conn(9), "lies".into()));
    assert!(out.events().is_empty());
}

/// A game of the flock under way on a server without it: snapshots every
/// 60 ticks, ann and bob playing, every tick until 130 bundled and
/// the majority's hash of tick 60 (`HASH`) and 120 (`HASH + 1`) reported.
fn flock_under_way() -> Harness {
    let mut h = Harness::new(Config {
        players: 2,
        replay_dir: None,
        snapshot_secs: 1,
        ..Config::without_game(flock())
    });
    h.join_with_self_tests(1, "ann", self_test(HASH, None));
    h.join_with_self_tests(2, "bob", self_test(HASH, None));
    for first in (0..130).step_by(10) {
        h.inputs(1, first..first + 10);
        h.inputs(2, first..first + 10);
    }
    assert_eq!(h.next_tick(), Tick(130));
    h
}

#[test]
fn a_joiner_checks_the_snapshot_and_one_it_finds_off_names_its_sender() {
    let mut h = flock_under_way();
    // Players are asked in turn: ann's snapshot of tick 60, bob's of 120.
    assert_eq!(h.snapshot_round(60, HASH, b"ann's world"), 1);
    assert_eq!(h.snapshot_round(120, HASH + 1, b"bob's world"), 2);

    // A spectator starts from the newest, bob's, with the majority's hash
    // to check it against.
    let out = h.spectate_with_self_tests(3, "cat", self_test(HASH, None));
    let start = &out.starts(3)[0];
    assert_eq!(
        (start.snapshot, start.snapshot_hash),
        (Some(Tick(120)), Some(HASH + 1))
    );
    // Its machine finds it off: bob is named, and cat starts again from
    // ann's snapshot.
    let why = "the snapshot of tick 120 is not the majority's flock world: it hashes to 1";
    let out = h.event(Event::BadSnapshot(conn(3), Tick(120), why.into()));
    assert!(out.events().contains(&ServerEvent::SnapshotRefused {
        player: lockstep_protocol::PlayerId(1),
        name: "bob".into(),
        tick: Tick(120),
        by: "cat".into(),
        reason: why.into(),
    }));
    assert!(!out.released(3));
    let again = &out.starts(3)[0];
    assert_eq!(
        (again.snapshot, again.snapshot_hash),
        (Some(Tick(60)), Some(HASH))
    );
    // A word on a snapshot it was not sent, or twice, changes nothing.
    assert!(h
        .event(Event::BadSnapshot(conn(3), Tick(120), why.into()))
        .events()
        .is_empty());
    assert!(h
        .event(Event::BadSnapshot(conn(1), Tick(60), why.into()))
        .events()
        .is_empty());
    // Found off too: ann is named, and cat starts from tick 0, whose
    // bundles the relay kept.
    let out = h.event(Event::BadSnapshot(conn(3), Tick(60), "off".into()));
    assert!(out
        .events()
        .iter()
        .any(|e| matches!(e, ServerEvent::SnapshotRefused { name, .. } if name == "ann")));
    let last = &out.starts(3)[0];
    assert_eq!((last.snapshot, last.snapshot_hash), (None, None));
    assert_eq!(out.histories(3)[0].0, Tick(0));
    // The next joiner is not sent either disputed snapshot.
    let out = h.spectate_with_self_tests(4, "dan", self_test(HASH, None));
    assert_eq!(out.starts(4)[0].snapshot, None);
}
