//! The rules of the [module docs](super), each on the test clock.

use std::time::Duration;

use lockstep_protocol::{
    ClientMessage, DesyncNotice, GameSettings, InputDatagram, Lobby, PeerStatus, Percent, PlayerId,
    Refusal, Resume, ServerMessage, SnapshotChunk, Start, Tick, MAX_SNAPSHOT_SIZE,
    SNAPSHOT_CHUNK_BYTES,
};

use super::harness::{bundles, config, input, ms, resuming, start, Harness, Out, SILENT};
use super::{
    Action, Closed, Config, Ending, Failure, Hooks, LinkStats, NetCommand, NetEvent, Started,
    STATS_EVERY,
};
use crate::datagrams::{HEARTBEAT, RESEND_AFTER, SEND_BURST};
use crate::input_schedule::Schedule;

fn from_snapshot(tick: u32) -> Start {
    Start {
        snapshot: Some(Tick(tick)),
        snapshot_hash: None,
        ..start(1)
    }
}

fn chunk(tick: u32, total_len: u32, offset: u32, len: usize) -> ServerMessage {
    ServerMessage::Snapshot(SnapshotChunk {
        tick: Tick(tick),
        total_len,
        offset,
        bytes: vec![7; len],
    })
}

#[test]
fn the_first_connection_says_hello_with_nothing_to_resume() {
    let (mut h, first) = Harness::new(config());
    assert_eq!(first.connects(), vec![None], "waits as long as QUIC does");
    let out = h.connect();
    assert_eq!(
        out.0,
        vec![Action::Send(ClientMessage::Hello(config().hello))]
    );
}

#[test]
fn a_reconnection_says_hello_with_the_game_it_kept() {
    let mut h = Harness::lost_after_five_bundles(config(), 7);
    let out = h.reconnect();
    assert_eq!(
        out.hello().map(|hello| hello.resume),
        Some(Some(Resume {
            seed: 7,
            next_bundle: Tick(5)
        }))
    );
}

#[test]
fn a_welcome_asks_the_driver_to_tell_the_frontend() {
    let mut h = Harness::connected(config());
    let out = h.message(ServerMessage::Welcome {
        player: PlayerId(2),
        players_needed: 3,
    });
    assert_eq!(
        out.0,
        vec![Action::Welcome {
            player: PlayerId(2),
            players_needed: 3
        }]
    );
}

#[test]
fn a_welcome_while_a_game_is_kept_ends_the_connection_the_server_came_back_without_it() {
    let mut h = Harness::lost_after_five_bundles(config(), 7);
    h.reconnect();
    let out = h.message(ServerMessage::Welcome {
        player: PlayerId(0),
        players_needed: 2,
    });
    assert_eq!(
        out.closed(),
        Some((
            Closed::Ended(
                "the server came back without the game (it was started again without --resume)"
                    .into()
            ),
            Ending::Close("the game is gone")
        ))
    );
    assert!(h.connection.is_closed());
}

#[test]
fn a_start_begins_the_exchange_from_tick_0_and_its_timers_run_from_then() {
    let mut h = Harness::connected(config());
    let lobby = h.advance(ms(500));
    assert!(lobby.datagrams().is_empty(), "no heartbeat before the game");
    let out = h.message(ServerMessage::Start(start(1)));
    assert_eq!(
        out.events(),
        vec![NetEvent::Started(Started {
            start: start(1),
            at: h.instant(ms(500)),
            snapshot: None
        })]
    );
    let sent = h.input(0, input(1));
    assert_eq!(
        sent.datagrams(),
        vec![InputDatagram {
            bundles_ack: Tick(0),
            first_tick: Tick(0),
            inputs: vec![input(1)]
        }]
    );
    assert!(!h.advance(HEARTBEAT).datagrams().is_empty());
}

#[test]
fn a_rematch_start_resets_the_exchange() {
    let mut h = Harness::playing(config(), 1);
    h.bundles(0, 10, 0);
    h.input(12, input(1));
    let out = h.message(ServerMessage::Start(start(2)));
    assert!(matches!(out.events()[..], [NetEvent::Started(_)]));
    let heartbeats = h.advance(HEARTBEAT).datagrams();
    assert_eq!(
        heartbeats.last(),
        Some(&InputDatagram {
            bundles_ack: Tick(0),
            first_tick: Tick(0),
            inputs: Vec::new()
        }),
        "the last game's bundles and inputs are forgotten"
    );
}

