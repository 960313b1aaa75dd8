//! `--url 'https://host/orders/*'`: UUIDs inside URLs, where the pattern
//! has a wildcard.
//!
//! A pattern is a URL (or a path starting with `/`) in which `*` stands
//! for any run of characters inside one path segment (no `/`, `?`, `#`)
//! and `**` for any run across segments. A URL in the text matches when
//! the whole of it, up to its fragment and its query (unless the pattern
//! has a `?`), matches the pattern, letters compared in any case. The UUIDs that
//! count are those lying within the part a wildcard matched: in
//! `https://shop.example/orders/<order>/items/<item>`, the pattern
//! `https://shop.example/orders/*/items/*` yields both ids, and
//! `https://shop.example/orders/*/**` yields the order and what follows.
//!
//! ```
//! use uuidforge_grep::url::UrlPattern;
//! let pattern = UrlPattern::parse("https://shop.example/orders/*").unwrap();
//! let text = b"see https://shop.example/orders/ab12?x=1 and https://shop.example/orders/ab12/items/cd";
//! let ranges = pattern.wildcard_ranges(text);
//! assert_eq!(ranges.len(), 1);
//! assert_eq!(&text[ranges[0].0..ranges[0].1], b"ab12");
//! ```

/// A parsed `--url` pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlPattern {
    text: String,
    parts: Vec<Part>,
    with_query: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(Vec<u8>),
    Segment,
    Any,
}

/// Why a `--url` pattern does not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlPatternError {
    /// The pattern.
    pub pattern: String,
    /// What was expected.
    pub expected: &'static str,
}

impl std::fmt::Display for UrlPatternError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "--url '{}': expected {}", self.pattern, self.expected)
    }
}

impl std::error::Error for UrlPatternError {}

/// Characters that end a URL inside text.
#[inline]
fn ends_url(b: u8) -> bool {
    b.is_ascii_whitespace() || matches!(b, b'"' | b'\'' | b'<' | b'>' | b'`' | b'\\')
}

impl UrlPattern {
    /// Parses a pattern: it starts with a scheme (`https://…`) or `/`, and
    /// has at least one wildcard.
    pub fn parse(text: &str) -> Result<UrlPattern, UrlPatternError> {
        let fail = |expected| UrlPatternError {
            pattern: text.to_string(),
            expected,
        };
        let scheme = text.find("://").is_some_and(|at| {
            at > 0
                && text[..at]
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'+')
        });
        if !scheme && !text.starts_with('/') {
            return Err(fail(
                "a URL with its scheme (https://host/…) or a path starting with '/'",
            ));
        }
        if text.bytes().any(ends_url) {
            return Err(fail("no spaces, quotes or angle brackets"));
        }
        let mut parts = Vec::new();
        let bytes = text.as_bytes();
        let mut i = 0;
        let mut literal = Vec::new();
        while i < bytes.len() {
            if bytes[i] == b'*' {
                if !literal.is_empty() {
                    parts.push(Part::Literal(std::mem::take(&mut literal)));
                }
                if bytes.get(i + 1) == Some(&b'*') {
                    parts.push(Part::Any);
                    i += 2;
                } else {
                    parts.push(Part::Segment);
                    i += 1;
                }
            } else {
                literal.push(bytes[i].to_ascii_lowercase());
                i += 1;
            }
        }
        if !literal.is_empty() {
            parts.push(Part::Literal(literal));
        }
        if !parts.iter().any(|p| !matches!(p, Part::Literal(_))) {
            return Err(fail(
                "a '*' or '**' where the UUIDs are (https://host/orders/*)",
            ));
        }
        Ok(UrlPattern {
            text: text.to_string(),
            parts,
            with_query: text.contains('?'),
        })
    }

    /// The pattern as given.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The byte ranges of `text` that wildcards matched, over every URL of
    /// `text` that matches, left to right.
    pub fn wildcard_ranges(&self, text: &[u8]) -> Vec<(usize, usize)> {
        let Some(Part::Literal(head)) = self.parts.first() else {
            unreachable!("a pattern starts with a scheme or '/'")
        };
        let mut ranges = Vec::new();
        let (lower, upper) = (head[0], head[0].to_ascii_uppercase());
        let mut at = 0;
        while let Some(k) = memchr::memchr2(lower, upper, &text[at..]) {
            let start = at + k;
            let url_end = text[start..]
                .iter()
                .position(|&b| ends_url(b))
                .map_or(text.len(), |n| start + n);
            let mut captured = Vec::new();
            if self.match_at(&self.parts, text, start, url_end, &mut captured) {
                ranges.extend(captured);
                at = url_end.max(start + 1);
            } else {
                at = start + 1;
            }
        }
        ranges
    }

    fn match_at(
        &self,
        parts: &[Part],
        text: &[u8],
        at: usize,
        url_end: usize,
        captured: &mut Vec<(usize, usize)>,
    ) -> bool {
        let Some((first, rest)) = parts.split_first() else {
            return at == url_end || text[at] == b'#' || (!self.with_query && text[at] == b'?');
        };
        match first {
            Part::Literal(literal) => {
                at + literal.len() <= url_end
                    && text[at..at + literal.len()].eq_ignore_ascii_case(literal)
                    && self.match_at(rest, text, at + literal.len(), url_end, captured)
            }
            Part::Segment | Part::Any => {
                let any = matches!(first, Part::Any);
                let stops =
                    |b: u8| b == b'#' || (b == b'?' && !self.with_query) || (b == b'/' && !any);
                let limit = text[at..url_end]
                    .iter()
                    .position(|&b| stops(b))
                    .map_or(url_end, |n| at + n);
                for end in (at..=limit).rev() {
                    captured.push((at, end));
                    if self.match_at(rest, text, end, url_end, captured) {
                        return true;
                    }
                    captured.pop();
                }
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(pattern: &str, text: &str) -> Vec<String> {
        UrlPattern::parse(pattern)
            .unwrap()
            .wildcard_ranges(text.as_bytes())
            .into_iter()
            .map(|(a, b)| text[a..b].to_string())
            .collect()
    }

    #[test]
    fn wildcards_capture_segments_or_runs() {
        let url = "\"HTTPS://Shop.example/orders/o1/items/i2?x=y#f\"";
        assert_eq!(
            parts("https://shop.example/orders/*/items/*", url),
            ["o1", "i2"]
        );
        assert_eq!(
            parts("https://shop.example/orders/**", url),
            ["o1/items/i2"]
        );
        assert_eq!(
            parts("https://shop.example/orders/*", url),
            Vec::<String>::new()
        );
        assert_eq!(
            parts("https://shop.example/orders/*/items/*?x=*", url),
            ["o1", "i2", "y"]
        );
        assert_eq!(parts("/orders/*", "GET /orders/o9 HTTP/1.1"), ["o9"]);
        assert_eq!(
            parts("https://other.example/orders/*", url),
            Vec::<String>::new()
        );
    }

    #[test]
    fn bad_patterns_say_what_is_expected() {
        for p in [
            "shop.example/orders/*",
            "https://shop.example/orders/1",
            "https://a b/*",
        ] {
            let e = UrlPattern::parse(p).unwrap_err();
            assert!(e.to_string().contains(p), "{e}");
        }
    }
}
