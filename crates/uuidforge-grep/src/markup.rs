//! XML and HTML through `quick-xml`: every text node, attribute value and
//! comment with its element path and byte range.
//!
//! HTML is read leniently: void elements (`<br>`, `<img>`…) need no end
//! tag, an end tag closes the nearest open element of its name (unmatched
//! ones are ignored), attributes may be unquoted, and `<script>`/`<style>`
//! bodies are raw text.

use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

/// Malformed markup: where, and what the reader says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarkupError {
    /// Byte offset of the problem.
    pub offset: usize,
    /// The reader's message.
    pub message: String,
}

/// An open element.
#[derive(Debug, Clone)]
pub struct Element {
    /// Its name as written (HTML names in lower case).
    pub name: Vec<u8>,
    /// Its position among the siblings of the same name, from 1.
    pub position: usize,
    children: Vec<(Vec<u8>, usize)>,
}

/// What [`walk`] hands each string to: the open elements, the spot and
/// the string's byte range.
pub type Visit<'v> = dyn FnMut(&[Element], Spot<'_>, usize, usize) + 'v;

/// Where a string is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spot<'a> {
    /// Text (or CDATA) directly inside the innermost element.
    Text,
    /// The value of this attribute of the innermost element.
    Attribute(&'a [u8]),
    /// A comment inside the innermost element.
    Comment,
}

const VOID: [&[u8]; 14] = [
    b"area", b"base", b"br", b"col", b"embed", b"hr", b"img", b"input", b"link", b"meta", b"param",
    b"source", b"track", b"wbr",
];

/// The XPath of a spot: `/orders/order[2]/@id`, `/html/body/p[3]/text()`.
pub fn xpath(stack: &[Element], spot: Spot<'_>) -> String {
    let mut text = String::new();
    for element in stack {
        text.push('/');
        text.push_str(&String::from_utf8_lossy(&element.name));
        if element.position > 1 {
            text.push_str(&format!("[{}]", element.position));
        }
    }
    match spot {
        Spot::Text => text.push_str("/text()"),
        Spot::Comment => text.push_str("/comment()"),
        Spot::Attribute(name) => {
            text.push_str("/@");
            text.push_str(&String::from_utf8_lossy(name));
        }
    }
    text
}

fn offset_in(doc: &[u8], part: &[u8], fallback: usize) -> usize {
    let (base, at) = (doc.as_ptr() as usize, part.as_ptr() as usize);
    if at >= base && at + part.len() <= base + doc.len() {
        at - base
    } else {
        fallback
    }
}

fn open(stack: &mut Vec<Element>, top: &mut Vec<(Vec<u8>, usize)>, name: Vec<u8>) {
    let siblings = match stack.last_mut() {
        Some(parent) => &mut parent.children,
        None => top,
    };
    let position = match siblings.iter_mut().find(|(n, _)| *n == name) {
        Some((_, count)) => {
            *count += 1;
            *count
        }
        None => {
            siblings.push((name.clone(), 1));
            1
        }
    };
    stack.push(Element {
        name,
        position,
        children: Vec::new(),
    });
}

