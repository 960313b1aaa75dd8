//! `uuid_heap_candidates`: the rows of a heap table that may hold one of a
//! set of UUIDs, read from its pages as bytes (`uuidforge_db::pages`), so
//! that `find` fetches only those rows by `ctid` and checks them exactly.
//!
//! It reads every page of the table once through a bulk-read ring (as a
//! sequential scan does), copies each page under a share lock and searches
//! the copy, so no lock is held while searching; the tuples that may hold
//! a value are then checked visible to the statement's snapshot (the page
//! still pinned, so not pruned meanwhile), and only those are candidates
//! and have their compressed or out-of-line values read: a dead version's
//! TOAST chunks may already be gone. It only says where to look: rows are
//! returned by the statement that calls it, under the statement's snapshot
//! and the caller's privileges.

use crate::errors::invalid_argument;
use crate::generate::from_pg;
use pgrx::prelude::*;
use std::cell::RefCell;
use std::rc::Rc;
use uuidforge_db::pages::{page_candidates, Attribute, Layout, Search, WindowSet, PAGE_SIZE};

/// A relation's name for messages (its number when it has none).
fn name_of(rel: pg_sys::Oid) -> String {
    // SAFETY: get_rel_name returns NULL or a palloc'd C string.
    let name = unsafe { pg_sys::get_rel_name(rel) };
    if name.is_null() {
        rel.to_u32().to_string()
    } else {
        // SAFETY: non-null, NUL-terminated.
        let text = unsafe { std::ffi::CStr::from_ptr(name) };
        format!("\"{}\"", text.to_string_lossy())
    }
}

/// Whether tuple `item` of the pinned, share-locked `buffer` (block
/// `block` of `relation`) is visible to `snapshot`, as a sequential scan
/// decides (it may set the tuple's hint bits, as a scan does).
///
/// # Safety
///
/// `buffer` is pinned and share-locked; `item` is a line pointer of its
/// page.
unsafe fn visible(
    relation: pg_sys::Relation,
    buffer: pg_sys::Buffer,
    block: pg_sys::BlockNumber,
    item: u16,
    snapshot: pg_sys::Snapshot,
) -> bool {
    let page = pg_sys::BufferGetPage(buffer);
    if item > pg_sys::PageGetMaxOffsetNumber(page) {
        return false;
    }
    let id = pg_sys::PageGetItemId(page, item);
    if (*id).lp_flags() != pg_sys::LP_NORMAL {
        return false;
    }
    let mut tuple = pg_sys::HeapTupleData {
        t_len: (*id).lp_len(),
        t_tableOid: (*relation).rd_id,
        t_data: pg_sys::PageGetItem(page, id) as pg_sys::HeapTupleHeader,
        ..Default::default()
    };
    pgrx::itemptr::item_pointer_set_all(&mut tuple.t_self, block, item);
    pg_sys::HeapTupleSatisfiesVisibility(&mut tuple, snapshot, buffer)
}

fn refuse(what: String) -> ! {
    ereport!(
        ERROR,
        PgSqlErrorCode::ERRCODE_INSUFFICIENT_PRIVILEGE,
        format!("uuid_heap_candidates: {what}")
    );
}

thread_local! {
    /// The last set built and its values: the statements of one search
    /// pass the same values table after table, and building the set for
    /// thousands of values costs more than reading a small table.
    static LAST: RefCell<Option<(Vec<uuid::Uuid>, Rc<WindowSet>)>> = const { RefCell::new(None) };
}

fn windows_for(uuids: Vec<uuid::Uuid>) -> Rc<WindowSet> {
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        if let Some((values, set)) = last.as_ref() {
            if *values == uuids {
                return set.clone();
            }
        }
        let set = Rc::new(WindowSet::new(&uuids));
        *last = Some((uuids, set.clone()));
        set
    })
}

