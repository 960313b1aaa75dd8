//! `uuidforge db migrate-key`: one transaction by default; with
//! `--batch-size`, batches that keep writers working and a state table
//! that `--resume` goes on from after a kill or a lost connection.

use super::change;
use super::{db_error, one_line, print_json, ChangeArgs};
use crate::keyfile::KeyFile;
use crate::UsageError;
use std::io::Write;
use std::process::ExitCode;
use uuidforge_change::ops::complete_key::{CompleteKey, CompletePlan};
use uuidforge_change::ops::migrate_key::{MigrateKey, MigrateOptions, MigratePlan};
use uuidforge_change::runner::{self, Applied};
use uuidforge_db::client::{DbError, ReadOnly};

#[derive(clap::Args)]
pub(super) struct MigrateKeyArgs {
    /// TABLE or SCHEMA.TABLE.
    table: String,
    /// Order the new keys by this timestamp or date column (without it,
    /// the old key order is kept exactly).
    #[arg(long, value_name = "COLUMN")]
    order_by: Option<String>,
    /// Keep the old values under this name (default KEY_old).
    #[arg(long, value_name = "NAME")]
    keep_old: Option<String>,
    /// The key column, when the primary key has several columns (`id` of
    /// a partitioned table's `(id, created_at)`; default: its one integer
    /// or uuid column).
    #[arg(long, value_name = "COLUMN")]
    column: Option<String>,
    /// A column holding the key's values without a foreign key (a view
    /// joins them): migrated as a reference too, no foreign key made; for
    /// a uuid key, a column holding copies of its keys (uuid, text, JSON):
    /// rewritten to the new keys in place, other values kept (repeatable;
    /// TABLE.COLUMN or SCHEMA.TABLE.COLUMN).
    #[arg(long, value_name = "TABLE.COLUMN")]
    also: Vec<String>,
    /// A column named for the key without a foreign key that is not a
    /// reference to it (its values only happen to be keys): left as it is
    /// (repeatable; TABLE.COLUMN or SCHEMA.TABLE.COLUMN).
    #[arg(long, value_name = "TABLE.COLUMN")]
    leave: Vec<String>,
    /// For a uuid key: look for copies of its keys in other columns only
    /// in this schema or table (repeatable; SCHEMA, TABLE or
    /// SCHEMA.TABLE; default every table the role may read).
    #[arg(long, value_name = "NAME", conflicts_with = "no_copy_search")]
    copies_in: Vec<String>,
    /// For a uuid key: do not look for copies of its keys in other columns
    /// (the plan says so: copies left there stay old).
    #[arg(long)]
    no_copy_search: bool,
    /// A generated column computed from the key or a reference: computed
    /// again over the new column (its values change; one transaction
    /// only) instead of refused (repeatable; TABLE.COLUMN).
    #[arg(long, value_name = "TABLE.COLUMN")]
    regenerate: Vec<String>,
    /// The secret of the new keys (32 bytes): the same file gives the same
    /// keys on the same data. Created (0600) when it does not exist;
    /// default uuidforge-migrate-DATABASE-TABLE.key.
    #[arg(long, value_name = "FILE")]
    key_file: Option<std::path::PathBuf>,
    /// Take the new keys from another database where this table was
    /// migrated (a logical replication subscriber from its publisher):
    /// every row gets the key its row has there (its old key kept beside
    /// it); read in a read-only transaction; one transaction only, no key
    /// file (a connection URL or libpq string, as --db takes).
    #[arg(long, value_name = "DB", conflicts_with_all = ["batch_size", "key_file", "order_by"])]
    keys_from: Option<String>,
    /// Give the new key no default: the application makes the keys. Without
    /// it the key gets the best UUIDv7 generator the database has (the
    /// uuidforge extension's uuidv7(), else the SQL edition's, else
    /// PostgreSQL 18's), and a database with none is refused.
    #[arg(long)]
    no_default: bool,
    /// Migrate in batches of about N rows, each its own transaction, for
    /// tables too large to lock: writers go on, only two short steps lock
    /// them out; progress is kept in the table uuidforge_changes.
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = clap::value_parser!(i64).range(1..=2_147_483_647))]
    batch_size: Option<i64>,
    /// With --batch-size: migrate online as a copy, in the manner of
    /// pg_repack: each table written once into a shadow table through the
    /// key map while a trigger logs the rows written meanwhile, then a
    /// short swap puts the shadows in the tables' places (no row updated
    /// in place, so no dead rows: the tables end the size of a fresh load).
    /// Triggers, row-level security and policies are made again on the
    /// new tables; views, publications, partitions and what else the copy
    /// cannot carry yet are refused by name (batches in place carry them).
    #[arg(long, requires = "batch_size")]
    copy: bool,
    /// With --copy: the sessions (server processes) the tables' copies,
    /// their index builds and their foreign keys' validations run on side
    /// by side, as pg_repack's --jobs.
    #[arg(long, value_name = "N", requires = "copy", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=64))]
    jobs: u32,
    /// Complete the migration once the application runs on the new keys:
    /// drop the old keys (KEY_old, or --keep-old NAME) with their unique
    /// index and every reference's old column, backed up first; refused
    /// while anything still uses them.
    #[arg(long, conflicts_with_all = ["resume", "batch_size", "order_by", "column", "also", "leave", "regenerate", "no_default", "key_file", "keys_from", "replicated", "sharded"])]
    complete: bool,
    /// Complete a batched migration that was killed or lost its
    /// connection, from its last committed step.
    #[arg(long, conflicts_with_all = ["apply", "batch_size", "order_by", "keep_old", "column", "also", "leave", "regenerate", "no_default", "keys_from", "replicated", "sharded"])]
    resume: bool,
    /// Give up an online copy under way, before its swap: print the
    /// statements that drop its triggers, logs, shadows and maps (with
    /// --apply, run them and remove its state, in one transaction); the
    /// tables stay as the application left them. Refused once the swap
    /// is done (--resume completes it then) and for batches in place.
    #[arg(long, conflicts_with_all = ["resume", "complete", "batch_size", "order_by", "keep_old", "column", "also", "leave", "regenerate", "no_default", "key_file", "keys_from", "replicated", "sharded"])]
    give_up: bool,
    /// Over a fleet: the table is a reference table replicated on every
    /// member (countries, currencies): the same new key for the same row
    /// everywhere. Without it or --sharded, a table holding the same rows
    /// on every member is taken for replicated.
    #[arg(long, conflicts_with = "sharded")]
    replicated: bool,
    /// Over a fleet: the table is sharded (each member holds its own rows):
    /// new keys unique across the members.
    #[arg(long)]
    sharded: bool,
    /// Over a fleet: members migrated at once (default one after another).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=64))]
    parallel: u16,
    /// Over a fleet: the file of the fleet's state, which --resume reads
    /// (default uuidforge-fleet-TABLE.json; written 0600).
    #[arg(long, value_name = "FILE")]
    fleet_state: Option<std::path::PathBuf>,
    #[command(flatten)]
    change: ChangeArgs,
}

