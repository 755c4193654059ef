use super::*;
use crate::*;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn sample_bundles() -> ServerDatagram {
    ServerDatagram::Bundles(BundleDatagram {
        inputs_ack: Tick(9),
        first_tick: Tick(7),
        bundles: vec![
            Bundle {
                left: vec![],
                joined: vec![],
                inputs: vec![
                    PlayerInput {
                        player: PlayerId(0),
                        input: Input {
                            buttons: Buttons::UP.with(Buttons::BOOST),
                            axes: None,
                        },
                    },
                    PlayerInput {
                        player: PlayerId(1),
                        input: Input {
                            buttons: Buttons(0),
                            axes: Some([-127, 64]),
                        },
                    },
                ],
                substituted: vec![PlayerId(1)],
            },
            Bundle {
                left: vec![PlayerId(1)],
                joined: vec![PlayerId(2)],
                inputs: vec![PlayerInput {
                    player: PlayerId(0),
                    input: Input::default(),
                }],
                substituted: vec![],
            },
        ],
    })
}

#[test]
fn borrowed_bundles_encode_like_the_owned_datagram() {
    let ServerDatagram::Bundles(owned) = sample_bundles();
    for len in 0..=owned.bundles.len() {
        let expected = encode(
            &ServerDatagram::Bundles(BundleDatagram {
                bundles: owned.bundles[..len].to_vec(),
                ..owned.clone()
            }),
            MAX_DATAGRAM_SIZE,
        )
        .unwrap();
        let borrowed = encode_bundles(
            owned.inputs_ack,
            owned.first_tick,
            &owned.bundles[..len],
            MAX_DATAGRAM_SIZE,
        )
        .unwrap();
        assert_eq!(hex(&borrowed), hex(&expected), "{len} bundles");
    }
    assert!(matches!(
        encode_bundles(Tick(0), Tick(0), &owned.bundles, 4),
        Err(EncodeError::Oversized { limit: 4, .. })
    ));
}

#[test]
fn messages_round_trip() {
    let hello = ClientMessage::Hello(Hello {
        protocol_version: PROTOCOL_VERSION,
        name: "ada".into(),
        spectate: false,
        password: None,
        platform: Platform::default(),
        self_tests: Vec::new(),
        ready: false,
        resume: None,
    });
    let bytes = encode(&hello, MAX_MESSAGE_SIZE).unwrap();
    assert_eq!(decode::<ClientMessage>(&bytes, MAX_MESSAGE_SIZE), Ok(hello));

    let start = ServerMessage::Start(Start {
        seed: u64::MAX,
        tick_rate: 60,
        input_delay: 3,
        spec: GameSpec::balls(24),
        roster: vec![RosterEntry {
            id: PlayerId(0),
            name: "ada".into(),
        }],
        hash_interval: 15,
        you: Some(PlayerId(0)),
        first_input_tick: Tick(0),
        history: 0,
        snapshot: None,
        snapshot_hash: None,
        resume: Some(Tick(7)),
    });
    let bytes = encode(&start, MAX_MESSAGE_SIZE).unwrap();
    assert_eq!(decode::<ServerMessage>(&bytes, MAX_MESSAGE_SIZE), Ok(start));

    let bundles = sample_bundles();
    let bytes = encode(&bundles, MAX_DATAGRAM_SIZE).unwrap();
    assert_eq!(
        decode::<ServerDatagram>(&bytes, MAX_DATAGRAM_SIZE),
        Ok(bundles)
    );
}

