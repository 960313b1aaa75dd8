//! CSV and TSV through `csv-core`: the header's column names and, for
//! every row, the byte range of each field as written (quotes included),
//! so hits keep their exact offsets.

use csv_core::{ReadFieldResult, Reader, ReaderBuilder};
use std::cell::RefCell;

/// One field of a row: its column (from 0) and raw byte range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// Column index.
    pub column: usize,
    /// First byte.
    pub start: usize,
    /// Just past the last byte.
    pub end: usize,
}

/// A table's header: column names (unquoted) and its byte range.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Header {
    /// Column names.
    pub names: Vec<String>,
    /// Byte range of the header line (without its line break).
    pub range: (usize, usize),
}

impl Header {
    /// The column a `--csv-column` names: a header name, else a number
    /// from 1.
    ///
    /// ```
    /// let header = uuidforge_grep::table::Header { names: vec!["id".into(), "customer".into()], range: (0, 11) };
    /// assert_eq!(header.column("customer"), Some(1));
    /// assert_eq!(header.column("1"), Some(0));
    /// assert_eq!(header.column("price"), None);
    /// ```
    pub fn column(&self, spec: &str) -> Option<usize> {
        self.names.iter().position(|n| n == spec).or_else(|| {
            spec.parse::<usize>()
                .ok()
                .filter(|n| (1..=self.names.len()).contains(n))
                .map(|n| n - 1)
        })
    }
}

/// What [`walk`] hands over.
#[derive(Debug)]
pub enum Row<'f> {
    /// The first row.
    Header(Header),
    /// Another row: its byte range (without line breaks) and fields.
    Data((usize, usize), &'f [Field]),
}

thread_local! {
    /// This thread's readers, by delimiter, built once each.
    static READERS: RefCell<Vec<(u8, Reader)>> = const { RefCell::new(Vec::new()) };
}

/// A reader for `delimiter`, reset, lent from this thread's readers until
/// dropped. Building one (csv-core's DFA, from every state and byte) costs
/// about 20 µs, a hundred times the search of a small document. (Lent,
/// not copied: csv-core 0.1's `Reader::clone` leaves the DFA's byte
/// classes behind, and the copy reads every byte as a record's end.)
struct Lent {
    delimiter: u8,
    reader: Option<Reader>,
}

impl Lent {
    fn new(delimiter: u8) -> Lent {
        let kept = READERS.with(|readers| {
            let mut readers = readers.borrow_mut();
            let i = readers.iter().position(|(d, _)| *d == delimiter)?;
            Some(readers.swap_remove(i).1)
        });
        let reader = match kept {
            Some(mut reader) => {
                reader.reset();
                reader
            }
            None => ReaderBuilder::new().delimiter(delimiter).build(),
        };
        Lent {
            delimiter,
            reader: Some(reader),
        }
    }

    fn reader(&mut self) -> &mut Reader {
        self.reader.as_mut().expect("lent until dropped")
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        if let Some(reader) = self.reader.take() {
            READERS.with(|readers| readers.borrow_mut().push((self.delimiter, reader)));
        }
    }
}

/// Reads `doc` (delimiter `,` or `\t`): each row goes to `on`, which may stop. Rows may have any number of fields.
pub fn walk(doc: &[u8], delimiter: u8, on: &mut dyn FnMut(Row<'_>) -> std::ops::ControlFlow<()>) {
    let mut lent = Lent::new(delimiter);
    let reader = lent.reader();
    // Unquoted field text; grown when a field is longer.
    let mut output = vec![0u8; 256];
    let (mut at, mut written) = (0usize, 0usize);
    let mut fields: Vec<Field> = Vec::new();
    let mut header: Option<Header> = Some(Header::default());
    let mut field_start = 0usize;
    loop {
        // An empty input tells csv-core the data ended.
        let (result, read, wrote) = reader.read_field(&doc[at..], &mut output[written..]);
        at += read;
        written += wrote;
        match result {
            ReadFieldResult::OutputFull => {
                let grown = output.len() * 2;
                output.resize(grown, 0);
            }
            ReadFieldResult::InputEmpty => {}
            ReadFieldResult::Field { record_end } => {
                fields.push(Field {
                    column: fields.len(),
                    start: field_start,
                    end: at,
                });
                if let Some(header) = header.as_mut() {
                    header
                        .names
                        .push(String::from_utf8_lossy(&output[..written]).into_owned());
                }
                written = 0;
                field_start = at;
                if record_end {
                    let row = trim_row(doc, fields[0].start, at);
                    let flow = match header.take() {
                        Some(mut header) => {
                            header.range = row;
                            on(Row::Header(header))
                        }
                        None => on(Row::Data(row, &fields)),
                    };
                    if flow.is_break() {
                        return;
                    }
                    fields.clear();
                }
            }
            ReadFieldResult::End => return,
        }
    }
}

/// A row's range without the line breaks around it.
fn trim_row(doc: &[u8], mut start: usize, mut end: usize) -> (usize, usize) {
    while start < end && matches!(doc[start], b'\n' | b'\r') {
        start += 1;
    }
    while end > start && matches!(doc[end - 1], b'\n' | b'\r') {
        end -= 1;
    }
    (start, end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_fields_and_quotes() {
        let doc = b"id,\"the name\"\r\n1,\"a, \"\"b\"\"\"\r\n2,c\n3";
        let mut names = Vec::new();
        let mut rows = Vec::new();
        walk(doc, b',', &mut |row| {
            let Row::Data(row, fields) = row else {
                let Row::Header(h) = row else { unreachable!() };
                names = h.names;
                return std::ops::ControlFlow::Continue(());
            };
            rows.push((
                String::from_utf8_lossy(&doc[row.0..row.1]).into_owned(),
                fields
                    .iter()
                    .map(|f| String::from_utf8_lossy(&doc[f.start..f.end]).into_owned())
                    .collect::<Vec<_>>(),
            ));
            std::ops::ControlFlow::Continue(())
        });
        assert_eq!(names, ["id", "the name"]);
        assert_eq!(rows.len(), 3, "{rows:?}");
        assert_eq!(rows[0].0, "1,\"a, \"\"b\"\"\"");
        assert!(rows[0].1[1].contains("a, \"\"b"), "{rows:?}");
        assert_eq!(rows[2].0, "3");
    }
}
