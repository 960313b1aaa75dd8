//! Statements of a change: SQL text with its values bound by name, never
//! written into the text.

use serde::{Deserialize, Serialize};
use uuid::Uuid;
use uuidforge_db::error::DbError;

/// A value bound to a statement parameter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", content = "value", rename_all = "snake_case")]
pub enum Value {
    /// `uuid`.
    Uuid(Uuid),
    /// `uuid[]`.
    Uuids(Vec<Uuid>),
    /// `text` (NULL when `None`).
    Text(Option<String>),
    /// `text[]`.
    Texts(Vec<String>),
    /// What an earlier step kept under this binding's name (its
    /// `output`), as the parameter's type (`bigint`, `uuid`, `text`).
    Output,
}

/// A parameter by name: `$n` is the n-th binding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Binding {
    /// Its name (`new`, `olds`, `merge_id`).
    pub name: String,
    /// Its value.
    pub value: Value,
}

/// A statement of a change: the SQL (identifiers quoted, values as `$n`)
/// and its bindings in order.
///
/// ```
/// use uuidforge_change::action::{Statement, Value};
/// let s = Statement::with("DELETE FROM t WHERE id = $1", &[("old", Value::Text(Some("7".into())))]);
/// assert_eq!(s.printed(), "DELETE FROM t WHERE id = $1;  -- $1 = old");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Statement {
    /// The SQL.
    pub sql: String,
    /// `$1`, `$2`, … in order.
    pub bindings: Vec<Binding>,
}

impl Statement {
    /// A statement without parameters.
    pub fn sql(sql: impl Into<String>) -> Statement {
        Statement {
            sql: sql.into(),
            bindings: Vec::new(),
        }
    }

    /// A statement with `bindings` (name, value), `$1` first.
    pub fn with(sql: impl Into<String>, bindings: &[(&str, Value)]) -> Statement {
        Statement {
            sql: sql.into(),
            bindings: bindings
                .iter()
                .map(|(name, value)| Binding {
                    name: (*name).to_string(),
                    value: value.clone(),
                })
                .collect(),
        }
    }

    /// The printed line: the SQL, then which binding each `$n` is.
    pub fn printed(&self) -> String {
        if self.bindings.is_empty() {
            return format!("{};", self.sql);
        }
        let names: Vec<String> = self
            .bindings
            .iter()
            .enumerate()
            .map(|(i, b)| format!("${} = {}", i + 1, b.name))
            .collect();
        format!("{};  -- {}", self.sql, names.join(", "))
    }

    /// The statement with every [`Value::Output`] bound to what an
    /// earlier step kept under its name, as text (the runner parses it
    /// into the parameter's type).
    pub fn bound(&self, outputs: &super::Outputs) -> Result<Statement, DbError> {
        let bindings = self
            .bindings
            .iter()
            .map(|b| match &b.value {
                Value::Output => outputs
                    .get(&b.name)
                    .map(|v| Binding {
                        name: b.name.clone(),
                        value: Value::Text(Some(v.clone())),
                    })
                    .ok_or_else(|| {
                        DbError::unreadable("plan", format!("no step kept '{}' before", b.name))
                    }),
                _ => Ok(b.clone()),
            })
            .collect::<Result<_, _>>()?;
        Ok(Statement {
            sql: self.sql.clone(),
            bindings,
        })
    }
}
