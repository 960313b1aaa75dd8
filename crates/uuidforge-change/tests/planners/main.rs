//! The change planners ([`uuidforge_change::ops`]) on catalogs captured from the
//! real server, without a server: every case of every operation (rename,
//! migrate-key in one transaction and in batches, merge, unmerge) planned
//! from a captured snapshot and the answers its planning pass read, each
//! its own test, on every server version captured; the printed plan
//! compared with the reviewed one (`tests/fixtures/plans/golden/`), and
//! the plan's shape checked. Catalogs: `shop` (every key type, views, a
//! self-reference, a partitioned referencing table, duplicates to merge),
//! `partitions` (foreign keys and indexes declared on partitions, triggers),
//! `composite` (composite keys and foreign keys, a table referencing a key
//! twice with a CHECK and a deferrable unique key NULLS NOT DISTINCT, a
//! merge to undo).

mod catalogs;
mod composite;
mod copies;
mod dependents;
mod key_times;
mod literals;
mod partitions;
mod publications;
mod schedules;
mod shop;

/// One test per case: `$body` runs with the plan (`Result<ChangePlan,
/// DbError>`) and the catalog capture, for every server version captured.
#[macro_export]
macro_rules! case {
    ($test:ident, $catalog:literal, $case:literal, |$plan:ident, $captured:ident| $body:block) => {
        #[test]
        fn $test() {
            for $captured in $crate::catalogs::captured($catalog) {
                let started = std::time::Instant::now();
                let $plan = $captured.plan($case);
                $body
                eprintln!(
                    "{}/{} on {}: planned twice in {:.2} ms",
                    $catalog,
                    $case,
                    $captured.major,
                    started.elapsed().as_secs_f64() * 1000.0
                );
            }
        }
    };
}
