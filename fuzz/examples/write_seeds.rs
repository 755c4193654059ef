//! Writes the committed seed inputs, `seeds/<target>/<name>`: a few valid
//! encodings per target, made by the real encoders, from which libFuzzer
//! starts mutating. Run it again after a wire or replay format change:
//!
//! ```text
//! cargo run --manifest-path fuzz/Cargo.toml --example write_seeds
//! ```
//!
//! It overwrites only its own files: the `regression-*` seeds beside them
//! are minimised inputs of past findings (FUZZING.md), kept so that every
//! run tries them again.

use std::{fs, io, path::Path};

use lockstep_protocol::{
    encode, encode_beacon, encode_frame, Announcement, Beacon, Bundle, BundleDatagram, Buttons,
    ClientDatagram, ClientMessage, DesyncNotice, GameSettings, GameSpec, GameSummary, Hello, Input,
    InputDatagram, Lobby, LobbyPlayer, Peer, PeerStatus, Percent, Platform, PlayerId, PlayerInput,
    Record, Refusal, ReplayHeader, ReplayWriter, RosterEntry, SelfTest, ServerDatagram,
    ServerMessage, Settings, Slack,
    SnapshotChunk, Start, Tick, TracePlace, TraceReport, TracedValue, MAX_DATAGRAM_SIZE,
    MAX_MESSAGE_SIZE, PROTOCOL_VERSION,
};

fn main() -> io::Result<()> {
    let seeds = Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds");
    let write = |target: &str, name: &str, bytes: &[u8]| -> io::Result<()> {
        let dir = seeds.join(target);
        fs::create_dir_all(&dir)?;
        fs::write(dir.join(name), bytes)
    };

    let client = client_messages();
    for (name, message) in &client {
        write("decode_client", name, &body(message))?;
    }
    let datagram = ClientDatagram::Inputs(inputs());
    let datagram = encode(&datagram, MAX_DATAGRAM_SIZE).expect("a seed fits a datagram");
    write("decode_client", "inputs_datagram", &datagram)?;

    let server = server_messages();
    for (name, message) in &server {
        write("decode_server", name, &body(message))?;
    }
    let datagram = ServerDatagram::Bundles(BundleDatagram {
        inputs_ack: Tick(12),
        first_tick: Tick(10),
        bundles: vec![bundle(1), bundle(2), departure()],
    });
    let datagram = encode(&datagram, MAX_DATAGRAM_SIZE).expect("a seed fits a datagram");
    write("decode_server", "bundles_datagram", &datagram)?;

    for (name, beacon) in beacons() {
        write(
            "beacon",
            name,
            &encode_beacon(&beacon).expect("a seed beacon encodes"),
        )?;
    }

    // frames: direction byte, chunk-length count, chunk lengths, stream.
    let client_stream = stream(client.iter().map(|(_, m)| m));
    let server_stream = stream(server.iter().map(|(_, m)| m));
    write(
        "frames",
        "client_whole",
        &[&[0, 0][..], &client_stream].concat(),
    )?;
    write(
        "frames",
        "server_whole",
        &[&[1, 0][..], &server_stream].concat(),
    )?;
    write(
        "frames",
        "client_cut",
        &[&[0, 5, 1, 3, 0, 4, 9][..], &client_stream].concat(),
    )?;

    // replay: switch byte (bit 0: fix checksums), then the file.
    let game = replay();
    write("replay", "game", &[&[0][..], &game].concat())?;
    write("replay", "game_fix_checksums", &[&[1][..], &game].concat())?;
    write(
        "replay",
        "cut_off",
        &[&[0][..], &game[..game.len() - 7]].concat(),
    )?;
    Ok(())
}

fn body<T: serde::Serialize>(message: &T) -> Vec<u8> {
    encode(message, MAX_MESSAGE_SIZE).expect("a seed fits a message")
}

fn stream<'a, T: serde::Serialize + 'a>(messages: impl Iterator<Item = &'a T>) -> Vec<u8> {
    messages
        .flat_map(|m| encode_frame(m).expect("a seed fits a frame"))
        .collect()
}

