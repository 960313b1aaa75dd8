//! Candidate rows read straight from a heap table's pages (PostgreSQL's
//! on-disk page and tuple layout), for the extension's
//! `uuid_heap_candidates`: `find` then fetches only those rows by `ctid`
//! and checks them exactly ([`crate::find::hits_in_row`]).
//!
//! Reading pages as bytes costs about what `count(*)` costs, where running
//! a filter on every row (a function call per column, `jsonb` converted to
//! text) costs several times more. Each searched column's stored bytes are
//! sampled every `s` bytes (8 for bytes, 16 for text), and each 8-byte
//! window is looked up in a [`WindowSet`] holding, for every spelling of
//! every searched UUID, its windows at offsets 0 to `s - 1`. A spelling of
//! `n >= s + 7` bytes starting at `p` covers the sampled window at the
//! first multiple of `s` from `p`, which is one of those: nothing is
//! missed, and a row costs one lookup per `s` bytes whatever the number of
//! values.
//! - `uuid[]` and `bytea` columns are looked up as stored (a UUID's 16
//!   bytes); a `uuid` or `uuid192` value, which starts with the UUID, is
//!   looked up whole in a table of the searched UUIDs;
//! - text, `json` and `jsonb` columns (whose strings are stored unescaped)
//!   are looked up folded (ASCII lower case, Crockford's `o`→`0`,
//!   `i`/`l`→`1`) for the canonical form (also inside braces, URNs and
//!   UUID_192 text), 32 hex digits, Base32 and the UUID_192 Base32 prefix.
//!
//! The lookup ignores word boundaries and a window may match by chance, so
//! a candidate may hold no UUID token: the exact check decides. A value
//! stored compressed or out of line (TOAST) is handed back for
//! decompression ([`Tuple::toasted`]), and a row stored before a column
//! with a default was added (whose value is not in the row) is always a
//! candidate.
//!
//! ```text
//! page:  | header 24 B | line pointers 4 B each → | free | ← tuples |
//! tuple: | header 23 B (+ null bitmap, padded to t_hoff) | columns… |
//! ```

use uuid::Uuid;

/// PostgreSQL's page size (`BLCKSZ`) in the builds this reads.
pub const PAGE_SIZE: usize = 8192;

/// How a column's stored bytes are searched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Search {
    /// Not searched (only walked past).
    Skip,
    /// For UUIDs as 16 bytes.
    Binary,
    /// For text spellings.
    Text,
}

/// How one column is stored (`pg_attribute.attlen`, `attalign`) and
/// searched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attribute {
    /// Bytes of a fixed-width value, -1 for a varlena, -2 for a C string.
    pub len: i16,
    /// Alignment in bytes (1, 2, 4 or 8).
    pub align: u8,
    /// How its values are searched.
    pub search: Search,
}

/// How the rows of one table are stored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Layout {
    /// Every column in order, dropped ones included (they keep their place).
    pub attributes: Vec<Attribute>,
    /// Some column was added with a default kept in the catalog
    /// (`atthasmissing`): rows stored before hold no value for it.
    pub has_missing: bool,
}

/// Folds 8 bytes as text is searched: ASCII lower case, and Crockford's
/// aliases `o`→`0`, `i`/`l`→`1` (hex has none of these letters, so hex
/// spellings are unchanged). Branch-free, one word at a time.
pub const fn fold8(x: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    // High bit of each byte set where the byte is zero (exact per byte).
    const fn zero_bytes(v: u64) -> u64 {
        !(((v & LOW7).wrapping_add(LOW7)) | v) & HIGH
    }
    let low = x & LOW7;
    let ge_a = low.wrapping_add((0x80 - b'A' as u64) * ONES);
    let gt_z = low.wrapping_add((0x7f - b'Z' as u64) * ONES);
    let upper = ge_a & !gt_z & !x & HIGH;
    let x = x | (upper >> 2);
    let o = zero_bytes(x ^ (b'o' as u64 * ONES)) >> 7;
    let i = zero_bytes(x ^ (b'i' as u64 * ONES)) >> 7;
    let l = zero_bytes(x ^ (b'l' as u64 * ONES)) >> 7;
    x - o * (b'o' - b'0') as u64 - i * (b'i' - b'1') as u64 - l * (b'l' - b'1') as u64
}

