//! A key migration in one transaction: the new keys into a temporary map,
//! then
//!
//! 1. a new column on the table and on each referencing table, filled
//!    through the map (the application's triggers kept quiet);
//! 2. the foreign keys, the primary key and whatever sits on the changed
//!    columns dropped, the identity or serial default dropped (its sequence
//!    too);
//! 3. `k` renamed `k_old` (kept, with a unique index), the new column
//!    renamed `k`; the same on each referencing column;
//! 4. the primary key on the new column, the default `uuidv7()` when the
//!    extension is installed, every constraint and index made again from
//!    its definition (with its comment), the foreign keys made again with
//!    their actions and deferrability, the columns' comments and
//!    privileges, the views;
//! 5. checks before commit: every count zero, row counts and every other
//!    column unchanged, every index, constraint and column as before.

use super::{backup, summary, touches};
use uuidforge_ident::{quote_ident, quote_literal};
use uuidforge_db::introspect::{create_views, drop_views, quiet_triggers};
use crate::ops::key::checks::{self, Phase};
use crate::ops::key::values::Becomes;
use crate::ops::key::{by_column, cut, names, new_column, old_reference, Migration, NewKeys};
use crate::ops::{ChangePlan, Check, Lock, Run, Statement, Step};

/// The temporary key map.
const MAP: &str = "uuidforge_keymap";

/// Memory for the updates' joins and the index builds, for this
/// transaction only (`SET LOCAL`).
const WORK_MEM: &str = "256MB";
const MAINTENANCE_WORK_MEM: &str = "512MB";

/// The unique index kept on the old key values.
pub(crate) fn old_index_name(m: &Migration) -> String {
    cut(&format!("{}_{}_key", m.key.table.name, m.old_name))
}

/// The change: the key map made and filled, the statements, the checks.
pub fn change(m: &Migration) -> ChangePlan {
    let mut steps = vec![
        Step::run(Statement::sql(format!(
            "CREATE TEMP TABLE {MAP} (old text PRIMARY KEY, new uuid NOT NULL UNIQUE) ON COMMIT DROP"
        ))),
        Step::Keys(NewKeys {
            read: checks::read_keys_sql(m, ""),
            map: MAP.into(),
            ordered: m.order_column.is_some(),
        }),
    ];
    steps.extend(Step::each(fill(m)));
    steps.extend(Step::each(swap(m)));
    steps.extend(Step::each(create_views(&m.views, &m.snapshot.user)));
    let written: Vec<String> = m.written().iter().map(|r| r.sql_name()).collect();
    ChangePlan {
        operation: "migrate-key".into(),
        target: m.key.table.typed_name(),
        schema: m.key.table.schema.clone(),
        touches: touches(m),
        summary: summary(m, ""),
        backup: backup(m),
        run: Run::OneTransaction {
            // Writers wait from here on: the rows counted and digested
            // before the steps, and the keys read, are all there will be.
            lock: Some(lock_all(m)),
            steps,
            checks: vec![
                Check::Zero {
                    what: "verify the migration".into(),
                    statement: Statement::sql(checks::verify_sql(m, Phase::OneTransaction, MAP)),
                },
                Check::Unchanged {
                    what: "row counts".into(),
                    statement: Statement::sql(checks::counts_sql(m)),
                },
                Check::Unchanged {
                    what: "other columns".into(),
                    statement: Statement::sql(checks::digest_sql(m)),
                },
                Check::Unchanged {
                    what: "indexes, constraints and columns".into(),
                    statement: Statement::sql(checks::objects_sql(&written)),
                },
            ],
        },
        epilogue: Vec::new(),
    }
}

/// Locks every table written, referencing tables first (as a writer's
/// statement that checks a foreign key has).
pub(crate) fn lock_all(m: &Migration) -> Lock {
    let mut order: Vec<String> = m
        .written()
        .iter()
        .filter(|r| r.oid != m.key.table.oid)
        .map(|r| r.sql_name())
        .collect();
    order.push(m.key.table.sql_name());
    Lock::access_exclusive(order)
}

