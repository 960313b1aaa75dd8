//! Where the generator state lives: in shared memory when the library is in
//! `shared_preload_libraries` (every session of the server then hands out
//! strictly increasing values, E2), otherwise in this backend (per-session
//! order). The `uuidforge.profile` setting picks the layout — a built-in
//! profile or one registered with `uuidforge_profile_register` (B13); all
//! profiles continue from one another through the same cell.

use crate::checkpoint;
use pgrx::prelude::*;
use pgrx::{pg_shmem_init, PgAtomic};
use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::c_char;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use uuidforge::generator::{GeneratorCell, GeneratorConfig, SharedGenerator, PROFILES};

/// `uuidforge.profile`, registered by hand rather than through pgrx's
/// `GucSetting`, whose `get` copies the string: every `uuidv7()` reads it,
/// and a copy per call was measurable.
static mut PROFILE_VALUE: *mut c_char = std::ptr::null_mut();

/// The setting's current text, without copying it.
fn profile_setting() -> &'static [u8] {
    // SAFETY: PostgreSQL keeps the value a valid C string (or NULL) and
    // replaces it only between statements, never while this runs; backends
    // are single-threaded.
    unsafe {
        let ptr = *std::ptr::addr_of!(PROFILE_VALUE);
        if ptr.is_null() {
            b"default"
        } else {
            std::ffi::CStr::from_ptr(ptr).to_bytes()
        }
    }
}

/// What `uuidforge_telemetry()` counts values under: the built-in profiles
/// (in [`PROFILES`] order), every registered profile together, and
/// `uuidv8_shard`.
pub const COUNTED: [&str; 6] = [
    "default",
    "counter42",
    "pg18",
    "random",
    "registered",
    "v8_shard",
];
/// [`COUNTED`]'s slot for registered profiles.
pub const REGISTERED_SLOT: usize = 4;
/// [`COUNTED`]'s slot for `uuidv8_shard`.
pub const V8_SHARD_SLOT: usize = 5;

/// What the sessions of a server share (or one session, when the library is
/// not preloaded): the generator cell, counts of values made, and the
/// checkpoint bookkeeping (E5).
#[repr(C)]
pub struct ServerState {
    pub cell: GeneratorCell,
    generated: [AtomicU64; COUNTED.len()],
    /// The value the checkpoint file holds (Unix ms, 0 = none yet).
    pub checkpoint_ms: AtomicU64,
    /// 0 = the file was not read yet, 1 = a backend is reading it, 2 = read.
    pub checkpoint_phase: AtomicU32,
    /// A backend is writing the file.
    pub checkpoint_writing: AtomicBool,
}

impl ServerState {
    const fn new() -> ServerState {
        ServerState {
            cell: GeneratorCell::new(),
            generated: [const { AtomicU64::new(0) }; COUNTED.len()],
            checkpoint_ms: AtomicU64::new(0),
            checkpoint_phase: AtomicU32::new(0),
            checkpoint_writing: AtomicBool::new(false),
        }
    }

    pub fn count(&self, slot: usize) {
        self.generated[slot].fetch_add(1, Ordering::Relaxed);
    }

    pub fn generated(&self, slot: usize) -> u64 {
        self.generated[slot].load(Ordering::Relaxed)
    }
}

/// Room for a 16-byte-aligned [`ServerState`] in memory that PostgreSQL
/// only promises to align to 8 bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ShmemState {
    bytes: [u64; SHMEM_WORDS],
}

const SHMEM_WORDS: usize =
    (std::mem::size_of::<ServerState>() + std::mem::align_of::<ServerState>()).div_ceil(8);

impl Default for ShmemState {
    fn default() -> Self {
        ShmemState {
            bytes: [0; SHMEM_WORDS],
        }
    }
}

// SAFETY: plain bytes; the state inside is atomics only, no pointers.
unsafe impl pgrx::PGRXSharedMemory for ShmemState {}

impl ShmemState {
    fn state(&self) -> &ServerState {
        let base = self.bytes.as_ptr() as usize;
        let aligned = base.next_multiple_of(std::mem::align_of::<ServerState>());
        // SAFETY: `aligned` is inside `bytes` with room for the state (see
        // SHMEM_WORDS); all-zero bytes are its initial state (every field is
        // an atomic starting at zero), and it is only used through atomics.
        unsafe { &*(aligned as *const ServerState) }
    }
}

static SHARED: PgAtomic<ShmemState> = unsafe { PgAtomic::new(c"uuidforge generator cell") };

/// Set in the postmaster by `_PG_init` under `shared_preload_libraries`;
/// inherited by every backend it forks.
static mut SERVER_WIDE: bool = false;

static LOCAL: ServerState = ServerState::new();

