//! `uuidforge db merge` and `db unmerge` (D8).

use super::{back_up, db_error, one_line, print_json, BackupRequest, ChangeArgs};
use crate::UsageError;
use std::io::Write;
use std::process::ExitCode;
use uuid::Uuid;
use uuidforge_db::client::ReadOnly;
use uuidforge_db::find::{FindOptions, Hit, Needles};
use uuidforge_db::merge::{MergeOptions, OnConflict};
use uuidforge_db::merge_run;

#[derive(clap::Args)]
pub(super) struct MergeArgs {
    /// The UUIDs that name one object: keys of one table (any spelling).
    #[arg(required = true, num_args = 2.., value_name = "UUID")]
    ids: Vec<String>,
    /// The UUID they all become: one of them (it keeps its row) or a new
    /// one (default: a new UUIDv7).
    #[arg(long, value_name = "UUID")]
    into: Option<String>,
    /// The row kept (default: the oldest by UUIDv7 time).
    #[arg(long, value_name = "UUID")]
    keep: Option<String>,
    /// Also rewrite every other occurrence `db find` reports: text, JSON
    /// paths and keys, arrays, uuid columns without a foreign key.
    #[arg(long)]
    implicit: bool,
    /// When moved references collide on a unique constraint: keep the
    /// survivor's row, delete the duplicates' colliding rows, or refuse.
    #[arg(long, value_enum, default_value = "keep-survivor")]
    on_conflict: ConflictArg,
    /// Why, kept in the merge log.
    #[arg(long, value_name = "TEXT")]
    reason: Option<String>,
    #[command(flatten)]
    change: ChangeArgs,
}

#[derive(clap::ValueEnum, Clone, Copy)]
enum ConflictArg {
    KeepSurvivor,
    DeleteDuplicate,
    Fail,
}

#[derive(clap::Args)]
pub(super) struct UnmergeArgs {
    /// The UUID a merge made (or kept).
    new: String,
    /// Undo it; without it the undo is tried in a transaction that is
    /// rolled back, and its statements printed.
    #[arg(long)]
    apply: bool,
    /// One JSON object instead of the text report.
    #[arg(long)]
    json: bool,
}

fn parse_uuid(field: &str, text: &str) -> Result<Uuid, UsageError> {
    uuidforge::parser::parse_value(text.trim().as_bytes())
        .map(|v| v.uuid())
        .map_err(|e| UsageError::plain(format!("{field}: '{text}' is not a UUID ({e})")))
}

