//! `uuidforge db …`: a live PostgreSQL database seen through its UUIDs.
//! Reading sessions are read-only transactions; every change (`rename`,
//! `migrate-key`, `merge`, `unmerge`) goes through one function
//! ([`change::run`]): it prints the plan and runs it only with `--apply`,
//! after a backup, verified before it commits. The work is done by
//! `uuidforge-db`; these modules parse flags and print.

use crate::UsageError;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use uuidforge_change::ops::one_line;
use uuidforge_change::ops::rename::{Rename, RenameOptions, RenamePlan};
use uuidforge_change::runner::Applied;
use uuidforge_db::client::{DbError, ReadOnly};
use uuidforge_db::columns::UuidColumn;
use uuidforge_db::exec;
use uuidforge_db::find::{FindOptions, Needles};

mod change;
mod convert_uuid;
mod fleet;
mod install_sql;
mod merge;
mod migrate_key;
mod mysql;
mod switch_generator;

/// Arguments of `db`.
#[derive(clap::Args)]
pub struct Args {
    /// The database: a URL (postgres://user@host:port/db?sslmode=require),
    /// a key=value string, or a database name. What it leaves out comes
    /// from PGHOST, PGPORT, PGUSER, PGDATABASE, PGPASSWORD, PGSSLMODE and
    /// ~/.pgpass (or PGPASSFILE), as for psql. Repeat it for a fleet of
    /// servers with the same schema, each NAME=URL (eu=postgres://…). A
    /// MariaDB or MySQL server: mysql://user@host:port/db (or mariadb://),
    /// what it leaves out from the option files (~/.my.cnf) and
    /// MYSQL_HOST, MYSQL_TCP_PORT, MYSQL_UNIX_PORT, MYSQL_PWD, as for the
    /// mariadb client (columns, find, related, discover, convert-uuid).
    #[arg(long, global = true, env = "UUIDFORGE_DB", hide_env_values = true)]
    db: Vec<String>,
    /// A fleet of servers with the same schema: one NAME=CONNECTION per
    /// line (# comments). Read commands run on every member at once and
    /// report per member and merged; migrate-key migrates member after
    /// member. Exit 4: some members did not answer (the others did).
    #[arg(long, global = true, value_name = "FILE")]
    fleet: Option<std::path::PathBuf>,
    /// Members a fleet command talks to at once.
    #[arg(long, global = true, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=64))]
    members_at_once: u16,
    /// The pg_dump (and the pg_restore beside it) of backups before a
    /// change; its major version must be at least the server's. Default:
    /// the lowest such one found in the usual places
    /// (/usr/lib/postgresql/N/bin, /usr/pgsql-N/bin, Homebrew) and on PATH.
    #[arg(
        long,
        global = true,
        env = "UUIDFORGE_PG_DUMP",
        hide_env_values = true,
        value_name = "PATH"
    )]
    pg_dump: Option<std::path::PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Every column holding UUIDs, with its index status.
    Columns(ColumnsArgs),
    /// Find UUIDs anywhere: every table, column, JSON path and row.
    Find(FindArgs),
    /// Propose primary and foreign keys among uuid columns from the data,
    /// with the DDL that would adopt them and the ER diagram.
    Discover(DiscoverArgs),
    /// Columns of other tables and views carrying the same key as a column
    /// (declared keys both ways, views, names, shared values), scored.
    Related(RelatedArgs),
    /// Rename a column and, with --related, the columns tied to it by
    /// foreign keys, with the indexes and constraints named after them.
    /// Prints the plan and the undo script; changes the database only with
    /// --apply.
    Rename(RenameArgs),
    /// Move a table's primary key to UUIDv7 with every foreign key that
    /// references it, keeping row order and the old values. Prints
    /// the plan; changes the database only with --apply.
    MigrateKey(migrate_key::MigrateKeyArgs),
    /// Make several UUIDs that name one object one UUIDv7 everywhere: the
    /// rows of one table and every reference, in one transaction, logged in
    /// uuidforge_merge_log. Prints the plan; changes the database only
    /// with --apply.
    Merge(merge::MergeArgs),
    /// Undo the latest merge into a UUID from the merge log, when nothing
    /// written since conflicts. Prints the plan; changes the database only
    /// with --apply.
    Unmerge(merge::UnmergeArgs),
    /// Install the SQL edition — uuidv7(), uuidv7_from, bounds, partition
    /// keys, plausibility checks in plain SQL and PL/pgSQL — into a schema,
    /// for servers that refuse custom extensions (managed PostgreSQL); an
    /// older edition there is upgraded in place. Prints the plan (the SQL);
    /// changes the database only with --apply.
    #[command(
        mut_arg("apply", |a| a.help(
            "Install the edition (or upgrade the one there) in one transaction, after the \
             backup, and check it; without it the plan is printed and nothing changes"
        )),
        mut_arg("backup", |a| a.help(
            "The backup file: pg_dump --format=custom of the schema's definitions when an \
             edition is there to upgrade (a first install has nothing to back up); default \
             uuidforge-backup-DATABASE-TIME.dump; never overwritten"
        ))
    )]
    InstallSql(install_sql::InstallSqlArgs),
    /// Set every column default that calls a UUID generator other than the
    /// server's best one (gen_random_uuid(), uuid_generate_v4(), pg_uuidv7's
    /// or pg_idkit's, PostgreSQL 18's own uuidv7()) to that one — the
    /// extension's uuidv7(), else the SQL edition's, else 18's — in every
    /// table the role can read, partitions and inheritance children each on
    /// its own: new rows get ordered UUIDv7 keys, the keys already there
    /// stay. Defaults that call a generator inside an expression, or fill a
    /// column that is not uuid, are listed and left. Prints the plan (the
    /// SQL); changes the database only with --apply.
    #[command(
        mut_arg("apply", |a| a.help(
            "Set the defaults in one transaction, after the backup, and check that each calls \
             the new generator and that no other default changed; without it the plan is \
             printed and nothing changes"
        )),
        mut_arg("backup", |a| a.help(
            "The backup file: pg_dump --format=custom of the changed tables' definitions \
             (no rows: none is written); default uuidforge-backup-DATABASE-TIME.dump; never \
             overwritten"
        ))
    )]
    SwitchGenerator(switch_generator::SwitchGeneratorArgs),
    /// MariaDB and MySQL: convert a UUID column and every foreign key
    /// referencing it to another storage form (text or swapped BINARY(16)
    /// to RFC-order BINARY(16), or to MariaDB's UUID), the values staying
    /// the same UUIDs. Prints the plan; changes the database only with
    /// --apply, after a backup.
    #[command(mut_arg("apply", |a| a.help(
        "Run the plan after the backup, statement by statement (DDL here commits on its own), \
         then check it; without it the plan is printed and nothing changes"
    )))]
    #[command(mut_arg("backup", |a| a.help(
        "The backup file (mariadb-dump, or mysqldump, of the tables the plan changes, in one \
         consistent snapshot; default uuidforge-backup-DATABASE-TIME.sql; never overwritten)"
    )))]
    ConvertUuid(convert_uuid::ConvertUuidArgs),
}