/// The attributes of a tuple descriptor. PostgreSQL 18 keeps a compact
/// copy of each first and the full ones after them (`TupleDescAttr`).
///
/// # Safety
/// `desc` is a valid descriptor with `natts` attributes.
#[cfg(not(feature = "pg18"))]
unsafe fn attributes<'a>(
    desc: pg_sys::TupleDesc,
    natts: usize,
) -> &'a [pg_sys::FormData_pg_attribute] {
    (*desc).attrs.as_slice(natts)
}

/// See the other versions' `attributes`.
///
/// # Safety
/// `desc` is a valid descriptor with `natts` attributes.
#[cfg(feature = "pg18")]
unsafe fn attributes<'a>(
    desc: pg_sys::TupleDesc,
    natts: usize,
) -> &'a [pg_sys::FormData_pg_attribute] {
    let full = (*desc)
        .compact_attrs
        .as_ptr()
        .add(natts)
        .cast::<pg_sys::FormData_pg_attribute>();
    std::slice::from_raw_parts(full, natts)
}

/// How the table's rows are stored, each column searched as asked.
///
/// # Safety
/// `relation` is open.
unsafe fn layout_of(relation: pg_sys::Relation, text: &[i16], binary: &[i16]) -> Layout {
    let desc = (*relation).rd_att;
    let natts = usize::try_from((*desc).natts).unwrap_or(0);
    let attrs = attributes(desc, natts);
    let mut layout = Layout::default();
    for (i, a) in attrs.iter().enumerate() {
        let num = i16::try_from(i + 1).unwrap_or(i16::MAX);
        let search = if a.attisdropped {
            Search::Skip
        } else if binary.contains(&num) {
            Search::Binary
        } else if text.contains(&num) {
            Search::Text
        } else {
            Search::Skip
        };
        layout.has_missing |= a.atthasmissing;
        layout.attributes.push(Attribute {
            len: a.attlen,
            align: match a.attalign as u8 {
                b's' => 2,
                b'i' => 4,
                b'd' => 8,
                _ => 1,
            },
            search,
        });
    }
    layout
}

