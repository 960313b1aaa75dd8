//! Partitions of the tables a migration writes: read once (their pieces of
//! indexes and constraints are named after them); in batches only plain
//! tables, since a partition partitioned itself or a foreign table cannot
//! be filled page range by page range.

use super::{Kind, Migration, Placed, Schedule, SoFar, Target};
use crate::ops::{Named, Read, Reading};
use uuidforge_db::catalog::RelKind;
use uuidforge_db::error::{DbError, Reason, Refusal, WayOut};
use uuidforge_db::introspect::Partition;

/// The read of the partitions of the partitioned tables written.
pub(crate) const PARTITIONS: Named<Vec<Partition>> =
    Named::new("partitions", "read the partitions");

pub(super) struct Partitions;

impl Kind for Partitions {
    fn name(&self) -> &'static str {
        "partitions"
    }

    fn reads(&self, target: &Target, _: &SoFar) -> Result<Vec<Read>, DbError> {
        let parted: Vec<u32> = target
            .written()
            .iter()
            .filter(|r| r.kind == RelKind::PartitionedTable)
            .map(|r| r.oid)
            .collect();
        Ok(vec![
            PARTITIONS.read(uuidforge_db::introspect::partitions_query(&parted))
        ])
    }

    fn place(&self, m: &Migration, schedule: Schedule, _: &str) -> Result<Vec<Placed>, DbError> {
        if schedule.in_batches() {
            for r in m.written() {
                if let Some(p) = m.leaves(r.oid).iter().find(|p| p.kind != "r") {
                    return Err(DbError::refusal(
                        "batch-size",
                        Refusal::new(
                            Reason::NotInBatches,
                            format!(
                                "partition {}.{} of {} is {} (expected plain tables in batches)",
                                p.schema,
                                p.name,
                                r.display_name(),
                                if p.kind == "p" {
                                    "partitioned itself"
                                } else {
                                    "a foreign table"
                                }
                            ),
                        )
                        .way_out(WayOut::OneTransaction),
                    ));
                }
            }
        }
        Ok(Vec::new())
    }
}
