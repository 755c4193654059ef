//! Milliseconds as people write them (`16`, `33.334`), read into exact
//! nanoseconds and written back.
//!
//! Parsed as decimal text rather than through a float, so `33.334` is
//! 33 334 000 ns exactly and frames of 33.334, 33.333 and 33.333 ms add up
//! to exactly 100 ms: the seeds' worked examples depend on such sums.

/// Why a millisecond value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseMsError {
    /// Nothing where a number was expected.
    #[error("expected a number of milliseconds, got nothing")]
    Empty,
    /// Not a plain decimal number.
    #[error("{0:?} is not a number of milliseconds (write e.g. 16 or 33.334)")]
    NotANumber(String),
    /// More than six decimals: finer than a nanosecond.
    #[error("{0:?} is finer than a nanosecond (at most 6 decimals)")]
    TooPrecise(String),
    /// More than the `u64` nanoseconds a clock can hold.
    #[error("{0:?} milliseconds is too long")]
    TooLong(String),
}

/// Nanoseconds per millisecond.
const NS_PER_MS: u64 = 1_000_000;

/// Reads `"33.334"` as 33 334 000 nanoseconds.
pub fn parse_ms(text: &str) -> Result<u64, ParseMsError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(ParseMsError::Empty);
    }
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() && fraction.is_empty() || !digits(whole) || !digits(fraction) {
        return Err(ParseMsError::NotANumber(text.to_owned()));
    }
    if fraction.len() > 6 {
        return Err(ParseMsError::TooPrecise(text.to_owned()));
    }
    let too_long = || ParseMsError::TooLong(text.to_owned());
    let whole_ms: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().map_err(|_| too_long())?
    };
    let fraction_ns: u64 = format!("{fraction:0<6}").parse().unwrap_or(0);
    whole_ms
        .checked_mul(NS_PER_MS)
        .and_then(|ns| ns.checked_add(fraction_ns))
        .ok_or_else(too_long)
}

/// Writes nanoseconds as milliseconds with `decimals` decimals.
pub fn format_ms(ns: u64, decimals: usize) -> String {
    format!("{:.decimals$}", ns as f64 / NS_PER_MS as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_are_read_exactly() {
        assert_eq!(parse_ms("16"), Ok(16_000_000));
        assert_eq!(parse_ms("33.334"), Ok(33_334_000));
        assert_eq!(parse_ms("0.000001"), Ok(1));
        assert_eq!(parse_ms(".5"), Ok(500_000));
        assert_eq!(parse_ms(" 2. "), Ok(2_000_000));
        let thirds = ["33.334", "33.333", "33.333"].map(|ms| parse_ms(ms).unwrap());
        assert_eq!(thirds.iter().sum::<u64>(), 100_000_000);
    }

    #[test]
    fn anything_else_is_refused_with_a_reason() {
        assert_eq!(parse_ms(""), Err(ParseMsError::Empty));
        assert_eq!(parse_ms("-1"), Err(ParseMsError::NotANumber("-1".into())));
        assert_eq!(parse_ms("1e3"), Err(ParseMsError::NotANumber("1e3".into())));
        assert_eq!(parse_ms("."), Err(ParseMsError::NotANumber(".".into())));
        assert_eq!(
            parse_ms("0.0000001"),
            Err(ParseMsError::TooPrecise("0.0000001".into()))
        );
        let huge = "99999999999999999999";
        assert_eq!(parse_ms(huge), Err(ParseMsError::TooLong(huge.into())));
    }

    #[test]
    fn nanoseconds_are_written_as_milliseconds() {
        assert_eq!(format_ms(16_666_667, 1), "16.7");
        assert_eq!(format_ms(0, 2), "0.00");
    }
}