impl Command {
    /// Its name on the command line.
    fn name(&self) -> &'static str {
        match self {
            Command::Columns(_) => "columns",
            Command::Find(_) => "find",
            Command::Discover(_) => "discover",
            Command::Related(_) => "related",
            Command::Rename(_) => "rename",
            Command::MigrateKey(_) => "migrate-key",
            Command::Merge(_) => "merge",
            Command::Unmerge(_) => "unmerge",
            Command::InstallSql(_) => "install-sql",
            Command::SwitchGenerator(_) => "switch-generator",
            Command::ConvertUuid(_) => "convert-uuid",
        }
    }
}

#[derive(clap::Args)]
struct RenameArgs {
    /// TABLE.COLUMN or SCHEMA.TABLE.COLUMN.
    column: String,
    /// The new name (where the old name is a whole `_`-separated part of a
    /// related column's, index's or constraint's name, it is replaced
    /// there).
    new_name: String,
    /// Also rename the columns declared foreign keys tie to it (referencing
    /// it, referenced by it, or referencing the same key).
    #[arg(long)]
    related: bool,
    /// Also rename this column the same way (repeatable).
    #[arg(long = "also", value_name = "TABLE.COLUMN")]
    also: Vec<String>,
    /// Also rename view columns that show a renamed column under its old
    /// name.
    #[arg(long)]
    views: bool,
    #[command(flatten)]
    change: ChangeArgs,
}

