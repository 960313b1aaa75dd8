//! The server-wide cell's checkpoint (E5, RFC 9562 §6.3): a small file in
//! the data directory holding a Unix millisecond written *ahead* of every
//! value handed out. The first `uuidv7()` after a start reads it and moves
//! the cell above it, so a server restarted with its clock set back still
//! hands out larger values than before.
//!
//! Written when the values reach within half a margin of the stored one:
//! at most one write (temporary file, fsync, rename, directory fsync) every
//! [`MARGIN_MS`]/2 of generated time, by whichever backend gets there
//! first; the others never wait for it.

use crate::state::ServerState;
use pgrx::prelude::*;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use uuidforge::generator::{load_checkpoint, store_checkpoint, CheckpointStart};

/// How far ahead of the values the stored time is, in ms.
pub const MARGIN_MS: u64 = 10_000;

/// The file's name in the data directory.
pub const FILE: &str = "uuidforge_checkpoint";

const UNREAD: u32 = 0;
const READING: u32 = 1;
const READ: u32 = 2;

fn path() -> PathBuf {
    // SAFETY: DataDir is set before any backend runs SQL and never changes.
    let dir = unsafe { std::ffi::CStr::from_ptr(pg_sys::DataDir) };
    PathBuf::from(dir.to_string_lossy().into_owned()).join(FILE)
}

/// Reads the checkpoint into the cell once per server start (the first
/// backend to generate does it; any other waits the few microseconds).
pub fn ensure_loaded(state: &ServerState) {
    if state.checkpoint_phase.load(Ordering::Acquire) == READ {
        return;
    }
    if state
        .checkpoint_phase
        .compare_exchange(UNREAD, READING, Ordering::AcqRel, Ordering::Acquire)
        .is_ok()
    {
        match load_checkpoint(&path()) {
            CheckpointStart::Resume(ms) => {
                state.cell.resume_after(ms);
                state.checkpoint_ms.store(ms, Ordering::Release);
            }
            CheckpointStart::Fresh(why) if why.contains("does not exist") => {}
            CheckpointStart::Fresh(why) => ereport!(
                WARNING,
                PgSqlErrorCode::ERRCODE_DATA_CORRUPTED,
                format!("uuidforge: {why}"),
                "uuidv7() continues from the clock; the file is rewritten with the next values"
            ),
        }
        state.checkpoint_phase.store(READ, Ordering::Release);
        return;
    }
    while state.checkpoint_phase.load(Ordering::Acquire) != READ {
        std::thread::yield_now();
    }
}

/// Called with each value's millisecond: stores `ms + MARGIN_MS` when the
/// values come within half a margin of the stored time.
pub fn note(state: &ServerState, ms: u64) {
    if ms + MARGIN_MS / 2 < state.checkpoint_ms.load(Ordering::Relaxed) {
        return;
    }
    if state
        .checkpoint_writing
        .compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed)
        .is_err()
    {
        return;
    }
    let ahead = ms + MARGIN_MS;
    if ahead > state.checkpoint_ms.load(Ordering::Acquire) {
        match store_checkpoint(&path(), ahead) {
            Ok(()) => state.checkpoint_ms.store(ahead, Ordering::Release),
            Err(e) => {
                // Retried half a margin later, not at every value.
                state.checkpoint_ms.store(ahead, Ordering::Release);
                ereport!(
                    WARNING,
                    PgSqlErrorCode::ERRCODE_IO_ERROR,
                    format!("uuidforge: could not write {}: {e}", path().display()),
                    "values stay ordered while the server runs; after a restart with the clock set back they may not be"
                );
            }
        }
    }
    state.checkpoint_writing.store(false, Ordering::Release);
}

/// The stored time, for `uuidforge_telemetry()`.
pub fn stored_ms(state: &ServerState) -> u64 {
    state.checkpoint_ms.load(Ordering::Relaxed)
}
