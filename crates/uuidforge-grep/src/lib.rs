//! Finding UUIDs in documents (D12): JSON, NDJSON, XML, HTML, CSV/TSV and
//! plain text, by value, version and time, restricted to JSON paths, tags
//! and attributes, URLs or columns.
//!
//! The library reads bytes and reports *records* (a whole document, an
//! NDJSON line, a CSV row or a text line) with the *hits* inside them;
//! walking directories and printing is the `uuidforge grep` command's.
//!
//! ```
//! use uuidforge_grep::{search, Event, Format, Matcher};
//! let doc = br#"{"order": {"id": "017f22e2-79b0-7cc3-98c4-dc0c0c07398f", "note": "017F22E279B07CC398C4DC0C0C07398F"}}"#;
//! let mut matcher = Matcher::default();
//! matcher.place.json_path = Some("$.order.id".parse().unwrap());
//! let mut paths = Vec::new();
//! search(doc, Format::Json, &matcher, false, &mut |event| {
//!     if let Event::Record(record) = event {
//!         paths.extend(record.hits.iter().map(|h| h.path.clone().unwrap()));
//!     }
//!     std::ops::ControlFlow::Continue(())
//! });
//! assert_eq!(paths, ["$.order.id"]);
//! ```

#![deny(missing_docs)]

pub mod format;
pub mod json;
pub mod jsonpath;
pub mod markup;
pub mod query;
pub mod search;
pub mod set;
pub mod table;
pub mod url;

pub use format::Format;
pub use query::Query;
pub use search::{search, Event, Hit, Matcher, Place, Record};
pub use set::UuidSet;
