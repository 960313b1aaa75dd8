//! Boundary UUIDv7 values and partition keys: turning times into UUID ranges
//! that a `WHERE id >= … AND id < …` or a `PARTITION BY RANGE (id)` can use
//! (RFC 9562 §6.11: v7 sorts as bytes; PostgreSQL compares `uuid` as bytes).
//!
//! A partition key is the left `bits` bits of a UUIDv7, so it is a prefix of
//! the millisecond timestamp and needs no calendar arithmetic. Each key covers
//! `2^(48 - bits)` milliseconds:
//!
//! | bits | span of one key | keys until 10889 AD |
//! |---|---|---|
//! | 12 | 2^36 ms ≈ 2.18 years | 4 096 |
//! | 13 | 2^35 ms ≈ 1.09 years | 8 192 |
//! | 14 | 2^34 ms ≈ 198.8 days | 16 384 |
//! | 15 | 2^33 ms ≈ 99.4 days | 32 768 |
//! | 16 | 2^32 ms ≈ 49.7 days | 65 536 |
//! | **17** | **2^31 ms ≈ 24.9 days (about a month)** | 131 072 |
//! | 18 | 2^30 ms ≈ 12.4 days | 262 144 |
//! | 19 | 2^29 ms ≈ 6.2 days | 524 288 |
//! | 20 | 2^28 ms ≈ 3.1 days | 1 048 576 |
//! | 22 | 2^26 ms ≈ 18.6 hours | 4 194 304 |
//! | 24 | 2^24 ms ≈ 4.7 hours | 16 777 216 |
//!
//! For roughly monthly partitions take 17 bits (24.9 days) or 16 (49.7 days).

use crate::error::FieldError;
use crate::fmt::to_canonical_string;
use crate::timestamp::IntoUnixMs;
use crate::v7::{self, MAX_UNIX_MS};
use uuid::Uuid;

/// The lowest UUIDv7 of a millisecond: `rand_a` and `rand_b` all zero.
/// The instant is Unix milliseconds, a `SystemTime` or a chrono
/// `DateTime` ([`IntoUnixMs`]).
///
/// ```
/// use std::time::{Duration, UNIX_EPOCH};
/// let lo = uuidforge::bounds::lowest_v7(1_645_557_742_000u64).unwrap();
/// assert_eq!(lo.to_string(), "017f22e2-79b0-7000-8000-000000000000");
/// let at = UNIX_EPOCH + Duration::from_millis(1_645_557_742_000);
/// assert_eq!(uuidforge::bounds::lowest_v7(at).unwrap(), lo);
/// ```
pub fn lowest_v7(at: impl IntoUnixMs) -> Result<Uuid, FieldError> {
    v7::from_unix_ms(at.into_unix_ms()?, 0, 0)
}

/// The highest UUIDv7 of a millisecond: `rand_a` and `rand_b` all ones.
///
/// ```
/// let at = chrono::DateTime::parse_from_rfc3339("2022-02-22T19:22:22Z").unwrap();
/// let hi = uuidforge::bounds::highest_v7(at).unwrap();
/// assert_eq!(hi.to_string(), "017f22e2-79b0-7fff-bfff-ffffffffffff");
/// ```
pub fn highest_v7(at: impl IntoUnixMs) -> Result<Uuid, FieldError> {
    v7::from_unix_ms(at.into_unix_ms()?, 0xfff, v7::MAX_RAND_B)
}

/// A half-open range of UUIDs `[start, end)`; `end = None` means "no upper
/// bound" (the range reaches the top of the UUID space).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct UuidRange {
    /// Inclusive lower bound.
    pub start: Uuid,
    /// Exclusive upper bound, or `None` for unbounded.
    pub end: Option<Uuid>,
}

impl UuidRange {
    /// Whether `id` lies in the range.
    pub fn contains(&self, id: &Uuid) -> bool {
        *id >= self.start && self.end.is_none_or(|e| *id < e)
    }

