//! The key-locality lab (B15, C4): which key, and for UUIDv7 which counter
//! length and generator placement, a real PostgreSQL index does best with.
//!
//! Pure parts: the matrix of cells, the SQL each step runs, the figures a
//! cell produces and the recommendation that follows from them. The
//! executor ([`run`], feature `client`) inserts with concurrent writers,
//! times and reads the statistics; `uuidforge lab keys` prints what it
//! measured.
//!
//! Cells are key kinds × writer counts. Key kinds: `bigint` identity,
//! UUIDv4, the server-wide `uuidv7()` of the extension, PostgreSQL 18's own
//! `uuidv7()` (one generator per backend), and UUIDv7 from one
//! generator per writer (the application-side case) for every counter and
//! guard length asked for, and PostgreSQL 18's layout (`pg18`) the same way.
#![deny(missing_docs)]

pub mod run;

use serde::{Deserialize, Serialize};
use uuidforge::generator::GeneratorConfig;
use uuidforge_ident::{qualified, quote_ident};

/// The schema the lab's tables live in (dropped and made again per cell).
pub const SCHEMA: &str = "uuidforge_lab";

/// What makes the keys of a cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum KeyKind {
    /// `bigint GENERATED ALWAYS AS IDENTITY`.
    BigintIdentity,
    /// Random UUIDv4, made by each writer.
    V4,
    /// The extension's `uuidv7()` as the column default: one generator for
    /// the whole server (shared memory when preloaded).
    ServerV7,
    /// PostgreSQL 18's own `pg_catalog.uuidv7()` as the column default: one
    /// generator per backend (each writer's session orders its own values).
    BuiltinV7,
    /// UUIDv7 from one generator per writer.
    Generator {
        /// Counter bits.
        counter_bits: u8,
        /// Guard bits (zero at each new millisecond) within the counter.
        guard_bits: u8,
    },
    /// UUIDv7 of PostgreSQL 18's layout (12-bit sub-ms fraction, no
    /// counter), one generator per writer.
    Pg18,
}

impl KeyKind {
    /// A short name for tables, charts and JSON: `bigint`, `v4`,
    /// `uuidv7()`, `pg_catalog.uuidv7()`, `c18g1`, `pg18`.
    pub fn label(&self) -> String {
        match self {
            KeyKind::BigintIdentity => "bigint".into(),
            KeyKind::V4 => "v4".into(),
            KeyKind::ServerV7 => "uuidv7()".into(),
            KeyKind::BuiltinV7 => "pg_catalog.uuidv7()".into(),
            KeyKind::Generator {
                counter_bits,
                guard_bits,
            } => format!("c{counter_bits}g{guard_bits}"),
            KeyKind::Pg18 => "pg18".into(),
        }
    }

    /// The generator settings of a per-writer UUIDv7 kind.
    pub fn config(&self) -> Option<GeneratorConfig> {
        match *self {
            KeyKind::Generator {
                counter_bits,
                guard_bits,
            } => Some(GeneratorConfig {
                name: self.label(),
                counter_bits,
                guard_bits,
                ..GeneratorConfig::default()
            }),
            KeyKind::Pg18 => GeneratorConfig::profile("pg18"),
            _ => None,
        }
    }

    /// Whether the writers send the keys (else the server makes them).
    pub fn keys_from_writers(&self) -> bool {
        !matches!(
            self,
            KeyKind::BigintIdentity | KeyKind::ServerV7 | KeyKind::BuiltinV7
        )
    }

    /// Whether the key carries its creation time (a v7 kind).
    pub fn is_v7(&self) -> bool {
        matches!(
            self,
            KeyKind::ServerV7 | KeyKind::BuiltinV7 | KeyKind::Generator { .. } | KeyKind::Pg18
        )
    }
}

/// One cell of the matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cell {
    /// The key kind.
    pub key: KeyKind,
    /// Concurrent writers.
    pub writers: u32,
}

/// Which server-made UUIDv7 the server offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ServerKinds {
    /// The extension's `uuidv7()` is installed.
    pub extension: bool,
    /// PostgreSQL 18 or later: `pg_catalog.uuidv7()` exists.
    pub builtin: bool,
}

