//! Anchor Modeler's XML (`<schema>` with `<knot>`, `<anchor>` and its
//! `<attribute>`s, `<tie>` with `<anchorRole>`/`<knotRole>`) read into a
//! [`Model`]. Identities become UUIDv7 (anchors) or the knot's mapped
//! type; `timeRange` means historized; an attribute's `<key of="ITS
//! ANCHOR">` makes it part of the business key when it is static.
//! Metadata, layout and descriptions are not carried over.

use crate::model::{Anchor, Attribute, Knot, Model, Role, Tie};
use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

/// Malformed XML or a missing attribute: line, column and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XmlError {
    /// Line (from 1).
    pub line: usize,
    /// Column (from 1, in bytes).
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for XmlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

impl std::error::Error for XmlError {}

fn locate(text: &str, offset: usize, message: String) -> XmlError {
    let before = &text.as_bytes()[..offset.min(text.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let column = offset
        - before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |n| n + 1)
        + 1;
    XmlError {
        line,
        column,
        message,
    }
}

fn attribute(element: &BytesStart<'_>, name: &str) -> Option<String> {
    element
        .attributes()
        .flatten()
        .find(|a| a.key.0 == name)
        .and_then(|a| {
            a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                .ok()
                .map(|v| v.into_owned())
        })
}

/// Reads an Anchor Modeler XML model.
///
/// ```
/// let model = uuidforge_model::anchor_xml::read(r#"<schema>
///   <knot mnemonic="GEN" descriptor="Gender" identity="bit" dataRange="varchar(42)"/>
///   <anchor mnemonic="AC" descriptor="Actor" identity="int">
///     <attribute mnemonic="NAM" descriptor="Name" timeRange="datetime" dataRange="varchar(42)"/>
///     <attribute mnemonic="GEN" descriptor="Gender" knotRange="GEN"/>
///   </anchor>
/// </schema>"#).unwrap();
/// assert!(model.anchors[0].attributes[0].historized);
/// assert_eq!(model.anchors[0].attributes[1].knot.as_deref(), Some("GEN"));
/// ```
pub fn read(text: &str) -> Result<Model, XmlError> {
    let mut reader = Reader::from_str(text);
    let mut model = Model {
        schema: "public".into(),
        extension_schema: "public".into(),
        knots: Vec::new(),
        anchors: Vec::new(),
        ties: Vec::new(),
        sources: Vec::new(),
        datavault: Default::default(),
    };
    // The element path, to know whose child an element is.
    let mut path: Vec<String> = Vec::new();
    let mut saw_schema = false;
    loop {
        let at = reader.buffer_position() as usize;
        let event = reader
            .read_event()
            .map_err(|e| locate(text, reader.error_position() as usize, e.to_string()))?;
        let (element, empty) = match event {
            Event::Start(e) => (e, false),
            Event::Empty(e) => (e, true),
            Event::End(_) => {
                path.pop();
                continue;
            }
            Event::Eof => break,
            _ => continue,
        };
        let name = element.name().0.to_string();
        let required = |key: &str| {
            attribute(&element, key)
                .ok_or_else(|| locate(text, at, format!("<{name}> has no {key}=\"…\"")))
        };
        let parent = path.last().map(String::as_str);
        match (parent, name.as_str()) {
            (None, "schema") => saw_schema = true,
            (Some("schema"), "knot") => model.knots.push(Knot {
                mnemonic: required("mnemonic")?,
                descriptor: required("descriptor")?,
                data_type: required("dataRange")?,
                identity: match attribute(&element, "identity").as_deref() {
                    Some("bigint") => "bigint".into(),
                    Some("int") => "integer".into(),
                    Some("uniqueidentifier" | "uuid") => "uuid".into(),
                    _ => "smallint".into(),
                },
                values: Vec::new(),
            }),
            (Some("schema"), "anchor") => model.anchors.push(Anchor {
                mnemonic: required("mnemonic")?,
                descriptor: required("descriptor")?,
                attributes: Vec::new(),
                business_key: Vec::new(),
            }),
            (Some("anchor"), "attribute") => {
                let attribute_of = Attribute {
                    mnemonic: required("mnemonic")?,
                    descriptor: required("descriptor")?,
                    data_type: attribute(&element, "dataRange"),
                    knot: attribute(&element, "knotRange"),
                    historized: attribute(&element, "timeRange").is_some(),
                };
                let anchor = model.anchors.last_mut().expect("inside an anchor");
                anchor.attributes.push(attribute_of);
            }
            (Some("attribute"), "key") => {
                let anchor = model.anchors.last_mut().expect("inside an anchor");
                let attribute_of = anchor.attributes.last().expect("inside an attribute");
                let own = attribute(&element, "of").as_deref() == Some(anchor.mnemonic.as_str());
                if own
                    && !attribute_of.historized
                    && !anchor.business_key.contains(&attribute_of.mnemonic)
                {
                    let mnemonic = attribute_of.mnemonic.clone();
                    anchor.business_key.push(mnemonic);
                }
            }
            (Some("schema"), "tie") => model.ties.push(Tie {
                roles: Vec::new(),
                historized: attribute(&element, "timeRange").is_some(),
            }),
            (Some("tie"), kind @ ("anchorRole" | "knotRole")) => {
                let player = required("type")?;
                let role = Role {
                    role: required("role")?,
                    anchor: (kind == "anchorRole").then(|| player.clone()),
                    knot: (kind == "knotRole").then_some(player),
                    identifier: attribute(&element, "identifier").as_deref() == Some("true"),
                };
                model
                    .ties
                    .last_mut()
                    .expect("inside a tie")
                    .roles
                    .push(role);
            }
            (None, other) => {
                return Err(locate(
                    text,
                    at,
                    format!("expected the root element <schema>, found <{other}>"),
                ));
            }
            _ => {}
        }
        if !empty {
            path.push(name);
        }
    }
    if !saw_schema {
        return Err(locate(text, text.len(), "no <schema> element".into()));
    }
    Ok(model)
}
