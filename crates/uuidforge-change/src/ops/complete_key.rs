//! The last step of a key migration (`migrate-key TABLE --complete`), in
//! the spirit of pgroll's start/complete: once the application runs on
//! the new keys, the old values go — the key's `*_old` column with its
//! unique index, and every reference's `*_old` column, each table written
//! once without them (so that no row keeps their bytes: the tables end the
//! size a fresh load of their rows has). Backed up first (their tables'
//! rows: the only record of the old keys after), in one transaction, and refused before anything runs while anything still
//! uses them: an object PostgreSQL ties to an old column (a view, a
//! policy, an index the application made), or a function or trigger whose
//! body mentions one. Inside the change, a check reads `pg_depend` again
//! before the drops, so nothing is dropped along with a column (the drops
//! have no `CASCADE` either).

use crate::action::{Action, Index, Rewritten, Table, Transaction};
use crate::ops::key::naming::{is_new_column, old_column};
use crate::ops::key::values::declared;
use crate::ops::Reading;
use crate::ops::{
    one_line, touched, Answers, Backup, ChangePlan, Check, Operation, Planned, Read, Run,
    Statement, Step,
};
use serde::{Deserialize, Serialize};
use uuidforge_db::catalog::{RelKind, Relation, Snapshot};
use uuidforge_db::error::DbError;
use uuidforge_db::error::{Reason, Refusal, WayOut};
use uuidforge_db::introspect::Mention;
use uuidforge_db::plan::{Param, Query};
use uuidforge_ident::quote_literal;

/// Completing a table's key migration.
#[derive(Debug, Clone)]
pub struct CompleteKey {
    /// `table` or `schema.table`.
    pub table: String,
    /// The name the old values were kept under (default `KEY_old`).
    pub keep_old: Option<String>,
}

/// An old column the completion drops.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OldColumn {
    /// Its table (quoted, qualified).
    pub table: String,
    /// Its name.
    pub column: String,
}

/// The plan of a completion.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompletePlan {
    /// The table, quoted and qualified.
    pub table: String,
    /// The old columns dropped: the key's first.
    pub dropped: Vec<OldColumn>,
    /// The old values' unique index, dropped with them.
    pub index: Option<String>,
    /// How often that index was scanned since it was made.
    pub index_scans: Option<i64>,
    /// The change the runner runs.
    pub change: ChangePlan,
}

impl Planned for CompletePlan {
    fn change(&self) -> &ChangePlan {
        &self.change
    }
}

/// The read of what uses the old columns ([`USERS_SQL`]).
const USERS: crate::ops::Named<Users> =
    crate::ops::Named::new("users", "read what uses the old columns");

/// What uses an old column, as the planning pass reads it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Users {
    /// Objects tied to an old column (`pg_describe_object`), the old
    /// values' unique index left out.
    objects: Vec<String>,
    /// That index (quoted, qualified), if there.
    index: Option<String>,
    /// Its scans since it was made.
    index_scans: Option<i64>,
}

/// A migrated table and its old columns: (table, column) pairs, the key's
/// first.
type OldColumns<'a> = (&'a Relation, Vec<(&'a Relation, String)>);

/// The old columns of `table`'s migrated key: (table, column) pairs, the
/// key's first. Refused when the table has none (not migrated, or
/// completed already) or a migration in batches is under way on it.
fn old_columns<'a>(snapshot: &'a Snapshot, op: &CompleteKey) -> Result<OldColumns<'a>, DbError> {
    let table = snapshot.find_relation(&op.table)?;
    if !matches!(table.kind, RelKind::Table | RelKind::PartitionedTable) || table.is_partition {
        return Err(DbError::refused(
            "table",
            format!(
                "{} is not a table a key migration changes (expected a table or a partitioned table)",
                table.display_name()
            ),
        ));
    }
    let pk = snapshot.primary_key(table.oid).ok_or_else(|| {
        DbError::refused(
            "table",
            format!(
                "{} has no primary key (expected a migrated key)",
                table.display_name()
            ),
        )
    })?;
    let key = pk
        .columns
        .iter()
        .filter_map(|n| table.column(*n))
        .find(|c| c.type_name == "uuid")
        .ok_or_else(|| {
            DbError::refusal(
                "table",
                Refusal::new(
                    Reason::StillUsed,
                    format!("{}'s primary key has no uuid column", table.display_name()),
                )
                .way_out(WayOut::MigrateFirst {
                    target: op.table.clone(),
                }),
            )
        })?;
    if table.columns.iter().any(|c| is_new_column(&c.name)) {
        return Err(DbError::refusal(
            "table",
            Refusal::new(
                Reason::UnderWay,
                format!(
                    "a migration in batches of {} is under way (its new columns are there)",
                    table.display_name(),
                ),
            )
            .way_out(WayOut::Resume {
                operation: "migrate-key".into(),
                target: op.table.clone(),
            }),
        ));
    }
    let old = op.keep_old.clone().unwrap_or_else(|| old_column(&key.name));
    if table.column_named(&old).is_none() {
        return Err(DbError::refusal(
            "table",
            Refusal::new(
                Reason::StillUsed,
                format!(
                    "{} has no column {old} (expected the old keys a migration kept: completed already, or kept under another name)",
                    table.display_name()
                ),
            )
            .way_out(WayOut::KeepOldAs),
        ));
    }
    let mut columns = vec![(table, old)];
    for fk in snapshot.foreign_keys().filter(|f| f.ref_table == table.oid) {
        let Some(referencing) = snapshot.relation(fk.table) else {
            continue;
        };
        for n in &fk.columns {
            let Some(c) = referencing.column(*n) else {
                continue;
            };
            let name = old_column(&c.name);
            if referencing.column_named(&name).is_some()
                && !columns
                    .iter()
                    .any(|(t, o)| t.oid == referencing.oid && *o == name)
            {
                columns.push((referencing, name));
            }
        }
    }
    Ok((table, columns))
}

