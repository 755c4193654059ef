use std::collections::BTreeSet;

use super::*;
use crate::{Buttons, Input, PlayerInput};

mod damage;

fn header() -> ReplayHeader {
    ReplayHeader {
        protocol_version: crate::PROTOCOL_VERSION,
        build: "test".into(),
        recorder: "server".into(),
        started_unix: 1_800_000_000,
        seed: 7,
        tick_rate: 60,
        input_delay: 3,
        hash_interval: 15,
        spec: GameSpec::balls(24),
        roster: vec![RosterEntry {
            id: PlayerId(0),
            name: "ada".into(),
        }],
        platforms: vec![(
            PlayerId(0),
            Platform {
                target: "x86_64-unknown-linux-gnu".into(),
                ..Platform::default()
            },
        )],
    }
}

fn bundle(b: u8) -> Bundle {
    Bundle {
        left: vec![],
        joined: vec![],
        inputs: vec![PlayerInput {
            player: PlayerId(0),
            input: Input {
                buttons: Buttons(b),
                axes: None,
            },
        }],
        substituted: vec![],
    }
}

fn sample(ticks: u32) -> Vec<u8> {
    let mut writer = ReplayWriter::new(Vec::new(), &header()).unwrap();
    for t in 0..ticks {
        writer
            .write(&Record::Bundle {
                tick: Tick(t),
                bundle: bundle(t as u8),
            })
            .unwrap();
    }
    writer
        .write(&Record::Hash {
            tick: Tick(ticks),
            player: PlayerId(0),
            hash: 42,
        })
        .unwrap();
    writer.finish("game over").unwrap()
}

#[test]
fn borrowed_bundles_and_appended_records_write_the_same_file() {
    let mut writer = ReplayWriter::new(Vec::new(), &header()).unwrap();
    for t in 0..5 {
        writer.write_bundle(Tick(t), &bundle(t as u8)).unwrap();
    }
    let flushed = writer.out.len();
    writer
        .append(&Record::Hash {
            tick: Tick(5),
            player: PlayerId(0),
            hash: 42,
        })
        .unwrap();
    // Appended, not yet handed to the file.
    assert_eq!(writer.out.len(), flushed);
    assert_eq!(writer.ticks(), 5);
    assert_eq!(writer.finish("game over").unwrap(), sample(5));
}

#[test]
fn a_recording_cut_mid_record_goes_on_after_its_last_whole_record() {
    let mut writer = ReplayWriter::new(Vec::new(), &header()).unwrap();
    for t in 0..4 {
        writer.write_bundle(Tick(t), &bundle(t as u8)).unwrap();
    }
    let whole = writer.out.len();
    writer.write_bundle(Tick(4), &bundle(4)).unwrap();
    // Killed in the middle of tick 4's record.
    let mut file = writer.out;
    file.truncate(whole + 3);
    let outcome = Replay::read(file.as_slice()).unwrap();
    let damage = outcome.problem.unwrap();
    assert!(
        matches!(damage.error, ReplayError::Truncated { offset, .. } if offset == whole as u64),
        "{damage}"
    );
    assert!(damage.is_tail(), "{damage}");
    assert_eq!(outcome.valid_len, whole as u64);
    assert_eq!(outcome.replay.bundles.len(), 4);

    file.truncate(outcome.valid_len as usize);
    let mut writer = ReplayWriter::resume(file, outcome.valid_len, Tick(4));
    for t in 4..6 {
        writer.write_bundle(Tick(t), &bundle(t as u8 + 10)).unwrap();
    }
    assert_eq!(writer.ticks(), 6);
    let file = writer.finish("resumed and over").unwrap();
    let outcome = Replay::read(file.as_slice()).unwrap();
    assert!(outcome.problem.is_none(), "{:?}", outcome.problem);
    assert_eq!(outcome.valid_len, file.len() as u64);
    let marks: Vec<u8> = outcome
        .replay
        .bundles
        .iter()
        .map(|b| b.inputs[0].input.buttons.0)
        .collect();
    assert_eq!(marks, [0, 1, 2, 3, 14, 15]);
    assert_eq!(outcome.replay.end, Some((6, "resumed and over".into())));
}