/// The key file of `--key-file`, or the default one of this database and
/// table: read, or made (0600) when it does not exist.
fn secret_of(args: &MigrateKeyArgs, database: &str) -> Result<KeyFile, DbError> {
    let key_file = args.key_file.clone().unwrap_or_else(|| {
        std::path::PathBuf::from(format!(
            "uuidforge-migrate-{database}-{}.key",
            args.table_part()
        ))
    });
    migration_secret(&key_file)
}

/// The migration secret in `path` (32 bytes), made when missing.
fn migration_secret(path: &std::path::Path) -> Result<KeyFile, DbError> {
    crate::keyfile::read_or_create("--key-file", path).map_err(|e| {
        let message = format!("{}: {}", e.path.display(), e.problem());
        match e.problem {
            crate::keyfile::Problem::Size { .. } => DbError::invalid("key-file", message),
            _ => DbError::tool("key-file", message),
        }
    })
}

/// The lines after `applied`: the rows keyed and, in batches, the steps
/// that locked writers out.
fn applied_lines(d: &Applied) -> Vec<String> {
    if d.batches == 0 && d.exclusive.is_empty() {
        return vec![format!(
            "applied: {} rows given a UUIDv7 key in {:.2} s",
            d.counted("keyed_rows"),
            d.seconds
        )];
    }
    let mut lines = vec![format!(
        "applied: {} rows given a UUIDv7 key in {:.2} s, {} batches; longest step locking writers out: {:.3} s",
        d.counted("keyed_rows"), d.seconds, d.batches, d.longest_exclusive_seconds
    )];
    lines.extend(
        d.exclusive
            .iter()
            .map(|(what, s)| format!("  {s:.3} s  {what}")),
    );
    lines
}