    /// An SQL predicate on `column` (an already quoted identifier) with the
    /// bounds as literals, e.g. `"id" >= '…' AND "id" < '…'`.
    pub fn sql_predicate(&self, quoted_column: &str) -> String {
        let lo = format!("{quoted_column} >= '{}'", to_canonical_string(&self.start));
        match self.end {
            Some(e) => format!("{lo} AND {quoted_column} < '{}'", to_canonical_string(&e)),
            None => lo,
        }
    }
}

/// Half-open UUID bounds of the range `[from, to)`: every UUIDv7 whose
/// timestamp is in the range, and no other, lies in `[lowest_v7(from),
/// lowest_v7(to))`. The instants are Unix milliseconds, `SystemTime`s or
/// chrono `DateTime`s ([`IntoUnixMs`]); `to` may be one millisecond past
/// the last a UUIDv7 holds, for a range with no upper bound.
///
/// ```
/// use uuidforge::bounds::{highest_v7, lowest_v7, v7_range};
/// let r = v7_range(1000u64, 2000u64).unwrap();
/// assert!(r.contains(&highest_v7(1999u64).unwrap()));
/// assert!(!r.contains(&lowest_v7(2000u64).unwrap()));
///
/// // January 2024, for `WHERE id >= $1 AND id < $2`:
/// use chrono::{TimeZone, Utc};
/// let january = v7_range(
///     Utc.with_ymd_and_hms(2024, 1, 1, 0, 0, 0).unwrap(),
///     Utc.with_ymd_and_hms(2024, 2, 1, 0, 0, 0).unwrap(),
/// )
/// .unwrap();
/// assert_eq!(january.start.to_string(), "018cc251-f400-7000-8000-000000000000");
/// ```
pub fn v7_range(from: impl IntoUnixMs, to: impl IntoUnixMs) -> Result<UuidRange, FieldError> {
    let from_ms = from
        .into_unix_ms()
        .map_err(|e| FieldError { field: "from", ..e })?;
    let to_ms = to
        .into_unix_ms()
        .map_err(|e| FieldError { field: "to", ..e })?;
    if from_ms > to_ms {
        return Err(FieldError::new(
            "to",
            to_ms,
            format!("a time not before from ({from_ms} ms)"),
        ));
    }
    let start = lowest_v7(from_ms).map_err(|e| FieldError { field: "from", ..e })?;
    let end = match to_ms {
        ms if ms <= MAX_UNIX_MS => Some(lowest_v7(ms)?),
        ms if ms == MAX_UNIX_MS + 1 => None,
        ms => {
            return Err(FieldError::new(
                "to",
                ms,
                format!("0..={} ms", MAX_UNIX_MS + 1),
            ))
        }
    };
    Ok(UuidRange { start, end })
}

/// Checks a partition width.
fn check_bits(bits: u8) -> Result<(), FieldError> {
    if !(1..=48).contains(&bits) {
        return Err(FieldError::new("bits", bits, "1..=48"));
    }
    Ok(())
}

/// Milliseconds covered by one key of `bits` bits: `2^(48 - bits)`.
///
/// ```
/// assert_eq!(uuidforge::bounds::key_span_ms(17).unwrap(), 2_147_483_648); // ≈ 24.9 days
/// ```
pub fn key_span_ms(bits: u8) -> Result<u64, FieldError> {
    check_bits(bits)?;
    Ok(1 << (48 - bits))
}

/// The partition key of a UUID: its left `bits` bits (1..=48).
///
/// ```
/// let id = uuid::uuid!("017f22e2-79b0-7cc3-98c4-dc0c0c07398f");
/// assert_eq!(uuidforge::bounds::partition_key(&id, 16).unwrap(), 0x017f);
/// ```
pub fn partition_key(uuid: &Uuid, bits: u8) -> Result<u64, FieldError> {
    check_bits(bits)?;
    Ok((uuid.as_u128() >> (128 - bits as u32)) as u64)
}

