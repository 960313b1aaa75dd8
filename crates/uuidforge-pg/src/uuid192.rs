//! The `uuid192` type (C1): a UUID followed by a 64-bit segment with a
//! structure code, fields and a CRC-16 over both, stored as 24 bytes that
//! compare like the value (UUID, then segment). Text in: the 53-character
//! `8-4-4-4-12-16` form or the 39-character Base32 form, checksum verified;
//! text out: the 53-character form. Binary send/receive: the 24 bytes.
//! B-tree and hash operator classes, a cast to `uuid` for joins.

use crate::errors::{invalid_argument, invalid_binary, invalid_text};
use crate::generate::{from_pg, to_pg};
use pgrx::callconv::{Arg, ArgAbi, BoxRet, FcInfo};
use pgrx::datum::{Datum, Internal};
use pgrx::nullable::Nullable;
use pgrx::prelude::*;
use pgrx::PgMemoryContexts;
use std::ffi::{CStr, CString};
use uuidforge::uuid192::{GeneralFields, Operation, Segment, SegmentFields, Uuid192};

const LEN: usize = 24;

/// A `uuid192` datum: the 24 stored bytes (a fixed-length, pass-by-reference
/// type with char alignment, like `uuid`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Uuid192Datum([u8; LEN]);

impl Uuid192Datum {
    fn value(self) -> Uuid192 {
        // Stored values were verified on the way in; a value that fails here
        // was written by something else (binary corruption).
        Uuid192::from_bytes(self.0).unwrap_or_else(|e| invalid_binary("uuid192", e))
    }

    fn uuid(self) -> uuid::Uuid {
        uuid::Uuid::from_slice(&self.0[..16]).expect("16 bytes")
    }

    fn segment(self) -> Segment {
        Segment(u64::from_be_bytes(
            self.0[16..].try_into().expect("8 bytes"),
        ))
    }
}

impl From<Uuid192> for Uuid192Datum {
    fn from(v: Uuid192) -> Self {
        Uuid192Datum(v.to_bytes())
    }
}

impl FromDatum for Uuid192Datum {
    unsafe fn from_polymorphic_datum(
        datum: pg_sys::Datum,
        is_null: bool,
        _: pg_sys::Oid,
    ) -> Option<Self> {
        if is_null {
            return None;
        }
        let mut bytes = [0u8; LEN];
        // SAFETY: a non-null uuid192 datum points at its 24 bytes (fixed
        // length types are never toasted).
        unsafe {
            std::ptr::copy_nonoverlapping(datum.cast_mut_ptr::<u8>(), bytes.as_mut_ptr(), LEN)
        };
        Some(Uuid192Datum(bytes))
    }
}

impl IntoDatum for Uuid192Datum {
    fn into_datum(self) -> Option<pg_sys::Datum> {
        // SAFETY: the current memory context is valid inside a function call.
        let slice = unsafe { PgMemoryContexts::CurrentMemoryContext.palloc_slice::<u8>(LEN) };
        slice.copy_from_slice(&self.0);
        Some(slice.as_ptr().into())
    }

    fn type_oid() -> pg_sys::Oid {
        // SAFETY: a catalog lookup by name on the search path.
        unsafe { pg_sys::TypenameGetTypid(c"uuid192".as_ptr()) }
    }
}

pgrx::impl_sql_translatable!(Uuid192Datum, "uuid192");

// SAFETY: arguments are unboxed through `FromDatum` above, which reads the
// 24 bytes of a non-null datum; nulls never reach it.
unsafe impl<'fcx> ArgAbi<'fcx> for Uuid192Datum {
    unsafe fn unbox_arg_unchecked(arg: Arg<'_, 'fcx>) -> Self {
        let index = arg.index();
        // SAFETY: the caller guarantees the argument has this type.
        unsafe { arg.unbox_arg_using_from_datum() }
            .unwrap_or_else(|| panic!("argument {index} must not be null"))
    }

    unsafe fn unbox_nullable_arg(arg: Arg<'_, 'fcx>) -> Nullable<Self> {
        // SAFETY: as above.
        unsafe { arg.unbox_arg_using_from_datum() }.into()
    }
}

// SAFETY: the datum is palloc'd in the current memory context by
// `IntoDatum` and returned to the caller at once.
unsafe impl BoxRet for Uuid192Datum {
    unsafe fn box_into<'fcx>(self, fcinfo: &mut FcInfo<'fcx>) -> Datum<'fcx> {
        match self.into_datum() {
            Some(datum) => unsafe { fcinfo.return_raw_datum(datum) },
            None => fcinfo.return_null(),
        }
    }
}