/// The matrix: every key kind for every writer count. Guard lengths longer
/// than the counter are left out (they do not exist). Errors name the
/// option.
///
/// ```
/// use uuidforge_lab::{matrix, ServerKinds};
/// let server = ServerKinds { extension: true, builtin: false };
/// let cells = matrix(&[1, 4], &[0, 18], &[0, 1], server).unwrap();
/// // bigint, v4, uuidv7(), c0g0, c18g0, c18g1, pg18 — for 1 and 4 writers
/// assert_eq!(cells.len(), 14);
/// ```
pub fn matrix(
    writers: &[u32],
    counter_bits: &[u8],
    guard_bits: &[u8],
    server: ServerKinds,
) -> Result<Vec<Cell>, uuidforge_db::error::DbError> {
    use uuidforge_db::error::DbError;
    if writers.is_empty() || writers.iter().any(|&w| w == 0 || w > 64) {
        return Err(DbError::invalid(
            "writers",
            format!("invalid value '{writers:?}' for '--writers': expected 1 to 64 writers, e.g. 1,4,16"),
        ));
    }
    if let Some(c) = counter_bits.iter().find(|&&c| c > 42) {
        return Err(DbError::invalid(
            "counter-bits",
            format!("invalid value '{c}' for '--counter-bits': expected 0..=42 (with 32 random bits left)"),
        ));
    }
    if let Some(g) = guard_bits.iter().find(|&&g| g > 4) {
        return Err(DbError::invalid(
            "guard-bits",
            format!("invalid value '{g}' for '--guard-bits': expected 0..=4"),
        ));
    }
    let mut kinds = vec![KeyKind::BigintIdentity, KeyKind::V4];
    if server.extension {
        kinds.push(KeyKind::ServerV7);
    }
    if server.builtin {
        kinds.push(KeyKind::BuiltinV7);
    }
    for &c in counter_bits {
        for &g in guard_bits {
            if g <= c {
                kinds.push(KeyKind::Generator {
                    counter_bits: c,
                    guard_bits: g,
                });
            }
        }
    }
    kinds.push(KeyKind::Pg18);
    Ok(writers
        .iter()
        .flat_map(|&w| kinds.iter().map(move |&key| Cell { key, writers: w }))
        .collect())
}

/// The quoted name of cell `index`'s table.
pub fn table(index: usize) -> String {
    qualified(SCHEMA, &format!("cell_{index}"))
}

/// The table of a cell: the key, the order rows arrived in (`seq`, so that
/// disorder can be counted), when, and a small payload.
pub fn create_table_sql(cell: &Cell, table: &str, uuidv7_function: &str) -> String {
    let key = match cell.key {
        KeyKind::BigintIdentity => "bigint GENERATED ALWAYS AS IDENTITY".to_string(),
        KeyKind::ServerV7 => format!("uuid DEFAULT {uuidv7_function}()"),
        KeyKind::BuiltinV7 => "uuid DEFAULT pg_catalog.uuidv7()".to_string(),
        _ => "uuid".to_string(),
    };
    format!(
        "CREATE TABLE {table} (id {key} NOT NULL, seq bigserial NOT NULL, \
         created_at timestamptz NOT NULL DEFAULT clock_timestamp(), payload integer NOT NULL, \
         CONSTRAINT {} PRIMARY KEY (id))",
        quote_ident(&pk_name(table))
    )
}

/// The primary key constraint's name (for the BRIN comparison, which drops
/// it inside a transaction that is rolled back).
pub fn pk_name(table: &str) -> String {
    let bare = table.rsplit('.').next().unwrap_or(table).trim_matches('"');
    format!("{bare}_pkey")
}

/// The insert a writer runs per batch: `$1` the keys (`uuid[]`) and `$2`
/// the payloads (`int[]`) when writers send keys, else `$1` the row count.
pub fn insert_sql(cell: &Cell, table: &str) -> String {
    if cell.key.keys_from_writers() {
        format!("INSERT INTO {table} (id, payload) SELECT * FROM unnest($1::uuid[], $2::int[])")
    } else {
        format!("INSERT INTO {table} (payload) SELECT g FROM generate_series(1, $1::int) g")
    }
}

