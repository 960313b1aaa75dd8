//! A key migration in batches (`--batch-size`), for tables too large to
//! lock for one transaction: the schedule that places the same list of
//! actions (`ops::key::KeyActions`) in steps that each commit on
//! their own, recorded by the runner, so that after a kill -9 or a lost
//! connection the old schema still works and `--resume` goes on from the
//! last committed step. Writers keep working throughout:
//!
//! 1. *prepare* (short, writers wait): the key map, the new columns and
//!    triggers that keep them right for rows others write from now on;
//!    each written table a `FOR TABLE` publication names without a column
//!    list published with its own columns only, so the new ones never
//!    reach a subscriber;
//! 2. *keys*: the new keys computed by the library and copied into the map;
//! 3. *backfill*: the new columns filled in batches of pages, one
//!    transaction each;
//! 4. *build*: every index a move adopts built `CONCURRENTLY`; NOT NULL
//!    proved by `CHECK` constraints added `NOT VALID` (short), the
//!    backfill's second pass, the checks validated without blocking
//!    writes; every count checked;
//! 5. *swap* (short, writers wait): the writers' triggers dropped, what
//!    the swap needs out of the way released, each move's swap (keys on
//!    their prebuilt indexes, columns exchanged, foreign keys and CHECK
//!    constraints `NOT VALID`), those tables published without a list
//!    again, the publications publishing nothing of the swap itself; its
//!    transaction id recorded (`swap`): rows written after it are the
//!    application's;
//! 6. *validate* (writers go on), the partitions' foreign keys attached,
//!    *check* again (the application's rows since the swap left out),
//!    *finish* (the map dropped).

use super::{backup, lock_all, summary, touches};
use crate::action::{statements, Action, Data};
use crate::ops::key::checks::{self, Phase};
use crate::ops::key::publications::{self, Publication};
use crate::ops::key::{Fill, KeyActions, KeyMap, Migration, Move};
use crate::ops::{Backfill, BatchStep, ChangePlan, Run};
use uuidforge_db::error::DbError;

/// The pages of a range a backfill transaction fills (`$1` its first
/// block, `$2` the block after its last).
const RANGE: &str =
    "x.ctid >= ('(' || $1::int8 || ',0)')::tid AND x.ctid < ('(' || $2::int8 || ',0)')::tid";

