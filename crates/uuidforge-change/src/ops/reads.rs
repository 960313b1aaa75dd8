//! What a planning pass reads beside the catalog snapshot, by name: an
//! operation asks for [`Read`]s, the runner (or a test, from a captured
//! catalog) answers each under its name, and the planner reads the answers
//! back by name into typed values ([`Answers::get`]) — never by position.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use uuidforge_db::error::DbError;
use uuidforge_db::plan::Query;

/// A read of the planning pass: one row of text (JSON in every read of
/// this crate), answered under its `name`.
#[derive(Debug, Clone)]
pub struct Read {
    /// Its name, the key of its answer (`views`, `triggers`).
    pub name: String,
    /// What it reads (for errors).
    pub what: String,
    /// The query.
    pub query: Query,
    /// A read whose failure is an answer (a probe: does this expression
    /// still type over the new column?): the server's refusal is kept as
    /// [`Probe::Refused`] instead of stopping the plan.
    pub fallible: bool,
}

impl Read {
    /// A read of `what`, answered under `name`.
    pub fn new(name: impl Into<String>, what: impl Into<String>, query: Query) -> Read {
        Read {
            name: name.into(),
            what: what.into(),
            query,
            fallible: false,
        }
    }

    /// A probe: its failure is an answer.
    pub fn probe(name: impl Into<String>, what: impl Into<String>, query: Query) -> Read {
        Read {
            fallible: true,
            ..Read::new(name, what, query)
        }
    }
}

/// The answer of a probe ([`Read::probe`]), as JSON text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "probe", rename_all = "snake_case")]
pub enum Probe {
    /// The server ran it.
    Ran,
    /// The server refused it, with its message.
    Refused {
        /// The server's message.
        message: String,
    },
}

impl Probe {
    /// The answer recorded for a probe the server refused.
    pub fn refused_answer(message: &str) -> String {
        serde_json::to_string(&Probe::Refused {
            message: message.to_string(),
        })
        .expect("a probe serializes")
    }

    /// The answer recorded for a probe that ran.
    pub fn ran_answer() -> String {
        serde_json::to_string(&Probe::Ran).expect("a probe serializes")
    }
}

/// The answers of a planning pass, by read name.
///
/// ```
/// use uuidforge_change::ops::Answers;
/// let mut answers = Answers::default();
/// answers.insert("counts", "[1, 2]");
/// let counts: Vec<i64> = answers.get("counts", "the counts").unwrap().unwrap();
/// assert_eq!(counts, vec![1, 2]);
/// assert!(answers.get::<Vec<i64>>("other", "x").unwrap().is_none());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Answers(BTreeMap<String, String>);

impl Answers {
    /// Keeps `text` as the answer to the read `name`.
    pub fn insert(&mut self, name: impl Into<String>, text: impl Into<String>) {
        self.0.insert(name.into(), text.into());
    }

    /// Whether the read `name` was answered.
    pub fn has(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }

    /// The answer to `name` as text.
    pub fn text(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    /// The answer to `name` read as `T`; `None` when it was not asked.
    pub fn get<T: DeserializeOwned>(&self, name: &str, what: &str) -> Result<Option<T>, DbError> {
        self.text(name)
            .map(|text| {
                serde_json::from_str(text)
                    .map_err(|e| DbError::unreadable(what.to_string(), format!("{name}: {e}")))
            })
            .transpose()
    }

    /// The answer to `name` read as `T`, its default when not asked.
    pub fn get_or_default<T: DeserializeOwned + Default>(
        &self,
        name: &str,
        what: &str,
    ) -> Result<T, DbError> {
        Ok(self.get(name, what)?.unwrap_or_default())
    }

    /// The reads of `reads` not answered yet.
    pub fn missing(&self, reads: Vec<Read>) -> Vec<Read> {
        reads.into_iter().filter(|r| !self.has(&r.name)).collect()
    }

    /// The names answered, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }
}