/// Rows whose key is below a key that arrived before them (by `seq`): the
/// inserts that did not go to the right edge of the index. (No `max(uuid)`
/// aggregate in PostgreSQL 15: UUIDs compare as their text does.)
pub fn out_of_order_sql(cell: &Cell, table: &str) -> String {
    let key = if cell.key.is_v7() || cell.key == KeyKind::V4 {
        "id::text"
    } else {
        "id"
    };
    format!(
        "SELECT count(*) FILTER (WHERE k < before)::text FROM (\
           SELECT {key} AS k, max({key}) OVER (ORDER BY seq ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before \
           FROM {table}) s"
    )
}

/// `pgstatindex` of an index: size in bytes, leaf density (%), leaf
/// fragmentation (%), as one text row `size,density,fragmentation`. `$1` is
/// the index's quoted, qualified name ([`pk_qualified`]).
pub fn index_stats_sql(pgstattuple_schema: &str) -> String {
    format!(
        "SELECT concat_ws(',', index_size, avg_leaf_density, leaf_fragmentation) \
         FROM {}.pgstatindex($1::text::regclass)",
        quote_ident(pgstattuple_schema)
    )
}

/// The quoted, qualified name of a cell table's primary key index.
pub fn pk_qualified(table: &str) -> String {
    qualified(SCHEMA, &pk_name(table))
}

/// Times each key's lookup this many times over and keeps the mean:
/// `clock_timestamp()` counts whole microseconds, a lookup takes a few.
pub const LOOKUP_REPEATS: u32 = 8;

/// A function timing point lookups one by one inside the server (so the
/// client round trip does not drown the index's part): it takes the keys
/// and returns each key's lookup time in microseconds (the mean of
/// [`LOOKUP_REPEATS`] lookups).
pub fn lookup_function_sql(cell: &Cell, table: &str, function: &str) -> String {
    let key_type = if cell.key == KeyKind::BigintIdentity {
        "bigint"
    } else {
        "uuid"
    };
    format!(
        "CREATE FUNCTION {function}(keys {key_type}[]) RETURNS float8[] LANGUAGE plpgsql AS $$\n\
         DECLARE k {key_type}; t0 timestamptz; found int; out float8[] := '{{}}';\n\
         BEGIN\n\
           FOREACH k IN ARRAY keys LOOP\n\
             t0 := clock_timestamp();\n\
             FOR i IN 1..{LOOKUP_REPEATS} LOOP\n\
               SELECT payload INTO found FROM {table} WHERE id = k;\n\
             END LOOP;\n\
             out := out || (extract(epoch FROM clock_timestamp() - t0) * 1e6 / {LOOKUP_REPEATS})::float8;\n\
           END LOOP;\n\
           RETURN out;\n\
         END $$"
    )
}

/// What one cell measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellResult {
    /// The cell.
    pub cell: Cell,
    /// Its label (key kind), for tables and charts.
    pub label: String,
    /// Rows inserted.
    pub rows: u64,
    /// Inserted rows per second (all writers together).
    pub insert_rows_per_s: f64,
    /// Primary key size in bytes.
    pub index_bytes: u64,
    /// `pgstatindex`'s average leaf density, % (None without pgstattuple).
    pub leaf_density_pct: Option<f64>,
    /// `pgstatindex`'s leaf fragmentation, %.
    pub leaf_fragmentation_pct: Option<f64>,
    /// WAL written during the inserts, bytes.
    pub wal_bytes: u64,
    /// Share of rows whose key is below one that arrived earlier.
    pub out_of_order_share: f64,
    /// Point lookups of recent keys (the newest 1%), µs.
    pub lookup_recent_p50_us: f64,
    /// p99 of the same.
    pub lookup_recent_p99_us: f64,
    /// Point lookups of keys drawn uniformly, µs.
    pub lookup_random_p50_us: f64,
    /// p99 of the same.
    pub lookup_random_p99_us: f64,
    /// Counting the last minute of keys: ms (by the key's time for v7 kinds,
    /// by `created_at` — a sequential scan — for the others).
    pub range_last_minute_ms: f64,
    /// Rows in that last minute.
    pub range_rows: u64,
    /// Counting the newest 1% of the keys' time span, ms (the selective
    /// range: at the lab's speed a minute may hold every row).
    pub range_newest_1pct_ms: f64,
    /// Rows in it.
    pub range_newest_1pct_rows: u64,
    /// Counter overflows of the writers' generators.
    pub overflows: Option<u64>,
    /// How far the writers' timestamps ran ahead of the clock at most, ms.
    pub max_ahead_ms: Option<u64>,
    /// A BRIN index on the key (v7 kinds): its size in bytes.
    pub brin_bytes: Option<u64>,
    /// The last-minute count through the BRIN index alone, ms.
    pub brin_range_ms: Option<f64>,
    /// The newest-1% count through the BRIN index alone, ms.
    pub brin_newest_1pct_ms: Option<f64>,
}

