//! `uuidforge lab keys` (B15, C4): the key-locality lab on a real
//! PostgreSQL server. The matrix, statements and recommendation are
//! `uuidforge_db::lab`'s; this runs them with concurrent writers, times
//! them and writes the table, the JSON and a chart per measure.

mod chart;

use crate::UsageError;
use std::path::PathBuf;
use std::time::Instant;
use tokio_postgres::Client;
use uuid::Uuid;
use uuidforge::batch::{BatchSource, BatchSpec};
use uuidforge_db::client::{config, connect};
use uuidforge_db::ident::quote_ident;
use uuidforge_db::lab::{self, Cell, CellResult, KeyKind, SCHEMA};

/// `uuidforge lab …`.
#[derive(clap::Subcommand)]
pub enum Command {
    /// Benchmark key kinds, counter lengths and generator placement on a
    /// real server: inserts/s, index size and leaf density, WAL, disorder,
    /// point lookups, last-minute range scans, BRIN against the b-tree, and
    /// the counter length the numbers support. Works in its own schema
    /// `uuidforge_lab` (made and dropped): use a scratch database.
    Keys(KeysArgs),
}

fn list<T: std::str::FromStr>(text: &str) -> Result<Vec<T>, String> {
    text.split(',')
        .map(|p| {
            p.trim()
                .parse::<T>()
                .map_err(|_| format!("'{p}' is not a number; expected a comma-separated list"))
        })
        .collect()
}

/// Arguments of `lab keys`.
#[derive(clap::Args)]
pub struct KeysArgs {
    /// The database (URL or key=value, else PG* variables and ~/.pgpass).
    #[arg(long)]
    db: Option<String>,
    /// Rows per cell.
    #[arg(long, default_value_t = 200_000, value_parser = clap::value_parser!(u64).range(100..=100_000_000))]
    rows: u64,
    /// Concurrent writers (a cell per count).
    #[arg(long, default_value = "1,4,16", value_parser = list::<u32>)]
    writers: std::vec::Vec<u32>,
    /// Counter lengths of the per-writer UUIDv7 generators.
    #[arg(long, default_value = "0,4,8,12,18,26,42", value_parser = list::<u8>)]
    counter_bits: std::vec::Vec<u8>,
    /// Guard lengths (each with every counter at least as long).
    #[arg(long, default_value = "0,1,2", value_parser = list::<u8>)]
    guard_bits: std::vec::Vec<u8>,
    /// Rows per INSERT.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    batch: u64,
    /// Point lookups timed per kind (recent and random).
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u64).range(10..=1_000_000))]
    lookups: u64,
    /// Rows of the uuid192 sort comparison (0: skip it).
    #[arg(long, default_value_t = 1_000_000)]
    sort_rows: u64,
    /// Print the results as JSON.
    #[arg(long)]
    json: bool,
    /// Also write the JSON results to this file (the table still prints).
    #[arg(long)]
    json_out: Option<PathBuf>,
    /// Write an SVG chart per measure into this directory.
    #[arg(long)]
    svg_dir: Option<PathBuf>,
    /// Run it. Without: print the cells and the statements of the first.
    #[arg(long)]
    apply: bool,
}

/// Marks the schema as the lab's own, so an unrelated `uuidforge_lab` is
/// never dropped.
const MARK: &str = "uuidforge lab scratch schema: dropped and made again by uuidforge lab keys";

pub fn run(command: Command) -> Result<(), UsageError> {
    let Command::Keys(args) = command;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(UsageError::Io)?;
    runtime.block_on(keys(args))
}

fn db_error(e: impl std::fmt::Display) -> UsageError {
    UsageError::plain(format!("lab: {e}"))
}

/// The server's own message for a failed statement (tokio-postgres'
/// Display says only "db error").
fn server_message(e: &tokio_postgres::Error) -> String {
    e.as_db_error()
        .map_or_else(|| e.to_string(), |d| d.message().to_string())
}

fn pg(e: tokio_postgres::Error) -> UsageError {
    db_error(server_message(&e))
}