/// The rows (as `ctid`s) of table `rel` whose columns `text_columns`
/// (text, varchar, char, json, jsonb and arrays of them: any spelling) or
/// `binary_columns` (uuid, uuid[], uuid192, bytea: the 16 bytes) may hold
/// one of `needles`, in any spelling, compressed or TOASTed values
/// included. Candidates may hold none (the caller checks each row); a row
/// holding one is never left out. The caller needs `SELECT` on the table,
/// and a table under row-level security is refused (its rows would be
/// looked at past the policies). `uuidforge db find` calls it as
/// `WHERE ctid = ANY ((SELECT uuid_heap_candidates(…)))`.
#[pg_extern(stable, strict, parallel_restricted)]
fn uuid_heap_candidates(
    rel: pg_sys::Oid,
    needles: Array<pgrx::Uuid>,
    text_columns: Array<i16>,
    binary_columns: Array<i16>,
) -> Vec<pg_sys::ItemPointerData> {
    let uuids: Vec<uuid::Uuid> = needles.iter().flatten().map(from_pg).collect();
    if uuids.is_empty() {
        invalid_argument(
            "uuid_heap_candidates",
            "needles",
            "'{}'",
            "at least one UUID",
        );
    }
    let text: Vec<i16> = text_columns.iter().flatten().collect();
    let binary: Vec<i16> = binary_columns.iter().flatten().collect();
    let windows = windows_for(uuids);
    let mut out = Vec::new();
    // SAFETY: the relation is opened (and locked) before use and closed on
    // every path that returns; an error raised by PostgreSQL releases the
    // lock, the pin and the ring with the transaction.
    unsafe {
        if pg_sys::pg_class_aclcheck(rel, pg_sys::GetUserId(), pg_sys::ACL_SELECT as _)
            != pg_sys::AclResult::ACLCHECK_OK
        {
            refuse(format!("permission denied for relation {}", name_of(rel)));
        }
        if pg_sys::check_enable_rls(rel, pg_sys::InvalidOid, false)
            == pg_sys::CheckEnableRlsResult::RLS_ENABLED as i32
        {
            refuse(format!(
                "relation {} has row-level security: its rows are read through the policies",
                name_of(rel)
            ));
        }
        let relation = pg_sys::relation_open(rel, pg_sys::AccessShareLock as _);
        let form = (*relation).rd_rel;
        let kind = (*form).relkind as u8;
        if !matches!(kind, b'r' | b'm') || (*form).relam != pg_sys::HEAP_TABLE_AM_OID {
            pg_sys::relation_close(relation, pg_sys::AccessShareLock as _);
            invalid_argument(
                "uuid_heap_candidates",
                "rel",
                name_of(rel),
                "a table or materialized view stored as heap",
            );
        }
        let layout = layout_of(relation, &text, &binary);
        let blocks =
            pg_sys::RelationGetNumberOfBlocksInFork(relation, pg_sys::ForkNumber::MAIN_FORKNUM);
        let ring = pg_sys::GetAccessStrategy(pg_sys::BufferAccessStrategyType::BAS_BULKREAD);
        // u64s: the copy is aligned as the page is, for varlena headers.
        let mut copy = vec![0u64; PAGE_SIZE / 8];
        // The statement's snapshot: only its rows are candidates, and only
        // their out-of-line values are read (a dead version's TOAST chunks
        // may be gone already: reading them fails).
        let snapshot = pg_sys::GetActiveSnapshot();
        for block in 0..blocks {
            pg_sys::check_for_interrupts!();
            let buffer = pg_sys::ReadBufferExtended(
                relation,
                pg_sys::ForkNumber::MAIN_FORKNUM,
                block,
                pg_sys::ReadBufferMode::RBM_NORMAL,
                ring,
            );
            pg_sys::LockBuffer(buffer, pg_sys::BUFFER_LOCK_SHARE as _);
            std::ptr::copy_nonoverlapping(
                pg_sys::BufferGetPage(buffer) as *const u8,
                copy.as_mut_ptr() as *mut u8,
                PAGE_SIZE,
            );
            pg_sys::LockBuffer(buffer, pg_sys::BUFFER_LOCK_UNLOCK as _);
            let page = std::slice::from_raw_parts(copy.as_ptr() as *const u8, PAGE_SIZE);
            let mut tuples = page_candidates(page, &layout, &windows);
            if !tuples.is_empty() {
                // The pin kept since the copy forbids pruning the page, so
                // its line pointers still name the tuples copied.
                pg_sys::LockBuffer(buffer, pg_sys::BUFFER_LOCK_SHARE as _);
                tuples.retain(|t| visible(relation, buffer, block, t.item, snapshot));
                pg_sys::LockBuffer(buffer, pg_sys::BUFFER_LOCK_UNLOCK as _);
            }
            pg_sys::ReleaseBuffer(buffer);
            for tuple in tuples {
                let candidate = tuple.toasted.is_empty()
                    || tuple.toasted.iter().any(|value| {
                        let stored = page.as_ptr().add(value.offset) as *mut pg_sys::varlena;
                        let plain = pg_sys::detoast_attr(stored);
                        let bytes = std::slice::from_raw_parts(
                            pgrx::varlena::vardata_any(plain) as *const u8,
                            pgrx::varlena::varsize_any_exhdr(plain),
                        );
                        let holds = windows.holds(bytes, value.search);
                        if plain != stored {
                            pg_sys::pfree(plain.cast());
                        }
                        holds
                    });
                if candidate {
                    let mut tid = pg_sys::ItemPointerData::default();
                    pgrx::itemptr::item_pointer_set_all(&mut tid, block, tuple.item);
                    out.push(tid);
                }
            }
        }
        pg_sys::FreeAccessStrategy(ring);
        pg_sys::relation_close(relation, pg_sys::AccessShareLock as _);
    }
    out
}
