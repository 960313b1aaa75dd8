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
                        columns::read_sample(plan, &json).map_err(|e| e.within(context.clone()))?
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
    if let Some((option, name, hint)) = options.unknown_name(&snapshot) {
        let expected = if option == "table" {
            "TABLE or SCHEMA.TABLE"
        } else {
            "COLUMN, TABLE.COLUMN or SCHEMA.TABLE.COLUMN"
        };
        return Err(DbError::invalid(
            option,
            format!("no {option} named '{name}' in this database{hint} (expected {expected} of a table the role can see)"),
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
        discover::read_stats(&mut candidates, relation, &json)
            .map_err(|e| e.within(context.clone()))?;
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
        .map_err(|e| e.within("inclusion dependencies"))?;
    let composites = discover::composite_candidates(&snapshot, &report);
    let mut answers = Vec::new();
    for c in &composites {
        answers.push(
            session
                .rows(&c.query, "composite references")
                .await?
                .into_iter()
                .next()
                .unwrap_or_default(),
        );
    }
    discover::with_composites(&mut report, &composites, &answers)?;
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
    let target = if by_name {
        Target::Name(target.to_string())
    } else {
        Target::parse_column(&snapshot, target)?
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
    related::report(&snapshot, &plan, values.as_deref())
}
