//! Where each piece of a key migration's work belongs ([`Phase`]), in the
//! one order both schedules keep, and what a piece of work is ([`Work`]):
//! the kinds of objects ([`super::kinds`]) place their work in phases, and a
//! schedule ([`Schedule`]) places the phases in steps. One transaction
//! runs every phase in this order; batches run some before the swap, the
//! swap in one short transaction, the rest after. No schedule spells what
//! goes where beyond that placement.

use super::moves::Fill;
use crate::action::{Action, NewKeys};

/// Where a piece of work stands, in the order both schedules keep (the
/// variants' order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Phase {
    /// Written tables published with their own columns only while batches
    /// fill (a subscriber never sees the work columns).
    PublishOwnColumns,
    /// The key map (old key as text → new key) made.
    MakeMap,
    /// Columns added, one statement per table: in one transaction those
    /// that keep the old values (empty until the rewrite), in batches the
    /// new ones.
    AddColumns,
    /// Triggers keeping the new columns right for rows others write
    /// meanwhile (batches).
    WriterTriggers,
    /// The new keys computed by the library and copied into the map.
    Keys,
    /// The key map, filled, given its keys (one transaction): old keys and
    /// new keys each unique.
    IndexMap,
    /// The key map made readable by the rewrite (one transaction): its
    /// functions, and for integer keys the array of new keys.
    MapLookup,
    /// Memory for this transaction's joins and index builds.
    Settings,
    /// Publications publish nothing of the change's own writes.
    QuietPublications,
    /// Published tables keep a replica identity while their key is gone.
    IdentityFull,
    /// The writers' triggers dropped (batches, in the swap).
    DropWriterTriggers,
    /// Deferrable constraints checked as rows change: a table with pending
    /// events cannot be altered.
    CheckImmediately,
    /// Views over the changed columns dropped.
    DropViews,
    /// Foreign keys to the key dropped.
    DropForeignKeys,
    /// Constraints and indexes over the changed columns dropped.
    DropDependents,
    /// The primary key dropped (no index to maintain while every row is
    /// written, in one transaction).
    DropKey,
    /// Objects tied to a changed column dropped, to be made again over the
    /// new one (generated columns, policies, publications' column lists,
    /// rules, statistics, triggers).
    DropObjects,
    /// The changed columns' defaults dropped before their type changes
    /// (one transaction): the key's identity, sequence or default, a
    /// reference's default, made again over the new values after.
    DropDefaults,
    /// The application's triggers kept from firing on the fill.
    QuietTriggers,
    /// The new columns filled (in batches: range of pages by range of
    /// pages, twice).
    Fill,
    /// Each table written once (one transaction): the key and references
    /// take their new values in place, the columns beside them the old.
    Rewrite,
    /// Copies of a uuid key rewritten in place.
    RewriteCopies,
    /// The application's triggers as they were.
    RestoreTriggers,
    /// Indexes built concurrently before the swap (batches).
    Build,
    /// NOT NULL proved by CHECK constraints added not valid (batches).
    ProveNotNull,
    /// Those CHECK constraints validated, writers going on (batches).
    ValidateNotNull,
    /// The key, the references, the constraints, indexes and foreign keys
    /// over them made over the new columns.
    Move,
    /// The objects dropped before made again over the new columns.
    MakeObjects,
    /// The changed columns' NOT NULL names, comments and privileges.
    ColumnExtras,
    /// The views made again.
    MakeViews,
    /// Published tables' own replica identity back.
    IdentityBack,
    /// Written tables published with every column again (batches, in the
    /// swap).
    PublishAllColumns,
    /// Publications publish what they did.
    PublishingBack,
    /// Nothing but the old values' unique index is left on an old column,
    /// or the transaction fails naming what is.
    Guard,
    /// Foreign keys and CHECKs made not valid in the swap validated
    /// (batches, writers going on).
    Validate,
    /// A partitioned table's foreign key attaching its partitions' copies
    /// (batches, writers waiting).
    Attach,
    /// Foreign keys declared on partitions validated (batches).
    ValidateAttached,
    /// The key map dropped (batches: it outlives the sessions; in one
    /// transaction, the functions the rewrite read it through).
    DropMap,
}

/// A piece of a key migration's work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Work {
    /// Statements of the action layer.
    Action(Action),
    /// An index built concurrently, outside any transaction, with what it
    /// is for.
    Build {
        /// What it is for, as the plan says.
        what: String,
        /// The build.
        action: Action,
    },
    /// A new column filled.
    Fill(Fill),
    /// The new keys computed and copied into the map.
    Keys(NewKeys),
}

/// A piece of work in its phase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placed {
    /// Where it stands.
    pub phase: Phase,
    /// What it does.
    pub work: Work,
    /// The kind of object that placed it (its name in the registry).
    pub by: &'static str,
}

impl Placed {
    /// `actions` in `phase`, each a piece of work.
    pub fn actions(phase: Phase, actions: impl IntoIterator<Item = Action>) -> Vec<Placed> {
        actions
            .into_iter()
            .map(|a| Placed {
                phase,
                work: Work::Action(a),
                by: "",
            })
            .collect()
    }

    /// One action in `phase`.
    pub fn action(phase: Phase, action: Action) -> Placed {
        Placed {
            phase,
            work: Work::Action(action),
            by: "",
        }
    }

    /// The statements it runs, as a schedule would run them (a fill as one
    /// statement over its whole table).
    pub fn statements(&self) -> Vec<String> {
        match &self.work {
            Work::Action(a) | Work::Build { action: a, .. } => a.statements(),
            Work::Fill(f) => f.update().statements(),
            Work::Keys(k) => k.printed(),
        }
    }
}

/// How a key migration runs: everything in one transaction, or in steps
/// that each commit on their own while writers go on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schedule {
    /// One transaction, every table locked first.
    OneTransaction,
    /// Batches of about this many rows, writers going on.
    Batches(i64),
}

impl Schedule {
    /// Whether it runs in batches.
    pub fn in_batches(self) -> bool {
        matches!(self, Schedule::Batches(_))
    }

    /// Where the key map lives: a temporary table gone at commit in one
    /// transaction; in batches a table in the key's schema, which outlives
    /// the sessions.
    pub fn map(self) -> super::KeyMap {
        match self {
            Schedule::OneTransaction => super::KeyMap::Temporary,
            Schedule::Batches(_) => super::KeyMap::Kept,
        }
    }
}
