//! A key migration in batches, for tables too large to lock for one
//! transaction: the schedule that places the model's work
//! (`ops::key::Migration::placed`) by phase in steps that each commit on
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
use crate::action::{statements, Action, Data, UserTrigger};
use crate::ops::key::checks::{self, When};
use crate::ops::key::kinds::quieted_triggers;
use crate::ops::key::{Fill, Migration, Phase, Placed, Schedule, Work};
use crate::ops::{Backfill, BatchStep, ChangePlan, Line, Run};
use uuidforge_db::error::{DbError, WayOut};

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

/// Where a phase's work goes in batches (the compiler holds this list
/// to the phases).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Slot {
    /// The first step: short, writers wait.
    Prepare,
    /// The new keys, a data step.
    Keys,
    /// Backfills, twice, around the NOT NULL checks.
    Fill,
    /// One step each, outside any transaction.
    Build,
    /// The NOT NULL checks added (short, writers wait).
    Prove,
    /// Those checks validated (writers go on).
    ProveValid,
    /// The swap: short, writers wait.
    Swap,
    /// After the swap, a step each.
    Validate,
    Attach,
    ValidateAttached,
    /// The last step.
    Finish,
    /// Not in batches: refused there by the kind that places it.
    Never,
}

fn slot(phase: Phase) -> Slot {
    use Phase::*;
    match phase {
        PublishOwnColumns | MakeMap | AddColumns | WriterTriggers => Slot::Prepare,
        Keys => Slot::Keys,
        Fill => Slot::Fill,
        Build => Slot::Build,
        ProveNotNull => Slot::Prove,
        ValidateNotNull => Slot::ProveValid,
        QuietPublications | DropWriterTriggers | CheckImmediately | DropViews | DropForeignKeys
        | DropDependents | DropKey | DropObjects | Move | MakeObjects | ColumnExtras
        | MakeViews | IdentityBack | PublishAllColumns | PublishingBack | Guard => Slot::Swap,
        Validate => Slot::Validate,
        Attach => Slot::Attach,
        ValidateAttached => Slot::ValidateAttached,
        DropMap => Slot::Finish,
        IndexMap | MapLookup | Settings | IdentityFull | DropDefaults | QuietTriggers | Rewrite
        | RewriteCopies | RestoreTriggers => Slot::Never,
    }
}

/// The actions of the work placed in `slot`, in order.
fn actions(placed: &[Placed], slot_of: Slot) -> Vec<Action> {
    placed
        .iter()
        .filter(|p| slot(p.phase) == slot_of)
        .filter_map(|p| match &p.work {
            Work::Action(a) => Some(a.clone()),
            _ => None,
        })
        .collect()
}

/// One backfill step of `piece` of `fill`'s table: the rows of a range of
/// pages locked with a hash of their other columns, filled, and compared,
/// in one statement (the update's range lets it scan only those pages).
fn backfill(
    quieted: &[UserTrigger],
    fill: &Fill,
    (piece, shown): &(String, String),
    pass: Pass,
) -> BatchStep {
    let triggers: Vec<_> = quieted
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
        mismatch: None,
    })
}

/// Every fill as backfill steps, piece by piece.
fn backfills(quieted: &[UserTrigger], fills: &[&Fill], pass: Pass) -> Vec<BatchStep> {
    fills
        .iter()
        .flat_map(|f| f.pieces.iter().map(move |p| backfill(quieted, f, p, pass)))
        .collect()
}

/// A step of `actions`, when there are any.
fn gathered(what: &str, actions: Vec<Action>) -> Option<BatchStep> {
    (!actions.is_empty()).then(|| BatchStep::transaction(what, None, &actions))
}

/// The change in batches.
pub fn change(m: &Migration, batch_size: i64) -> Result<ChangePlan, DbError> {
    let schedule = Schedule::Batches(batch_size);
    let map = m.map_name(schedule.map());
    let placed = m.placed(schedule)?;
    if let Some(p) = placed.iter().find(|p| slot(p.phase) == Slot::Never) {
        return Err(DbError::unreadable(
            "plan",
            format!("{:?} work of {} placed in batches", p.phase, p.by),
        ));
    }
    let lock = lock_all(m);
    let quieted = quieted_triggers(m);
    let fills: Vec<&Fill> = placed
        .iter()
        .filter_map(|p| match &p.work {
            Work::Fill(f) => Some(f),
            _ => None,
        })
        .collect();
    let mut steps = vec![BatchStep::transaction(
        "prepare: new columns, the key map, triggers for rows written meanwhile",
        Some(&lock),
        &actions(&placed, Slot::Prepare),
    )];
    steps.extend(placed.iter().filter_map(|p| match &p.work {
        Work::Keys(k) => Some(BatchStep::Data(Data::Keys(k.clone()))),
        _ => None,
    }));
    steps.extend(backfills(&quieted, &fills, Pass::First));
    steps.extend(placed.iter().filter_map(|p| match &p.work {
        Work::Build { what, action } => Some(BatchStep::concurrently(what, action)),
        _ => None,
    }));
    // NOT NULL proved without a scan under the swap's locks (a validated
    // CHECK lets SET NOT NULL skip it), with the backfill's second pass
    // between adding and validating the checks.
    steps.push(BatchStep::transaction(
        "add NOT NULL checks (not valid yet)",
        Some(&lock),
        &actions(&placed, Slot::Prove),
    ));
    steps.extend(backfills(&quieted, &fills, Pass::Again));
    steps.push(BatchStep::transaction(
        "validate the NOT NULL checks (writers go on)",
        None,
        &actions(&placed, Slot::ProveValid),
    ));
    steps.push(BatchStep::Check {
        what: "check the new columns before the swap".into(),
        sql: checks::verify_sql(m, When::BeforeSwap, &map),
        binds: Vec::new(),
    });
    let mut swap_step = BatchStep::transaction(
        "swap: constraints onto the new columns, names exchanged",
        Some(&lock),
        &actions(&placed, Slot::Swap),
    );
    if let BatchStep::Transaction { mark, .. } = &mut swap_step {
        *mark = Some("swap".into());
    }
    steps.push(swap_step);
    steps.extend(gathered(
        "validate the foreign keys and checks (writers go on)",
        actions(&placed, Slot::Validate),
    ));
    steps.extend(gathered(
        "attach the partitions' foreign keys to their tables'",
        actions(&placed, Slot::Attach),
    ));
    steps.extend(gathered(
        "validate the foreign keys declared on partitions (writers go on)",
        actions(&placed, Slot::ValidateAttached),
    ));
    let written: Vec<String> = m.written().iter().map(|r| r.sql_name()).collect();
    steps.push(BatchStep::Check {
        what: "verify the migration".into(),
        sql: checks::with_objects_check(
            &checks::verify_sql(m, When::AfterSwap, &map),
            &m.objects,
            &written,
            &checks::translated_constraints(m),
        ),
        binds: vec!["swap".into()],
    });
    steps.push(BatchStep::transaction(
        "finish: drop the key map",
        None,
        &actions(&placed, Slot::Finish),
    ));
    let mut lines = summary(m, &format!(", in batches of about {batch_size} rows"));
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
            session: crate::ops::key::kinds::transaction::memory(),
            // Its first batch updates the tables in place.
            give_up: None,
        },
        epilogue: Vec::new(),
        // The search's time and the cost, added by the operation.
        measured: Default::default(),
    })
}
