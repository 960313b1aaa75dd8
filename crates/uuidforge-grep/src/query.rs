//! What a UUID must be to count: one of the values, a version, a time range.

use crate::UuidSet;
use uuid::Uuid;

/// The test a UUID token passes to be a hit. Every part given must hold.
///
/// ```
/// use uuidforge_grep::Query;
/// let v7 = uuid::uuid!("017f22e2-79b0-7cc3-98c4-dc0c0c07398f"); // 2022-02-22T19:22:22Z
/// let mut query = Query::default();
/// assert!(query.accepts(&v7));
/// query.version = Some(7);
/// query.since_ms = Some(1_645_557_742_000);
/// assert!(query.accepts(&v7));
/// query.until_ms = Some(1_645_557_742_000); // half-open: until is excluded
/// assert!(!query.accepts(&v7));
/// ```
#[derive(Debug, Clone, Default)]
pub struct Query {
    /// Only these values (any UUID when `None`).
    pub values: Option<UuidSet>,
    /// Only this version (RFC 9562 variant).
    pub version: Option<u8>,
    /// Only UUIDs whose v7, v6 or v1 time is at or after this (Unix ms).
    pub since_ms: Option<i64>,
    /// Only UUIDs whose v7, v6 or v1 time is before this (Unix ms).
    pub until_ms: Option<i64>,
}

impl Query {
    /// Whether `uuid` is a hit. A time bound excludes UUIDs that carry no
    /// time (v4, v8, nil, other variants).
    #[inline]
    pub fn accepts(&self, uuid: &Uuid) -> bool {
        if let Some(values) = &self.values {
            if !values.contains(uuid) {
                return false;
            }
        }
        if let Some(version) = self.version {
            if uuid.get_variant() != uuid::Variant::RFC4122
                || uuid.get_version_num() != version as usize
            {
                return false;
            }
        }
        if self.since_ms.is_some() || self.until_ms.is_some() {
            let Some(ms) = unix_ms(uuid) else {
                return false;
            };
            if self.since_ms.is_some_and(|since| ms < since as i128)
                || self.until_ms.is_some_and(|until| ms >= until as i128)
            {
                return false;
            }
        }
        true
    }
}

/// The time a v7, v6 or v1 UUID carries, in Unix milliseconds.
///
/// ```
/// let v1 = uuid::uuid!("C232AB00-9414-11EC-B3C8-9F6BDECED846");
/// assert_eq!(uuidforge_grep::query::unix_ms(&v1), Some(1_645_557_742_000));
/// assert_eq!(uuidforge_grep::query::unix_ms(&uuid::Uuid::nil()), None);
/// ```
pub fn unix_ms(uuid: &Uuid) -> Option<i128> {
    if uuid.get_variant() != uuid::Variant::RFC4122 {
        return None;
    }
    let timestamp = match uuid.get_version_num() {
        7 => uuidforge::v7::timestamp(uuid).ok()?,
        6 => uuidforge::gregorian::v6_fields(uuid).ok()?.timestamp(),
        1 => uuidforge::gregorian::v1_fields(uuid).ok()?.timestamp(),
        _ => return None,
    };
    Some(timestamp.unix_ms())
}
