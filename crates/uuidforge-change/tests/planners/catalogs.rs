//! The catalogs the planner tests plan on: each a database of
//! `tests/fixtures/plans/NAME.sql`, captured from the real server into
//! `NAME-pgNN.json` (its catalog snapshot and, per case, every answer the
//! case's planning pass reads, by name) by `tests/capture_catalogs.rs`
//! (`scripts/capture-fixtures.sh`). The cases are named here once, for the
//! capture and the tests.
#![allow(dead_code)]

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;
use uuid::Uuid;
use uuidforge_change::ops::merge::{Merge, MergeOptions, OnConflict};
use uuidforge_change::ops::migrate_key::{CopySearch, MigrateKey, MigrateOptions};
use uuidforge_change::ops::rename::{Rename, RenameOptions};
use uuidforge_change::ops::unmerge::Unmerge;
use uuidforge_change::ops::{print, Answers, ChangePlan, Operation, Planned, Read};
use uuidforge_db::catalog::Snapshot;
use uuidforge_db::error::{DbError, Parameter, Reason, Vocabulary};

pub const ANN: &str = "01890a5d-ac96-774b-bcce-b302099a8057";
pub const ANN_B: &str = "01900a5d-ac96-774b-bcce-b302099a8058";
pub const BOB: &str = "01910a5d-ac96-774b-bcce-b302099a8059";
pub const CY: &str = "01920a5d-ac96-774b-bcce-b302099a8060";
pub const NEW: &str = "01a20e16-097a-7090-9062-c30bfcde9a7c";
/// What the capture merges Ann and Ann B. of `composite` into.
pub const MERGED: &str = "01a20e16-097a-7090-9062-c30bfcde9a7d";

pub fn uuid(s: &str) -> Uuid {
    s.parse().unwrap()
}

/// An operation of a case.
pub enum Case {
    Rename(Rename),
    Migrate(MigrateKey),
    Merge(Merge),
    Unmerge(Unmerge),
}

impl Case {
    pub fn reads(&self, snapshot: &Snapshot, answers: &Answers) -> Result<Vec<Read>, DbError> {
        match self {
            Case::Rename(o) => o.reads(snapshot, answers),
            Case::Migrate(o) => o.reads(snapshot, answers),
            Case::Merge(o) => o.reads(snapshot, answers),
            Case::Unmerge(o) => o.reads(snapshot, answers),
        }
    }

    pub fn plan(&self, snapshot: &Snapshot, answers: &Answers) -> Result<ChangePlan, DbError> {
        match self {
            Case::Rename(o) => plan_with(o, snapshot, answers),
            Case::Migrate(o) => plan_with(o, snapshot, answers),
            Case::Merge(o) => plan_with(o, snapshot, answers),
            Case::Unmerge(o) => plan_with(o, snapshot, answers),
        }
    }
}

fn plan_with<O: Operation>(
    op: &O,
    snapshot: &Snapshot,
    answers: &Answers,
) -> Result<ChangePlan, DbError> {
    // Every read the operation asks for was answered when captured.
    for read in op.reads(snapshot, answers)? {
        assert!(
            answers.has(&read.name),
            "{}: read '{}' was not captured (scripts/capture-fixtures.sh)",
            op.name(),
            read.name
        );
    }
    op.plan(snapshot, answers).map(|p| p.change().clone())
}

pub fn migrate(table: &str, column: Option<&str>, batch_size: Option<i64>) -> Case {
    Case::Migrate(MigrateKey {
        table: table.into(),
        options: MigrateOptions {
            column: column.map(str::to_string),
            ..MigrateOptions::default()
        },
        batch_size,
    })
}

/// A migration with `options` (the key column, when given, among them).
pub fn migrate_with(table: &str, options: MigrateOptions, batch_size: Option<i64>) -> Case {
    Case::Migrate(MigrateKey {
        table: table.into(),
        options,
        batch_size,
    })
}

