//! The JSONPath subset `--json-path` takes (RFC 9535 syntax):
//!
//! | segment | selects |
//! |---|---|
//! | `$` | the root (every path starts with it) |
//! | `.name`, `['name']`, `["name"]` | a member of an object |
//! | `[3]` | an element of an array (from 0) |
//! | `.*`, `[*]` | every member or element |
//! | `..name`, `..*`, `..[3]` | the same at any depth below |
//!
//! A UUID is selected when the string holding it (or the object key that
//! is it) is at a selected path. Filters, slices, unions and negative
//! indexes are not part of the subset and are refused by name.
//!
//! ```
//! use uuidforge_grep::jsonpath::{JsonPath, PathItem};
//! let path = JsonPath::parse("$.order.items[*].id").unwrap();
//! let at = [PathItem::Key(b"order"), PathItem::Key(b"items"), PathItem::Index(2), PathItem::Key(b"id")];
//! assert!(path.matches(&at));
//! assert!(!path.matches(&at[..3]));
//! assert!(JsonPath::parse("$..id").unwrap().matches(&at));
//! assert!(JsonPath::parse("$.order[?(@.x)]").is_err());
//! ```

/// One step of a concrete path inside a JSON value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathItem<'a> {
    /// An object member, by its key as written (escapes not resolved).
    Key(&'a [u8]),
    /// An array element.
    Index(usize),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Selector {
    Name(String),
    Index(usize),
    Wildcard,
    /// Any rest of the path, none included (not in the syntax: made by
    /// [`JsonPath::member_and_below`]).
    Rest,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Segment {
    descendant: bool,
    selector: Selector,
}

/// A parsed `--json-path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonPath {
    text: String,
    segments: Vec<Segment>,
}

/// Why a JSON path does not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonPathError {
    /// The path.
    pub path: String,
    /// Character position of the problem (from 0).
    pub at: usize,
    /// What was expected there.
    pub expected: String,
}

impl std::fmt::Display for JsonPathError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "--json-path '{}': at character {}: expected {}",
            self.path,
            self.at + 1,
            self.expected
        )
    }
}

impl std::error::Error for JsonPathError {}

impl JsonPath {
    /// Parses a path of the subset.
    pub fn parse(text: &str) -> Result<JsonPath, JsonPathError> {
        let chars: Vec<char> = text.chars().collect();
        let fail = |at: usize, expected: &str| JsonPathError {
            path: text.to_string(),
            at,
            expected: expected.to_string(),
        };
        if chars.first() != Some(&'$') {
            return Err(fail(0, "'$' (a path starts at the root)"));
        }
        let mut segments = Vec::new();
        let mut i = 1;
        while i < chars.len() {
            let descendant = chars[i] == '.' && chars.get(i + 1) == Some(&'.');
            match chars[i] {
                '.' => {
                    i += if descendant { 2 } else { 1 };
                    if chars.get(i) == Some(&'[') {
                        if !descendant {
                            return Err(fail(i, "a member name or '*' after '.'"));
                        }
                        continue_with_bracket(&chars, &mut i, true, &mut segments, &fail)?;
                        continue;
                    }
                    if chars.get(i) == Some(&'*') {
                        segments.push(Segment {
                            descendant,
                            selector: Selector::Wildcard,
                        });
                        i += 1;
                        continue;
                    }
                    let start = i;
                    while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                        i += 1;
                    }
                    if i == start {
                        return Err(fail(i, "a member name (letters, digits, '_') or '*'"));
                    }
                    segments.push(Segment {
                        descendant,
                        selector: Selector::Name(chars[start..i].iter().collect()),
                    });
                }
                '[' => continue_with_bracket(&chars, &mut i, false, &mut segments, &fail)?,
                _ => return Err(fail(i, "'.', '..' or '['")),
            }
        }
        Ok(JsonPath {
            text: text.to_string(),
            segments,
        })
    }

    /// The member `name` of the root and everything inside it (what
    /// `$.name` and `$.name..*` select together).
    ///
    /// ```
    /// use uuidforge_grep::jsonpath::{JsonPath, PathItem};
    /// let path = JsonPath::member_and_below("payload");
    /// assert!(path.matches(&[PathItem::Key(b"payload")]));
    /// assert!(path.matches(&[PathItem::Key(b"payload"), PathItem::Index(3)]));
    /// assert!(!path.matches(&[PathItem::Key(b"id")]));
    /// ```
    pub fn member_and_below(name: &str) -> JsonPath {
        JsonPath {
            text: format!("$['{}'] and below", name.replace('\'', "\\'")),
            segments: vec![
                Segment {
                    descendant: false,
                    selector: Selector::Name(name.to_string()),
                },
                Segment {
                    descendant: false,
                    selector: Selector::Rest,
                },
            ],
        }
    }

    /// The path as given.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether the concrete path `at` is selected.
    pub fn matches(&self, at: &[PathItem<'_>]) -> bool {
        matches_from(&self.segments, at)
    }
}

