//! `uuidforge shard-layout` (E11): a UUIDv8 layout for sharded systems from
//! the node count and rate, its bit diagram and its collision odds; the
//! file it writes is what `gen --version 8 --shard-layout` and the SQL
//! setting `uuidforge.shard_layout` read.

use crate::UsageError;
use std::path::PathBuf;
use uuidforge::generator::ShardLayout;

/// Arguments of `shard-layout`.
#[derive(clap::Args)]
pub struct Args {
    /// Bits for the node id (0..=64): room for 2^N nodes.
    #[arg(long)]
    node_bits: u8,
    /// UUIDs per second one node makes at its peak.
    #[arg(long)]
    rate: u64,
    /// Nodes in the system.
    #[arg(long, default_value_t = 1)]
    nodes: u64,
    /// Counter bits (default: enough for the rate's UUIDs per millisecond,
    /// twice over, since each millisecond's counter starts below half).
    #[arg(long)]
    counter_bits: Option<u8>,
    /// Write the layout as JSON to this file (for `gen --shard-layout` and
    /// `SET uuidforge.shard_layout`).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

/// Counter bits that hold `per_ms` values from a start below half the range.
fn counter_bits_for(per_ms: u64) -> u8 {
    let need = per_ms.max(1).next_power_of_two().trailing_zeros() as u8;
    need + 1
}

const DAY_MS: f64 = 86_400_000.0;
const YEAR_MS: f64 = 365.25 * DAY_MS;

pub fn run(args: Args) -> Result<(), UsageError> {
    let field_error = |e: uuidforge::FieldError| {
        UsageError::plain(format!(
            "invalid value '{}' for '--{}': expected {}",
            e.value,
            e.field.replace('_', "-").replace("shard", "node"),
            e.expected
        ))
    };
    if args.rate == 0 {
        return Err(UsageError::plain(
            "invalid value '0' for '--rate': expected UUIDs per second per node, at least 1",
        ));
    }
    if args.nodes == 0 {
        return Err(UsageError::plain(
            "invalid value '0' for '--nodes': expected at least 1",
        ));
    }
    let per_ms = args.rate.div_ceil(1000);
    let counter_bits = args
        .counter_bits
        .unwrap_or_else(|| counter_bits_for(per_ms));
    let layout = ShardLayout::new(args.node_bits, counter_bits).map_err(field_error)?;
    let capacity = if args.node_bits >= 64 {
        u64::MAX
    } else {
        1u64 << args.node_bits
    };
    if args.nodes > capacity {
        return Err(UsageError::plain(format!(
            "invalid value '{}' for '--nodes': {} node bits give ids for {capacity} nodes; raise --node-bits",
            args.nodes, args.node_bits
        )));
    }
    // Distinct node ids never collide while a millisecond's values fit the
    // counter (from its start below half: 2^(C-1) values at least).
    let fits = counter_bits >= 64 || per_ms <= 1u64 << (counter_bits - 1);
    let random_ids = |ms: f64| layout.collision_probability(args.nodes, per_ms, ms);
    let report = serde_json::json!({
        "layout": serde_json::from_str::<serde_json::Value>(&layout.to_json()).expect("JSON"),
        "diagram": layout.diagram(),
        "random_bits": layout.random_bits(),
        "uuids_per_ms_per_node": per_ms,
        "counter_holds_the_rate": fits,
        "collision_probability": {
            "distinct_node_ids": { "ms": 0.0, "day": 0.0, "year": 0.0 },
            "random_node_ids": {
                "ms": random_ids(1.0),
                "day": random_ids(DAY_MS),
                "year": random_ids(YEAR_MS),
            },
        },
    });
    if let Some(path) = &args.out {
        std::fs::write(path, layout.to_json() + "\n").map_err(|e| {
            UsageError::plain(format!(
                "invalid value '{}' for '--out': {e}",
                path.display()
            ))
        })?;
    }
    if args.json {
        println!("{report}");
        return Ok(());
    }
    println!("{}", layout.diagram());
    println!(
        "node ids 0..={} ({} nodes planned), counter {} bits ({} per ms needed, {}), random {} bits",
        capacity - 1,
        args.nodes,
        counter_bits,
        per_ms,
        if fits {
            "fits"
        } else {
            "DOES NOT FIT: values run ahead of the clock at peak; raise --counter-bits"
        },
        layout.random_bits()
    );
    println!("collision probability with distinct node ids: 0 per ms, day and year");
    println!(
        "collision probability if ids were picked at random: {:.3e} per ms, {:.3e} per day, {:.3e} per year",
        random_ids(1.0),
        random_ids(DAY_MS),
        random_ids(YEAR_MS)
    );
    if let Some(path) = &args.out {
        println!("layout written to {}", path.display());
    }
    Ok(())
}