/// Options naming `also` and `leave` columns.
pub fn naming(also: &[&str], leave: &[&str]) -> MigrateOptions {
    MigrateOptions {
        also: also.iter().map(|s| s.to_string()).collect(),
        leave: leave.iter().map(|s| s.to_string()).collect(),
        ..MigrateOptions::default()
    }
}

/// Options computing `columns` again (`--regenerate`).
pub fn regenerating(columns: &[&str]) -> MigrateOptions {
    MigrateOptions {
        regenerate: columns.iter().map(|s| s.to_string()).collect(),
        ..MigrateOptions::default()
    }
}

pub fn merge(ids: &[&str], into: &str, on_conflict: OnConflict) -> Case {
    Case::Merge(Merge {
        ids: ids.iter().map(|s| uuid(s)).collect(),
        new: uuid(into),
        options: MergeOptions {
            on_conflict,
            ..MergeOptions::default()
        },
        implicit: Vec::new(),
    })
}

pub fn rename(column: &str, new_name: &str, options: RenameOptions) -> Case {
    Case::Rename(Rename {
        column: column.into(),
        new_name: new_name.into(),
        options,
    })
}

/// A catalog: its name, its cases, and what the capture does to it first.
pub struct Catalog {
    pub name: &'static str,
    pub cases: Vec<(&'static str, Case)>,
    /// Keys merged (with the runner, as a user would) before the capture,
    /// and what they become.
    pub merged_first: Option<(Vec<&'static str>, &'static str)>,
}

pub fn catalogs() -> Vec<Catalog> {
    let related_views = RenameOptions {
        related: true,
        views: true,
        ..RenameOptions::default()
    };
    vec![
        Catalog {
            name: "shop",
            merged_first: None,
            cases: vec![
                (
                    "rename related and views",
                    rename(
                        "public.orders.customer_id",
                        "client_id",
                        related_views.clone(),
                    ),
                ),
                (
                    "rename to a taken name",
                    rename("orders.total", "customer_id", RenameOptions::default()),
                ),
                ("migrate bigint", migrate("customers", None, None)),
                ("migrate text", migrate("codes", None, None)),
                ("migrate smallint", migrate("tiny", None, None)),
                ("migrate composite", migrate("events", Some("id"), None)),
                ("migrate a view", migrate("order_customers", None, None)),
                ("migrate nothing", migrate("nope", None, None)),
                ("batched bigint", migrate("customers", None, Some(1000))),
                (
                    "batched with a bad size",
                    migrate("customers", None, Some(-1)),
                ),
                (
                    "merge keep survivor",
                    merge(&[ANN, ANN_B], NEW, OnConflict::KeepSurvivor),
                ),
                ("merge fail", merge(&[ANN, ANN_B], NEW, OnConflict::Fail)),
                ("merge one", merge(&[ANN], NEW, OnConflict::KeepSurvivor)),
            ],
        },
        Catalog {
            name: "partitions",
            merged_first: None,
            cases: vec![
                ("migrate customer", migrate("customer", None, None)),
                ("batched customer", migrate("customer", None, Some(50))),
                (
                    "rename the reference",
                    rename(
                        "rental.customer_id",
                        "client_id",
                        RenameOptions {
                            related: true,
                            ..RenameOptions::default()
                        },
                    ),
                ),
                (
                    "migrate a partition",
                    migrate("payment_p2022_01", None, None),
                ),
            ],
        },
        Catalog {
            name: "composite",
            merged_first: Some((vec![ANN, ANN_B], MERGED)),
            cases: vec![
                ("migrate accounts", migrate("accounts", Some("id"), None)),
                (
                    "batched accounts",
                    migrate("accounts", Some("id"), Some(10)),
                ),
                (
                    "migrate accounts without a column",
                    migrate("accounts", None, None),
                ),
                ("migrate people", migrate("people", None, None)),
                ("batched people", migrate("people", None, Some(10))),
                (
                    "merge bob and cy",
                    merge(&[BOB, CY], NEW, OnConflict::KeepSurvivor),
                ),
                ("unmerge ann", Case::Unmerge(Unmerge { new: uuid(MERGED) })),
                (
                    "unmerge a key never merged",
                    Case::Unmerge(Unmerge { new: uuid(BOB) }),
                ),
            ],
        },
        Catalog {
            name: "dependents",
            merged_first: None,
            cases: vec![
                ("migrate tenants", migrate("tenants", None, None)),
                ("batched tenants", migrate("tenants", None, Some(20))),
                ("migrate owners", migrate("owners", None, None)),
                ("batched owners", migrate("owners", None, Some(20))),
                ("migrate makers", migrate("makers", None, None)),
                (
                    "migrate makers regenerating the label",
                    migrate_with("makers", regenerating(&["parts.label"]), None),
                ),
                (
                    "batched makers regenerating the label",
                    migrate_with("makers", regenerating(&["parts.label"]), Some(20)),
                ),
                (
                    "regenerate a column that is not generated",
                    migrate_with("makers", regenerating(&["parts.title"]), None),
                ),
                (
                    "migrate gauges regenerating an indexed label",
                    migrate_with("gauges", regenerating(&["readings.label"]), None),
                ),
                ("migrate clubs", migrate("clubs", None, None)),
                ("migrate shelves", migrate("shelves", None, None)),
                ("batched shelves", migrate("shelves", None, Some(20))),
                ("migrate brands", migrate("brands", None, None)),
                ("migrate regions", migrate("regions", None, None)),
                ("migrate teams", migrate("teams", None, None)),
            ],
        },
        Catalog {
            name: "literals",
            merged_first: None,
            cases: vec![
                ("migrate accounts", migrate("accounts", None, None)),
                ("batched accounts", migrate("accounts", None, Some(30))),
                ("migrate clients", migrate("clients", None, None)),
                ("batched clients", migrate("clients", None, Some(30))),
                ("migrate sites", migrate("sites", None, None)),
                ("migrate banks", migrate("banks", None, None)),
                ("migrate farms", migrate("farms", None, None)),
                ("migrate vaults", migrate("vaults", None, None)),
                ("migrate ports", migrate("ports", None, None)),
                ("batched ports", migrate("ports", None, Some(30))),
                ("migrate zones", migrate("zones", None, None)),
                ("migrate harbors", migrate("harbors", None, None)),
                ("batched harbors", migrate("harbors", None, Some(10))),
            ],
        },
        Catalog {
            name: "copies",
            merged_first: None,
            cases: vec![
                ("migrate services", migrate("services", None, None)),
                (
                    "migrate services naming every copy",
                    migrate_with("services", naming(&EVERY_COPY, &[]), None),
                ),
                (
                    "migrate services leaving some",
                    migrate_with(
                        "services",
                        naming(
                            &["tags.entity_id", "plugins.cache_key", "plugins.service_ids"],
                            &[
                                "plugins.config",
                                "plugins.note",
                                "plugins.aliases",
                                "tags.tags",
                                "audit.events.subject",
                                "billing.charges.service_bytes",
                                "billing.charges.service_wide",
                                "billing.charges.ref",
                            ],
                        ),
                        None,
                    ),
                ),
                (
                    "migrate services naming the copies in text only",
                    migrate_with("services", naming(&EVERY_COPY[..8], &[]), None),
                ),
                (
                    "batched services naming every copy",
                    migrate_with("services", naming(&EVERY_COPY, &[]), Some(30)),
                ),
                (
                    "migrate services searching public only",
                    migrate_with(
                        "services",
                        MigrateOptions {
                            copy_search: CopySearch {
                                within: vec!["public".into()],
                                skip: false,
                            },
                            ..naming(&EVERY_COPY[..7], &[])
                        },
                        None,
                    ),
                ),
                (
                    "migrate services without the search",
                    migrate_with(
                        "services",
                        MigrateOptions {
                            copy_search: CopySearch {
                                within: Vec::new(),
                                skip: true,
                            },
                            ..MigrateOptions::default()
                        },
                        None,
                    ),
                ),
            ],
        },
        Catalog {
            name: "publications",
            merged_first: None,
            cases: vec![
                ("migrate accounts", migrate("accounts", None, None)),
                ("batched accounts", migrate("accounts", None, Some(10))),
                ("migrate books", migrate("ledger.books", None, None)),
                ("batched books", migrate("ledger.books", None, Some(10))),
            ],
        },
        Catalog {
            name: "all_tables",
            merged_first: None,
            cases: vec![
                ("migrate accounts", migrate("accounts", None, None)),
                ("batched accounts", migrate("accounts", None, Some(10))),
            ],
        },
        Catalog {
            name: "key_times",
            merged_first: None,
            cases: vec![
                ("migrate orders", migrate("orders", None, None)),
                (
                    "migrate orders by their date",
                    migrate_with(
                        "orders",
                        MigrateOptions {
                            order_by: Some("order_date".into()),
                            ..MigrateOptions::default()
                        },
                        None,
                    ),
                ),
                ("migrate notes", migrate("notes", None, None)),
                ("migrate baskets", migrate("baskets", None, None)),
            ],
        },
    ]
}

/// Every column of `copies` holding copies of a service's key: the first
/// seven in the schema public, the first eight in text, arrays or JSON,
/// the last three in bytes, uuid192 and composite values.
pub const EVERY_COPY: [&str; 11] = [
    "tags.entity_id",
    "tags.tags",
    "plugins.cache_key",
    "plugins.config",
    "plugins.service_ids",
    "plugins.note",
    "plugins.aliases",
    "audit.events.subject",
    "billing.charges.service_bytes",
    "billing.charges.service_wide",
    "billing.charges.ref",
];

/// A catalog and the answers each case read, as captured.
#[derive(Serialize, Deserialize)]
pub struct Fixture {
    pub snapshot: serde_json::Value,
    pub answers: BTreeMap<String, Answers>,
}

pub fn fixture_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/plans/{name}"))
}