extension_sql!("CREATE TYPE uuid192;", name = "uuid192_shell",);

#[pg_extern(immutable, strict, parallel_safe, requires = ["uuid192_shell"])]
fn uuid192_in(input: &CStr) -> Uuid192Datum {
    let text = input.to_string_lossy();
    match Uuid192::parse(text.trim()) {
        Ok(v) => v.into(),
        Err(e) => invalid_text("uuid192", &text, e),
    }
}

#[pg_extern(immutable, strict, parallel_safe, requires = ["uuid192_shell"])]
fn uuid192_out(value: Uuid192Datum) -> CString {
    // Output never re-verifies: the text shows exactly what is stored.
    let uuid = uuidforge::fmt::canonical(&value.uuid());
    let text = format!(
        "{}-{:016x}",
        std::str::from_utf8(&uuid).expect("hex is ASCII"),
        value.segment().0
    );
    CString::new(text).expect("no NUL in hex")
}

#[pg_extern(immutable, strict, parallel_safe, requires = ["uuid192_shell"])]
fn uuid192_recv(mut internal: Internal) -> Uuid192Datum {
    // SAFETY: a type's receive function gets the message buffer as internal.
    let Some(buf) = (unsafe { internal.get_mut::<pg_sys::StringInfoData>() }) else {
        invalid_binary("uuid192", "no message buffer");
    };
    let remaining = (buf.len - buf.cursor) as usize;
    if remaining != LEN {
        invalid_binary("uuid192", format!("{remaining} bytes, expected {LEN}"));
    }
    let mut bytes = [0u8; LEN];
    // SAFETY: `remaining` bytes are readable from `data + cursor`.
    unsafe {
        std::ptr::copy_nonoverlapping(
            buf.data.add(buf.cursor as usize).cast::<u8>(),
            bytes.as_mut_ptr(),
            LEN,
        )
    };
    buf.cursor = buf.len;
    match Uuid192::from_bytes(bytes) {
        Ok(v) => v.into(),
        Err(e) => invalid_binary("uuid192", e),
    }
}

#[pg_extern(immutable, strict, parallel_safe, requires = ["uuid192_shell"])]
fn uuid192_send(value: Uuid192Datum) -> Vec<u8> {
    value.0.to_vec()
}

extension_sql!(
    r#"
CREATE TYPE uuid192 (
    INPUT = uuid192_in,
    OUTPUT = uuid192_out,
    RECEIVE = uuid192_recv,
    SEND = uuid192_send,
    INTERNALLENGTH = 24,
    ALIGNMENT = char,
    STORAGE = plain
);
COMMENT ON TYPE uuid192 IS 'UUID_192: a UUID and a 64-bit segment (structure code, fields, CRC-16); ordered by UUID then segment';
"#,
    name = "uuid192_type",
    requires = [
        "uuid192_shell",
        uuid192_in,
        uuid192_out,
        uuid192_recv,
        uuid192_send
    ],
);

// Comparison, in byte order: UUID then segment.

#[pg_extern(immutable, strict, parallel_safe, requires = ["uuid192_type"])]
fn uuid192_cmp(a: Uuid192Datum, b: Uuid192Datum) -> i32 {
    a.cmp(&b) as i32
}

/// `uuidforge.uuid192_sortsupport` (on by default): whether sorts and index
/// builds use [`uuid192_sortsupport`]'s direct comparator and abbreviated
/// keys. Off, PostgreSQL calls `uuid192_cmp` through the function manager
/// for every comparison: the lab measures one against the other (C4).
pub static SORTSUPPORT: pgrx::GucSetting<bool> = pgrx::GucSetting::<bool>::new(true);

pub fn init() {
    pgrx::GucRegistry::define_bool_guc(
        c"uuidforge.uuid192_sortsupport",
        c"Sort uuid192 with a direct comparator and abbreviated keys.",
        c"Off: every comparison goes through uuid192_cmp (for measuring the difference).",
        &SORTSUPPORT,
        pgrx::GucContext::Userset,
        pgrx::GucFlags::default(),
    );
}

/// The 24 bytes behind a datum.
///
/// # Safety
/// `d` must be a non-null `uuid192` datum.
unsafe fn bytes_of<'a>(d: pg_sys::Datum) -> &'a [u8; LEN] {
    // SAFETY: the caller's promise; fixed-length values are never toasted.
    unsafe { &*(d.cast_mut_ptr::<[u8; LEN]>()) }
}

