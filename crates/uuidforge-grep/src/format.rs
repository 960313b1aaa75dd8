//! Which reader a document gets: by the file's extension, else by its
//! first bytes.

use std::path::Path;

/// A document format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// One JSON value (or several separated by white space).
    Json,
    /// One JSON value per line; each line is a record.
    Ndjson,
    /// XML; positions are reported as XPath.
    Xml,
    /// HTML (unclosed and void elements, unquoted attributes, raw
    /// `<script>` and `<style>` text).
    Html,
    /// Comma-separated values with a header row; each row is a record.
    Csv,
    /// Tab-separated values with a header row.
    Tsv,
    /// Anything else; each line is a record.
    Text,
}

/// Every format, as `--format` names them.
pub const NAMES: [&str; 7] = ["json", "ndjson", "xml", "html", "csv", "tsv", "text"];

impl Format {
    /// The format `--format` names (`json`, `ndjson` or `jsonl`, `xml`,
    /// `html`, `csv`, `tsv`, `text`).
    ///
    /// ```
    /// use uuidforge_grep::Format;
    /// assert_eq!(Format::from_name("jsonl"), Some(Format::Ndjson));
    /// assert_eq!(Format::from_name("yaml"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Format> {
        Some(match name.to_ascii_lowercase().as_str() {
            "json" => Format::Json,
            "ndjson" | "jsonl" | "jsonlines" => Format::Ndjson,
            "xml" => Format::Xml,
            "html" | "htm" => Format::Html,
            "csv" => Format::Csv,
            "tsv" | "tab" => Format::Tsv,
            "text" | "txt" | "log" => Format::Text,
            _ => return None,
        })
    }

    /// The format's name.
    pub fn name(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Ndjson => "ndjson",
            Format::Xml => "xml",
            Format::Html => "html",
            Format::Csv => "csv",
            Format::Tsv => "tsv",
            Format::Text => "text",
        }
    }

    /// The format a file's extension says, if it says one.
    ///
    /// ```
    /// use uuidforge_grep::Format;
    /// use std::path::Path;
    /// assert_eq!(Format::from_extension(Path::new("a/orders.JSONL")), Some(Format::Ndjson));
    /// assert_eq!(Format::from_extension(Path::new("feed.atom")), Some(Format::Xml));
    /// assert_eq!(Format::from_extension(Path::new("README")), None);
    /// ```
    pub fn from_extension(path: &Path) -> Option<Format> {
        let extension = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match extension.as_str() {
            "json" | "geojson" | "har" => Format::Json,
            "ndjson" | "jsonl" => Format::Ndjson,
            "xml" | "svg" | "xhtml" | "rss" | "atom" | "xsd" | "xsl" | "gpx" | "kml" => Format::Xml,
            "html" | "htm" => Format::Html,
            "csv" => Format::Csv,
            "tsv" | "tab" => Format::Tsv,
            _ => return None,
        })
    }

    /// The format of `bytes` by their beginning: JSON when they open an
    /// object with a member name (or `{}`) or an array of values (NDJSON when the first line is
    /// a whole value and the next starts another), HTML for `<!doctype
    /// html` or `<html`, XML for other markup, else text.
    ///
    /// ```
    /// use uuidforge_grep::Format;
    /// assert_eq!(Format::sniff(b"{\"a\": 1}\n{\"a\": 2}\n"), Format::Ndjson);
    /// assert_eq!(Format::sniff(b"{\n  \"a\": 1\n}\n"), Format::Json);
    /// assert_eq!(Format::sniff(b"<!DOCTYPE html><p>hi"), Format::Html);
    /// assert_eq!(Format::sniff(b"<?xml version=\"1.0\"?><a/>"), Format::Xml);
    /// assert_eq!(Format::sniff(b"id,name\n1,x\n"), Format::Text);
    /// assert_eq!(Format::sniff(b"{017f22e2-79b0-7cc3-98c4-dc0c0c07398f}\n"), Format::Text);
    /// assert_eq!(Format::sniff(b"[INFO] started\n"), Format::Text);
    /// ```
    pub fn sniff(bytes: &[u8]) -> Format {
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        let start = bytes.iter().position(|b| !b.is_ascii_whitespace());
        let Some(start) = start else {
            return Format::Text;
        };
        let next = bytes[start + 1..].iter().find(|b| !b.is_ascii_whitespace());
        let json_start = match bytes[start] {
            b'{' => matches!(next, Some(b'"' | b'}')),
            b'[' => matches!(
                next,
                Some(b'[' | b'{' | b'"' | b']' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n')
            ),
            _ => false,
        };
        match bytes[start] {
            b'{' | b'[' if json_start => {
                let line_end = memchr::memchr(b'\n', &bytes[start..]).map(|n| start + n);
                let whole_line = line_end.is_some_and(|end| {
                    crate::json::walk(&bytes[start..end], &mut |_: &[_], _, _, _| {}).is_ok()
                });
                let next_value = line_end.is_some_and(|end| {
                    bytes[end..]
                        .iter()
                        .find(|b| !b.is_ascii_whitespace())
                        .is_none_or(|b| matches!(b, b'{' | b'['))
                });
                if whole_line && next_value {
                    Format::Ndjson
                } else {
                    Format::Json
                }
            }
            b'<' => {
                let head = &bytes[start..bytes.len().min(start + 1024)];
                let lower = head.to_ascii_lowercase();
                let html = memchr::memmem::find(&lower, b"<!doctype html").is_some()
                    || memchr::memmem::find(&lower, b"<html").is_some();
                if html {
                    Format::Html
                } else {
                    Format::Xml
                }
            }
            _ => Format::Text,
        }
    }
}