#[test]
fn a_start_from_a_snapshot_starts_the_game_once_its_chunks_are_in() {
    let mut h = Harness::connected(config());
    h.now = ms(5);
    assert!(h
        .message(ServerMessage::Start(from_snapshot(30)))
        .0
        .is_empty());
    let snapshot: Vec<u8> = (0..SNAPSHOT_CHUNK_BYTES + 10).map(|i| i as u8).collect();
    let mut chunks = SnapshotChunk::split(Tick(30), &snapshot).into_iter();
    h.now = ms(9);
    assert!(h
        .message(ServerMessage::Snapshot(chunks.next().unwrap()))
        .0
        .is_empty());
    let out = h.message(ServerMessage::Snapshot(chunks.next().unwrap()));
    assert_eq!(
        out.events(),
        vec![NetEvent::Started(Started {
            start: from_snapshot(30),
            at: h.instant(ms(5)),
            snapshot: Some(snapshot)
        })]
    );
    assert_eq!(h.bundles(0, 30, 0).deliveries(), vec![]);
    assert_eq!(h.bundles(30, 2, 0).deliveries(), vec![(30, 2)]);
}

#[test]
fn a_start_resuming_the_kept_game_goes_on_from_the_tick_it_resumes_at() {
    let mut h = Harness::lost_after_five_bundles(config(), 7);
    h.reconnect();
    let out = h.message(ServerMessage::Start(resuming(7, 5)));
    assert_eq!(
        out.events(),
        vec![NetEvent::Resumed {
            start: resuming(7, 5),
            at: h.instant(h.now)
        }]
    );
    assert_eq!(h.bundles(0, 5, 0).deliveries(), vec![]);
    assert_eq!(h.bundles(5, 3, 0).deliveries(), vec![(5, 3)]);
}

#[test]
fn a_start_resuming_another_game_or_tick_is_a_fresh_join() {
    for other in [resuming(8, 5), resuming(7, 4)] {
        let mut h = Harness::lost_after_five_bundles(config(), 7);
        h.reconnect();
        let out = h.message(ServerMessage::Start(other.clone()));
        assert_eq!(
            out.events(),
            vec![NetEvent::Started(Started {
                start: other.clone(),
                at: h.instant(h.now),
                snapshot: None
            })]
        );
        assert_eq!(h.bundles(0, 2, 0).deliveries(), vec![(0, 2)], "from tick 0");
        h.fail(Failure::ServerLost);
        let hello = h.reconnect().hello().unwrap();
        assert_eq!(
            hello.resume,
            Some(Resume {
                seed: other.seed,
                next_bundle: Tick(2)
            }),
            "the game joined afresh is the one kept"
        );
    }
}

#[test]
fn snapshot_chunks_of_another_tick_out_of_order_oversized_or_too_long_end_the_connection() {
    let oversized = MAX_SNAPSHOT_SIZE + 1;
    let cases = [
        (
            chunk(31, 10, 0, 10),
            "a chunk of tick 31 for a Start from Some(Tick(30))".to_string(),
        ),
        (
            chunk(30, 2000, 1000, 1000),
            "chunk at 1000 of 2000 bytes after 0 bytes".into(),
        ),
        (
            chunk(30, oversized, 0, 10),
            format!("chunk at 0 of {oversized} bytes after 0 bytes"),
        ),
        (
            chunk(30, 10, 0, 11),
            "chunks longer than the announced 10 bytes".into(),
        ),
    ];
    for (bad, why) in cases {
        let mut h = Harness::connected(config());
        h.message(ServerMessage::Start(from_snapshot(30)));
        let out = h.message(bad);
        assert_eq!(
            out.0,
            vec![Action::Close {
                closed: Closed::Lost(format!("the server's snapshot is unusable: {why}")),
                ending: Ending::Release
            }]
        );
    }
}

#[test]
fn a_snapshot_chunk_without_a_start_from_a_snapshot_is_ignored() {
    let mut h = Harness::playing(config(), 1);
    assert!(h.message(chunk(30, 10, 0, 10)).0.is_empty());
    assert!(!h.connection.is_closed());
}

#[test]
fn a_refusal_closes_with_its_reason() {
    let mut h = Harness::connected(config());
    let out = h.message(ServerMessage::Refused(Refusal {
        reason: "wrong password".into(),
    }));
    assert_eq!(
        out.0,
        vec![Action::Close {
            closed: Closed::Refused("wrong password".into()),
            ending: Ending::Close("refused")
        }]
    );
    assert!(h.message(ServerMessage::Start(start(1))).0.is_empty());
    assert_eq!(h.connection.poll_timeout(), None);
}

#[test]
fn the_servers_end_of_the_game_closes_with_its_reason() {
    let mut h = Harness::playing(config(), 1);
    let out = h.message(ServerMessage::Ended {
        reason: "the server shut down".into(),
    });
    assert_eq!(
        out.closed(),
        Some((
            Closed::Ended("the server shut down".into()),
            Ending::Release
        ))
    );
}