/// Whether all 8 (folded) bytes can be part of a text spelling: `0-9`,
/// `a-z` or `-`. Much of a JSON document or prose fails this, and the test
/// is cheaper than a lookup in a large set.
pub(crate) fn spelling_bytes(x: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let low = x & LOW7;
    // High bit set in each byte whose low 7 bits are >= c (ge) or > c (gt).
    let ge = |c: u8| low.wrapping_add((0x80 - c as u64) * ONES) & HIGH;
    let gt = |c: u8| low.wrapping_add((0x7f - c as u64) * ONES) & HIGH;
    let digit = ge(b'0') & !gt(b'9');
    let letter = ge(b'a') & !gt(b'z');
    let dash = ge(b'-') & !gt(b'-');
    (digit | letter | dash) & !x & HIGH == HIGH
}

/// Largest window bitmap: 2^22 bits (512 KiB).
const MAX_BITMAP_LOG2: u32 = 22;

/// The word of a window bitmap (`shift` from its size) and the two bits in
/// it that stand for `key` (two bits in one word: one memory access, a
/// third of the false positives of one bit).
#[inline]
fn bits_of(key: u64, shift: u32) -> (usize, u64) {
    let h = key.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let word = (h >> shift) as usize;
    (word, (1 << ((h >> 20) & 63)) | (1 << ((h >> 26) & 63)))
}

/// A key of a [`ProbeTable`]: 0 marks a free slot.
trait ProbeKey: Copy + Eq {
    const ZERO: Self;
    /// 64 bits that spread the key over the table.
    fn spread(self) -> u64;
}

impl ProbeKey for u64 {
    const ZERO: u64 = 0;
    fn spread(self) -> u64 {
        self.wrapping_mul(0xc2b2_ae3d_27d4_eb4f)
    }
}

impl ProbeKey for u128 {
    const ZERO: u128 = 0;
    fn spread(self) -> u64 {
        ((self as u64) ^ ((self >> 64) as u64).rotate_left(29)).wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }
}

/// An exact set of keys by open addressing (linear probing, at most half
/// full: one probe, usually).
#[derive(Debug, Clone)]
struct ProbeTable<K> {
    /// Keys by slot; the zero key marks a free slot (it is `has_zero`).
    slots: Vec<K>,
    shift: u32,
    has_zero: bool,
}

impl<K: ProbeKey> ProbeTable<K> {
    fn new(keys: impl ExactSizeIterator<Item = K>) -> ProbeTable<K> {
        let log2 = (keys.len().max(1) * 2)
            .next_power_of_two()
            .trailing_zeros()
            .max(4);
        let mut t = ProbeTable {
            slots: vec![K::ZERO; 1 << log2],
            shift: 64 - log2,
            has_zero: false,
        };
        let mask = t.slots.len() - 1;
        for key in keys {
            if key == K::ZERO {
                t.has_zero = true;
                continue;
            }
            let mut slot = t.slot(key);
            while t.slots[slot] != K::ZERO && t.slots[slot] != key {
                slot = (slot + 1) & mask;
            }
            t.slots[slot] = key;
        }
        t
    }

    #[inline]
    fn slot(&self, key: K) -> usize {
        (key.spread() >> self.shift) as usize
    }

    #[inline]
    fn contains(&self, key: K) -> bool {
        if key == K::ZERO {
            return self.has_zero;
        }
        let mask = self.slots.len() - 1;
        let mut slot = self.slot(key);
        loop {
            match self.slots[slot] {
                k if k == K::ZERO => return false,
                k if k == key => return true,
                _ => slot = (slot + 1) & mask,
            }
        }
    }
}

/// A set of 8-byte windows: a bitmap answers most lookups, a
/// [`ProbeTable`] the rest exactly.
#[derive(Debug, Clone)]
struct Windows {
    bits: Vec<u64>,
    bits_shift: u32,
    table: ProbeTable<u64>,
}

impl Windows {
    fn new(keys: Vec<u64>) -> Windows {
        let n = keys.len().max(1);
        // About 16 bits per key (one lookup in 25 reaches the table), but
        // at most 512 KiB: a bitmap that stays in the core's cache answers
        // faster, even when more lookups go on to the table.
        let bits_log2 = (n * 16)
            .next_power_of_two()
            .trailing_zeros()
            .clamp(12, MAX_BITMAP_LOG2);
        let mut bits = vec![0; 1 << (bits_log2 - 6)];
        let bits_shift = 64 - (bits_log2 - 6);
        for &key in &keys {
            let (word, mask) = bits_of(key, bits_shift);
            bits[word] |= mask;
        }
        Windows {
            bits,
            bits_shift,
            table: ProbeTable::new(keys.into_iter()),
        }
    }