unsafe extern "C-unwind" fn compare_full(
    x: pg_sys::Datum,
    y: pg_sys::Datum,
    _: pg_sys::SortSupport,
) -> std::ffi::c_int {
    // SAFETY: tuplesort passes non-null datums of the sorted type.
    unsafe { bytes_of(x).cmp(bytes_of(y)) as std::ffi::c_int }
}

/// The abbreviated key: the first 8 bytes, big-endian, compared unsigned —
/// for UUIDv7 the millisecond and `rand_a`, which nearly always decide.
unsafe extern "C-unwind" fn abbreviate(
    original: pg_sys::Datum,
    _: pg_sys::SortSupport,
) -> pg_sys::Datum {
    // SAFETY: as above.
    let b = unsafe { bytes_of(original) };
    pg_sys::Datum::from(u64::from_be_bytes(b[..8].try_into().expect("8 bytes")) as usize)
}

/// Never gives up on abbreviation: the prefix is a UUID's first half,
/// distinct for nearly all values (a UUID shared by many segments costs a
/// full comparison per tie, which the comparator above makes cheap).
unsafe extern "C-unwind" fn keep_abbreviating(_: std::ffi::c_int, _: pg_sys::SortSupport) -> bool {
    false
}

mod server {
    use pgrx::pg_sys::{Datum, SortSupport};
    unsafe extern "C-unwind" {
        /// PostgreSQL 15's unsigned comparison of abbreviated keys.
        pub fn ssup_datum_unsigned_cmp(x: Datum, y: Datum, ssup: SortSupport) -> std::ffi::c_int;
    }
}

/// B-tree support function 2: sort support with abbreviated keys.
#[pg_extern(immutable, strict, parallel_safe, requires = ["uuid192_type"])]
fn uuid192_sortsupport(mut ssup: Internal) {
    if !SORTSUPPORT.get() {
        // PostgreSQL falls back to calling uuid192_cmp.
        return;
    }
    // SAFETY: PostgreSQL calls support function 2 with its SortSupport.
    let Some(ssup) = (unsafe { ssup.get_mut::<pg_sys::SortSupportData>() }) else {
        return;
    };
    ssup.comparator = Some(compare_full);
    if ssup.abbreviate && std::mem::size_of::<pg_sys::Datum>() >= 8 {
        ssup.abbrev_converter = Some(abbreviate);
        ssup.abbrev_abort = Some(keep_abbreviating);
        ssup.abbrev_full_comparator = Some(compare_full);
        // The server's own function, by address: tuplesort recognises it
        // and runs its specialised sort on the abbreviated keys.
        ssup.comparator = Some(server::ssup_datum_unsigned_cmp);
    }
}

#[pg_extern(immutable, strict, parallel_safe, requires = ["uuid192_type"])]
fn uuid192_lt(a: Uuid192Datum, b: Uuid192Datum) -> bool {
    a < b
}

#[pg_extern(immutable, strict, parallel_safe, requires = ["uuid192_type"])]
fn uuid192_le(a: Uuid192Datum, b: Uuid192Datum) -> bool {
    a <= b
}

#[pg_extern(immutable, strict, parallel_safe, requires = ["uuid192_type"])]
fn uuid192_eq(a: Uuid192Datum, b: Uuid192Datum) -> bool {
    a == b
}

#[pg_extern(immutable, strict, parallel_safe, requires = ["uuid192_type"])]
fn uuid192_ne(a: Uuid192Datum, b: Uuid192Datum) -> bool {
    a != b
}

#[pg_extern(immutable, strict, parallel_safe, requires = ["uuid192_type"])]
fn uuid192_ge(a: Uuid192Datum, b: Uuid192Datum) -> bool {
    a >= b
}

#[pg_extern(immutable, strict, parallel_safe, requires = ["uuid192_type"])]
fn uuid192_gt(a: Uuid192Datum, b: Uuid192Datum) -> bool {
    a > b
}