#[test]
fn game_done_forgets_the_kept_game_and_resets_the_exchange() {
    let mut h = Harness::playing(config(), 1);
    h.bundles(0, 5, 0);
    let out = h.command(NetCommand::GameDone);
    assert_eq!(out.sent(), vec![ClientMessage::GameDone]);
    assert_eq!(
        h.bundles(5, 3, 0).deliveries(),
        vec![],
        "a straggler of the game"
    );
    assert!(
        h.advance(ms(1000)).datagrams().is_empty(),
        "nothing to repeat"
    );
    let lost = h.fail(Failure::ServerLost);
    assert_eq!(
        lost.closed(),
        Some((Closed::Lost(SILENT.into()), Ending::Release))
    );
    assert!(lost.events().is_empty(), "no game to reconnect for");
}

#[test]
fn an_input_goes_out_at_once_as_a_datagram_and_a_tick_keeps_its_first() {
    let mut h = Harness::playing(config(), 1);
    h.bundles(0, 2, 0);
    // The first input queued covers every tick from the Start's first
    // input tick (0) to its own.
    assert_eq!(
        h.input(3, input(1)).datagrams(),
        vec![InputDatagram {
            bundles_ack: Tick(2),
            first_tick: Tick(0),
            inputs: vec![input(1); 4]
        }]
    );
    assert!(h.input(3, input(2)).0.is_empty());
}

#[test]
fn with_send_delay_an_input_is_held_that_long_then_released_at_the_resend_check() {
    // Shorter than RESEND_AFTER: the link would not repeat anything yet,
    // so only the release sends the input.
    let delay = ms(20);
    assert!(delay < RESEND_AFTER);
    let mut h = Harness::playing(
        Config {
            hooks: Hooks {
                send_delay: delay,
                ..Hooks::default()
            },
            ..config()
        },
        1,
    );
    assert!(h.input(0, input(1)).0.is_empty());
    let held = h.advance(delay - ms(1));
    assert!(held.datagrams().is_empty());
    let released = h.advance(ms(10)).datagrams();
    assert_eq!(
        released,
        vec![InputDatagram {
            bundles_ack: Tick(0),
            first_tick: Tick(0),
            inputs: vec![input(1)]
        }]
    );
}

#[test]
fn inputs_the_pace_holds_back_go_together_at_the_next_resend_check() {
    // A frontend waking from a stop sends the inputs of 128 overdue
    // ticks at once, one command each.
    let mut h = Harness::playing(config(), 1);
    // Halfway between two heartbeats, which count against the pace.
    h.advance(ms(5_000) + HEARTBEAT / 2);
    let burst: Vec<InputDatagram> = (0..128)
        .flat_map(|tick| h.input(tick, input(1)).datagrams())
        .collect();
    assert_eq!(burst.len(), SEND_BURST as usize);
    let rest = h.advance(RESEND_AFTER / 3).datagrams();
    assert_eq!(rest.len(), 1, "{rest:?}");
    assert_eq!((rest[0].first_tick, rest[0].inputs.len()), (Tick(0), 128));
}

#[test]
fn what_a_failed_connection_was_asked_and_did_not_do_is_dropped() {
    let mut h = Harness::playing(config(), 1);
    h.connection
        .handle_command(NetCommand::Ready(true), h.now, h.path);
    let out = h.fail(Failure::ServerLost);
    assert!(out.sent().is_empty(), "{:?}", out.0);
    assert!(matches!(out.events()[..], [NetEvent::Reconnecting { .. }]));
}

#[test]
fn inputs_over_stream_go_on_the_control_stream_and_never_on_schedule() {
    let mut h = Harness::playing(
        Config {
            hooks: Hooks {
                inputs_over_stream: true,
                ..Hooks::default()
            },
            ..config()
        },
        1,
    );
    h.bundles(0, 4, 0);
    let out = h.input(5, input(1));
    assert_eq!(
        out.0,
        vec![Action::Send(ClientMessage::Inputs(InputDatagram {
            bundles_ack: Tick(4),
            first_tick: Tick(5),
            inputs: vec![input(1)]
        }))]
    );
    h.command(NetCommand::Hold(input(2)));
    h.command(NetCommand::Schedule(sixty_hertz(Tick(5)), h.instant(h.now)));
    let later = h.advance(ms(500));
    assert!(later.sent().is_empty());
    assert!(later.datagrams().iter().all(|d| d.inputs.is_empty()));
}

