//! A change as the runner runs it and the printer prints it: what it is
//! about, what it writes, what it backs up, its steps by mode.

use super::lock::Lock;
use super::step::{BatchStep, Check, Step};
use serde::{Deserialize, Serialize};
use uuidforge_db::error::{Plain, Vocabulary, WayOut};

/// A line of a plan's summary: its words, and the ways out it ends with,
/// which each front end spells its own way. Written in JSON as the
/// library's own words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// Its words.
    pub text: String,
    /// The ways out it names, after its words.
    pub ways_out: Vec<WayOut>,
}

impl Line {
    /// A line of `text` ending with `way_out`.
    pub fn with(text: impl Into<String>, way_out: WayOut) -> Line {
        Line {
            text: text.into(),
            ways_out: vec![way_out],
        }
    }

    /// The line in the words of a front end.
    pub fn rendered(&self, vocabulary: &dyn Vocabulary) -> String {
        let mut out = self.text.clone();
        for (i, w) in self.ways_out.iter().enumerate() {
            out.push_str(if i == 0 { ": " } else { ", or " });
            out.push_str(&w.rendered(vocabulary));
        }
        out
    }
}

/// `texts` as lines without ways out.
pub fn lines(texts: impl IntoIterator<Item = String>) -> Vec<Line> {
    texts.into_iter().map(Line::from).collect()
}

impl From<String> for Line {
    fn from(text: String) -> Line {
        Line {
            text,
            ways_out: Vec::new(),
        }
    }
}

impl From<&str> for Line {
    fn from(text: &str) -> Line {
        Line::from(text.to_string())
    }
}

impl Serialize for Line {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.rendered(&Plain))
    }
}

impl<'de> Deserialize<'de> for Line {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Line, D::Error> {
        String::deserialize(deserializer).map(Line::from)
    }
}

/// How a change runs, with its steps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum Run {
    /// All steps in one transaction, checked before commit.
    OneTransaction {
        /// The tables locked first, before the plan is made again and
        /// anything is read (what the checks read before the steps is what
        /// the steps change).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        lock: Option<Lock>,
        /// The steps, in order.
        steps: Vec<Step>,
        /// The checks after them.
        checks: Vec<Check>,
    },
    /// Each step committed on its own and recorded by the runner, so that
    /// a killed run goes on with `--resume`.
    Batches {
        /// Rows per batch of a backfill.
        batch_size: i64,
        /// The steps, in order.
        steps: Vec<BatchStep>,
        /// Settings of the runner's session, made before every step (the
        /// memory of its joins, sorts and index builds).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        session: Vec<SessionSetting>,
        /// How the change is given up while under way, before the step
        /// that begins changing the tables (an online copy before its
        /// swap); none when it cannot be.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        give_up: Option<GiveUp>,
    },
}

/// How a change in batches under way is given up until its step `before`
/// (0 the first) has committed: `statements` under `lock` drop everything
/// its steps made until then, and its state goes with them, in one
/// transaction. The tables are then as the application left them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GiveUp {
    /// The step that begins changing the tables (an online copy's swap):
    /// once it has committed, the change can only be completed.
    pub before: usize,
    /// The tables it locks first.
    pub lock: Lock,
    /// The statements.
    pub statements: Vec<String>,
}

/// A setting of a change's session (`SET name = 'value'`): it lasts for
/// the session, across the steps' transactions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionSetting {
    /// The setting's name (a server parameter).
    pub name: String,
    /// Its value.
    pub value: String,
}

impl SessionSetting {
    /// The statement that makes it.
    pub fn statement(&self) -> String {
        format!(
            "SET {} = {}",
            self.name,
            uuidforge_ident::quote_literal(&self.value)
        )
    }
}

impl Default for Run {
    fn default() -> Run {
        Run::OneTransaction {
            lock: None,
            steps: Vec::new(),
            checks: Vec::new(),
        }
    }
}

impl Run {
    /// The number of steps.
    pub fn len(&self) -> usize {
        match self {
            Run::OneTransaction { steps, .. } => steps.len(),
            Run::Batches { steps, .. } => steps.len(),
        }
    }

    /// Whether it has no step.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// What step `index` does.
    pub fn what(&self, index: usize) -> Option<&str> {
        match self {
            Run::OneTransaction { steps, .. } => steps.get(index).map(Step::what),
            Run::Batches { steps, .. } => steps.get(index).map(BatchStep::what),
        }
    }
}

/// A relation a change writes: the runner locks it for the change's length
/// and refuses another change of it meanwhile.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Touched {
    /// Its oid.
    pub oid: u32,
    /// Its name as shown (`schema.table`).
    pub name: String,
}

/// What a change backs up before it runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Backup {
    /// The relations (quoted, qualified).
    pub relations: Vec<String>,
    /// Whole schemas (quoted): what a SQL edition upgrade replaces.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub schemas: Vec<String>,
    /// Their definitions only (a rename), or their rows too.
    pub schema_only: bool,
}

/// A change: what the runner runs and the printer prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ChangePlan {
    /// The operation (`rename`, `migrate-key`, `merge`, `unmerge`).
    pub operation: String,
    /// What it is about, as a user names it again (`public.customers` of a
    /// key migration, the column of a rename): `--resume` finds it by this.
    pub target: String,
    /// The schema its state is kept in, while it runs in batches.
    pub schema: String,
    /// The relations it writes, each once, by oid.
    pub touches: Vec<Touched>,
    /// The plan's comment lines, first `plan: …`.
    pub summary: Vec<Line>,
    /// What to back up first.
    pub backup: Backup,
    /// The steps, by mode.
    pub run: Run,
    /// Printed after the plan: notes and scripts (an undo), each line as
    /// it is.
    pub epilogue: Vec<String>,
    /// Printed after the summary: what planning measured (a search's
    /// time), which differs from one planning to the next.
    #[serde(default)]
    pub measured: Measured,
}

/// Lines of what planning measured: printed with the plan, never compared
/// when the plan is made again before it runs (the same plan may take
/// another time to make).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Measured(pub Vec<Line>);

impl PartialEq for Measured {
    fn eq(&self, _: &Measured) -> bool {
        true
    }
}

impl Eq for Measured {}

impl Backup {
    /// Whether there is nothing to back up (a new schema's objects).
    pub fn is_empty(&self) -> bool {
        self.relations.is_empty() && self.schemas.is_empty()
    }
}

impl ChangePlan {
    /// Whether it runs in batches.
    pub fn in_batches(&self) -> bool {
        matches!(self.run, Run::Batches { .. })
    }
}

/// The relations of `touched`, each once, by oid, in the order given.
pub fn touched<'a>(
    relations: impl IntoIterator<Item = &'a uuidforge_db::catalog::Relation>,
) -> Vec<Touched> {
    let mut out: Vec<Touched> = Vec::new();
    for r in relations {
        if !out.iter().any(|t| t.oid == r.oid) {
            out.push(Touched {
                oid: r.oid,
                name: r.display_name(),
            });
        }
    }
    out
}

/// The names of `names`, each once, in order (what a change backs up).
pub fn distinct(names: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for name in names {
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}
