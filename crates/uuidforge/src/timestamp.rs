//! Instants decoded from UUIDs, with the precision their layout encodes.
//!
//! Every time-based layout stores a different unit: UUIDv7 milliseconds
//! (RFC 9562 §5.7), v1/v6 100-ns Gregorian ticks (§5.1, §5.6), v8 B.1 10-ns
//! ticks, the 2021 draft's binary fraction of a second, PostgreSQL 18's
//! 1/4096 ms. A [`Timestamp`] keeps the instant in Unix nanoseconds *and* that
//! precision, so it prints exactly the digits the UUID carries.

use std::fmt;

/// Offset between the Gregorian epoch (1582-10-15) and the Unix epoch in
/// 100-ns ticks (RFC 9562 §5.1): `0x01B21DD213814000`.
pub const GREGORIAN_TO_UNIX_TICKS: u64 = 0x01B2_1DD2_1381_4000;

/// The resolution a layout stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Precision {
    /// Whole seconds.
    Second,
    /// Milliseconds (UUIDv7, RFC 9562 §5.7).
    Millisecond,
    /// Microseconds.
    Microsecond,
    /// 100-ns ticks (UUIDv1 and v6).
    HundredNanoseconds,
    /// Nanoseconds.
    Nanosecond,
    /// A fixed tick in nanoseconds, e.g. 10 ns (RFC 9562 B.1) or 256 ns (Go).
    Tick {
        /// Nanoseconds per tick.
        nanos: u64,
    },
    /// `bits` binary fraction bits of a millisecond (RFC 9562 §6.2 Method 3).
    MillisecondFraction {
        /// Number of fraction bits (1..=12).
        bits: u8,
    },
}

impl Precision {
    /// Resolution in picoseconds (rounded up).
    pub const fn resolution_ps(self) -> u64 {
        match self {
            Precision::Second => 1_000_000_000_000,
            Precision::Millisecond => 1_000_000_000,
            Precision::Microsecond => 1_000_000,
            Precision::HundredNanoseconds => 100_000,
            Precision::Nanosecond => 1_000,
            Precision::Tick { nanos } => nanos * 1_000,
            Precision::MillisecondFraction { bits } => 1_000_000_000u64.div_ceil(1 << bits),
        }
    }

    /// Number of fractional-second digits to print: the coarsest decimal unit
    /// that resolves what the layout stores (at most 9), so no encoded
    /// information is hidden.
    ///
    /// ```
    /// use uuidforge::timestamp::Precision;
    /// assert_eq!(Precision::Millisecond.digits(), 3);
    /// assert_eq!(Precision::MillisecondFraction { bits: 12 }.digits(), 7); // 244 ns
    /// assert_eq!(Precision::HundredNanoseconds.digits(), 7);
    /// ```
    pub const fn digits(self) -> u8 {
        let resolution = self.resolution_ps();
        let mut digits = 0u8;
        let mut unit = 1_000_000_000_000u64;
        while digits < 9 && unit > resolution {
            unit /= 10;
            digits += 1;
        }
        digits
    }

    /// A short name: `s`, `ms`, `us`, `100ns`, `ns`, `10ns`, `1/4096ms`.
    pub fn name(self) -> String {
        match self {
            Precision::Second => "s".into(),
            Precision::Millisecond => "ms".into(),
            Precision::Microsecond => "us".into(),
            Precision::HundredNanoseconds => "100ns".into(),
            Precision::Nanosecond => "ns".into(),
            Precision::Tick { nanos } => format!("{nanos}ns"),
            Precision::MillisecondFraction { bits } => format!("1/{}ms", 1u32 << bits),
        }
    }
}

/// An instant decoded from a UUID: Unix nanoseconds (leap seconds excluded,
/// as in RFC 9562 §5.7) and the precision the layout encodes.
///
/// ```
/// use uuidforge::timestamp::{Precision, Timestamp};
/// let t = Timestamp::from_unix_ms(1645557742000);
/// assert_eq!(t.to_string(), "2022-02-22T19:22:22.000Z");
/// assert_eq!(t.precision, Precision::Millisecond);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Timestamp {
    /// Nanoseconds since 1970-01-01T00:00:00Z; negative before it (v1/v6
    /// reach back to 1582).
    pub unix_nanos: i128,
    /// What the source layout resolves.
    pub precision: Precision,
}

impl Timestamp {
    /// An instant with the given precision.
    pub const fn new(unix_nanos: i128, precision: Precision) -> Self {
        Timestamp {
            unix_nanos,
            precision,
        }
    }

    /// Milliseconds since the Unix epoch, millisecond precision.
    pub const fn from_unix_ms(ms: u64) -> Self {
        Timestamp::new(ms as i128 * 1_000_000, Precision::Millisecond)
    }

    /// A 60-bit count of 100-ns ticks since 1582-10-15 (UUIDv1/v6).
    ///
    /// ```
    /// use uuidforge::timestamp::Timestamp;
    /// // RFC 9562 A.1/A.5: 0x1EC9414C232AB00 is 2022-02-22T19:22:22Z.
    /// assert_eq!(Timestamp::from_gregorian_ticks(0x1EC9414C232AB00).to_string(),
    ///            "2022-02-22T19:22:22.0000000Z");
    /// ```
    pub const fn from_gregorian_ticks(ticks: u64) -> Self {
        let unix_ticks = ticks as i128 - GREGORIAN_TO_UNIX_TICKS as i128;
        Timestamp::new(unix_ticks * 100, Precision::HundredNanoseconds)
    }