/// The value at quantile `q` (0..=1) of `values` (sorted here), nearest
/// rank; 0 for none.
///
/// ```
/// let mut v = vec![5.0, 1.0, 3.0, 2.0, 4.0];
/// assert_eq!(uuidforge_lab::quantile(&mut v, 0.5), 3.0);
/// assert_eq!(uuidforge_lab::quantile(&mut v, 0.99), 5.0);
/// ```
pub fn quantile(values: &mut [f64], q: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(|a, b| a.total_cmp(b));
    let rank = ((q * values.len() as f64).ceil() as usize).clamp(1, values.len());
    values[rank - 1]
}

/// Lookups within this factor of the best count as not slower.
pub const LOOKUP_TOLERANCE: f64 = 1.05;
/// Bits added to the shortest counter that kept lookups fast: room for
/// four times the measured rate.
pub const HEADROOM_BITS: u8 = 2;
/// A counter so short that the timestamps ran further ahead of the clock
/// than this (ms) is not a candidate, however fast its lookups: its keys
/// stay ordered only by no longer telling the time.
pub const AHEAD_TOLERANCE_MS: u64 = 1;

/// The counter length the numbers support, per the article: among the
/// per-writer generator cells of the most writers measured, the shortest
/// counter whose point lookups (recent and random p50) stay within 5% of the
/// best cell's and whose timestamps stayed within [`AHEAD_TOLERANCE_MS`] of
/// the clock, plus [`HEADROOM_BITS`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recommendation {
    /// Writers of the cells compared.
    pub writers: u32,
    /// The shortest counter that kept lookups fast.
    pub shortest_counter_bits: u8,
    /// Its guard bits.
    pub guard_bits: u8,
    /// What to configure: shortest + headroom.
    pub counter_bits: u8,
    /// The best cell's label and lookups (p50 recent, random), µs.
    pub best: (String, f64, f64),
    /// The chosen cell's lookups, µs.
    pub chosen: (String, f64, f64),
    /// The evidence in a sentence.
    pub evidence: String,
}

