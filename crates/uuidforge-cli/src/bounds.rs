//! `uuidforge bounds` and `uuidforge partition`.

use crate::args::parse_time;
use crate::input::stdout;
use crate::UsageError;
use std::io::Write;
use uuidforge::bounds::{partition_ddl, partitions, quote_ident, v7_range};
use uuidforge::fmt::to_canonical_string;

/// Arguments of `bounds`.
#[derive(clap::Args)]
pub struct BoundsArgs {
    /// Start of the range, inclusive (RFC 3339, Unix ms or `now`).
    #[arg(long, value_parser = parse_time, allow_hyphen_values = true)]
    from: i64,
    /// End of the range, exclusive.
    #[arg(long, value_parser = parse_time, allow_hyphen_values = true)]
    to: i64,
    /// Column name for the SQL predicate.
    #[arg(long, default_value = "id")]
    column: String,
    /// JSON instead of text.
    #[arg(long)]
    json: bool,
}

fn ms(value: i64, flag: &str) -> Result<u64, UsageError> {
    u64::try_from(value).map_err(|_| {
        UsageError::plain(format!(
            "invalid value '{value}' for '--{flag}': expected a time from 1970 on"
        ))
    })
}

pub fn bounds(args: BoundsArgs) -> Result<(), UsageError> {
    let (from, to) = (ms(args.from, "from")?, ms(args.to, "to")?);
    let r = v7_range(from, to).map_err(|e| UsageError::plain(format!("'--{}': {e}", e.field)))?;
    let predicate = r.sql_predicate(&quote_ident(&args.column));
    let start = to_canonical_string(&r.start);
    let end = r.end.map(|e| to_canonical_string(&e));
    let mut out = stdout();
    if args.json {
        let j = serde_json::json!({"start": start, "end": end, "predicate": predicate, "from_ms": from, "to_ms": to});
        writeln!(out, "{j}")?;
    } else {
        writeln!(
            out,
            "start     {start}   (inclusive: lowest UUIDv7 of {from} ms)"
        )?;
        match &end {
            Some(e) => writeln!(out, "end       {e}   (exclusive: lowest UUIDv7 of {to} ms)")?,
            None => writeln!(
                out,
                "end       (none: the range reaches the end of UUIDv7 time)"
            )?,
        }
        writeln!(out, "predicate {predicate}")?;
    }
    out.flush()?;
    Ok(())
}

/// Arguments of `partition`.
#[derive(clap::Args)]
pub struct PartitionArgs {
    /// Key width: the left N bits of the UUIDv7 (17 ≈ 24.9-day partitions,
    /// 16 ≈ 49.7 days).
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=48))]
    bits: u8,
    /// First time to cover (RFC 3339, Unix ms or `now`).
    #[arg(long, value_parser = parse_time, allow_hyphen_values = true)]
    from: i64,
    /// End of the time to cover, exclusive.
    #[arg(long, value_parser = parse_time, allow_hyphen_values = true)]
    to: i64,
    /// Parent table (`PARTITION BY RANGE (id)`).
    #[arg(long, default_value = "events")]
    table: String,
    /// Schema of the table (empty for none).
    #[arg(long, default_value = "")]
    schema: String,
}

pub fn partition(args: PartitionArgs) -> Result<(), UsageError> {
    let (from, to) = (ms(args.from, "from")?, ms(args.to, "to")?);
    let parts = partitions(args.bits, from, to)
        .map_err(|e| UsageError::plain(format!("'--{}': {e}", e.field)))?;
    let ddl = partition_ddl(&args.schema, &args.table, args.bits, &parts);
    let mut out = stdout();
    for (p, statement) in parts.iter().zip(ddl) {
        let t = |ms: u64| uuidforge::timestamp::Timestamp::from_unix_ms(ms).to_string();
        writeln!(
            out,
            "-- key {:#x}: {} .. {}",
            p.key,
            t(p.from_ms),
            t(p.to_ms)
        )?;
        writeln!(out, "{statement}")?;
    }
    out.flush()?;
    Ok(())
}
