//! Arguments as the server hands them: a UUID in any storage form, a time
//! as `DATETIME` text or Unix seconds.

use chrono::NaiveDateTime;
use udf::SqlResult;
use uuid::Uuid;
use uuidforge::v7::MAX_UNIX_MS;

/// A UUID from an argument: 16 bytes (RFC order) or text in any spelling.
///
/// ```
/// use udf::SqlResult;
/// use uuidforge_mysql::input::uuid_of;
/// let id = uuid::uuid!("017f22e2-79b0-7cc3-98c4-dc0c0c07398f");
/// assert_eq!(uuid_of(&SqlResult::String(Some(b"017F22E279B07CC398C4DC0C0C07398F"))), Some(id));
/// assert_eq!(uuid_of(&SqlResult::String(Some(id.as_bytes()))), Some(id));
/// assert_eq!(uuid_of(&SqlResult::String(Some(b"not a uuid"))), None);
/// assert_eq!(uuid_of(&SqlResult::Int(Some(7))), None);
/// ```
pub fn uuid_of(arg: &SqlResult) -> Option<Uuid> {
    let SqlResult::String(Some(bytes)) = arg else {
        return None;
    };
    if let Ok(raw) = <[u8; 16]>::try_from(*bytes) {
        return Some(Uuid::from_bytes(raw));
    }
    uuidforge::parser::parse(std::str::from_utf8(bytes).ok()?.trim()).ok()
}

/// Sixteen bytes from an argument (`BINARY(16)`).
pub fn bytes_of(arg: &SqlResult) -> Option<[u8; 16]> {
    match arg {
        SqlResult::String(Some(bytes)) => <[u8; 16]>::try_from(*bytes).ok(),
        _ => None,
    }
}

/// Unix milliseconds from a time argument, within what a UUIDv7 holds
/// (1970 to 10889): `DATETIME` text (UTC; `YYYY-MM-DD[ HH:MM:SS[.ffffff]]`,
/// `T` allowed), or Unix seconds as an integer, a decimal (exact to the
/// millisecond, below it cut) or a double.
///
/// ```
/// use udf::SqlResult;
/// use uuidforge_mysql::input::unix_ms_of;
/// assert_eq!(unix_ms_of(&SqlResult::String(Some(b"2022-02-22 19:22:22.123"))), Some(1_645_557_742_123));
/// assert_eq!(unix_ms_of(&SqlResult::Decimal(Some("1645557742.1239"))), Some(1_645_557_742_123));
/// assert_eq!(unix_ms_of(&SqlResult::Int(Some(1_645_557_742))), Some(1_645_557_742_000));
/// assert_eq!(unix_ms_of(&SqlResult::Int(Some(-1))), None);
/// assert_eq!(unix_ms_of(&SqlResult::String(Some(b"yesterday"))), None);
/// ```
pub fn unix_ms_of(arg: &SqlResult) -> Option<u64> {
    let ms: i128 = match arg {
        SqlResult::Int(Some(seconds)) => i128::from(*seconds) * 1000,
        SqlResult::Real(Some(seconds)) if seconds.is_finite() && seconds.abs() < 1e15 => {
            (seconds * 1000.0).floor() as i128
        }
        SqlResult::Decimal(Some(text)) => decimal_ms(text)?,
        SqlResult::String(Some(bytes)) => datetime_ms(std::str::from_utf8(bytes).ok()?.trim())?,
        _ => return None,
    };
    u64::try_from(ms).ok().filter(|ms| *ms <= MAX_UNIX_MS)
}

/// `seconds[.fraction]` as milliseconds, the fraction cut below them.
fn decimal_ms(text: &str) -> Option<i128> {
    let text = text.trim();
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    if whole.is_empty() && fraction.is_empty()
        || whole.len() > 20
        || !whole
            .bytes()
            .chain(fraction.bytes())
            .all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let mut ms = whole.parse::<i128>().unwrap_or(0) * 1000;
    let mut third = fraction.bytes().chain(std::iter::repeat(b'0')).take(3);
    for scale in [100, 10, 1] {
        ms += i128::from(third.next().unwrap_or(b'0') - b'0') * scale;
    }
    Some(if negative { -ms } else { ms })
}

/// `DATETIME` text, taken as UTC.
fn datetime_ms(text: &str) -> Option<i128> {
    let parsed = ["%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%dT%H:%M:%S%.f"]
        .iter()
        .find_map(|f| NaiveDateTime::parse_from_str(text, f).ok())
        .or_else(|| {
            chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d")
                .ok()
                .and_then(|d| d.and_hms_opt(0, 0, 0))
        })?;
    Some(i128::from(parsed.and_utc().timestamp_millis()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_in_every_form_and_out_of_range() {
        let text = |t: &'static str| unix_ms_of(&SqlResult::String(Some(t.as_bytes())));
        assert_eq!(text("1970-01-01"), Some(0));
        assert_eq!(text("2022-02-22T19:22:22"), Some(1_645_557_742_000));
        assert_eq!(text("1969-12-31 23:59:59.999"), None);
        assert_eq!(text("10889-08-02 05:31:50.656"), None);
        assert_eq!(unix_ms_of(&SqlResult::Decimal(Some("0.0009"))), Some(0));
        assert_eq!(unix_ms_of(&SqlResult::Decimal(Some("1.5"))), Some(1500));
        assert_eq!(unix_ms_of(&SqlResult::Decimal(Some("-0.5"))), None);
        assert_eq!(unix_ms_of(&SqlResult::Decimal(Some("1e5"))), None);
        assert_eq!(unix_ms_of(&SqlResult::Decimal(Some("."))), None);
        assert_eq!(unix_ms_of(&SqlResult::Real(Some(f64::NAN))), None);
        assert_eq!(unix_ms_of(&SqlResult::Real(Some(2.25))), Some(2250));
        assert_eq!(unix_ms_of(&SqlResult::Int(Some(i64::MAX))), None);
        assert_eq!(unix_ms_of(&SqlResult::Int(None)), None);
    }
}