/// The read of what uses the old columns (`$1` tables, `$2` columns, both
/// `text[]`, and `$3` the key table): objects tied to one, the old values'
/// unique index (a unique index of the key's old column alone, on its
/// table) and its scans.
const USERS_SQL: &str = r#"WITH old AS (
    SELECT a.attrelid, a.attnum FROM unnest($1::text[], $2::text[]) u(t, c)
    JOIN pg_attribute a ON a.attrelid = u.t::regclass AND a.attname = u.c AND NOT a.attisdropped),
  kept AS (SELECT i.indexrelid FROM pg_index i JOIN old o ON o.attrelid = i.indrelid
    WHERE i.indrelid = $3::text::regclass AND i.indisunique AND i.indnatts >= 1 AND i.indkey[0] = o.attnum
      AND NOT EXISTS (SELECT FROM pg_constraint k WHERE k.conindid = i.indexrelid))
SELECT json_build_object(
  'objects', (SELECT coalesce(json_agg(DISTINCT pg_describe_object(d.classid, d.objid, d.objsubid)), '[]')
     FROM old o JOIN pg_depend d ON d.refclassid = 'pg_class'::regclass AND d.refobjid = o.attrelid AND d.refobjsubid = o.attnum
    WHERE NOT (d.classid = 'pg_class'::regclass AND d.objid IN (SELECT indexrelid FROM kept))),
  'index', (SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname) FROM kept k
     JOIN pg_class c ON c.oid = k.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace LIMIT 1),
  'index_scans', (SELECT s.idx_scan FROM kept k JOIN pg_stat_all_indexes s ON s.indexrelid = k.indexrelid LIMIT 1)
)::text"#;

impl Operation for CompleteKey {
    type Plan = CompletePlan;

    fn name(&self) -> &'static str {
        "complete-key"
    }

    fn reads(&self, snapshot: &Snapshot, _answers: &Answers) -> Result<Vec<Read>, DbError> {
        let (table, columns) = old_columns(snapshot, self)?;
        let names: Vec<String> = columns.iter().map(|(_, c)| c.clone()).collect();
        Ok(vec![
            USERS.read(Query {
                sql: USERS_SQL.to_string(),
                params: vec![
                    Param::TextArray(columns.iter().map(|(t, _)| t.sql_name()).collect()),
                    Param::TextArray(names.clone()),
                    Param::Text(table.sql_name()),
                ],
            }),
            crate::ops::rename::MENTIONS.read(crate::ops::rename::mentions_query(&names)),
        ])
    }

    fn plan(&self, snapshot: &Snapshot, answers: &Answers) -> Result<CompletePlan, DbError> {
        let (table, columns) = old_columns(snapshot, self)?;
        let users = answers.required(&USERS)?;
        let mentions = answers.required(&crate::ops::rename::MENTIONS)?;
        refuse_used(&users, &mentions)?;
        let dropped: Vec<OldColumn> = columns
            .iter()
            .map(|(t, c)| OldColumn {
                table: t.sql_name(),
                column: c.clone(),
            })
            .collect();
        let change = change(snapshot, table, &columns, &dropped, &users);
        Ok(CompletePlan {
            table: table.sql_name(),
            dropped,
            index: users.index,
            index_scans: users.index_scans,
            change,
        })
    }
}

