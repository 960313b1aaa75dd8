//! The lab's executor on a real server: the schema of its own (made and
//! dropped, never one it did not make), per cell a table filled by
//! concurrent writers, timed, measured (index size and density, WAL,
//! disorder, point lookups, range counts through the b-tree and through a
//! BRIN index alone) and dropped; the `uuid192` sort comparison; the
//! recommendation. Nothing is made without [`run`] (`--apply`): [`survey`]
//! only reads what the server has.

use super::{Cell, CellResult, KeyKind, Recommendation, SCHEMA};
use serde::Serialize;
use std::time::Instant;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Config};
use uuid::Uuid;
use uuidforge::batch::{BatchSource, BatchSpec};
use uuidforge_db::client::{connect, DbError};
use uuidforge_ident::{quote_ident, quote_literal};

/// Marks the schema as the lab's own, so an unrelated `uuidforge_lab` is
/// never dropped.
const MARK: &str = "uuidforge lab scratch schema: dropped and made again by uuidforge lab keys";

/// What a run measures.
#[derive(Debug, Clone)]
pub struct Options {
    /// Rows per cell.
    pub rows: u64,
    /// Rows per INSERT.
    pub batch: u64,
    /// Point lookups timed per kind (recent and random).
    pub lookups: u64,
    /// Rows of the uuid192 sort comparison (0: none).
    pub sort_rows: u64,
}

/// What the server offers the lab.
#[derive(Debug, Clone, Serialize)]
pub struct Server {
    /// `server_version`.
    pub version: String,
    /// `server_version_num`.
    pub version_num: u32,
    /// The uuidforge extension's schema, when installed (or to be).
    pub uuidforge: Option<String>,
    /// Whether its `uuidv7()` orders server-wide (preloaded).
    pub server_wide: bool,
    /// pgstattuple's schema, when installed (or to be).
    pub pgstattuple: Option<String>,
    /// What the run cannot measure, and why.
    pub notes: Vec<String>,
}

/// The `uuid192` sort comparison.
#[derive(Debug, Clone, Serialize)]
pub struct SortReport {
    /// Rows sorted.
    pub rows: u64,
    /// `ORDER BY` without the sort support function, ms (best of three).
    pub without_sortsupport_ms: f64,
    /// With it, ms.
    pub with_sortsupport_ms: f64,
    /// The ratio.
    pub speedup: f64,
    /// `CREATE INDEX` without, ms.
    pub index_build_without_ms: f64,
    /// With, ms.
    pub index_build_with_ms: f64,
    /// The ratio.
    pub index_build_speedup: f64,
}

/// What a run measured.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// `server_version`.
    pub server_version: String,
    /// Whether the extension's `uuidv7()` ordered server-wide.
    pub server_wide_uuidv7: bool,
    /// What it could not measure.
    pub notes: Vec<String>,
    /// Rows per cell.
    pub rows_per_cell: u64,
    /// Every cell.
    pub cells: Vec<CellResult>,
    /// The counter length the numbers support.
    pub recommendation: Option<Recommendation>,
    /// The `uuid192` sort comparison.
    pub uuid192_sort: Option<SortReport>,
}

fn server_error(context: impl Into<String>) -> impl FnOnce(tokio_postgres::Error) -> DbError {
    let context = context.into();
    move |e| uuidforge_db::client::driver_error(context, e)
}