    #[inline]
    fn contains(&self, key: u64) -> bool {
        let (word, mask) = bits_of(key, self.bits_shift);
        self.bits[word] & mask == mask && self.table.contains(key)
    }

    /// Whether a window of `bytes` sampled every `stride` bytes (folded
    /// first when `fold`) is in the set.
    #[inline]
    fn sampled(&self, bytes: &[u8], stride: usize, fold: bool) -> bool {
        (0..bytes.len().saturating_sub(7))
            .step_by(stride)
            .any(|at| {
                let raw = u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
                if fold {
                    let folded = fold8(raw);
                    spelling_bytes(folded) && self.contains(folded)
                } else {
                    self.contains(raw)
                }
            })
    }
}

/// The spellings of the searched UUIDs as sampled windows (see the module
/// documentation).
#[derive(Debug, Clone)]
pub struct WindowSet {
    binary: Windows,
    text: Windows,
    /// The searched UUIDs themselves, for `uuid` and `uuid192` columns
    /// (whose stored value starts with the UUID): one lookup in a small
    /// table instead of two window lookups.
    exact: ProbeTable<u128>,
}

/// Text is sampled every 16 bytes (its spellings are 26 bytes or more),
/// bytes every 8 (a UUID is 16).
const TEXT_STRIDE: usize = 16;
const BINARY_STRIDE: usize = 8;

fn windows_of(spelling: &[u8], stride: usize, out: &mut Vec<u64>) {
    debug_assert!(spelling.len() + 1 >= stride + 8);
    for k in 0..stride {
        let window: [u8; 8] = spelling[k..k + 8].try_into().expect("8 bytes");
        out.push(u64::from_le_bytes(window));
    }
}

impl WindowSet {
    /// The windows of every spelling of `uuids`.
    pub fn new(uuids: &[Uuid]) -> WindowSet {
        let mut binary = Vec::with_capacity(uuids.len() * 8);
        let mut text = Vec::with_capacity(uuids.len() * 4 * TEXT_STRIDE);
        for u in uuids {
            windows_of(u.as_bytes(), BINARY_STRIDE, &mut binary);
            for spelling in [
                uuidforge::fmt::to_canonical_string(u),
                u.simple().to_string(),
                uuidforge::base32::encode(u).as_str().to_ascii_lowercase(),
                uuidforge::scan::uuid192_base32_prefix(u).to_ascii_lowercase(),
            ] {
                windows_of(spelling.as_bytes(), TEXT_STRIDE, &mut text);
            }
        }
        WindowSet {
            binary: Windows::new(binary),
            text: Windows::new(text),
            exact: ProbeTable::new(uuids.iter().map(|u| u.as_u128())),
        }
    }

    /// Whether a stored `uuid` (or `uuid192`, by its first 16 bytes) is
    /// searched; `false` for fewer than 16 bytes.
    pub(crate) fn holds_uuid(&self, stored: &[u8]) -> bool {
        stored
            .get(..16)
            .and_then(|b| <[u8; 16]>::try_from(b).ok())
            .is_some_and(|b| self.exact.contains(u128::from_be_bytes(b)))
    }

    /// Whether `bytes` (a value's stored or decompressed bytes) may hold a
    /// spelling searched as `search`.
    pub fn holds(&self, bytes: &[u8], search: Search) -> bool {
        match search {
            Search::Skip => false,
            Search::Binary => self.binary.sampled(bytes, BINARY_STRIDE, false),
            Search::Text => self.text.sampled(bytes, TEXT_STRIDE, true),
        }
    }
}

/// A value stored compressed or out of line: the extension decompresses it
/// (PostgreSQL's `detoast_attr`) and searches the result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Toasted {
    /// Offset of its varlena header in the page.
    pub offset: usize,
    /// Bytes of the stored form (header included).
    pub len: usize,
    /// How the decompressed value is searched.
    pub search: Search,
}

/// A tuple of a page that may hold a searched UUID.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tuple {
    /// Its line pointer number (1-based, the `ctid`'s second part).
    pub item: u16,
    /// Values to decompress and search: when empty, the tuple is a
    /// candidate as it is.
    pub toasted: Vec<Toasted>,
}

