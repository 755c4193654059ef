//! The snapshot rules, each on explicit time and real states of the
//! test game.

use lockstep_engine::Game;
use lockstep_protocol::encode;

use super::*;
use crate::testing::{played, TEST_GAME as GAME};

const P0: PlayerId = PlayerId(0);
const P1: PlayerId = PlayerId(1);
const P2: PlayerId = PlayerId(2);
const PLAYERS: [PlayerId; 3] = [P0, P1, P2];

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

/// A real game state after `ticks` ticks, its bytes and its hash.
fn world(ticks: u32) -> (Vec<u8>, u64) {
    let world = played(&PLAYERS, ticks);
    let bytes = encode(&world, MAX_SNAPSHOT_SIZE as usize).expect("a world encodes");
    (bytes, world.hash())
}

fn chunks(tick: Tick, bytes: &[u8], size: usize) -> Vec<SnapshotChunk> {
    bytes
        .chunks(size)
        .enumerate()
        .map(|(i, part)| SnapshotChunk {
            tick,
            total_len: bytes.len() as u32,
            offset: (i * size) as u32,
            bytes: part.to_vec(),
        })
        .collect()
}

fn deliver(snapshots: &mut Snapshots, player: PlayerId, tick: Tick, bytes: &[u8]) -> Offer {
    let mut last = Offer::Incomplete;
    for chunk in chunks(tick, bytes, 100) {
        last = snapshots.offer(player, chunk);
    }
    last
}

#[test]
fn asks_only_once_a_confirmed_tick_is_an_interval_past_the_last_snapshot() {
    let mut snapshots = Snapshots::new(Some(GAME), 60);
    let ask = |s: &mut Snapshots, tick: u32| {
        s.poll(secs(1), Some((Tick(tick), 1)), Tick(tick + 3), &PLAYERS)
            .0
    };
    assert_eq!(ask(&mut snapshots, 45), None);
    assert_eq!(snapshots.poll(secs(1), None, Tick(80), &PLAYERS).0, None);
    assert_eq!(ask(&mut snapshots, 60), Some((P0, Tick(60))));
    // One request at a time.
    assert_eq!(ask(&mut snapshots, 75), None);
}

#[test]
fn players_are_asked_in_turn_by_id_whatever_order_they_come_in() {
    let (bytes, hash) = world(60);
    let mut snapshots = Snapshots::new(Some(GAME), 60);
    let shuffled = [PlayerId(2), PlayerId(0), PlayerId(1)];
    let mut asked = Vec::new();
    for round in 1..=4u32 {
        let tick = Tick(60 * round);
        let (ask, _) = snapshots.poll(secs(round.into()), Some((tick, hash)), tick, &shuffled);
        let (player, _) = ask.expect("a request each interval");
        asked.push(player.0);
        // Whatever the answer, the round is over: refused (the world
        // is of tick 60) or kept.
        deliver(&mut snapshots, player, tick, &bytes);
    }
    assert_eq!(asked, [0, 1, 2, 0]);
}

#[test]
fn a_confirmed_tick_clients_may_no_longer_hold_is_not_asked_for() {
    let mut snapshots = Snapshots::new(Some(GAME), 60);
    let stale = Tick(60);
    let next = stale.plus(MAX_SNAPSHOT_AGE + 1);
    assert_eq!(
        snapshots.poll(secs(1), Some((stale, 1)), next, &PLAYERS).0,
        None
    );
}

#[test]
fn a_snapshot_that_hashes_to_the_confirmed_value_is_kept_and_the_next_is_due_an_interval_later() {
    let (bytes, hash) = world(60);
    let mut snapshots = Snapshots::new(Some(GAME), 60);
    let (ask, _) = snapshots.poll(secs(1), Some((Tick(60), hash)), Tick(62), &PLAYERS);
    assert_eq!(ask, Some((P0, Tick(60))));
    assert_eq!(
        deliver(&mut snapshots, P0, Tick(60), &bytes),
        Offer::Verified(Tick(60))
    );
    let latest = snapshots.latest().expect("kept");
    assert_eq!(
        (latest.tick, latest.bytes.as_ref()),
        (Tick(60), bytes.as_slice())
    );
    // The rotation moves on, an interval later.
    assert_eq!(
        snapshots
            .poll(secs(2), Some((Tick(105), 1)), Tick(107), &PLAYERS)
            .0,
        None
    );
    assert_eq!(
        snapshots
            .poll(secs(2), Some((Tick(120), 1)), Tick(122), &PLAYERS)
            .0,
        Some((P1, Tick(120)))
    );
}

#[test]
fn a_snapshot_with_another_hash_is_refused_and_another_player_is_asked() {
    let (bytes, hash) = world(60);
    let mut snapshots = Snapshots::new(Some(GAME), 60);
    let confirmed = Some((Tick(60), hash ^ 1));
    snapshots.poll(secs(1), confirmed, Tick(62), &PLAYERS);
    let offer = deliver(&mut snapshots, P0, Tick(60), &bytes);
    assert_eq!(
        offer,
        Offer::Refused {
            player: P0,
            tick: Tick(60),
            why: Refusal::HashMismatch {
                got: hash,
                confirmed: hash ^ 1
            }
        }
    );
    assert!(snapshots.latest().is_none());
    assert_eq!(
        snapshots.poll(secs(1), confirmed, Tick(63), &PLAYERS).0,
        Some((P1, Tick(60)))
    );
}

