//! A key migration online as a copy (`--batch-size N --copy`), in the
//! manner of pg_repack: each table written once, into a shadow table
//! through the key map, while a trigger logs the rows the application
//! writes meanwhile; then a short swap puts the shadows in the tables'
//! places. No row is updated in place, so no dead row is left behind and
//! the tables end the size of a fresh load. Every step commits on its own,
//! recorded by the runner: after a kill -9 the old tables still work and
//! `--resume` goes on from the last committed step.
//!
//! 1. *prepare* (short: writers wait for the triggers' lock): the key map
//!    (kept in the key's schema), for each table a shadow made `LIKE` it
//!    (defaults, `CHECK` and `NOT NULL` constraints, storage, comments)
//!    with the key and references of the new type and `*_old` columns for
//!    the old values, a log of the primary keys the application writes,
//!    and the trigger that fills it (on the key's table it also gives a
//!    row inserted meanwhile its new key in the map);
//! 2. *keys*: the library's new keys copied into the map;
//! 3. *copy*: each table copied into its shadow range of pages by range of
//!    pages, one transaction each, checked in the same statement (every
//!    row copied, every key and reference found in the map); the tables
//!    side by side on two sessions;
//! 4. *build*: every index of the table made on its shadow, then the
//!    shadow analyzed (writers go on: nobody but the copy writes the
//!    shadows); the tables side by side;
//! 5. *replay*: the rows the log names copied again from the table as they
//!    are now, round by round, until few remain;
//! 6. *swap* (short, writers wait): the rest of the log replayed; the
//!    identity columns and owned sequences moved to the shadows; the old
//!    tables dropped and the shadows renamed in their places, the indexes
//!    and the keys they back given their names, the foreign keys made again
//!    (`NOT VALID`), comments, privileges, owner, replica identity;
//! 7. *validate* the foreign keys (writers go on; the tables side by
//!    side), *verify* the migration
//!    and that every index, constraint and column is there as before,
//!    *finish* (the map dropped).
//!
//! Triggers, row-level security and policies are made again on the
//! shadows in the swap. What it cannot carry yet (views, rules,
//! publications, partitions, …) refuses it by name before anything runs,
//! with the ways out: batches in place, or one transaction.

use super::{backup, summary, touches};
use crate::action::{Data, Locks, NewKeys};
use crate::ops::key::checks::{self, MapKeys, ReferencesWritten, When};
use crate::ops::key::model::KeyBase;
use crate::ops::key::naming::{self, old_column};
use crate::ops::key::shadow::{carried_sql, definition_sql, Shadowed};
use crate::ops::key::values::{declared, family, Becomes, Family};
use crate::ops::key::{KeyMap, Migration, Reference};
use crate::ops::{Backfill, BatchStep, ChangePlan, GiveUp, Line, Lock, Part, Run};
use uuidforge_db::catalog::{Column, Relation};
use uuidforge_db::error::{DbError, Reason, Refusal, WayOut};
use uuidforge_ident::{qualified, quote_ident, quote_literal};

/// The pages of a range a copy transaction reads (`$1` its first block,
/// `$2` the block after its last).
const RANGE: &str =
    "x.ctid >= ('(' || $1::int8 || ',0)')::tid AND x.ctid < ('(' || $2::int8 || ',0)')::tid";

/// Replay rounds stop when at most this many logged writes remain (the
/// swap carries those under its locks).
const FEW_ENOUGH: i64 = 1000;
/// At most this many replay rounds before the swap.
const ROUNDS: u32 = 20;

/// The name of `table`'s shadow while a copy runs.
fn shadow_name(t: &Relation) -> String {
    qualified(&t.schema, &naming::shadow_table(t.oid))
}

/// The name of `table`'s log (and of the function its trigger runs).
fn log_name(t: &Relation) -> String {
    qualified(&t.schema, &naming::copy_log(t.oid))
}

/// The trigger that logs the application's writes.
const LOG_TRIGGER: &str = naming::COPY_TRIGGER;

/// The temporary name of the `n`th index of a shadow.
fn index_name(t: &Relation, n: usize) -> String {
    naming::shadow_index(t.oid, n)
}

/// One table copied: the table, its shadow, what the catalog said of it,
/// its references.
struct Copied<'m, 'a> {
    table: &'a Relation,
    facts: &'m Shadowed,
    references: Vec<&'m Reference<'a>>,
}