/// The wire format is pinned: if one of these fails, the change is a
/// protocol change and needs a new PROTOCOL_VERSION.
#[test]
fn golden_bytes_pin_the_wire_format() {
    let hello = ClientMessage::Hello(Hello {
        protocol_version: 10,
        name: "ada".into(),
        spectate: false,
        password: None,
        platform: Platform {
            target: "x".into(),
            os: "l".into(),
            cpu: "c".into(),
            features: vec!["f".into()],
            rustc: "r".into(),
            profile: "d".into(),
            build: "b".into(),
        },
        self_tests: vec![SelfTest {
            game: "balls".into(),
            hash: 0x0123_4567_89ab_cdef,
            pinned: Some(5),
        }],
        ready: true,
        resume: Some(Resume {
            seed: 9,
            next_bundle: Tick(1800),
        }),
    });
    // Length 46; Hello, version 10, "ada", false, None; then the
    // platform's seven fields (six strings and a list of one), the
    // self-tests (one: "balls", its hash as a varint and the pinned hash,
    // Some 5), ready, and the resume point: Some, seed 9, bundle 1800.
    assert_eq!(
        hex(&encode_frame(&hello).unwrap()),
        "2e000000\
         000a0361646100000178016c0163010166017201640162\
         010562616c6c73ef9bafcdf8acd191010105010109880e"
    );

    let inputs = ClientDatagram::Inputs(InputDatagram {
        bundles_ack: Tick(300),
        first_tick: Tick(302),
        inputs: vec![
            Input {
                buttons: Buttons::LEFT,
                axes: None,
            },
            Input {
                buttons: Buttons(0),
                axes: Some([1, -1]),
            },
        ],
    });
    assert_eq!(
        hex(&encode(&inputs, MAX_DATAGRAM_SIZE).unwrap()),
        "00ac02ae02020400000101ff"
    );

    // Bundles 7 and 8: player 1's input of tick 7 is a stand-in (the
    // `01 01` closing the first bundle); nobody's in tick 8 (`00`).
    assert_eq!(
        hex(&encode(&sample_bundles(), MAX_DATAGRAM_SIZE).unwrap()),
        "0009070200000200110001000181400101010101020100000000"
    );

    let report = ClientMessage::HashReport {
        tick: Tick(300),
        hash: 0x0123_4567_89ab_cdef,
    };
    assert_eq!(
        hex(&encode(&report, MAX_MESSAGE_SIZE).unwrap()),
        "02ac02ef9bafcdf8acd19101"
    );

    let desync = ServerMessage::Desync(DesyncNotice {
        tick: Tick(300),
        diverged: vec![PlayerId(2)],
        majority: Some(1),
        since: Tick(285),
    });
    assert_eq!(
        hex(&encode(&desync, MAX_MESSAGE_SIZE).unwrap()),
        "04ac02010201019d02"
    );

    let answer = ClientMessage::TickHashes {
        tick: Tick(300),
        first_tick: Tick(298),
        hashes: vec![1, 2, 3],
    };
    assert_eq!(
        hex(&encode(&answer, MAX_MESSAGE_SIZE).unwrap()),
        "04ac02aa0203010203"
    );

    let status = ServerMessage::PeerStatus(PeerStatus {
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
    });
    // Signed fields are zigzag varints: -12 is 0x17, 9 is 0x12.
    assert_eq!(
        hex(&encode(&status, MAX_MESSAGE_SIZE).unwrap()),
        "062801001701ac020101141712"
    );

    let pinpointed = ServerMessage::Pinpointed {
        tick: Tick(300),
        first: Tick(293),
    };
    assert_eq!(
        hex(&encode(&pinpointed, MAX_MESSAGE_SIZE).unwrap()),
        "07ac02a502"
    );

    let capacity = ClientMessage::Capacity {
        percent: Percent(49),
        tick: Tick(300),
        behind_us: 400_000,
    };
    assert_eq!(
        hex(&encode(&capacity, MAX_MESSAGE_SIZE).unwrap()),
        "0531ac0280b518"
    );

    let speed = ServerMessage::Speed {
        from_tick: Tick(312),
        percent: Percent(44),
        postpone_us: 450_000,
    };
    assert_eq!(
        hex(&encode(&speed, MAX_MESSAGE_SIZE).unwrap()),
        "08b8022cd0bb1b"
    );

    let refused = ServerMessage::Refused(Refusal {
        reason: "no".into(),
    });
    assert_eq!(
        hex(&encode(&refused, MAX_MESSAGE_SIZE).unwrap()),
        "00026e6f"
    );

    // Ready is variant 6 with one bool; GameDone is variant 7, alone.
    assert_eq!(
        hex(&encode(&ClientMessage::Ready(true), MAX_MESSAGE_SIZE).unwrap()),
        "0601"
    );
    assert_eq!(
        hex(&encode(&ClientMessage::GameDone, MAX_MESSAGE_SIZE).unwrap()),
        "07"
    );

    // Lobby is variant 9: one player (slot 1, "bo", ready, 23 ms,
    // "x"); game 2 for two players at 60 Hz, delay 3, the ball game
    // ("balls", settings encoded (variant 0) in one byte: 24) and its
    // seed as a varint; then the last game (Some: game 1, seed 7, 300
    // ticks), and nothing held (None).
    assert_eq!(
        hex(&encode(&sample_lobby(), MAX_MESSAGE_SIZE).unwrap()),
        "09010102626f0117017802023c03\
         0562616c6c73000118\
         f0dcf0f199d1d3a6d301\
         010107ac0200"
    );

    // Settings as a host gave them are variant 1: pairs of strings.
    let given = GameSpec {
        name: "flock".into(),
        settings: Settings::Given(vec![("boids".into(), "9".into())]),
    };
    assert_eq!(
        hex(&encode(&given, MAX_MESSAGE_SIZE).unwrap()),
        "05666c6f636b\
         01010562\
         6f69647301\
         39"
    );

    // CannotPlay is the client's variant 9, with its reason.
    assert_eq!(
        hex(&encode(&ClientMessage::CannotPlay("no".into()), MAX_MESSAGE_SIZE).unwrap()),
        "09026e6f"
    );
    // BadSnapshot is variant 10: the tick (1800), then the reason.
    let bad = ClientMessage::BadSnapshot {
        tick: Tick(1800),
        reason: "no".into(),
    };
    assert_eq!(
        hex(&encode(&bad, MAX_MESSAGE_SIZE).unwrap()),
        "0a880e026e6f"
    );

    // SnapshotRequest is server variant 10 with the tick (1800 is the
    // varint 88 0e); a client's Snapshot chunk is variant 8: tick,
    // total length, offset, then the bytes with their length.
    assert_eq!(
        hex(&encode(
            &ServerMessage::SnapshotRequest { tick: Tick(1800) },
            MAX_MESSAGE_SIZE
        )
        .unwrap()),
        "0a880e"
    );
    let chunk = SnapshotChunk {
        tick: Tick(1800),
        total_len: 3,
        offset: 0,
        bytes: vec![1, 2, 3],
    };
    assert_eq!(
        hex(&encode(&ClientMessage::Snapshot(chunk.clone()), MAX_MESSAGE_SIZE).unwrap()),
        "08880e030003010203"
    );
    // The server's Snapshot for a joiner is variant 11, the same chunk.
    assert_eq!(
        hex(&encode(&ServerMessage::Snapshot(chunk), MAX_MESSAGE_SIZE).unwrap()),
        "0b880e030003010203"
    );
    // Start names the game where it had the ball count ("balls",
    // encoded settings (variant 0) of one byte: 24), and ends with the snapshot's tick,
    // Some(1800), and the majority's hash of it, Some(0x0102) (a varint, as every u64).
    let start = ServerMessage::Start(Start {
        seed: 9,
        tick_rate: 60,
        input_delay: 3,
        spec: GameSpec::balls(24),
        roster: vec![RosterEntry {
            id: PlayerId(0),
            name: "a".into(),
        }],
        hash_interval: 15,
        you: None,
        first_input_tick: Tick(0),
        history: 1900,
        snapshot: Some(Tick(1800)),
        snapshot_hash: Some(0x0102),
        resume: None,
    });
    assert_eq!(
        hex(&encode(&start, MAX_MESSAGE_SIZE).unwrap()),
        "02093c030562616c6c73000118010001610f0000ec0e01880e01820200"
    );
    // Start for a client that reconnects and keeps its world: no
    // snapshot, and the History from tick 1850 on (Some(1850)).
    let resumed = ServerMessage::Start(Start {
        seed: 9,
        tick_rate: 60,
        input_delay: 3,
        spec: GameSpec::balls(24),
        roster: vec![RosterEntry {
            id: PlayerId(0),
            name: "a".into(),
        }],
        hash_interval: 15,
        you: Some(PlayerId(0)),
        first_input_tick: Tick(1900),
        history: 1900,
        snapshot: None,
        snapshot_hash: None,
        resume: Some(Tick(1850)),
    });
    assert_eq!(
        hex(&encode(&resumed, MAX_MESSAGE_SIZE).unwrap()),
        "02093c030562616c6c73000118010001610f0100ec0eec0e000001ba0e"
    );
}

