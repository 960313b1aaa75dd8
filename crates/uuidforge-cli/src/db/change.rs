//! The one way the `db` subcommands change a database: plan, print the
//! plan (the exact SQL, or JSON), and with `--apply` hand it to the runner
//! (locks against other changes, backup, plan again and compare, run,
//! check, commit), then say what was done.

use super::{db_error, print_json};
use crate::keyfile::KeyFile;
use crate::UsageError;
use std::io::Write;
use std::process::ExitCode;
use uuidforge_change::ops::{one_line, print, Operation, Planned};
use uuidforge_change::runner::{self, Applied, Context, Progress, Report};
use uuidforge_db::client::{DbError, ReadOnly};

/// What the command adds to the runner's work: how to get the secret of
/// new keys, and its lines after `applied`.
pub(super) struct Lines<'a, P> {
    /// The key file of new keys (read or made after the backup).
    pub secret: &'a (dyn Fn() -> Result<KeyFile, DbError> + Sync),
    /// Lines saying what was done, after the backup line.
    pub applied: &'a dyn Fn(&P, &Applied) -> Vec<String>,
}

/// No secret: the change makes no keys.
pub(super) fn no_secret() -> Result<KeyFile, DbError> {
    Ok(KeyFile {
        path: Default::default(),
        bytes: Vec::new(),
        created: false,
    })
}

/// Plans `op` in `session`, prints the plan, applies it with `apply`.
pub(super) async fn run<O: Operation>(
    session: ReadOnly,
    config: &tokio_postgres::Config,
    op: &O,
    args: &super::ChangeArgs,
    lines: Lines<'_, O::Plan>,
) -> Result<ExitCode, UsageError> {
    let (plan, snapshot) = runner::plan(&session, op).await.map_err(db_error)?;
    // Its locks (the views it read) would keep the change waiting.
    session.close().await.map_err(db_error)?;
    let mut out = crate::term::stdout();
    if !args.json {
        for line in print(plan.change(), &crate::flags::Flags) {
            writeln!(out, "{line}")?;
        }
        out.flush()?;
    }
    if !args.apply {
        if args.json {
            return print_json(
                &mut out,
                &Report {
                    plan: &plan,
                    applied: None,
                    files: Vec::new(),
                },
            );
        }
        // The backup's pg_dump is looked for now, so that a missing or too
        // old one shows before --apply, not after.
        if !plan.change().backup.is_empty() {
            match uuidforge_change::backup::pg_dump_for(snapshot.server_version_num) {
                Ok(p) => writeln!(
                    out,
                    "-- with --apply, backed up first by pg_dump {} ({})",
                    p.major,
                    p.path.display()
                )?,
                Err(e) => writeln!(
                    out,
                    "-- WARNING: with --apply the backup cannot be made, so nothing would run: {e}"
                )?,
            }
        }
        writeln!(out, "\n-- nothing was changed: run again with --apply")?;
        return Ok(ExitCode::SUCCESS);
    }
    let bar = steps_bar();
    let mut progress = show_progress(&bar);
    let json = args.json;
    let mut backed_up = |b: &uuidforge_change::backup::Backup| {
        if !json {
            // Before anything runs: the file is named even if the change
            // then fails.
            let mut out = crate::term::stdout();
            let _ = writeln!(
                out,
                "\n-- backup: {} ({} entries, read back with pg_restore --list)",
                one_line(
                    &std::path::absolute(&b.file)
                        .unwrap_or_else(|_| b.file.clone())
                        .display()
                        .to_string()
                ),
                b.entries
            );
            let _ = out.flush();
        }
    };
    // The key file is read (or made) only when the change makes keys, and
    // after the backup: the report names it.
    let key_file: std::sync::Mutex<Option<String>> = Default::default();
    let secret = || -> Result<Vec<u8>, DbError> {
        let file = (lines.secret)()?;
        if let Ok(mut named) = key_file.lock() {
            *named = Some(file.report());
        }
        Ok(file.bytes)
    };
    let ctx = Context {
        backup_file: args.backup.clone(),
        secret: &secret,
        progress: &mut progress,
        backed_up: &mut backed_up,
    };
    let done = runner::apply(config, op, &plan, &snapshot, ctx).await;
    bar.finish_and_clear();
    let done = done.map_err(db_error)?;
    let files: Vec<String> = key_file.into_inner().ok().flatten().into_iter().collect();
    if args.json {
        return print_json(
            &mut out,
            &Report {
                plan: &plan,
                applied: Some(&done),
                files,
            },
        );
    }
    let mut done_lines = (lines.applied)(&plan, &done);
    done_lines.extend(files);
    print_done(&mut out, &done_lines, &done.checks)
}

/// What a change did: its lines, then the checks made.
pub(super) fn print_done(
    out: &mut impl Write,
    lines: &[String],
    checks: &[String],
) -> Result<ExitCode, UsageError> {
    for line in lines {
        writeln!(out, "-- {}", one_line(line))?;
    }
    writeln!(out, "-- verified:")?;
    for check in checks {
        writeln!(out, "--   {}", one_line(check))?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// The progress bar of a change in steps (hidden when not on a terminal).
pub(super) fn steps_bar() -> indicatif::ProgressBar {
    super::progress_bar("{spinner} {msg} {pos}/{len} pages {wide_bar} {eta}")
}

/// Shows a change's progress on `bar`: the step, then the pages of a
/// backfill.
pub(super) fn show_progress(bar: &indicatif::ProgressBar) -> impl FnMut(Progress) + Send + '_ {
    move |p: Progress| match p {
        Progress::Step { index, total, what } => {
            bar.set_message(format!("step {}/{total}: {what}", index + 1));
            bar.set_length(0);
            bar.set_position(0);
        }
        Progress::Pages { done, total } => {
            bar.set_length(total);
            bar.set_position(done);
        }
    }
}
