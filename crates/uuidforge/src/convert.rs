//! Converting a parsed value to any output form (RFC 9562 §4, §6.11): the
//! library's [`Format`]s, the UUID_192 forms and the byte orders of other
//! databases. Shared by `uuidforge convert` and the HTTP API.
//!
//! ```
//! use uuidforge::convert::{convert, Target};
//! use uuidforge::parser::parse_value;
//! let value = parse_value(b"017f22e2-79b0-7cc3-98c4-dc0c0c07398f").unwrap();
//! let mut out = Vec::new();
//! convert(value, Target::from_name("base32").unwrap(), false, false, &mut out).unwrap();
//! assert_eq!(out, b"01FWHE4YDGFK1SHH6W1G60EECF");
//! ```

use crate::fmt::Format;
use crate::parser::Value;
use crate::sortorder::{DotNetGuid, MySqlSwap, SqlServer, StoreOrder};

/// Output forms: every [`Format`] by its name, plus the forms below.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A UUID form of the library.
    Form(Format),
    /// UUID_192 text (input must be a UUID_192).
    Uuid192,
    /// UUID_192 Base32, 39 characters (input must be a UUID_192).
    Uuid192Base32,
    /// The GUID to store in SQL Server so it sorts by time, as SQL Server prints it.
    Sqlserver,
    /// .NET `Guid.ToByteArray()` bytes, as 32 hex digits.
    DotnetBytes,
    /// The value to pass to MySQL `UUID_TO_BIN(x, 1)` so the stored bytes sort by time.
    MysqlSwap,
}

const EXTRA_TARGETS: [(&str, Target); 5] = [
    ("uuid192", Target::Uuid192),
    ("uuid192-base32", Target::Uuid192Base32),
    ("sqlserver", Target::Sqlserver),
    ("dotnet-bytes", Target::DotnetBytes),
    ("mysql-swap", Target::MysqlSwap),
];

impl Target {
    /// The target's name, as [`Target::from_name`] reads it.
    pub fn name(self) -> &'static str {
        match self {
            Target::Form(f) => f.name(),
            other => {
                EXTRA_TARGETS
                    .iter()
                    .find(|(_, t)| *t == other)
                    .expect("listed")
                    .0
            }
        }
    }

    /// A target by name (case-insensitive).
    pub fn from_name(name: &str) -> Option<Target> {
        if let Some(f) = Format::from_name(name) {
            return Some(Target::Form(f));
        }
        EXTRA_TARGETS
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, t)| *t)
    }

    /// Every target's name, for messages and documentation.
    pub fn names() -> Vec<&'static str> {
        Format::ALL
            .iter()
            .map(|f| f.name())
            .chain(EXTRA_TARGETS.iter().map(|(n, _)| *n))
            .collect()
    }

    /// Whether the output is text (everything but 16 raw bytes).
    pub fn is_text(self) -> bool {
        self != Target::Form(Format::Binary)
    }
}

/// Why a value cannot convert to a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConvertError {
    /// A UUID asked for a UUID_192 form: it has no segment.
    NoSegment,
    /// A UUID_192 asked for a UUID form without `uuid_part`: its segment
    /// would be lost.
    WouldLoseSegment(Target),
}

impl std::fmt::Display for ConvertError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConvertError::NoSegment => write!(
                f,
                "a UUID has no segment: only a UUID_192 converts to a UUID_192 form"
            ),
            ConvertError::WouldLoseSegment(t) => write!(
                f,
                "a UUID_192 would lose its segment as {}: convert its UUID part explicitly (uuid_part), or use uuid192 / uuid192-base32",
                t.name()
            ),
        }
    }
}

impl std::error::Error for ConvertError {}

/// Appends `value` in the `target` form to `out`, upper-casing hex digits
/// when `upper`. A UUID_192 converts to a UUID form only with `uuid_part`
/// (its segment is dropped); the error says why a value cannot convert.
pub fn convert(
    value: Value,
    target: Target,
    uuid_part: bool,
    upper: bool,
    out: &mut Vec<u8>,
) -> Result<(), ConvertError> {
    let start = out.len();
    let hex_from = write_form(value, target, uuid_part, out)?;
    if let (true, Some(from)) = (upper, hex_from) {
        out[start + from..].make_ascii_uppercase();
    }
    Ok(())
}

/// Writes the value in the target form; returns where its hex digits start
/// (for upper case), or `None` for forms that are not hex.
fn write_form(
    value: Value,
    target: Target,
    uuid_part: bool,
    out: &mut Vec<u8>,
) -> Result<Option<usize>, ConvertError> {
    let uuid = match (value, target) {
        (Value::Uuid192(k), Target::Uuid192) => {
            out.extend_from_slice(k.to_string().as_bytes());
            return Ok(Some(0));
        }
        (Value::Uuid192(k), Target::Uuid192Base32) => {
            out.extend_from_slice(k.to_base32().as_bytes());
            return Ok(None);
        }
        (Value::Uuid(..), Target::Uuid192 | Target::Uuid192Base32) => {
            return Err(ConvertError::NoSegment)
        }
        (Value::Uuid192(_), _) if !uuid_part => return Err(ConvertError::WouldLoseSegment(target)),
        (v, _) => v.uuid(),
    };
    let (format, shown) = match target {
        Target::Form(f) => (f, uuid),
        Target::Sqlserver => (Format::Canonical, SqlServer::shown(&uuid)),
        Target::DotnetBytes => (
            Format::Simple,
            uuid::Uuid::from_bytes(DotNetGuid::encode(&uuid)),
        ),
        Target::MysqlSwap => (
            Format::Canonical,
            uuid::Uuid::from_bytes(MySqlSwap::encode(&uuid)),
        ),
        Target::Uuid192 | Target::Uuid192Base32 => unreachable!("handled above"),
    };
    format.write(&shown, out);
    Ok(match format {
        Format::Urn => Some(9),
        Format::Canonical | Format::Simple | Format::Braced => Some(0),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parser::parse_value;

    #[test]
    fn every_name_round_trips_and_upper_case_spares_prefixes() {
        for name in Target::names() {
            assert_eq!(Target::from_name(name).unwrap().name(), name);
        }
        assert!(Target::from_name("hex").is_none());
        let v = parse_value(b"017f22e2-79b0-7cc3-98c4-dc0c0c07398f").unwrap();
        let mut out = Vec::new();
        convert(v, Target::from_name("urn").unwrap(), false, true, &mut out).unwrap();
        assert_eq!(out, b"urn:uuid:017F22E2-79B0-7CC3-98C4-DC0C0C07398F");
        let err = convert(v, Target::Uuid192, false, false, &mut out).unwrap_err();
        assert_eq!(err, ConvertError::NoSegment);
        assert!(err.to_string().contains("no segment"));
    }
}