fn continue_with_bracket(
    chars: &[char],
    i: &mut usize,
    descendant: bool,
    segments: &mut Vec<Segment>,
    fail: &dyn Fn(usize, &str) -> JsonPathError,
) -> Result<(), JsonPathError> {
    debug_assert_eq!(chars[*i], '[');
    *i += 1;
    let selector = match chars.get(*i) {
        Some('*') => {
            *i += 1;
            Selector::Wildcard
        }
        Some(&quote) if quote == '\'' || quote == '"' => {
            *i += 1;
            let mut name = String::new();
            loop {
                match chars.get(*i) {
                    None => return Err(fail(*i, "a closing quote")),
                    Some('\\') => {
                        let Some(&escaped) = chars.get(*i + 1) else {
                            return Err(fail(*i, "a character after '\\'"));
                        };
                        name.push(escaped);
                        *i += 2;
                    }
                    Some(&c) if c == quote => {
                        *i += 1;
                        break;
                    }
                    Some(&c) => {
                        name.push(c);
                        *i += 1;
                    }
                }
            }
            Selector::Name(name)
        }
        Some(c) if c.is_ascii_digit() => {
            let start = *i;
            while chars.get(*i).is_some_and(|c| c.is_ascii_digit()) {
                *i += 1;
            }
            let digits: String = chars[start..*i].iter().collect();
            Selector::Index(
                digits
                    .parse()
                    .map_err(|_| fail(start, "an index below 2^64"))?,
            )
        }
        Some('?') => {
            return Err(fail(
                *i,
                "'*', an index or a quoted name (filters are not supported)",
            ))
        }
        Some('-') => {
            return Err(fail(
                *i,
                "'*', an index or a quoted name (negative indexes are not supported)",
            ))
        }
        _ => return Err(fail(*i, "'*', an index or a quoted name")),
    };
    if chars.get(*i) != Some(&']') {
        return Err(fail(*i, "']' (slices and unions are not supported)"));
    }
    *i += 1;
    segments.push(Segment {
        descendant,
        selector,
    });
    Ok(())
}

fn selects(selector: &Selector, item: &PathItem<'_>) -> bool {
    match (selector, item) {
        (Selector::Wildcard | Selector::Rest, _) => true,
        (Selector::Index(n), PathItem::Index(i)) => n == i,
        (Selector::Name(name), PathItem::Key(raw)) => {
            if raw.contains(&b'\\') {
                unescape(raw).as_deref() == Some(name.as_str())
            } else {
                name.as_bytes() == *raw
            }
        }
        _ => false,
    }
}