/// One capture of a catalog, on one server version.
pub struct Captured {
    pub catalog: &'static str,
    pub major: i32,
    pub snapshot: Snapshot,
    pub answers: BTreeMap<String, Answers>,
}

/// The captures of `catalog`: one per server version (`NAME-pgNN.json`).
pub fn captured(catalog: &'static str) -> Vec<Captured> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(fixture_path(""))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&format!("{catalog}-pg")) && n.ends_with(".json"))
        })
        .collect();
    found.sort();
    assert!(
        !found.is_empty(),
        "no {catalog}-pgNN.json (capture it: scripts/capture-fixtures.sh)"
    );
    found
        .iter()
        .map(|path| {
            let text = std::fs::read_to_string(path).unwrap();
            let fixture: Fixture = serde_json::from_str(&text).unwrap();
            let snapshot = Snapshot::from_json(&fixture.snapshot.to_string()).unwrap();
            Captured {
                catalog,
                major: snapshot.server_version_num / 10000,
                snapshot,
                answers: fixture.answers,
            }
        })
        .collect()
}

impl Captured {
    /// The plan of case `name`, made twice (the same both times: a plan is
    /// a function of its inputs), its printed form compared with the
    /// reviewed one when it plans.
    pub fn plan(&self, name: &str) -> Result<ChangePlan, DbError> {
        let catalog = catalogs()
            .into_iter()
            .find(|c| c.name == self.catalog)
            .unwrap();
        let (_, case) = catalog
            .cases
            .iter()
            .find(|(n, _)| *n == name)
            .unwrap_or_else(|| panic!("no case '{name}' in {}", self.catalog));
        let none = Answers::default();
        let answers = self.answers.get(name).unwrap_or(&none);
        let first = case.plan(&self.snapshot, answers);
        assert_eq!(
            first,
            case.plan(&self.snapshot, answers),
            "{name}: not deterministic"
        );
        match &first {
            Ok(change) => self.golden(name, "sql", &print(change, &Flags).join("\n")),
            // A refusal's words are reviewed as a plan's are.
            Err(e) => self.golden(name, "refused", &e.rendered(&Flags)),
        }
        first
    }