/// The statements up to the new values: settings, views dropped, new
/// columns, constraints and indexes over the old ones dropped, the new
/// columns filled from the key map.
fn fill(m: &Migration) -> Vec<String> {
    let t = m.key.table.sql_name();
    let k = quote_ident(&m.key.column.name);
    let kn = quote_ident(&new_column(&m.key.column.name));
    // Deferred foreign key checks would leave events pending, and a table
    // with pending events cannot be altered: check as rows change.
    let mut s = vec![
        "SET CONSTRAINTS ALL IMMEDIATE".to_string(),
        format!("SET LOCAL work_mem = {}", quote_literal(WORK_MEM)),
        format!(
            "SET LOCAL maintenance_work_mem = {}",
            quote_literal(MAINTENANCE_WORK_MEM)
        ),
    ];
    s.extend(drop_views(&m.views));
    s.push(format!("ALTER TABLE {t} ADD COLUMN {kn} uuid"));
    for r in by_column(&m.references) {
        s.push(format!(
            "ALTER TABLE {} ADD COLUMN {} {}",
            r.table.sql_name(),
            quote_ident(&new_column(&r.column.name)),
            m.new_type(r)
        ));
    }
    for r in m.references.iter().filter(|r| r.fk.is_some()) {
        s.push(format!(
            "ALTER TABLE {} DROP CONSTRAINT {}",
            r.declared_on.sql_name(),
            quote_ident(&r.constraint_name())
        ));
    }
    // Whatever sits on a changed column is made again at the end from its
    // definition; dropped before the updates (an index would take an entry
    // per row written).
    s.extend(m.drop_dependents());
    s.push(format!(
        "ALTER TABLE {t} DROP CONSTRAINT {}",
        quote_ident(&m.key.pk.name)
    ));
    // The application's triggers are not to see the migration's own
    // writes (a `last_update = now()` would stamp every row).
    let (quiet, restore) = quiet_triggers(&m.triggers);
    s.extend(quiet);
    // With no key or reference index left to maintain, each row is
    // written once.
    s.push(format!(
        "UPDATE {t} AS x SET {kn} = m.new FROM {MAP} m WHERE m.old = x.{k}::text"
    ));
    for r in by_column(&m.references) {
        let ct = r.table.sql_name();
        let c = quote_ident(&r.column.name);
        let cn = quote_ident(&new_column(&r.column.name));
        let others = r.other_join(&m.key, "x", "p");
        match m.becomes(r) {
            // Joined with the table's new column on the old key's own type
            // (no text cast on millions of references).
            Becomes::Uuid => s.push(format!(
                "UPDATE {ct} AS x SET {cn} = p.{kn} FROM {t} p WHERE {}{others}",
                crate::ops::key::values::equal(m.snapshot, &m.key, r.column, "p", "x")
            )),
            // The values that are keys take the new key's text; the
            // others stay as they are.
            Becomes::Text => s.push(format!(
                "UPDATE {ct} AS x SET {cn} = coalesce((SELECT p.{kn}::text FROM {t} p WHERE p.{k} = {}), x.{c}) WHERE x.{c} IS NOT NULL",
                m.key_of_text(&format!("x.{c}"))
            )),
        }
    }
    s.extend(restore);
    s
}