/// Refuses while anything uses an old column, naming each.
fn refuse_used(users: &Users, mentions: &[Mention]) -> Result<(), DbError> {
    let mut named: Vec<String> = users.objects.clone();
    named.extend(mentions.iter().filter(|m| m.kind != "policy").map(|m| {
        format!(
            "{} {} (its body mentions {})",
            m.kind,
            one_line(&m.name),
            m.mentions
        )
    }));
    if named.is_empty() {
        return Ok(());
    }
    Err(DbError::refused(
        "table",
        format!(
            "the old keys are still used by {}: move each to the new key (or drop it) first; nothing was changed",
            named.join("; ")
        ),
    ))
}

/// Each table written once with its old columns empty, before they are
/// dropped: a dropped column's values stay in every row until the row is
/// written again, so without this the tables would stay the size they
/// were with the old values (a rewrite also leaves no dead row).
fn emptied(columns: &[(&Relation, String)]) -> Vec<Action> {
    let mut tables: Vec<(&Relation, Vec<Rewritten>)> = Vec::new();
    for (t, name) in columns {
        let Some(c) = t.column_named(name) else {
            continue;
        };
        let column = Rewritten {
            column: name.clone(),
            type_name: declared(c),
            using: "NULL".into(),
        };
        match tables.iter_mut().find(|(r, _)| r.oid == t.oid) {
            Some((_, list)) => list.push(column),
            None => tables.push((t, vec![column])),
        }
    }
    tables
        .into_iter()
        .map(|(t, columns)| {
            Action::Table(Table::Rewrite {
                table: t.sql_name(),
                columns,
            })
        })
        .collect()
}

/// The change: in one transaction, the check that nothing but the old
/// values' index depends on an old column, the index dropped, each table
/// written once with its old columns empty, the old columns dropped;
/// checked gone after; the tables' rows backed up first.
fn change(
    snapshot: &Snapshot,
    table: &Relation,
    columns: &[(&Relation, String)],
    dropped: &[OldColumn],
    users: &Users,
) -> ChangePlan {
    let mut actions = vec![Action::Transaction(Transaction::NothingDependsOn {
        columns: dropped
            .iter()
            .map(|d| (d.table.clone(), d.column.clone()))
            .collect(),
        except: users.index.iter().cloned().collect(),
    })];
    actions.extend(users.index.iter().map(|index| {
        Action::Index(Index::Drop {
            index: index.clone(),
        })
    }));
    actions.extend(emptied(columns));
    actions.extend(dropped.iter().map(|d| {
        Action::Table(Table::DropColumn {
            table: d.table.clone(),
            column: d.column.clone(),
        })
    }));
    let mut summary = vec![format!(
        "plan: complete the key migration of {}: drop the old keys and every old reference, one transaction; each table written once without them (writers wait while it is)",
        table.sql_name()
    )];
    summary.extend(
        dropped
            .iter()
            .map(|d| format!("  drop {}.{}", d.table, d.column)),
    );
    if let Some(index) = &users.index {
        summary.push(format!(
            "  drop {index}, the old values' unique index{}",
            users.index_scans.map_or_else(String::new, |n| format!(
                " (scanned {n} times since it was made, the migration's own checks included: if the application still looks rows up by old key, it is not ready)"
            ))
        ));
    }
    summary.push(
        "  after it, the backup (pg_restore) is the only record of the old keys: keep it while anything outside the database (links, exports, other systems) may still name a row by one"
            .into(),
    );
    let tables: Vec<String> = crate::ops::distinct(dropped.iter().map(|d| d.table.clone()));
    let gone: Vec<String> = dropped
        .iter()
        .map(|d| {
            format!(
                "{}, (SELECT count(*) FROM pg_attribute WHERE attrelid = {}::regclass AND attname = {} AND NOT attisdropped)",
                quote_literal(&format!("{}.{} still there", d.table, d.column)),
                quote_literal(&d.table),
                quote_literal(&d.column)
            )
        })
        .collect();
    ChangePlan {
        operation: "complete-key".into(),
        target: table.typed_name(),
        schema: table.schema.clone(),
        touches: touched(
            dropped
                .iter()
                .filter_map(|d| snapshot.relations.iter().find(|r| r.sql_name() == d.table)),
        ),
        summary: crate::ops::lines(summary),
        backup: Backup {
            relations: tables,
            schema_only: false,
            ..Default::default()
        },
        run: Run::OneTransaction {
            lock: None,
            steps: Step::actions(&actions),
            checks: vec![Check::Zero {
                what: "verify the old columns are gone".into(),
                statement: Statement::sql(uuidforge_db::plan::json_object(&gone)),
            }],
        },
        epilogue: Vec::new(),
        measured: Default::default(),
    }
}