    /// `text` with the oids of this catalog's relations written as names
    /// (a capture gives new oids; the plan is the same).
    pub fn normalized(&self, text: &str) -> String {
        let oids: Vec<(String, String)> = self
            .snapshot
            .relations
            .iter()
            .map(|r| (r.oid.to_string(), format!("<oid {}>", r.name)))
            .collect();
        let mut out = String::with_capacity(text.len());
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i].is_ascii_digit() && (i == 0 || !bytes[i - 1].is_ascii_digit()) {
                let end = (i..bytes.len())
                    .find(|&j| !bytes[j].is_ascii_digit())
                    .unwrap_or(bytes.len());
                let digits = &text[i..end];
                match oids.iter().find(|(o, _)| o == digits) {
                    Some((_, name)) => out.push_str(name),
                    None => out.push_str(digits),
                }
                i = end;
            } else {
                let c = text[i..].chars().next().unwrap();
                out.push(c);
                i += c.len_utf8();
            }
        }
        out
    }

    /// Compares `text`, the printed plan of case `name` (`ext` `sql`) or
    /// its refusal (`refused`), with the reviewed one
    /// (`golden/CATALOG/CASE.EXT` as PostgreSQL 15 prints it, and
    /// `CASE.pgNN.EXT` where another version's differs);
    /// `UUIDFORGE_ACCEPT_PLANS=1` writes it after a review.
    fn golden(&self, name: &str, ext: &str, text: &str) {
        let printed = self.normalized(text) + "\n";
        let slug: String = name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let base = fixture_path(&format!("golden/{}/{slug}.{ext}", self.catalog));
        let own = fixture_path(&format!(
            "golden/{}/{slug}.pg{}.{ext}",
            self.catalog, self.major
        ));
        if std::env::var_os("UUIDFORGE_ACCEPT_PLANS").is_some() {
            std::fs::create_dir_all(base.parent().unwrap()).unwrap();
            if self.major == 15 {
                std::fs::write(&base, &printed).unwrap();
            } else if std::fs::read_to_string(&base).is_ok_and(|b| b == printed) {
                let _ = std::fs::remove_file(&own);
            } else {
                std::fs::write(&own, &printed).unwrap();
            }
            return;
        }
        let path = if own.exists() { own } else { base };
        let reviewed = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (run with UUIDFORGE_ACCEPT_PLANS=1 and review)",
                path.display()
            )
        });
        if reviewed != printed {
            let line = reviewed
                .lines()
                .zip(printed.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(reviewed.lines().count().min(printed.lines().count()));
            panic!(
                "{}/{name} on {}: the plan differs from {} at line {}:\n  reviewed: {:?}\n  now:      {:?}",
                self.catalog,
                self.major,
                path.display(),
                line + 1,
                reviewed.lines().nth(line),
                printed.lines().nth(line)
            );
        }
    }
}