/// The statements from the new values on: the old key's default and
/// sequence gone, columns swapped, keys, constraints and indexes made
/// again on the new columns, the default `uuidv7()`.
fn swap(m: &Migration) -> Vec<String> {
    let t = m.key.table.sql_name();
    let k = quote_ident(&m.key.column.name);
    let kn = quote_ident(&new_column(&m.key.column.name));
    let old = quote_ident(&m.old_name);
    let mut s = drop_key_default(m);
    s.push(format!("ALTER TABLE {t} RENAME COLUMN {k} TO {old}"));
    // Rows made from now on have no old key.
    s.push(format!("ALTER TABLE {t} ALTER COLUMN {old} DROP NOT NULL"));
    s.push(format!("ALTER TABLE {t} RENAME COLUMN {kn} TO {k}"));
    s.push(format!("ALTER TABLE {t} ALTER COLUMN {k} SET NOT NULL"));
    s.push(format!(
        "ALTER TABLE {t} ADD CONSTRAINT {} PRIMARY KEY ({})",
        quote_ident(&m.key.pk.name),
        names(&m.key.pk_columns())
    ));
    s.extend(m.key_pieces_named());
    // With the primary key's other columns (a partitioned table's unique
    // indexes hold its partition key).
    s.push(format!(
        "CREATE UNIQUE INDEX {} ON {t} ({})",
        quote_ident(&old_index_name(m)),
        names(&m.key.pk_with(&m.old_name))
    ));
    if let Some(generator) = &m.generator {
        s.push(format!(
            "ALTER TABLE {t} ALTER COLUMN {k} SET DEFAULT {}",
            generator.call()
        ));
    }
    for r in by_column(&m.references) {
        let ct = r.table.sql_name();
        let c = quote_ident(&r.column.name);
        let cold = quote_ident(&old_reference(&r.column.name));
        s.push(format!("ALTER TABLE {ct} RENAME COLUMN {c} TO {cold}"));
        s.push(format!(
            "ALTER TABLE {ct} RENAME COLUMN {} TO {c}",
            quote_ident(&new_column(&r.column.name))
        ));
        if r.column.not_null {
            // The old one's first: its NOT NULL constraint (PostgreSQL 18
            // names them) gives its name to the new one's.
            s.push(format!(
                "ALTER TABLE {ct} ALTER COLUMN {cold} DROP NOT NULL"
            ));
            s.push(format!("ALTER TABLE {ct} ALTER COLUMN {c} SET NOT NULL"));
        }
    }
    // Their definitions name the columns: after every rename they name
    // the new ones. Keys and unique constraints before the foreign keys
    // that may reference them.
    s.extend(remake_dependents(m));
    for r in m.references.iter().filter(|r| r.fk.is_some()) {
        s.push(format!(
            "ALTER TABLE {} ADD CONSTRAINT {} {}",
            r.declared_on.sql_name(),
            quote_ident(&r.constraint_name()),
            r.fk_clause(&m.key)
        ));
    }
    s.extend(m.column_extras());
    s
}

/// Identity or serial: the default goes, and its sequence with it.
pub(crate) fn drop_key_default(m: &Migration) -> Vec<String> {
    let t = m.key.table.sql_name();
    let k = quote_ident(&m.key.column.name);
    vec![
        format!("ALTER TABLE {t} ALTER COLUMN {k} DROP IDENTITY IF EXISTS"),
        format!("ALTER TABLE {t} ALTER COLUMN {k} DROP DEFAULT"),
        format!(
            "DO $uuidforge$ DECLARE s text := pg_get_serial_sequence({}, {}); BEGIN IF s IS NOT NULL THEN EXECUTE 'DROP SEQUENCE ' || s; END IF; END $uuidforge$",
            quote_literal(&t),
            quote_literal(&m.key.column.name)
        ),
    ]
}

/// Every constraint and index over a changed column made again from its
/// definition, its partitions' pieces given their names back, its comment
/// back.
fn remake_dependents(m: &Migration) -> Vec<String> {
    let mut s = Vec::new();
    for c in &m.dependents.constraints {
        let Some(table) = m.snapshot.relation(c.table) else {
            continue;
        };
        s.push(format!(
            "ALTER TABLE {} ADD CONSTRAINT {} {}",
            table.sql_name(),
            quote_ident(&c.name),
            c.definition
        ));
        s.extend(m.pieces_named(&uuidforge_ident::qualified(&c.schema, &c.name), &c.leaves));
        s.extend(c.comment_sql(&table.sql_name()));
    }
    for i in &m.dependents.indexes {
        s.push(i.definition.clone());
        s.extend(m.pieces_named(&uuidforge_ident::qualified(&i.schema, &i.name), &i.leaves));
        s.extend(i.comment_sql());
    }
    s
}