/// The schedule of a 60 Hz game with a delay of 3 whose clock has just
/// stepped to `tick`.
fn sixty_hertz(tick: Tick) -> Schedule {
    Schedule {
        tick,
        lag_ns: 0,
        hold_ns: 0,
        tick_ns: 16_666_667,
        delay: 3,
    }
}

#[test]
fn a_late_frontends_inputs_go_on_schedule_and_are_counted() {
    let mut h = Harness::playing(config(), 1);
    // The inputs of the delay's first ticks, as the frontend sends them at
    // the start; then it holds input 5 and is late for every tick after.
    for tick in 0..3 {
        h.input(tick, input(0));
    }
    h.command(NetCommand::Hold(input(5)));
    h.command(NetCommand::Schedule(sixty_hertz(Tick(0)), h.instant(h.now)));
    let out = h.advance(STATS_EVERY * 2);
    // Every report counts the held inputs the latest datagram carries.
    let mut on_schedule = 0;
    let mut reports = Vec::new();
    for action in &out.0 {
        match action {
            Action::Datagram(_) => {
                let datagram = &Out(vec![action.clone()]).datagrams()[0];
                assert_eq!(datagram.first_tick, Tick(0));
                assert_eq!(datagram.inputs[..3], [input(0); 3]);
                assert!(datagram.inputs[3..].iter().all(|&i| i == input(5)));
                on_schedule = datagram.inputs.len() as u64 - 3;
            }
            Action::Event(NetEvent::Stats(stats)) => {
                assert_eq!(stats.inputs_on_schedule, on_schedule);
                reports.push(stats.inputs_on_schedule);
            }
            _ => {}
        }
    }
    assert!(reports.iter().any(|&n| n > 0), "{reports:?}");
    let last = 3 + on_schedule as u32 - 1;
    assert!(
        h.input(last, input(9)).0.is_empty(),
        "the frame's sample comes too late"
    );
}

#[test]
fn leave_says_leave_then_closes_once_the_server_had_a_moment() {
    let mut h = Harness::playing(config(), 1);
    let out = h.command(NetCommand::Leave);
    assert_eq!(
        out.0,
        vec![
            Action::Send(ClientMessage::Leave),
            Action::Close {
                closed: Closed::Left,
                ending: Ending::Linger("player left")
            }
        ]
    );
    assert!(h.connection.is_closed());
    assert!(h.input(0, input(1)).0.is_empty());
}

/// A client whose game refuses the hosted game's settings says why, then
/// closes like a Leave, and its frontend learns that it was its own game.
#[test]
fn cannot_play_says_why_then_closes_like_leave() {
    let mut h = Harness::playing(config(), 1);
    let why = "the game flock refuses its settings: no setting \"bird\"".to_string();
    let out = h.command(NetCommand::CannotPlay(why.clone()));
    assert_eq!(
        out.0,
        vec![
            Action::Send(ClientMessage::CannotPlay(why.clone())),
            Action::Close {
                closed: Closed::CannotPlay(why),
                ending: Ending::Linger("cannot play the game")
            }
        ]
    );
    assert!(h.connection.is_closed());
}

#[test]
fn between_connections_commands_are_dropped_and_leave_closes_at_once() {
    let mut h = Harness::lost_after_five_bundles(config(), 7);
    assert!(h.input(6, input(1)).0.is_empty());
    assert!(h.command(NetCommand::Ready(true)).0.is_empty());
    let out = h.command(NetCommand::Leave);
    assert_eq!(
        out.0,
        vec![Action::Close {
            closed: Closed::Left,
            ending: Ending::Release
        }]
    );
}

#[test]
fn bundles_from_datagrams_and_history_reach_the_frontend_once_each() {
    let mut h = Harness::playing(config(), 1);
    assert_eq!(h.bundles(0, 3, 0).deliveries(), vec![(0, 3)]);
    assert_eq!(h.bundles(0, 3, 0).deliveries(), vec![]);
    let history = h.message(ServerMessage::History {
        first_tick: Tick(0),
        bundles: bundles(5),
    });
    assert_eq!(history.deliveries(), vec![(3, 2)]);
    assert_eq!(h.bundles(2, 5, 0).deliveries(), vec![(5, 2)]);
    assert!(
        h.datagram(&[0xff, 0xff, 0xff]).0.is_empty(),
        "a malformed one is dropped"
    );
}