/// A disk with room for `room` bytes. A write that does not fit writes
/// what fits, as a file system does, and the next one fails with
/// `StorageFull`.
struct FillingDisk {
    bytes: Vec<u8>,
    room: usize,
}

impl io::Write for FillingDisk {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let fits = buf.len().min(self.room - self.bytes.len());
        if fits == 0 && !buf.is_empty() {
            return Err(io::ErrorKind::StorageFull.into());
        }
        self.bytes.extend_from_slice(&buf[..fits]);
        Ok(fits)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_disk_that_fills_up_keeps_every_record_flushed_before_the_failed_write() {
    let whole = sample(5);
    let mut filled_at = BTreeSet::new();
    for room in 0..whole.len() {
        let disk = FillingDisk {
            bytes: Vec::new(),
            room,
        };
        let mut writer = match ReplayWriter::new(disk, &header()) {
            Ok(writer) => writer,
            // No room for the header: the recorder has no replay at all.
            Err(ReplayError::Io(e)) if e.kind() == io::ErrorKind::StorageFull => continue,
            Err(e) => panic!("room {room}: {e}"),
        };
        let records = (0..5)
            .map(|t| Record::Bundle {
                tick: Tick(t),
                bundle: bundle(t as u8),
            })
            .chain([
                Record::Hash {
                    tick: Tick(5),
                    player: PlayerId(0),
                    hash: 42,
                },
                Record::End {
                    ticks: 5,
                    reason: "game over".into(),
                },
            ]);
        let failed = records
            .map(|record| writer.write(&record))
            .find_map(Result::err);
        assert!(failed.is_some(), "room {room}: everything fitted");
        let (len, ticks) = (writer.flushed_len(), writer.flushed_ticks());
        let disk = writer.into_inner();
        // What the failed write left after the last whole record is read
        // as a cut-off tail, never as damage.
        let outcome = Replay::read(&disk.bytes[..]).unwrap();
        assert_eq!(outcome.valid_len, len, "room {room}");
        assert_eq!(outcome.replay.bundles.len(), ticks.0 as usize);
        match outcome.problem {
            None => assert_eq!(disk.bytes.len() as u64, len),
            Some(Damage {
                error: ReplayError::Truncated { offset, .. },
                after: After::Nothing,
                ..
            }) => assert_eq!(offset, len),
            Some(damage) => panic!("room {room}: {damage:?}"),
        }
        // Cut back to it, the file ends cleanly after the last whole
        // bundle.
        let cut = Replay::read(&disk.bytes[..len as usize]).unwrap();
        assert!(cut.problem.is_none(), "room {room}: {:?}", cut.problem);
        assert_eq!(cut.replay.bundles.len(), ticks.0 as usize);
        assert_eq!(&disk.bytes[..len as usize], &whole[..len as usize]);
        filled_at.insert(ticks);
    }
    // The disk filled at every bundle, and at the records after the last.
    assert_eq!(filled_at, (0..=5).map(Tick).collect());
}

/// The file layout is pinned: if this fails, the change needs a new
/// REPLAY_FORMAT and docs/replay-format.md says what changed.
#[test]
fn golden_bytes_pin_the_format_and_the_bundle_record() {
    assert_eq!(sample(0)[..10], *b"LOCKSTEP\x06\x00");
    let record = Record::Bundle {
        tick: Tick(300),
        bundle: Bundle {
            inputs: vec![
                PlayerInput {
                    player: PlayerId(0),
                    input: Input {
                        buttons: Buttons(1),
                        axes: None,
                    },
                },
                PlayerInput {
                    player: PlayerId(1),
                    input: Input::default(),
                },
            ],
            substituted: vec![PlayerId(1)],
            ..Bundle::default()
        },
    };
    // Bundle, tick 300, nobody left or joined, two inputs, then the
    // stand-ins: player 1.
    assert_eq!(
        crate::encode(&record, MAX_RECORD_SIZE).unwrap(),
        [0x01, 0xac, 0x02, 0x00, 0x00, 0x02, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x01, 0x01]
    );
}

/// The format 4 records are pinned like the bundle: the table in
/// docs/replay-format.md describes these bytes.
#[test]
fn golden_bytes_pin_the_status_and_event_records() {
    let status = Record::Status {
        tick: Tick(300),
        players: vec![PlayerStatus {
            player: PlayerId(1),
            ping_ms: 40,
            slack: Some(Slack {
                from: Tick(60),
                p1_ms: -3,
                p10_ms: 12,
            }),
            waited_for: true,
            ticks_behind: 2,
        }],
    };
    // Status, tick 300, one player: 1, ping 40, slack from 60, -3
    // and 12 (zigzag), waited for, 2 behind.
    assert_eq!(
        crate::encode(&status, MAX_RECORD_SIZE).unwrap(),
        [0x05, 0xac, 0x02, 0x01, 0x01, 0x28, 0x01, 0x3c, 0x05, 0x18, 0x01, 0x02]
    );
    let desync = Record::Event {
        tick: Tick(300),
        event: GameEvent::Desync {
            diverged: vec![PlayerId(2)],
            first: Some(Tick(293)),
        },
    };
    assert_eq!(
        crate::encode(&desync, MAX_RECORD_SIZE).unwrap(),
        [0x06, 0xac, 0x02, 0x01, 0x01, 0x02, 0x01, 0xa5, 0x02]
    );
    let speed = Record::Event {
        tick: Tick(10),
        event: GameEvent::Speed {
            percent: Percent(50),
        },
    };
    assert_eq!(
        crate::encode(&speed, MAX_RECORD_SIZE).unwrap(),
        [0x06, 0x0a, 0x00, 0x32]
    );
}

#[test]
fn a_replay_round_trips() {
    let outcome = Replay::read(&sample(5)[..]).unwrap();
    assert!(outcome.problem.is_none());
    let replay = outcome.replay;
    assert_eq!(replay.header, header());
    assert_eq!(replay.bundles.len(), 5);
    assert_eq!(replay.bundles[3], bundle(3));
    assert_eq!(replay.hashes, vec![(Tick(5), PlayerId(0), 42)]);
    assert_eq!(replay.end, Some((5, "game over".into())));
}

#[test]
fn other_files_and_formats_are_refused_clearly() {
    assert!(matches!(
        Replay::read(&b"PNG\x89 not a replay"[..]),
        Err(ReplayError::NotAReplay)
    ));
    let mut other = sample(1);
    other[8] = 9;
    let err = Replay::read(&other[..]).unwrap_err();
    assert!(matches!(err, ReplayError::Format { found: 9 }));
    assert!(err.to_string().contains("format 9"));
}

#[test]
fn a_huge_length_is_corruption_not_an_allocation() {
    let mut bytes = sample(0);
    bytes.truncate(10);
    bytes.extend_from_slice(&u32::MAX.to_le_bytes());
    assert!(matches!(
        Replay::read(&bytes[..]),
        Err(ReplayError::Corrupt { .. })
    ));
}

/// Found by the `replay` fuzz target: a body holding a valid record and
/// then more bytes, under a matching CRC, was read as that record.
#[test]
fn bytes_after_a_record_inside_its_body_are_corruption() {
    let mut bytes = sample(0);
    let len = u32::from_le_bytes([bytes[10], bytes[11], bytes[12], bytes[13]]) as usize;
    let mut body = bytes[14..14 + len].to_vec();
    body.push(0);
    let mut padded = bytes[..10].to_vec();
    padded.extend_from_slice(&(body.len() as u32).to_le_bytes());
    padded.extend_from_slice(&body);
    padded.extend_from_slice(&crc32fast::hash(&body).to_le_bytes());
    bytes.splice(..14 + len + 4, padded);

    let Err(ReplayError::Corrupt {
        offset: 10,
        record: 0,
        what,
    }) = Replay::read(&bytes[..])
    else {
        panic!("a padded header was accepted");
    };
    assert!(what.contains("1 unexpected bytes"), "{what}");
}

fn status_and_events(ticks: u32) -> Vec<u8> {
    let mut writer = ReplayWriter::new(Vec::new(), &header()).unwrap();
    for t in 0..ticks {
        writer.write_bundle(Tick(t), &bundle(t as u8)).unwrap();
        writer
            .append(&Record::Status {
                tick: Tick(t),
                players: vec![PlayerStatus {
                    player: PlayerId(0),
                    ping_ms: 40 + t as u16,
                    slack: Some(Slack {
                        from: Tick(0),
                        p1_ms: -3,
                        p10_ms: 12,
                    }),
                    waited_for: t % 2 == 0,
                    ticks_behind: 1,
                }],
            })
            .unwrap();
    }
    writer
        .write(&Record::Event {
            tick: Tick(2),
            event: GameEvent::Speed {
                percent: Percent(50),
            },
        })
        .unwrap();
    writer
        .write(&Record::Event {
            tick: Tick(3),
            event: GameEvent::Desync {
                diverged: vec![PlayerId(0)],
                first: Some(Tick(1)),
            },
        })
        .unwrap();
    writer.finish("game over").unwrap()
}

#[test]
fn status_samples_and_events_round_trip() {
    let outcome = Replay::read(&status_and_events(4)[..]).unwrap();
    assert!(outcome.problem.is_none(), "{:?}", outcome.problem);
    let replay = outcome.replay;
    assert_eq!(replay.format, REPLAY_FORMAT);
    assert_eq!(replay.bundles.len(), 4);
    assert_eq!(replay.statuses.len(), 4);
    assert_eq!(replay.statuses[3].0, Tick(3));
    assert_eq!(replay.statuses[3].1[0].ping_ms, 43);
    assert_eq!(replay.statuses[3].1[0].slack.map(|s| s.p1_ms), Some(-3));
    assert_eq!(
        replay.events,
        vec![
            (
                Tick(2),
                GameEvent::Speed {
                    percent: Percent(50)
                }
            ),
            (
                Tick(3),
                GameEvent::Desync {
                    diverged: vec![PlayerId(0)],
                    first: Some(Tick(1)),
                }
            ),
        ]
    );
}

/// `file` (the current format) as formats 3 to 5 wrote it: the same
/// records, with the ball count (3 and 4) or the encoded settings (5) in
/// the header.
fn in_format(file: &[u8], format: u16) -> Vec<u8> {
    let mut reader = ReplayReader::new(file).unwrap();
    let Some(Record::Header(header)) = reader.next_record().unwrap() else {
        panic!("the sample starts with its header");
    };
    let rest = &file[reader.offset as usize..];
    let Settings::Encoded(settings) = header.spec.settings.clone() else {
        panic!("older formats had encoded settings only");
    };
    let body = if format < 5 {
        let balls: u16 = postcard::from_bytes(&settings).unwrap();
        postcard::to_stdvec(&OldHeaderRecord::Header(old_header(&header, balls))).unwrap()
    } else {
        let spec = EncodedSpec {
            name: header.spec.name.clone(),
            settings,
        };
        postcard::to_stdvec(&OldHeaderRecord::Header(old_header(&header, spec))).unwrap()
    };
    let mut out = REPLAY_MAGIC.to_vec();
    out.extend_from_slice(&format.to_le_bytes());
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend_from_slice(&body);
    out.extend_from_slice(&crc32fast::hash(&body).to_le_bytes());
    out.extend_from_slice(rest);
    out
}

/// `header` as an older format wrote it, with `game` where `spec` is.
fn old_header<S>(header: &ReplayHeader, game: S) -> OldHeader<S> {
    OldHeader {
        protocol_version: header.protocol_version,
        build: header.build.clone(),
        recorder: header.recorder.clone(),
        started_unix: header.started_unix,
        seed: header.seed,
        tick_rate: header.tick_rate,
        input_delay: header.input_delay,
        hash_interval: header.hash_interval,
        game,
        roster: header.roster.clone(),
        platforms: header.platforms.clone(),
    }
}

/// Format 5 had only encoded settings: its header reads as the same game
/// with the same settings, and every record after it as it was.
#[test]
fn a_format_5_header_reads_with_encoded_settings() {
    let file = status_and_events(3);
    let old = in_format(&file, 5);
    let outcome = Replay::read(&old[..]).unwrap();
    assert!(outcome.problem.is_none(), "{:?}", outcome.problem);
    assert_eq!(outcome.replay.format, 5);
    assert_eq!(outcome.replay.header, header());
    let now = Replay::read(&file[..]).unwrap().replay;
    assert_eq!(outcome.replay.bundles, now.bundles);
    assert_eq!(outcome.replay.events, now.events);
}

/// A game the recording server was not built with keeps its settings as
/// the host gave them, and reads back the same.
#[test]
fn given_settings_are_recorded_and_read_back() {
    let mut given = header();
    given.spec = GameSpec {
        name: "flock".into(),
        settings: Settings::Given(vec![("boids".into(), "64".into())]),
    };
    let mut writer = ReplayWriter::new(Vec::new(), &given).unwrap();
    writer
        .write(&Record::Bundle {
            tick: Tick(0),
            bundle: bundle(0),
        })
        .unwrap();
    let outcome = Replay::read(&writer.finish("x").unwrap()[..]).unwrap();
    assert!(outcome.problem.is_none(), "{:?}", outcome.problem);
    assert_eq!(outcome.replay.header, given);
}

/// Formats 3 and 4 were written by the ball game alone: their header's
/// ball count reads as the ball game with that many balls, and every
/// other record as it always did.
#[test]
fn a_format_4_header_reads_as_the_ball_game() {
    let old = in_format(&status_and_events(3), 4);
    let outcome = Replay::read(&old[..]).unwrap();
    assert!(outcome.problem.is_none(), "{:?}", outcome.problem);
    assert_eq!(outcome.replay.format, 4);
    assert_eq!(outcome.replay.header, header());
    assert_eq!(outcome.replay.header.spec, GameSpec::balls(24));
    assert_eq!(outcome.replay.bundles.len(), 3);
    assert_eq!(outcome.valid_len, old.len() as u64);
    // Read as format 5, the old header is not a header.
    let mut misread = old.clone();
    misread[8] = 5;
    assert!(matches!(
        Replay::read(&misread[..]),
        Err(ReplayError::Corrupt { record: 0, .. })
    ));
}

/// Format 4 only added records after the old ones: a format 3 file is
/// read as it always was.
#[test]
fn format_3_files_are_still_read() {
    let old = in_format(&sample(5), 3);
    let outcome = Replay::read(&old[..]).unwrap();
    assert!(outcome.problem.is_none());
    assert_eq!(outcome.replay.format, 3);
    assert_eq!(outcome.replay.bundles.len(), 5);
    assert!(outcome.replay.statuses.is_empty());
    assert!(outcome.replay.events.is_empty());
    let mut older = sample(1);
    older[8] = 2;
    assert!(matches!(
        Replay::read(&older[..]),
        Err(ReplayError::Format { found: 2 })
    ));
}

#[test]
fn a_status_record_in_a_format_3_file_is_invalid() {
    let bytes = in_format(&status_and_events(2), 3);
    let outcome = Replay::read(&bytes[..]).unwrap();
    assert!(matches!(
        outcome.problem.map(|d| d.error),
        Some(ReplayError::Invalid { record: 2, .. })
    ));
    assert_eq!(outcome.replay.bundles.len(), 1);
}

/// Every single-byte change and every cut of a file with the new
/// records is an error or a clean early end, never a panic.
#[test]
fn damaged_status_and_event_records_are_errors() {
    let bytes = status_and_events(3);
    for at in 10..bytes.len() {
        for flip in [0x01u8, 0x80, 0xff] {
            let mut damaged = bytes.clone();
            damaged[at] ^= flip;
            if let Ok(outcome) = Replay::read(&damaged[..]) {
                assert!(outcome.replay.statuses.len() <= 3);
            }
        }
        let _ = Replay::read(&bytes[..at]);
    }
}

#[test]
fn bundles_out_of_order_are_invalid() {
    let mut writer = ReplayWriter::new(Vec::new(), &header()).unwrap();
    writer
        .write(&Record::Bundle {
            tick: Tick(1),
            bundle: bundle(1),
        })
        .unwrap();
    let outcome = Replay::read(&writer.finish("x").unwrap()[..]).unwrap();
    assert!(matches!(
        outcome.problem.map(|d| d.error),
        Some(ReplayError::Invalid { record: 1, .. })
    ));
}