    /// Whole milliseconds since the Unix epoch (floored).
    pub const fn unix_ms(&self) -> i128 {
        self.unix_nanos.div_euclid(1_000_000)
    }

    /// Whole seconds and the nanoseconds within the second.
    pub const fn seconds_and_nanos(&self) -> (i64, u32) {
        (
            self.unix_nanos.div_euclid(1_000_000_000) as i64,
            self.unix_nanos.rem_euclid(1_000_000_000) as u32,
        )
    }

    /// ISO 8601 / RFC 3339 in UTC, with exactly [`Precision::digits`]
    /// fractional digits (truncated, never rounded up).
    pub fn to_iso8601(&self) -> String {
        let (secs, nanos) = self.seconds_and_nanos();
        let digits = self.precision.digits() as usize;
        let date = match chrono::DateTime::from_timestamp(secs, 0) {
            Some(d) => d.format("%Y-%m-%dT%H:%M:%S").to_string(),
            None => return format!("{}ns since 1970-01-01T00:00:00Z", self.unix_nanos),
        };
        if digits == 0 {
            format!("{date}Z")
        } else {
            let frac = format!("{nanos:09}");
            format!("{date}.{}Z", &frac[..digits])
        }
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_iso8601())
    }
}

/// An instant a function takes as a UUIDv7's time: Unix milliseconds
/// (`u64`), a [`std::time::SystemTime`], or a chrono `DateTime` in any
/// time zone. Sub-millisecond parts are dropped (the instant's
/// millisecond is the one a UUIDv7 stores); an instant before 1970 is a
/// [`FieldError`](crate::error::FieldError) naming `time`, never a wrong
/// value.
///
/// ```
/// use std::time::{Duration, SystemTime, UNIX_EPOCH};
/// use uuidforge::timestamp::IntoUnixMs;
///
/// let at = UNIX_EPOCH + Duration::from_micros(1_645_557_742_000_999);
/// assert_eq!(at.into_unix_ms().unwrap(), 1_645_557_742_000);
/// let dt = chrono::DateTime::parse_from_rfc3339("2022-02-22T19:22:22+00:00").unwrap();
/// assert_eq!(dt.into_unix_ms().unwrap(), 1_645_557_742_000);
/// assert_eq!(1_645_557_742_000u64.into_unix_ms().unwrap(), 1_645_557_742_000);
/// assert_eq!((UNIX_EPOCH - Duration::from_secs(1)).into_unix_ms().unwrap_err().field, "time");
/// # let _ = SystemTime::now();
/// ```
pub trait IntoUnixMs {
    /// The instant's Unix millisecond.
    fn into_unix_ms(self) -> Result<u64, crate::error::FieldError>;
}

impl IntoUnixMs for u64 {
    fn into_unix_ms(self) -> Result<u64, crate::error::FieldError> {
        Ok(self)
    }
}

impl IntoUnixMs for std::time::SystemTime {
    fn into_unix_ms(self) -> Result<u64, crate::error::FieldError> {
        match self.duration_since(std::time::UNIX_EPOCH) {
            Ok(d) => {
                u64::try_from(d.as_millis()).map_err(|_| before_or_beyond(format!("{self:?}")))
            }
            Err(_) => Err(before_or_beyond(format!("{self:?}"))),
        }
    }
}

impl<Tz: chrono::TimeZone> IntoUnixMs for chrono::DateTime<Tz> {
    fn into_unix_ms(self) -> Result<u64, crate::error::FieldError> {
        (&self).into_unix_ms()
    }
}

impl<Tz: chrono::TimeZone> IntoUnixMs for &chrono::DateTime<Tz> {
    fn into_unix_ms(self) -> Result<u64, crate::error::FieldError> {
        u64::try_from(self.timestamp_millis())
            .map_err(|_| before_or_beyond(self.to_utc().to_rfc3339()))
    }
}

fn before_or_beyond(value: String) -> crate::error::FieldError {
    crate::error::FieldError::new("time", value, "an instant at or after 1970-01-01T00:00:00Z")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_follow_resolution() {
        assert_eq!(Precision::Second.digits(), 0);
        assert_eq!(Precision::Microsecond.digits(), 6);
        assert_eq!(Precision::Nanosecond.digits(), 9);
        assert_eq!(Precision::Tick { nanos: 10 }.digits(), 8);
        assert_eq!(Precision::Tick { nanos: 256 }.digits(), 7);
        assert_eq!(Precision::MillisecondFraction { bits: 10 }.digits(), 7);
        assert_eq!(Precision::MillisecondFraction { bits: 1 }.digits(), 4);
    }

    #[test]
    fn prints_truncated_digits_and_far_years() {
        let t = Timestamp::new(1_645_557_742_123_456_789, Precision::Microsecond);
        assert_eq!(t.to_string(), "2022-02-22T19:22:22.123456Z");
        let max_v7 = Timestamp::from_unix_ms((1 << 48) - 1);
        assert_eq!(max_v7.to_string(), "+10889-08-02T05:31:50.655Z");
        let gregorian_epoch = Timestamp::from_gregorian_ticks(0);
        assert_eq!(gregorian_epoch.to_string(), "1582-10-15T00:00:00.0000000Z");
        assert_eq!(gregorian_epoch.unix_ms(), -12219292800000);
    }
}
