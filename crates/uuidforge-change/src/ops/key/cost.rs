//! What a key migration will cost, said in its plan before anything runs
//! ([`Cost`]): the rows it writes in each table, the free disk it needs at
//! most, the time it expects from the tables' sizes, and the data
//! directory's free space when the server can tell (the extension's
//! `uuidforge_data_directory_free_bytes()`; SQL alone cannot read it).
//!
//! The figures are estimates from the catalog (the planner's row counts
//! and the relations' sizes on disk), never compared when the plan is
//! made again before it runs.

use super::model::Migration;
use crate::ops::{Line, Named, Read, Reading};
use serde::Serialize;
use uuidforge_db::catalog::{RelKind, Relation};
use uuidforge_db::error::DbError;

/// The read of the extension's function that tells the data directory's
/// free space, qualified and quoted: `null` when the extension (or that
/// function, or the right to call it) is not there.
pub(crate) const FREE_SPACE_FUNCTION: Named<Option<String>> = Named::new(
    "free_space_function",
    "find the extension's uuidforge_data_directory_free_bytes()",
);

/// The read of the data directory's free bytes, made once the function is
/// known to be there (a statement naming a missing function would not
/// parse).
pub(crate) const FREE_SPACE: Named<Option<i64>> = Named::new(
    "free_space",
    "read the free space of the data directory (the extension's uuidforge_data_directory_free_bytes())",
);

/// The reads of the free space, given what was read so far: the function
/// first, then, where it is there, its answer.
pub(crate) fn free_space_reads(answers: &crate::ops::Answers) -> Result<Vec<Read>, DbError> {
    let mut reads = vec![FREE_SPACE_FUNCTION.read(uuidforge_db::plan::Query::new(
        "SELECT coalesce(to_json((SELECT pg_catalog.format('%I.%I', n.nspname, p.proname) \
           FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace \
          WHERE p.proname = 'uuidforge_data_directory_free_bytes' AND p.pronargs = 0 \
            AND has_function_privilege(p.oid, 'EXECUTE') LIMIT 1))::text, 'null')",
    ))];
    if let Some(Some(function)) = answers.answer(&FREE_SPACE_FUNCTION)? {
        reads.push(FREE_SPACE.read(uuidforge_db::plan::Query::new(format!(
            "SELECT coalesce(to_json({function}())::text, 'null')"
        ))));
    }
    Ok(reads)
}

/// How a migration writes the tables: what its expected time depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writing {
    /// Rewritten in one transaction.
    OneTransaction,
    /// Updated in place, batch by batch.
    InPlace,
    /// Copied online into shadow tables.
    Copy,
}

impl Writing {
    /// Bytes of the tables' sizes before it that the whole command moves
    /// per second, backup and checks included, on the benchmark's 2-core VM
    /// (`scripts/bench-migrate.sh`, 10^6 rows in all, 93 MiB: one
    /// transaction 2.4 s, in place under writers 15.8 s, the copy under
    /// writers 4.1-5.2 s); a server with faster disks and more cores takes
    /// less.
    fn bytes_per_second(self) -> f64 {
        match self {
            Writing::OneTransaction => 38.0 * MIB,
            Writing::InPlace => 6.0 * MIB,
            Writing::Copy => 20.0 * MIB,
        }
    }
}
const MIB: f64 = 1024.0 * 1024.0;
/// Bytes a changed column adds to each row and to each index entry over
/// it: a uuid of 16 bytes beside the old value kept (alignment aside).
const ADDED_PER_CHANGED_COLUMN: i64 = 16;
/// Bytes per row of the key map (old key as text, new key, two indexes).
const MAP_BYTES_PER_ROW: i64 = 96;

/// One table the migration writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TableCost {
    /// `schema.table`, quoted (a partition's own name).
    pub table: String,
    /// Rows it writes (the planner's estimate).
    pub rows: i64,
    /// Its size on disk now, indexes and TOAST included.
    pub bytes: i64,
    /// Its estimated size after, the new values beside the old.
    pub bytes_after: i64,
}