/// Names the fleet's key file before anything runs (text output only:
/// the JSON report has a line per member).
fn say_key_file(json: bool, file: &KeyFile) {
    if !json {
        let mut out = crate::term::stdout();
        let _ = writeln!(out, "-- {}", one_line(&file.report()));
        let _ = out.flush();
    }
}

/// What `--resume --json` prints.
#[derive(serde::Serialize)]
struct Resumed<'a> {
    /// The table.
    table: &'a str,
    /// What the run did.
    applied: &'a Applied,
    /// The files it read or made beside the backup (the key file).
    files: Vec<String>,
}

/// The change in batches of `args.table` under way, found with the
/// session's one catalog snapshot (which it returns), closing the session;
/// refused for `operation` when there is none.
async fn under_way(
    session: ReadOnly,
    args: &MigrateKeyArgs,
    operation: &str,
) -> Result<(runner::state::UnderWay, uuidforge_db::catalog::Snapshot), UsageError> {
    let snapshot = session.snapshot().await.map_err(db_error)?;
    let under_way = runner::under_way_of(&session, &snapshot, &args.table)
        .await
        .map_err(db_error)?;
    session.close().await.map_err(db_error)?;
    let Some(u) = under_way else {
        return Err(db_error(DbError::invalid(
            operation.to_string(),
            format!(
                "no change in batches of {} is under way (expected one begun with --batch-size N --apply)",
                args.table
            ),
        )));
    };
    Ok((u, snapshot))
}

/// What `--give-up --json` prints.
#[derive(serde::Serialize)]
struct GivenUp<'a> {
    /// The table.
    table: &'a str,
    /// The statements, run in one transaction with the state's removal.
    statements: Vec<String>,
    /// Whether they ran (`--apply`).
    applied: bool,
    /// How long they took (0 when they did not run).
    seconds: f64,
}

