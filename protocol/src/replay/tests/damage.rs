//! Damage anywhere in a file: cuts, flipped bytes, missing and zeroed
//! bytes, each found at its record and told apart as a tail or mid-file.

use super::*;

#[test]
fn every_cut_keeps_the_records_before_it_and_says_where() {
    let bytes = sample(5);
    for cut in 10..bytes.len() {
        match Replay::read(&bytes[..cut]) {
            Ok(outcome) => {
                // A cut on a record boundary is a clean (early) end; a
                // cut inside one is reported with its offset, as the
                // file's tail.
                if let Some(problem) = outcome.problem {
                    let ReplayError::Truncated { offset, .. } = problem.error else {
                        panic!("cut at {cut}: {problem}");
                    };
                    assert!(offset < cut as u64);
                    assert_eq!(problem.offset, offset);
                    assert_eq!(problem.bytes, cut as u64 - offset);
                    assert!(problem.is_tail(), "cut at {cut}: {problem}");
                    assert_eq!(outcome.valid_len, offset);
                }
                assert!(outcome.replay.bundles.len() <= 5);
            }
            Err(ReplayError::Truncated { .. }) => {}
            Err(e) => panic!("cut at {cut}: {e}"),
        }
    }
}

#[test]
fn a_flipped_byte_is_reported_as_corruption_at_its_record() {
    let bytes = sample(5);
    let mut damaged = bytes.clone();
    // Inside the body of the third record (header, bundle 0, bundle 1).
    let target = damaged.len() - 40;
    damaged[target] ^= 0x55;
    let outcome = Replay::read(&damaged[..]).unwrap();
    let Some(ReplayError::Corrupt { record, offset, .. }) = outcome.problem.map(|d| d.error) else {
        panic!("not corruption");
    };
    assert!(offset <= target as u64);
    assert_eq!(outcome.replay.bundles.len() as u64, record - 1);
}

/// Where each record of a well-formed `file` starts (the header's
/// first), and the end of the file last.
fn record_starts(file: &[u8]) -> Vec<usize> {
    let mut starts = vec![10];
    while let Some(len) = file[*starts.last().unwrap()..].first_chunk::<4>() {
        let next = starts.last().unwrap() + 4 + u32::from_le_bytes(*len) as usize + 4;
        starts.push(next);
    }
    starts
}

/// Any byte of any record after the header changed, in its length, body
/// or checksum: the damage is found at that record, with the ticks before
/// it, and called the file's tail exactly when it is in the last record.
/// When the length was kept, the very next record is found intact, and
/// every record after it, to the end.
#[test]
fn every_damaged_byte_is_found_at_its_record_and_mid_file_unless_it_is_the_last() {
    let bytes = status_and_events(4);
    let starts = record_starts(&bytes);
    let records = starts.len() - 1;
    let mut reader = ReplayReader::new(&bytes[..]).unwrap();
    let ticks: Vec<Option<Tick>> = std::iter::from_fn(|| reader.next_record().unwrap())
        .map(|record| match record {
            Record::Bundle { tick, .. } => Some(tick),
            _ => None,
        })
        .collect();
    for (index, span) in starts.windows(2).enumerate().skip(1) {
        let (start, end) = (span[0], span[1]);
        let last = index == records - 1;
        for at in start..end {
            for flip in [0x01u8, 0x80, 0xff] {
                let mut damaged = bytes.clone();
                damaged[at] ^= flip;
                let outcome = Replay::read(&damaged[..]).unwrap();
                let said = format!("byte {at} ^ {flip:#x}");
                let damage = outcome.problem.expect(&said);
                assert_eq!(damage.offset, start as u64, "{said}: {damage}");
                assert_eq!(damage.record, index as u64, "{said}: {damage}");
                assert_eq!(outcome.valid_len, start as u64, "{said}");
                assert_eq!(damage.ticks as usize, outcome.replay.bundles.len());
                assert_eq!(damage.bytes, (bytes.len() - start) as u64, "{said}");
                assert_eq!(damage.is_tail(), last, "{said}: {damage}");
                if last {
                    continue;
                }
                let After::Records {
                    from,
                    count,
                    until,
                    bundles,
                } = damage.after
                else {
                    panic!("{said}: {damage}");
                };
                assert_eq!(until, None, "{said}: {damage}");
                let found = starts
                    .iter()
                    .position(|&s| s as u64 == from)
                    .unwrap_or_else(|| panic!("{said}: {damage} is not at a record"));
                assert!(found > index, "{said}: {damage}");
                assert_eq!(count as usize, records - found, "{said}: {damage}");
                let after: Vec<Tick> = ticks[found..].iter().flatten().copied().collect();
                let expected = after.first().zip(after.last()).map(|(a, b)| (*a, *b));
                assert_eq!(bundles, expected, "{said}: {damage}");
                if at >= start + 4 {
                    assert_eq!(found, index + 1, "{said}: {damage}");
                }
            }
        }
    }
}