/// What a migration will cost.
#[derive(Debug, Clone, Serialize)]
pub struct Cost {
    /// Each table written, partitions one by one.
    pub tables: Vec<TableCost>,
    /// Free disk it needs at most: each table and its indexes written anew
    /// beside the old until it commits (in batches: every row's new
    /// version beside the old), as much WAL, and the key map.
    pub needs_bytes: i64,
    /// The data directory's free space, when the server can tell.
    pub free_bytes: Option<i64>,
    /// The time it expects, in seconds, at the benchmark's rate.
    pub expected_seconds: f64,
}

// Estimates from sizes and free space that change from one planning to
// the next: a plan made again before it runs is the same plan whatever
// they say now.
impl PartialEq for Cost {
    fn eq(&self, _: &Cost) -> bool {
        true
    }
}

impl Cost {
    /// The cost of `m` written as `writing`, the data directory having
    /// `free_bytes` free.
    pub fn of(m: &Migration, writing: Writing, free_bytes: Option<i64>) -> Cost {
        let mut tables = Vec::new();
        for r in m.written() {
            let changed = changed_columns(m, r);
            let parts: Vec<&Relation> = if r.kind == RelKind::PartitionedTable {
                m.partitions
                    .iter()
                    .filter(|p| p.kind == "r")
                    .filter_map(|p| m.snapshot.relation(p.oid))
                    .filter(|p| reaches(m, p.oid, r.oid))
                    .collect()
            } else {
                vec![r]
            };
            for p in parts {
                tables.push(TableCost {
                    table: p.sql_name(),
                    rows: p.est_rows,
                    bytes: p.bytes,
                    // The new values in the heap and in each index over
                    // them (about one per changed column).
                    bytes_after: p.bytes + p.est_rows * ADDED_PER_CHANGED_COLUMN * 2 * changed,
                });
            }
        }
        let after: i64 = tables.iter().map(|t| t.bytes_after).sum();
        let before: i64 = tables.iter().map(|t| t.bytes).sum();
        let map = m.key.table.est_rows.max(0) * MAP_BYTES_PER_ROW;
        let rate = writing.bytes_per_second();
        Cost {
            tables,
            // The new files and as much WAL (kept until a checkpoint
            // recycles it), the map.
            needs_bytes: 2 * after + map,
            free_bytes,
            expected_seconds: before as f64 / rate,
        }
    }

    /// Whether the data directory is known to have less free space than
    /// the migration may need.
    pub fn short_of_space(&self) -> bool {
        self.free_bytes.is_some_and(|f| f < self.needs_bytes)
    }

    /// Its lines in the plan.
    pub fn lines(&self) -> Vec<Line> {
        let rows: i64 = self.tables.iter().map(|t| t.rows).sum();
        let mut out: Vec<Line> = vec![format!(
            "  cost: {} written in {} table{}, about {} expected (at the rate measured on a 2-core VM; faster disks take less)",
            if rows > 0 { format!("about {} rows", grouped(rows)) } else { "the rows".to_string() },
            self.tables.len(),
            if self.tables.len() == 1 { "" } else { "s" },
            duration(self.expected_seconds)
        )
        .into()];
        for t in &self.tables {
            let rows = if t.rows > 0 {
                format!("about {} rows", grouped(t.rows))
            } else {
                // reltuples before the first ANALYZE.
                "rows not estimated yet (never analysed)".to_string()
            };
            out.push(
                format!(
                    "    {}: {rows}, {} now, about {} after",
                    t.table,
                    size(t.bytes),
                    size(t.bytes_after)
                )
                .into(),
            );
        }
        let space = match self.free_bytes {
            Some(free) if self.short_of_space() => format!(
                "  WARNING: the data directory has {} free, less than the {} this migration may need: it can fail when the disk fills (free space first, or migrate fewer tables at once)",
                size(free),
                size(self.needs_bytes)
            ),
            Some(free) => format!(
                "  disk: needs at most {} free in the data directory (the tables written anew beside the old until commit, as much WAL, the key map); {} free",
                size(self.needs_bytes),
                size(free)
            ),
            None => format!(
                "  disk: needs at most {} free in the data directory (the tables written anew beside the old until commit, as much WAL, the key map); free space unknown: SQL cannot read it, the extension's uuidforge_data_directory_free_bytes() can",
                size(self.needs_bytes)
            ),
        };
        out.push(space.into());
        out
    }
}

