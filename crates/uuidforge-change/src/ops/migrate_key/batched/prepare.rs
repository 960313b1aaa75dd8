//! The steps of a batched migration before the swap: new columns and the
//! triggers keeping them right, the keys, the backfills, every index the
//! swap adopts built concurrently, the NOT NULL checks and the first
//! verification.

use super::{over_new_columns, Ctx};
use uuidforge_db::catalog::Relation;
use uuidforge_db::error::DbError;
use uuidforge_ident::{quote_ident, quote_literal};
use uuidforge_db::introspect::quiet_triggers;
use crate::ops::key::checks::{self, changed_columns, Phase};
use crate::ops::key::substitute::Remake;
use crate::ops::key::values::{equal, Becomes};
use crate::ops::key::BACKFILL_SETTING;
use crate::ops::key::{names, new_column, piece, temporary, NewKeys, Reference};
use crate::ops::{Backfill, BatchStep};

/// The first step: new columns, the key map and the triggers that keep
/// the new columns right for rows written meanwhile.
pub(super) fn prepare(ctx: &Ctx) -> Vec<String> {
    let Ctx {
        m, kn, map, tables, ..
    } = ctx;
    let mut prepare = vec![format!(
        "CREATE TABLE {map} (old text PRIMARY KEY, new uuid NOT NULL UNIQUE)"
    )];
    for (table, columns) in tables.iter() {
        let mut added = Vec::new();
        if table.oid == m.key.table.oid {
            added.push(format!("ADD COLUMN {kn} uuid"));
        }
        added.extend(columns.iter().map(|r| {
            format!(
                "ADD COLUMN {} {}",
                quote_ident(&new_column(&r.column.name)),
                m.new_type(r)
            )
        }));
        prepare.push(format!(
            "ALTER TABLE {} {}",
            table.sql_name(),
            added.join(", ")
        ));
    }
    for (table, columns) in tables.iter() {
        prepare.push(format!(
            "CREATE FUNCTION {}() RETURNS trigger LANGUAGE plpgsql AS $uuidforge$ BEGIN {}RETURN NEW; END $uuidforge$",
            ctx.function(table.oid),
            trigger_body(ctx, table, columns)
        ));
        prepare.push(format!(
            "CREATE TRIGGER uuidforge_migrate BEFORE INSERT OR UPDATE ON {} FOR EACH ROW WHEN (current_setting({}, true) IS DISTINCT FROM 'on') EXECUTE FUNCTION {}()",
            table.sql_name(),
            quote_literal(BACKFILL_SETTING),
            ctx.function(table.oid)
        ));
    }
    prepare
}

/// A UUIDv7 from the clock, in SQL, for rows written while the migration
/// runs: the new key's generator or, without one (`--no-default`), a
/// version 4 UUID whose first 48 bits become the Unix milliseconds (RFC
/// 9562 §5.7).
fn uuidv7_sql(ctx: &Ctx) -> String {
    match &ctx.m.generator {
        Some(generator) => generator.call(),
        None => "encode(set_byte(overlay(uuid_send(gen_random_uuid()) PLACING substring(int8send((extract(epoch FROM clock_timestamp()) * 1000)::int8) FROM 3) FROM 1 FOR 6), 6, (get_byte(uuid_send(gen_random_uuid()), 6) & 15) | 112), 'hex')::uuid".into(),
    }
}