pub(super) async fn merge(
    session: ReadOnly,
    config: &tokio_postgres::Config,
    args: MergeArgs,
) -> Result<ExitCode, UsageError> {
    let ids = args
        .ids
        .iter()
        .map(|t| parse_uuid("ids", t))
        .collect::<Result<Vec<_>, _>>()?;
    let into = args
        .into
        .as_deref()
        .map(|t| parse_uuid("into", t))
        .transpose()?;
    let options = MergeOptions {
        into,
        keep: args
            .keep
            .as_deref()
            .map(|t| parse_uuid("keep", t))
            .transpose()?,
        on_conflict: match args.on_conflict {
            ConflictArg::KeepSurvivor => OnConflict::KeepSurvivor,
            ConflictArg::DeleteDuplicate => OnConflict::DeleteDuplicate,
            ConflictArg::Fail => OnConflict::Fail,
        },
        reason: args.reason.clone(),
    };
    let new = into.unwrap_or_else(uuidforge::generator::v7);
    let plan = merge_run::merge_plan(&session, &ids, new, &options)
        .await
        .map_err(db_error)?;
    let mut implicit: Vec<Hit> = Vec::new();
    if args.implicit {
        let mut needles = Needles::default();
        for id in &plan.olds {
            needles.insert(*id);
        }
        uuidforge_db::exec::find(
            &session,
            config,
            &needles,
            &FindOptions::default(),
            2,
            |hit| implicit.push(hit),
            |_| {},
        )
        .await
        .map_err(db_error)?;
        implicit.retain(|h| {
            let table = uuidforge_db::ident::qualified(&h.schema, &h.table);
            !(table == plan.table && h.column == plan.key
                || plan
                    .references
                    .iter()
                    .any(|r| r.table == table && r.column == h.column)
                || h.table == uuidforge_db::merge::LOG_TABLE)
        });
    }
    let mut out = crate::term::stdout();
    if !args.change.json {
        writeln!(
            out,
            "-- plan: merge {} key(s) of {} into {} (row kept: {}), one transaction",
            ids.len(),
            one_line(&plan.table),
            plan.new,
            plan.survivor
        )?;
        for old in &plan.olds {
            writeln!(out, "--   {old} → {}", plan.new)?;
        }
        for r in &plan.references {
            writeln!(
                out,
                "--   references moved in {}.{} ({})",
                one_line(&r.table),
                one_line(&r.column),
                one_line(&r.constraint)
            )?;
        }
        for h in &implicit {
            writeln!(
                out,
                "--   rewritten in place: {}.{}.{} {} of row {} ('{}')",
                one_line(&h.schema),
                one_line(&h.table),
                one_line(&h.column),
                h.path.as_deref().map(one_line).unwrap_or_default(),
                one_line(&h.key.to_string()),
                one_line(&h.written)
            )?;
        }
        writeln!(
            out,
            "--   parameters: new = {}, olds = {{{}}}, survivor = {}, priority = {{{}}}, reason = {}",
            plan.new,
            list(&plan.olds),
            plan.survivor,
            list(&plan.priority),
            plan.reason.as_deref().map(one_line).unwrap_or_else(|| "NULL".into())
        )?;
        writeln!(out, "BEGIN;")?;
        for statement in &plan.statements {
            let params: Vec<String> = statement
                .params
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    format!(
                        "${} = {}",
                        i + 1,
                        serde_json::to_string(p)
                            .unwrap_or_default()
                            .trim_matches('"')
                    )
                })
                .collect();
            if params.is_empty() {
                writeln!(out, "{};", statement.sql)?;
            } else {
                writeln!(out, "{};  -- {}", statement.sql, params.join(", "))?;
            }
        }
        writeln!(
            out,
            "-- verify (every count 0, else rollback):\n{};\nCOMMIT;",
            plan.verify_sql
        )?;
        out.flush()?;
    }
    let mut backup = None;
    let mut outcome = None;
    if args.change.apply {
        let snapshot = session.snapshot().await.map_err(db_error)?;
        let mut relations = vec![plan.table.clone()];
        for table in plan.references.iter().map(|r| r.table.clone()).chain(
            implicit
                .iter()
                .map(|h| uuidforge_db::ident::qualified(&h.schema, &h.table)),
        ) {
            if !relations.contains(&table) {
                relations.push(table);
            }
        }
        session.close().await.map_err(db_error)?;
        let request = BackupRequest {
            file: args.change.backup.clone(),
            database: &snapshot.database,
            server_version_num: snapshot.server_version_num,
            relations: &relations,
            schema_only: false,
        };
        backup = Some(back_up(config, request, args.change.json, &mut out)?);
        let done = merge_run::merge_apply(config, &ids, &options, &plan, &implicit)
            .await
            .map_err(db_error)?;
        if !args.change.json {
            writeln!(
                out,
                "-- applied: merge {} in the log; {} value(s) rewritten in place; collisions resolved: {}",
                done.merge_id,
                done.implicit,
                if done.collisions.is_empty() {
                    "none".to_string()
                } else {
                    done.collisions
                        .iter()
                        .map(|(k, n)| format!("{} ({n})", one_line(k)))
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            )?;
            writeln!(out, "-- verified:")?;
            for check in &done.checks {
                writeln!(out, "--   {}", one_line(check))?;
            }
            writeln!(out, "{}", plan.new)?;
        }
        outcome = Some(done);
    } else if !args.change.json {
        writeln!(out, "\n-- nothing was changed: run again with --apply")?;
    }
    if args.change.json {
        return print_json(
            &mut out,
            &serde_json::json!({
                "table": plan.table,
                "new": plan.new,
                "survivor": plan.survivor,
                "olds": plan.olds,
                "references": plan.references,
                "implicit": implicit,
                "statements": plan.statements,
                "applied": args.change.apply,
                "backup": backup,
                "outcome": outcome,
            }),
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn list(ids: &[Uuid]) -> String {
    ids.iter()
        .map(Uuid::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

pub(super) async fn unmerge(
    session: ReadOnly,
    config: &tokio_postgres::Config,
    args: UnmergeArgs,
) -> Result<ExitCode, UsageError> {
    let new = parse_uuid("new", &args.new)?;
    session.close().await.map_err(db_error)?;
    let done = merge_run::unmerge(config, new, args.apply)
        .await
        .map_err(db_error)?;
    let mut out = crate::term::stdout();
    if args.json {
        return print_json(&mut out, &done);
    }
    writeln!(
        out,
        "-- {}: merge {} undone, {} back ({} rows restored), one transaction",
        if done.applied {
            "applied"
        } else {
            "tried and rolled back"
        },
        done.merge_id,
        list(&done.restored),
        done.rows
    )?;
    writeln!(out, "BEGIN;")?;
    for statement in &done.statements {
        writeln!(out, "{statement};")?;
    }
    writeln!(out, "COMMIT;")?;
    if !done.applied {
        writeln!(out, "\n-- nothing was changed: run again with --apply")?;
    }
    Ok(ExitCode::SUCCESS)
}