/// The partition key of an instant, without making a UUID.
///
/// ```
/// assert_eq!(uuidforge::bounds::partition_key_at(0x017f22e279b0u64, 16).unwrap(), 0x017f);
/// let now = uuidforge::bounds::partition_key_at(std::time::SystemTime::now(), 17).unwrap();
/// assert!(now > 0);
/// ```
pub fn partition_key_at(at: impl IntoUnixMs, bits: u8) -> Result<u64, FieldError> {
    check_bits(bits)?;
    let unix_ms = at.into_unix_ms()?;
    FieldError::check_max("unix_ms", unix_ms as u128, MAX_UNIX_MS as u128)?;
    Ok(unix_ms >> (48 - bits))
}

/// The UUID range a key covers: `[key << (128 - bits), (key + 1) << (128 -
/// bits))`, unbounded above for the last key. The bounds are not valid v7
/// values themselves; they bracket every v7 (and every other UUID) with
/// that prefix.
///
/// ```
/// let r = uuidforge::bounds::partition_range(0x017f, 16).unwrap();
/// assert_eq!(r.start.to_string(), "017f0000-0000-0000-0000-000000000000");
/// assert_eq!(r.end.unwrap().to_string(), "01800000-0000-0000-0000-000000000000");
/// ```
pub fn partition_range(key: u64, bits: u8) -> Result<UuidRange, FieldError> {
    check_bits(bits)?;
    let keys = 1u128 << bits;
    if key as u128 >= keys {
        return Err(FieldError::new("key", key, format!("0..={}", keys - 1)));
    }
    let shift = 128 - bits as u32;
    let start = Uuid::from_u128((key as u128) << shift);
    let end = (key as u128 + 1 < keys).then(|| Uuid::from_u128((key as u128 + 1) << shift));
    Ok(UuidRange { start, end })
}

/// Quotes an SQL identifier (doubling embedded quotes), schema-qualified
/// names given as separate parts.
pub fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// One partition of a table partitioned by UUIDv7 key prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partition {
    /// The key (left `bits` bits).
    pub key: u64,
    /// Its UUID range.
    pub range: UuidRange,
    /// First millisecond it covers.
    pub from_ms: u64,
    /// First millisecond after it.
    pub to_ms: u64,
}

/// The partitions of `bits` bits that cover `[from, to)` (instants as
/// [`IntoUnixMs`] takes them).
///
/// ```
/// let parts = uuidforge::bounds::partitions(17, 0u64, 2u64 * (1 << 31)).unwrap();
/// assert_eq!(parts.len(), 2);
/// ```
pub fn partitions(
    bits: u8,
    from: impl IntoUnixMs,
    to: impl IntoUnixMs,
) -> Result<Vec<Partition>, FieldError> {
    let span = key_span_ms(bits)?;
    let from_ms = from
        .into_unix_ms()
        .map_err(|e| FieldError { field: "from", ..e })?;
    let to_ms = to
        .into_unix_ms()
        .map_err(|e| FieldError { field: "to", ..e })?;
    v7_range(from_ms, to_ms)?;
    if from_ms == to_ms {
        return Ok(Vec::new());
    }
    let first = from_ms >> (48 - bits);
    let last = (to_ms - 1) >> (48 - bits);
    const MAX_PARTITIONS: u64 = 100_000;
    if last - first >= MAX_PARTITIONS {
        return Err(FieldError::new(
            "bits",
            bits,
            format!(
                "fewer bits: the range needs {} partitions, at most {MAX_PARTITIONS}",
                last - first + 1
            ),
        ));
    }
    (first..=last)
        .map(|key| {
            Ok(Partition {
                key,
                range: partition_range(key, bits)?,
                from_ms: key * span,
                to_ms: (key + 1) * span,
            })
        })
        .collect()
}