/// `--give-up`: the statements that give up the online copy under way;
/// with `--apply`, run.
async fn give_up(
    session: ReadOnly,
    config: &tokio_postgres::Config,
    args: &MigrateKeyArgs,
) -> Result<ExitCode, UsageError> {
    let (u, _) = under_way(session, args, "give up").await?;
    let change = u.change().map_err(db_error)?;
    let statements: Vec<String> = match &change.run {
        uuidforge_change::ops::Run::Batches {
            give_up: Some(g), ..
        } => std::iter::once(g.lock.statement())
            .chain(g.statements.iter().cloned())
            .collect(),
        _ => Vec::new(),
    };
    let seconds = if args.change.apply {
        runner::give_up(config, &u).await.map_err(db_error)?
    } else if statements.is_empty() {
        // Refused with its reason by the runner's rule, without a change.
        return Err(db_error(DbError::invalid(
            "give up",
            format!("the {} cannot be given up: its steps change the tables in place from the first batch (--resume completes it)", u.what()),
        )));
    } else {
        0.0
    };
    let mut out = crate::term::stdout();
    if args.change.json {
        return print_json(
            &mut out,
            &GivenUp {
                table: &args.table,
                statements,
                applied: args.change.apply,
                seconds,
            },
        );
    }
    writeln!(
        out,
        "-- giving up the {} at {}: one transaction, its state removed with it",
        one_line(&u.what()),
        one_line(&u.next_step())
    )?;
    writeln!(out, "BEGIN;")?;
    for s in &statements {
        writeln!(out, "{s};")?;
    }
    writeln!(out, "COMMIT;")?;
    if args.change.apply {
        writeln!(
            out,
            "given up in {seconds:.2} s: the tables are as the application left them"
        )?;
    } else {
        writeln!(out, "-- nothing was changed: --apply runs it")?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// `--resume`: runs the steps left of the change in batches under way,
/// found with the session's one catalog snapshot.
async fn resume(
    session: ReadOnly,
    config: &tokio_postgres::Config,
    args: &MigrateKeyArgs,
) -> Result<ExitCode, UsageError> {
    let (u, snapshot) = under_way(session, args, "resume").await?;
    let mut out = crate::term::stdout();
    if !args.change.json {
        writeln!(
            out,
            "-- resuming the {} at {}",
            one_line(&format!("{} of {}", u.operation, u.target)),
            one_line(&u.next_step())
        )?;
        out.flush()?;
    }
    let secret = secret_of(args, &snapshot.database).map_err(db_error)?;
    let bar = change::steps_bar();
    let mut progress = change::show_progress(&bar);
    let done = runner::resume(config, &u, &secret.bytes, &mut progress).await;
    bar.finish_and_clear();
    let done = done.map_err(db_error)?;
    if args.change.json {
        return print_json(
            &mut out,
            &Resumed {
                table: &args.table,
                applied: &done,
                files: vec![secret.report()],
            },
        );
    }
    let mut lines = applied_lines(&done);
    lines.push(secret.report());
    change::print_done(&mut out, &lines, &done.checks)
}

impl MigrateKeyArgs {
    /// The operation these arguments ask for.
    fn operation(&self) -> MigrateKey {
        MigrateKey {
            table: self.table.clone(),
            options: MigrateOptions {
                order_by: self.order_by.clone(),
                keep_old: self.keep_old.clone(),
                column: self.column.clone(),
                also: self.also.clone(),
                leave: self.leave.clone(),
                regenerate: self.regenerate.clone(),
                copy_search: uuidforge_change::ops::migrate_key::CopySearch {
                    within: self.copies_in.clone(),
                    skip: self.no_copy_search,
                },
                no_default: self.no_default,
                given_keys: None,
                plan_only: !self.change.apply,
                copy: self.copy,
                jobs: uuidforge_change::ops::migrate_key::Jobs(self.jobs),
            },
            batch_size: self.batch_size,
        }
    }

    /// The table's name as a file name's part.
    fn table_part(&self) -> String {
        self.table
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect()
    }
}

pub(super) async fn run(
    session: ReadOnly,
    config: &tokio_postgres::Config,
    args: MigrateKeyArgs,
) -> Result<ExitCode, UsageError> {
    if args.replicated || args.sharded || args.parallel > 1 || args.fleet_state.is_some() {
        return Err(UsageError::plain(
            "--replicated, --sharded, --parallel and --fleet-state are for a fleet (expected several --db or --fleet FILE)",
        ));
    }
    if args.resume {
        return resume(session, config, &args).await;
    }
    if args.give_up {
        return give_up(session, config, &args).await;
    }
    if args.complete {
        let op = CompleteKey {
            table: args.table.clone(),
            keep_old: args.keep_old.clone(),
        };
        let applied = |plan: &CompletePlan, d: &Applied| {
            vec![format!(
                "applied: {} old column(s) dropped in {:.2} s",
                plan.dropped.len(),
                d.seconds
            )]
        };
        let lines = change::Lines {
            secret: &change::no_secret,
            applied: &applied,
        };
        return change::run(session, config, &op, &args.change, lines).await;
    }
    let database = session.snapshot().await.map_err(db_error)?.database;
    let mut op = args.operation();
    if let Some(other) = &args.keys_from {
        op.options.given_keys = Some(keys_from(other, &args).await.map_err(db_error)?);
    }
    let secret = || secret_of(&args, &database);
    let lines = change::Lines {
        secret: &secret,
        applied: &|_: &MigratePlan, d: &Applied| applied_lines(d),
    };
    change::run(session, config, &op, &args.change, lines).await
}

/// The keys of `--keys-from`'s database, read in a read-only transaction
/// there.
async fn keys_from(
    other: &str,
    args: &MigrateKeyArgs,
) -> Result<uuidforge_change::action::GivenKeys, DbError> {
    let config = uuidforge_db::client::config(Some(other)).map_err(|e| e.within("keys-from"))?;
    let session = ReadOnly::open(&config)
        .await
        .map_err(|e| e.within("keys-from"))?;
    let keys = uuidforge_change::ops::migrate_key::keys_from::read(
        &session,
        &args.table,
        args.keep_old.as_deref(),
    )
    .await?;
    session.close().await?;
    Ok(keys)
}

/// `migrate-key` over a fleet: the plan of every member, printed together
/// and compared; with `--apply` member after member (`--parallel`), the
/// fleet's state in a file; `--resume` goes on from it.
pub(super) async fn run_fleet(
    members: &[uuidforge_fleet::Member],
    at_once: usize,
    args: MigrateKeyArgs,
) -> Result<ExitCode, UsageError> {
    use uuidforge_fleet::migrate::{self, Event};
    if args.complete {
        return Err(UsageError::plain(
            "--complete runs on one database at a time (expected one --db): complete each member when its application runs on the new keys",
        ));
    }
    if args.keys_from.is_some() {
        return Err(UsageError::plain(
            "--keys-from runs on one database at a time (expected one --db): a fleet's members get their keys from its key file",
        ));
    }
    if args.give_up {
        return Err(UsageError::plain(
            "--give-up runs on one database at a time (expected one --db): give up the copy under way on each member",
        ));
    }
    let op = args.operation();
    let state = args.fleet_state.clone().unwrap_or_else(|| {
        std::path::PathBuf::from(format!("uuidforge-fleet-{}.json", args.table_part()))
    });
    let key_file = args.key_file.clone().unwrap_or_else(|| {
        std::path::PathBuf::from(format!("uuidforge-fleet-{}.key", args.table_part()))
    });
    let mut out = crate::term::stdout();
    let json = args.change.json;
    let on_event = |e: Event| {
        if json {
            return;
        }
        let line = match e {
            Event::Started(m) => format!("-- member {m}: migrating"),
            Event::AlreadyDone(m) => format!("-- member {m}: migrated before"),
            Event::Done(m, d) => format!("-- member {m}: done: {}", applied_lines(&d).join("; ")),
        };
        let mut out = crate::term::stdout();
        let _ = writeln!(out, "{}", one_line(&line));
        let _ = out.flush();
    };
    let done = if args.resume {
        let secret = migration_secret(&key_file).map_err(db_error)?;
        say_key_file(json, &secret);
        migrate::resume(members, &secret.bytes, &state, None, &on_event).await
    } else {
        let forced = match (args.replicated, args.sharded) {
            (true, _) => Some(true),
            (_, true) => Some(false),
            _ => None,
        };
        let plan = migrate::plan(members, &op, forced, at_once)
            .await
            .map_err(db_error)?;
        if !json {
            writeln!(
                out,
                "-- fleet: {} members ({}); {} is {} ({}): {}",
                plan.members.len(),
                plan.members.iter().map(|m| m.member.name.as_str()).collect::<Vec<_>>().join(", "),
                op.table,
                if plan.replicated { "replicated" } else { "sharded" },
                plan.why,
                if plan.replicated {
                    "the same new key for the same row on every member (one secret)"
                } else {
                    "new keys unique across the members (a secret per member)"
                }
            )?;
            writeln!(out, "-- the plans are the same on every member (table oids aside)")?;
            for m in &plan.members {
                writeln!(out, "\n-- == member {} ==", m.member.name)?;
                for line in uuidforge_change::ops::print_compared(
                    uuidforge_change::ops::Planned::change(&m.plan),
                    &crate::flags::Flags,
                ) {
                    writeln!(out, "{line}")?;
                }
            }
            out.flush()?;
        }
        if !args.change.apply {
            if json {
                let plans: Vec<serde_json::Value> = plan
                    .members
                    .iter()
                    .map(|m| serde_json::json!({"member": m.member.name, "plan": m.plan}))
                    .collect();
                return print_json(
                    &mut out,
                    &serde_json::json!({"replicated": plan.replicated, "why": plan.why, "members": plans}),
                );
            }
            writeln!(out, "\n-- nothing was changed on any member: run again with --apply")?;
            return Ok(ExitCode::SUCCESS);
        }
        if let Some(dir) = &args.change.backup {
            std::fs::create_dir_all(dir)
                .map_err(|e| UsageError::plain(format!("--backup: {}: {e}", dir.display())))?;
        }
        let secret = migration_secret(&key_file).map_err(db_error)?;
        say_key_file(json, &secret);
        migrate::apply(
            &op,
            &plan,
            &secret.bytes,
            &state,
            args.change.backup.as_deref(),
            usize::from(args.parallel),
            &on_event,
        )
        .await
    }
    .map_err(|e| {
        db_error(e.with_hint(format!(
            "the fleet's state is in {}: complete the migration with the same members and --resume",
            state.display()
        )))
    })?;
    if json {
        return print_json(&mut out, &done);
    }
    if let Some(keys) = &done.replicated_keys {
        writeln!(
            out,
            "-- verified: the replicated table's new keys are the same on every member ({})",
            keys.iter()
                .map(|(m, d)| format!("{m}: {d}"))
                .collect::<Vec<_>>()
                .join("; ")
        )?;
    }
    writeln!(
        out,
        "-- fleet: {} members migrated; state in {}",
        done.members.len(),
        state.display()
    )?;
    Ok(ExitCode::SUCCESS)
}
