//! Where the generator state lives: in shared memory when the library is in
//! `shared_preload_libraries` (every session of the server then hands out
//! strictly increasing values, E2), otherwise in this backend (per-session
//! order). The `uuidforge.profile` setting picks the layout; all profiles
//! continue from one another through the same cell.

use pgrx::prelude::*;
use pgrx::{pg_shmem_init, GucContext, GucFlags, GucRegistry, GucSetting, PgAtomic};
use std::sync::OnceLock;
use uuidforge::generator::{GeneratorCell, GeneratorConfig, SharedGenerator};

/// The built-in generator profiles (`uuidforge::generator::PROFILES`).
#[derive(PostgresGucEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum Profile {
    /// Guard bit + 17-bit counter, 56 random bits.
    #[name = c"default"]
    Default,
    /// 42-bit counter, 32 random bits (the `uuid` and `uuid7` crates).
    #[name = c"counter42"]
    Counter42,
    /// 12-bit sub-millisecond fraction (PostgreSQL 18).
    #[name = c"pg18"]
    Pg18,
    /// Random start, random increments (RFC 9562 Method 2).
    #[name = c"random"]
    Random,
}

impl Profile {
    pub fn name(self) -> &'static str {
        uuidforge::generator::PROFILES[self as usize]
    }

    pub fn config(self) -> GeneratorConfig {
        GeneratorConfig::profile(self.name()).expect("built-in profiles exist")
    }
}

pub static PROFILE: GucSetting<Profile> = GucSetting::<Profile>::new(Profile::Default);

/// Room for a 16-byte-aligned [`GeneratorCell`] in memory that PostgreSQL
/// only promises to align to 8 bytes.
#[repr(C)]
#[derive(Default, Clone, Copy)]
pub struct ShmemCell {
    bytes: [u64; 6],
}

// SAFETY: plain bytes; the cell inside is atomics only, no pointers.
unsafe impl pgrx::PGRXSharedMemory for ShmemCell {}

const _: () = assert!(
    std::mem::size_of::<ShmemCell>()
        >= std::mem::size_of::<GeneratorCell>() + std::mem::align_of::<GeneratorCell>()
);

impl ShmemCell {
    fn cell(&self) -> &GeneratorCell {
        let base = self.bytes.as_ptr() as usize;
        let aligned = base.next_multiple_of(std::mem::align_of::<GeneratorCell>());
        // SAFETY: `aligned` is inside `bytes` with room for the cell (checked
        // above); all-zero bytes are the cell's initial state, and the cell
        // is only ever used through atomics.
        unsafe { &*(aligned as *const GeneratorCell) }
    }
}

static SHARED: PgAtomic<ShmemCell> = unsafe { PgAtomic::new(c"uuidforge generator cell") };

/// Set in the postmaster by `_PG_init` under `shared_preload_libraries`;
/// inherited by every backend it forks.
static mut SERVER_WIDE: bool = false;

static LOCAL: GeneratorCell = GeneratorCell::new();

pub fn init() {
    GucRegistry::define_enum_guc(
        c"uuidforge.profile",
        c"UUIDv7 layout used by uuidv7() and uuidv7_gen columns.",
        c"default, counter42, pg18 or random. Values stay strictly increasing when sessions use different profiles.",
        &PROFILE,
        GucContext::Userset,
        GucFlags::default(),
    );
    // SAFETY: read-only PostgreSQL global, set while preloading.
    let preloading = unsafe { pg_sys::process_shared_preload_libraries_in_progress };
    if preloading {
        if GeneratorCell::is_lock_free() {
            pg_shmem_init!(SHARED);
            // SAFETY: single-threaded postmaster start-up, before any fork.
            unsafe { SERVER_WIDE = true };
        } else {
            ereport!(
                WARNING,
                PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
                "uuidforge: this CPU has no 16-byte compare-and-swap; uuidv7() is ordered per session only"
            );
        }
    }
}

/// Whether values are ordered across all sessions of the server.
pub fn server_wide() -> bool {
    // SAFETY: written once before any backend exists.
    unsafe { SERVER_WIDE }
}

/// The cell every `uuidv7()` of this backend goes through.
pub fn cell() -> &'static GeneratorCell {
    if server_wide() {
        SHARED.get().cell()
    } else {
        &LOCAL
    }
}

/// This backend's generator for the session's profile.
pub fn generator() -> &'static SharedGenerator {
    static GENERATORS: [OnceLock<SharedGenerator>; 4] = [
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
    ];
    let profile = PROFILE.get();
    GENERATORS[profile as usize].get_or_init(|| {
        SharedGenerator::new(profile.config()).expect("built-in profiles are valid")
    })
}

/// The next UUIDv7 of the session's profile through the cell.
pub fn next_v7() -> uuid::Uuid {
    let g = generator();
    let cell = cell();
    match g.generate_in(cell) {
        Ok(u) => u,
        // Only a clock outside 1970..10889 gets here: count on from the last
        // value, still in order (the library's v7() does the same).
        Err(_) => g.generate_without_clock_in(cell),
    }
}