fn client_messages() -> Vec<(&'static str, ClientMessage)> {
    vec![
        (
            "hello",
            ClientMessage::Hello(Hello {
                protocol_version: PROTOCOL_VERSION,
                name: "ada".into(),
                spectate: false,
                password: Some("hunter2".into()),
                platform: Platform {
                    target: "x86_64-unknown-linux-gnu".into(),
                    os: "linux".into(),
                    cpu: "AMD EPYC 7B13".into(),
                    features: vec!["sse2".into(), "avx2".into(), "fma".into()],
                    rustc: "rustc 1.95.0".into(),
                    profile: "release".into(),
                    build: "0.1.0".into(),
                },
                self_tests: vec![SelfTest {
                    game: "balls".into(),
                    hash: 0x1675_af9a_52ca_84bb,
                    pinned: None,
                }],
                ready: true,
                resume: None,
            }),
        ),
        ("leave", ClientMessage::Leave),
        (
            "hash_report",
            ClientMessage::HashReport {
                tick: Tick(300),
                hash: 0x0123_4567_89ab_cdef,
            },
        ),
        ("inputs_message", ClientMessage::Inputs(inputs())),
        (
            "tick_hashes",
            ClientMessage::TickHashes {
                tick: Tick(300),
                first_tick: Tick(285),
                hashes: (0..16).map(|h| h * 0x0101_0101).collect(),
            },
        ),
        (
            "capacity",
            ClientMessage::Capacity {
                percent: Percent(49),
                tick: Tick(300),
                behind_us: 400_000,
            },
        ),
        ("ready", ClientMessage::Ready(true)),
        ("game_done", ClientMessage::GameDone),
        ("snapshot", ClientMessage::Snapshot(snapshot_chunk())),
        (
            "cannot_play",
            ClientMessage::CannotPlay("the game flock refuses its settings".into()),
        ),
        (
            "bad_snapshot",
            ClientMessage::BadSnapshot {
                tick: Tick(240),
                reason: "the snapshot of tick 240 is not the majority's flock world".into(),
            },
        ),
        (
            "trace",
            ClientMessage::Trace {
                tick: Tick(100),
                report: TraceReport {
                    places: vec![TracePlace {
                        file: "src/lib.rs".into(),
                        line: 231,
                        label: "boid.velocity".into(),
                        phase: "boids".into(),
                    }],
                    values: vec![TracedValue {
                        place: 0,
                        index: Some(0),
                        kind: 0,
                        bits: vec![0xbfd8_86bc, 0x3f2c_8456],
                    }],
                    total: 1,
                },
            },
        ),
    ]
}

/// A small piece of a snapshot, as client and server send it.
fn snapshot_chunk() -> SnapshotChunk {
    SnapshotChunk {
        tick: Tick(1800),
        total_len: 40,
        offset: 32,
        bytes: vec![1, 2, 3, 4, 5, 6, 7, 8],
    }
}

fn server_messages() -> Vec<(&'static str, ServerMessage)> {
    let roster = vec![
        RosterEntry {
            id: PlayerId(0),
            name: "ada".into(),
        },
        RosterEntry {
            id: PlayerId(1),
            name: "bob".into(),
        },
    ];
    vec![
        (
            "refused",
            ServerMessage::Refused(Refusal {
                reason: "protocol version 1 is not 2".into(),
            }),
        ),
        (
            "welcome",
            ServerMessage::Welcome {
                player: PlayerId(1),
                players_needed: 2,
            },
        ),
        (
            "start",
            ServerMessage::Start(Start {
                seed: 7,
                tick_rate: 60,
                input_delay: 3,
                spec: GameSpec::balls(24),
                roster,
                hash_interval: 15,
                you: Some(PlayerId(1)),
                first_input_tick: Tick(0),
                history: 2,
                snapshot: None,
                snapshot_hash: None,
                resume: None,
            }),
        ),
        (
            "history",
            ServerMessage::History {
                first_tick: Tick(0),
                bundles: vec![bundle(0), departure()],
            },
        ),
        (
            "peer_status",
            ServerMessage::PeerStatus(PeerStatus {
                next_tick: Tick(40),
                peers: vec![Peer {
                    player: PlayerId(0),
                    ping_ms: 23,
                    ticks_behind: 1,
                    silent_ms: 300,
                    waited_for: true,
                    slack: Some(Slack {
                        from: Tick(20),
                        p1_ms: -12,
                        p10_ms: 9,
                    }),
                }],
            }),
        ),
        (
            "desync",
            ServerMessage::Desync(DesyncNotice {
                tick: Tick(300),
                diverged: vec![PlayerId(2)],
                majority: Some(1),
                since: Tick(285),
            }),
        ),
        (
            "pinpointed",
            ServerMessage::Pinpointed {
                tick: Tick(300),
                first: Tick(293),
            },
        ),
        (
            "speed",
            ServerMessage::Speed {
                from_tick: Tick(312),
                percent: Percent(44),
                postpone_us: 450_000,
            },
        ),
        (
            "ended",
            ServerMessage::Ended {
                reason: "the server is shutting down".into(),
            },
        ),
        (
            "lobby",
            ServerMessage::Lobby(Lobby {
                players: vec![
                    LobbyPlayer {
                        id: PlayerId(0),
                        name: "ada".into(),
                        ready: true,
                        ping_ms: 3,
                        platform: "x86_64-unknown-linux-gnu".into(),
                    },
                    LobbyPlayer {
                        id: PlayerId(1),
                        name: "bob".into(),
                        ready: false,
                        ping_ms: 41,
                        platform: "aarch64-apple-darwin".into(),
                    },
                ],
                next: GameSettings {
                    game: 2,
                    players_needed: 2,
                    tick_rate: 60,
                    input_delay: 3,
                    spec: GameSpec {
                        name: "flock".into(),
                        settings: Settings::Given(vec![("boids".into(), "64".into())]),
                    },
                    seed: 0xd34d_4e89_9e3c_2e70,
                },
                last: Some(GameSummary {
                    game: 1,
                    seed: 7,
                    ticks: Tick(304),
                }),
                held: Some("the players' machines compute flock's self-test differently".into()),
            }),
        ),
        (
            "snapshot_request",
            ServerMessage::SnapshotRequest { tick: Tick(1800) },
        ),
        ("snapshot", ServerMessage::Snapshot(snapshot_chunk())),
        (
            "trace_diff",
            ServerMessage::TraceDiff {
                tick: Tick(100),
                diverged: "bob".into(),
                majority: "ann".into(),
                lines: vec!["first differing value: src/lib.rs:231 boid.velocity[0]".into()],
            },
        ),
    ]
}

