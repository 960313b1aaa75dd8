//! The search: a document, its format and a [`Matcher`] in; records and
//! their hits out, in document order.

use crate::jsonpath::{self, JsonPath, PathItem};
use crate::markup::{self, Element, Spot};
use crate::table::{self, Header};
use crate::url::UrlPattern;
use crate::{Format, Query};
use std::ops::ControlFlow;
use uuid::Uuid;
use uuidforge::scan::{tokens, TokenForm};

/// Where in a document a UUID must be. Every restriction given must hold,
/// so a restriction a format cannot meet (a JSON path in a CSV file)
/// leaves that format without hits.
#[derive(Debug, Clone, Default)]
pub struct Place {
    /// JSON and NDJSON: the string (or key) is at a path this selects.
    pub json_path: Option<JsonPath>,
    /// XML and HTML: inside an element of this name (with `attr`: the
    /// element whose attribute it is).
    pub tag: Option<String>,
    /// XML and HTML: in the value of this attribute.
    pub attr: Option<String>,
    /// Inside a URL matching this, where the pattern has a wildcard.
    pub url: Option<UrlPattern>,
    /// CSV and TSV: in this column (a header name or a number from 1).
    pub csv_column: Option<String>,
}

/// What makes a hit: the UUID ([`Query`]) and its place ([`Place`]).
#[derive(Debug, Clone, Default)]
pub struct Matcher {
    /// Which UUIDs.
    pub query: Query,
    /// Where.
    pub place: Place,
}

/// One UUID found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    /// Offset of its first byte in the document.
    pub start: usize,
    /// Offset just past it.
    pub end: usize,
    /// The UUID (of a UUID_192, its left 128 bits).
    pub uuid: Uuid,
    /// How it is spelled.
    pub form: TokenForm,
    /// JSON path (`$.order.items[2].id`), XPath (`/orders/order[2]/@id`)
    /// or CSV column name; `None` in plain text.
    pub path: Option<String>,
    /// It is (in) a JSON object key.
    pub key: bool,
}

/// A unit of output: a whole JSON, XML or HTML document, an NDJSON line,
/// a CSV row or a text line, with the hits inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// First byte.
    pub start: usize,
    /// Just past the last byte (line breaks excluded).
    pub end: usize,
    /// Its hits, in order (empty for a record handed over for `-v`).
    pub hits: Vec<Hit>,
}

/// What [`search`] hands over.
#[derive(Debug)]
pub enum Event<'r> {
    /// A CSV or TSV header row (byte range).
    Header(usize, usize),
    /// A record with hits (or, when every record was asked for, without).
    Record(&'r Record),
    /// Malformed input: byte offset and what was wrong. A document stops
    /// there; an NDJSON file goes on with its next line.
    Error(usize, String),
}

impl Matcher {
    /// Hits in `doc[start..end]`, a string at `path` (computed only when a
    /// hit needs it).
    fn collect(
        &self,
        doc: &[u8],
        (start, end): (usize, usize),
        path: &dyn Fn() -> Option<String>,
        key: bool,
        out: &mut Vec<Hit>,
    ) {
        if end - start < 26 {
            return;
        }
        let text = &doc[start..end];
        let mut ranges: Option<Vec<(usize, usize)>> = None;
        let mut place: Option<Option<String>> = None;
        for token in tokens(text) {
            if !self.query.accepts(&token.uuid) {
                continue;
            }
            if let Some(url) = &self.place.url {
                let ranges = ranges.get_or_insert_with(|| url.wildcard_ranges(text));
                if !ranges
                    .iter()
                    .any(|&(a, b)| a <= token.start && token.end <= b)
                {
                    continue;
                }
            }
            out.push(Hit {
                start: start + token.start,
                end: start + token.end,
                uuid: token.uuid,
                form: token.form,
                path: place.get_or_insert_with(path).clone(),
                key,
            });
        }
    }

    fn only(&self, json: bool, markup: bool, table: bool) -> bool {
        let p = &self.place;
        (json || p.json_path.is_none())
            && (markup || (p.tag.is_none() && p.attr.is_none()))
            && (table || p.csv_column.is_none())
    }