pub fn init() {
    // SAFETY: called once from _PG_init; the value's address is static.
    unsafe {
        pg_sys::DefineCustomStringVariable(
            c"uuidforge.profile".as_ptr(),
            c"UUIDv7 layout used by uuidv7() and uuidv7_gen columns.".as_ptr(),
            c"default, counter42, pg18, random, or a profile registered with uuidforge_profile_register(name, json). Values stay strictly increasing when sessions use different profiles.".as_ptr(),
            std::ptr::addr_of_mut!(PROFILE_VALUE),
            c"default".as_ptr(),
            pg_sys::GucContext::PGC_USERSET,
            0,
            None,
            None,
            None,
        );
    }
    crate::shard::init();
    crate::uuid192::init();
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

/// The state every `uuidv7()` of this backend goes through.
pub fn server_state() -> &'static ServerState {
    if server_wide() {
        SHARED.get().state()
    } else {
        &LOCAL
    }
}

/// The profile `uuidforge.profile` names, resolved.
pub struct Active {
    /// Its name.
    pub name: String,
    /// Its [`COUNTED`] slot.
    pub slot: usize,
    /// Its settings.
    pub config: GeneratorConfig,
    /// This backend's generator for it.
    pub generator: Rc<SharedGenerator>,
}

/// A registered profile as read in one transaction.
struct Registered {
    transaction: u32,
    json: String,
    active: Rc<Active>,
}

thread_local! {
    static BUILT_IN: RefCell<[Option<Rc<Active>>; 4]> = const { RefCell::new([None, None, None, None]) };
    static REGISTERED: RefCell<HashMap<String, Registered>> = RefCell::new(HashMap::new());
}

/// The session's profile: a built-in one, or a registered one read from
/// `uuidforge_profiles` once per transaction (so a re-registration takes
/// effect at the next transaction of every session).
pub fn active() -> Rc<Active> {
    let setting = profile_setting();
    if let Some(slot) = PROFILES.iter().position(|p| p.as_bytes() == setting) {
        let cached = BUILT_IN.with(|b| b.borrow()[slot].clone());
        if let Some(active) = cached {
            return active;
        }
    }
    let name = String::from_utf8_lossy(setting).into_owned();
    if let Some(slot) = PROFILES.iter().position(|p| *p == name) {
        return BUILT_IN.with(|b| {
            b.borrow_mut()[slot]
                .get_or_insert_with(|| {
                    let config = GeneratorConfig::profile(&name).expect("a built-in profile");
                    let generator = Rc::new(
                        SharedGenerator::new(config.clone()).expect("built-in profiles are valid"),
                    );
                    Rc::new(Active {
                        name: name.clone(),
                        slot,
                        config,
                        generator,
                    })
                })
                .clone()
        });
    }
    registered(&name)
}

fn current_transaction() -> u32 {
    // SAFETY: MyProc is this backend's own PGPROC, set before any SQL runs.
    // (PostgreSQL 17 moved it into the virtual transaction id.)
    #[cfg(any(feature = "pg15", feature = "pg16"))]
    unsafe {
        (*pg_sys::MyProc).lxid
    }
    #[cfg(any(feature = "pg17", feature = "pg18"))]
    unsafe {
        (*pg_sys::MyProc).vxid.lxid
    }
}

fn registered(name: &str) -> Rc<Active> {
    let transaction = current_transaction();
    let cached = REGISTERED.with(|r| {
        r.borrow()
            .get(name)
            .filter(|c| c.transaction == transaction)
            .map(|c| c.active.clone())
    });
    if let Some(active) = cached {
        return active;
    }
    let Some(json) = crate::profiles::lookup(name) else {
        crate::errors::invalid_argument(
            "uuidv7",
            "uuidforge.profile",
            format_args!("'{name}'"),
            format_args!(
                "a built-in profile ({}) or a name registered with uuidforge_profile_register(name, json)",
                PROFILES.join(", ")
            ),
        );
    };
    REGISTERED.with(|r| {
        let mut r = r.borrow_mut();
        if let Some(c) = r.get_mut(name).filter(|c| c.json == json) {
            c.transaction = transaction;
            return c.active.clone();
        }
        let config = crate::profiles::config_of(name, &json);
        let generator = match SharedGenerator::new(config.clone()) {
            Ok(g) => Rc::new(g),
            Err(e) => crate::errors::invalid_argument(
                "uuidforge.profile",
                "the registered profile",
                format_args!("'{name}'"),
                e,
            ),
        };
        let active = Rc::new(Active {
            name: name.to_string(),
            slot: REGISTERED_SLOT,
            config,
            generator,
        });
        r.insert(
            name.to_string(),
            Registered {
                transaction,
                json,
                active: active.clone(),
            },
        );
        active
    })
}

/// The next UUIDv7 of the session's profile through the cell.
pub fn next_v7() -> uuid::Uuid {
    let active = active();
    let state = server_state();
    if server_wide() {
        checkpoint::ensure_loaded(state);
    }
    let u = match active.generator.generate_in(&state.cell) {
        Ok(u) => u,
        // Only a clock outside 1970..10889 gets here: count on from the last
        // value, still in order (the library's v7() does the same).
        Err(_) => active.generator.generate_without_clock_in(&state.cell),
    };
    state.count(active.slot);
    if server_wide() {
        checkpoint::note(state, uuidforge::v7::unix_ms(&u));
    }
    u
}