/// What every command that changes a database takes.
#[derive(clap::Args)]
struct ChangeArgs {
    /// Run the plan (after the backup): in one transaction, or for a
    /// migration in batches in steps (the plan says which); without it the
    /// plan is printed and nothing changes.
    #[arg(long)]
    apply: bool,
    /// The backup file (pg_dump --format=custom of the tables the plan
    /// changes, schema only for a rename; default
    /// uuidforge-backup-DATABASE-TIME.dump; never overwritten).
    #[arg(long, requires = "apply")]
    backup: Option<std::path::PathBuf>,
    /// One JSON object instead of the text report.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
#[command(group = clap::ArgGroup::new("target").required(true))]
struct RelatedArgs {
    /// TABLE.COLUMN or SCHEMA.TABLE.COLUMN.
    #[arg(group = "target")]
    column: Option<String>,
    /// Every column going by this name instead (customer_id also matches
    /// customerId and CustomerID).
    #[arg(long, group = "target")]
    name: Option<String>,
    /// One JSON array instead of the table.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct DiscoverArgs {
    /// Only this schema (repeatable).
    #[arg(long = "schema")]
    schemas: Vec<String>,
    /// The report as JSON (`primary_keys`, `foreign_keys`).
    #[arg(long)]
    json: bool,
    /// Print the ER diagram instead of the report.
    #[arg(long, value_enum)]
    diagram: Option<DiagramFormat>,
    /// Print only the DDL that would adopt the proposals (never run).
    #[arg(long, conflicts_with_all = ["json", "diagram"])]
    ddl: bool,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum DiagramFormat {
    Mermaid,
    Dot,
    Svg,
}

#[derive(clap::Args)]
struct ColumnsArgs {
    /// Only this schema (repeatable).
    #[arg(long = "schema")]
    schemas: Vec<String>,
    /// One JSON array instead of the table.
    #[arg(long)]
    json: bool,
    /// Colours for a light or dark terminal background (auto: COLORFGBG,
    /// else dark).
    #[arg(long, value_enum, default_value = "auto")]
    theme: Theme,
    /// Colour output (auto: only on a terminal and without NO_COLOR).
    #[arg(long, value_enum, default_value = "auto")]
    color: ColorWhen,
    /// List a text, json or bytea column when at least this share of its
    /// sampled values are UUIDs.
    #[arg(long, default_value_t = 0.5, value_parser = parse_share)]
    min_share: f64,
}

#[derive(clap::Args)]
struct FindArgs {
    /// Values to find, in any spelling (canonical, braces, URN, 32 hex,
    /// Base32, UUID_192).
    values: Vec<String>,
    /// Read values from this file, one per line (up to 1 000 000; - for
    /// standard input).
    #[arg(long)]
    from: Option<String>,
    /// Only this schema (repeatable).
    #[arg(long = "schema")]
    schemas: Vec<String>,
    /// Only this column (repeatable): COLUMN, TABLE.COLUMN or
    /// SCHEMA.TABLE.COLUMN.
    #[arg(long = "column")]
    columns: Vec<String>,
    /// Only what indexes answer at once; no table is scanned.
    #[arg(long)]
    indexed_only: bool,
    /// Sessions scanning tables in parallel (one snapshot).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..=64))]
    jobs: u16,
    /// One JSON object per hit (NDJSON), as they are found.
    #[arg(long)]
    json: bool,
    /// Print the plan (each probe and scan with its SQL) and run nothing.
    #[arg(long)]
    plan: bool,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Theme {
    Light,
    Dark,
    Auto,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum ColorWhen {
    Auto,
    Always,
    Never,
}

fn parse_share(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(v) if (0.0..=1.0).contains(&v) => Ok(v),
        _ => Err("a share between 0 and 1".into()),
    }
}

/// Runs `db`: exit 0, or for `find` 0 when something was found and 1 when
/// nothing was.
pub fn run(args: Args) -> Result<ExitCode, UsageError> {
    if let Command::InstallSql(a) = &args.command {
        if a.offline() {
            return install_sql::print_script(a);
        }
    }
    if let (Some(dsn), 1, None) = (args.db.first(), args.db.len(), &args.fleet) {
        if uuidforge_mysql_db::connect::is_mysql(dsn) {
            return mysql::run(dsn, args.command);
        }
    }
    if let Command::ConvertUuid(_) = &args.command {
        return Err(UsageError::plain(
            "db convert-uuid is MariaDB's and MySQL's (expected --db mysql://… or mariadb://…); on PostgreSQL a uuid column has one form",
        ));
    }
    if args.db.len() > 1 || args.fleet.is_some() {
        return fleet::run(args);
    }
    let config = uuidforge_db::client::config(args.db.first().map(String::as_str))
        .map_err(|e| UsageError::plain(e.to_string()))?;
    if let Some(path) = args.pg_dump.clone() {
        uuidforge_change::backup::use_pg_dump(path);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let session = ReadOnly::open(&config).await.map_err(db_error)?;
        match args.command {
            Command::Columns(a) => columns(&session, a).await,
            Command::Find(a) => find(&session, &config, a).await,
            Command::Discover(a) => discover(&session, a).await,
            Command::Related(a) => related(&session, a).await,
            Command::Rename(a) => rename(session, &config, a).await,
            Command::MigrateKey(a) => migrate_key::run(session, &config, a).await,
            Command::Merge(a) => merge::merge(session, &config, a).await,
            Command::Unmerge(a) => merge::unmerge(session, &config, a).await,
            Command::InstallSql(a) => install_sql::run(session, &config, a).await,
            Command::SwitchGenerator(a) => switch_generator::run(session, &config, a).await,
            Command::ConvertUuid(_) => unreachable!("refused above"),
        }
    })
}

fn db_error(e: DbError) -> UsageError {
    UsageError::Db(e)
}

async fn columns(session: &ReadOnly, args: ColumnsArgs) -> Result<ExitCode, UsageError> {
    let found = exec::uuid_columns(session, &args.schemas, args.min_share)
        .await
        .map_err(db_error)?;
    if args.json {
        return print_json(&mut crate::term::stdout(), &found);
    }
    // The table writes colours of its own: names from the database are
    // escaped in it, rather than the whole output.
    let terminal = std::io::stdout().is_terminal();
    let mut out = std::io::stdout().lock();
    let colour = match args.color {
        ColorWhen::Always => true,
        ColorWhen::Never => false,
        ColorWhen::Auto => {
            std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    };
    let dark = match args.theme {
        Theme::Light => false,
        Theme::Dark => true,
        Theme::Auto => !background_is_light(),
    };
    write_table(&mut out, &found, colour.then_some(dark), terminal)?;
    Ok(ExitCode::SUCCESS)
}

/// `COLORFGBG` (`fg;bg`, set by rxvt, Konsole and others): backgrounds 7
/// and 15 are light. Unknown terminals are taken as dark.
fn background_is_light() -> bool {
    std::env::var("COLORFGBG")
        .ok()
        .and_then(|v| v.rsplit(';').next().and_then(|bg| bg.parse::<u8>().ok()))
        .is_some_and(|bg| bg == 7 || bg == 15)
}

/// `#rrggbb` as a 24-bit foreground escape.
fn ansi(hex: &str) -> String {
    let v = u32::from_str_radix(hex.trim_start_matches('#'), 16).unwrap_or(0);
    format!("\x1b[38;2;{};{};{}m", v >> 16, (v >> 8) & 0xff, v & 0xff)
}

fn write_table(
    out: &mut impl Write,
    rows: &[UuidColumn],
    dark: Option<bool>,
    terminal: bool,
) -> std::io::Result<()> {
    let shown = |text: String| {
        if terminal {
            crate::term::escaped(&text)
        } else {
            text
        }
    };
    let names: Vec<String> = rows
        .iter()
        .map(|c| shown(format!("{}.{}.{}", c.schema, c.table, c.column)))
        .collect();
    let width = names
        .iter()
        .map(|n| n.chars().count())
        .max()
        .unwrap_or(6)
        .max(6);
    let type_width = rows
        .iter()
        .map(|c| c.type_name.len())
        .max()
        .unwrap_or(4)
        .max(4);
    writeln!(
        out,
        "{:width$}  {:type_width$}  {:8}  index",
        "column", "type", "kind"
    )?;
    for (c, name) in rows.iter().zip(names) {
        let (start, end) = match dark {
            Some(d) => (
                ansi(if d { c.colour_dark } else { c.colour_light }),
                "\x1b[0m",
            ),
            None => (String::new(), ""),
        };
        let mut status = c.index.describe();
        if let Some(share) = c.sampled_share {
            status.push_str(&format!(
                " ({:.0}% of {} sampled values)",
                share * 100.0,
                c.sampled_values.unwrap_or(0)
            ));
        }
        if let Some(source) = &c.source {
            status.push_str(&format!(" (from {source})"));
        }
        for fk in &c.unindexed_foreign_keys {
            status.push_str(&format!(" [foreign key {fk} has no index]"));
        }
        for fk in &c.partly_indexed_foreign_keys {
            status.push_str(&format!(
                " [foreign key {fk} partly indexed: the index leads with some of its columns, not all]"
            ));
        }
        if let Some(a) = &c.default_advice {
            status.push_str(&format!(
                " [default calls {}, which orders per session: {};]",
                a.calls, a.fix
            ));
        }
        if let Some(d) = &c.key_default {
            status.push_str(&format!(" [new keys: {}]", d.description));
        }
        if let Some(t) = &c.v7_times {
            status.push_str(&format!(
                " [UUIDv7 times {} .. {}, {} sampled]",
                t.oldest, t.newest, t.sampled
            ));
        }
        let status = shown(status);
        let pad = width - name.chars().count();
        writeln!(
            out,
            "{start}{name}{end}{:pad$}  {:type_width$}  {:8}  {start}{status}{end}",
            "",
            shown(c.type_name.clone()),
            c.kind,
        )?;
    }
    Ok(())
}

/// The values `find` looks for: its arguments and the lines of `--from`.
fn needles_of(args: &FindArgs) -> Result<Needles, UsageError> {
    let mut inputs: Vec<(String, String)> = args
        .values
        .iter()
        .enumerate()
        .map(|(i, v)| (format!("value {}", i + 1), v.clone()))
        .collect();
    if let Some(file) = &args.from {
        let text = if file == "-" {
            std::io::read_to_string(std::io::stdin())?
        } else {
            std::fs::read_to_string(file)
                .map_err(|e| UsageError::plain(format!("--from: {file}: {e}")))?
        };
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        inputs.extend(
            text.lines()
                .enumerate()
                .map(|(i, l)| (format!("line {} of {file}", i + 1), l.to_string())),
        );
    }
    let needles = Needles::parse(inputs.iter().map(|(o, v)| (o.clone(), v.as_str())))
        .map_err(|e| UsageError::plain(e.to_string()))?;
    if needles.is_empty() {
        return Err(UsageError::plain(
            "find: no values (give them as arguments or with --from FILE)",
        ));
    }
    Ok(needles)
}

impl FindArgs {
    fn options(&self) -> FindOptions {
        FindOptions {
            schemas: self.schemas.clone(),
            indexed_only: self.indexed_only,
            columns: self.columns.clone(),
            ..FindOptions::default()
        }
    }
}

async fn find(
    session: &ReadOnly,
    config: &tokio_postgres::Config,
    args: FindArgs,
) -> Result<ExitCode, UsageError> {
    let needles = needles_of(&args)?;
    let options = args.options();
    if args.plan {
        return print_find_plan(session, &needles, &options, args.json).await;
    }
    let summary = find_printing(
        session,
        config,
        &needles,
        &options,
        args.jobs as usize,
        |hit| Some(find_hit_text(hit, args.json)),
    )
    .await?;
    for s in &summary.skipped {
        eprintln!("uuidforge: skipped {}.{}: {}", s.schema, s.table, s.reason);
    }
    eprintln!(
        "uuidforge: {} hit(s); {} index probe(s), {} table scan(s), {} skipped",
        summary.hits,
        summary.probes,
        summary.scans,
        summary.skipped.len()
    );
    Ok(if summary.hits > 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Runs the explorer's find with a progress bar on a terminal, printing
/// the line `line` makes of each hit (none when it returns `None`).
pub async fn find_printing(
    session: &ReadOnly,
    config: &tokio_postgres::Config,
    needles: &Needles,
    options: &FindOptions,
    jobs: usize,
    mut line: impl FnMut(&uuidforge_db::find::Hit) -> Option<String>,
) -> Result<exec::FindSummary, UsageError> {
    let bar = progress_bar("{spinner} scanning {bytes}/{total_bytes} {wide_bar} {eta}");
    let mut out = crate::term::stdout();
    let mut write_failure: Option<std::io::Error> = None;
    let summary = exec::find(
        session,
        config,
        needles,
        options,
        jobs,
        |hit| {
            if write_failure.is_some() {
                return;
            }
            if let Some(text) = line(&hit) {
                if let Err(e) = bar.suspend(|| writeln!(out, "{text}")) {
                    write_failure = Some(e);
                }
            }
        },
        |p| match p {
            exec::Progress::Planned { bytes, .. } => bar.set_length(bytes.max(0) as u64),
            exec::Progress::Done { bytes } => bar.inc(bytes.max(0) as u64),
        },
    )
    .await
    .map_err(db_error)?;
    bar.finish_and_clear();
    match write_failure {
        Some(e) => Err(e.into()),
        None => Ok(summary),
    }
}

/// A find hit as printed: its JSON object, or [`find_hit_line`].
pub fn find_hit_text(hit: &uuidforge_db::find::Hit, json: bool) -> String {
    if json {
        serde_json::to_string(hit).expect("a hit serializes")
    } else {
        find_hit_line(hit)
    }
}

/// A find hit as one line: `schema.table.column [path]<TAB>key<TAB>value`,
/// then `<TAB>v7 TIME` for a UUIDv7 and `<TAB>(JSON key)` for a key.
fn find_hit_line(hit: &uuidforge_db::find::Hit) -> String {
    format!(
        "{}.{}.{}{}\t{}\t{}{}{}",
        hit.schema,
        hit.table,
        hit.column,
        hit.path
            .as_deref()
            .map(|p| format!(" {p}"))
            .unwrap_or_default(),
        hit.key,
        hit.value,
        hit.v7_time
            .as_deref()
            .map(|t| format!("\tv7 {t}"))
            .unwrap_or_default(),
        if hit.role == "key" {
            "\t(JSON key)"
        } else {
            ""
        }
    )
}

/// A progress bar on a terminal's stderr (hidden otherwise).
pub fn progress_bar(template: &str) -> indicatif::ProgressBar {
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(0);
    bar.set_style(indicatif::ProgressStyle::with_template(template).expect("a valid template"));
    bar
}

async fn discover(session: &ReadOnly, args: DiscoverArgs) -> Result<ExitCode, UsageError> {
    let report = exec::discover(session, &args.schemas)
        .await
        .map_err(db_error)?;
    print_discover(&mut crate::term::stdout(), &report, &args)
}

/// A discovery report as `args` asks: JSON, a diagram, the DDL, or the
/// text report.
fn print_discover(
    out: &mut impl Write,
    report: &uuidforge_db::discover::Report,
    args: &DiscoverArgs,
) -> Result<ExitCode, UsageError> {
    use uuidforge_db::{diagram, discover};
    let report = report.clone();
    match (args.json, args.diagram, args.ddl) {
        (true, _, _) => return print_json(out, &report),
        (_, Some(DiagramFormat::Mermaid), _) => write!(out, "{}", diagram::mermaid(&report))?,
        (_, Some(DiagramFormat::Dot), _) => write!(out, "{}", diagram::dot(&report))?,
        (_, Some(DiagramFormat::Svg), _) => {
            write!(out, "{}", diagram::svg(&report).map_err(db_error)?)?
        }
        (_, None, true) => write!(out, "{}", discover::adoption_ddl(&report))?,
        (_, None, false) => {
            writeln!(out, "Primary keys ({}):", report.primary_keys.len())?;
            for pk in &report.primary_keys {
                writeln!(
                    out,
                    "  {}.{} ({})  {} rows{}",
                    pk.key.schema,
                    pk.key.table,
                    pk.key.columns.join(", "),
                    pk.rows,
                    if pk.declared {
                        "  [declared]"
                    } else {
                        "  [discovered: complete and unique]"
                    }
                )?;
            }
            writeln!(out, "Foreign keys ({}):", report.foreign_keys.len())?;
            for fk in &report.foreign_keys {
                writeln!(
                    out,
                    "  {}.{}({}) -> {}.{}({})  score {:.3}{}  {}",
                    fk.from.schema,
                    fk.from.table,
                    fk.from.columns.join(", "),
                    fk.to.schema,
                    fk.to.table,
                    fk.to.columns.join(", "),
                    fk.score,
                    if fk.declared { "  [declared]" } else { "" },
                    fk.evidence.join("; ")
                )?;
            }
            writeln!(out, "\n{}", discover::adoption_ddl(&report))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

async fn related(session: &ReadOnly, args: RelatedArgs) -> Result<ExitCode, UsageError> {
    let (target, by_name) = args.target();
    let found = exec::related(session, &target, by_name)
        .await
        .map_err(db_error)?;
    print_related(&mut crate::term::stdout(), &found, args.json)
}

impl RelatedArgs {
    /// The column (or name, with `--name`) and whether it is a name.
    fn target(&self) -> (String, bool) {
        match &self.name {
            Some(name) => (name.clone(), true),
            None => (self.column.clone().unwrap_or_default(), false),
        }
    }
}

/// Related columns as JSON or one scored line each with its evidence.
fn print_related(
    out: &mut impl Write,
    found: &[uuidforge_db::related::RelatedColumn],
    json: bool,
) -> Result<ExitCode, UsageError> {
    if json {
        return print_json(out, &found);
    }
    if found.is_empty() {
        writeln!(out, "No related columns.")?;
    }
    for r in found {
        writeln!(
            out,
            "{:.3}  {}.{}.{}  {} ({})",
            r.score, r.schema, r.table, r.column, r.type_name, r.relation_kind
        )?;
        for e in &r.evidence {
            writeln!(out, "         {:<13} {}", e.kind, e.detail)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

async fn rename(
    session: ReadOnly,
    config: &tokio_postgres::Config,
    args: RenameArgs,
) -> Result<ExitCode, UsageError> {
    let op = Rename {
        column: args.column.clone(),
        new_name: args.new_name.clone(),
        options: RenameOptions {
            related: args.related,
            also: args.also.clone(),
            views: args.views,
        },
    };
    let applied = |plan: &RenamePlan, _: &Applied| {
        vec![format!("applied: {} statement(s)", plan.statements.len())]
    };
    let lines = change::Lines {
        secret: &change::no_secret,
        applied: &applied,
    };
    change::run(session, config, &op, &args.change, lines).await
}

async fn print_find_plan(
    session: &ReadOnly,
    needles: &Needles,
    options: &FindOptions,
    json: bool,
) -> Result<ExitCode, UsageError> {
    let snapshot = session.snapshot().await.map_err(db_error)?;
    let plan = uuidforge_db::find::plan(&snapshot, needles, options);
    let mut out = crate::term::stdout();
    for step in plan.probes.iter().chain(&plan.scans) {
        let kind = if step.probe { "probe" } else { "scan" };
        let columns: Vec<&str> = step.columns.iter().map(|c| c.name.as_str()).collect();
        if json {
            let line = serde_json::json!({
                "step": kind,
                "schema": step.schema,
                "table": step.table,
                "columns": columns,
                "est_rows": step.est_rows,
                "bytes": step.bytes,
                "sql": step.query.sql,
                "parameters": step.query.params.len(),
            });
            writeln!(out, "{line}")?;
        } else {
            writeln!(
                out,
                "{kind} {}.{} ({})  ~{} rows\n  {}\n",
                step.schema,
                step.table,
                columns.join(", "),
                step.est_rows,
                step.query.sql
            )?;
        }
    }
    for s in &plan.skipped {
        if json {
            let line = serde_json::json!({"step": "skipped", "schema": s.schema, "table": s.table, "reason": s.reason});
            writeln!(out, "{line}")?;
        } else {
            writeln!(out, "skipped {}.{}: {}", s.schema, s.table, s.reason)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `--json` of the commands that print one document.
fn print_json(out: &mut impl Write, value: &impl serde::Serialize) -> Result<ExitCode, UsageError> {
    serde_json::to_writer_pretty(&mut *out, value).map_err(std::io::Error::from)?;
    writeln!(out)?;
    Ok(ExitCode::SUCCESS)
}
