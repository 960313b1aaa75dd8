//! `uuidforge_telemetry()` (E4): what the generator cell has been through,
//! server-wide when the library is preloaded (the same figures `uuidforge
//! serve` exposes at `/metrics` for its process).

use crate::checkpoint;
use crate::state::{self, COUNTED};
use pgrx::prelude::*;

/// One row per figure: `generated` per profile (`registered` sums the
/// registered ones, `v8_shard` counts `uuidv8_shard`), `overflows`,
/// `rollbacks`, `resets`, `clock_failures`, `ahead_ms` (how far the last
/// value runs ahead of the clock now), `max_ahead_ms`, `reseeds` (this
/// session's random source), `server_wide` (1 when preloaded) and
/// `checkpoint_ms` (the time the checkpoint file holds).
#[pg_extern(volatile, parallel_safe)]
fn uuidforge_telemetry() -> TableIterator<
    'static,
    (
        name!(metric, String),
        name!(profile, Option<String>),
        name!(value, i64),
    ),
> {
    let server = state::server_state();
    let cell = server.cell.telemetry();
    let reseeds = state::active().generator.telemetry().reseeds;
    let clamp = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
    let mut rows: Vec<(String, Option<String>, i64)> = COUNTED
        .iter()
        .enumerate()
        .map(|(slot, name)| {
            (
                "generated".to_string(),
                Some(name.to_string()),
                clamp(server.generated(slot)),
            )
        })
        .collect();
    for (metric, value) in [
        ("overflows", cell.overflows),
        ("rollbacks", cell.rollbacks),
        ("resets", cell.resets),
        ("clock_failures", cell.clock_failures),
        ("ahead_ms", cell.ahead_ms),
        ("max_ahead_ms", cell.max_ahead_ms),
        ("reseeds", reseeds),
        ("server_wide", state::server_wide() as u64),
        ("checkpoint_ms", checkpoint::stored_ms(server)),
    ] {
        rows.push((metric.to_string(), None, clamp(value)));
    }
    TableIterator::new(rows)
}