    fn json_place(&self, at: &[PathItem<'_>]) -> bool {
        self.only(true, false, false) && self.place.json_path.as_ref().is_none_or(|p| p.matches(at))
    }

    fn markup_place(&self, stack: &[Element], spot: Spot<'_>, html: bool) -> bool {
        if !self.only(false, true, false) {
            return false;
        }
        let same = |name: &[u8], wanted: &str| {
            if html {
                name.eq_ignore_ascii_case(wanted.as_bytes())
            } else {
                name == wanted.as_bytes()
                    || name.rsplit(|&b| b == b':').next() == Some(wanted.as_bytes())
            }
        };
        match (&self.place.tag, &self.place.attr) {
            (tag, Some(attr)) => {
                matches!(spot, Spot::Attribute(name) if same(name, attr))
                    && tag
                        .as_ref()
                        .is_none_or(|t| stack.last().is_some_and(|e| same(&e.name, t)))
            }
            (Some(tag), None) => stack.iter().any(|e| same(&e.name, tag)),
            (None, None) => true,
        }
    }
}

/// Searches `doc` read as `format`, handing records with hits (every
/// record when `every_record`, for `-v`) and errors to `sink`, which may
/// stop the search.
pub fn search(
    doc: &[u8],
    format: Format,
    matcher: &Matcher,
    every_record: bool,
    sink: &mut dyn FnMut(Event<'_>) -> ControlFlow<()>,
) {
    match format {
        Format::Text => {
            let text_ok = matcher.only(false, false, false);
            line_records(doc, matcher, every_record, sink, &mut |(start, end)| {
                let mut hits = Vec::new();
                if text_ok {
                    matcher.collect(doc, (start, end), &|| None, false, &mut hits);
                }
                Ok(hits)
            });
        }
        Format::Ndjson => {
            line_records(
                doc,
                matcher,
                every_record,
                sink,
                &mut |(start, end)| match json_hits(doc, (start, end), matcher) {
                    (hits, None) => Ok(hits),
                    (_, Some(e)) => Err((start + e.0, e.1)),
                },
            );
        }
        Format::Json => {
            // A document cut off (or broken) part way: what was read before
            // the error is reported, then the error.
            let end = trim_end(doc, 0, doc.len());
            let (hits, error) = json_hits(doc, (0, end), matcher);
            if error.is_none() || !hits.is_empty() {
                let _ = emit(0, end, hits, every_record && error.is_none(), sink);
            }
            if let Some((offset, message)) = error {
                let _ = sink(Event::Error(offset, message));
            }
        }
        Format::Xml | Format::Html => {
            let html = format == Format::Html;
            let mut hits = Vec::new();
            let result = markup::walk(doc, html, &mut |stack, spot, start, end| {
                if matcher.markup_place(stack, spot, html) {
                    matcher.collect(
                        doc,
                        (start, end),
                        &|| Some(markup::xpath(stack, spot)),
                        false,
                        &mut hits,
                    );
                }
            });
            let end = trim_end(doc, 0, doc.len());
            // As for JSON: the hits before an error, then the error.
            if result.is_ok() || !hits.is_empty() {
                let _ = emit(0, end, hits, every_record && result.is_ok(), sink);
            }
            if let Err(e) = result {
                let _ = sink(Event::Error(e.offset, e.message));
            }
        }
        Format::Csv | Format::Tsv => table_records(doc, format, matcher, every_record, sink),
    }
}

fn emit(
    start: usize,
    end: usize,
    hits: Vec<Hit>,
    every_record: bool,
    sink: &mut dyn FnMut(Event<'_>) -> ControlFlow<()>,
) -> ControlFlow<()> {
    if hits.is_empty() && !every_record {
        return ControlFlow::Continue(());
    }
    sink(Event::Record(&Record { start, end, hits }))
}

fn trim_end(doc: &[u8], start: usize, mut end: usize) -> usize {
    while end > start && matches!(doc[end - 1], b'\n' | b'\r') {
        end -= 1;
    }
    end
}

/// Hits in a JSON text (those before its first syntax error when it has
/// one), and the offset (from `start`) and text of that error.
fn json_hits(
    doc: &[u8],
    (start, end): (usize, usize),
    matcher: &Matcher,
) -> (Vec<Hit>, Option<(usize, String)>) {
    let mut hits = Vec::new();
    let text = &doc[start..end];
    let error =
        crate::json::walk(text, &mut |at: &[PathItem<'_>],
                                      a: usize,
                                      b: usize,
                                      key: bool| {
            if b - a >= 26 && matcher.json_place(at) {
                matcher.collect(
                    text,
                    (a, b),
                    &|| Some(jsonpath::display(at)),
                    key,
                    &mut hits,
                );
            }
        })
        .map_err(|e| (e.offset, format!("malformed JSON: expected {}", e.expected)))
        .err();
    for hit in &mut hits {
        hit.start += start;
        hit.end += start;
    }
    (hits, error)
}

type LineHits<'f> = dyn FnMut((usize, usize)) -> Result<Vec<Hit>, (usize, String)> + 'f;

/// Line-by-line formats. Without `every_record`, only lines holding a UUID
/// the query accepts are read further: one pass of the token scanner over
/// the whole document finds them.
fn line_records(
    doc: &[u8],
    matcher: &Matcher,
    every_record: bool,
    sink: &mut dyn FnMut(Event<'_>) -> ControlFlow<()>,
    line_hits: &mut LineHits<'_>,
) {
    let mut handle = |start: usize, end: usize| -> ControlFlow<()> {
        let end = trim_end(doc, start, end);
        if doc[start..end].iter().all(u8::is_ascii_whitespace) {
            return ControlFlow::Continue(());
        }
        match line_hits((start, end)) {
            Ok(hits) => emit(start, end, hits, every_record, sink),
            Err((offset, message)) => sink(Event::Error(offset, message)),
        }
    };
    let line_end =
        |from: usize| memchr::memchr(b'\n', &doc[from..]).map_or(doc.len(), |n| from + n);
    if every_record {
        let mut start = 0;
        while start < doc.len() {
            let end = line_end(start);
            if handle(start, end).is_break() {
                return;
            }
            start = end + 1;
        }
        return;
    }
    let mut at = 0;
    while at < doc.len() {
        let Some(token) = tokens(&doc[at..]).find(|t| matcher.query.accepts(&t.uuid)) else {
            return;
        };
        let found = at + token.start;
        let start = memchr::memrchr(b'\n', &doc[at..found]).map_or(at, |n| at + n + 1);
        let end = line_end(found);
        if handle(start, end).is_break() {
            return;
        }
        at = end + 1;
    }
}

fn table_records(
    doc: &[u8],
    format: Format,
    matcher: &Matcher,
    every_record: bool,
    sink: &mut dyn FnMut(Event<'_>) -> ControlFlow<()>,
) {
    let delimiter = if format == Format::Tsv { b'\t' } else { b',' };
    let mut header = Header::default();
    let mut wanted: Option<Option<usize>> = None;
    let table_ok = matcher.only(false, false, true);
    table::walk(doc, delimiter, &mut |row| {
        let (start, end, fields) = match row {
            table::Row::Header(h) => {
                header = h;
                return sink(Event::Header(header.range.0, header.range.1));
            }
            table::Row::Data((start, end), fields) => (start, end, fields),
        };
        let column = match (&matcher.place.csv_column, wanted) {
            (_, Some(column)) => column,
            (None, None) => None,
            (Some(spec), None) => match header.column(spec) {
                Some(c) => {
                    wanted = Some(Some(c));
                    Some(c)
                }
                None => {
                    let message = format!(
                        "--csv-column '{spec}': no such column (the header has {})",
                        header.names.join(", ")
                    );
                    let _ = sink(Event::Error(header.range.0, message));
                    return ControlFlow::Break(());
                }
            },
        };
        let mut hits = Vec::new();
        if table_ok {
            for field in fields {
                if column.is_none_or(|c| c == field.column) {
                    let name = header.names.get(field.column).cloned();
                    let name = name.unwrap_or_else(|| format!("{}", field.column + 1));
                    matcher.collect(
                        doc,
                        (field.start, field.end),
                        &|| Some(name.clone()),
                        false,
                        &mut hits,
                    );
                }
            }
        }
        emit(start, end, hits, every_record, sink)
    });
}

/// Line and column (both from 1; the column counts bytes) of `offset`,
/// for offsets met in increasing order.
#[derive(Debug, Clone, Default)]
pub struct LineCounter {
    at: usize,
    line: usize,
    line_start: usize,
}

impl LineCounter {
    /// Line and column of `offset` in `doc`; offsets below the last one
    /// asked start the count again.
    ///
    /// ```
    /// let mut lines = uuidforge_grep::search::LineCounter::default();
    /// assert_eq!(lines.locate(b"ab\ncd\nef", 4), (2, 2));
    /// assert_eq!(lines.locate(b"ab\ncd\nef", 7), (3, 2));
    /// assert_eq!(lines.locate(b"ab\ncd\nef", 0), (1, 1));
    /// ```
    pub fn locate(&mut self, doc: &[u8], offset: usize) -> (usize, usize) {
        if offset < self.at {
            *self = LineCounter::default();
        }
        for n in memchr::memchr_iter(b'\n', &doc[self.at..offset]) {
            self.line += 1;
            self.line_start = self.at + n + 1;
        }
        self.at = offset;
        (self.line + 1, offset - self.line_start + 1)
    }
}