/// The columns of `r` the migration changes: the key, the references.
fn changed_columns(m: &Migration, r: &Relation) -> i64 {
    let key = i64::from(r.oid == m.key.table.oid);
    let references = m.references.iter().filter(|x| x.table.oid == r.oid).count();
    key + references as i64
}

/// Whether the partition `oid` lies under `table`, however deep.
fn reaches(m: &Migration, oid: u32, table: u32) -> bool {
    let mut at = oid;
    for _ in 0..m.partitions.len() + 1 {
        match m.partitions.iter().find(|p| p.oid == at) {
            Some(p) if p.parent == table => return true,
            Some(p) => at = p.parent,
            None => return false,
        }
    }
    false
}

/// `n` with thin spaces between thousands (`1 200 000`).
fn grouped(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    if n < 0 {
        format!("-{out}")
    } else {
        out
    }
}

/// A size in the unit that reads best.
fn size(bytes: i64) -> String {
    let b = bytes as f64;
    if b >= 1024.0 * MIB {
        format!("{:.1} GiB", b / (1024.0 * MIB))
    } else if b >= MIB {
        format!("{:.0} MiB", b / MIB)
    } else {
        format!("{:.0} kiB", b / 1024.0)
    }
}

/// A duration in the unit that reads best.
fn duration(seconds: f64) -> String {
    if seconds >= 3600.0 {
        format!("{:.1} h", seconds / 3600.0)
    } else if seconds >= 60.0 {
        format!("{:.0} min", seconds / 60.0)
    } else {
        format!("{:.0} s", seconds.max(1.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cost(free: Option<i64>) -> Cost {
        Cost {
            tables: vec![TableCost {
                table: "\"public\".\"t\"".into(),
                rows: 1_200_000,
                bytes: 100 << 20,
                bytes_after: 150 << 20,
            }],
            needs_bytes: 300 << 20,
            free_bytes: free,
            expected_seconds: 95.0,
        }
    }

    #[test]
    fn numbers_read_as_people_write_them() {
        assert_eq!(grouped(1_200_000), "1 200 000");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(-1000), "-1 000");
        assert_eq!(size(300 << 20), "300 MiB");
        assert_eq!(size(3 << 30), "3.0 GiB");
        assert_eq!(duration(95.0), "2 min");
        assert_eq!(duration(0.2), "1 s");
        assert_eq!(duration(7200.0), "2.0 h");
    }

    #[test]
    fn the_plan_warns_when_the_disk_is_short() {
        let short = cost(Some(200 << 20));
        assert!(short.short_of_space());
        let text: Vec<String> = short.lines().into_iter().map(|l| l.text).collect();
        assert!(
            text.last()
                .unwrap()
                .contains("WARNING: the data directory has 200 MiB free, less than the 300 MiB"),
            "{text:?}"
        );
        let roomy = cost(Some(1 << 30));
        assert!(!roomy.short_of_space());
        assert!(roomy
            .lines()
            .last()
            .unwrap()
            .text
            .ends_with("; 1.0 GiB free"));
        let unknown = cost(None);
        assert!(!unknown.short_of_space());
        assert!(unknown
            .lines()
            .last()
            .unwrap()
            .text
            .contains("free space unknown"));
        assert!(unknown.lines()[1]
            .text
            .contains("\"public\".\"t\": about 1 200 000 rows, 100 MiB now, about 150 MiB after"));
    }
}
