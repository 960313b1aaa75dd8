//! The model: knots, anchors with attributes, ties, and (for Data Vault
//! loading) sources. One format for the three targets; the YAML file is
//! this structure (its JSON Schema is [`crate::json_schema`]), and Anchor
//! Modeler's XML is read into it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A whole model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Model {
    /// The PostgreSQL schema every object is created in (created if
    /// missing).
    #[serde(default = "default_schema")]
    pub schema: String,
    /// The schema the uuidforge extension is installed in (`CREATE
    /// EXTENSION uuidforge SCHEMA …`; default public). Its functions are
    /// called through it: PostgreSQL 18 has its own per-backend `uuidv7()`
    /// in `pg_catalog`, which an unqualified call would reach first.
    #[serde(default = "default_schema")]
    pub extension_schema: String,
    /// Small sets of values shared by attributes and ties (gender, rating).
    #[serde(default)]
    pub knots: Vec<Knot>,
    /// Entities: each gets a UUIDv7 identity.
    #[serde(default)]
    pub anchors: Vec<Anchor>,
    /// Relationships between anchors (and knots).
    #[serde(default)]
    pub ties: Vec<Tie>,
    /// Data Vault only: staging tables and what they load.
    #[serde(default)]
    pub sources: Vec<Source>,
    /// Data Vault only: how hub and link keys are made.
    #[serde(default)]
    pub datavault: DataVaultOptions,
}

fn default_schema() -> String {
    "public".to_string()
}

/// A knot: a small, shared set of values.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Knot {
    /// Short upper-case code, unique among knots (`GEN`).
    pub mnemonic: String,
    /// Name (`Gender`).
    pub descriptor: String,
    /// PostgreSQL type of the values (`varchar(42)`; SQL Server names of
    /// Anchor Modeler such as `tinyint` or `varchar(max)` are mapped).
    #[serde(rename = "type")]
    pub data_type: String,
    /// Type of the knot's identity: `smallint` (default), `integer`,
    /// `bigint` or `uuid` (a UUIDv7).
    #[serde(default = "default_knot_identity")]
    pub identity: String,
    /// Values inserted with the DDL.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
}

fn default_knot_identity() -> String {
    "smallint".to_string()
}

/// An anchor: an entity, identified by a UUIDv7.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Anchor {
    /// Short upper-case code, unique among anchors (`AC`).
    pub mnemonic: String,
    /// Name (`Actor`).
    pub descriptor: String,
    /// Its attributes.
    #[serde(default)]
    pub attributes: Vec<Attribute>,
    /// Mnemonics of the static attributes that identify it in source data
    /// (its natural key; the Data Vault hub's business key). Without one,
    /// the hub takes a text business key column.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub business_key: Vec<String>,
}

/// An attribute of an anchor: a value (`type`) or a knot (`knot`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Attribute {
    /// Short upper-case code, unique within the anchor (`NAM`).
    pub mnemonic: String,
    /// Name (`Name`).
    pub descriptor: String,
    /// PostgreSQL type of the value; exactly one of `type` and `knot`.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub data_type: Option<String>,
    /// Mnemonic of the knot whose values it takes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knot: Option<String>,
    /// Its value changes over time (kept with a changing time).
    #[serde(default)]
    pub historized: bool,
}

/// A tie: a relationship between anchors, possibly knotted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Tie {
    /// Its roles, in order (at least two, at least one an anchor).
    pub roles: Vec<Role>,
    /// It changes over time (kept with a changing time).
    #[serde(default)]
    pub historized: bool,
}

/// One role of a tie: an anchor or a knot playing it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Role {
    /// The role's name (`wasCast`), unique within the tie.
    pub role: String,
    /// Mnemonic of the anchor playing it; exactly one of `anchor` and
    /// `knot`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anchor: Option<String>,
    /// Mnemonic of the knot playing it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knot: Option<String>,
    /// Part of the tie's identity. With no identifier role, every anchor
    /// role is unique on its own (a one-to-one tie).
    #[serde(default)]
    pub identifier: bool,
}

/// Data Vault: a staging table and what one of its rows holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// Name (`casting`): the staging table is `stage_NAME`, its loader
    /// `load_NAME(load_ts)`, its satellites `sat_ANCHOR__NAME`.
    pub name: String,
    /// The staging table's columns (all `text`).
    pub columns: Vec<String>,
    /// The anchors a row mentions.
    pub anchors: Vec<SourceAnchor>,
    /// The ties a row mentions.
    #[serde(default)]
    pub ties: Vec<SourceTie>,
}