/// The printed plan, as one text, in the command line's words.
pub fn sql_of(change: &ChangePlan) -> String {
    print(change, &Flags).join("\n")
}

/// The refusal of a case, for `reason`, saying each of `words` in the
/// command line's words.
pub fn refused(plan: Result<ChangePlan, DbError>, reason: Reason, words: &[&str]) -> DbError {
    let e = plan.unwrap_err();
    assert_eq!(e.reason(), Some(reason), "{e}");
    let said = e.rendered(&Flags);
    for w in words {
        assert!(said.contains(w), "'{w}' not in {said}");
    }
    e
}

/// The summary's lines, in the command line's words.
pub fn summary_of(change: &ChangePlan) -> Vec<String> {
    change.summary.iter().map(|l| l.rendered(&Flags)).collect()
}

/// The words of the command line (`uuidforge db`), which the reviewed
/// plans and refusals are written in.
pub struct Flags;

impl Vocabulary for Flags {
    fn parameter(&self, parameter: Parameter) -> String {
        format!("--{}", parameter.name())
    }

    fn resume(&self, operation: &str, target: &str) -> String {
        format!("uuidforge db {operation} {target} --resume")
    }

    fn migrate(&self, target: &str) -> String {
        format!("uuidforge db migrate-key {target} --apply")
    }

    fn install_sql(&self) -> String {
        "uuidforge db install-sql --apply".into()
    }
}
