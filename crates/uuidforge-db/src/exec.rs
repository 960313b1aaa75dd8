//! The features run end to end over tokio-postgres: plan from the
//! snapshot, run, read the rows back with the same pure functions the
//! extension uses.

use crate::client::{DbError, ReadOnly};
use crate::columns::{self, Sampled, UuidColumn};
use crate::find::{self, FindOptions, Hit, Needles, Skipped, Step};
use crate::plan::{Param, Query};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use tokio_postgres::Config;

/// Sampling statements sent together (pipelined) in one savepoint.
const SAMPLE_BATCH: usize = 100;

fn sample_context(snapshot: &crate::catalog::Snapshot, relation: u32) -> String {
    let name = snapshot
        .relation(relation)
        .map(|r| r.display_name())
        .unwrap_or_default();
    format!("sample {name}")
}

/// D2: the UUID columns of the database (of `schemas`, all when empty).
pub async fn uuid_columns(
    session: &ReadOnly,
    schemas: &[String],
    min_share: f64,
) -> Result<Vec<UuidColumn>, DbError> {
    let snapshot = session.snapshot().await?.only_schemas(schemas);
    let mut samples: HashMap<(u32, i16), Sampled> = HashMap::new();
    let plans = columns::sample_plans(&snapshot);
    for batch in plans.chunks(SAMPLE_BATCH) {
        let queries: Vec<Query> = batch.iter().map(|p| p.query.clone()).collect();
        let results = match session.rows_pipelined(&queries, "sample columns").await {
            Ok(all) => all.into_iter().map(Ok).collect(),
            // One statement failed (a view over a table the role may not
            // read, say): each runs alone, to keep the others.
            Err(_) => {
                let mut one_by_one = Vec::with_capacity(batch.len());
                for plan in batch {
                    let context = sample_context(&snapshot, plan.relation);
                    one_by_one.push(session.rows(&plan.query, &context).await);
                }
                one_by_one
            }
        };
        for (plan, result) in batch.iter().zip(results) {
            let context = sample_context(&snapshot, plan.relation);
            match result {
                Ok(rows) => {
                    let json = rows.into_iter().next().unwrap_or_default();
                    for (column, sampled) in
                        columns::read_sample(plan, &json).map_err(|message| DbError {
                            context: context.clone(),
                            message,
                            code: None,
                        })?
                    {
                        samples.insert((plan.relation, column), sampled);
                    }
                }
                // A view over a table the role may not read: its columns
                // are listed only when their type says UUID.
                Err(e) if e.is_permission_denied() => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(columns::uuid_columns(&snapshot, &samples, min_share))
}

/// What a search did besides its hits.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct FindSummary {
    /// Hits reported.
    pub hits: u64,
    /// Index probes run.
    pub probes: usize,
    /// Tables scanned.
    pub scans: usize,
    /// Tables not searched, and why.
    pub skipped: Vec<Skipped>,
}

/// Progress of a search, for a progress bar.
#[derive(Debug, Clone, Copy)]
pub enum Progress {
    /// The plan is ready: this many probes and scans, this many bytes to scan.
    Planned {
        /// Steps in all.
        steps: usize,
        /// Bytes the scans read.
        bytes: i64,
    },
    /// One step finished; it read about this many bytes.
    Done {
        /// Its bytes.
        bytes: i64,
    },
}

/// D5: finds `needles`, probes first then scans with `jobs` sessions in
/// parallel that share one snapshot; hits are handed to `on_hit` as they
/// come (in no particular order across tables).
pub async fn find(
    session: &ReadOnly,
    config: &Config,
    needles: &Needles,
    options: &FindOptions,
    jobs: usize,
    mut on_hit: impl FnMut(Hit),
    mut on_progress: impl FnMut(Progress),
) -> Result<FindSummary, DbError> {
    let snapshot = session.snapshot().await?;
    if let Some((option, name)) = options.unknown_name(&snapshot) {
        let expected = if option == "table" {
            "TABLE or SCHEMA.TABLE"
        } else {
            "COLUMN, TABLE.COLUMN or SCHEMA.TABLE.COLUMN"
        };
        return Err(DbError::invalid(
            option,
            format!("no {option} named '{name}' in this database (expected {expected} of a table the role can see)"),
        ));
    }
    let plan = find::plan(&snapshot, needles, options);
    let mut summary = FindSummary {
        probes: plan.probes.len(),
        scans: plan.scans.len(),
        skipped: plan.skipped.clone(),
        ..FindSummary::default()
    };
    on_progress(Progress::Planned {
        steps: plan.probes.len() + plan.scans.len(),
        bytes: plan.scans.iter().map(|s| s.bytes).sum(),
    });
    for step in &plan.probes {
        match run_step(session, step, needles, &mut |h| {
            summary.hits += 1;
            on_hit(h)
        })
        .await
        {
            Err(e) if e.is_permission_denied() => summary.skipped.push(skipped(step, &e)),
            other => other?,
        }
        on_progress(Progress::Done { bytes: 0 });
    }
    if plan.scans.is_empty() {
        return Ok(summary);
    }
    let queue = Arc::new(Mutex::new(plan.scans.into_iter().collect::<VecDeque<_>>()));
    let needles = Arc::new(needles.clone());
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Message>();
    let mut workers = Vec::new();
    for _ in 0..jobs.max(1) {
        let worker_session = session.open_sibling(config).await?;
        let queue = queue.clone();
        let needles = needles.clone();
        let tx = tx.clone();
        workers.push(tokio::spawn(async move {
            loop {
                let Some(step) = queue.lock().expect("queue").pop_front() else {
                    break;
                };
                let result = run_step(&worker_session, &step, &needles, &mut |h| {
                    let _ = tx.send(Message::Hit(h));
                })
                .await;
                let message = match result {
                    Ok(()) => Message::Done(step.bytes),
                    Err(e) if e.is_permission_denied() => {
                        Message::Skipped(skipped(&step, &e), step.bytes)
                    }
                    Err(e) => Message::Failed(e),
                };
                if tx.send(message).is_err() {
                    break;
                }
            }
        }));
    }
    drop(tx);
    let mut failure = None;
    while let Some(message) = rx.recv().await {
        match message {
            Message::Hit(h) => {
                summary.hits += 1;
                on_hit(h);
            }
            Message::Done(bytes) => on_progress(Progress::Done { bytes }),
            Message::Skipped(s, bytes) => {
                summary.skipped.push(s);
                on_progress(Progress::Done { bytes });
            }
            Message::Failed(e) => {
                queue.lock().expect("queue").clear();
                failure.get_or_insert(e);
            }
        }
    }
    for w in workers {
        let _ = w.await;
    }
    match failure {
        Some(e) => Err(e),
        None => Ok(summary),
    }
}

enum Message {
    Hit(Hit),
    Done(i64),
    Skipped(Skipped, i64),
    Failed(DbError),
}

fn skipped(step: &Step, e: &DbError) -> Skipped {
    Skipped {
        schema: step.schema.clone(),
        table: step.table.clone(),
        reason: e.message.clone(),
    }
}

async fn run_step<F: FnMut(Hit)>(
    session: &ReadOnly,
    step: &Step,
    needles: &Needles,
    on_hit: &mut F,
) -> Result<(), DbError> {
    let context = format!(
        "{} {}.{}",
        if step.probe { "probe" } else { "scan" },
        step.schema,
        step.table
    );
    session
        .each_row(&step.query, &context, |row| {
            for hit in find::hits_in_row(step, &row, needles)? {
                on_hit(hit);
            }
            Ok(())
        })
        .await
}

/// D13: keys discovered from the data of `schemas` (all when empty).
pub async fn discover(
    session: &ReadOnly,
    schemas: &[String],
) -> Result<crate::discover::Report, DbError> {
    use crate::discover;
    let snapshot = session.snapshot().await?;
    let mut candidates = discover::candidates(&snapshot, schemas);
    let failed = |context: &str, message: String| DbError {
        context: context.to_string(),
        message,
        code: None,
    };
    for (relation, query) in discover::stats_plans(&candidates, &snapshot) {
        let context = format!(
            "statistics of {}",
            snapshot
                .relation(relation)
                .map(|r| r.display_name())
                .unwrap_or_default()
        );
        let json = session
            .rows(&query, &context)
            .await?
            .into_iter()
            .next()
            .unwrap_or_default();
        discover::read_stats(&mut candidates, relation, &json).map_err(|m| failed(&context, m))?;
    }
    let keys = discover::choose_primary_keys(&snapshot, &candidates);
    let inclusion = match discover::inclusion_plan(&snapshot, &candidates, &keys) {
        Some(query) => {
            // The join of every sample with every key fits in memory with
            // more than the default 4 MB (this transaction only).
            let work_mem = Query {
                sql: "SELECT set_config('work_mem', $1, true)".into(),
                params: vec![Param::Text(discover::INCLUSION_WORK_MEM.into())],
            };
            session.rows(&work_mem, "set work_mem").await?;
            session
                .rows(&query, "inclusion dependencies")
                .await?
                .into_iter()
                .next()
                .unwrap_or_default()
        }
        None => String::new(),
    };
    let mut report = discover::score(&snapshot, &candidates, &keys, &inclusion)
        .map_err(|m| failed("inclusion dependencies", m))?;
    if !schemas.is_empty() {
        report
            .foreign_keys
            .retain(|fk| schemas.contains(&fk.from.schema) || schemas.contains(&fk.to.schema));
    }
    Ok(report)
}

/// D6: the columns related to `target` (see [`crate::related`]).
pub async fn related(
    session: &ReadOnly,
    target: &str,
    by_name: bool,
) -> Result<Vec<crate::related::RelatedColumn>, DbError> {
    use crate::related::{self, Target};
    let snapshot = session.snapshot().await?;
    let failed = |message: String| DbError {
        context: "related".into(),
        message,
        code: None,
    };
    let target = if by_name {
        Target::Name(target.to_string())
    } else {
        Target::parse_column(&snapshot, target).map_err(|m| {
            let m = m.strip_prefix("column: ").unwrap_or(&m).to_string();
            DbError::invalid("column", m)
        })?
    };
    let plan = related::plan(&snapshot, target);
    let values = match &plan.values_query {
        Some(query) => session
            .rows(query, "shared values")
            .await?
            .into_iter()
            .next(),
        None => None,
    };
    related::report(&snapshot, &plan, values.as_deref()).map_err(failed)
}

/// D6 (renaming): the plan, and what mentions an old name (read-only).
pub async fn rename_plan(
    session: &ReadOnly,
    column: &str,
    new_name: &str,
    options: &crate::rename::RenameOptions,
) -> Result<(crate::rename::RenamePlan, Vec<crate::rename::Mention>), DbError> {
    let snapshot = session.snapshot().await?;
    let plan = crate::rename::plan(&snapshot, column, new_name, options)
        .map_err(|message| DbError::invalid("rename", message))?;
    let json = session
        .rows(&plan.mentions_query, "list what mentions the old names")
        .await?
        .into_iter()
        .next()
        .unwrap_or_else(|| "[]".into());
    let mentions = crate::rename::mentions(&json).map_err(|message| DbError {
        context: "list what mentions the old names".into(),
        message,
        code: None,
    })?;
    Ok((plan, mentions))
}

/// D6 (renaming): applies `expected` in one transaction — planned again
/// inside it, so that a database changed since the plan was printed is
/// refused rather than changed otherwise — verifies every renamed object
/// under its new name before committing, and returns the checks made.
pub async fn rename_apply(
    config: &Config,
    column: &str,
    new_name: &str,
    options: &crate::rename::RenameOptions,
    expected: &crate::rename::RenamePlan,
) -> Result<Vec<String>, DbError> {
    let change = crate::client::Change::begin(config).await?;
    let snapshot = change.snapshot().await?;
    let plan = crate::rename::plan(&snapshot, column, new_name, options)
        .map_err(|message| DbError::invalid("rename", message))?;
    if plan.statements != expected.statements {
        return Err(DbError::invalid(
            "rename",
            "the database changed since the plan was printed (nothing was changed: plan again)",
        ));
    }
    for statement in &plan.statements {
        change.execute(statement).await?;
    }
    let after = change.snapshot().await?;
    let checks = crate::rename::verify(&after, &plan).map_err(|message| DbError {
        context: "verify the rename (nothing was changed)".into(),
        message,
        code: None,
    })?;
    change.commit().await?;
    Ok(checks)
}

/// What a migration plan reads beside the catalog snapshot: the views
/// over the columns it changes and the partitions of its partitioned
/// tables.
pub async fn migrate_inputs(
    reader: &impl crate::client::OneText,
    snapshot: &crate::catalog::Snapshot,
    table: &str,
    options: &crate::migrate::MigrateOptions,
) -> Result<crate::migrate::PlanInputs, DbError> {
    let invalid = |m: String| DbError::invalid("migrate-key", m);
    let watched = crate::migrate::watched_columns(snapshot, table, options).map_err(invalid)?;
    let views = reader
        .one_text_of(
            &crate::migrate::dependent_views_query(&watched),
            "read the dependent views",
        )
        .await?;
    let indexes = reader
        .one_text_of(
            &crate::migrate::reference_indexes_query(watched.get(1..).unwrap_or_default()),
            "read the indexes over the references",
        )
        .await?;
    let parted = crate::migrate::partitioned_tables(snapshot, table, options).map_err(invalid)?;
    let partitions = reader
        .one_text_of(
            &crate::migrate::partitions_query(&parted),
            "read the partitions",
        )
        .await?;
    Ok(crate::migrate::PlanInputs {
        views: crate::migrate::parse_views(&views).map_err(invalid)?,
        partitions: crate::migrate::parse_partitions(&partitions).map_err(invalid)?,
        indexes: crate::migrate::parse_indexes(&indexes).map_err(invalid)?,
    })
}

/// D1: the migration plan (read-only).
pub async fn migrate_key_plan(
    session: &ReadOnly,
    table: &str,
    options: &crate::migrate::MigrateOptions,
) -> Result<crate::migrate::MigratePlan, DbError> {
    let snapshot = session.snapshot().await?;
    let inputs = migrate_inputs(session, &snapshot, table, options).await?;
    crate::migrate::plan(&snapshot, table, options, &inputs)
        .map_err(|m| DbError::invalid("migrate-key", m))
}

/// D1: runs `expected` in one transaction — planned again inside it (a
/// database changed since the plan was printed is refused, unchanged) —
/// with new keys from `secret`, and commits only when every check holds.
/// Returns the checks and the number of rows given a new key.
pub async fn migrate_key_apply(
    config: &Config,
    table: &str,
    options: &crate::migrate::MigrateOptions,
    expected: &crate::migrate::MigratePlan,
    secret: &[u8],
) -> Result<MigrateOutcome, DbError> {
    let started = std::time::Instant::now();
    let change = crate::client::Change::begin(config).await?;
    let snapshot = change.snapshot().await?;
    let inputs = migrate_inputs(&change, &snapshot, table, options).await?;
    let plan = crate::migrate::plan(&snapshot, table, options, &inputs)
        .map_err(|m| DbError::invalid("migrate-key", m))?;
    if plan.statements != expected.statements {
        return Err(DbError::invalid(
            "migrate-key",
            "the database changed since the plan was printed (nothing was changed: plan again)",
        ));
    }
    let counts_before = change.one_text(&plan.counts_sql, "count the rows").await?;
    let rows = change.text_and_times(&plan.read_keys_sql).await?;
    let keys = crate::migrate::new_keys(&rows, options.order_by.is_some(), secret)
        .map_err(|m| DbError::invalid("migrate-key", m))?;
    change.execute(&plan.map_sql).await?;
    change
        .copy_key_map("uuidforge_keymap", &rows, &keys)
        .await?;
    let keys_seconds = started.elapsed().as_secs_f64();
    for statement in &plan.statements {
        change.execute(statement).await?;
    }
    let statements_seconds = started.elapsed().as_secs_f64() - keys_seconds;
    let json = change
        .one_text(&plan.verify_sql, "verify the migration")
        .await?;
    let (mut failed, mut checks) =
        crate::migrate::verification(&json).map_err(|message| DbError {
            context: "verify the migration".into(),
            message,
            code: None,
        })?;
    let counts_after = change.one_text(&plan.counts_sql, "count the rows").await?;
    let counts = crate::migrate::count_changes(&counts_before, &counts_after);
    checks.push(format!("row counts changed: {}", counts.len()));
    failed.extend(counts);
    if !failed.is_empty() {
        return Err(DbError {
            context: "verify the migration (nothing was changed)".into(),
            message: failed.join("; "),
            code: None,
        });
    }
    let verify_seconds = started.elapsed().as_secs_f64() - keys_seconds - statements_seconds;
    change.commit().await?;
    Ok(MigrateOutcome {
        checks,
        rows: rows.len(),
        keys_seconds,
        statements_seconds,
        verify_seconds,
        transaction_seconds: started.elapsed().as_secs_f64(),
    })
}

/// What a migration did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct MigrateOutcome {
    /// The checks made before commit, each `name: 0`.
    pub checks: Vec<String>,
    /// Rows given a new key.
    pub rows: usize,
    /// Reading the old keys, computing and copying the new ones.
    pub keys_seconds: f64,
    /// Running the statements.
    pub statements_seconds: f64,
    /// Running the checks.
    pub verify_seconds: f64,
    /// The whole transaction, commit included.
    pub transaction_seconds: f64,
}
