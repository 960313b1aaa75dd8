//! What a planning pass reads beside the catalog snapshot, typed: an
//! operation names each read by a [`Reading`] (its name made once, the type
//! its answer reads as), asks for [`Read`]s made from it, the runner (or a
//! test, from a captured catalog) answers each under its name, and the
//! planner reads the answers back through the same `Reading`: a name cannot
//! be misspelt between the two, and an answer reads as its type or fails.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::marker::PhantomData;
use uuidforge_db::error::DbError;
use uuidforge_db::plan::Query;

/// A read of the planning pass, by its name and the type of its answer.
pub trait Reading {
    /// What its answer reads as.
    type Answer;
    /// Its name, the key of its answer (`views`, `probe trigger 16420`).
    fn name(&self) -> String;
    /// What it reads, for errors and progress.
    fn what(&self) -> String;
    /// Its answer read from the text the server returned.
    fn parse(&self, text: &str) -> Result<Self::Answer, String>;

    /// The read of `query` under this name.
    fn read(&self, query: Query) -> Read {
        Read {
            name: self.name(),
            what: self.what(),
            query,
            fallible: false,
        }
    }

    /// A probe of `query` under this name: its failure is an answer
    /// ([`Probe::Refused`]).
    fn probe(&self, query: Query) -> Read {
        Read {
            fallible: true,
            ..self.read(query)
        }
    }
}

/// A read asked at most once per plan, under a fixed name, its answer JSON
/// of type `T`.
///
/// ```
/// use uuidforge_change::ops::{Answers, Named, Reading};
/// const COUNTS: Named<Vec<i64>> = Named::new("counts", "read the counts");
/// let mut answers = Answers::default();
/// answers.insert(COUNTS.name(), "[1, 2]");
/// assert_eq!(answers.answer(&COUNTS).unwrap(), Some(vec![1, 2]));
/// ```
pub struct Named<T> {
    name: &'static str,
    what: &'static str,
    answer: PhantomData<fn() -> T>,
}

impl<T> Named<T> {
    /// The read `name`, reading `what`.
    pub const fn new(name: &'static str, what: &'static str) -> Named<T> {
        Named {
            name,
            what,
            answer: PhantomData,
        }
    }
}

impl<T: DeserializeOwned> Reading for Named<T> {
    type Answer = T;

    fn name(&self) -> String {
        self.name.to_string()
    }

    fn what(&self) -> String {
        self.what.to_string()
    }

    fn parse(&self, text: &str) -> Result<T, String> {
        serde_json::from_str(text).map_err(|e| e.to_string())
    }
}

/// A read whose answer is kept as the text the server returned (JSON
/// compared later as it is).
pub struct NamedText {
    name: &'static str,
    what: &'static str,
}

impl NamedText {
    /// The read `name`, reading `what`.
    pub const fn new(name: &'static str, what: &'static str) -> NamedText {
        NamedText { name, what }
    }
}

impl Reading for NamedText {
    type Answer = String;

    fn name(&self) -> String {
        self.name.to_string()
    }

    fn what(&self) -> String {
        self.what.to_string()
    }

    fn parse(&self, text: &str) -> Result<String, String> {
        Ok(text.to_string())
    }
}

/// A read of one number about relation `oid` (`keys in 16384`): its
/// answer the number, none where the server returned none.
pub struct NumberOf {
    /// What names it before the oid (`keys in`).
    pub prefix: &'static str,
    /// The relation.
    pub oid: u32,
    /// What it reads.
    pub what: &'static str,
}

impl Reading for NumberOf {
    type Answer = Option<i64>;

    fn name(&self) -> String {
        format!("{} {}", self.prefix, self.oid)
    }

    fn what(&self) -> String {
        self.what.to_string()
    }

    fn parse(&self, text: &str) -> Result<Option<i64>, String> {
        Ok(text.trim().parse().ok())
    }
}

/// The read of the user triggers of the tables a change writes (what it
/// keeps from firing on its own writes).
pub(crate) const USER_TRIGGERS: Named<Vec<uuidforge_db::introspect::UserTrigger>> =
    Named::new("triggers", "read the triggers of the tables written");

/// A read of the planning pass: one row of text (JSON in every read of
/// this crate), answered under its `name`. Made by a [`Reading`].
#[derive(Debug, Clone)]
pub struct Read {
    /// Its name, the key of its answer.
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

/// The answer of a probe, as JSON text.
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

    /// The server's message when it refused.
    pub fn refusal(&self) -> Option<&str> {
        match self {
            Probe::Ran => None,
            Probe::Refused { message } => Some(message),
        }
    }
}

/// The answers of a planning pass, by read name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Answers(BTreeMap<String, String>);

impl Answers {
    /// Keeps `text` as the answer to the read `name` (what the runner
    /// read for [`Read::name`]).
    pub fn insert(&mut self, name: impl Into<String>, text: impl Into<String>) {
        self.0.insert(name.into(), text.into());
    }

    /// Whether the read `name` was answered.
    pub fn has(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }

    /// The answer to `reading`; `None` when it was not asked.
    pub fn answer<R: Reading>(&self, reading: &R) -> Result<Option<R::Answer>, DbError> {
        let name = reading.name();
        self.0
            .get(&name)
            .map(|text| {
                reading
                    .parse(text)
                    .map_err(|e| DbError::unreadable(reading.what(), format!("{name}: {e}")))
            })
            .transpose()
    }

    /// The answer to a read every plan asks: an error names it when it
    /// was not answered (the plan would otherwise take it for empty).
    pub fn required<R: Reading>(&self, reading: &R) -> Result<R::Answer, DbError> {
        self.answer(reading)?.ok_or_else(|| {
            DbError::unreadable(
                reading.what(),
                format!("the read '{}' was not answered", reading.name()),
            )
        })
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

#[cfg(test)]
mod tests {
    use super::*;

    const VIEWS: Named<Vec<String>> = Named::new("views", "read the views");

    #[test]
    fn an_answer_reads_as_its_type_and_a_missing_one_is_named() {
        let mut answers = Answers::default();
        assert_eq!(answers.answer(&VIEWS).unwrap(), None);
        let e = answers.required(&VIEWS).unwrap_err();
        assert!(e.message.contains("'views' was not answered"), "{e}");
        answers.insert(VIEWS.name(), "[\"v\"]");
        assert_eq!(answers.required(&VIEWS).unwrap(), ["v"]);
        answers.insert(VIEWS.name(), "{}");
        let e = answers.answer(&VIEWS).unwrap_err();
        assert!(e.to_string().starts_with("read the views: views:"), "{e}");
        let raw = NamedText::new("objects", "read the objects");
        answers.insert(raw.name(), "{\"a\": 1}");
        assert_eq!(answers.required(&raw).unwrap(), "{\"a\": 1}");
    }
}