/// [`Recommendation`] from the results; None without generator cells.
pub fn recommend(results: &[CellResult]) -> Option<Recommendation> {
    let writers = results
        .iter()
        .filter(|r| matches!(r.cell.key, KeyKind::Generator { .. }))
        .map(|r| r.cell.writers)
        .max()?;
    let candidates: Vec<&CellResult> = results
        .iter()
        .filter(|r| r.cell.writers == writers && matches!(r.cell.key, KeyKind::Generator { .. }))
        .collect();
    let best_recent = candidates
        .iter()
        .map(|r| r.lookup_recent_p50_us)
        .fold(f64::INFINITY, f64::min);
    let best_random = candidates
        .iter()
        .map(|r| r.lookup_random_p50_us)
        .fold(f64::INFINITY, f64::min);
    let best = candidates
        .iter()
        .min_by(|a, b| {
            (a.lookup_recent_p50_us + a.lookup_random_p50_us)
                .total_cmp(&(b.lookup_recent_p50_us + b.lookup_random_p50_us))
        })
        .expect("at least one candidate");
    let bits = |r: &CellResult| match r.cell.key {
        KeyKind::Generator {
            counter_bits,
            guard_bits,
        } => (counter_bits, guard_bits),
        _ => unreachable!("generator cells only"),
    };
    let chosen = candidates
        .iter()
        .filter(|r| {
            r.lookup_recent_p50_us <= best_recent * LOOKUP_TOLERANCE
                && r.lookup_random_p50_us <= best_random * LOOKUP_TOLERANCE
                && r.max_ahead_ms.unwrap_or(0) <= AHEAD_TOLERANCE_MS
        })
        .min_by_key(|r| bits(r))
        .unwrap_or(best);
    let (shortest, guard) = bits(chosen);
    let counter_bits = (shortest + HEADROOM_BITS).min(42);
    Some(Recommendation {
        writers,
        shortest_counter_bits: shortest,
        guard_bits: guard,
        counter_bits,
        best: (
            best.label.clone(),
            best.lookup_recent_p50_us,
            best.lookup_random_p50_us,
        ),
        chosen: (
            chosen.label.clone(),
            chosen.lookup_recent_p50_us,
            chosen.lookup_random_p50_us,
        ),
        evidence: format!(
            "with {writers} writer(s), {} is the shortest counter whose point lookups (p50 recent {:.2} µs, random {:.2} µs) stay within {:.0}% of the best ({:.2} µs, {:.2} µs) and whose timestamps stay within {AHEAD_TOLERANCE_MS} ms of the clock; it overflowed {} times and ran {} ms ahead at most; with {HEADROOM_BITS} bits of headroom: counter_bits = {counter_bits}, guard_bits = {guard}",
            chosen.label,
            chosen.lookup_recent_p50_us,
            chosen.lookup_random_p50_us,
            (LOOKUP_TOLERANCE - 1.0) * 100.0,
            best_recent,
            best_random,
            chosen.overflows.unwrap_or(0),
            chosen.max_ahead_ms.unwrap_or(0),
        ),
    })
}

/// The measures charted, each with its axis title and how to read it from
/// a result.
pub type Measure = (&'static str, &'static str, fn(&CellResult) -> Option<f64>);