/// The first column of `sql`'s one row, as text.
async fn text(c: &Client, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<String, DbError> {
    let row = c
        .query_one(&format!("SELECT ({sql})::text"), params)
        .await
        .map_err(server_error(sql))?;
    Ok(row.get::<_, Option<String>>(0).unwrap_or_default())
}

async fn number(c: &Client, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<f64, DbError> {
    let t = text(c, sql, params).await?;
    t.parse::<f64>()
        .map_err(|_| DbError::unreadable(sql, format!("expected a number, got '{t}'")))
}

async fn extension_schema(c: &Client, name: &str) -> Result<Option<String>, DbError> {
    let s = text(
        c,
        "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = $1",
        &[&name],
    )
    .await?;
    Ok((!s.is_empty()).then_some(s))
}

/// What the server offers, read only; with `install`, the extensions it
/// has but the database lacks are made first (the run's first change).
pub async fn survey(c: &Client, install: bool) -> Result<Server, DbError> {
    let mut notes = Vec::new();
    let would = |name: &str| format!("{name} (made by the run)");
    let mut schemas = Vec::new();
    for name in ["uuidforge", "pgstattuple"] {
        let mut schema = extension_schema(c, name).await?;
        if schema.is_none() {
            let available = text(
                c,
                "SELECT count(*) FROM pg_available_extensions WHERE name = $1",
                &[&name],
            )
            .await?
                != "0";
            if !available {
                notes.push(format!("extension {name} unavailable on this server"));
            } else if install {
                if let Err(e) = c
                    .batch_execute(&format!("CREATE EXTENSION IF NOT EXISTS {name}"))
                    .await
                {
                    notes.push(format!("extension {name} unavailable ({e})"));
                }
                schema = extension_schema(c, name).await?;
            } else {
                schema = Some(would(name));
            }
        }
        schemas.push(schema);
    }
    // pgstatindex is granted to pg_stat_scan_tables, not to every role:
    // installed but not executable by this one is as good as missing.
    if let Some(schema) = schemas[1].clone().filter(|s| *s != would("pgstattuple")) {
        let allowed = text(
            c,
            "SELECT has_function_privilege(format('%I.pgstatindex(regclass)', $1::text), 'EXECUTE')",
            &[&schema],
        )
        .await?;
        if allowed != "true" {
            notes.push(format!(
                "pgstattuple's pgstatindex is not granted to {} (a member of pg_stat_scan_tables may run it): leaf density left out",
                text(c, "SELECT current_user::text", &[]).await?
            ));
            schemas[1] = None;
        }
    }
    let uuidforge = schemas[0].clone();
    let server_wide = match uuidforge.as_deref().filter(|_| install) {
        Some(s) => {
            text(
                c,
                &format!("SELECT {}.uuidv7_is_server_wide()", quote_ident(s)),
                &[],
            )
            .await?
                == "true"
        }
        None => false,
    };
    if uuidforge.is_some() && install && !server_wide {
        notes.push(
            "uuidv7() orders per session here (uuidforge not in shared_preload_libraries)".into(),
        );
    }
    Ok(Server {
        version: text(c, "current_setting('server_version')", &[]).await?,
        version_num: text(c, "current_setting('server_version_num')", &[])
            .await?
            .parse()
            .unwrap_or(0),
        uuidforge,
        server_wide,
        pgstattuple: schemas[1].clone(),
        notes,
    })
}

/// The lab's schema made again; refused when one of that name is not the
/// lab's.
async fn prepare_schema(c: &Client) -> Result<(), DbError> {
    let exists = text(
        c,
        "SELECT count(*) FROM pg_namespace WHERE nspname = $1",
        &[&SCHEMA],
    )
    .await?;
    if exists != "0" {
        let comment = text(
            c,
            "SELECT obj_description($1::text::regnamespace, 'pg_namespace')",
            &[&quote_ident(SCHEMA)],
        )
        .await?;
        if comment != MARK {
            return Err(DbError::refused(
                "lab",
                format!("schema {SCHEMA} exists and is not the lab's (its comment is '{comment}'): rename it or use another database"),
            ));
        }
    }
    c.batch_execute(&format!(
        "DROP SCHEMA IF EXISTS {s} CASCADE; CREATE SCHEMA {s}; COMMENT ON SCHEMA {s} IS {mark}",
        s = quote_ident(SCHEMA),
        mark = quote_literal(MARK)
    ))
    .await
    .map_err(server_error("make the lab's schema"))
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

/// Inserts `rows` with `cell.writers` connections at once; the seconds
/// taken and the generators' (overflows, max ahead).
async fn insert(
    config: &Config,
    cell: &Cell,
    table: &str,
    (rows, batch): (u64, u64),
) -> Result<(f64, Option<(u64, u64)>), DbError> {
    let mut clients = Vec::new();
    for _ in 0..cell.writers {
        clients.push(connect(config).await?);
    }
    let sql = super::insert_sql(cell, table);
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
            .map_err(|e| DbError::tool("lab", format!("a writer failed: {e}")))?
            .map_err(server_error(format!("a writer's insert into {table}")))?;
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
    bounds: Vec<Box<dyn ToSql + Sync + Send>>,
}

impl RangeCount {
    /// Best of three, in ms, and the count.
    async fn time_best(&self, c: &Client) -> Result<(f64, u64), DbError> {
        let params: Vec<&(dyn ToSql + Sync)> = self
            .bounds
            .iter()
            .map(|b| b.as_ref() as &(dyn ToSql + Sync))
            .collect();
        let mut best = f64::INFINITY;
        let mut count = 0;
        for _ in 0..3 {
            let t = Instant::now();
            let row = c
                .query_one(&self.sql, &params)
                .await
                .map_err(server_error(self.sql.clone()))?;
            best = best.min(t.elapsed().as_secs_f64() * 1000.0);
            count = row.get::<_, i64>(0) as u64;
        }
        Ok((best, count))
    }
}

/// Timed point lookups of `keys_sql`'s keys (`$1` rows after `seq` `$2`,
/// drawn at random), µs, after one warm-up pass.
async fn lookups(
    c: &Client,
    function: &str,
    keys_sql: &str,
    (after_seq, count): (i64, i64),
) -> Result<Vec<f64>, DbError> {
    let sql = format!("SELECT {function}(array({keys_sql}))");
    c.query_one(&sql, &[&after_seq, &count])
        .await
        .map_err(server_error(sql.clone()))?;
    let row = c
        .query_one(&sql, &[&after_seq, &count])
        .await
        .map_err(server_error(sql.clone()))?;
    Ok(row.get::<_, Vec<f64>>(0))
}

/// The two range counts: the last minute of keys, and the newest 1% of the
/// keys' time span — by the key's own bounds for v7 kinds, else by
/// `created_at` (the key carries no time).
async fn range_counts(c: &Client, cell: &Cell, table: &str) -> Result<[RangeCount; 2], DbError> {
    if cell.key.is_v7() {
        let end = |order: &str| format!("SELECT id FROM {table} ORDER BY id {order} LIMIT 1");
        let ms = |t: String| -> Result<u64, DbError> {
            let u: Uuid = t
                .parse()
                .map_err(|e| DbError::unreadable("lab", format!("{t}: {e}")))?;
            Ok(uuidforge::v7::unix_ms(&u))
        };
        let newest = ms(text(c, &end("DESC"), &[]).await?)?;
        let oldest = ms(text(c, &end("ASC"), &[]).await?)?;
        let upper = uuidforge::bounds::highest_v7(newest)
            .map_err(|e| DbError::unreadable("lab", e.to_string()))?;
        let from = |start: u64| -> Result<RangeCount, DbError> {
            let lower = uuidforge::bounds::lowest_v7(start)
                .map_err(|e| DbError::unreadable("lab", e.to_string()))?;
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
        let minute = text(c, &cut("max(created_at) - interval '1 minute'"), &[]).await?;
        let pct = text(
            c,
            &cut("max(created_at) - (max(created_at) - min(created_at)) / 100"),
            &[],
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

/// The two range counts again through a BRIN index alone (the b-tree
/// dropped in a transaction rolled back): its size and the times.
async fn brin(
    c: &Client,
    (index, table): (usize, &str),
    ranges: &[RangeCount; 2],
    expected: (u64, u64),
) -> Result<(u64, f64, f64), DbError> {
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
    .map_err(server_error("build the BRIN index"))?;
    let bytes = number(c, RELATION_SIZE, &[&brin]).await? as u64;
    c.batch_execute(&format!(
        "BEGIN; ALTER TABLE {table} DROP CONSTRAINT {}",
        quote_ident(&super::pk_name(table))
    ))
    .await
    .map_err(server_error("set the b-tree aside"))?;
    let minute = ranges[0].time_best(c).await;
    let pct = ranges[1].time_best(c).await;
    c.batch_execute("ROLLBACK")
        .await
        .map_err(server_error("put the b-tree back"))?;
    let ((minute_ms, minute_rows), (pct_ms, pct_rows)) = (minute?, pct?);
    if (minute_rows, pct_rows) != expected {
        return Err(DbError::unreadable(
            "lab",
            format!(
                "{table}: the BRIN counts {minute_rows}, {pct_rows} differ from the b-tree's {}, {}",
                expected.0, expected.1
            ),
        ));
    }
    Ok((bytes, minute_ms, pct_ms))
}

/// Cell `index` measured on `c` (writers connect with `config`).
async fn measure_cell(
    (c, config): (&Client, &Config),
    server: &Server,
    (index, cell): (usize, &Cell),
    options: &Options,
) -> Result<CellResult, DbError> {
    let table = super::table(index);
    let uuidv7 = match &server.uuidforge {
        Some(s) => format!("{}.uuidv7", quote_ident(s)),
        None => "uuidv7".into(),
    };
    c.batch_execute(&super::create_table_sql(cell, &table, &uuidv7))
        .await
        .map_err(server_error("make the cell's table"))?;
    let function = format!(
        "{}.{}",
        quote_ident(SCHEMA),
        quote_ident(&format!("lookup_{index}"))
    );
    c.batch_execute(&super::lookup_function_sql(cell, &table, &function))
        .await
        .map_err(server_error("make the lookup function"))?;
    // Every cell starts right after a checkpoint, so each pays the same
    // full-page images in its WAL (superusers only; others skip it).
    let _ = c.batch_execute("CHECKPOINT").await;
    let wal_before = text(c, "SELECT pg_current_wal_lsn()", &[]).await?;
    let (seconds, telemetry) = insert(config, cell, &table, (options.rows, options.batch)).await?;
    let wal_bytes = number(
        c,
        "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::text::pg_lsn)",
        &[&wal_before],
    )
    .await? as u64;
    c.batch_execute(&format!("ANALYZE {table}"))
        .await
        .map_err(server_error("analyze"))?;
    let pk = super::pk_qualified(&table);
    let index_bytes = number(c, RELATION_SIZE, &[&pk]).await? as u64;
    let (density, fragmentation) = match &server.pgstattuple {
        Some(s) => {
            let t = text(c, &super::index_stats_sql(s), &[&pk]).await?;
            let parts: Vec<f64> = t.split(',').filter_map(|p| p.parse().ok()).collect();
            (parts.get(1).copied(), parts.get(2).copied())
        }
        None => (None, None),
    };
    let out_of_order = number(c, &super::out_of_order_sql(cell, &table), &[]).await?;
    let recent_from = options.rows - (options.rows / 100).max(options.lookups.min(options.rows));
    let sample = format!("SELECT id FROM {table} WHERE seq > $1 ORDER BY random() LIMIT $2");
    let count = options.lookups as i64;
    let mut recent = lookups(c, &function, &sample, (recent_from as i64, count)).await?;
    let mut random = lookups(c, &function, &sample, (0, count)).await?;
    let ranges = range_counts(c, cell, &table).await?;
    let (range_ms, range_rows) = ranges[0].time_best(c).await?;
    let (pct_ms, pct_rows) = ranges[1].time_best(c).await?;
    let brin = if cell.key.is_v7() {
        Some(brin(c, (index, &table), &ranges, (range_rows, pct_rows)).await?)
    } else {
        None
    };
    c.batch_execute(&format!("DROP TABLE {table}; DROP FUNCTION {function}"))
        .await
        .map_err(server_error("drop the cell's table"))?;
    Ok(CellResult {
        cell: *cell,
        label: cell.key.label(),
        rows: options.rows,
        insert_rows_per_s: options.rows as f64 / seconds,
        index_bytes,
        leaf_density_pct: density,
        leaf_fragmentation_pct: fragmentation,
        wal_bytes,
        out_of_order_share: out_of_order / options.rows as f64,
        lookup_recent_p50_us: super::quantile(&mut recent, 0.5),
        lookup_recent_p99_us: super::quantile(&mut recent, 0.99),
        lookup_random_p50_us: super::quantile(&mut random, 0.5),
        lookup_random_p99_us: super::quantile(&mut random, 0.99),
        range_last_minute_ms: range_ms,
        range_rows,
        range_newest_1pct_ms: pct_ms,
        range_newest_1pct_rows: pct_rows,
        brin_newest_1pct_ms: brin.map(|b| b.2),
        overflows: telemetry.map(|t| t.0),
        max_ahead_ms: telemetry.map(|t| t.1),
        brin_bytes: brin.map(|b| b.0),
        brin_range_ms: brin.map(|b| b.1),
    })
}

/// `ORDER BY` over `uuid192` values with and without the sort support
/// function (best of three each, ms).
async fn uuid192_sort(
    c: &Client,
    server: &Server,
    rows: u64,
) -> Result<Option<SortReport>, DbError> {
    let Some(schema) = &server.uuidforge else {
        return Ok(None);
    };
    let s = quote_ident(schema);
    let table = format!("{}.sort192", quote_ident(SCHEMA));
    let run = |sql: String| async move {
        c.batch_execute(&sql)
            .await
            .map_err(server_error("the uuid192 sort comparison"))
    };
    run(format!(
        "CREATE TABLE {table} AS SELECT {s}.uuid192({s}.uuidv7(), g) AS k FROM generate_series(1, {rows}) g ORDER BY random(); ANALYZE {table}"
    ))
    .await?;
    let sort = format!("SELECT count(*) FROM (SELECT k FROM {table} ORDER BY k OFFSET 0) s");
    let build = format!(
        "CREATE INDEX sort192_k ON {table} (k); DROP INDEX {}.sort192_k",
        quote_ident(SCHEMA)
    );
    // One process sorting (parallel workers would hide the difference on
    // two cores), interleaved rounds, best of three each.
    run(
        "SET work_mem = '512MB'; SET maintenance_work_mem = '512MB'; \
         SET max_parallel_workers_per_gather = 0; SET max_parallel_maintenance_workers = 0"
            .to_string(),
    )
    .await?;
    let mut best = [[f64::INFINITY; 2]; 2];
    for _ in 0..3 {
        for (i, setting) in ["off", "on"].iter().enumerate() {
            run(format!("SET uuidforge.uuid192_sortsupport = {setting}")).await?;
            let t = Instant::now();
            c.query_one(&sort, &[])
                .await
                .map_err(server_error("the uuid192 sort"))?;
            best[0][i] = best[0][i].min(t.elapsed().as_secs_f64() * 1000.0);
            let t = Instant::now();
            run(build.clone()).await?;
            best[1][i] = best[1][i].min(t.elapsed().as_secs_f64() * 1000.0);
        }
    }
    run(format!(
        "RESET uuidforge.uuid192_sortsupport; RESET work_mem; RESET maintenance_work_mem; \
         RESET max_parallel_workers_per_gather; RESET max_parallel_maintenance_workers; DROP TABLE {table}"
    ))
    .await?;
    Ok(Some(SortReport {
        rows,
        without_sortsupport_ms: best[0][0],
        with_sortsupport_ms: best[0][1],
        speedup: best[0][0] / best[0][1],
        index_build_without_ms: best[1][0],
        index_build_with_ms: best[1][1],
        index_build_speedup: best[1][0] / best[1][1],
    }))
}

/// Runs the lab: the schema made, every cell measured (each told to
/// `done` as it ends), the sort comparison, the schema dropped.
pub async fn run(
    config: &Config,
    cells: &[Cell],
    options: &Options,
    done: &mut (dyn FnMut(usize, &CellResult) + Send),
) -> Result<Report, DbError> {
    let c = connect(config).await?;
    let server = survey(&c, true).await?;
    prepare_schema(&c).await?;
    let mut results = Vec::new();
    for (i, cell) in cells.iter().enumerate() {
        let r = measure_cell((&c, config), &server, (i, cell), options).await?;
        done(i, &r);
        results.push(r);
    }
    let sort = if options.sort_rows > 0 {
        uuid192_sort(&c, &server, options.sort_rows).await?
    } else {
        None
    };
    c.batch_execute(&format!("DROP SCHEMA {} CASCADE", quote_ident(SCHEMA)))
        .await
        .map_err(server_error("drop the lab's schema"))?;
    Ok(Report {
        server_version: server.version,
        server_wide_uuidv7: server.server_wide,
        notes: server.notes,
        rows_per_cell: options.rows,
        recommendation: super::recommend(&results),
        cells: results,
        uuid192_sort: sort,
    })
}