#[test]
fn statistics_report_the_path_and_the_link_from_the_moment_of_connection() {
    let mut h = Harness::connected(config());
    let first = h.advance(Duration::ZERO).stats();
    assert_eq!(
        first,
        vec![LinkStats {
            rtt: ms(20),
            tx_bytes: 1_000,
            rx_bytes: 2_000,
            jitter: Duration::ZERO,
            irregularity: Duration::ZERO,
            inputs_on_schedule: 0
        }]
    );
    h.path.rtt = ms(35);
    let later = h.advance(STATS_EVERY).stats();
    assert_eq!(later.last().map(|stats| stats.rtt), Some(ms(35)));
}

#[test]
fn server_notices_reach_the_frontend_as_events_in_order() {
    let mut h = Harness::playing(config(), 1);
    let notice = DesyncNotice {
        tick: Tick(60),
        diverged: vec![PlayerId(1)],
        majority: Some(3),
        since: Tick(0),
    };
    let peers = PeerStatus {
        next_tick: Tick(61),
        peers: Vec::new(),
    };
    let lobby = Lobby {
        players: Vec::new(),
        next: GameSettings {
            game: 2,
            players_needed: 2,
            tick_rate: 60,
            input_delay: 3,
            spec: lockstep_protocol::GameSpec::balls(1),
            seed: 2,
        },
        last: None,
        held: None,
    };
    let mut out = Vec::new();
    for message in [
        ServerMessage::SnapshotRequest { tick: Tick(40) },
        ServerMessage::Desync(notice.clone()),
        ServerMessage::PeerStatus(peers.clone()),
        ServerMessage::Pinpointed {
            tick: Tick(60),
            first: Tick(58),
        },
        ServerMessage::Speed {
            from_tick: Tick(70),
            percent: Percent(80),
            postpone_us: 1_500,
        },
        ServerMessage::Lobby(lobby.clone()),
    ] {
        out.extend(h.message(message).events());
    }
    assert_eq!(
        out,
        vec![
            NetEvent::SnapshotRequest(Tick(40)),
            NetEvent::Desync(notice),
            NetEvent::Peers(peers),
            NetEvent::Pinpointed {
                tick: Tick(60),
                first: Tick(58)
            },
            NetEvent::Speed {
                from_tick: Tick(70),
                percent: Percent(80),
                postpone: Duration::from_micros(1_500)
            },
            NetEvent::Lobby(lobby),
        ]
    );
}

#[test]
fn reports_answers_and_snapshots_go_on_the_control_stream() {
    let mut h = Harness::playing(config(), 1);
    let snapshot = vec![1; SNAPSHOT_CHUNK_BYTES + 1];
    let mut sent = Vec::new();
    for command in [
        NetCommand::Report(Tick(60), 0xabc),
        NetCommand::Capacity(Percent(80), Tick(61), Duration::from_secs(10_000)),
        NetCommand::TickHashes(Tick(60), Tick(58), vec![1, 2, 3]),
        NetCommand::Ready(false),
        NetCommand::Snapshot(Tick(40), snapshot.clone()),
    ] {
        sent.extend(h.command(command).sent());
    }
    let mut expected = vec![
        ClientMessage::HashReport {
            tick: Tick(60),
            hash: 0xabc,
        },
        ClientMessage::Capacity {
            percent: Percent(80),
            tick: Tick(61),
            behind_us: u32::MAX,
        },
        ClientMessage::TickHashes {
            tick: Tick(60),
            first_tick: Tick(58),
            hashes: vec![1, 2, 3],
        },
        ClientMessage::Ready(false),
    ];
    expected.extend(
        SnapshotChunk::split(Tick(40), &snapshot)
            .into_iter()
            .map(ClientMessage::Snapshot),
    );
    assert_eq!(sent, expected);
    assert_eq!(expected.len(), 6, "the snapshot went in two chunks");
}

#[test]
fn an_input_of_the_game_before_the_loss_does_not_push_the_resumed_games_first_inputs_out() {
    let mut h = Harness::lost_after_five_bundles(config(), 7);
    h.reconnect();
    let resumed = Start {
        first_input_tick: Tick(5),
        ..resuming(7, 5)
    };
    h.message(ServerMessage::Start(resumed));
    // The frontend's input for tick 7, sampled before it heard of the
    // loss, arrives first; then the resumed game's neutral inputs for
    // ticks 5 and 6.
    let neutral = lockstep_protocol::Input::default();
    let mut sent = h.input(7, input(3)).datagrams();
    sent.extend(h.input(5, neutral).datagrams());
    sent.extend(h.input(6, neutral).datagrams());
    sent.extend(h.advance(ms(100)).datagrams());
    let last = sent.last().expect("the inputs go out");
    // Every tick from the first the server expects is covered, from 5 on.
    assert_eq!(last.first_tick, Tick(5));
    assert_eq!(last.inputs, vec![input(3); 3]);
}