/// Every charted measure: file stem, axis title, value.
pub const MEASURES: [Measure; 12] = [
    ("insert_rows_per_s", "inserted rows/s", |r| {
        Some(r.insert_rows_per_s)
    }),
    ("index_mib", "primary key size (MiB)", |r| {
        Some(r.index_bytes as f64 / 1048576.0)
    }),
    ("leaf_density_pct", "leaf density (%)", |r| {
        r.leaf_density_pct
    }),
    ("wal_mib", "WAL written (MiB)", |r| {
        Some(r.wal_bytes as f64 / 1048576.0)
    }),
    (
        "out_of_order_pct",
        "inserts below an earlier key (%)",
        |r| Some(r.out_of_order_share * 100.0),
    ),
    (
        "lookup_recent_p50_us",
        "lookup p50, recent keys (µs)",
        |r| Some(r.lookup_recent_p50_us),
    ),
    (
        "lookup_random_p50_us",
        "lookup p50, random keys (µs)",
        |r| Some(r.lookup_random_p50_us),
    ),
    (
        "lookup_random_p99_us",
        "lookup p99, random keys (µs)",
        |r| Some(r.lookup_random_p99_us),
    ),
    (
        "range_last_minute_ms",
        "count of the last minute (ms)",
        |r| Some(r.range_last_minute_ms),
    ),
    ("range_newest_1pct_ms", "count of the newest 1% (ms)", |r| {
        Some(r.range_newest_1pct_ms)
    }),
    (
        "brin_newest_1pct_ms",
        "count of the newest 1% with BRIN only (ms)",
        |r| r.brin_newest_1pct_ms,
    ),
    ("max_ahead_ms", "generator ahead of the clock (ms)", |r| {
        r.max_ahead_ms.map(|v| v as f64)
    }),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn result(key: KeyKind, writers: u32, recent: f64, random: f64) -> CellResult {
        CellResult {
            cell: Cell { key, writers },
            label: key.label(),
            rows: 1000,
            insert_rows_per_s: 1.0,
            index_bytes: 1,
            leaf_density_pct: None,
            leaf_fragmentation_pct: None,
            wal_bytes: 1,
            out_of_order_share: 0.0,
            lookup_recent_p50_us: recent,
            lookup_recent_p99_us: recent,
            lookup_random_p50_us: random,
            lookup_random_p99_us: random,
            range_last_minute_ms: 1.0,
            range_rows: 1,
            range_newest_1pct_ms: 1.0,
            range_newest_1pct_rows: 1,
            brin_newest_1pct_ms: None,
            overflows: Some(0),
            max_ahead_ms: Some(0),
            brin_bytes: None,
            brin_range_ms: None,
        }
    }

    fn gen(c: u8, g: u8) -> KeyKind {
        KeyKind::Generator {
            counter_bits: c,
            guard_bits: g,
        }
    }

    #[test]
    fn the_recommendation_is_the_shortest_counter_within_five_percent_plus_headroom() {
        let results = vec![
            result(KeyKind::V4, 4, 1.0, 1.0), // faster, but not a generator cell
            {
                // As fast as the best, but only by running 900 ms ahead.
                let mut r = result(gen(2, 0), 4, 20.0, 20.0);
                r.max_ahead_ms = Some(900);
                r
            },
            result(gen(0, 0), 4, 30.0, 31.0),
            result(gen(4, 0), 4, 21.5, 20.0), // recent 7.5% slower: out
            result(gen(8, 0), 4, 20.9, 20.9), // within 5% on both: the shortest
            result(gen(8, 1), 4, 20.5, 20.5),
            result(gen(18, 1), 4, 20.0, 20.2),
            result(gen(42, 1), 4, 20.1, 20.0),
            result(gen(0, 0), 1, 1.0, 1.0), // fewer writers: not compared
        ];
        let r = recommend(&results).unwrap();
        assert_eq!(r.writers, 4);
        assert_eq!((r.shortest_counter_bits, r.guard_bits), (8, 0));
        assert_eq!(r.counter_bits, 10);
        assert!(r.evidence.contains("c8g0"), "{}", r.evidence);
        assert!(recommend(&[result(KeyKind::V4, 1, 1.0, 1.0)]).is_none());
    }

    #[test]
    fn the_matrix_names_its_options_and_skips_impossible_guards() {
        let cells = matrix(&[2], &[0, 4], &[0, 1, 2], ServerKinds::default()).unwrap();
        let labels: Vec<String> = cells.iter().map(|c| c.key.label()).collect();
        assert_eq!(
            labels,
            ["bigint", "v4", "c0g0", "c4g0", "c4g1", "c4g2", "pg18"]
        );
        let on_18 = ServerKinds {
            extension: true,
            builtin: true,
        };
        let labels: Vec<String> = matrix(&[2], &[18], &[1], on_18)
            .unwrap()
            .iter()
            .map(|c| c.key.label())
            .collect();
        assert_eq!(
            labels,
            [
                "bigint",
                "v4",
                "uuidv7()",
                "pg_catalog.uuidv7()",
                "c18g1",
                "pg18"
            ]
        );
        assert!(matrix(&[0], &[4], &[0], ServerKinds::default())
            .unwrap_err()
            .message
            .contains("--writers"));
        assert!(matrix(&[1], &[43], &[0], ServerKinds::default())
            .unwrap_err()
            .message
            .contains("--counter-bits"));
        assert!(matrix(&[1], &[4], &[9], ServerKinds::default())
            .unwrap_err()
            .message
            .contains("--guard-bits"));
    }

    #[test]
    fn table_names_are_quoted_and_statements_use_them() {
        let cell = Cell {
            key: KeyKind::ServerV7,
            writers: 1,
        };
        let t = table(3);
        assert_eq!(t, "\"uuidforge_lab\".\"cell_3\"");
        let create = create_table_sql(&cell, &t, "public.uuidv7");
        assert!(create.contains("DEFAULT public.uuidv7()"), "{create}");
        assert!(
            create.contains("CONSTRAINT \"cell_3_pkey\" PRIMARY KEY (id)"),
            "{create}"
        );
        assert_eq!(pk_qualified(&t), "\"uuidforge_lab\".\"cell_3_pkey\"");
        assert!(index_stats_sql("public").contains("\"public\".pgstatindex($1::text::regclass)"));
        assert!(insert_sql(&cell, &t).contains("generate_series"));
        assert!(out_of_order_sql(&cell, &t).contains("id::text"));
    }
}