/// The trigger of `table`: the new key of a row inserted or whose key
/// changed (from the map, else a fresh UUIDv7), the new reference of a row
/// whose reference changed (an updated row may move to a page the backfill
/// has passed: an update gives it its new value as an insert does).
fn trigger_body(ctx: &Ctx, table: &Relation, columns: &[&Reference]) -> String {
    let Ctx {
        m, t, k, kn, map, ..
    } = ctx;
    let q = |name: &str| quote_ident(name);
    let mut body = String::new();
    if table.oid == m.key.table.oid {
        let v7 = uuidv7_sql(ctx);
        body.push_str(&format!(
            "IF TG_OP = 'INSERT' OR NEW.{k} IS DISTINCT FROM OLD.{k} OR NEW.{kn} IS NULL THEN NEW.{kn} := (SELECT m.new FROM {map} m WHERE m.old = NEW.{k}::text); IF NEW.{kn} IS NULL AND NEW.{k} IS NOT NULL AND (TG_OP = 'INSERT' OR NEW.{k} IS DISTINCT FROM OLD.{k}) THEN NEW.{kn} := {v7}; END IF; END IF; "
        ));
    }
    for r in columns {
        let (c, cn) = (q(&r.column.name), q(&new_column(&r.column.name)));
        let changed: String = r
            .pairs(&m.key)
            .iter()
            .map(|(o, _)| format!(" OR NEW.{o} IS DISTINCT FROM OLD.{o}", o = q(o)))
            .collect();
        let value = match m.becomes(r) {
            Becomes::Uuid => {
                let own = if table.oid == m.key.table.oid {
                    format!("WHEN NEW.{c} = NEW.{k} THEN NEW.{kn} ")
                } else {
                    String::new()
                };
                format!(
                    "CASE WHEN NEW.{c} IS NULL THEN NULL {own}ELSE (SELECT p.{kn} FROM {t} p WHERE {}{}) END",
                    equal(m.snapshot, &m.key, r.column, "p", "NEW"),
                    r.other_join(&m.key, "NEW", "p")
                )
            }
            Becomes::Text => format!(
                "CASE WHEN NEW.{c} IS NULL THEN NULL ELSE coalesce((SELECT p.{kn}::text FROM {t} p WHERE p.{k} = {}), NEW.{c}) END",
                m.key_of_text(&format!("NEW.{c}"))
            ),
        };
        body.push_str(&format!(
            "IF TG_OP = 'INSERT' OR NEW.{c} IS DISTINCT FROM OLD.{c}{changed} OR NEW.{cn} IS NULL THEN NEW.{cn} := {value}; END IF; "
        ));
    }
    body
}

/// The pages of a range a backfill transaction fills (`$1` its first
/// block, `$2` the block after its last).
const RANGE: &str =
    "x.ctid >= ('(' || $1::int8 || ',0)')::tid AND x.ctid < ('(' || $2::int8 || ',0)')::tid";

/// One backfill step of `piece` (a table or partition of `table`): set
/// `set` where `cond`, joined with `from` (or nothing).
fn backfill(
    ctx: &Ctx,
    (piece, shown): (&str, &str),
    column: &str,
    table: &Relation,
    (set, from, cond): (String, Option<String>, String),
    pass: Pass,
) -> BatchStep {
    let m = ctx.m;
    let hash = checks::row_hash(table, &changed_columns(m, table));
    let triggers: Vec<_> = m
        .triggers
        .iter()
        .filter(|t| uuidforge_ident::qualified(&t.schema, &t.table_name) == piece)
        .cloned()
        .collect();
    let (quiet, restore) = quiet_triggers(&triggers);
    let (from_locked, from_update) = match &from {
        Some(f) => (format!(", {f}"), format!(" FROM {f}, locked l")),
        None => (String::new(), " FROM locked l".to_string()),
    };
    // One statement: the rows locked with their hashes, filled, and
    // compared (the update's range lets it scan only those pages).
    BatchStep::Backfill(Backfill {
        what: match pass {
            Pass::First => format!("fill {shown}.{}", new_column(column)),
            Pass::Again => format!(
                "fill {shown}.{} again where a writer raced the first pass",
                new_column(column)
            ),
        },
        table: piece.to_string(),
        update_sql: format!(
            "WITH locked AS (SELECT x.ctid AS row_id, {hash} AS before FROM {piece} AS x{from_locked} WHERE {RANGE} AND {cond} FOR UPDATE OF x), \
             filled AS (UPDATE {piece} AS x SET {set}{from_update} WHERE x.ctid = l.row_id AND {RANGE} AND {cond} RETURNING l.before, {hash} AS after) \
             SELECT count(*)::int8, (count(*) FILTER (WHERE before IS DISTINCT FROM after))::int8 FROM filled"
        ),
        quiet,
        restore,
    })
}

/// Which pass of the backfill a step is.
#[derive(Clone, Copy)]
pub(super) enum Pass {
    /// The first, while writers may still be in the middle of a statement
    /// begun before the map was there.
    First,
    /// The second, after the NOT NULL checks' exclusive step: a writer
    /// whose trigger looked the map up before the key step committed could
    /// put a row with nothing in the new column on a page the first pass
    /// had done (it happened under pgbench); that step waited for every
    /// such writer, and from then on the triggers and checks keep every new
    /// row filled, so this pass leaves none behind.
    Again,
}