/// One anchor mentioned by a staging row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SourceAnchor {
    /// Mnemonic of the anchor.
    pub anchor: String,
    /// A name for it in `ties` (default: the mnemonic); needed when a row
    /// mentions an anchor twice (parent and child).
    #[serde(rename = "as", default, skip_serializing_if = "Option::is_none")]
    pub alias: Option<String>,
    /// Attribute mnemonic → staging column. The business key's
    /// attributes (or `key` without one) must be mapped.
    #[serde(default)]
    pub attributes: BTreeMap<String, String>,
    /// The staging column holding the business key of an anchor without
    /// `business_key` attributes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

impl SourceAnchor {
    /// The name `ties` use for it.
    pub fn name(&self) -> &str {
        self.alias.as_deref().unwrap_or(&self.anchor)
    }
}

/// One tie mentioned by a staging row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SourceTie {
    /// The tie's name (as `uuidforge model --list` prints it, e.g.
    /// `AC_part_PR_in_RAT_got`).
    pub tie: String,
    /// Role → the anchor's name in `anchors` (anchor roles) or a staging
    /// column (knot roles).
    pub roles: BTreeMap<String, String>,
}

/// How Data Vault keys are made.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DataVaultOptions {
    /// `v7_from` (default): `uuidv7_from(load time, business key, secret)`,
    /// the same key for the same business key loaded at the same time on
    /// any loader, in place of a hash key; `uuidv7`: a fresh UUIDv7.
    #[serde(default)]
    pub hub_keys: HubKeys,
}

/// See [`DataVaultOptions::hub_keys`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HubKeys {
    /// Deterministic: `uuidv7_from(load time, business key, secret)`.
    #[default]
    V7From,
    /// A fresh `uuidv7()`.
    Uuidv7,
}

/// A model that does not hold together: where, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelError {
    /// Where in the model (`anchors[2].attributes[0].knot`).
    pub at: String,
    /// What is wrong and what was expected.
    pub message: String,
}

impl std::fmt::Display for ModelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.at, self.message)
    }
}

impl std::error::Error for ModelError {}

impl Tie {
    /// The tie's name, Anchor Modeling style: each role's mnemonic and
    /// name (`AC_part_PR_in_RAT_got`).
    pub fn name(&self) -> String {
        self.roles
            .iter()
            .map(|r| format!("{}_{}", r.player(), r.role))
            .collect::<Vec<_>>()
            .join("_")
    }

    /// The roles that identify a row: the identifier roles, or with none
    /// the first anchor role.
    pub fn key_roles(&self) -> Vec<&Role> {
        let ids: Vec<&Role> = self.roles.iter().filter(|r| r.identifier).collect();
        if ids.is_empty() {
            self.roles
                .iter()
                .filter(|r| r.anchor.is_some())
                .take(1)
                .collect()
        } else {
            ids
        }
    }

    /// Anchor roles unique on their own (one-to-one ties): every anchor
    /// role but the first, when no role is an identifier.
    pub fn unique_roles(&self) -> Vec<&Role> {
        if self.roles.iter().any(|r| r.identifier) {
            return Vec::new();
        }
        self.roles
            .iter()
            .filter(|r| r.anchor.is_some())
            .skip(1)
            .collect()
    }
}

impl Role {
    /// The mnemonic of the anchor or knot playing it.
    pub fn player(&self) -> &str {
        self.anchor
            .as_deref()
            .or(self.knot.as_deref())
            .unwrap_or("?")
    }
}

