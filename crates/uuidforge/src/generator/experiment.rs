//! Choosing the counter length by experiment (B15, the article's feature 12):
//! generate at full speed with shorter and shorter counters, and report the
//! speed, where the counter starts to overflow (the timestamp then runs ahead
//! of the clock, or a stricter policy would fail) and how long lookups of the
//! generated keys take in an ordered index.

use super::{GeneratorConfig, V7Generator};
use std::collections::BTreeSet;
use std::time::Instant;
use uuid::Uuid;

/// The result for one counter length.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CounterLengthRow {
    /// Counter bits (guard bit included).
    pub counter_bits: u8,
    /// UUIDs generated per second (`fill`, full speed).
    pub per_second: f64,
    /// Counter overflows: each one a timestamp bump under the default policy,
    /// an error under `overflow: error`.
    pub overflows: u64,
    /// How far the timestamp ran ahead of the clock, at most, in ms.
    pub max_ahead_ms: u64,
    /// Mean time to look one key up in a B-tree of all the keys, in ns.
    pub lookup_ns: f64,
    /// Whether ordering broke down: the counter could not hold a
    /// millisecond's worth of UUIDs, so order was kept only by running the
    /// timestamp ahead of the real time.
    pub breaks_down: bool,
}

/// Runs the experiment for each counter length in `bits` with `n` UUIDs.
///
/// ```
/// let rows = uuidforge::generator::experiment::counter_length(20_000, &[2, 18]);
/// assert!(rows[0].overflows > rows[1].overflows);
/// ```
pub fn counter_length(n: usize, bits: &[u8]) -> Vec<CounterLengthRow> {
    bits.iter()
        .map(|&c| {
            let config = GeneratorConfig {
                name: format!("counter{c}"),
                counter_bits: c,
                guard_bits: c.min(1),
                ..GeneratorConfig::default()
            };
            let mut g = V7Generator::new(config).expect("counter lengths up to 74 are valid");
            let mut ids = vec![Uuid::nil(); n];
            let start = Instant::now();
            for chunk in ids.chunks_mut(4096) {
                g.fill(chunk).expect("the bump policy does not fail");
            }
            let elapsed = start.elapsed().as_secs_f64();
            let index: BTreeSet<Uuid> = ids.iter().copied().collect();
            let probes: Vec<&Uuid> = ids.iter().step_by((n / 10_000).max(1)).collect();
            let start = Instant::now();
            let found = probes.iter().filter(|id| index.contains(id)).count();
            let lookup_ns = start.elapsed().as_nanos() as f64 / probes.len().max(1) as f64;
            assert_eq!(found, probes.len(), "every generated key is found");
            let t = g.telemetry();
            CounterLengthRow {
                counter_bits: c,
                per_second: n as f64 / elapsed.max(1e-9),
                overflows: t.overflows,
                max_ahead_ms: t.max_ahead_ms,
                lookup_ns,
                breaks_down: t.max_ahead_ms > 0,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn shorter_counters_overflow_more() {
        let rows = super::counter_length(200_000, &[1, 4, 12, 42]);
        assert!(
            rows.windows(2).all(|w| w[0].overflows >= w[1].overflows),
            "{rows:?}"
        );
        assert!(
            rows[0].breaks_down,
            "a 1-bit counter cannot hold a millisecond of full-speed UUIDs"
        );
        assert_eq!(rows[3].overflows, 0, "{rows:?}");
        assert!(rows.iter().all(|r| r.lookup_ns > 0.0 && r.per_second > 0.0));
    }
}