/// Why the copy refuses `m`, if it does: everything it cannot carry yet,
/// named.
fn refused(m: &Migration, tables: &[Copied]) -> Option<DbError> {
    let mut what: Vec<String> = Vec::new();
    for c in tables {
        what.extend(
            c.facts
                .not_carried
                .iter()
                .map(|n| format!("{}: {n}", c.table.display_name())),
        );
        for g in &c.facts.triggers {
            if g.around_table().is_none() {
                what.push(format!(
                    "{}: trigger {} (its definition could not be read back)",
                    c.table.display_name(),
                    g.name
                ));
            }
        }
        for i in &c.facts.indexes {
            if i.tail.is_none() {
                what.push(format!(
                    "{}: index {} (its definition could not be read back)",
                    c.table.display_name(),
                    i.name
                ));
            }
        }
    }
    for r in &m.references {
        if m.becomes(r) != Becomes::Uuid {
            what.push(format!(
                "{}.{}: a reference kept as {} (it takes the new key's text)",
                r.table.display_name(),
                r.column.name,
                r.column.type_name
            ));
        }
        if !r.pairs(&m.key).is_empty() {
            what.push(format!(
                "{}.{}: a composite foreign key",
                r.table.display_name(),
                r.column.name
            ));
        }
        if r.declared_on.oid != r.table.oid {
            what.push(format!(
                "{}.{}: a foreign key declared on a partition",
                r.table.display_name(),
                r.column.name
            ));
        }
    }
    if m.copies.found.iter().any(|c| c.rewritten) {
        what.push("copies of the key in other columns (--also)".into());
    }
    for c in &m.dependents.constraints {
        if c.kind == crate::ops::key::dependents::ConstraintKind::Check {
            what.push(format!("CHECK constraint {} over a changed column", c.name));
        }
    }
    for i in &m.dependents.indexes {
        let expression = tables
            .iter()
            .flat_map(|c| &c.facts.indexes)
            .any(|x| x.name == i.name && x.changed_expression);
        if expression {
            what.push(format!(
                "index {} (an expression or a predicate over a changed column)",
                i.name
            ));
        }
    }
    if !m.dependents.others.is_empty() {
        what.extend(
            m.dependents
                .others
                .iter()
                .map(|o| format!("{} over a changed column", o.description)),
        );
    }
    if !m.defaults.is_empty() {
        what.push("a default on a reference".into());
    }
    if what.is_empty() {
        return None;
    }
    what.sort();
    what.dedup();
    Some(DbError::refusal(
        "copy",
        Refusal::new(
            Reason::NotInBatches,
            format!(
                "the online copy cannot carry yet: {} (expected tables whose other objects are indexes, keys, foreign keys, CHECK constraints, identity columns and sequences, triggers, policies, comments and privileges; batches in place, without --copy, carry them)",
                what.join("; ")
            ),
        )
        .way_out(WayOut::OneTransaction),
    ))
}

/// The type the copy's maps hold old keys as: the key's own for an
/// integer or uuid key (joined without a cast to text per row: a copy
/// through a bigint map took 0.69 times the time of one through the text
/// map), else text, as the kept map.
fn map_key_type(m: &Migration) -> Option<String> {
    match m.key_base_type() {
        KeyBase::Integer | KeyBase::Uuid => Some(m.key.column.type_name.clone()),
        KeyBase::Other => None,
    }
}

/// The map the copy reads: the kept map, or its copy keyed by the key's
/// own type.
fn copy_map(m: &Migration, map: &str) -> String {
    match map_key_type(m) {
        Some(_) => qualified(
            &m.key.table.schema,
            &format!("{}_typed", naming::kept_map(m.key.table.oid)),
        ),
        None => map.to_string(),
    }
}

/// The new key of the old value `c` (SQL) of `column`, through the map
/// and the keys given to rows inserted since the copy began, joined as
/// `alias` and `alias_since`: in the kept map, whose old keys are the
/// key's text, a number of another type is read as the key's type writes
/// it. The joins, and the new key.
fn map_join(
    m: &Migration,
    map: &str,
    alias: &str,
    c: &str,
    (table, column): (&Relation, &Column),
) -> (String, String) {
    let old = if map_key_type(m).is_some() {
        c.to_string()
    } else if column.type_oid != m.key.column.type_oid
        && family(m.snapshot, column) == Some(Family::Number)
    {
        format!("{c}::{}::text", m.key.column.type_name)
    } else {
        format!("{c}::text")
    };
    let (map, since) = (copy_map(m, map), since_map(m));
    (
        format!(
            " LEFT JOIN {map} {alias} ON {alias}.old = {old} LEFT JOIN {since} {alias}_since ON {alias}_since.old = {old}"
        ),
        // An old value without a new key stops the statement (the range or
        // the replay round rolls back) rather than writing NULL: the only
        // error this cast can raise names the value and says why.
        format!(
            "coalesce({alias}.new, {alias}_since.new, CASE WHEN {c} IS NOT NULL THEN ({} || {c}::text)::uuid END)",
            quote_literal(&format!(
                "uuidforge: no new key in the map for {}.{} = ",
                table.display_name(),
                column.name
            ))
        ),
    )
}

/// The keys the trigger gives rows inserted while the copy runs (the
/// generator's, from the clock): the map holds the library's keys of every
/// row there was when they were computed, and wins.
fn since_map(m: &Migration) -> String {
    qualified(
        &m.key.table.schema,
        &format!("{}_since", naming::kept_map(m.key.table.oid)),
    )
}