fn is_name(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 40
        && text.starts_with(|c: char| c.is_ascii_alphabetic())
        && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl Model {
    /// The anchor with this mnemonic.
    pub fn anchor(&self, mnemonic: &str) -> Option<&Anchor> {
        self.anchors.iter().find(|a| a.mnemonic == mnemonic)
    }

    /// The knot with this mnemonic.
    pub fn knot(&self, mnemonic: &str) -> Option<&Knot> {
        self.knots.iter().find(|k| k.mnemonic == mnemonic)
    }

    /// The tie with this name.
    pub fn tie(&self, name: &str) -> Option<&Tie> {
        self.ties.iter().find(|t| t.name() == name)
    }

    /// Checks names, references and keys; the first problem is returned.
    pub fn validate(&self) -> Result<(), ModelError> {
        let fail = |at: String, message: String| Err(ModelError { at, message });
        if !is_name(&self.schema) {
            return fail(
                "schema".into(),
                format!("'{}' is not a name (letters, digits, '_')", self.schema),
            );
        }
        let mut seen = std::collections::HashSet::new();
        for (i, knot) in self.knots.iter().enumerate() {
            let at = format!("knots[{i}]");
            for (field, value) in [
                ("mnemonic", &knot.mnemonic),
                ("descriptor", &knot.descriptor),
            ] {
                if !is_name(value) {
                    return fail(format!("{at}.{field}"), format!("'{value}' is not a name (a letter, then letters, digits, '_'; at most 40)"));
                }
            }
            if !seen.insert(("knot", knot.mnemonic.clone())) {
                return fail(
                    format!("{at}.mnemonic"),
                    format!("'{}' names two knots", knot.mnemonic),
                );
            }
            crate::sqltype::pg_type(&knot.data_type).map_err(|e| ModelError {
                at: format!("{at}.type"),
                message: e.to_string(),
            })?;
            if !["smallint", "integer", "bigint", "uuid"].contains(&knot.identity.as_str()) {
                return fail(
                    format!("{at}.identity"),
                    format!(
                        "'{}': expected smallint, integer, bigint or uuid",
                        knot.identity
                    ),
                );
            }
        }
        for (i, anchor) in self.anchors.iter().enumerate() {
            let at = format!("anchors[{i}]");
            for (field, value) in [
                ("mnemonic", &anchor.mnemonic),
                ("descriptor", &anchor.descriptor),
            ] {
                if !is_name(value) {
                    return fail(format!("{at}.{field}"), format!("'{value}' is not a name (a letter, then letters, digits, '_'; at most 40)"));
                }
            }
            if !seen.insert(("anchor", anchor.mnemonic.clone())) {
                return fail(
                    format!("{at}.mnemonic"),
                    format!("'{}' names two anchors", anchor.mnemonic),
                );
            }
            let mut attributes = std::collections::HashSet::new();
            for (j, attribute) in anchor.attributes.iter().enumerate() {
                let at = format!("{at}.attributes[{j}]");
                for (field, value) in [
                    ("mnemonic", &attribute.mnemonic),
                    ("descriptor", &attribute.descriptor),
                ] {
                    if !is_name(value) {
                        return fail(format!("{at}.{field}"), format!("'{value}' is not a name (a letter, then letters, digits, '_'; at most 40)"));
                    }
                }
                if !attributes.insert(&attribute.mnemonic) {
                    return fail(
                        format!("{at}.mnemonic"),
                        format!(
                            "'{}' names two attributes of {}",
                            attribute.mnemonic, anchor.mnemonic
                        ),
                    );
                }
                match (&attribute.data_type, &attribute.knot) {
                    (Some(t), None) => {
                        crate::sqltype::pg_type(t).map_err(|e| ModelError {
                            at: format!("{at}.type"),
                            message: e.to_string(),
                        })?;
                    }
                    (None, Some(k)) if self.knot(k).is_some() => {}
                    (None, Some(k)) => {
                        return fail(
                            format!("{at}.knot"),
                            format!(
                                "'{k}' is not a knot (knots: {})",
                                self.knots
                                    .iter()
                                    .map(|k| k.mnemonic.as_str())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ),
                        )
                    }
                    _ => return fail(at, "expected exactly one of `type` and `knot`".into()),
                }
            }
            for (j, key) in anchor.business_key.iter().enumerate() {
                match anchor.attributes.iter().find(|a| &a.mnemonic == key) {
                    None => {
                        return fail(
                            format!("{at}.business_key[{j}]"),
                            format!("'{key}' is not an attribute of {}", anchor.mnemonic),
                        )
                    }
                    Some(a) if a.historized => {
                        return fail(
                            format!("{at}.business_key[{j}]"),
                            format!("'{key}' is historized; a business key is static"),
                        )
                    }
                    Some(_) => {}
                }
            }
        }
        let mut tie_names = std::collections::HashSet::new();
        for (i, tie) in self.ties.iter().enumerate() {
            let at = format!("ties[{i}]");
            if tie.roles.len() < 2 || !tie.roles.iter().any(|r| r.anchor.is_some()) {
                return fail(
                    format!("{at}.roles"),
                    "expected at least two roles, one of them an anchor".into(),
                );
            }
            let mut roles = std::collections::HashSet::new();
            for (j, role) in tie.roles.iter().enumerate() {
                let at = format!("{at}.roles[{j}]");
                if !is_name(&role.role) {
                    return fail(
                        format!("{at}.role"),
                        format!("'{}' is not a name", role.role),
                    );
                }
                if !roles.insert(&role.role) {
                    return fail(
                        format!("{at}.role"),
                        format!("'{}' is used twice in this tie", role.role),
                    );
                }
                match (&role.anchor, &role.knot) {
                    (Some(a), None) if self.anchor(a).is_some() => {}
                    (None, Some(k)) if self.knot(k).is_some() => {}
                    (Some(a), None) => {
                        return fail(format!("{at}.anchor"), format!("'{a}' is not an anchor"))
                    }
                    (None, Some(k)) => {
                        return fail(format!("{at}.knot"), format!("'{k}' is not a knot"))
                    }
                    _ => return fail(at, "expected exactly one of `anchor` and `knot`".into()),
                }
            }
            if tie.name().len() > 55 {
                return fail(at, format!("the tie's name {} is longer than PostgreSQL keeps (63 bytes with its suffixes); use shorter role names", tie.name()));
            }
            if !tie_names.insert(tie.name()) {
                return fail(at, format!("two ties are named {}", tie.name()));
            }
        }
        for (i, source) in self.sources.iter().enumerate() {
            self.validate_source(i, source)?;
        }
        Ok(())
    }

    fn validate_source(&self, i: usize, source: &Source) -> Result<(), ModelError> {
        let at = format!("sources[{i}]");
        let fail = |at: String, message: String| Err(ModelError { at, message });
        if !is_name(&source.name) {
            return fail(
                format!("{at}.name"),
                format!("'{}' is not a name", source.name),
            );
        }
        for (j, column) in source.columns.iter().enumerate() {
            if !is_name(column) {
                return fail(
                    format!("{at}.columns[{j}]"),
                    format!("'{column}' is not a name"),
                );
            }
        }
        let column = |at: String, c: &str| -> Result<(), ModelError> {
            if source.columns.iter().any(|x| x == c) {
                Ok(())
            } else {
                Err(ModelError {
                    at,
                    message: format!(
                        "'{c}' is not a column of the source (columns: {})",
                        source.columns.join(", ")
                    ),
                })
            }
        };
        let mut names = std::collections::HashSet::new();
        for (j, mention) in source.anchors.iter().enumerate() {
            let at = format!("{at}.anchors[{j}]");
            let Some(anchor) = self.anchor(&mention.anchor) else {
                return fail(
                    format!("{at}.anchor"),
                    format!("'{}' is not an anchor", mention.anchor),
                );
            };
            if !names.insert(mention.name()) {
                return fail(
                    at,
                    format!(
                        "'{}' is mentioned twice; name each with `as`",
                        mention.name()
                    ),
                );
            }
            for (attribute, c) in &mention.attributes {
                if !anchor.attributes.iter().any(|a| &a.mnemonic == attribute) {
                    return fail(
                        format!("{at}.attributes.{attribute}"),
                        format!("'{attribute}' is not an attribute of {}", anchor.mnemonic),
                    );
                }
                column(format!("{at}.attributes.{attribute}"), c)?;
            }
            if anchor.business_key.is_empty() {
                match &mention.key {
                    Some(c) => column(format!("{at}.key"), c)?,
                    None => return fail(format!("{at}.key"), format!("{} has no business_key attributes: name the staging column holding its key", anchor.mnemonic)),
                }
            } else {
                for key in &anchor.business_key {
                    if !mention.attributes.contains_key(key) {
                        return fail(
                            format!("{at}.attributes"),
                            format!(
                                "the business key attribute {key} of {} is not mapped",
                                anchor.mnemonic
                            ),
                        );
                    }
                }
            }
        }
        for (j, mention) in source.ties.iter().enumerate() {
            let at = format!("{at}.ties[{j}]");
            let Some(tie) = self.tie(&mention.tie) else {
                return fail(
                    format!("{at}.tie"),
                    format!(
                        "'{}' is not a tie (ties: {})",
                        mention.tie,
                        self.ties
                            .iter()
                            .map(Tie::name)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                );
            };
            for role in &tie.roles {
                let Some(value) = mention.roles.get(&role.role) else {
                    return fail(
                        format!("{at}.roles"),
                        format!("role '{}' is not mapped", role.role),
                    );
                };
                if let Some(anchor) = &role.anchor {
                    match source.anchors.iter().find(|m| m.name() == value) {
                        Some(m) if &m.anchor == anchor => {}
                        _ => {
                            return fail(
                                format!("{at}.roles.{}", role.role),
                                format!(
                                    "'{value}' is not a mention of anchor {anchor} in this source"
                                ),
                            )
                        }
                    }
                } else {
                    column(format!("{at}.roles.{}", role.role), value)?;
                }
            }
            if let Some(extra) = mention
                .roles
                .keys()
                .find(|r| !tie.roles.iter().any(|x| &x.role == *r))
            {
                return fail(
                    format!("{at}.roles.{extra}"),
                    format!("the tie has no role '{extra}'"),
                );
            }
        }
        Ok(())
    }
}
