//! `uuidforge grep --db`: database rows. With values and no place
//! restriction the explorer's find does the work (index probes, one scan
//! per table); otherwise one table's rows are read as JSON objects and
//! searched like NDJSON records, so every document restriction applies.

use super::{Args, Run};
use crate::db::{find_hit_text, find_printing};
use crate::UsageError;
use std::collections::BTreeMap;
use std::io::Write;
use std::process::ExitCode;
use uuidforge_db::client::ReadOnly;
use uuidforge_db::find::{FindOptions, Needles};
use uuidforge_grep::jsonpath::JsonPath;
use uuidforge_grep::{Format, Matcher};

/// Runs `grep --db`.
pub fn run(args: &Args, db: String, mut matcher: Matcher) -> Result<ExitCode, UsageError> {
    let config =
        uuidforge_db::client::config(Some(&db)).map_err(|e| UsageError::plain(e.to_string()))?;
    let with_find = matcher.query.values.is_some()
        && matcher.place.json_path.is_none()
        && matcher.place.url.is_none()
        && !args.invert_match;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let session = ReadOnly::open(&config)
            .await
            .map_err(|e| UsageError::plain(e.to_string()))?;
        if with_find {
            return find(args, &session, &config, &matcher).await;
        }
        let Some(table) = &args.table else {
            return Err(UsageError::plain(
                "grep --db: give --table (rows are read as JSON objects) when there are no values, or with --json-path, --url or -v",
            ));
        };
        match (&args.column[..], &matcher.place.json_path) {
            ([], _) => {}
            ([column], None) => matcher.place.json_path = Some(JsonPath::member_and_below(column)),
            ([_], Some(_)) => {
                return Err(UsageError::plain(
                    "grep --db --table: give --column or --json-path ($.column…), not both",
                ))
            }
            _ => {
                return Err(UsageError::plain(
                    "grep --db --table: one --column at most (or --json-path over the row)",
                ))
            }
        }
        rows(args, &session, table, &matcher).await
    })
}

async fn rows(
    args: &Args,
    session: &ReadOnly,
    table: &str,
    matcher: &Matcher,
) -> Result<ExitCode, UsageError> {
    let snapshot = session
        .snapshot()
        .await
        .map_err(|e| UsageError::plain(e.to_string()))?;
    let query = uuidforge_db::find::rows_as_json(&snapshot, table)
        .map_err(|e| UsageError::plain(format!("--table {table}: {e}")))?;
    let name = snapshot
        .find_relation(table)
        .map(|r| r.display_name())
        .unwrap_or_else(|_| table.to_string());
    let mut run = Run::new(args, matcher, false);
    let (mut row_number, mut count) = (0usize, 0usize);
    let mut failure: Option<UsageError> = None;
    session
        .each_row(&query, "read rows", |row| {
            row_number += 1;
            if run.stop || failure.is_some() {
                return Ok(());
            }
            match run.document(&name, Some(Format::Ndjson), row.as_bytes(), row_number) {
                Ok(n) => count += n,
                Err(e) => failure = Some(e),
            }
            Ok(())
        })
        .await
        .map_err(|e| UsageError::plain(e.to_string()))?;
    if let Some(e) = failure {
        return Err(e);
    }
    run.report(&name, count)?;
    run.out.flush()?;
    Ok(run.exit_code())
}

async fn find(
    args: &Args,
    session: &ReadOnly,
    config: &tokio_postgres::Config,
    matcher: &Matcher,
) -> Result<ExitCode, UsageError> {
    let values = matcher
        .query
        .values
        .as_ref()
        .expect("find runs with values");
    if values.len() > uuidforge_db::find::MAX_VALUES {
        return Err(UsageError::plain(format!(
            "grep --db: {} values; a database search takes at most {}",
            values.len(),
            uuidforge_db::find::MAX_VALUES
        )));
    }
    let mut needles = Needles::default();
    for uuid in values.iter() {
        needles.insert(uuid);
    }
    let options = FindOptions {
        columns: args.column.clone(),
        tables: args.table.iter().cloned().collect(),
        ..FindOptions::default()
    };
    let mut per_table: BTreeMap<String, usize> = BTreeMap::new();
    find_printing(session, config, &needles, &options, 2, |hit| {
        let accepted = hit
            .value
            .parse::<uuid::Uuid>()
            .is_ok_and(|u| matcher.query.accepts(&u));
        if !accepted {
            return None;
        }
        *per_table
            .entry(format!("{}.{}", hit.schema, hit.table))
            .or_default() += 1;
        if args.quiet || args.files_with_matches || args.count {
            return None;
        }
        Some(find_hit_text(hit, args.json))
    })
    .await?;
    let mut out = std::io::BufWriter::new(crate::term::stdout());
    if !args.quiet {
        for (table, hits) in &per_table {
            if args.files_with_matches {
                writeln!(out, "{table}")?;
            } else if args.count {
                writeln!(out, "{table}:{hits}")?;
            }
        }
    }
    out.flush()?;
    Ok(ExitCode::from(if per_table.is_empty() { 1 } else { 0 }))
}