fn sample_lobby() -> ServerMessage {
    ServerMessage::Lobby(Lobby {
        players: vec![LobbyPlayer {
            id: PlayerId(1),
            name: "bo".into(),
            ready: true,
            ping_ms: 23,
            platform: "x".into(),
        }],
        next: GameSettings {
            game: 2,
            players_needed: 2,
            tick_rate: 60,
            input_delay: 3,
            spec: GameSpec::balls(24),
            seed: 0xd34d_4e89_9e3c_2e70,
        },
        last: Some(GameSummary {
            game: 1,
            seed: 7,
            ticks: Tick(300),
        }),
        held: None,
    })
}

/// Every cut and every flipped byte of a lobby message decodes to an
/// error or to some other lobby, never to a panic.
#[test]
fn a_malformed_lobby_message_is_an_error_not_a_panic() {
    let bytes = encode(&sample_lobby(), MAX_MESSAGE_SIZE).unwrap();
    for len in 0..bytes.len() {
        assert!(
            decode::<ServerMessage>(&bytes[..len], MAX_MESSAGE_SIZE).is_err(),
            "a lobby cut to {len} bytes decoded"
        );
    }
    for i in 0..bytes.len() {
        for flip in [0x01, 0x80, 0xff] {
            let mut bad = bytes.clone();
            bad[i] ^= flip;
            let _ = decode::<ServerMessage>(&bad, MAX_MESSAGE_SIZE);
        }
    }
    // A player count far beyond the bytes that follow.
    assert!(matches!(
        decode::<ServerMessage>(&[0x09, 0xff, 0xff, 0x03], MAX_MESSAGE_SIZE),
        Err(DecodeError::Malformed(_))
    ));
    // Ready with a byte that is no bool.
    assert!(matches!(
        decode::<ClientMessage>(&[0x06, 0x02], MAX_MESSAGE_SIZE),
        Err(DecodeError::Malformed(_))
    ));
    assert_eq!(
        decode::<ClientMessage>(&[0x07, 0x00], MAX_MESSAGE_SIZE),
        Err(DecodeError::TrailingBytes(1))
    );
}