/// The keys, then the new columns filled in batches of pages.
pub(super) fn keys_and_backfills(ctx: &Ctx) -> Vec<BatchStep> {
    let Ctx { m, kn, map, .. } = ctx;
    let mut steps = vec![BatchStep::Keys(NewKeys {
        read: checks::read_keys_sql(m, &format!(" WHERE x.{kn} IS NULL")),
        map: map.clone(),
        ordered: m.order_column.is_some(),
    })];
    steps.extend(backfills(ctx, Pass::First));
    steps
}

/// The new columns filled in batches of pages: the key's from the map,
/// each reference's from its parent row.
pub(super) fn backfills(ctx: &Ctx, pass: Pass) -> Vec<BatchStep> {
    let Ctx {
        m, t, k, kn, map, ..
    } = ctx;
    let mut steps = Vec::new();
    for (piece, shown) in ctx.pieces(m.key.table) {
        steps.push(backfill(
            ctx,
            (&piece, &shown),
            &m.key.column.name,
            m.key.table,
            (
                format!("{kn} = m.new"),
                Some(format!("{map} m")),
                format!("x.{kn} IS NULL AND m.old = x.{k}::text"),
            ),
            pass,
        ));
    }
    for (table, columns) in &ctx.tables {
        for r in columns {
            let (c, cn) = (
                quote_ident(&r.column.name),
                quote_ident(&new_column(&r.column.name)),
            );
            let how = match m.becomes(r) {
                Becomes::Uuid => (
                    format!("{cn} = p.{kn}"),
                    Some(format!("{t} p")),
                    format!(
                        "{}{} AND x.{cn} IS DISTINCT FROM p.{kn}",
                        equal(m.snapshot, &m.key, r.column, "p", "x"),
                        r.other_join(&m.key, "x", "p")
                    ),
                ),
                Becomes::Text => (
                    format!(
                        "{cn} = coalesce((SELECT p.{kn}::text FROM {t} p WHERE p.{k} = {}), x.{c})",
                        m.key_of_text(&format!("x.{c}"))
                    ),
                    None,
                    format!("x.{cn} IS NULL AND x.{c} IS NOT NULL"),
                ),
            };
            for (piece, shown) in ctx.pieces(table) {
                steps.push(backfill(
                    ctx,
                    (&piece, &shown),
                    &r.column.name,
                    table,
                    how.clone(),
                    pass,
                ));
            }
        }
    }
    steps
}

/// An index built `CONCURRENTLY` by `statement`, after dropping what a
/// killed earlier try left of it (`schema`.`name`).
fn concurrently(what: &str, schema: &str, name: &str, statement: String) -> BatchStep {
    BatchStep::Concurrently {
        what: what.to_string(),
        cleanup: format!(
            "DROP INDEX CONCURRENTLY IF EXISTS {}",
            uuidforge_ident::qualified(schema, name)
        ),
        statement,
    }
}

/// A unique index over the column list `columns` of `table`, built
/// concurrently: on each partition of a partitioned table.
fn build_unique_on_columns(
    ctx: &Ctx,
    what: &str,
    table: &Relation,
    name: &str,
    columns: &str,
) -> Vec<BatchStep> {
    let leaves = ctx.leaves_of(table);
    let on: Vec<(String, String, String)> = if leaves.is_empty() {
        vec![(table.sql_name(), table.schema.clone(), name.to_string())]
    } else {
        leaves
            .iter()
            .map(|p| (p.sql_name(), p.schema.clone(), piece(name, p.oid)))
            .collect()
    };
    on.into_iter()
        .map(|(target, schema, index)| {
            concurrently(
                what,
                &schema,
                &index,
                format!(
                    "CREATE UNIQUE INDEX CONCURRENTLY {} ON {target} ({columns})",
                    quote_ident(&index)
                ),
            )
        })
        .collect()
}