fn u16_at(bytes: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(bytes.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

const PAGE_HEADER: usize = 24;
const LP_NORMAL: u32 = 1;
const HEAP_HASNULL: u16 = 0x0001;
const HEAP_NATTS_MASK: u16 = 0x07ff;
/// `VARTAG_ONDISK`: a TOAST pointer to a value stored in the TOAST table.
const VARTAG_ONDISK: u8 = 18;
/// Bytes of a `varatt_external` after its two-byte header.
const EXTERNAL_POINTER: usize = 16;

fn align(offset: usize, to: u8) -> usize {
    let to = usize::from(to.max(1));
    offset.div_ceil(to) * to
}

/// What one tuple's bytes say.
enum Verdict {
    /// No searched value can be in it.
    Clear,
    /// A window matched, or the bytes can not be read without the catalog.
    Candidate,
    /// Only compressed or out-of-line values may hold one: (offset in the
    /// tuple, stored length, search).
    Toasted(Vec<(usize, usize, Search)>),
}

/// Walks the columns of `tuple` (its bytes, header included).
fn examine(tuple: &[u8], layout: &Layout, windows: &WindowSet) -> Verdict {
    examine_checked(tuple, layout, windows).unwrap_or(Verdict::Candidate)
}

fn examine_checked(tuple: &[u8], layout: &Layout, windows: &WindowSet) -> Option<Verdict> {
    let infomask2 = u16_at(tuple, 18)?;
    let infomask = u16_at(tuple, 20)?;
    let hoff = usize::from(*tuple.get(22)?);
    let natts = usize::from(infomask2 & HEAP_NATTS_MASK);
    if natts < layout.attributes.len() && layout.has_missing {
        return None;
    }
    let nulls = (infomask & HEAP_HASNULL != 0)
        .then(|| tuple.get(23..hoff))
        .flatten();
    if infomask & HEAP_HASNULL != 0 && nulls.is_none() {
        return None;
    }
    let data = tuple.get(hoff..)?;
    let mut toasted = Vec::new();
    let mut off = 0usize;
    for (i, att) in layout.attributes.iter().take(natts).enumerate() {
        if let Some(bits) = nulls {
            if bits.get(i / 8)? & (1 << (i % 8)) == 0 {
                continue;
            }
        }
        let value = match att.len {
            len if len > 0 => {
                off = align(off, att.align);
                let value = data.get(off..off + len as usize)?;
                off += len as usize;
                value
            }
            -1 => {
                // A zero byte is padding before an aligned 4-byte header; a
                // one-byte header is never aligned.
                if *data.get(off)? == 0 {
                    off = align(off, att.align);
                }
                let first = *data.get(off)?;
                if first == 0x01 {
                    if *data.get(off + 1)? != VARTAG_ONDISK {
                        return None;
                    }
                    let len = 2 + EXTERNAL_POINTER;
                    if att.search != Search::Skip {
                        toasted.push((hoff + off, len, att.search));
                    }
                    off += len;
                    continue;
                } else if first & 0x01 == 0x01 {
                    let len = usize::from(first >> 1);
                    let value = data.get(off + 1..off + len)?;
                    off += len;
                    value
                } else {
                    let header = u32_at(data, off)?;
                    let len = (header >> 2) as usize;
                    let value = data.get(off + 4..off + len)?;
                    if header & 0x03 == 0x02 {
                        if att.search != Search::Skip {
                            toasted.push((hoff + off, len, att.search));
                        }
                        off += len;
                        continue;
                    }
                    off += len;
                    value
                }
            }
            -2 => {
                let len = data.get(off..)?.iter().position(|&b| b == 0)?;
                let value = &data[off..off + len];
                off += len + 1;
                value
            }
            _ => return None,
        };
        // A uuid or uuid192 column holds the UUID at its start.
        let found = if att.search == Search::Binary && matches!(att.len, 16 | 24) {
            windows.holds_uuid(value)
        } else {
            windows.holds(value, att.search)
        };
        if found {
            return Some(Verdict::Candidate);
        }
    }
    Some(if toasted.is_empty() {
        Verdict::Clear
    } else {
        Verdict::Toasted(toasted)
    })
}

/// The tuples of one heap `page` that may hold a searched UUID, in item
/// order. A page that is not a heap page of this size yields nothing; a
/// tuple whose bytes do not follow `layout` is a candidate (the exact check
/// decides).
pub fn page_candidates(page: &[u8], layout: &Layout, windows: &WindowSet) -> Vec<Tuple> {
    let Some(lower) = u16_at(page, 12) else {
        return Vec::new();
    };
    let lower = usize::from(lower);
    if page.len() != PAGE_SIZE || !(PAGE_HEADER..=PAGE_SIZE).contains(&lower) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (i, at) in (PAGE_HEADER..lower).step_by(4).enumerate() {
        let Some(lp) = u32_at(page, at) else { break };
        let (start, flags, len) = (
            (lp & 0x7fff) as usize,
            (lp >> 15) & 0x03,
            (lp >> 17) as usize,
        );
        if flags != LP_NORMAL || len == 0 || start + len > PAGE_SIZE {
            continue;
        }
        let item = i as u16 + 1;
        match examine(&page[start..start + len], layout, windows) {
            Verdict::Clear => {}
            Verdict::Candidate => out.push(Tuple {
                item,
                toasted: Vec::new(),
            }),
            Verdict::Toasted(values) => out.push(Tuple {
                item,
                toasted: values
                    .into_iter()
                    .map(|(offset, len, search)| Toasted {
                        offset: start + offset,
                        len,
                        search,
                    })
                    .collect(),
            }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const ID: Uuid = uuid::uuid!("017f22e2-79b0-7cc3-98c4-dc0c0c07398f");

    fn fold_byte(b: u8) -> u8 {
        match b.to_ascii_lowercase() {
            b'o' => b'0',
            b'i' | b'l' => b'1',
            other => other,
        }
    }

    #[test]
    fn fold8_folds_every_byte_in_every_position() {
        for b in 0..=255u8 {
            for position in 0..8 {
                let mut bytes = *b"Ab-9Zz\xffo";
                bytes[position] = b;
                let expected: Vec<u8> = bytes.iter().map(|&x| fold_byte(x)).collect();
                let got = fold8(u64::from_le_bytes(bytes)).to_le_bytes();
                assert_eq!(got.to_vec(), expected, "byte {b:#x} at {position}");
            }
        }
    }

    #[test]
    fn spelling_bytes_admits_exactly_digits_letters_and_dash() {
        for b in 0..=255u8 {
            for position in 0..8 {
                let mut bytes = *b"0a-9z5f-";
                bytes[position] = b;
                let expected = b.is_ascii_digit() || b.is_ascii_lowercase() || b == b'-';
                assert_eq!(
                    spelling_bytes(u64::from_le_bytes(bytes)),
                    expected,
                    "byte {b:#x} at {position}"
                );
            }
        }
    }

    proptest! {
        #[test]
        fn fold8_is_the_byte_fold(bytes in any::<[u8; 8]>()) {
            let expected: Vec<u8> = bytes.iter().map(|&x| fold_byte(x)).collect();
            prop_assert_eq!(fold8(u64::from_le_bytes(bytes)).to_le_bytes().to_vec(), expected);
        }

        /// Wherever a spelling sits in a value, in any case, it is found.
        #[test]
        fn a_spelling_anywhere_is_found(
            raw in any::<u128>(),
            form in 0..6usize,
            before in "[ -~]{0,40}",
            after in "[ -~]{0,40}",
            upper in any::<bool>(),
        ) {
            let u = Uuid::from_u128(raw);
            let set = WindowSet::new(&[u]);
            let base32 = uuidforge::base32::encode(&u).as_str().to_string();
            let spelling = match form {
                0 => u.to_string(),
                1 => u.simple().to_string(),
                2 => format!("urn:uuid:{u}"),
                3 => base32.clone(),
                4 => base32.replace('0', "o").replace('1', "L"),
                _ => format!("{}ABCDEFGHJKMNP", uuidforge::scan::uuid192_base32_prefix(&u)),
            };
            let spelling = if upper { spelling.to_uppercase() } else { spelling.to_lowercase() };
            let text = format!("{before}{spelling}{after}");
            prop_assert!(set.holds(text.as_bytes(), Search::Text), "{}", text);
            let mut bytes = before.into_bytes();
            bytes.extend(u.as_bytes());
            bytes.extend(after.into_bytes());
            prop_assert!(set.holds(&bytes, Search::Binary));
        }
    }

    #[test]
    fn stored_uuids_are_found_exactly() {
        let nil = Uuid::nil();
        let set = WindowSet::new(&[ID, nil]);
        assert!(set.holds_uuid(ID.as_bytes()));
        assert!(set.holds_uuid(nil.as_bytes()));
        let mut k192 = ID.as_bytes().to_vec();
        k192.extend([1, 2, 3, 4, 5, 6, 7, 8]);
        assert!(set.holds_uuid(&k192));
        assert!(!set.holds_uuid(Uuid::from_u128(ID.as_u128() ^ 1).as_bytes()));
        assert!(!set.holds_uuid(&ID.as_bytes()[..15]));
        let many: Vec<Uuid> = (1..5000u128)
            .map(|i| Uuid::from_u128(i * 0x9e37_79b9_7f4a_7c15))
            .collect();
        let set = WindowSet::new(&many);
        assert!(many.iter().all(|u| set.holds_uuid(u.as_bytes())));
        assert!(!set.holds_uuid(Uuid::from_u128(3).as_bytes()));
    }

    #[test]
    fn other_values_are_not_found() {
        let set = WindowSet::new(&[ID]);
        let other = uuid::uuid!("5b0e1c9a-3d2f-4a61-8e07-c4b9d8a1f250");
        assert!(!set.holds(other.to_string().as_bytes(), Search::Text));
        assert!(!set.holds(other.simple().to_string().as_bytes(), Search::Text));
        assert!(!set.holds(other.as_bytes(), Search::Binary));
        assert!(!set.holds(ID.to_string().as_bytes(), Search::Skip));
        // A text spelling is not looked for in binary columns, nor bytes in text.
        assert!(!set.holds(ID.to_string().as_bytes(), Search::Binary));
        assert!(!set.holds(ID.as_bytes(), Search::Text));
    }

    /// A page as PostgreSQL lays it out, with tuples of `layout` built from
    /// column values (`None` = NULL; a varlena value under 127 bytes gets a
    /// one-byte header, any other value is written as given).
    fn page(tuples: &[Vec<Option<Vec<u8>>>], layout: &Layout) -> Vec<u8> {
        let mut page = vec![0u8; PAGE_SIZE];
        let mut upper = PAGE_SIZE;
        for (i, values) in tuples.iter().enumerate() {
            let has_null = values.iter().any(Option::is_none);
            let hoff = align(
                23 + if has_null {
                    values.len().div_ceil(8)
                } else {
                    0
                },
                8,
            );
            let mut t = vec![0u8; hoff];
            t[18..20].copy_from_slice(&(values.len() as u16).to_le_bytes());
            t[20..22].copy_from_slice(&u16::from(has_null).to_le_bytes());
            t[22] = hoff as u8;
            for (k, v) in values.iter().enumerate() {
                if v.is_some() && has_null {
                    t[23 + k / 8] |= 1 << (k % 8);
                }
            }
            for (v, att) in values.iter().zip(&layout.attributes) {
                let Some(v) = v else { continue };
                if att.len == -1 && v.len() < 127 {
                    t.push(((v.len() as u8 + 1) << 1) | 1);
                    t.extend(v);
                } else {
                    while !(t.len() - hoff).is_multiple_of(usize::from(att.align)) {
                        t.push(0);
                    }
                    t.extend(v);
                }
            }
            upper = (upper - t.len()) / 8 * 8;
            page[upper..upper + t.len()].copy_from_slice(&t);
            let lp = (upper as u32) | (LP_NORMAL << 15) | ((t.len() as u32) << 17);
            page[PAGE_HEADER + 4 * i..PAGE_HEADER + 4 * i + 4].copy_from_slice(&lp.to_le_bytes());
        }
        let lower = (PAGE_HEADER + 4 * tuples.len()) as u16;
        page[12..14].copy_from_slice(&lower.to_le_bytes());
        page[14..16].copy_from_slice(&(upper as u16).to_le_bytes());
        page
    }

    fn layout(atts: &[(i16, u8, Search)]) -> Layout {
        Layout {
            attributes: atts
                .iter()
                .map(|&(len, align, search)| Attribute { len, align, search })
                .collect(),
            has_missing: false,
        }
    }

    fn items(found: &[Tuple]) -> Vec<u16> {
        found.iter().map(|t| t.item).collect()
    }

    #[test]
    fn the_tuples_holding_a_value_are_the_candidates() {
        let layout = layout(&[
            (8, 8, Search::Skip),
            (16, 1, Search::Binary),
            (-1, 4, Search::Text),
            (-1, 4, Search::Skip),
        ]);
        let other = uuid::uuid!("5b0e1c9a-0000-4000-8000-000000000001");
        let row = |n: u64, id: Uuid, text: &str, ignored: &str| {
            vec![
                Some(n.to_le_bytes().to_vec()),
                Some(id.as_bytes().to_vec()),
                Some(text.as_bytes().to_vec()),
                Some(ignored.as_bytes().to_vec()),
            ]
        };
        let url = format!("see https://x.example/{}", ID.to_string().to_uppercase());
        let tuples = vec![
            row(1, other, "nothing here", ""),
            row(2, ID, "the key", ""),
            row(3, other, &url, ""),
            vec![Some(4u64.to_le_bytes().to_vec()), None, None, None],
            row(
                5,
                other,
                &uuidforge::base32::encode(&ID).as_str().to_lowercase(),
                "",
            ),
            // In a column that is not searched: not a candidate.
            row(6, other, "", &ID.to_string()),
        ];
        let p = page(&tuples, &layout);
        let found = page_candidates(&p, &layout, &WindowSet::new(&[ID]));
        assert!(found.iter().all(|t| t.toasted.is_empty()));
        assert_eq!(items(&found), vec![2, 3, 5]);
    }

    #[test]
    fn compressed_and_external_values_are_handed_back_for_decompression() {
        let layout = layout(&[
            (4, 4, Search::Skip),
            (-1, 4, Search::Text),
            (-1, 4, Search::Binary),
        ]);
        let set = WindowSet::new(&[ID]);
        let plain = page(
            &[vec![Some(vec![1, 0, 0, 0]), Some(b"plain".to_vec()), None]],
            &layout,
        );
        assert!(page_candidates(&plain, &layout, &set).is_empty());
        // A compressed inline value (4-byte header, low bits 10) and a TOAST
        // pointer, written as stored through fixed-width columns.
        let mut compressed = ((12u32 << 2) | 0x02).to_le_bytes().to_vec();
        compressed.extend([9u8; 8]);
        let mut external = vec![0x01, VARTAG_ONDISK];
        external.extend([3u8; EXTERNAL_POINTER]);
        let stored = self::layout(&[
            (4, 4, Search::Skip),
            (12, 4, Search::Skip),
            (18, 1, Search::Skip),
        ]);
        let p = page(
            &[vec![
                Some(vec![3, 0, 0, 0]),
                Some(compressed.clone()),
                Some(external.clone()),
            ]],
            &stored,
        );
        let found = page_candidates(&p, &layout, &set);
        assert_eq!(items(&found), vec![1]);
        let toasted: Vec<(usize, Search)> =
            found[0].toasted.iter().map(|t| (t.len, t.search)).collect();
        assert_eq!(
            toasted,
            vec![(12, Search::Text), (2 + EXTERNAL_POINTER, Search::Binary)]
        );
        assert_eq!(&p[found[0].toasted[0].offset..][..4], &compressed[..4]);
        assert_eq!(&p[found[0].toasted[1].offset..][..2], &external[..2]);
        // Toasted values of columns not searched are left alone.
        let skip = self::layout(&[
            (4, 4, Search::Skip),
            (-1, 4, Search::Skip),
            (-1, 4, Search::Skip),
        ]);
        assert!(page_candidates(&p, &skip, &set).is_empty());
    }

    #[test]
    fn rows_older_than_a_column_with_a_default_are_always_candidates() {
        let mut layout = layout(&[(4, 4, Search::Skip), (-1, 4, Search::Text)]);
        let p = page(&[vec![Some(vec![1, 0, 0, 0])]], &layout);
        let set = WindowSet::new(&[ID]);
        assert!(page_candidates(&p, &layout, &set).is_empty());
        layout.has_missing = true;
        assert_eq!(items(&page_candidates(&p, &layout, &set)), vec![1]);
    }

    #[test]
    fn a_page_of_garbage_is_not_a_panic() {
        let set = WindowSet::new(&[ID]);
        let layout = layout(&[
            (-1, 4, Search::Text),
            (-2, 1, Search::Text),
            (16, 1, Search::Binary),
        ]);
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200 {
            let p: Vec<u8> = (0..PAGE_SIZE)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    state as u8
                })
                .collect();
            let _ = page_candidates(&p, &layout, &set);
        }
        assert!(page_candidates(&[0u8; 10], &layout, &set).is_empty());
    }
}