/// Walks `doc` as XML (`html` false) or HTML, handing over each string:
/// `(open elements, spot, start, end)`. XML stops at the first error.
pub fn walk(doc: &[u8], html: bool, visit: &mut Visit<'_>) -> Result<(), MarkupError> {
    let mut base = 0usize;
    let mut reader = reader_for(doc, html);
    let mut stack: Vec<Element> = Vec::new();
    let mut top = Vec::new();
    loop {
        let before = base + reader.buffer_position() as usize;
        let event = reader.read_event().map_err(|e| MarkupError {
            offset: base + reader.error_position() as usize,
            message: e.to_string(),
        })?;
        match event {
            Event::Start(start) if html => {
                let raw = html_open(doc, &start, false, before, &mut stack, &mut top, visit);
                if raw {
                    // Raw text: quick-xml would read `a<b` in a script as a tag.
                    let from = base + reader.buffer_position() as usize;
                    let name = stack.last().expect("just opened").name.clone();
                    let (close, resume) = raw_text_end(doc, from, &name);
                    visit(&stack, Spot::Text, from, close);
                    stack.pop();
                    base = resume;
                    reader = reader_for(&doc[resume..], html);
                }
            }
            Event::Empty(start) if html => {
                html_open(doc, &start, true, before, &mut stack, &mut top, visit);
            }
            Event::Start(start) => {
                open(&mut stack, &mut top, start.name().0.as_bytes().to_vec());
                attributes(doc, &start, before, false, &stack, visit);
            }
            Event::Empty(start) => {
                open(&mut stack, &mut top, start.name().0.as_bytes().to_vec());
                attributes(doc, &start, before, false, &stack, visit);
                stack.pop();
            }
            Event::End(end) => {
                if html {
                    let name = end.name().0.as_bytes().to_ascii_lowercase();
                    if let Some(k) = stack.iter().rposition(|e| e.name == name) {
                        stack.truncate(k);
                    }
                } else {
                    stack.pop();
                }
            }
            Event::Text(text) => {
                let at = offset_in(doc, text.as_bytes(), before);
                visit(&stack, Spot::Text, at, at + text.len());
            }
            Event::CData(text) => {
                let at = offset_in(doc, text.as_bytes(), before);
                visit(&stack, Spot::Text, at, at + text.len());
            }
            Event::Comment(text) => {
                let at = offset_in(doc, text.as_bytes(), before);
                visit(&stack, Spot::Comment, at, at + text.len());
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if !html && !stack.is_empty() {
        return Err(MarkupError {
            offset: doc.len(),
            message: format!(
                "the document ends inside <{}>",
                String::from_utf8_lossy(&stack.last().expect("not empty").name)
            ),
        });
    }
    Ok(())
}

fn reader_for(doc: &[u8], html: bool) -> Reader<&[u8]> {
    let mut reader = Reader::from_reader(doc);
    let config = reader.config_mut();
    config.check_end_names = !html;
    config.allow_unmatched_ends = html;
    config.allow_dangling_amp = html;
    config.check_comments = false;
    reader
}

/// Where the raw text of a `<script>` or `<style>` opened before `from`
/// ends, and where reading resumes after its end tag.
fn raw_text_end(doc: &[u8], from: usize, name: &[u8]) -> (usize, usize) {
    let mut at = from;
    while let Some(k) = memchr::memmem::find(&doc[at..], b"</") {
        let close = at + k;
        let after = close + 2 + name.len();
        if doc.len() >= after && doc[close + 2..after].eq_ignore_ascii_case(name) {
            let resume = memchr::memchr(b'>', &doc[after..]).map_or(doc.len(), |n| after + n + 1);
            return (close, resume);
        }
        at = close + 2;
    }
    (doc.len(), doc.len())
}

/// Opens an HTML element (void and self-closed ones close at once);
/// true for `<script>` and `<style>`, whose raw text the caller reads.
fn html_open(
    doc: &[u8],
    start: &BytesStart<'_>,
    self_closed: bool,
    before: usize,
    stack: &mut Vec<Element>,
    top: &mut Vec<(Vec<u8>, usize)>,
    visit: &mut Visit<'_>,
) -> bool {
    let name = start.name().0.as_bytes().to_ascii_lowercase();
    let empty = self_closed || VOID.contains(&name.as_slice());
    open(stack, top, name.clone());
    attributes(doc, start, before, true, stack, visit);
    let raw = !empty && (name == b"script" || name == b"style");
    if empty {
        stack.pop();
    }
    raw
}

fn attributes(
    doc: &[u8],
    start: &BytesStart<'_>,
    before: usize,
    html: bool,
    stack: &[Element],
    visit: &mut Visit<'_>,
) {
    let mut iter = if html {
        start.html_attributes()
    } else {
        start.attributes()
    };
    for attribute in iter.with_checks(false).flatten() {
        let at = offset_in(doc, attribute.value.as_bytes(), before);
        let name = if html {
            attribute.key.0.as_bytes().to_ascii_lowercase()
        } else {
            attribute.key.0.as_bytes().to_vec()
        };
        visit(
            stack,
            Spot::Attribute(&name),
            at,
            at + attribute.value.len(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spots(doc: &str, html: bool) -> Vec<(String, String)> {
        let mut out = Vec::new();
        walk(doc.as_bytes(), html, &mut |stack, spot, a, b| {
            let text = doc[a..b].trim();
            if !text.is_empty() {
                out.push((xpath(stack, spot), text.to_string()));
            }
        })
        .unwrap();
        out
    }

    #[test]
    fn xml_paths_count_same_name_siblings() {
        let doc = r#"<?xml version="1.0"?><orders><order id="a"><note>x<!-- c --></note></order><order id="b"><![CDATA[d]]></order></orders>"#;
        assert_eq!(
            spots(doc, false),
            [
                ("/orders/order/@id", "a"),
                ("/orders/order/note/text()", "x"),
                ("/orders/order/note/comment()", "c"),
                ("/orders/order[2]/@id", "b"),
                ("/orders/order[2]/text()", "d"),
            ]
            .map(|(a, b)| (a.to_string(), b.to_string()))
        );
    }

    #[test]
    fn html_is_read_leniently() {
        let doc = "<!DOCTYPE html><html><body><p>one<br>two<p>three<img src=x.png><a href=/o/1>go</a><script>if (a<b) {}</script><P>four</body></html>";
        let got = spots(doc, true);
        assert!(
            got.contains(&("/html/body/p/text()".into(), "two".into())),
            "{got:?}"
        );
        assert!(
            got.contains(&("/html/body/p/p/img/@src".into(), "x.png".into())),
            "{got:?}"
        );
        assert!(
            got.contains(&("/html/body/p/p/a/@href".into(), "/o/1".into())),
            "{got:?}"
        );
        assert!(
            got.contains(&("/html/body/p/p/script/text()".into(), "if (a<b) {}".into())),
            "{got:?}"
        );
    }

    #[test]
    fn xml_errors_have_an_offset() {
        let doc = b"<a><b></a>";
        let e = walk(doc, false, &mut |_, _, _, _| {}).unwrap_err();
        assert!(e.offset > 0 && e.offset <= doc.len(), "{e:?}");
        let e = walk(b"<a><b>", false, &mut |_, _, _, _| {}).unwrap_err();
        assert!(e.message.contains("<b>"), "{e:?}");
    }
}
