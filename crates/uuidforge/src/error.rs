//! Error types shared by every codec and constructor.
//!
//! Every error names what was wrong (the field or the position), the offending
//! value, and what was expected, so that a command line or an HTTP API can pass
//! the message on to a person unchanged.

use std::fmt;

/// What a parser was reading when it failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InputKind {
    /// Any UUID text form (detected by length and prefix).
    Any,
    /// Canonical 8-4-4-4-12 hex (RFC 9562 §4).
    Canonical,
    /// 32 hex digits, no dashes.
    Simple,
    /// `{8-4-4-4-12}`.
    Braced,
    /// `urn:uuid:8-4-4-4-12` (RFC 9562 §4, RFC 8141).
    Urn,
    /// 26-character Crockford Base32.
    Base32,
    /// RFC 4648 base32hex (PostgreSQL 19's), 26 characters or 32 padded.
    Base32Hex,
    /// 27-character Crockford Base32 with a trailing check symbol.
    Base32Check,
    /// UUID_192 text (`8-4-4-4-12-16`).
    Uuid192,
    /// UUID_192 in 39-character Crockford Base32.
    Uuid192Base32,
    /// The 16-hex-digit UUID_192 segment on its own.
    Segment,
}

impl InputKind {
    /// A short name for messages, e.g. `canonical UUID`.
    pub const fn describe(self) -> &'static str {
        match self {
            InputKind::Any => "UUID",
            InputKind::Canonical => "canonical UUID (8-4-4-4-12 hex)",
            InputKind::Simple => "32-hex-digit UUID",
            InputKind::Braced => "braced UUID ({8-4-4-4-12})",
            InputKind::Urn => "UUID URN (urn:uuid:8-4-4-4-12)",
            InputKind::Base32 => "Crockford Base32 UUID (26 characters)",
            InputKind::Base32Hex => "base32hex UUID (RFC 4648, 26 characters)",
            InputKind::Base32Check => "Crockford Base32 UUID with check symbol (27 characters)",
            InputKind::Uuid192 => "UUID_192 (8-4-4-4-12-16 hex)",
            InputKind::Uuid192Base32 => "UUID_192 in Crockford Base32 (39 characters)",
            InputKind::Segment => "UUID_192 segment (16 hex digits)",
        }
    }
}

/// Why a text could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseErrorKind {
    /// The text has a length that no accepted form has.
    InvalidLength {
        /// Length found, in bytes.
        found: usize,
        /// The accepted lengths, for the message.
        expected: &'static str,
    },
    /// A character that is not allowed at this position.
    InvalidCharacter {
        /// Zero-based character position in the input.
        position: usize,
        /// The character found there.
        found: char,
        /// What the position accepts.
        expected: &'static str,
    },
    /// Base32 text whose value does not fit in 128 (or 192) bits: its first
    /// character is above `7`.
    Overflow {
        /// The first character found.
        found: char,
    },
    /// The Crockford check symbol does not match the value.
    CheckSymbolMismatch {
        /// The check symbol found at the end.
        found: char,
        /// The check symbol the value calls for.
        expected: char,
    },
    /// A UUID_192 whose checksum does not match UUID and segment.
    ChecksumMismatch {
        /// Checksum stored in the segment.
        found: u16,
        /// Checksum computed from UUID and segment.
        expected: u16,
    },
    /// A UUID_192 segment with a structure code this version does not know.
    UnknownStructure {
        /// The structure code (top 4 bits of the segment).
        code: u8,
    },
}

/// A text that is not a valid UUID (or UUID_192) in the form asked for.
///
/// ```
/// use uuidforge::parser::parse;
/// let err = parse("017f22e2-79b0-7cc3-98c4-dc0c0c07398g").unwrap_err();
/// assert_eq!(err.position(), Some(35));
/// assert_eq!(
///     err.to_string(),
///     "invalid canonical UUID (8-4-4-4-12 hex): character 'g' at position 35, expected a hex digit"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// The form that was being read.
    pub input: InputKind,
    /// What went wrong.
    pub kind: ParseErrorKind,
}

impl ParseError {
    pub(crate) const fn new(input: InputKind, kind: ParseErrorKind) -> Self {
        ParseError { input, kind }
    }

    pub(crate) fn length(input: InputKind, found: usize, expected: &'static str) -> Self {
        Self::new(input, ParseErrorKind::InvalidLength { found, expected })
    }

    /// The zero-based character position of the offending character, if the
    /// error is about one character.
    pub fn position(&self) -> Option<usize> {
        match self.kind {
            ParseErrorKind::InvalidCharacter { position, .. } => Some(position),
            ParseErrorKind::Overflow { .. } => Some(0),
            _ => None,
        }
    }

    /// Shifts the reported position by `offset` (for forms that wrap another).
    pub(crate) fn offset(mut self, by: usize, outer: InputKind) -> Self {
        if let ParseErrorKind::InvalidCharacter { position, .. } = &mut self.kind {
            *position += by;
        }
        self.input = outer;
        self
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid {}: ", self.input.describe())?;
        match &self.kind {
            ParseErrorKind::InvalidLength { found, expected } => {
                write!(f, "length {found}, expected {expected}")
            }
            ParseErrorKind::InvalidCharacter {
                position,
                found,
                expected,
            } => write!(
                f,
                "character {found:?} at position {position}, expected {expected}"
            ),
            ParseErrorKind::Overflow { found } => write!(
                f,
                "character {found:?} at position 0, expected 0-7 (the value must fit in the bits of the type)"
            ),
            ParseErrorKind::CheckSymbolMismatch { found, expected } => write!(
                f,
                "check symbol {found:?} does not match the value, expected {expected:?}"
            ),
            ParseErrorKind::ChecksumMismatch { found, expected } => write!(
                f,
                "checksum 0x{found:04x} does not match UUID and segment, expected 0x{expected:04x}"
            ),
            ParseErrorKind::UnknownStructure { code } => write!(
                f,
                "unknown segment structure code {code}, expected 0 (raw) or 1 (general)"
            ),
        }
    }
}

impl std::error::Error for ParseError {}

/// A value given to a constructor that is out of its field's range.
///
/// ```
/// let err = uuidforge::v7::from_unix_ms(1 << 48, 0, 0).unwrap_err();
/// assert_eq!(err.field, "unix_ts_ms");
/// assert!(err.to_string().contains("expected 0..=281474976710655"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// The field or argument name.
    pub field: &'static str,
    /// The offending value, as text.
    pub value: String,
    /// What the field accepts.
    pub expected: String,
}

impl FieldError {
    pub(crate) fn new(
        field: &'static str,
        value: impl fmt::Display,
        expected: impl Into<String>,
    ) -> Self {
        FieldError {
            field,
            value: value.to_string(),
            expected: expected.into(),
        }
    }

    /// Checks `value <= max`, naming `field` otherwise.
    pub(crate) fn check_max(field: &'static str, value: u128, max: u128) -> Result<(), Self> {
        if value > max {
            Err(Self::new(field, value, format!("0..={max}")))
        } else {
            Ok(())
        }
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid {}: {}, expected {}",
            self.field, self.value, self.expected
        )
    }
}

impl std::error::Error for FieldError {}
