//! A JSON reader that hands over every string (value or object key) with
//! its path and byte range, without building the value: what a search
//! needs, at memory speed (strings are skipped with `memchr`).

use crate::jsonpath::PathItem;

/// Malformed JSON: where, and what was expected there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    /// Byte offset of the problem in the text walked.
    pub offset: usize,
    /// What was expected.
    pub expected: &'static str,
}

/// What [`walk`] hands over: the path of a string, its content's byte
/// range (between the quotes, escapes as written) and whether it is an
/// object key (whose path is that of its member).
pub trait Visitor<'a> {
    /// One string.
    fn string(&mut self, path: &[PathItem<'a>], start: usize, end: usize, is_key: bool);
}

impl<'a, F: FnMut(&[PathItem<'a>], usize, usize, bool)> Visitor<'a> for F {
    fn string(&mut self, path: &[PathItem<'a>], start: usize, end: usize, is_key: bool) {
        self(path, start, end, is_key)
    }
}

#[inline]
fn skip_space(text: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = text.get(i) {
        i += 1;
    }
    i
}

/// The offset of the quote closing the string that opens at `open`.
#[inline]
fn string_end(text: &[u8], open: usize) -> Result<usize, JsonError> {
    let mut i = open + 1;
    loop {
        match memchr::memchr2(b'"', b'\\', &text[i..]) {
            Some(k) if text[i + k] == b'"' => return Ok(i + k),
            Some(k) => i += k + 2,
            None => break,
        }
        if i > text.len() {
            break;
        }
    }
    Err(JsonError {
        offset: open,
        expected: "a closing '\"' for this string",
    })
}

/// Walks every JSON value of `text` (one, or several separated by white
/// space as in NDJSON), handing each string to `visitor`. Stops at the
/// first syntax error.
///
/// ```
/// use uuidforge_grep::json::walk;
/// use uuidforge_grep::jsonpath::display;
/// let text = br#"{"order": {"items": [{"id": "a"}, {"id": "b"}]}}"#;
/// let mut seen = Vec::new();
/// walk(text, &mut |path: &[_], start: usize, end: usize, key: bool| {
///     if !key {
///         seen.push((display(path), String::from_utf8_lossy(&text[start..end]).into_owned()));
///     }
/// }).unwrap();
/// assert_eq!(seen, [("$.order.items[0].id".to_string(), "a".to_string()), ("$.order.items[1].id".to_string(), "b".to_string())]);
/// let error = walk(br#"{"a": [1, 2}"#, &mut |_: &[_], _, _, _| {}).unwrap_err();
/// assert_eq!((error.offset, error.expected), (11, "',' or ']' after an array element"));
/// ```
pub fn walk<'a>(text: &'a [u8], visitor: &mut impl Visitor<'a>) -> Result<(), JsonError> {
    let mut i = skip_space(text, 0);
    if i == text.len() {
        return Err(JsonError {
            offset: i,
            expected: "a JSON value",
        });
    }
    while i < text.len() {
        i = skip_space(text, walk_value(text, i, visitor)?);
    }
    Ok(())
}