#[test]
fn the_largest_tick_hashes_answer_fits_a_message() {
    let answer = ClientMessage::TickHashes {
        tick: Tick(u32::MAX),
        first_tick: Tick(u32::MAX),
        hashes: vec![u64::MAX; MAX_TICK_HASHES],
    };
    let frame = encode_frame(&answer).unwrap();
    assert!(frame.len() <= 11 * 1024, "{}", frame.len());
}

#[test]
fn protocol_version_is_readable_from_any_hello() {
    // A Hello of another version may have other fields; its version
    // still reads first.
    let bytes = [0x00, 0xe7, 0x07, 0x03, b'b', b'o', b'b', 0xff, 0xff];
    assert!(decode::<ClientMessage>(&bytes, MAX_MESSAGE_SIZE).is_err());
    assert_eq!(hello_version(&bytes), Some(999));
    // A version 2 Hello (no platform, no self-test) cannot be decoded
    // by this build, and its version still reads.
    let v2 = [0x00, 0x02, 0x03, b'b', b'o', b'b', 0x00, 0x00];
    assert!(decode::<ClientMessage>(&v2, MAX_MESSAGE_SIZE).is_err());
    assert_eq!(hello_version(&v2), Some(2));
    let current = encode(
        &ClientMessage::Hello(Hello {
            protocol_version: PROTOCOL_VERSION,
            name: "bob".into(),
            spectate: true,
            password: Some("pw".into()),
            platform: Platform {
                cpu: "a long CPU model name".into(),
                ..Platform::default()
            },
            self_tests: vec![
                SelfTest {
                    game: "a".repeat(MAX_GAME_NAME_LEN),
                    hash: u64::MAX,
                    pinned: None,
                };
                MAX_SELF_TESTS
            ],
            ready: true,
            resume: None,
        }),
        MAX_MESSAGE_SIZE,
    )
    .unwrap();
    assert_eq!(hello_version(&current), Some(PROTOCOL_VERSION));
    assert_eq!(hello_version(&[0x01]), None);
    assert_eq!(hello_version(&[]), None);
}

