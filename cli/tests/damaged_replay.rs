//! `lockstep-client replay FILE --verify --headless` on a replay damaged
//! in the middle, with intact records after the damage: it fails on one
//! line that says where the damage is, the last good tick, what follows
//! it, and how far the file verified; nothing on stdout, no panic. A
//! torn tail is said to be one.

use std::process::Output;

use lockstep_engine::replay::recorder::{solo_header, Recorder};
use lockstep_engine::{apply, Bots, Game, Setup};
use lockstep_protocol::{Bundle, PlayerId, Record, ReplayReader, RosterEntry};
use lockstep_tally::Tally;
use lockstep_testkit::{last_line, verify, TempDir};

/// A solo Tally game of two bots over 600 ticks, recorded with a hash
/// report every 15 ticks.
fn recorded() -> Vec<u8> {
    let players = vec![PlayerId(0), PlayerId(1)];
    let setup = Setup {
        seed: 9,
        tick_rate: 60,
        settings: (),
        players: players.clone(),
    };
    let roster = players
        .iter()
        .map(|&id| RosterEntry {
            id,
            name: format!("bot{id}"),
        })
        .collect();
    let header = solo_header::<Tally>(&setup, roster, 0);
    let mut recorder = Recorder::new(Vec::new(), &header, PlayerId(0)).expect("header");
    let mut game = Tally::start(&setup);
    let mut bots = Bots::<Tally>::new(setup.seed, &players);
    for _ in 0..600 {
        let bundle = Bundle {
            inputs: bots.inputs(&game),
            ..Bundle::default()
        };
        apply(&mut game, &bundle);
        recorder.tick(&bundle, &game).expect("record");
    }
    recorder.finish("done").expect("end")
}

/// Where each record of `file` starts, and the record.
fn records(file: &[u8]) -> Vec<(usize, Record)> {
    let mut reader = ReplayReader::new(file).expect("a replay");
    let (mut at, mut records) = (10, Vec::new());
    while let Some(record) = reader.next_record().expect("intact") {
        records.push((at, record));
        let len: [u8; 4] = file[at..at + 4].try_into().expect("4 bytes");
        at += 4 + u32::from_le_bytes(len) as usize + 4;
    }
    records
}

/// Verifies `bytes` written to `dir/name`; the failure's one line.
fn refused(dir: &TempDir, name: &str, bytes: &[u8]) -> (String, Output) {
    let path = dir.0.join(name);
    std::fs::write(&path, bytes).expect("write");
    let out = verify(&path, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!out.status.success(), "{name}: {stderr}");
    assert!(out.stdout.is_empty(), "{name}: {}", last_line(&out));
    assert!(!stderr.contains("panicked"), "{name}: {stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{name}: {stderr}");
    let prefix = format!("lockstep-client: {}: ", path.display());
    assert!(lines[0].starts_with(&prefix), "{name}: {stderr}");
    (lines[0][prefix.len()..].to_string(), out)
}

fn contains_all(line: &str, parts: &[String]) {
    for part in parts {
        assert!(line.contains(part.as_str()), "{part:?} not in {line}");
    }
}

#[test]
fn a_replay_damaged_mid_file_fails_verification_on_one_line_saying_where() {
    let dir = TempDir::new("damaged-replay");
    let bytes = recorded();
    let good = dir.0.join("good.lsreplay");
    std::fs::write(&good, &bytes).expect("write");
    let intact = verify(&good, &[]);
    assert!(intact.status.success());
    assert!(last_line(&intact).starts_with("final tick=600 hash="));

    let records = records(&bytes);
    // The bundle of tick 300, and the record after it.
    let index = records
        .iter()
        .position(|(_, record)| matches!(record, Record::Bundle { tick, .. } if tick.0 == 300))
        .expect("tick 300");
    let (start, next) = (records[index].0, records[index + 1].0);
    // 20 hash reports up to world tick 300 (every 15 ticks).
    let verified = "; 300 ticks before it verified (20 hash checks), none after it";

    let mut flipped = bytes.clone();
    flipped[start + 5] ^= 0x04;
    let (line, _) = refused(&dir, "flipped.lsreplay", &flipped);
    contains_all(
        &line,
        &[
            format!("the replay is corrupt at byte {start} (record {index}): checksum mismatch; "),
            "the last good tick before it is 299; it is mid-file, ".into(),
            format!(
                " intact records follow from byte {next} to the end (bundles of ticks 301 to 599)"
            ),
        ],
    );
    assert!(line.ends_with(verified), "{line}");

    let mut long = bytes.clone();
    long[start..start + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    let (line, _) = refused(&dir, "length.lsreplay", &long);
    contains_all(
        &line,
        &[
            format!("corrupt at byte {start} (record {index}): record length 4294967295 exceeds"),
            format!(
                "it is mid-file, {} bytes before the end: ",
                bytes.len() - start
            ),
            format!(" intact records follow from byte {next} to the end"),
        ],
    );
    assert!(line.ends_with(verified), "{line}");

    let mut missing = bytes[..start + 3].to_vec();
    missing.extend_from_slice(&bytes[start + 40..]);
    let (line, _) = refused(&dir, "missing.lsreplay", &missing);
    contains_all(
        &line,
        &[
            format!("at byte {start} (record {index})"),
            "the last good tick before it is 299; it is mid-file".into(),
        ],
    );
    assert!(line.ends_with(verified), "{line}");

    let (line, _) = refused(&dir, "torn.lsreplay", &bytes[..next - 3]);
    assert_eq!(
        line,
        format!(
            "the replay is truncated at byte {start}, inside record {index}; the last good tick \
             before it is 299; it is the file's tail: no intact record in its last {} bytes{verified}",
            next - 3 - start
        )
    );
}