#[test]
fn garbage_oversized_and_unasked_snapshots_are_refused_without_panicking() {
    let mut snapshots = Snapshots::new(Some(GAME), 60);
    let unasked = SnapshotChunk {
        tick: Tick(60),
        total_len: 3,
        offset: 0,
        bytes: vec![1, 2, 3],
    };
    assert!(matches!(
        snapshots.offer(P0, unasked.clone()),
        Offer::Refused {
            why: Refusal::NotAsked(_),
            ..
        }
    ));
    snapshots.poll(secs(1), Some((Tick(60), 1)), Tick(62), &PLAYERS);
    let garbage = SnapshotChunk {
        bytes: vec![0xff; 3],
        ..unasked.clone()
    };
    assert!(matches!(
        snapshots.offer(P0, garbage),
        Offer::Refused {
            why: Refusal::Undecodable(_),
            ..
        }
    ));
    snapshots.poll(secs(1), Some((Tick(60), 1)), Tick(62), &PLAYERS);
    let oversized = SnapshotChunk {
        total_len: MAX_SNAPSHOT_SIZE + 1,
        ..unasked.clone()
    };
    assert!(matches!(
        snapshots.offer(P1, oversized),
        Offer::Refused {
            why: Refusal::BadLength(_),
            ..
        }
    ));
    snapshots.poll(secs(1), Some((Tick(60), 1)), Tick(62), &PLAYERS);
    let skipping = SnapshotChunk {
        offset: 1,
        total_len: 10,
        ..unasked
    };
    assert!(matches!(
        snapshots.offer(P2, skipping),
        Offer::Refused {
            why: Refusal::OutOfOrder { .. },
            ..
        }
    ));
}

#[test]
fn a_world_of_another_tick_is_refused_even_with_its_own_hash() {
    let (bytes, hash) = world(30);
    assert_eq!(
        verify(GAME, &bytes, Tick(60), hash),
        Err(Refusal::WrongTick(Tick(30)))
    );
    assert_eq!(verify(GAME, &bytes, Tick(30), hash), Ok(()));
}

#[test]
fn a_silent_player_times_out_and_the_next_one_is_asked() {
    let mut snapshots = Snapshots::new(Some(GAME), 60);
    let confirmed = Some((Tick(60), 1));
    assert_eq!(
        snapshots.poll(secs(1), confirmed, Tick(62), &PLAYERS).0,
        Some((P0, Tick(60)))
    );
    let later = secs(1) + SNAPSHOT_WAIT;
    let (ask, timed_out) = snapshots.poll(later, confirmed, Tick(62), &PLAYERS);
    assert_eq!(
        timed_out,
        Some(Offer::Refused {
            player: P0,
            tick: Tick(60),
            why: Refusal::TimedOut
        })
    );
    assert_eq!(ask, Some((P1, Tick(60))));
}

#[test]
fn without_the_game_snapshots_are_kept_unchecked_for_joiners_the_newest_few() {
    let mut snapshots = Snapshots::new(None, 60);
    for round in 1..=4u32 {
        let tick = Tick(60 * round);
        let (ask, _) = snapshots.poll(
            secs(round.into()),
            Some((tick, round.into())),
            tick,
            &PLAYERS,
        );
        let (player, _) = ask.expect("a request each interval");
        let bytes = vec![round as u8; 150];
        assert_eq!(
            deliver(&mut snapshots, player, tick, &bytes),
            Offer::Kept { player, tick }
        );
    }
    assert!(snapshots.latest().is_none(), "nothing verified");
    let served = snapshots.for_joiner().expect("the newest");
    assert_eq!(
        (served.tick, served.hash, served.sender, served.bytes.len()),
        (Tick(240), 4, Some(P0), 150)
    );
    assert_eq!(snapshots.unchecked.len(), MAX_UNCHECKED);
}

#[test]
fn a_disputed_sender_loses_all_its_snapshots_and_waits_for_its_turn() {
    let mut snapshots = Snapshots::new(None, 60);
    let mut senders = Vec::new();
    for round in 1..=3u32 {
        let tick = Tick(60 * round);
        let (ask, _) = snapshots.poll(secs(round.into()), Some((tick, 7)), tick, &PLAYERS);
        let (player, _) = ask.expect("a request each interval");
        deliver(&mut snapshots, player, tick, b"world");
        senders.push(player);
    }
    assert_eq!(senders, PLAYERS);
    // A word on a snapshot that is not here changes nothing.
    assert!(!snapshots.disputed(Tick(60), P1));
    assert!(snapshots.disputed(Tick(180), P2));
    let served = snapshots.for_joiner().expect("another's");
    assert_eq!((served.tick, served.sender), (Tick(120), Some(P1)));
    assert!(snapshots.disputed(Tick(120), P1));
    assert_eq!(snapshots.for_joiner().map(|s| s.sender), Some(Some(P0)));
    // The next request skips the disputed.
    let (ask, _) = snapshots.poll(secs(5), Some((Tick(240), 7)), Tick(240), &PLAYERS);
    assert_eq!(ask, Some((P0, Tick(240))));
}