/// The index of `definition` on `table` over its new columns, built
/// concurrently as `name`: on each partition of a partitioned table.
fn build_from_definition(
    ctx: &Ctx,
    what: &str,
    table: &Relation,
    definition: &str,
    name: &str,
) -> Result<Vec<BatchStep>, DbError> {
    let leaves = ctx.leaves_of(table);
    if leaves.is_empty() {
        let statement = over_new_columns(
            ctx,
            definition,
            table.oid,
            Remake {
                name,
                concurrently: true,
                on: None,
            },
        )?;
        return Ok(vec![concurrently(what, &table.schema, name, statement)]);
    }
    let mut steps = Vec::new();
    for p in leaves {
        let piece_name = piece(name, p.oid);
        let on = p.sql_name();
        let statement = over_new_columns(
            ctx,
            definition,
            table.oid,
            Remake {
                name: &piece_name,
                concurrently: true,
                on: Some(&on),
            },
        )?;
        steps.push(concurrently(what, &p.schema, &piece_name, statement));
    }
    Ok(steps)
}

/// The indexes the swap adopts, built without blocking writes: the new
/// key's, the old key's (kept unique), and one per index, key or unique
/// constraint over a changed column, from its definition.
pub(super) fn index_steps(ctx: &Ctx) -> Result<Vec<BatchStep>, DbError> {
    let m = ctx.m;
    let mut steps = build_unique_on_columns(
        ctx,
        "index the new key",
        m.key.table,
        &ctx.new_key_index(),
        &names(&m.key.pk_with(&new_column(&m.key.column.name))),
    );
    steps.extend(build_unique_on_columns(
        ctx,
        "index the old key (kept unique)",
        m.key.table,
        &super::super::one_transaction::old_index_name(m),
        &names(&m.key.pk_columns()),
    ));
    for i in &m.dependents.indexes {
        let table = m
            .snapshot
            .relation(i.table)
            .ok_or_else(|| DbError::unreadable("index", "table not found"))?;
        steps.extend(build_from_definition(
            ctx,
            &format!("index {} again over the new columns", i.name),
            table,
            &i.definition,
            &temporary(&i.name),
        )?);
    }
    for c in m
        .dependents
        .constraints
        .iter()
        .filter(|c| c.kind == "p" || c.kind == "u")
    {
        let table = m
            .snapshot
            .relation(c.table)
            .ok_or_else(|| DbError::unreadable("constraint", "table not found"))?;
        let definition = c
            .index_definition
            .as_deref()
            .ok_or_else(|| DbError::unreadable("constraint", format!("{} has no index", c.name)))?;
        steps.extend(build_from_definition(
            ctx,
            &format!("index {} for {}", table.display_name(), c.name),
            table,
            definition,
            &temporary(&c.name),
        )?);
    }
    Ok(steps)
}

/// NOT NULL proved without a scan under the swap's locks (a validated
/// CHECK lets SET NOT NULL skip it), with the backfill's second pass
/// between adding and validating the checks ([`Pass::Again`]), then every
/// count checked.
pub(super) fn check_steps(ctx: &Ctx) -> Vec<BatchStep> {
    let mut add_checks = Vec::new();
    let mut validate_checks = Vec::new();
    for (table, column) in &ctx.not_null() {
        let check = ctx.not_null_check(table.oid, column);
        add_checks.push(format!(
            "ALTER TABLE {} DROP CONSTRAINT IF EXISTS {check}, ADD CONSTRAINT {check} CHECK ({} IS NOT NULL) NOT VALID",
            table.sql_name(),
            quote_ident(&new_column(column))
        ));
        validate_checks.push(format!(
            "ALTER TABLE {} VALIDATE CONSTRAINT {check}",
            table.sql_name()
        ));
    }
    let mut steps = vec![BatchStep::exclusive(
        "add NOT NULL checks (not valid yet)",
        Some(ctx.lock_all.clone()),
        add_checks,
    )];
    steps.extend(backfills(ctx, Pass::Again));
    steps.extend([
        BatchStep::transaction(
            "validate the NOT NULL checks (writers go on)",
            validate_checks,
        ),
        BatchStep::Check {
            what: "check the new columns before the swap".into(),
            sql: checks::verify_sql(ctx.m, Phase::BeforeSwap, &ctx.map),
            binds: Vec::new(),
        },
    ]);
    steps
}
