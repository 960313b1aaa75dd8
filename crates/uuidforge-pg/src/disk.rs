//! `uuidforge_data_directory_free_bytes()`: the free space of the file
//! system holding the data directory, which a change's plan compares with
//! what it may need (SQL itself cannot read free disk space). Like
//! `pg_database_size`, it tells sizes and nothing of any row.

use pgrx::prelude::*;

/// Bytes an unprivileged process may still write on the file system
/// holding the data directory (`statvfs`: available blocks times the
/// fragment size), or NULL when the server cannot tell.
///
/// ```sql
/// SELECT pg_size_pretty(uuidforge_data_directory_free_bytes());
/// ```
#[pg_extern(volatile, parallel_safe)]
fn uuidforge_data_directory_free_bytes() -> Option<i64> {
    // SAFETY: DataDir is the server's own NUL-terminated path, set before
    // any backend runs SQL and never freed; statvfs only writes `stats`.
    let stats = unsafe {
        let dir = pg_sys::DataDir;
        if dir.is_null() {
            return None;
        }
        let mut stats: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(dir, &mut stats) != 0 {
            return None;
        }
        stats
    };
    i64::try_from(u128::from(stats.f_bavail) * u128::from(stats.f_frsize)).ok()
}
