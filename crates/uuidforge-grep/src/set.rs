//! The values searched for: a hash set of UUIDs read from `-e` values and
//! `-f` files, in any spelling the library parses.

use std::collections::HashSet;
use uuid::Uuid;

/// Most values a set takes: 10^7 UUIDs are about 300 MB of memory.
pub const MAX_VALUES: usize = 10_000_000;

/// A value that is not a UUID, or one too many.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueError {
    /// Where it came from: `-e value 2`, `line 17 of ids.txt`.
    pub origin: String,
    /// The text (at most 80 characters of it).
    pub value: String,
    /// What was expected.
    pub expected: String,
}

impl std::fmt::Display for ValueError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: '{}' is not a UUID: {}",
            self.origin, self.value, self.expected
        )
    }
}

impl std::error::Error for ValueError {}

/// A set of UUIDs with a fast, randomly seeded hash: lookups are what a
/// search does for every UUID it meets, and the seed keeps a crafted value
/// file from degrading the table.
///
/// ```
/// use uuidforge_grep::UuidSet;
/// let mut set = UuidSet::default();
/// set.insert_text("value 1", "{017F22E2-79B0-7CC3-98C4-DC0C0C07398F}").unwrap();
/// set.insert_text("value 2", "01FWHE4YDGFK1SHH6W1G60EECF").unwrap(); // the same UUID
/// assert_eq!(set.len(), 1);
/// assert!(set.contains(&uuid::uuid!("017f22e2-79b0-7cc3-98c4-dc0c0c07398f")));
/// assert!(set.insert_text("value 3", "017f22e2").is_err());
/// ```
#[derive(Debug, Clone, Default)]
pub struct UuidSet {
    set: HashSet<u128, foldhash::fast::RandomState>,
}

impl UuidSet {
    /// Parses `text` (canonical in any case, braced, URN, 32 hex, Base32,
    /// UUID_192 text or Base32 — its left 128 bits) and adds it. Blank text
    /// is skipped.
    pub fn insert_text(&mut self, origin: &str, text: &str) -> Result<(), ValueError> {
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Ok(());
        }
        let value = uuidforge::parser::parse_value(trimmed.as_bytes()).map_err(|e| ValueError {
            origin: origin.to_string(),
            value: trimmed.chars().take(80).collect(),
            expected: e.to_string(),
        })?;
        if self.set.len() >= MAX_VALUES && !self.contains(&value.uuid()) {
            return Err(ValueError {
                origin: origin.to_string(),
                value: trimmed.chars().take(80).collect(),
                expected: format!("at most {MAX_VALUES} values"),
            });
        }
        self.insert(value.uuid());
        Ok(())
    }

    /// Adds every line of a value file read from `reader`, without
    /// holding the file; `name` names it in errors.
    ///
    /// ```
    /// let mut set = uuidforge_grep::UuidSet::default();
    /// let text = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f\n\nnot-a-uuid\n";
    /// let e = set.insert_lines("ids.txt", text.as_bytes()).unwrap_err();
    /// assert_eq!(e.origin, "line 3 of ids.txt");
    /// assert_eq!(set.len(), 1);
    /// ```
    pub fn insert_lines(
        &mut self,
        name: &str,
        reader: impl std::io::BufRead,
    ) -> Result<(), ValueError> {
        for (i, line) in reader.lines().enumerate() {
            let origin = || format!("line {} of {name}", i + 1);
            let line = line.map_err(|e| ValueError {
                origin: origin(),
                value: String::new(),
                expected: format!("readable text ({e})"),
            })?;
            let line = if i == 0 {
                line.strip_prefix('\u{feff}').unwrap_or(&line)
            } else {
                &line
            };
            self.insert_text(&origin(), line)?;
        }
        Ok(())
    }

    /// Makes room for `additional` more values at once (a value file's
    /// size / 37), instead of growing the table step by step.
    pub fn reserve(&mut self, additional: usize) {
        self.set.reserve(additional.min(MAX_VALUES));
    }

    /// Adds a UUID.
    pub fn insert(&mut self, uuid: Uuid) {
        self.set.insert(uuid.as_u128());
    }

    /// Whether `uuid` is in the set.
    #[inline]
    pub fn contains(&self, uuid: &Uuid) -> bool {
        self.set.contains(&uuid.as_u128())
    }

    /// Number of distinct UUIDs.
    pub fn len(&self) -> usize {
        self.set.len()
    }

    /// No values.
    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }

    /// The UUIDs, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = Uuid> + '_ {
        self.set.iter().map(|v| Uuid::from_u128(*v))
    }
}
