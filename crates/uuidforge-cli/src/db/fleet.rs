//! `uuidforge db` over a fleet (several `--db`, or `--fleet FILE`): the read
//! commands on every member at once (`--members-at-once`), per member and
//! merged; `migrate-key` member after member with one state. A member that
//! does not answer is reported by name and the others answer: exit 4.

use super::{
    db_error, migrate_key, needles_of, print_discover, print_json, print_related, Args,
    ColumnsArgs, Command, DiscoverArgs, FindArgs, RelatedArgs,
};
use crate::UsageError;
use std::cell::RefCell;
use std::io::Write;
use std::process::ExitCode;
use uuidforge_db::client::{DbError, ReadOnly};
use uuidforge_db::exec;
use uuidforge_fleet::{Answer, Member, MemberSpec};

/// The exit code when some members did not answer and the others did.
const PARTIAL: u8 = 4;

/// The members of `--db` and `--fleet`.
fn members(args: &Args) -> Result<Vec<Member>, UsageError> {
    let mut specs: Vec<MemberSpec> = args
        .db
        .iter()
        .map(|d| uuidforge_fleet::member_of_arg(d))
        .collect();
    if let Some(path) = &args.fleet {
        let text = std::fs::read_to_string(path)
            .map_err(|e| UsageError::plain(format!("--fleet: {}: {e}", path.display())))?;
        specs.extend(
            uuidforge_fleet::members_of_file(&text, &path.display().to_string())
                .map_err(db_error)?,
        );
    }
    if specs.is_empty() {
        return Err(UsageError::plain(
            "--fleet: no members (expected NAME=CONNECTION lines)",
        ));
    }
    uuidforge_fleet::members(&specs).map_err(db_error)
}

/// Runs a `db` command over the fleet.
pub(super) fn run(args: Args) -> Result<ExitCode, UsageError> {
    if let Some(path) = args.pg_dump.clone() {
        uuidforge_change::backup::use_pg_dump(path);
    }
    let members = members(&args)?;
    let at_once = usize::from(args.members_at_once);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        match args.command {
            Command::Columns(a) => columns(&members, at_once, a).await,
            Command::Find(a) => find(&members, at_once, a).await,
            Command::Related(a) => related(&members, at_once, a).await,
            Command::Discover(a) => discover(&members, at_once, a).await,
            Command::MigrateKey(a) => migrate_key::run_fleet(&members, at_once, a).await,
            Command::Rename(_)
            | Command::Merge(_)
            | Command::Unmerge(_)
            | Command::InstallSql(_)
            | Command::SwitchGenerator(_)
            | Command::ConvertUuid(_) => {
                Err(UsageError::plain(
                    "this command runs on one database at a time (expected one --db and no --fleet); over a fleet: columns, find, related, discover, migrate-key",
                ))
            }
        }
    })
}

/// Each member's read-only session and `work` on it.
async fn on_each<T, F, Fut>(members: &[Member], at_once: usize, work: F) -> Vec<Answer<T>>
where
    F: Fn(Member, ReadOnly) -> Fut,
    Fut: std::future::Future<Output = Result<T, DbError>>,
{
    let work = &work;
    uuidforge_fleet::on_each(members, at_once, |member| async move {
        // A task of its own: the members' authentications (SCRAM's key
        // derivation is CPU work) run on both of the runtime's threads.
        let config = member.config.clone();
        let session = tokio::spawn(async move { ReadOnly::open(&config).await })
            .await
            .map_err(|e| DbError::unreadable("connect", e.to_string()))??;
        let out = work(member, session).await?;
        Ok(out)
    })
    .await
}

/// The members that did not answer, on standard error; exit 4 if any,
/// else `ok`.
fn partial<T>(answers: &[Answer<T>], ok: ExitCode) -> ExitCode {
    let mut failed = 0;
    for a in answers {
        if let Err(e) = &a.result {
            eprintln!("uuidforge: member {}: {}", a.member, crate::flags::said(e));
            failed += 1;
        }
    }
    if failed > 0 {
        eprintln!(
            "uuidforge: {failed} of {} members did not answer; the others' answers are above",
            answers.len()
        );
        ExitCode::from(PARTIAL)
    } else {
        ok
    }
}

async fn columns(
    members: &[Member],
    at_once: usize,
    args: ColumnsArgs,
) -> Result<ExitCode, UsageError> {
    let answers = on_each(members, at_once, |_, session| {
        let args = &args;
        async move {
            let found = exec::uuid_columns(&session, &args.schemas, args.min_share).await;
            session.close().await?;
            found
        }
    })
    .await;
    let answered: Vec<(String, Vec<_>)> = answers
        .iter()
        .filter_map(|a| {
            a.result
                .as_ref()
                .ok()
                .map(|c| (a.member.clone(), c.clone()))
        })
        .collect();
    let (merged, drift) = uuidforge_fleet::columns::merge(&answered);
    let mut out = crate::term::stdout();
    if args.json {
        let members: Vec<serde_json::Value> = answers
            .iter()
            .map(|a| match &a.result {
                Ok(c) => serde_json::json!({"member": a.member, "columns": c}),
                Err(e) => serde_json::json!({"member": a.member, "error": crate::flags::said(e)}),
            })
            .collect();
        print_json(
            &mut out,
            &serde_json::json!({"members": members, "merged": merged, "drift": drift}),
        )?;
        return Ok(partial(&answers, ExitCode::SUCCESS));
    }
    for a in &answers {
        match &a.result {
            Ok(c) => writeln!(out, "== member {}: {} UUID columns", a.member, c.len())?,
            Err(_) => writeln!(
                out,
                "== member {}: no answer (see standard error)",
                a.member
            )?,
        }
    }
    let all = answered.len();
    let width = merged
        .iter()
        .map(|c| c.schema.len() + c.table.len() + c.column.len() + 2)
        .max()
        .unwrap_or(6)
        .max(6);
    writeln!(out, "\n{:width$}  {:12}  index", "column", "members")?;
    for c in &merged {
        let name = format!("{}.{}.{}", c.schema, c.table, c.column);
        let on = if c.types.len() == all {
            "all".to_string()
        } else {
            c.types.keys().cloned().collect::<Vec<_>>().join(",")
        };
        let index: Vec<&String> = c.index.values().collect();
        let index = if index.windows(2).all(|w| w[0] == w[1]) {
            index.first().map(|s| s.to_string()).unwrap_or_default()
        } else {
            "differs (see below)".into()
        };
        writeln!(
            out,
            "{:width$}  {:12}  {}",
            crate::term::escaped(&name),
            on,
            crate::term::escaped(&index)
        )?;
    }
    writeln!(
        out,
        "\n== where the members differ (schema drift): {}",
        drift.len()
    )?;
    for d in &drift {
        writeln!(
            out,
            "{} ({}): {}",
            crate::term::escaped(&d.column),
            d.kind,
            crate::term::escaped(&d.detail)
        )?;
    }
    Ok(partial(&answers, ExitCode::SUCCESS))
}