/// The shadow's columns in order and the expressions that fill them from a
/// row `x` of the table (the map joined once per changed column), and the
/// joins.
fn select(m: &Migration, map: &str, c: &Copied) -> (Vec<String>, Vec<String>, String) {
    let mut columns = Vec::new();
    let mut values = Vec::new();
    let mut joins = String::new();
    let mut old = Vec::new();
    for col in &c.table.columns {
        let q = quote_ident(&col.name);
        columns.push(q.clone());
        let is_key = c.table.oid == m.key.table.oid && col.num == m.key.column.num;
        let reference = c.references.iter().position(|r| r.column.num == col.num);
        if is_key {
            let (join, new) = map_join(m, map, "mk", &format!("x.{q}"), (c.table, col));
            joins.push_str(&join);
            values.push(new);
            old.push((quote_ident(&m.old_name), format!("x.{q}")));
        } else if let Some(n) = reference {
            let (join, new) = map_join(m, map, &format!("m{n}"), &format!("x.{q}"), (c.table, col));
            joins.push_str(&join);
            values.push(new);
            old.push((quote_ident(&old_column(&col.name)), format!("x.{q}")));
        } else {
            values.push(format!("x.{q}"));
        }
    }
    for (name, value) in old {
        columns.push(name);
        values.push(value);
    }
    (columns, values, joins)
}