/// Statement parameters: every value is bound, never spliced into SQL.
type Params<'a> = &'a [&'a (dyn tokio_postgres::types::ToSql + Sync)];

async fn text(c: &Client, sql: &str) -> Result<String, UsageError> {
    text_with(c, sql, &[]).await
}

async fn text_with(c: &Client, sql: &str, params: Params<'_>) -> Result<String, UsageError> {
    let row = c
        .query_one(&format!("SELECT ({sql})::text"), params)
        .await
        .map_err(|e| db_error(format!("{sql}: {}", server_message(&e))))?;
    Ok(row.get::<_, Option<String>>(0).unwrap_or_default())
}

async fn number(c: &Client, sql: &str, params: Params<'_>) -> Result<f64, UsageError> {
    let t = text_with(c, sql, params).await?;
    t.parse::<f64>()
        .map_err(|_| db_error(format!("{sql}: expected a number, got '{t}'")))
}

/// Where the server's optional pieces are: the extension's schema (for
/// `uuidv7()`), whether it is server-wide, pgstattuple's schema.
struct Server {
    version: String,
    version_num: u32,
    uuidforge: Option<String>,
    server_wide: bool,
    pgstattuple: Option<String>,
    notes: Vec<String>,
}

async fn extension_schema(c: &Client, name: &str) -> Result<Option<String>, UsageError> {
    let s = text_with(
        c,
        "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = $1",
        &[&name],
    )
    .await?;
    Ok((!s.is_empty()).then_some(s))
}

async fn survey(c: &Client) -> Result<Server, UsageError> {
    let mut notes = Vec::new();
    for name in ["uuidforge", "pgstattuple"] {
        if extension_schema(c, name).await?.is_none() {
            if let Err(e) = c
                .batch_execute(&format!("CREATE EXTENSION IF NOT EXISTS {name}"))
                .await
            {
                notes.push(format!("extension {name} unavailable ({e})"));
            }
        }
    }
    let uuidforge = extension_schema(c, "uuidforge").await?;
    let server_wide = match &uuidforge {
        Some(s) => {
            text(
                c,
                &format!("SELECT {}.uuidv7_is_server_wide()", quote_ident(s)),
            )
            .await?
                == "true"
        }
        None => false,
    };
    if uuidforge.is_some() && !server_wide {
        notes.push(
            "uuidv7() orders per session here (uuidforge not in shared_preload_libraries)".into(),
        );
    }
    Ok(Server {
        version: text(c, "current_setting('server_version')").await?,
        version_num: text(c, "current_setting('server_version_num')")
            .await?
            .parse()
            .unwrap_or(0),
        uuidforge,
        server_wide,
        pgstattuple: extension_schema(c, "pgstattuple").await?,
        notes,
    })
}

async fn prepare_schema(c: &Client) -> Result<(), UsageError> {
    let exists = text_with(
        c,
        "SELECT count(*) FROM pg_namespace WHERE nspname = $1",
        &[&SCHEMA],
    )
    .await?;
    if exists != "0" {
        let comment = text_with(
            c,
            "SELECT obj_description($1::text::regnamespace, 'pg_namespace')",
            &[&quote_ident(SCHEMA)],
        )
        .await?;
        if comment != MARK {
            return Err(UsageError::plain(format!(
                "schema {SCHEMA} exists and is not the lab's (its comment is '{comment}'): rename it or use another database"
            )));
        }
    }
    c.batch_execute(&format!(
        "DROP SCHEMA IF EXISTS {s} CASCADE; CREATE SCHEMA {s}; COMMENT ON SCHEMA {s} IS {mark}",
        s = quote_ident(SCHEMA),
        mark = uuidforge_db::ident::quote_literal(MARK)
    ))
    .await
    .map_err(pg)
}

/// The keys a writer sends, from a generator of its own — the batch
/// source `uuidforge gen` uses — or None when the server makes them.
fn key_source(key: KeyKind) -> Option<BatchSource> {
    let spec = match key {
        KeyKind::BigintIdentity | KeyKind::ServerV7 | KeyKind::BuiltinV7 => return None,
        KeyKind::V4 => BatchSpec::new(4, None, None, None),
        k => BatchSpec::new(7, k.config(), None, None),
    };
    Some(
        spec.and_then(|s| s.owned_source())
            .expect("the lab's key kinds are valid"),
    )
}

/// Inserts `rows` with `cell.writers` connections at once; returns the
/// seconds taken and the generators' (overflows, max ahead).
async fn insert(
    cfg: &tokio_postgres::Config,
    cell: &Cell,
    table: &str,
    rows: u64,
    batch: u64,
) -> Result<(f64, Option<(u64, u64)>), UsageError> {
    let mut clients = Vec::new();
    for _ in 0..cell.writers {
        clients.push(connect(cfg).await.map_err(db_error)?);
    }
    let sql = lab::insert_sql(cell, table);
    let start = Instant::now();
    let mut tasks = Vec::new();
    for (w, client) in clients.into_iter().enumerate() {
        let share = rows / cell.writers as u64 + u64::from((w as u64) < rows % cell.writers as u64);
        let sql = sql.clone();
        let key = cell.key;
        tasks.push(tokio::spawn(async move {
            let statement = client.prepare(&sql).await?;
            let mut source = key_source(key);
            let mut keys = vec![Uuid::nil(); batch as usize];
            let payload: Vec<i32> = (0..batch as i32).collect();
            let mut left = share;
            while left > 0 {
                let n = left.min(batch) as usize;
                match &mut source {
                    Some(source) => {
                        // Counter overflows bump the timestamp: generation
                        // never fails under the lab's (bump) policy.
                        source.fill(&mut keys[..n]).expect("bump policy");
                        client
                            .execute(&statement, &[&&keys[..n], &&payload[..n]])
                            .await?;
                    }
                    None => {
                        client.execute(&statement, &[&(n as i32)]).await?;
                    }
                }
                left -= n as u64;
            }
            let telemetry = source
                .and_then(|s| s.telemetry())
                .map(|t| (t.overflows, t.max_ahead_ms));
            Ok::<_, tokio_postgres::Error>(telemetry)
        }));
    }
    let mut telemetry: Option<(u64, u64)> = None;
    for t in tasks {
        let got = t
            .await
            .map_err(|e| db_error(format!("a writer failed: {e}")))?
            .map_err(|e| {
                db_error(format!(
                    "a writer's insert into {table}: {}",
                    server_message(&e)
                ))
            })?;
        if let Some((o, a)) = got {
            let (so, sa) = telemetry.unwrap_or((0, 0));
            telemetry = Some((so + o, sa.max(a)));
        }
    }
    Ok((start.elapsed().as_secs_f64(), telemetry))
}

/// A range count: `SELECT count(*) … WHERE key >= $1 AND key <= $2` (v7
/// bounds) or `created_at >= $1` (a time, as text).
struct RangeCount {
    sql: String,
    bounds: Vec<Box<dyn tokio_postgres::types::ToSql + Sync + Send>>,
}

impl RangeCount {
    async fn time_best(&self, c: &Client) -> Result<(f64, u64), UsageError> {
        let params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = self
            .bounds
            .iter()
            .map(|b| b.as_ref() as &(dyn tokio_postgres::types::ToSql + Sync))
            .collect();
        time_best(c, &self.sql, &params).await
    }
}

/// Best of three, in ms.
async fn time_best(c: &Client, sql: &str, params: Params<'_>) -> Result<(f64, u64), UsageError> {
    let mut best = f64::INFINITY;
    let mut count = 0;
    for _ in 0..3 {
        let t = Instant::now();
        let row = c
            .query_one(sql, params)
            .await
            .map_err(|e| db_error(format!("{sql}: {}", server_message(&e))))?;
        best = best.min(t.elapsed().as_secs_f64() * 1000.0);
        count = row.get::<_, i64>(0) as u64;
    }
    Ok((best, count))
}

/// Timed point lookups of `keys_sql`'s keys (`$1` rows after `seq` `$2`,
/// drawn at random), µs, after one warm-up pass.
async fn lookups(
    c: &Client,
    function: &str,
    keys_sql: &str,
    after_seq: i64,
    count: i64,
) -> Result<Vec<f64>, UsageError> {
    let sql = format!("SELECT {function}(array({keys_sql}))");
    c.query_one(&sql, &[&after_seq, &count])
        .await
        .map_err(|e| db_error(format!("{sql}: {}", server_message(&e))))?;
    let row = c
        .query_one(&sql, &[&after_seq, &count])
        .await
        .map_err(|e| db_error(format!("{sql}: {}", server_message(&e))))?;
    Ok(row.get::<_, Vec<f64>>(0))
}

/// The two range counts: the last minute of keys, and the newest 1% of the
/// keys' time span — by the key's own bounds for v7 kinds, else by
/// `created_at` (the key carries no time).
async fn range_counts(c: &Client, cell: &Cell, table: &str) -> Result<[RangeCount; 2], UsageError> {
    if cell.key.is_v7() {
        let end = |order: &str| format!("SELECT id FROM {table} ORDER BY id {order} LIMIT 1");
        let ms = |t: String| -> Result<u64, UsageError> {
            let u: Uuid = t.parse().map_err(db_error)?;
            Ok(uuidforge::v7::unix_ms(&u))
        };
        let newest = ms(text(c, &end("DESC")).await?)?;
        let oldest = ms(text(c, &end("ASC")).await?)?;
        let upper = uuidforge::bounds::highest_v7(newest).map_err(db_error)?;
        let from = |start: u64| -> Result<RangeCount, UsageError> {
            let lower = uuidforge::bounds::lowest_v7(start).map_err(db_error)?;
            Ok(RangeCount {
                sql: format!("SELECT count(*) FROM {table} WHERE id >= $1 AND id <= $2"),
                bounds: vec![Box::new(lower), Box::new(upper)],
            })
        };
        Ok([
            from(newest.saturating_sub(60_000))?,
            from(newest - (newest - oldest) / 100)?,
        ])
    } else {
        // The cut-offs come back as text, exact to the microsecond.
        let cut = |expr: &str| format!("SELECT {expr} FROM {table}");
        let minute = text(c, &cut("max(created_at) - interval '1 minute'")).await?;
        let pct = text(
            c,
            &cut("max(created_at) - (max(created_at) - min(created_at)) / 100"),
        )
        .await?;
        let from = |t: String| RangeCount {
            sql: format!("SELECT count(*) FROM {table} WHERE created_at >= $1::text::timestamptz"),
            bounds: vec![Box::new(t)],
        };
        Ok([from(minute), from(pct)])
    }
}

/// The size of a relation named by `$1` (a quoted, qualified name).
const RELATION_SIZE: &str = "SELECT pg_relation_size($1::text::regclass)";

async fn measure_cell(
    c: &Client,
    cfg: &tokio_postgres::Config,
    server: &Server,
    index: usize,
    cell: &Cell,
    args: &KeysArgs,
) -> Result<CellResult, UsageError> {
    let table = lab::table(index);
    let uuidv7 = match &server.uuidforge {
        Some(s) => format!("{}.uuidv7", quote_ident(s)),
        None => "uuidv7".into(),
    };
    c.batch_execute(&lab::create_table_sql(cell, &table, &uuidv7))
        .await
        .map_err(pg)?;
    let function = format!(
        "{}.{}",
        quote_ident(SCHEMA),
        quote_ident(&format!("lookup_{index}"))
    );
    c.batch_execute(&lab::lookup_function_sql(cell, &table, &function))
        .await
        .map_err(pg)?;
    // Every cell starts right after a checkpoint, so each pays the same
    // full-page images in its WAL (superusers only; others skip it).
    let _ = c.batch_execute("CHECKPOINT").await;
    let wal_before = text(c, "SELECT pg_current_wal_lsn()").await?;
    let (seconds, telemetry) = insert(cfg, cell, &table, args.rows, args.batch).await?;
    let wal_bytes = number(
        c,
        "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::text::pg_lsn)",
        &[&wal_before],
    )
    .await? as u64;
    c.batch_execute(&format!("ANALYZE {table}"))
        .await
        .map_err(pg)?;
    let pk = lab::pk_qualified(&table);
    let index_bytes = number(c, RELATION_SIZE, &[&pk]).await? as u64;
    let (density, fragmentation) = match &server.pgstattuple {
        Some(s) => {
            let t = text_with(c, &lab::index_stats_sql(s), &[&pk]).await?;
            let parts: Vec<f64> = t.split(',').filter_map(|p| p.parse().ok()).collect();
            (parts.get(1).copied(), parts.get(2).copied())
        }
        None => (None, None),
    };
    let out_of_order = number(c, &lab::out_of_order_sql(cell, &table), &[]).await?;
    let recent_from = args.rows - (args.rows / 100).max(args.lookups.min(args.rows));
    let sample = format!("SELECT id FROM {table} WHERE seq > $1 ORDER BY random() LIMIT $2");
    let count = args.lookups as i64;
    let mut recent = lookups(c, &function, &sample, recent_from as i64, count).await?;
    let mut random = lookups(c, &function, &sample, 0, count).await?;
    let ranges = range_counts(c, cell, &table).await?;
    let (range_ms, range_rows) = ranges[0].time_best(c).await?;
    let (pct_ms, pct_rows) = ranges[1].time_best(c).await?;
    let (brin_bytes, brin_range_ms, brin_pct_ms) = if cell.key.is_v7() {
        let brin = format!(
            "{}.{}",
            quote_ident(SCHEMA),
            quote_ident(&format!("brin_{index}"))
        );
        c.batch_execute(&format!(
            "CREATE INDEX {} ON {table} USING brin (id)",
            quote_ident(&format!("brin_{index}"))
        ))
        .await
        .map_err(pg)?;
        let bytes = number(c, RELATION_SIZE, &[&brin]).await? as u64;
        // The b-tree is dropped inside a transaction that is rolled back,
        // so the counts can only use the BRIN index.
        c.batch_execute(&format!(
            "BEGIN; ALTER TABLE {table} DROP CONSTRAINT {}",
            quote_ident(&lab::pk_name(&table))
        ))
        .await
        .map_err(pg)?;
        let minute = ranges[0].time_best(c).await;
        let pct = ranges[1].time_best(c).await;
        c.batch_execute("ROLLBACK").await.map_err(pg)?;
        let ((minute_ms, minute_rows), (pct_brin_ms, pct_brin_rows)) = (minute?, pct?);
        if (minute_rows, pct_brin_rows) != (range_rows, pct_rows) {
            return Err(db_error(format!(
                "{table}: the BRIN counts {minute_rows}, {pct_brin_rows} differ from the b-tree's {range_rows}, {pct_rows}"
            )));
        }
        (Some(bytes), Some(minute_ms), Some(pct_brin_ms))
    } else {
        (None, None, None)
    };
    c.batch_execute(&format!("DROP TABLE {table}; DROP FUNCTION {function}"))
        .await
        .map_err(pg)?;
    Ok(CellResult {
        cell: *cell,
        label: cell.key.label(),
        rows: args.rows,
        insert_rows_per_s: args.rows as f64 / seconds,
        index_bytes,
        leaf_density_pct: density,
        leaf_fragmentation_pct: fragmentation,
        wal_bytes,
        out_of_order_share: out_of_order / args.rows as f64,
        lookup_recent_p50_us: lab::quantile(&mut recent, 0.5),
        lookup_recent_p99_us: lab::quantile(&mut recent, 0.99),
        lookup_random_p50_us: lab::quantile(&mut random, 0.5),
        lookup_random_p99_us: lab::quantile(&mut random, 0.99),
        range_last_minute_ms: range_ms,
        range_rows,
        range_newest_1pct_ms: pct_ms,
        range_newest_1pct_rows: pct_rows,
        brin_newest_1pct_ms: brin_pct_ms,
        overflows: telemetry.map(|t| t.0),
        max_ahead_ms: telemetry.map(|t| t.1),
        brin_bytes,
        brin_range_ms,
    })
}

/// `ORDER BY` over `uuid192` values with and without the sort support
/// function (best of three each, ms).
async fn uuid192_sort(
    c: &Client,
    server: &Server,
    rows: u64,
) -> Result<Option<serde_json::Value>, UsageError> {
    let Some(schema) = &server.uuidforge else {
        return Ok(None);
    };
    let s = quote_ident(schema);
    let table = format!("{}.sort192", quote_ident(SCHEMA));
    c.batch_execute(&format!(
        "CREATE TABLE {table} AS SELECT {s}.uuid192({s}.uuidv7(), g) AS k FROM generate_series(1, {rows}) g ORDER BY random(); ANALYZE {table}"
    ))
    .await
    .map_err(pg)?;
    let sort = format!("SELECT count(*) FROM (SELECT k FROM {table} ORDER BY k OFFSET 0) s");
    let build = format!(
        "CREATE INDEX sort192_k ON {table} (k); DROP INDEX {}.sort192_k",
        quote_ident(SCHEMA)
    );
    // One process sorting (parallel workers would hide the difference on
    // two cores), interleaved rounds, best of three each.
    c.batch_execute(
        "SET work_mem = '512MB'; SET maintenance_work_mem = '512MB'; \
         SET max_parallel_workers_per_gather = 0; SET max_parallel_maintenance_workers = 0",
    )
    .await
    .map_err(pg)?;
    let mut best = [[f64::INFINITY; 2]; 2];
    for _ in 0..3 {
        for (i, setting) in ["off", "on"].iter().enumerate() {
            c.batch_execute(&format!("SET uuidforge.uuid192_sortsupport = {setting}"))
                .await
                .map_err(pg)?;
            let t = Instant::now();
            c.query_one(&sort, &[]).await.map_err(pg)?;
            best[0][i] = best[0][i].min(t.elapsed().as_secs_f64() * 1000.0);
            let t = Instant::now();
            c.batch_execute(&build).await.map_err(pg)?;
            best[1][i] = best[1][i].min(t.elapsed().as_secs_f64() * 1000.0);
        }
    }
    c.batch_execute(&format!(
        "RESET uuidforge.uuid192_sortsupport; RESET work_mem; RESET maintenance_work_mem; \
         RESET max_parallel_workers_per_gather; RESET max_parallel_maintenance_workers; DROP TABLE {table}"
    ))
    .await
    .map_err(pg)?;
    Ok(Some(serde_json::json!({
        "rows": rows,
        "without_sortsupport_ms": best[0][0],
        "with_sortsupport_ms": best[0][1],
        "speedup": best[0][0] / best[0][1],
        "index_build_without_ms": best[1][0],
        "index_build_with_ms": best[1][1],
        "index_build_speedup": best[1][0] / best[1][1],
    })))
}

async fn keys(args: KeysArgs) -> Result<(), UsageError> {
    let cfg = config(args.db.as_deref())
        .map_err(|e| UsageError::plain(format!("invalid value for '--db': {e}")))?;
    let c = connect(&cfg).await.map_err(db_error)?;
    let server = survey(&c).await?;
    let cells = lab::matrix(
        &args.writers,
        &args.counter_bits,
        &args.guard_bits,
        lab::ServerKinds {
            extension: server.uuidforge.is_some(),
            builtin: server.version_num >= 180_000,
        },
    )
    .map_err(UsageError::plain)?;
    if !args.apply {
        println!(
            "-- uuidforge lab keys: {} cells of {} rows; nothing runs without --apply",
            cells.len(),
            args.rows
        );
        println!("-- it makes and drops the schema {SCHEMA} (refusing one it did not make)");
        for (i, cell) in cells.iter().enumerate() {
            println!(
                "-- cell {i}: {} with {} writer(s)",
                cell.key.label(),
                cell.writers
            );
        }
        let table = lab::table(0);
        println!("{};", lab::create_table_sql(&cells[0], &table, "uuidv7"));
        println!("{};", lab::insert_sql(&cells[0], &table));
        println!("{};", lab::out_of_order_sql(&cells[0], &table));
        return Ok(());
    }
    prepare_schema(&c).await?;
    for note in &server.notes {
        eprintln!("uuidforge lab: note: {note}");
    }
    let mut results = Vec::new();
    for (i, cell) in cells.iter().enumerate() {
        let r = measure_cell(&c, &cfg, &server, i, cell, &args).await?;
        if !args.json {
            eprintln!(
                "uuidforge lab: {}/{} {} × {} writer(s): {:.0} rows/s",
                i + 1,
                cells.len(),
                r.label,
                cell.writers,
                r.insert_rows_per_s
            );
        }
        results.push(r);
    }
    let sort = if args.sort_rows > 0 {
        uuid192_sort(&c, &server, args.sort_rows).await?
    } else {
        None
    };
    c.batch_execute(&format!("DROP SCHEMA {} CASCADE", quote_ident(SCHEMA)))
        .await
        .map_err(pg)?;
    let recommendation = lab::recommend(&results);
    if let Some(dir) = &args.svg_dir {
        chart::write_all(dir, &results).map_err(UsageError::plain)?;
    }
    let report = serde_json::json!({
        "server_version": server.version,
        "server_wide_uuidv7": server.server_wide,
        "notes": server.notes,
        "rows_per_cell": args.rows,
        "cells": results,
        "recommendation": recommendation,
        "uuid192_sort": sort,
    });
    let json = serde_json::to_string_pretty(&report).expect("JSON");
    if let Some(path) = &args.json_out {
        std::fs::write(path, &json).map_err(|e| {
            UsageError::plain(format!(
                "invalid value '{}' for '--json-out': {e}",
                path.display()
            ))
        })?;
    }
    if args.json {
        println!("{json}");
        return Ok(());
    }
    print_table(&results);
    if let Some(s) = sort {
        println!(
            "\nuuid192 over {} rows, without / with sort support: ORDER BY {:.0} / {:.0} ms ({:.2}×), CREATE INDEX {:.0} / {:.0} ms ({:.2}×)",
            s["rows"],
            s["without_sortsupport_ms"].as_f64().unwrap_or(0.0),
            s["with_sortsupport_ms"].as_f64().unwrap_or(0.0),
            s["speedup"].as_f64().unwrap_or(0.0),
            s["index_build_without_ms"].as_f64().unwrap_or(0.0),
            s["index_build_with_ms"].as_f64().unwrap_or(0.0),
            s["index_build_speedup"].as_f64().unwrap_or(0.0)
        );
    }
    match recommendation {
        Some(r) => println!(
            "\nrecommendation: counter_bits = {}, guard_bits = {}\n  {}",
            r.counter_bits, r.guard_bits, r.evidence
        ),
        None => println!("\nrecommendation: none (no per-writer generator cells)"),
    }
    Ok(())
}

fn print_table(results: &[CellResult]) {
    println!(
        "| key | writers | rows/s | PK MiB | leaf % | WAL MiB | out of order | recent p50/p99 µs | random p50/p99 µs | last min ms | newest 1% ms | BRIN KiB / min ms / 1% ms | overflows | ahead ms |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for r in results {
        println!(
            "| {} | {} | {:.0} | {:.1} | {} | {:.1} | {:.2}% | {:.1}/{:.1} | {:.1}/{:.1} | {:.1} ({} rows) | {:.1} ({} rows) | {} | {} | {} |",
            r.label,
            r.cell.writers,
            r.insert_rows_per_s,
            r.index_bytes as f64 / 1048576.0,
            r.leaf_density_pct.map_or("–".into(), |d| format!("{d:.1}")),
            r.wal_bytes as f64 / 1048576.0,
            r.out_of_order_share * 100.0,
            r.lookup_recent_p50_us,
            r.lookup_recent_p99_us,
            r.lookup_random_p50_us,
            r.lookup_random_p99_us,
            r.range_last_minute_ms,
            r.range_rows,
            r.range_newest_1pct_ms,
            r.range_newest_1pct_rows,
            match (r.brin_bytes, r.brin_range_ms, r.brin_newest_1pct_ms) {
                (Some(b), Some(ms), Some(pct)) => {
                    format!("{:.0} / {ms:.1} / {pct:.1}", b as f64 / 1024.0)
                }
                _ => "–".into(),
            },
            r.overflows.map_or("–".into(), |o| o.to_string()),
            r.max_ahead_ms.map_or("–".into(), |a| a.to_string()),
        );
    }
}