#[test]
fn decode_rejects_garbage_with_typed_errors() {
    assert!(matches!(
        decode::<ClientMessage>(&[0x7f], MAX_MESSAGE_SIZE),
        Err(DecodeError::Malformed(_))
    ));
    assert!(matches!(
        decode::<ClientMessage>(&[], MAX_MESSAGE_SIZE),
        Err(DecodeError::Malformed(_))
    ));
    assert_eq!(
        decode::<ClientMessage>(&[0x01, 0x00], MAX_MESSAGE_SIZE),
        Err(DecodeError::TrailingBytes(1))
    );
    assert_eq!(
        decode::<ServerDatagram>(&[0u8; MAX_DATAGRAM_SIZE + 1], MAX_DATAGRAM_SIZE),
        Err(DecodeError::Oversized {
            size: MAX_DATAGRAM_SIZE + 1,
            limit: MAX_DATAGRAM_SIZE
        })
    );
    // A name announcing more bytes than there are.
    assert!(matches!(
        decode::<ClientMessage>(&[0x00, 0x01, 0x10, b'a'], MAX_MESSAGE_SIZE),
        Err(DecodeError::Malformed(_))
    ));
}

#[test]
fn encode_refuses_oversized_messages() {
    let huge = ClientMessage::Hello(Hello {
        protocol_version: 1,
        name: "x".repeat(MAX_MESSAGE_SIZE),
        spectate: false,
        password: None,
        platform: Platform::default(),
        self_tests: Vec::new(),
        ready: false,
        resume: None,
    });
    assert!(matches!(
        encode_frame(&huge),
        Err(EncodeError::Oversized { .. })
    ));
}

#[test]
fn frame_reader_reassembles_split_frames_and_rejects_huge_lengths() {
    let a = encode_frame(&ClientMessage::Leave).unwrap();
    let b = encode_frame(&ClientMessage::Hello(Hello {
        protocol_version: 1,
        name: "bo".into(),
        spectate: false,
        password: None,
        platform: Platform::default(),
        self_tests: Vec::new(),
        ready: false,
        resume: None,
    }))
    .unwrap();
    let all = [a, b].concat();
    let mut reader = FrameReader::new();
    let mut got = Vec::new();
    for byte in all {
        reader.push(&[byte]);
        while let Some(m) = reader.next_message::<ClientMessage>().unwrap() {
            got.push(m);
        }
    }
    assert_eq!(got.len(), 2);
    assert_eq!(got[0], ClientMessage::Leave);
    assert_eq!(reader.buffered(), 0);

    let mut reader = FrameReader::new();
    reader.push(&u32::MAX.to_le_bytes());
    assert!(matches!(
        reader.next_message::<ClientMessage>(),
        Err(DecodeError::Oversized { .. })
    ));
}

#[test]
fn traces_cross_the_wire_and_a_malformed_report_says_why() {
    let report = TraceReport {
        places: vec![TracePlace {
            file: "src/lib.rs".into(),
            line: 231,
            label: "boid.velocity".into(),
            phase: "boids".into(),
        }],
        values: vec![TracedValue {
            place: 0,
            index: Some(3),
            kind: 0,
            bits: vec![0x3f80_0000, 0xbf80_0000],
        }],
        total: 1,
    };
    assert_eq!(report.problem(), None);
    // Trace is the client's variant 11: the tick (100), then the report.
    let trace = ClientMessage::Trace {
        tick: Tick(100),
        report: report.clone(),
    };
    let bytes = encode(&trace, MAX_MESSAGE_SIZE).unwrap();
    assert_eq!(&hex(&bytes)[..6], "0b6401");
    assert_eq!(
        decode::<ClientMessage>(&bytes, MAX_MESSAGE_SIZE).unwrap(),
        trace
    );
    // TraceDiff is the server's variant 12.
    let diff = ServerMessage::TraceDiff {
        tick: Tick(100),
        diverged: "bob".into(),
        majority: "ann".into(),
        lines: vec!["first differing value: src/lib.rs:231".into()],
    };
    let bytes = encode(&diff, MAX_MESSAGE_SIZE).unwrap();
    assert_eq!(&hex(&bytes)[..2], "0c");
    assert_eq!(
        decode::<ServerMessage>(&bytes, MAX_MESSAGE_SIZE).unwrap(),
        diff
    );

    let mut nowhere = report.clone();
    nowhere.values[0].place = 1;
    assert!(nowhere.problem().unwrap().contains("names no place"));
    let mut wide = report.clone();
    wide.values[0].bits = vec![0; MAX_TRACE_WORDS + 1];
    assert!(wide.problem().is_some());
    let mut long = report.clone();
    long.places[0].label = "x".repeat(MAX_TRACE_TEXT + 1);
    assert!(long.problem().unwrap().contains("over"));
    let mut short = report;
    short.total = 0;
    assert!(short
        .problem()
        .unwrap()
        .contains("more values than its total"));
}