/// The statements of the first step for one table: its shadow, its log,
/// the trigger that fills the log (and, on the key's table, the map).
fn prepare(m: &Migration, c: &Copied) -> Vec<String> {
    let t = c.table.sql_name();
    let s = shadow_name(c.table);
    let log = log_name(c.table);
    let mut out = vec![format!(
        "CREATE TABLE {s} (LIKE {t} INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE INCLUDING COMPRESSION INCLUDING COMMENTS){}",
        if c.facts.options.is_empty() {
            String::new()
        } else {
            format!(" WITH ({})", c.facts.options.join(", "))
        }
    )];
    let mut alters = Vec::new();
    if c.table.oid == m.key.table.oid {
        let k = quote_ident(&m.key.column.name);
        alters.push(format!("ALTER COLUMN {k} DROP DEFAULT"));
        alters.push(format!("ALTER COLUMN {k} TYPE uuid USING NULL"));
        if let Some(g) = &m.generator {
            alters.push(format!("ALTER COLUMN {k} SET DEFAULT {}", g.call()));
        }
    }
    for r in &c.references {
        alters.push(format!(
            "ALTER COLUMN {} TYPE uuid USING NULL",
            quote_ident(&r.column.name)
        ));
    }
    if c.table.oid == m.key.table.oid {
        alters.push(format!(
            "ADD COLUMN {} {}",
            quote_ident(&m.old_name),
            declared(m.key.column)
        ));
    }
    for r in &c.references {
        alters.push(format!(
            "ADD COLUMN {} {}",
            quote_ident(&old_column(&r.column.name)),
            declared(r.column)
        ));
    }
    out.push(format!("ALTER TABLE {s} {}", alters.join(", ")));
    out.push(format!(
        "CREATE TABLE {log} ({})",
        c.facts
            .primary_key
            .iter()
            .map(|(n, ty)| format!("{} {ty}", quote_ident(n)))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    let names: Vec<String> = c
        .facts
        .primary_key
        .iter()
        .map(|(n, _)| quote_ident(n))
        .collect();
    let of = |row: &str| {
        names
            .iter()
            .map(|n| format!("{row}.{n}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let changed = names
        .iter()
        .map(|n| format!("NEW.{n} IS DISTINCT FROM OLD.{n}"))
        .collect::<Vec<_>>()
        .join(" OR ");
    let mut body = format!(
        "IF TG_OP <> 'INSERT' THEN INSERT INTO {log} VALUES ({}); END IF; IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND ({changed})) THEN INSERT INTO {log} VALUES ({}); END IF; ",
        of("OLD"),
        of("NEW")
    );
    if c.table.oid == m.key.table.oid {
        let k = quote_ident(&m.key.column.name);
        let v7 = m
            .generator
            .as_ref()
            .map_or_else(|| "gen_random_uuid()".to_string(), |g| g.call());
        let since = since_map(m);
        body.push_str(&format!(
            "IF (TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND NEW.{k} IS DISTINCT FROM OLD.{k})) AND NEW.{k} IS NOT NULL THEN INSERT INTO {since} (old, new) VALUES (NEW.{k}{cast}, {v7}) ON CONFLICT DO NOTHING; END IF; ",
            cast = if map_key_type(m).is_some() { "" } else { "::text" }
        ));
    }
    out.push(format!(
        "CREATE FUNCTION {log}() RETURNS trigger LANGUAGE plpgsql AS $uuidforge$ #variable_conflict use_column\nBEGIN {body}RETURN NULL; END $uuidforge$"
    ));
    out.push(format!(
        "CREATE TRIGGER {LOG_TRIGGER} AFTER INSERT OR UPDATE OR DELETE ON {t} FOR EACH ROW EXECUTE FUNCTION {log}()"
    ));
    // Rows a subscription's apply worker writes are logged too.
    out.push(format!(
        "ALTER TABLE {t} ENABLE ALWAYS TRIGGER {LOG_TRIGGER}"
    ));
    out
}

/// One table's copy, range of pages by range of pages: each range in one
/// statement that returns, for every row it wrote, whether its key or a
/// reference lacked a new key in the map (an `INSERT … SELECT` writes
/// every row it reads: the map's joins are outer joins on its primary key).
fn copy_part(m: &Migration, map: &str, c: &Copied) -> Part {
    let (columns, values, joins) = select(m, map, c);
    let t = c.table.sql_name();
    let s = shadow_name(c.table);
    Part::Backfill(Backfill {
        what: format!("copy {} into its shadow", c.table.display_name()),
        table: t.clone(),
        update_sql: format!(
            "WITH copied AS (INSERT INTO {s} ({}) SELECT {} FROM {t} x{joins} WHERE {RANGE} RETURNING {}) \
             SELECT count(*)::int8, (count(*) FILTER (WHERE uuidforge_missing))::int8 FROM copied",
            columns.join(", "),
            values.join(", "),
            missing_in_shadow(m, c)
        ),
        quiet: Vec::new(),
        restore: Vec::new(),
        mismatch: Some("rows without their new key in the map".into()),
    })
}

/// Whether a row written into the shadow lacks a new key: an old value
/// without its new one (SQL over the shadow's columns, named
/// `uuidforge_missing`).
fn missing_in_shadow(m: &Migration, c: &Copied) -> String {
    let mut pairs: Vec<(String, String)> = Vec::new();
    if c.table.oid == m.key.table.oid {
        pairs.push((m.key.column.name.clone(), m.old_name.clone()));
    }
    for r in &c.references {
        pairs.push((r.column.name.clone(), old_column(&r.column.name)));
    }
    let missing: Vec<String> = pairs
        .iter()
        .map(|(new, old)| {
            format!(
                "({} IS NULL AND {} IS NOT NULL)",
                quote_ident(new),
                quote_ident(old)
            )
        })
        .collect();
    if missing.is_empty() {
        "false AS uuidforge_missing".into()
    } else {
        format!("({}) AS uuidforge_missing", missing.join(" OR "))
    }
}

/// The statements that carry the writes `log` names into the shadow (the
/// rows as they are now), in a transaction: `taken` the temporary table of
/// the keys taken from the log (`all`: every one, else those the log holds
/// now, which the transaction deletes).
fn replay(m: &Migration, map: &str, c: &Copied, taken: &str) -> Vec<String> {
    let (columns, values, joins) = select(m, map, c);
    let t = c.table.sql_name();
    let s = shadow_name(c.table);
    let log = log_name(c.table);
    let pk: Vec<String> = c
        .facts
        .primary_key
        .iter()
        .map(|(n, _)| quote_ident(n))
        .collect();
    // The shadow holds a changed key column's old values in its `*_old`.
    let in_shadow = |n: &str| -> String {
        let column = c
            .table
            .columns
            .iter()
            .find(|col| quote_ident(&col.name) == n);
        match column {
            Some(col) if c.table.oid == m.key.table.oid && col.num == m.key.column.num => {
                quote_ident(&m.old_name)
            }
            Some(col) if c.references.iter().any(|r| r.column.num == col.num) => {
                quote_ident(&old_column(&col.name))
            }
            _ => n.to_string(),
        }
    };
    let list = pk.join(", ");
    let matched = |a: &str, b: &str, shadow: bool| {
        pk.iter()
            .map(|n| {
                format!(
                    "{a}.{} = {b}.{n}",
                    if shadow { in_shadow(n) } else { n.to_string() }
                )
            })
            .collect::<Vec<_>>()
            .join(" AND ")
    };
    vec![
        format!(
            "CREATE TEMP TABLE {taken} ON COMMIT DROP AS WITH d AS (DELETE FROM {log} RETURNING {list}) SELECT DISTINCT {list} FROM d"
        ),
        // A new table has no statistics: without them the next two
        // statements are planned for an empty table and hash the whole
        // shadow for a few hundred keys.
        format!("ANALYZE {taken}"),
        format!(
            "DELETE FROM {s} s USING {taken} k WHERE {}",
            matched("s", "k", true)
        ),
        format!(
            "INSERT INTO {s} ({}) SELECT {} FROM {t} x{joins} JOIN {taken} k ON {}",
            columns.join(", "),
            values.join(", "),
            matched("x", "k", false)
        ),
    ]
}

/// The change as a copy, in ranges of about `batch_size` rows, its
/// tables' copies, index builds and validations on `sessions` sessions side
/// by side (one server process each, as pg_repack's `--jobs`: an `INSERT …
/// SELECT` runs on one core, so copies gain most; index builds and
/// validations use the server's parallel workers too).
pub fn change(
    m: &Migration,
    (batch_size, sessions): (i64, u32),
    shadowed: &[Shadowed],
) -> Result<ChangePlan, DbError> {
    let map = m.map_name(KeyMap::Kept);
    let mut tables: Vec<Copied> = Vec::new();
    for (t, references) in m.tables_with_references() {
        let facts = shadowed.iter().find(|s| s.oid == t.oid).ok_or_else(|| {
            DbError::unreadable(
                "plan",
                format!("nothing was read of {} for its copy", t.display_name()),
            )
        })?;
        tables.push(Copied {
            table: t,
            facts,
            references,
        });
    }
    if let Some(e) = refused(m, &tables) {
        return Err(e);
    }
    let written: Vec<String> = tables.iter().map(|c| c.table.sql_name()).collect();
    let shadows: Vec<String> = tables.iter().map(|c| shadow_name(c.table)).collect();
    let since = since_map(m);
    let mut prepare_sql = vec![
        // Indexed once filled (two builds cost less than an entry per row
        // in each).
        format!("CREATE TABLE {map} (old text NOT NULL, new uuid NOT NULL)"),
        format!(
            "CREATE TABLE {since} (old {} PRIMARY KEY, new uuid NOT NULL)",
            map_key_type(m).as_deref().unwrap_or("text")
        ),
    ];
    for c in &tables {
        prepare_sql.extend(prepare(m, c));
    }
    let mut steps = vec![BatchStep::Transaction {
        what: "prepare: the key map, a shadow of each table, logs of the rows written meanwhile"
            .into(),
        lock: Some(Lock {
            tables: written.clone(),
            mode: Locks::ShareRowExclusive,
        }),
        statements: prepare_sql,
        exclusive: true,
        mark: None,
        replaces_tables: false,
    }];
    steps.push(BatchStep::Data(Data::Keys(NewKeys {
        // Every row there is now; those inserted later have theirs from
        // the trigger.
        read: checks::read_keys_sql(m, ""),
        map: map.clone(),
        ordered: m.order_column.is_some(),
        given: None,
    })));
    // The replay looks rows up in the map the copy reads: that one is
    // indexed (the checks join the kept map by hash, and prove the new
    // keys 1:1 on the table itself).
    let typed = copy_map(m, &map);
    let index_map = match map_key_type(m) {
        Some(ty) => vec![
            format!("CREATE TABLE {typed} AS SELECT old::{ty} AS old, new FROM {map}"),
            format!("ALTER TABLE {typed} ADD PRIMARY KEY (old)"),
        ],
        None => crate::action::Action::Table(crate::action::Table::IndexMap { map: map.clone() })
            .statements(),
    };
    steps.push(BatchStep::Transaction {
        what: "index the key map".into(),
        lock: None,
        statements: index_map,
        exclusive: false,
        mark: None,
        replaces_tables: false,
    });
    steps.push(BatchStep::Beside {
        what: "copy each table into its shadow".into(),
        sessions,
        parts: tables.iter().map(|c| copy_part(m, &map, c)).collect(),
    });
    let mut round = Vec::new();
    for (n, c) in tables.iter().enumerate() {
        round.extend(replay(m, &map, c, &format!("uuidforge_taken_{n}")));
    }
    let remaining = tables
        .iter()
        .map(|c| format!("(SELECT count(*) FROM {})", log_name(c.table)))
        .collect::<Vec<_>>()
        .join(" + ");
    let remaining = format!("SELECT ({remaining})::text");
    // A row updated while the copy ran may have been copied twice (a range
    // of pages before the update, its new version in a later range): the
    // log names every such row, and a replay leaves one of each. So once
    // before the unique indexes are built.
    steps.push(BatchStep::Replay {
        what: "replay the rows written during the copy (each row once in its shadow)".into(),
        statements: round.clone(),
        remaining: remaining.clone(),
        until: i64::MAX,
        rounds: 1,
    });
    // Only the copy writes the shadows: writers go on.
    steps.push(BatchStep::Beside {
        what: "index and analyze each shadow".into(),
        sessions,
        parts: tables.iter().map(|c| index_and_analyze(m, c)).collect(),
    });
    steps.push(BatchStep::Replay {
        what: "replay the rows written meanwhile into the shadows".into(),
        statements: round.clone(),
        remaining,
        until: FEW_ENOUGH,
        rounds: ROUNDS,
    });
    let mut locked: Vec<String> = Vec::new();
    for c in &tables {
        for f in &c.facts.foreign_keys_in {
            if !locked.contains(&f.table) && !written.contains(&f.table) {
                locked.push(f.table.clone());
            }
        }
    }
    // Referencing tables first, as a writer's statement that checks a
    // foreign key locks them.
    let mut order: Vec<String> = locked;
    order.extend(written.iter().rev().cloned());
    order.extend(shadows.iter().cloned());
    let (swap_sql, validated) = swap(m, &tables, round);
    let giving_up = give_up(m, &tables, steps.len());
    steps.push(BatchStep::Transaction {
        what: "swap: the rest replayed, the shadows in the tables' places".into(),
        lock: Some(Lock::access_exclusive(order)),
        statements: swap_sql,
        exclusive: true,
        mark: Some("swap".into()),
        replaces_tables: true,
    });
    if !validated.is_empty() {
        steps.push(BatchStep::Beside {
            what: "validate the foreign keys (writers go on)".into(),
            sessions,
            parts: validated
                .into_iter()
                .map(|(table, statements)| Part::Transaction {
                    what: format!("validate the foreign keys of {table}"),
                    sized_by: Some(table),
                    statements,
                })
                .collect(),
        });
    }
    steps.push(BatchStep::Check {
        what: "verify the migration".into(),
        sql: with_carried_check(
            &tables,
            &checks::with_objects_check(
                &checks::verify_through(
                    m,
                    When::AfterSwap,
                    &typed,
                    if typed == map {
                        MapKeys::Text
                    } else {
                        MapKeys::Typed
                    },
                    ReferencesWritten::ThroughTheKeysMap,
                ),
                &m.objects,
                &written,
                &checks::translated_constraints(m),
            ),
        ),
        binds: vec!["swap".into()],
    });
    steps.push(BatchStep::Transaction {
        what: "finish: drop the key map".into(),
        lock: None,
        statements: vec![if typed == map {
            format!("DROP TABLE {map}, {since}")
        } else {
            format!("DROP TABLE {map}, {since}, {typed}")
        }],
        exclusive: false,
        mark: None,
        replaces_tables: false,
    });
    let mut lines = summary(
        m,
        &format!(
            ", online: each table copied once into a shadow, in ranges of about {batch_size} rows"
        ),
    );
    lines.push(Line::with(
        "  progress: kept by the runner; a killed run goes on from its last step",
        WayOut::Resume {
            operation: "migrate-key".into(),
            target: m.key.table.typed_name(),
        },
    ));
    Ok(ChangePlan {
        operation: "migrate-key".into(),
        target: m.key.table.typed_name(),
        schema: m.key.table.schema.clone(),
        touches: touches(m),
        summary: lines,
        backup: backup(m),
        run: Run::Batches {
            batch_size,
            steps,
            session: session(),
            give_up: Some(giving_up),
        },
        epilogue: Vec::new(),
        measured: Default::default(),
    })
}

/// The settings of every session of the copy: the memory of one
/// transaction, and row-level security off, so that a policy that would
/// hide rows from the copy (the table's owner under `FORCE ROW LEVEL
/// SECURITY`, a role without `BYPASSRLS`) stops it with the server's
/// error instead of leaving the rows behind.
fn session() -> Vec<crate::ops::SessionSetting> {
    let mut settings = crate::ops::key::kinds::transaction::memory();
    settings.push(crate::ops::SessionSetting {
        name: "row_security".into(),
        value: "off".into(),
    });
    settings
}

/// A shadow's indexes, then its statistics. The statistics are taken once
/// the indexes are built (an expression index's are taken with them): the
/// replay rounds and the swap are planned with them, and the table swapped
/// in has them from its first query (a table filled by `INSERT` has none
/// until autovacuum comes by). The table's statistics targets are set
/// first, so that the shadow is sampled as the table was. One part per
/// table: the analysis of one shadow runs beside the index builds of
/// another (on one table they would wait for each other).
fn index_and_analyze(m: &Migration, c: &Copied) -> Part {
    let s = shadow_name(c.table);
    let mut statements = Vec::new();
    if c.table.oid == m.key.table.oid {
        // The old values' unique index, which the replay finds the key's
        // rows by.
        statements.push(format!(
            "CREATE UNIQUE INDEX {} ON {s} ({})",
            quote_ident(&m.old_index_name()),
            quote_ident(&m.old_name)
        ));
    }
    for (n, i) in c.facts.indexes.iter().enumerate() {
        let tail = i.tail.as_deref().unwrap_or_default();
        statements.push(format!(
            "CREATE {}INDEX {} ON {s} {tail}",
            if i.unique { "UNIQUE " } else { "" },
            quote_ident(&index_name(c.table, n))
        ));
    }
    for (column, target) in &c.facts.statistics_targets {
        statements.push(format!(
            "ALTER TABLE {s} ALTER COLUMN {} SET STATISTICS {target}",
            quote_ident(column)
        ));
    }
    statements.push(format!("ANALYZE {s}"));
    Part::Transaction {
        what: format!("index and analyze {}'s shadow", c.table.display_name()),
        sized_by: Some(s),
        statements,
    }
}

/// `checks` (one row of JSON text) with `triggers, row-level security
/// and policies changed`: the tables (found by name: they are new) whose
/// triggers, row-level security or policies are not as they were.
fn with_carried_check(tables: &[Copied], checks: &str) -> String {
    let changed: Vec<String> = tables
        .iter()
        .map(|c| {
            format!(
                "({} IS DISTINCT FROM {})::int",
                carried_sql(
                    &format!("{}::regclass", quote_literal(&c.table.sql_name())),
                    LOG_TRIGGER
                ),
                quote_literal(&c.facts.carried)
            )
        })
        .collect();
    format!(
        "SELECT (({checks})::jsonb || jsonb_build_object('tables whose triggers, row-level security or policies changed', {}))::text",
        if changed.is_empty() {
            "0".to_string()
        } else {
            changed.join(" + ")
        }
    )
}

/// The triggers, row-level security and policies of `c`'s table, made
/// again on the shadow in its place (after the replay, which fires none
/// of them: the rows it carries are the table's, triggers fired).
fn carried(c: &Copied) -> Vec<String> {
    let t = c.table.sql_name();
    let mut out = Vec::new();
    for g in &c.facts.triggers {
        let Some((head, tail)) = g.around_table() else {
            // Refused before anything runs.
            continue;
        };
        out.push(format!("{head} ON {t} {tail}"));
        let name = quote_ident(&g.name);
        match g.enabled.as_str() {
            "D" => out.push(format!("ALTER TABLE {t} DISABLE TRIGGER {name}")),
            "R" => out.push(format!("ALTER TABLE {t} ENABLE REPLICA TRIGGER {name}")),
            "A" => out.push(format!("ALTER TABLE {t} ENABLE ALWAYS TRIGGER {name}")),
            _ => {}
        }
        if let Some(comment) = &g.comment {
            out.push(format!(
                "COMMENT ON TRIGGER {name} ON {t} IS {}",
                quote_literal(comment)
            ));
        }
    }
    if c.facts.row_security {
        out.push(format!("ALTER TABLE {t} ENABLE ROW LEVEL SECURITY"));
    }
    if c.facts.force_row_security {
        out.push(format!("ALTER TABLE {t} FORCE ROW LEVEL SECURITY"));
    }
    for p in &c.facts.policies {
        out.push(p.definition.clone());
        if let Some(comment) = &p.comment {
            out.push(format!(
                "COMMENT ON POLICY {} ON {t} IS {}",
                quote_ident(&p.name),
                quote_literal(comment)
            ));
        }
    }
    out
}

/// What gives the copy up before its swap: its triggers, logs, shadows
/// and maps dropped (each `IF EXISTS`: a table of the key map is made by a
/// later step).
fn give_up(m: &Migration, tables: &[Copied], before: usize) -> GiveUp {
    let mut statements: Vec<String> = Vec::new();
    for c in tables {
        statements.push(format!(
            "DROP TRIGGER IF EXISTS {LOG_TRIGGER} ON {}",
            c.table.sql_name()
        ));
        statements.push(format!("DROP FUNCTION IF EXISTS {}()", log_name(c.table)));
        statements.push(format!(
            "DROP TABLE IF EXISTS {}, {}",
            log_name(c.table),
            shadow_name(c.table)
        ));
    }
    let map = m.map_name(KeyMap::Kept);
    statements.push(format!(
        "DROP TABLE IF EXISTS {map}, {}, {}",
        since_map(m),
        copy_map(m, &map)
    ));
    GiveUp {
        before,
        // Dropping a trigger locks its table out (as the swap does).
        lock: Lock::access_exclusive(tables.iter().map(|c| c.table.sql_name()).collect()),
        statements,
    }
}

/// The swap's first statement, under its locks: it stops the swap when a
/// table was changed since the copy was planned (a column added, an index
/// made, a privilege granted while the copy ran: the shadow, made from the
/// plan, would lose it), naming the table and what changed, with how to
/// give the copy up.
fn unchanged_since_planned(m: &Migration, tables: &[Copied]) -> String {
    let written: Vec<String> = tables.iter().map(|c| c.table.sql_name()).collect();
    let mut tests = vec![(
        format!(
            "({})::jsonb IS DISTINCT FROM {}::jsonb",
            checks::objects_sql(&written, &[]),
            quote_literal(&m.objects)
        ),
        "their indexes, constraints or columns".to_string(),
    )];
    for c in tables {
        let oid = format!("{}::regclass", quote_literal(&c.table.sql_name()));
        tests.push((
            format!(
                "{} IS DISTINCT FROM {}",
                carried_sql(&oid, LOG_TRIGGER),
                quote_literal(&c.facts.carried)
            ),
            format!(
                "{}: its triggers, row-level security or policies",
                c.table.display_name()
            ),
        ));
        tests.push((
            format!(
                "{} IS DISTINCT FROM {}",
                definition_sql(&oid),
                quote_literal(&c.facts.definition)
            ),
            format!(
                "{}: its columns, owner, privileges or options",
                c.table.display_name()
            ),
        ));
    }
    let checks: String = tests
        .iter()
        .map(|(test, what)| {
            format!(
                "IF {test} THEN changed := changed || {}::text; END IF; ",
                quote_literal(what)
            )
        })
        .collect();
    let message = format!(
        "uuidforge: changed since the online copy was planned: %; the swap would lose the change on {} (undo it and resume the change, or give the copy up before its swap, as the plan's last statements do)",
        m.key.table.display_name()
    );
    format!(
        "DO $uuidforge$ DECLARE changed text[] := ARRAY[]::text[]; BEGIN {checks}IF cardinality(changed) > 0 THEN RAISE EXCEPTION {}, array_to_string(changed, '; '); END IF; END $uuidforge$",
        quote_literal(&message.replace('%', "%%").replacen("%%", "%", 1))
    )
}

/// The swap's statements, and the foreign keys to validate after it (by
/// table, the statements).
fn swap(
    m: &Migration,
    tables: &[Copied],
    round: Vec<String>,
) -> (Vec<String>, Vec<(String, Vec<String>)>) {
    let mut out = vec![unchanged_since_planned(m, tables)];
    out.extend(round);
    let mut validate: Vec<(String, Vec<String>)> = Vec::new();
    // The logs' triggers first: nothing written from here on needs them.
    for c in tables {
        let t = c.table.sql_name();
        let log = log_name(c.table);
        out.push(format!("DROP TRIGGER {LOG_TRIGGER} ON {t}"));
        out.push(format!("DROP FUNCTION {log}()"));
        out.push(format!("DROP TABLE {log}"));
    }
    // Identity columns and owned sequences go to the shadows, where they
    // left off.
    let mut renamed_sequences = Vec::new();
    for c in tables {
        let s = shadow_name(c.table);
        for (n, q) in c.facts.sequences.iter().enumerate() {
            let col = quote_ident(&q.column);
            let is_key = c.table.oid == m.key.table.oid && q.column == m.key.column.name;
            if is_key {
                // The key's own sequence goes with the old key.
                continue;
            }
            match q.identity.as_str() {
                "a" | "d" => {
                    let new = qualified(
                        &c.table.schema,
                        &format!("uuidforge_seq_{}_{n}", c.table.oid),
                    );
                    out.push(format!(
                        "ALTER TABLE {s} ALTER COLUMN {col} ADD GENERATED {} AS IDENTITY (SEQUENCE NAME {new} {})",
                        if q.identity == "a" { "ALWAYS" } else { "BY DEFAULT" },
                        q.options
                    ));
                    out.push(format!(
                        "SELECT setval({}, last_value, is_called) FROM {}",
                        quote_literal(&new),
                        q.sequence
                    ));
                    renamed_sequences.push((new, quote_ident(&q.sequence_name)));
                }
                _ => out.push(format!("ALTER SEQUENCE {} OWNED BY {s}.{col}", q.sequence)),
            }
        }
    }
    // Foreign keys into the tables from others, dropped with them.
    let mut foreign_keys = Vec::new();
    for c in tables {
        for f in &c.facts.foreign_keys_in {
            out.push(format!(
                "ALTER TABLE {} DROP CONSTRAINT {}",
                f.table,
                quote_ident(&f.name)
            ));
            foreign_keys.push(f);
        }
        foreign_keys.extend(&c.facts.foreign_keys_out);
        foreign_keys.extend(&c.facts.foreign_keys_within);
    }
    out.push(format!(
        "DROP TABLE {}",
        tables
            .iter()
            .map(|c| c.table.sql_name())
            .collect::<Vec<_>>()
            .join(", ")
    ));
    for c in tables {
        let t = c.table.sql_name();
        let s = shadow_name(c.table);
        out.push(format!(
            "ALTER TABLE {s} RENAME TO {}",
            quote_ident(&c.table.name)
        ));
        for (n, i) in c.facts.indexes.iter().enumerate() {
            let temp = qualified(&c.table.schema, &index_name(c.table, n));
            match i.constraint.as_deref() {
                Some(kind @ ("p" | "u")) => out.push(format!(
                    "ALTER TABLE {t} ADD CONSTRAINT {} {} USING INDEX {}{}",
                    quote_ident(&i.name),
                    if kind == "p" { "PRIMARY KEY" } else { "UNIQUE" },
                    quote_ident(&index_name(c.table, n)),
                    i.deferrable
                )),
                _ => out.push(format!(
                    "ALTER INDEX {temp} RENAME TO {}",
                    quote_ident(&i.name)
                )),
            }
            let object = if i.constraint.is_some() {
                format!("CONSTRAINT {} ON {t}", quote_ident(&i.name))
            } else {
                format!("INDEX {}", qualified(&c.table.schema, &i.name))
            };
            if let Some(comment) = &i.comment {
                out.push(format!("COMMENT ON {object} IS {}", quote_literal(comment)));
            }
            if i.replica_identity {
                out.push(format!(
                    "ALTER TABLE {t} REPLICA IDENTITY USING INDEX {}",
                    quote_ident(&i.name)
                ));
            }
        }
        match c.facts.replica_identity.as_str() {
            "f" => out.push(format!("ALTER TABLE {t} REPLICA IDENTITY FULL")),
            "n" => out.push(format!("ALTER TABLE {t} REPLICA IDENTITY NOTHING")),
            _ => {}
        }
        if let Some(comment) = &c.facts.comment {
            out.push(format!(
                "COMMENT ON TABLE {t} IS {}",
                quote_literal(comment)
            ));
        }
        out.push(format!("ALTER TABLE {t} OWNER TO {}", c.facts.owner));
        for g in &c.facts.grants {
            out.push(format!(
                "GRANT {}{} ON {t} TO {}{}",
                g.privilege,
                g.column
                    .as_ref()
                    .map_or_else(String::new, |col| format!(" ({})", quote_ident(col))),
                g.grantee,
                if g.grantable {
                    " WITH GRANT OPTION"
                } else {
                    ""
                }
            ));
        }
    }
    for c in tables {
        out.extend(carried(c));
    }
    for (new, old) in renamed_sequences {
        out.push(format!("ALTER SEQUENCE {new} RENAME TO {old}"));
    }
    for f in foreign_keys {
        out.push(format!(
            "ALTER TABLE {} ADD CONSTRAINT {} {} NOT VALID",
            f.table,
            quote_ident(&f.name),
            f.definition
        ));
        if let Some(comment) = &f.comment {
            out.push(format!(
                "COMMENT ON CONSTRAINT {} ON {} IS {}",
                quote_ident(&f.name),
                f.table,
                quote_literal(comment)
            ));
        }
        // One part per table: validations of one table wait for each
        // other (each locks it SHARE UPDATE EXCLUSIVE).
        let statement = format!(
            "ALTER TABLE {} VALIDATE CONSTRAINT {}",
            f.table,
            quote_ident(&f.name)
        );
        match validate.iter_mut().find(|(t, _)| *t == f.table) {
            Some((_, statements)) => statements.push(statement),
            None => validate.push((f.table.clone(), vec![statement])),
        }
    }
    (out, validate)
}