fn inputs() -> InputDatagram {
    InputDatagram {
        bundles_ack: Tick(300),
        first_tick: Tick(302),
        inputs: vec![
            Input {
                buttons: Buttons::LEFT.with(Buttons::BOOST),
                axes: None,
            },
            Input {
                buttons: Buttons(0),
                axes: Some([127, -127]),
            },
        ],
    }
}

/// Both players' inputs at one tick.
fn bundle(buttons: u8) -> Bundle {
    Bundle {
        left: vec![],
        joined: vec![],
        inputs: vec![
            PlayerInput {
                player: PlayerId(0),
                input: Input {
                    buttons: Buttons(buttons),
                    axes: None,
                },
            },
            PlayerInput {
                player: PlayerId(1),
                input: Input {
                    buttons: Buttons(0),
                    axes: Some([-5, 64]),
                },
            },
        ],
        substituted: vec![],
    }
}

/// Player 1 leaves and player 2 comes back at the same tick; player 0's
/// input is the server's stand-in for one that came too late.
fn departure() -> Bundle {
    Bundle {
        left: vec![PlayerId(1)],
        joined: vec![PlayerId(2)],
        inputs: vec![PlayerInput {
            player: PlayerId(0),
            input: Input::default(),
        }],
        substituted: vec![PlayerId(0)],
    }
}

/// A short finished game with every kind of record.
fn replay() -> Vec<u8> {
    let header = ReplayHeader {
        protocol_version: PROTOCOL_VERSION,
        build: "lockstep 0.1.0".into(),
        recorder: "server".into(),
        started_unix: 1_800_000_000,
        seed: 7,
        tick_rate: 60,
        input_delay: 3,
        hash_interval: 2,
        spec: GameSpec::balls(24),
        roster: vec![
            RosterEntry {
                id: PlayerId(0),
                name: "ada".into(),
            },
            RosterEntry {
                id: PlayerId(1),
                name: "bob".into(),
            },
        ],
        platforms: vec![
            (
                PlayerId(0),
                Platform {
                    target: "x86_64-unknown-linux-gnu".into(),
                    ..Platform::default()
                },
            ),
            (
                PlayerId(1),
                Platform {
                    target: "aarch64-apple-darwin".into(),
                    ..Platform::default()
                },
            ),
        ],
    };
    let records = [
        Record::Bundle {
            tick: Tick(0),
            bundle: bundle(1),
        },
        Record::Bundle {
            tick: Tick(1),
            bundle: bundle(2),
        },
        Record::Hash {
            tick: Tick(2),
            player: PlayerId(0),
            hash: 42,
        },
        Record::Left {
            tick: Tick(2),
            player: PlayerId(1),
            reason: "left the game".into(),
        },
        Record::Bundle {
            tick: Tick(2),
            bundle: departure(),
        },
    ];
    let mut writer = ReplayWriter::new(Vec::new(), &header).expect("writes to memory");
    for record in &records {
        writer.write(record).expect("writes to memory");
    }
    writer.finish("game over").expect("writes to memory")
}

/// A probe and the answer to it.
fn beacons() -> Vec<(&'static str, Beacon)> {
    let announcement = Announcement {
        name: "den".into(),
        host: std::net::Ipv4Addr::new(192, 168, 1, 20).into(),
        port: 7777,
        players: 1,
        needed: 3,
        playing: false,
        tick_rate: 60,
        spec: GameSpec::balls(24),
        input_delay: 3,
        password: true,
        protocol_version: PROTOCOL_VERSION,
        fingerprint: [0x5f; 32],
        echo: Some(7),
    };
    vec![
        ("probe", Beacon::Probe { nonce: 7 }),
        ("announcement", Beacon::Announce(announcement)),
    ]
}