async fn find(members: &[Member], at_once: usize, args: FindArgs) -> Result<ExitCode, UsageError> {
    let needles = needles_of(&args)?;
    let options = args.options();
    if args.plan {
        return Err(UsageError::plain(
            "find --plan runs on one database (expected one --db)",
        ));
    }
    // Hits from every member on one output, each line whole, the member
    // named first.
    let out = RefCell::new(crate::term::stdout());
    let write_failed: RefCell<Option<std::io::Error>> = RefCell::new(None);
    let answers = on_each(members, at_once, |member, session| {
        let (needles, options, out, write_failed) = (&needles, &options, &out, &write_failed);
        let json = args.json;
        let jobs = usize::from(args.jobs);
        async move {
            let name = member.name.clone();
            let summary = exec::find(
                &session,
                &member.config,
                needles,
                options,
                jobs,
                |hit| {
                    let line = if json {
                        let mut v = serde_json::to_value(&hit).expect("a hit serializes");
                        v["member"] = serde_json::Value::String(name.clone());
                        v.to_string()
                    } else {
                        format!("{}\t{}", name, super::find_hit_text(&hit, false))
                    };
                    if write_failed.borrow().is_none() {
                        if let Err(e) = writeln!(out.borrow_mut(), "{line}") {
                            *write_failed.borrow_mut() = Some(e);
                        }
                    }
                },
                |_| {},
            )
            .await;
            session.close().await?;
            summary
        }
    })
    .await;
    if let Some(e) = write_failed.into_inner() {
        return Err(e.into());
    }
    out.borrow_mut().flush()?;
    let mut hits = 0;
    for a in &answers {
        if let Ok(s) = &a.result {
            for skipped in &s.skipped {
                eprintln!(
                    "uuidforge: member {}: skipped {}.{}: {}",
                    a.member, skipped.schema, skipped.table, skipped.reason
                );
            }
            eprintln!(
                "uuidforge: member {}: {} hit(s); {} index probe(s), {} table scan(s), {} skipped",
                a.member,
                s.hits,
                s.probes,
                s.scans,
                s.skipped.len()
            );
            hits += s.hits;
        }
    }
    let found = if hits > 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    };
    Ok(partial(&answers, found))
}

async fn related(
    members: &[Member],
    at_once: usize,
    args: RelatedArgs,
) -> Result<ExitCode, UsageError> {
    let (target, by_name) = args.target();
    let answers = on_each(members, at_once, |_, session| {
        let target = &target;
        async move {
            let found = exec::related(&session, target, by_name).await;
            session.close().await?;
            found
        }
    })
    .await;
    print_each(&answers, "related", args.json, |out, found| {
        print_related(&mut &mut *out, found, false)
    })?;
    Ok(partial(&answers, ExitCode::SUCCESS))
}

async fn discover(
    members: &[Member],
    at_once: usize,
    args: DiscoverArgs,
) -> Result<ExitCode, UsageError> {
    let answers = on_each(members, at_once, |_, session| {
        let schemas = &args.schemas;
        async move {
            let report = exec::discover(&session, schemas).await;
            session.close().await?;
            report
        }
    })
    .await;
    print_each(&answers, "report", args.json, |out, report| {
        print_discover(&mut &mut *out, report, &args)
    })?;
    Ok(partial(&answers, ExitCode::SUCCESS))
}

/// Each member's answer: with `json` one object (`{"members": [{"member",
/// FIELD or "error"}]}`), else under `== member NAME` as `print` prints one
/// database's.
fn print_each<T: serde::Serialize>(
    answers: &[Answer<T>],
    field: &str,
    json: bool,
    print: impl Fn(&mut dyn Write, &T) -> Result<ExitCode, UsageError>,
) -> Result<(), UsageError> {
    let mut out = crate::term::stdout();
    if json {
        let members: Vec<serde_json::Value> = answers
            .iter()
            .map(|a| match &a.result {
                Ok(r) => serde_json::json!({"member": a.member, field: r}),
                Err(e) => serde_json::json!({"member": a.member, "error": crate::flags::said(e)}),
            })
            .collect();
        print_json(&mut out, &serde_json::json!({ "members": members }))?;
    } else {
        for a in answers {
            if let Ok(found) = &a.result {
                writeln!(out, "== member {}", a.member)?;
                print(&mut out, found)?;
            }
        }
    }
    Ok(())
}