fn matches_from(segments: &[Segment], at: &[PathItem<'_>]) -> bool {
    let Some((first, rest)) = segments.split_first() else {
        return at.is_empty();
    };
    if first.selector == Selector::Rest {
        return true;
    }
    if first.descendant {
        (0..at.len()).any(|i| selects(&first.selector, &at[i]) && matches_from(rest, &at[i + 1..]))
    } else {
        !at.is_empty() && selects(&first.selector, &at[0]) && matches_from(rest, &at[1..])
    }
}

/// The text of a JSON string's content (between the quotes), escapes
/// resolved; `None` if an escape is malformed.
pub fn unescape(raw: &[u8]) -> Option<String> {
    let mut out: Vec<u16> = Vec::with_capacity(raw.len());
    let mut bytes = Vec::new();
    let mut i = 0;
    let flush = |out: &mut Vec<u16>, bytes: &mut Vec<u8>| -> Option<()> {
        if !bytes.is_empty() {
            out.extend(std::str::from_utf8(bytes).ok()?.encode_utf16());
            bytes.clear();
        }
        Some(())
    };
    while i < raw.len() {
        if raw[i] != b'\\' {
            bytes.push(raw[i]);
            i += 1;
            continue;
        }
        flush(&mut out, &mut bytes)?;
        let unit = match raw.get(i + 1)? {
            b'"' => u16::from(b'"'),
            b'\\' => u16::from(b'\\'),
            b'/' => u16::from(b'/'),
            b'b' => 8,
            b'f' => 12,
            b'n' => u16::from(b'\n'),
            b'r' => u16::from(b'\r'),
            b't' => u16::from(b'\t'),
            b'u' => {
                let hex = std::str::from_utf8(raw.get(i + 2..i + 6)?).ok()?;
                i += 4;
                u16::from_str_radix(hex, 16).ok()?
            }
            _ => return None,
        };
        out.push(unit);
        i += 2;
    }
    flush(&mut out, &mut bytes)?;
    String::from_utf16(&out).ok()
}

/// Writes a concrete path the way `--json` reports it: `$.order.items[2].id`,
/// `$['a key']`.
pub fn display(at: &[PathItem<'_>]) -> String {
    let mut text = String::from("$");
    for item in at {
        match item {
            PathItem::Index(i) => text.push_str(&format!("[{i}]")),
            PathItem::Key(raw) => {
                let key =
                    unescape(raw).unwrap_or_else(|| String::from_utf8_lossy(raw).into_owned());
                let plain = !key.is_empty()
                    && !key.starts_with(|c: char| c.is_ascii_digit())
                    && key.chars().all(|c| c.is_alphanumeric() || c == '_');
                if plain {
                    text.push('.');
                    text.push_str(&key);
                } else {
                    text.push_str("['");
                    text.push_str(&key.replace('\\', "\\\\").replace('\'', "\\'"));
                    text.push_str("']");
                }
            }
        }
    }
    text
}

impl std::str::FromStr for JsonPath {
    type Err = JsonPathError;

    fn from_str(text: &str) -> Result<JsonPath, JsonPathError> {
        JsonPath::parse(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(path: &str, at: &[PathItem<'_>]) -> bool {
        JsonPath::parse(path).unwrap().matches(at)
    }

    #[test]
    fn selectors_and_descendants() {
        let at = [
            PathItem::Key(b"a b"),
            PathItem::Index(0),
            PathItem::Key(b"id"),
        ];
        assert!(m("$['a b'][0].id", &at));
        assert!(m("$[\"a b\"][*][\"id\"]", &at));
        assert!(m("$.*.*.*", &at));
        assert!(m("$..[0].id", &at));
        assert!(m("$..*", &at));
        assert!(!m("$['a b'][1].id", &at));
        assert!(!m("$.id", &at));
        assert!(!m("$", &at));
        assert!(m("$", &[]));
        assert!(m("$..id", &[PathItem::Key(b"id")]));
        assert!(m("$.k", &[PathItem::Key(br"\u006b")]));
    }

    #[test]
    fn refusals_name_the_position() {
        for (text, at) in [
            ("order", 0),
            ("$.", 2),
            ("$[1:2]", 3),
            ("$[?(@.a)]", 2),
            ("$[-1]", 2),
            ("$['a'", 5),
            ("$x", 1),
        ] {
            let e = JsonPath::parse(text).unwrap_err();
            assert_eq!(e.at, at, "{text}: {e}");
            assert!(e.to_string().contains(text), "{e}");
        }
    }

    #[test]
    fn display_quotes_what_needs_it() {
        let at = [
            PathItem::Key(b"order"),
            PathItem::Key(b"line items"),
            PathItem::Index(3),
            PathItem::Key(b"it's"),
        ];
        assert_eq!(display(&at), "$.order['line items'][3]['it\\'s']");
        assert!(JsonPath::parse(&display(&at)).unwrap().matches(&at));
    }
}