/// SplitMix64's finaliser: the UUID's leading bits are a timestamp, so
/// they must be mixed, not used as they are.
const fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn hash64(v: Uuid192Datum, seed: u64) -> u64 {
    let word = |i: usize| u64::from_be_bytes(v.0[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
    let h = mix(word(0) ^ seed);
    let h = mix(h ^ word(1));
    mix(h ^ word(2))
}

#[pg_extern(immutable, strict, parallel_safe, requires = ["uuid192_type"])]
fn uuid192_hash(v: Uuid192Datum) -> i32 {
    // The low 32 bits of the extended hash with seed 0, as PostgreSQL
    // requires of a hash opclass's two support functions.
    hash64(v, 0) as u32 as i32
}

#[pg_extern(immutable, strict, parallel_safe, requires = ["uuid192_type"])]
fn uuid192_hash_extended(v: Uuid192Datum, seed: i64) -> i64 {
    hash64(v, seed as u64) as i64
}

// Parts and fields.

/// The left 128 bits as a plain `uuid`, for joins (also the cast
/// `uuid192::uuid`).
#[pg_extern(immutable, strict, parallel_safe, requires = ["uuid192_type"])]
fn uuid192_uuid(v: Uuid192Datum) -> pgrx::Uuid {
    to_pg(v.uuid())
}

/// The 64-bit segment (bit pattern as a signed bigint).
#[pg_extern(immutable, strict, parallel_safe, requires = ["uuid192_type"])]
fn uuid192_segment(v: Uuid192Datum) -> i64 {
    v.segment().0 as i64
}

/// The 4-bit structure code (0 raw, 1 general).
#[pg_extern(immutable, strict, parallel_safe, requires = ["uuid192_type"])]
fn uuid192_structure(v: Uuid192Datum) -> i16 {
    v.segment().structure_code() as i16
}

/// The stored CRC-16.
#[pg_extern(immutable, strict, parallel_safe, requires = ["uuid192_type"])]
fn uuid192_checksum(v: Uuid192Datum) -> i32 {
    v.segment().checksum() as i32
}

/// Every segment field as JSON (`{"structure":"general","module":…}`).
#[pg_extern(immutable, strict, parallel_safe, requires = ["uuid192_type"])]
fn uuid192_fields(v: Uuid192Datum) -> pgrx::JsonB {
    let fields = v
        .value()
        .fields()
        .unwrap_or_else(|e| invalid_binary("uuid192", e));
    pgrx::JsonB(serde_json::to_value(fields).expect("fields serialise"))
}

fn general(v: Uuid192Datum) -> Option<GeneralFields> {
    match v.value().fields() {
        Ok(SegmentFields::General(g)) => Some(g),
        _ => None,
    }
}

/// The 44-bit application payload of a raw (structure 0) segment; NULL
/// for other structures.
#[pg_extern(immutable, strict, parallel_safe, requires = ["uuid192_type"])]
fn uuid192_payload(v: Uuid192Datum) -> Option<i64> {
    match v.value().fields() {
        Ok(SegmentFields::Raw { payload }) => Some(payload as i64),
        _ => None,
    }
}

/// Accessors of the general structure's fields: NULL for other structures.
macro_rules! general_field {
    ($(#[doc = $doc:literal] $name:ident -> $ty:ty = |$g:ident| $value:expr;)*) => {$(
        #[doc = $doc]
        #[pg_extern(immutable, strict, parallel_safe, requires = ["uuid192_type"])]
        fn $name(v: Uuid192Datum) -> Option<$ty> {
            general(v).map(|$g| $value)
        }
    )*};
}

general_field! {
    /// Module or microservice id.
    uuid192_module -> i32 = |g| g.module as i32;
    /// Hub or anchor table id.
    uuid192_hub -> i32 = |g| g.table as i32;
    /// Source system id.
    uuid192_source -> i32 = |g| g.source as i32;
    /// Operation type name.
    uuid192_operation -> String = |g| g.operation.name().to_owned();
    /// Message type.
    uuid192_message -> i32 = |g| g.message as i32;
    /// Shard or partition.
    uuid192_shard -> i32 = |g| g.shard as i32;
    /// The archived mark.
    uuid192_archived -> bool = |g| g.archived;
    /// The deleted mark.
    uuid192_deleted -> bool = |g| g.deleted;
}

// Constructors.

fn build(function: &str, uuid: pgrx::Uuid, fields: SegmentFields) -> Uuid192Datum {
    match Uuid192::new(from_pg(uuid), fields) {
        Ok(v) => v.into(),
        Err(e) => invalid_argument(function, e.field, e.value, e.expected),
    }
}

/// A raw (structure 0) UUID_192: `payload` is the application's 44 bits.
#[pg_extern(immutable, strict, parallel_safe, name = "uuid192", requires = ["uuid192_type"])]
fn uuid192_raw(uuid: pgrx::Uuid, payload: i64) -> Uuid192Datum {
    if !(0..1 << 44).contains(&payload) {
        invalid_argument(
            "uuid192",
            "payload",
            payload,
            "0..=17592186044415 (44 bits)",
        );
    }
    build(
        "uuid192",
        uuid,
        SegmentFields::Raw {
            payload: payload as u64,
        },
    )
}

/// A general (structure 1) UUID_192 from its fields; the checksum is
/// computed. `operation` is one of none, insert, update, delete, merge,
/// read, archive, restore.
#[allow(clippy::too_many_arguments)]
#[pg_extern(immutable, strict, parallel_safe, name = "uuid192", requires = ["uuid192_type"])]
fn uuid192_general(
    uuid: pgrx::Uuid,
    module: i32,
    hub: i32,
    source: i32,
    operation: &str,
    message: i32,
    shard: i32,
    archived: default!(bool, false),
    deleted: default!(bool, false),
) -> Uuid192Datum {
    let field = |name: &str, value: i32, bits: u32| -> u32 {
        if !(0..1 << bits).contains(&value) {
            invalid_argument("uuid192", name, value, format!("0..={}", (1 << bits) - 1));
        }
        value as u32
    };
    let Some(op) = Operation::from_name(operation) else {
        invalid_argument(
            "uuid192",
            "operation",
            format!("'{operation}'"),
            "none, insert, update, delete, merge, read, archive or restore",
        );
    };
    let fields = GeneralFields {
        module: field("module", module, 8) as u8,
        table: field("hub", hub, 12) as u16,
        source: field("source", source, 6) as u8,
        operation: op,
        message: field("message", message, 6) as u8,
        shard: field("shard", shard, 7) as u8,
        archived,
        deleted,
    };
    build("uuid192", uuid, SegmentFields::General(fields))
}

/// The 39-character Crockford Base32 form (sorts like the value).
#[pg_extern(immutable, strict, parallel_safe, requires = ["uuid192_type"])]
fn uuid192_to_base32(v: Uuid192Datum) -> String {
    v.value().to_base32()
}

/// A UUID_192 from its Base32 form, checksum verified (22P02 otherwise).
#[pg_extern(immutable, strict, parallel_safe, requires = ["uuid192_type"])]
fn uuid192_from_base32(text: &str) -> Uuid192Datum {
    match Uuid192::parse_base32(text) {
        Ok(v) => v.into(),
        Err(e) => invalid_text("uuid192 (Base32)", text, e),
    }
}

/// The segment of a UUID_192 text without parsing its UUID part (only the
/// dash at position 36 and the 16 hex digits after it are read): for
/// routing or filtering on segment fields before paying for the whole
/// value. Not checksum-verified (that needs the UUID).
#[pg_extern(immutable, strict, parallel_safe)]
fn uuid192_segment_of_text(text: &str) -> i64 {
    match Segment::from_text(text) {
        Ok(s) => s.0 as i64,
        Err(e) => invalid_text("uuid192", text, e),
    }
}

extension_sql!(
    r#"
CREATE OPERATOR < (LEFTARG = uuid192, RIGHTARG = uuid192, FUNCTION = uuid192_lt,
    COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel);
CREATE OPERATOR <= (LEFTARG = uuid192, RIGHTARG = uuid192, FUNCTION = uuid192_le,
    COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel);
CREATE OPERATOR = (LEFTARG = uuid192, RIGHTARG = uuid192, FUNCTION = uuid192_eq,
    COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel, HASHES, MERGES);
CREATE OPERATOR <> (LEFTARG = uuid192, RIGHTARG = uuid192, FUNCTION = uuid192_ne,
    COMMUTATOR = <>, NEGATOR = =, RESTRICT = neqsel, JOIN = neqjoinsel);
CREATE OPERATOR >= (LEFTARG = uuid192, RIGHTARG = uuid192, FUNCTION = uuid192_ge,
    COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel);
CREATE OPERATOR > (LEFTARG = uuid192, RIGHTARG = uuid192, FUNCTION = uuid192_gt,
    COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel);

CREATE OPERATOR CLASS uuid192_ops DEFAULT FOR TYPE uuid192 USING btree AS
    OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >,
    FUNCTION 1 uuid192_cmp(uuid192, uuid192),
    FUNCTION 2 uuid192_sortsupport(internal);
CREATE OPERATOR CLASS uuid192_hash_ops DEFAULT FOR TYPE uuid192 USING hash AS
    OPERATOR 1 =,
    FUNCTION 1 uuid192_hash(uuid192),
    FUNCTION 2 uuid192_hash_extended(uuid192, bigint);

CREATE CAST (uuid192 AS uuid) WITH FUNCTION uuid192_uuid(uuid192);
"#,
    name = "uuid192_operators",
    requires = [
        uuid192_lt,
        uuid192_le,
        uuid192_eq,
        uuid192_ne,
        uuid192_ge,
        uuid192_gt,
        uuid192_cmp,
        uuid192_sortsupport,
        uuid192_hash,
        uuid192_hash_extended,
        uuid192_uuid
    ],
);