/// Which pass of the backfill a step is.
#[derive(Clone, Copy)]
enum Pass {
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

/// Refuses what batches do not handle: partitions that are not plain
/// tables, exclusion constraints over a changed column (their index cannot
/// be built before the swap).
fn refuse_unsupported(m: &Migration) -> Result<(), DbError> {
    for r in m.written() {
        if let Some(p) = m.leaves(r.oid).iter().find(|p| p.kind != "r") {
            return Err(DbError::refused("batch-size", format!("partition {}.{} of {} is {} (expected plain tables: migrate it without --batch-size, in one transaction)",
                p.schema,
                p.name,
                r.display_name(),
                if p.kind == "p" { "partitioned itself" } else { "a foreign table" }
            )));
        }
    }
    if let Some(x) = m.dependents.constraints.iter().find(|c| c.kind == "x") {
        return Err(DbError::refused("batch-size", format!("exclusion constraint {} ({}) is over a changed column: its index cannot be built before the swap without locking writers out; migrate without --batch-size, in one transaction", x.name, x.definition)));
    }
    Ok(())
}

/// One backfill step of `piece` of `fill`'s table: the rows of a range of
/// pages locked with a hash of their other columns, filled, and compared,
/// in one statement (the update's range lets it scan only those pages).
fn backfill(
    a: &KeyActions,
    fill: &Fill,
    (piece, shown): &(String, String),
    pass: Pass,
) -> BatchStep {
    let triggers: Vec<_> = a
        .triggers
        .iter()
        .filter(|t| uuidforge_ident::qualified(&t.schema, &t.table_name) == *piece)
        .cloned()
        .collect();
    let (quiet, restore) = Action::quiet_triggers(&triggers);
    let (from_locked, from_update) = match &fill.from {
        Some(f) => (format!(", {f}"), format!(" FROM {f}, locked l")),
        None => (String::new(), " FROM locked l".to_string()),
    };
    let (hash, set, cond) = (&fill.row_hash, &fill.set, &fill.condition);
    BatchStep::Backfill(Backfill {
        what: match pass {
            Pass::First => format!("fill {shown}.{}", fill.column),
            Pass::Again => format!(
                "fill {shown}.{} again where a writer raced the first pass",
                fill.column
            ),
        },
        table: piece.clone(),
        update_sql: format!(
            "WITH locked AS (SELECT x.ctid AS row_id, {hash} AS before FROM {piece} AS x{from_locked} WHERE {RANGE} AND {cond} FOR UPDATE OF x), \
             filled AS (UPDATE {piece} AS x SET {set}{from_update} WHERE x.ctid = l.row_id AND {RANGE} AND {cond} RETURNING l.before, {hash} AS after) \
             SELECT count(*)::int8, (count(*) FILTER (WHERE before IS DISTINCT FROM after))::int8 FROM filled"
        ),
        quiet: statements(&quiet),
        restore: statements(&restore),
    })
}

/// Every fill of `a` as backfill steps, piece by piece.
fn backfills(a: &KeyActions, pass: Pass) -> Vec<BatchStep> {
    a.fills
        .iter()
        .flat_map(|f| f.pieces.iter().map(move |p| backfill(a, f, p, pass)))
        .collect()
}

/// A step of `actions` gathered from every move by `field`, when there is
/// one.
fn gathered(what: &str, moves: &[Move], field: fn(&Move) -> &[Action]) -> Option<BatchStep> {
    let actions: Vec<Action> = moves
        .iter()
        .flat_map(|m| field(m).iter().cloned())
        .collect();
    (!actions.is_empty()).then(|| BatchStep::transaction(what, None, &actions))
}

/// The change in batches.
pub fn change(m: &Migration, batch_size: i64) -> Result<ChangePlan, DbError> {
    refuse_unsupported(m)?;
    if let Some(c) = m.copies.found.iter().find(|c| c.rewritten) {
        return Err(DbError::refused(
            "also",
            format!(
                "{} holds copies of the keys, rewritten in place in one transaction only (writers would keep writing old keys meanwhile): migrate without --batch-size, or --leave it",
                c.described()
            ),
        ));
    }
    if let Some(r) = m
        .dependents
        .others
        .iter()
        .find(|o| o.kind == "rule" && o.carried)
    {
        return Err(DbError::refused(
            "table",
            format!(
                "{} rewrites the updates that fill rows in batches (it stays until the swap): migrate in one transaction (without --batch-size), which makes it again after",
                r.description
            ),
        ));
    }
    if let Some(g) = m
        .dependents
        .others
        .iter()
        .find(|o| o.kind == "generated column" && o.carried)
    {
        return Err(DbError::refused(
            "regenerate",
            format!(
                "{} is computed again by rewriting its table, which batches cannot do without locking writers out: migrate in one transaction (without --batch-size)",
                g.description
            ),
        ));
    }
    if m.given_keys.is_some() {
        return Err(DbError::invalid(
            "keys-from",
            "in batches (expected one transaction: a subscriber's tables are written by its replication alone)",
        ));
    }
    if let Some(i) = m
        .dependents
        .indexes
        .iter()
        .find(|i| crate::ops::key::literals::has_old_keys(&i.definition))
    {
        return Err(DbError::refused(
            "batch-size",
            format!(
                "index {}.{} compares a changed column with an old key in its WHERE: in batches it is built concurrently before the swap, which cannot read the new key from the key map; migrate in one transaction (without --batch-size), which makes it again with the new key",
                i.schema, i.name
            ),
        ));
    }
    let a = m.actions(KeyMap::Kept)?;
    let lock = lock_all(m);
    // Subscribers are to get neither the new columns while they are
    // filled nor the swap's own writes.
    let (listed, unlisted) = publications::listed_during_batches(&m.publications);
    let (quiet_publishing, publishing_back) = Publication::quieted(&m.publications);
    let mut prepare = listed;
    prepare.push(a.make_map.clone());
    prepare.extend(a.columns.iter().cloned());
    prepare.extend(a.writers.iter().flat_map(|w| w.make.iter().cloned()));
    let mut steps = vec![BatchStep::transaction(
        "prepare: new columns, the key map, triggers for rows written meanwhile",
        Some(&lock),
        &prepare,
    )];
    steps.push(BatchStep::Data(Data::Keys(a.keys.clone())));
    steps.extend(backfills(&a, Pass::First));
    for mv in &a.moves {
        steps.extend(
            mv.build
                .iter()
                .map(|(what, build)| BatchStep::concurrently(what, build)),
        );
    }
    // NOT NULL proved without a scan under the swap's locks (a validated
    // CHECK lets SET NOT NULL skip it), with the backfill's second pass
    // between adding and validating the checks.
    let (add, validate): (Vec<Action>, Vec<Action>) = a
        .moves
        .iter()
        .flat_map(|mv| mv.prove.iter().cloned())
        .unzip();
    steps.push(BatchStep::transaction(
        "add NOT NULL checks (not valid yet)",
        Some(&lock),
        &add,
    ));
    steps.extend(backfills(&a, Pass::Again));
    steps.push(BatchStep::transaction(
        "validate the NOT NULL checks (writers go on)",
        None,
        &validate,
    ));
    steps.push(BatchStep::Check {
        what: "check the new columns before the swap".into(),
        sql: checks::verify_sql(m, Phase::BeforeSwap, &a.map),
        binds: Vec::new(),
    });
    let mut swap = quiet_publishing;
    swap.extend(a.writers.iter().flat_map(|w| w.drop.iter().cloned()));
    swap.extend(a.release.iter().cloned());
    swap.extend(a.moves.iter().flat_map(|mv| mv.swap.iter().cloned()));
    swap.extend(a.extras.iter().cloned());
    swap.extend(a.views.iter().cloned());
    swap.extend(a.identity_back.iter().cloned());
    swap.extend(unlisted);
    swap.extend(publishing_back);
    swap.push(a.guard.clone());
    let mut swap_step = BatchStep::transaction(
        "swap: constraints onto the new columns, names exchanged",
        Some(&lock),
        &swap,
    );
    if let BatchStep::Transaction { mark, .. } = &mut swap_step {
        *mark = Some("swap".into());
    }
    steps.push(swap_step);
    steps.extend(gathered(
        "validate the foreign keys and checks (writers go on)",
        &a.moves,
        |mv| &mv.validate,
    ));
    steps.extend(gathered(
        "attach the partitions' foreign keys to their tables'",
        &a.moves,
        |mv| &mv.attach,
    ));
    steps.extend(gathered(
        "validate the foreign keys declared on partitions (writers go on)",
        &a.moves,
        |mv| &mv.validate_attached,
    ));
    let written: Vec<String> = m.written().iter().map(|r| r.sql_name()).collect();
    steps.push(BatchStep::Check {
        what: "verify the migration".into(),
        sql: checks::with_objects_check(
            &checks::verify_sql(m, Phase::AfterSwap, &a.map),
            &m.objects,
            &written,
            &checks::translated_constraints(m),
        ),
        binds: vec!["swap".into()],
    });
    steps.push(BatchStep::transaction(
        "finish: drop the key map",
        None,
        a.drop_map.as_slice(),
    ));
    let mut lines = summary(m, &format!(", in batches of about {batch_size} rows"));
    lines.push("  progress: kept by the runner (a killed run goes on with --resume)".into());
    Ok(ChangePlan {
        operation: "migrate-key".into(),
        target: m.key.table.typed_name(),
        schema: m.key.table.schema.clone(),
        touches: touches(m),
        summary: lines,
        backup: backup(m),
        run: Run::Batches { batch_size, steps },
        epilogue: Vec::new(),
        resume: Some(format!(
            "uuidforge db migrate-key {} --resume",
            m.key.table.typed_name()
        )),
        measured: super::measured(m),
    })
}