/// A chunk of bytes missing from the middle of the file (a bad copy):
/// reading stops at or before it, and when whole records come after it
/// the damage is never taken for a torn tail.
#[test]
fn bytes_missing_from_the_middle_are_never_taken_for_a_tail() {
    let bytes = status_and_events(4);
    let starts = record_starts(&bytes);
    let header_end = starts[1];
    for len in [1, 3, 4, 9, 17, 40] {
        for at in header_end..bytes.len() - len {
            let mut cut = bytes[..at].to_vec();
            cut.extend_from_slice(&bytes[at + len..]);
            let said = format!("{len} bytes missing at {at}");
            let outcome = Replay::read(&cut[..]).unwrap();
            // Whole records missing are noticed at the first bundle out
            // of order, or not at all (a hash report, a status sample);
            // part of one, at once.
            let whole_records = starts.contains(&at) && starts.contains(&(at + len));
            let Some(damage) = outcome.problem else {
                assert!(whole_records, "{said}");
                continue;
            };
            if !whole_records {
                assert!(damage.offset <= at as u64, "{said}: {damage}");
            }
            let whole_after = starts
                .iter()
                .any(|&s| s >= at + len && s < bytes.len() && (s - len) as u64 > damage.offset);
            if whole_after {
                assert!(!damage.is_tail(), "{said}: {damage}");
            }
        }
    }
}

/// What a filesystem may leave after a crash: the file's size grew but
/// its last bytes are zeros. No record is made of zeros, so it is a tail.
#[test]
fn zeros_at_the_end_are_a_tail() {
    let mut bytes = sample(3);
    let good = bytes.len();
    bytes.extend_from_slice(&[0; 64]);
    let outcome = Replay::read(&bytes[..]).unwrap();
    let damage = outcome.problem.unwrap();
    assert!(damage.is_tail(), "{damage}");
    assert_eq!(outcome.valid_len, good as u64);
    assert_eq!(damage.bytes, 64);
}

/// What a reader of the message needs: where, which record, the last
/// good tick, and whether the rest of the file is a tail or holds
/// intact records.
#[test]
fn the_damage_says_where_it_is_and_what_follows() {
    let bytes = sample(5);
    let starts = record_starts(&bytes);
    // Record 3 is the bundle of tick 2; four records follow it.
    let (start, next) = (starts[3], starts[4]);
    let mut damaged = bytes.clone();
    damaged[start + 5] ^= 0x40;
    let damage = Replay::read(&damaged[..]).unwrap().problem.unwrap();
    assert_eq!(damage.last_good_tick(), Some(Tick(1)));
    assert_eq!(
        damage.to_string(),
        format!(
            "the replay is corrupt at byte {start} (record 3): checksum mismatch; the last good \
             tick before it is 1; it is mid-file, {} bytes before the end: 4 intact records \
             follow from byte {next} to the end (bundles of ticks 3 to 4)",
            bytes.len() - start
        )
    );
    let cut = &bytes[..next - 2];
    let damage = Replay::read(cut).unwrap().problem.unwrap();
    assert_eq!(
        damage.to_string(),
        format!(
            "the replay is truncated at byte {start}, inside record 3; the last good tick \
             before it is 1; it is the file's tail: no intact record in its last {} bytes",
            next - 2 - start
        )
    );
    // A length that runs past the end of the file mid-file is damage to
    // the length, not a cut.
    let mut damaged = bytes.clone();
    damaged[start..start + 4].copy_from_slice(&1000u32.to_le_bytes());
    let damage = Replay::read(&damaged[..]).unwrap().problem.unwrap();
    assert!(
        damage.to_string().starts_with(&format!(
            "the replay is corrupt at byte {start} (record 3): record length 1000 runs past the \
             end of the file; the last good tick before it is 1; it is mid-file"
        )),
        "{damage}"
    );
    let first = starts[1];
    let mut damaged = bytes.clone();
    damaged[first + 4] ^= 0x40;
    let damage = Replay::read(&damaged[..]).unwrap().problem.unwrap();
    assert!(
        damage
            .to_string()
            .contains("(record 1): checksum mismatch; no whole tick before it; it is mid-file"),
        "{damage}"
    );
}

/// A crafted file that makes every byte position look like the start of
/// a record of the largest size: the search stops at its budget, and what
/// it could not search is not called a tail.
#[test]
fn a_search_too_costly_is_given_up_and_not_called_a_tail() {
    let mut bytes = sample(1);
    let len = (MAX_RECORD_SIZE as u32).to_le_bytes();
    for _ in 0..MAX_RECORD_SIZE / 4 + 300 {
        bytes.extend_from_slice(&len);
    }
    let damage = Replay::read(&bytes[..]).unwrap().problem.unwrap();
    assert_eq!(damage.after, After::Unsearched, "{damage}");
    assert!(!damage.is_tail());
}
