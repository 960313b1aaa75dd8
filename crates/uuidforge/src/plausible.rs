//! Plausibility checks for UUIDs received from clients (E9): the variant is
//! RFC 9562's, the version is the one required, and a time-based value's
//! timestamp is neither in the future beyond a skew nor before a cutoff.
//! Usable behind a database `CHECK`.

use crate::inspect::{inspect, Variant};
use uuid::Uuid;

/// What a value must satisfy.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Rules {
    /// Required version, if any.
    pub version: Option<u8>,
    /// Largest allowed distance into the future, in milliseconds, if any.
    pub max_skew_ms: Option<u64>,
    /// Earliest allowed timestamp (Unix ms), if any.
    pub not_before_ms: Option<i64>,
}

/// Why a value is not plausible.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Implausible {
    /// Not the RFC 9562 variant.
    Variant(String),
    /// Another version than required.
    Version {
        /// Found.
        found: u8,
        /// Required.
        expected: u8,
    },
    /// The timestamp is further in the future than allowed.
    Future {
        /// The timestamp, ISO 8601.
        timestamp: String,
        /// How far ahead of `now`, in ms.
        ahead_ms: i64,
        /// The allowed skew, in ms.
        max_skew_ms: u64,
    },
    /// The timestamp is before the cutoff.
    TooOld {
        /// The timestamp, ISO 8601.
        timestamp: String,
        /// The cutoff, ISO 8601.
        not_before: String,
    },
    /// A time rule was given but the version carries no timestamp.
    NoTimestamp {
        /// The version found.
        version: u8,
    },
}

impl std::fmt::Display for Implausible {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Implausible::Variant(v) => write!(f, "variant {v}, expected rfc9562"),
            Implausible::Version { found, expected } => {
                write!(f, "version {found}, expected {expected}")
            }
            Implausible::Future { timestamp, ahead_ms, max_skew_ms } => write!(
                f,
                "timestamp {timestamp} is {ahead_ms} ms in the future, more than the allowed skew of {max_skew_ms} ms"
            ),
            Implausible::TooOld { timestamp, not_before } => {
                write!(f, "timestamp {timestamp} is before {not_before}")
            }
            Implausible::NoTimestamp { version } => {
                write!(f, "version {version} has no timestamp to check, expected 1, 6 or 7")
            }
        }
    }
}

/// Checks `uuid` against `rules` at wall-clock time `now_ms`.
///
/// ```
/// use uuidforge::plausible::{check, Rules};
/// let id = uuidforge::v7::from_unix_ms(2_000, 0, 0).unwrap();
/// let rules = Rules { version: Some(7), max_skew_ms: Some(500), not_before_ms: Some(0) };
/// assert!(check(&id, &rules, 1_600).is_ok());
/// assert!(check(&id, &rules, 1_000).is_err()); // 1 s in the future
/// ```
pub fn check(uuid: &Uuid, rules: &Rules, now_ms: i64) -> Result<(), Implausible> {
    let report = inspect(uuid);
    if report.variant != Variant::Rfc9562 {
        let name = serde_json::to_value(report.variant).ok();
        return Err(Implausible::Variant(
            name.and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default(),
        ));
    }
    if let Some(expected) = rules.version.filter(|&v| v != report.version) {
        return Err(Implausible::Version {
            found: report.version,
            expected,
        });
    }
    if rules.max_skew_ms.is_none() && rules.not_before_ms.is_none() {
        return Ok(());
    }
    // A v7's time is RFC 9562's 48-bit milliseconds, whatever layout a
    // guess from this one value would read it in (a CHECK must not depend
    // on a guess).
    let timestamp = match report.version {
        7 => Some(crate::timestamp::Timestamp::from_unix_ms(
            crate::v7::unix_ms(uuid),
        )),
        _ => report.timestamp,
    };
    let Some(t) = timestamp.filter(|_| matches!(report.version, 1 | 6 | 7)) else {
        return Err(Implausible::NoTimestamp {
            version: report.version,
        });
    };
    let ms = t.unix_ms() as i64;
    if let Some(skew) = rules.max_skew_ms {
        if ms - now_ms > skew as i64 {
            return Err(Implausible::Future {
                timestamp: t.to_string(),
                ahead_ms: ms - now_ms,
                max_skew_ms: skew,
            });
        }
    }
    if let Some(cutoff) = rules.not_before_ms.filter(|&c| ms < c) {
        return Err(Implausible::TooOld {
            timestamp: t.to_string(),
            not_before: crate::timestamp::Timestamp::new(
                cutoff as i128 * 1_000_000,
                crate::timestamp::Precision::Millisecond,
            )
            .to_string(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_v7_is_read_in_rfc_9562_milliseconds_whatever_its_layout_looks_like() {
        // Its bits look like the 2021 draft's layout to a guess from one value.
        let id: Uuid = "0c88daef-55ea-7053-896a-78a4af1a72aa".parse().unwrap();
        assert_eq!(
            inspect(&id).layout_guess.map(|g| g.layout),
            Some(crate::layout::V7Layout::Draft01)
        );
        let ms = crate::v7::unix_ms(&id) as i64;
        let rules = Rules {
            version: Some(7),
            max_skew_ms: Some(0),
            not_before_ms: None,
        };
        assert!(check(&id, &rules, ms).is_ok());
        let e = check(&id, &rules, ms - 5).unwrap_err();
        assert!(e.to_string().contains("is 5 ms in the future"), "{e}");
    }

    #[test]
    fn each_rule_names_what_failed() {
        let v7 = crate::v7::from_unix_ms(10_000, 0, 0).unwrap();
        let skew = Rules {
            max_skew_ms: Some(1_000),
            ..Rules::default()
        };
        assert!(check(&v7, &skew, 9_000).is_ok());
        let e = check(&v7, &skew, 8_000).unwrap_err();
        assert_eq!(e.to_string(), "timestamp 1970-01-01T00:00:10.000Z is 2000 ms in the future, more than the allowed skew of 1000 ms");
        let old = Rules {
            not_before_ms: Some(20_000),
            ..Rules::default()
        };
        assert!(matches!(
            check(&v7, &old, 0).unwrap_err(),
            Implausible::TooOld { .. }
        ));
        let v4: Uuid = "919108f7-52d1-4320-9bac-f847db4148a8".parse().unwrap();
        assert_eq!(
            check(
                &v4,
                &Rules {
                    version: Some(7),
                    ..Rules::default()
                },
                0
            )
            .unwrap_err(),
            Implausible::Version {
                found: 4,
                expected: 7
            }
        );
        assert!(matches!(
            check(&v4, &skew, 0).unwrap_err(),
            Implausible::NoTimestamp { version: 4 }
        ));
        assert!(matches!(
            check(&Uuid::max(), &Rules::default(), 0).unwrap_err(),
            Implausible::Variant(_)
        ));
        let v1: Uuid = "C232AB00-9414-11EC-B3C8-9F6BDECED846".parse().unwrap();
        assert!(check(
            &v1,
            &Rules {
                not_before_ms: Some(1_600_000_000_000),
                ..Rules::default()
            },
            0
        )
        .is_ok());
    }
}
