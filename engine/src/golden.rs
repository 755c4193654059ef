//! Golden tables: each game's file of offline games and the hash each must
//! end on (`games/balls/golden-hashes.txt`, `games/topple/golden-hashes.txt`).
//! A row is `players seed setting ticks hash`, where `setting` is the
//! game's one sized setting (balls, bodies); `#` lines and blank lines are
//! skipped. The games' tests, `make determinism` and `make cross` read
//! the same files.

use std::fmt;

/// One row of a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    /// Players, each driven by a bot.
    pub players: u8,
    /// World and bot seed.
    pub seed: u64,
    /// The game's sized setting (the ball game's balls, Topple's bodies).
    pub setting: u16,
    /// Ticks simulated.
    pub ticks: u32,
    /// The final hash.
    pub hash: u64,
}

/// A line of a table that is not a comment, a blank or a valid row.
#[derive(Debug, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based, as an editor shows it.
    pub line: usize,
    /// What is wrong with it.
    pub reason: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "golden-hashes.txt line {}: {}", self.line, self.reason)
    }
}

/// The rows of `table`, whose setting column is called `setting` in
/// messages.
pub fn parse(table: &str, setting: &str) -> Result<Vec<Row>, ParseError> {
    let mut rows = Vec::new();
    for (index, line) in table.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let row = parse_row(line, setting).map_err(|reason| ParseError {
            line: index + 1,
            reason: format!("{reason} in {line:?}"),
        })?;
        rows.push(row);
    }
    Ok(rows)
}

fn parse_row(line: &str, setting_name: &str) -> Result<Row, String> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let [players, seed, setting, ticks, hash] = fields[..] else {
        return Err(format!(
            "expected 5 columns (players seed {setting_name} ticks hash), found {}",
            fields.len()
        ));
    };
    let number = |name: &str, text: &str| format!("{name} {text:?} is not a valid number");
    Ok(Row {
        players: players.parse().map_err(|_| number("players", players))?,
        seed: seed.parse().map_err(|_| number("seed", seed))?,
        setting: setting.parse().map_err(|_| number(setting_name, setting))?,
        ticks: ticks.parse().map_err(|_| number("ticks", ticks))?,
        hash: parse_hash(hash)?,
    })
}

/// Exactly the form `sim` prints, so rows can be pasted both ways and a
/// typo such as a dropped digit cannot pass as a different hash.
fn parse_hash(text: &str) -> Result<u64, String> {
    let well_formed =
        text.len() == 16 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    let invalid = || format!("hash {text:?} is not 16 lower-case hex digits");
    if !well_formed {
        return Err(invalid());
    }
    u64::from_str_radix(text, 16).map_err(|_| invalid())
}

/// Checks every row against `actual(row)`; on any difference, the report
/// to panic with: the table with both hashes, and the rows to paste into
/// `file` if the change is intended and reviewed.
pub fn check(
    rows: &[Row],
    file: &str,
    setting: &str,
    actual: impl Fn(&Row) -> u64,
) -> Result<(), String> {
    let results: Vec<(Row, u64)> = rows.iter().map(|row| (*row, actual(row))).collect();
    let differing = results.iter().filter(|(row, got)| row.hash != *got).count();
    if differing == 0 {
        return Ok(());
    }
    let mut report = format!(
        "{differing} of {} golden scenarios end on another hash: the simulation's behaviour \
         changed.\n\n{:>7} {:>20} {:>6} {:>6}  {:16}  {:16}\n",
        results.len(),
        "players",
        "seed",
        setting,
        "ticks",
        "expected",
        "actual"
    );
    for (row, got) in &results {
        let mark = if row.hash == *got { "" } else { "  <- differs" };
        report.push_str(&format!(
            "{:>7} {:>20} {:>6} {:>6}  {:016x}  {got:016x}{mark}\n",
            row.players, row.seed, row.setting, row.ticks, row.hash
        ));
    }
    report.push_str(&format!(
        "\nIf the change is intended, review it and replace the rows of {file} with:\n"
    ));
    for (row, got) in &results {
        report.push_str(&format!(
            "{:<10} {:<21} {:<6} {:<6} {got:016x}\n",
            row.players, row.seed, row.setting, row.ticks
        ));
    }
    Err(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_read_between_comments_and_blank_lines() {
        let table = "# players seed balls ticks hash\n\n  4 1 24 600 5b2ebfd7d198f54b  \n# end\n";
        assert_eq!(
            parse(table, "balls"),
            Ok(vec![Row {
                players: 4,
                seed: 1,
                setting: 24,
                ticks: 600,
                hash: 0x5b2e_bfd7_d198_f54b,
            }])
        );
    }

    #[test]
    fn a_malformed_line_fails_with_its_line_number() {
        let table = "# header\n4 1 24 600 5b2ebfd7d198f54b\n4 1 24 600\n";
        let error = parse(table, "balls").expect_err("line 3 has no hash");
        assert_eq!(error.line, 3);
        assert!(error.to_string().contains("line 3"), "{error}");
        assert!(
            error
                .reason
                .contains("expected 5 columns (players seed balls"),
            "{error}"
        );
    }

    #[test]
    fn a_field_that_is_not_a_number_fails_naming_its_column() {
        let error =
            parse("4 one 24 600 5b2ebfd7d198f54b", "bodies").expect_err("the seed is a word");
        assert_eq!(error.line, 1);
        assert!(error.reason.contains("seed \"one\""), "{error}");
        let error = parse("4 1 many 600 5b2ebfd7d198f54b", "bodies").unwrap_err();
        assert!(error.reason.contains("bodies \"many\""), "{error}");
    }

    #[test]
    fn hashes_must_be_16_lower_case_hex_digits_as_sim_prints_them() {
        for hash in [
            "5B2EBFD7D198F54B",
            "5b2ebfd7d198f54",
            "0x5b2ebfd7d198f5",
            "+b2ebfd7d198f54b",
        ] {
            let error = parse(&format!("4 1 24 600 {hash}"), "balls").expect_err(hash);
            assert!(error.reason.contains("16 lower-case hex digits"), "{error}");
        }
    }

    #[test]
    fn a_differing_row_is_reported_with_the_rows_to_paste() {
        let rows = parse(
            "2 3 24 10 0000000000000001\n1 1 0 5 0000000000000002",
            "balls",
        )
        .unwrap();
        assert_eq!(check(&rows, "t.txt", "balls", |row| row.hash), Ok(()));
        let report = check(&rows, "t.txt", "balls", |row| {
            row.hash + u64::from(row.players == 2)
        })
        .unwrap_err();
        assert!(report.starts_with("1 of 2 golden scenarios"), "{report}");
        assert!(
            report.contains("<- differs") && report.contains("rows of t.txt"),
            "{report}"
        );
        assert!(report.contains("0000000000000002\n"), "{report}");
    }
}
