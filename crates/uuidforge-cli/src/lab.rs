//! `uuidforge lab keys` (B15, C4): the key-locality lab on a real
//! PostgreSQL server. The matrix, statements, execution and recommendation
//! are `uuidforge_lab`'s; this reads the flags and writes the table,
//! the JSON and a chart per measure.

mod chart;

use crate::UsageError;
use std::path::PathBuf;
use uuidforge_db::client::{config, connect};
use uuidforge_lab::{CellResult, SCHEMA};

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

pub fn run(command: Command) -> Result<(), UsageError> {
    let Command::Keys(args) = command;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(UsageError::Io)?;
    runtime.block_on(keys(args))
}

async fn keys(args: KeysArgs) -> Result<(), UsageError> {
    let cfg = config(args.db.as_deref())
        .map_err(|e| UsageError::plain(format!("invalid value for '--db': {e}")))?;
    let c = connect(&cfg).await.map_err(UsageError::Db)?;
    // What the server offers, read only: nothing is made before --apply.
    let server = uuidforge_lab::run::survey(&c, false)
        .await
        .map_err(UsageError::Db)?;
    drop(c);
    let cells = uuidforge_lab::matrix(
        &args.writers,
        &args.counter_bits,
        &args.guard_bits,
        uuidforge_lab::ServerKinds {
            extension: server.uuidforge.is_some(),
            builtin: server.version_num >= 180_000,
        },
    )
    .map_err(UsageError::Db)?;
    if !args.apply {
        println!(
            "-- uuidforge lab keys: {} cells of {} rows; nothing runs without --apply",
            cells.len(),
            args.rows
        );
        println!("-- it makes and drops the schema {SCHEMA} (refusing one it did not make)");
        for note in &server.notes {
            println!("-- note: {note}");
        }
        for (i, cell) in cells.iter().enumerate() {
            println!(
                "-- cell {i}: {} with {} writer(s)",
                cell.key.label(),
                cell.writers
            );
        }
        let table = uuidforge_lab::table(0);
        println!(
            "{};",
            uuidforge_lab::create_table_sql(&cells[0], &table, "uuidv7")
        );
        println!("{};", uuidforge_lab::insert_sql(&cells[0], &table));
        println!("{};", uuidforge_lab::out_of_order_sql(&cells[0], &table));
        return Ok(());
    }
    let options = uuidforge_lab::run::Options {
        rows: args.rows,
        batch: args.batch,
        lookups: args.lookups,
        sort_rows: args.sort_rows,
    };
    let total = cells.len();
    let quiet = args.json;
    let mut done = |i: usize, r: &CellResult| {
        if !quiet {
            eprintln!(
                "uuidforge lab: {}/{total} {} × {} writer(s): {:.0} rows/s",
                i + 1,
                r.label,
                r.cell.writers,
                r.insert_rows_per_s
            );
        }
    };
    let report = uuidforge_lab::run::run(&cfg, &cells, &options, &mut done)
        .await
        .map_err(UsageError::Db)?;
    for note in &report.notes {
        eprintln!("uuidforge lab: note: {note}");
    }
    if let Some(dir) = &args.svg_dir {
        chart::write_all(dir, &report.cells).map_err(UsageError::plain)?;
    }
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
    print_table(&report.cells);
    if let Some(s) = &report.uuid192_sort {
        println!(
            "\nuuid192 over {} rows, without / with sort support: ORDER BY {:.0} / {:.0} ms ({:.2}×), CREATE INDEX {:.0} / {:.0} ms ({:.2}×)",
            s.rows,
            s.without_sortsupport_ms,
            s.with_sortsupport_ms,
            s.speedup,
            s.index_build_without_ms,
            s.index_build_with_ms,
            s.index_build_speedup
        );
    }
    match &report.recommendation {
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
