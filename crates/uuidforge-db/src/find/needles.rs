//! The values a search looks for: parsed from every spelling, deduplicated,
//! and what SQL can narrow the rows by before each row is checked here.

use std::collections::HashSet;
use uuid::Uuid;

/// Most values one search takes (from a file).
pub const MAX_VALUES: usize = 1_000_000;

/// Up to this many values, text is searched with `LIKE` patterns (fast for
/// a few); above, UUID-shaped tokens are extracted once per value and
/// compared with the whole set.
pub const LIKE_LIMIT: usize = 4;

/// Most values matched against a `uuid[]` with `&&` (which compares every
/// element with every value); more are looked up in a hash.
pub(super) const OVERLAP_LIMIT: usize = 16;

/// How [`Needles`] narrow text (see `Needles::narrowing`).
#[derive(Debug, Default)]
pub(super) struct Narrowing {
    /// `LIKE` patterns that hold in any letter case.
    pub(super) patterns: Vec<String>,
    /// Whole lower-case spellings, for values with too few digits.
    pub(super) folded: Vec<String>,
}

/// Fewest digits a narrowing pattern fixes: 4 digits in place are found
/// by chance in about one ordinary text position in 10 000 (the rows they
/// let through are checked exactly anyway).
const MIN_ANCHOR: usize = 4;

/// The longest run of ASCII digits in `text`.
fn longest_digit_run(text: &str) -> Option<&str> {
    text.split(|c: char| !c.is_ascii_digit())
        .filter(|run| !run.is_empty())
        .max_by_key(|run| run.len())
}

/// The values searched for.
#[derive(Debug, Clone, Default)]
pub struct Needles {
    set: HashSet<Uuid>,
    ordered: Vec<Uuid>,
}

/// A value that is not a UUID.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NeedleError {
    /// Where it came from (`value 2`, `line 17 of ids.txt`).
    pub origin: String,
    /// The text.
    pub value: String,
    /// What the parser expected.
    pub expected: String,
}

impl std::fmt::Display for NeedleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: '{}' is not a UUID: {}",
            self.origin, self.value, self.expected
        )
    }
}

impl std::error::Error for NeedleError {}

impl Needles {
    /// Parses each value (canonical in any case, braced, URN, 32 hex,
    /// Base32 with or without check symbol, UUID_192 text or Base32).
    /// `values` yields (origin, text); blank texts are skipped.
    pub fn parse<'a>(
        values: impl IntoIterator<Item = (String, &'a str)>,
    ) -> Result<Needles, NeedleError> {
        let mut needles = Needles::default();
        for (origin, text) in values {
            let trimmed = text.trim();
            if trimmed.is_empty() {
                continue;
            }
            let value =
                uuidforge::parser::parse_value(trimmed.as_bytes()).map_err(|e| NeedleError {
                    origin: origin.clone(),
                    value: trimmed.chars().take(80).collect(),
                    expected: e.to_string(),
                })?;
            needles.insert(value.uuid());
            if needles.len() > MAX_VALUES {
                return Err(NeedleError {
                    origin,
                    value: trimmed.to_string(),
                    expected: format!("at most {MAX_VALUES} values"),
                });
            }
        }
        Ok(needles)
    }

    /// Adds a UUID.
    pub fn insert(&mut self, uuid: Uuid) {
        if self.set.insert(uuid) {
            self.ordered.push(uuid);
        }
    }

    /// Number of distinct UUIDs.
    pub fn len(&self) -> usize {
        self.ordered.len()
    }

    /// No values.
    pub fn is_empty(&self) -> bool {
        self.ordered.is_empty()
    }

    /// Whether `uuid` is searched for.
    pub fn contains(&self, uuid: &Uuid) -> bool {
        self.set.contains(uuid)
    }

    /// The UUIDs in the order first given.
    pub fn uuids(&self) -> &[Uuid] {
        &self.ordered
    }

    /// How text is narrowed for up to [`LIKE_LIMIT`] values, in any letter
    /// case and without lowering a copy of every value (which costs
    /// several times the scan):
    /// - hex spellings (canonical, braces, URN, 32 hex, UUID_192 text):
    ///   the longest run of decimal digits of one group, which all of them
    ///   hold;
    /// - Base32 and UUID_192 Base32: its shape, each letter replaced by `_`
    ///   (any one character), which keeps every digit in place.
    ///
    /// A family with too few digits to be selective is matched in full on
    /// lowered text instead (`folded`).
    pub(super) fn narrowing(&self) -> Narrowing {
        let mut n = Narrowing::default();
        for u in &self.ordered {
            let canonical = uuidforge::fmt::to_canonical_string(u);
            match longest_digit_run(&canonical) {
                Some(run) if run.len() >= MIN_ANCHOR => n.patterns.push(format!("%{run}%")),
                _ => {
                    n.folded.push(format!("%{canonical}%"));
                    n.folded.push(format!("%{}%", u.simple()));
                }
            }
            for base32 in [
                uuidforge::base32::encode(u).as_str().to_lowercase(),
                uuidforge::scan::uuid192_base32_prefix(u).to_lowercase(),
            ] {
                let digits = base32.chars().filter(char::is_ascii_digit).count();
                if digits >= MIN_ANCHOR {
                    let shape: String = base32
                        .chars()
                        .map(|c| if c.is_ascii_digit() { c } else { '_' })
                        .collect();
                    n.patterns.push(format!("%{}%", shape.trim_matches('_')));
                } else {
                    n.folded.push(format!("%{base32}%"));
                }
            }
        }
        n.patterns.sort();
        n.patterns.dedup();
        n
    }

    pub(super) fn base32_words(&self) -> Vec<String> {
        let mut out = Vec::with_capacity(self.len() * 2);
        for u in &self.ordered {
            out.push(uuidforge::base32::encode(u).as_str().to_lowercase());
            out.push(uuidforge::scan::uuid192_base32_prefix(u).to_lowercase());
        }
        out
    }

    pub(super) fn exact_spellings(&self) -> Vec<String> {
        let mut out = Vec::with_capacity(self.len() * 8);
        for u in &self.ordered {
            let c = uuidforge::fmt::to_canonical_string(u);
            let upper = c.to_uppercase();
            out.push(format!("{{{c}}}"));
            out.push(format!("{{{upper}}}"));
            out.push(format!("urn:uuid:{c}"));
            out.push(u.simple().to_string());
            out.push(u.simple().to_string().to_uppercase());
            out.push(uuidforge::base32::encode(u).as_str().to_string());
            out.push(c);
            out.push(upper);
        }
        out
    }

    pub(super) fn bytes(&self) -> Vec<Vec<u8>> {
        self.ordered.iter().map(|u| u.as_bytes().to_vec()).collect()
    }
}
