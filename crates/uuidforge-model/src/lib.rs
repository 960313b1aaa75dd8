//! D9: PostgreSQL DDL with UUIDv7 keys from a declarative model, instead
//! of spreadsheets and scripts. Three targets from one model:
//!
//! - [`anchor`]: Anchor Modeling's 6NF (knots, anchors, one table per
//!   attribute, ties), point-in-time functions, latest views written
//!   through;
//! - [`bitemporal`]: changing and recording time on every attribute and
//!   tie, as-of and as-was functions;
//! - [`datavault`]: hubs, links, satellites, effectivity satellites, with
//!   hub keys from `uuidv7_from(load time, business key)` in place of
//!   hash keys, and a loader per source.
//!
//! The model is read from the YAML format of [`model::Model`] (its JSON
//! Schema: [`json_schema`]) or from Anchor Modeler's XML ([`anchor_xml`]).
//!
//! ```
//! let model = uuidforge_model::from_yaml(r#"
//! anchors:
//!   - mnemonic: AC
//!     descriptor: Actor
//!     attributes:
//!       - { mnemonic: NAM, descriptor: Name, type: varchar(42), historized: true }
//! "#).unwrap();
//! let sql = uuidforge_model::anchor::generate(&model, "actors.yaml").unwrap();
//! assert!(sql.contains(r#"CREATE TABLE "public"."AC_Actor" (
//!     "AC_ID" uuid PRIMARY KEY DEFAULT "public".uuidv7()"#));
//! ```

#![deny(missing_docs)]

pub mod anchor;
pub mod anchor_xml;
pub mod bitemporal;
pub mod datavault;
pub mod ddl;
pub mod knots;
pub mod model;
pub mod sqltype;

pub use model::{Model, ModelError};

/// A model that could not be read.
#[derive(Debug)]
pub enum ReadError {
    /// Not YAML of the model's format (the message says where).
    Yaml(Box<serde_saphyr::Error>),
    /// Not Anchor Modeler's XML.
    Xml(anchor_xml::XmlError),
    /// Read, but not a valid model (it says where).
    Invalid(ModelError),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Yaml(e) => e.fmt(f),
            ReadError::Xml(e) => e.fmt(f),
            ReadError::Invalid(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for ReadError {}

/// Reads and validates a YAML model.
///
/// ```
/// let e = uuidforge_model::from_yaml("anchors: [{mnemonic: A}]").unwrap_err();
/// assert!(matches!(e, uuidforge_model::ReadError::Yaml(_)), "{e}");
/// ```
pub fn from_yaml(text: &str) -> Result<Model, ReadError> {
    let model: Model = serde_saphyr::from_str(text).map_err(|e| ReadError::Yaml(Box::new(e)))?;
    model.validate().map_err(ReadError::Invalid)?;
    Ok(model)
}

/// Reads and validates an Anchor Modeler XML model.
pub fn from_anchor_xml(text: &str) -> Result<Model, ReadError> {
    let model = anchor_xml::read(text).map_err(ReadError::Xml)?;
    model.validate().map_err(ReadError::Invalid)?;
    Ok(model)
}

/// The JSON Schema of the YAML model format.
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(Model);
    serde_json::to_string_pretty(&schema).expect("a schema serializes") + "\n"
}