fn walk_value<'a>(
    text: &'a [u8],
    mut i: usize,
    visitor: &mut impl Visitor<'a>,
) -> Result<usize, JsonError> {
    let fail = |offset, expected| Err(JsonError { offset, expected });
    let mut path: Vec<PathItem<'a>> = Vec::new();
    // The open containers, innermost last: `{` or `[`.
    let mut open: Vec<u8> = Vec::new();
    'value: loop {
        i = skip_space(text, i);
        match text.get(i) {
            Some(b'{') => {
                i = skip_space(text, i + 1);
                if text.get(i) == Some(&b'}') {
                    i += 1;
                } else {
                    open.push(b'{');
                    i = member_key(text, i, &mut path, visitor)?;
                    continue 'value;
                }
            }
            Some(b'[') => {
                i = skip_space(text, i + 1);
                if text.get(i) == Some(&b']') {
                    i += 1;
                } else {
                    open.push(b'[');
                    path.push(PathItem::Index(0));
                    continue 'value;
                }
            }
            Some(b'"') => {
                let end = string_end(text, i)?;
                visitor.string(&path, i + 1, end, false);
                i = end + 1;
            }
            Some(b't') if text[i..].starts_with(b"true") => i += 4,
            Some(b'f') if text[i..].starts_with(b"false") => i += 5,
            Some(b'n') if text[i..].starts_with(b"null") => i += 4,
            Some(b'-' | b'0'..=b'9') => i = number_end(text, i)?,
            _ => return fail(i, "a JSON value"),
        }
        // After a value: close containers until one takes another element.
        loop {
            let Some(&container) = open.last() else {
                return Ok(i);
            };
            i = skip_space(text, i);
            match (container, text.get(i)) {
                (b'{', Some(b',')) => {
                    path.pop();
                    i = member_key(text, skip_space(text, i + 1), &mut path, visitor)?;
                    continue 'value;
                }
                (b'[', Some(b',')) => {
                    if let Some(PathItem::Index(n)) = path.last_mut() {
                        *n += 1;
                    }
                    i += 1;
                    continue 'value;
                }
                (b'{', Some(b'}')) | (b'[', Some(b']')) => {
                    path.pop();
                    open.pop();
                    i += 1;
                }
                (b'{', _) => return fail(i, "',' or '}' after an object member"),
                _ => return fail(i, "',' or ']' after an array element"),
            }
        }
    }
}

/// The end of the number at `i`, read as RFC 8259 §6 writes one:
/// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?` (a number cut off
/// after its sign, point or exponent is an error, not a value).
fn number_end(text: &[u8], mut i: usize) -> Result<usize, JsonError> {
    let digits = |i: usize| i + text[i..].iter().take_while(|b| b.is_ascii_digit()).count();
    let fail = |offset| {
        Err(JsonError {
            offset,
            expected: "a digit of a JSON number",
        })
    };
    if text.get(i) == Some(&b'-') {
        i += 1;
    }
    match text.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => i = digits(i),
        _ => return fail(i),
    }
    if text.get(i) == Some(&b'.') {
        let end = digits(i + 1);
        if end == i + 1 {
            return fail(end);
        }
        i = end;
    }
    if let Some(b'e' | b'E') = text.get(i) {
        i += 1;
        if let Some(b'+' | b'-') = text.get(i) {
            i += 1;
        }
        let end = digits(i);
        if end == i {
            return fail(end);
        }
        i = end;
    }
    Ok(i)
}

/// Reads `"key" :` at `i`, pushes the member onto `path` and hands the key
/// to the visitor; returns the offset of the member's value.
fn member_key<'a>(
    text: &'a [u8],
    i: usize,
    path: &mut Vec<PathItem<'a>>,
    visitor: &mut impl Visitor<'a>,
) -> Result<usize, JsonError> {
    if text.get(i) != Some(&b'"') {
        return Err(JsonError {
            offset: i,
            expected: "a member name in double quotes",
        });
    }
    let end = string_end(text, i)?;
    path.push(PathItem::Key(&text[i + 1..end]));
    visitor.string(path, i + 1, end, true);
    let colon = skip_space(text, end + 1);
    if text.get(colon) != Some(&b':') {
        return Err(JsonError {
            offset: colon,
            expected: "':' after a member name",
        });
    }
    Ok(colon + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_cut_off_are_errors() {
        let ok = |t: &[u8]| walk(t, &mut |_: &[_], _, _, _| {}).is_ok();
        for good in [&b"-1000000"[..], b"0", b"1.5e-3", b"[1,-0.0,2E+9]", b"12"] {
            assert!(ok(good), "{}", String::from_utf8_lossy(good));
        }
        for cut in [&b"-"[..], b"1.", b"1e", b"1e+", b"[-", b"-.5", b"01x"] {
            assert!(!ok(cut), "{}", String::from_utf8_lossy(cut));
        }
    }
}
