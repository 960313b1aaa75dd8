//! `uuidforge db merge` and `db unmerge` (D8).

use super::change;
use super::{db_error, ChangeArgs};
use crate::UsageError;
use std::process::ExitCode;
use uuid::Uuid;
use uuidforge_change::ops::merge::{Merge, MergeOptions, MergePlan, OnConflict};
use uuidforge_change::ops::unmerge::{Unmerge, UnmergePlan};
use uuidforge_change::runner::Applied;
use uuidforge_db::client::ReadOnly;
use uuidforge_db::find::{FindOptions, Hit, Needles};

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
    #[command(flatten)]
    change: ChangeArgs,
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
    let mut implicit: Vec<Hit> = Vec::new();
    if args.implicit {
        let mut needles = Needles::default();
        for id in ids.iter().filter(|&&id| id != new) {
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
    }
    let op = Merge {
        ids,
        new,
        options,
        implicit,
    };
    let applied = |plan: &MergePlan, d: &Applied| {
        vec![
            format!(
                "applied: merge {} in the log; {} value(s) rewritten in place; collisions resolved: {}",
                d.outputs.get("merge_id").map_or("?", String::as_str),
                d.counted("implicit"),
                d.outputs
                    .get("collisions")
                    .filter(|c| !c.is_empty())
                    .map_or("none", String::as_str)
            ),
            format!("new key: {}", plan.new),
        ]
    };
    let lines = change::Lines {
        secret: &change::no_secret,
        applied: &applied,
    };
    change::run(session, config, &op, &args.change, lines).await
}

pub(super) async fn unmerge(
    session: ReadOnly,
    config: &tokio_postgres::Config,
    args: UnmergeArgs,
) -> Result<ExitCode, UsageError> {
    let op = Unmerge {
        new: parse_uuid("new", &args.new)?,
    };
    let applied = |plan: &UnmergePlan, _: &Applied| {
        vec![format!(
            "applied: merge {} undone, {} back",
            plan.merge_id,
            plan.restored
                .iter()
                .map(Uuid::to_string)
                .collect::<Vec<_>>()
                .join(",")
        )]
    };
    let lines = change::Lines {
        secret: &change::no_secret,
        applied: &applied,
    };
    change::run(session, config, &op, &args.change, lines).await
}
