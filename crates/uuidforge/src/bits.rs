//! Bit-field access on a UUID seen as one big-endian 128-bit integer, with
//! bits numbered from 0 (most significant) to 127 as in RFC 9562 figures.

/// Bits `start .. start + len` (RFC numbering) of `v`, right-aligned.
#[inline(always)]
pub(crate) const fn get(v: u128, start: u32, len: u32) -> u128 {
    (v >> (128 - start - len)) & mask(len)
}

/// `v` with bits `start .. start + len` replaced by the low `len` bits of `x`.
#[inline(always)]
pub(crate) const fn set(v: u128, start: u32, len: u32, x: u128) -> u128 {
    let shift = 128 - start - len;
    (v & !(mask(len) << shift)) | ((x & mask(len)) << shift)
}

#[inline(always)]
pub(crate) const fn mask(len: u32) -> u128 {
    if len >= 128 {
        u128::MAX
    } else {
        (1u128 << len) - 1
    }
}

/// Sets the 4-bit version (bits 48..52) and the `10` variant (bits 64..66).
#[inline(always)]
pub(crate) const fn with_version(v: u128, version: u8) -> u128 {
    set(set(v, 48, 4, version as u128), 64, 2, 0b10)
}

/// The 122 payload bits of an RFC 9562 UUID (all but version and variant)
/// placed as `a(48) | ver | b(12) | var | c(62)`.
#[inline(always)]
pub(crate) const fn assemble(version: u8, a48: u64, b12: u16, c62: u64) -> u128 {
    let v = ((a48 as u128) << 80) | ((b12 as u128 & 0xfff) << 64) | (c62 as u128 & mask(62));
    with_version(v, version)
}