/// `CREATE TABLE … PARTITION OF … FOR VALUES FROM (…) TO (…)` for each
/// partition, naming them `{table}_p{key in hex}`. Identifiers are quoted;
/// `schema` may be empty.
///
/// ```
/// let parts = uuidforge::bounds::partitions(16, 0x017f22e279b0u64, 0x017f22e279b1u64).unwrap();
/// let ddl = uuidforge::bounds::partition_ddl("public", "events", 16, &parts);
/// assert_eq!(ddl[0], "CREATE TABLE \"public\".\"events_p017f\" PARTITION OF \"public\".\"events\" \
///     FOR VALUES FROM ('017f0000-0000-0000-0000-000000000000') TO ('01800000-0000-0000-0000-000000000000');");
/// ```
pub fn partition_ddl(schema: &str, table: &str, bits: u8, parts: &[Partition]) -> Vec<String> {
    let qualify = |name: &str| {
        if schema.is_empty() {
            quote_ident(name)
        } else {
            format!("{}.{}", quote_ident(schema), quote_ident(name))
        }
    };
    let digits = (bits as usize).div_ceil(4);
    parts
        .iter()
        .map(|p| {
            let to = match p.range.end {
                Some(e) => format!("'{}'", to_canonical_string(&e)),
                None => "MAXVALUE".to_string(),
            };
            format!(
                "CREATE TABLE {} PARTITION OF {} FOR VALUES FROM ('{}') TO ({to});",
                qualify(&format!("{table}_p{:0digits$x}", p.key)),
                qualify(table),
                to_canonical_string(&p.range.start),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn range_holds_exactly_the_v7_of_its_milliseconds(
            from in 0u64..(1 << 47), len in 0u64..10_000, ms in 0u64..(1 << 47), a in 0u16..4096, b in 0..=v7::MAX_RAND_B
        ) {
            let r = v7_range(from, from + len).unwrap();
            let id = v7::from_unix_ms(ms, a, b).unwrap();
            prop_assert_eq!(r.contains(&id), ms >= from && ms < from + len);
        }

        #[test]
        fn keys_partition_the_timeline(ms in 0..=MAX_UNIX_MS, bits in 1u8..=48, a in 0u16..4096, b in 0..=v7::MAX_RAND_B) {
            let id = v7::from_unix_ms(ms, a, b).unwrap();
            let key = partition_key(&id, bits).unwrap();
            prop_assert_eq!(key, partition_key_at(ms, bits).unwrap());
            let r = partition_range(key, bits).unwrap();
            prop_assert!(r.contains(&id));
            if key > 0 { prop_assert!(!partition_range(key - 1, bits).unwrap().contains(&id)); }
            if (key as u128) + 1 < (1u128 << bits) { prop_assert!(!partition_range(key + 1, bits).unwrap().contains(&id)); }
            let span = key_span_ms(bits).unwrap();
            prop_assert!(key * span <= ms && ms < (key + 1) * span);
        }
    }

    #[test]
    fn errors_name_the_argument() {
        assert_eq!(v7_range(5, 4).unwrap_err().field, "to");
        assert_eq!(
            v7_range(MAX_UNIX_MS + 1, MAX_UNIX_MS + 1)
                .unwrap_err()
                .field,
            "from"
        );
        assert_eq!(v7_range(0, MAX_UNIX_MS + 1).unwrap().end, None);
        assert_eq!(partition_key(&Uuid::nil(), 0).unwrap_err().field, "bits");
        assert_eq!(
            partition_key(&Uuid::nil(), 49).unwrap_err().expected,
            "1..=48"
        );
        assert_eq!(partition_range(1 << 16, 16).unwrap_err().field, "key");
        assert!(partitions(48, 0, 1 << 40).is_err());
    }

    #[test]
    fn last_key_is_unbounded_and_ddl_quotes_names() {
        let r = partition_range((1 << 16) - 1, 16).unwrap();
        assert_eq!(r.end, None);
        assert!(r.contains(&Uuid::max()));
        let parts = partitions(16, MAX_UNIX_MS, MAX_UNIX_MS + 1).unwrap();
        let ddl = partition_ddl("", "we\"ird", 16, &parts);
        assert_eq!(
            ddl,
            vec!["CREATE TABLE \"we\"\"ird_pffff\" PARTITION OF \"we\"\"ird\" FOR VALUES FROM ('ffff0000-0000-0000-0000-000000000000') TO (MAXVALUE);"]
        );
        assert_eq!(
            r.sql_predicate("\"id\""),
            "\"id\" >= 'ffff0000-0000-0000-0000-000000000000'"
        );
    }
}
