//! x86_64 kernels beyond the SSE2 baseline, selected at run time in three
//! tiers: AVX-512 VBMI (`vpmultishiftqb` cuts 5-bit groups, `vpermb` looks
//! symbols up; Intel since Ice Lake, AMD since Zen 4), AVX2 (`vpshufb` and
//! 16-bit multiplies on a whole UUID at once; every x86-64 server CPU of
//! the last decade) and SSSE3 + BMI2 (`pshufb`, `pdep`/`pext`: fast on
//! Intel and AMD Zen 3+, microcoded — slow — on Zen 1 and 2, which the AVX2
//! tier serves instead). Every caller keeps a portable path; the tests run
//! every tier the machine has against it.
//!
//! `UUIDFORGE_CPU_TIER` (`portable`, `ssse3-bmi2`, `avx2`, `avx512-vbmi`)
//! caps the tier, read once, so that one machine benchmarks and tests the
//! lower ones; it never raises it above what the CPU has.

use core::arch::x86_64::*;

use std::sync::atomic::{AtomicPtr, AtomicU8, Ordering};

const UNKNOWN: u8 = 0;
/// Only the SSE2 baseline.
pub(crate) const BASELINE: u8 = 1;
/// SSSE3 and BMI2.
pub(crate) const SSSE3_BMI2: u8 = 2;
/// AVX2.
pub(crate) const AVX2: u8 = 3;
/// AVX-512 VBMI, VL and BW.
pub(crate) const VBMI: u8 = 4;

/// The tiers' names, as `UUIDFORGE_CPU_TIER` takes them and
/// [`crate::cpu_tier`] reports them.
pub(crate) const NAMES: [(u8, &str); 4] = [
    (BASELINE, "portable"),
    (SSSE3_BMI2, "ssse3-bmi2"),
    (AVX2, "avx2"),
    (VBMI, "avx512-vbmi"),
];

/// The tier in use, decided once; one relaxed load afterwards.
static TIER: AtomicU8 = AtomicU8::new(UNKNOWN);

/// The tier the kernels run at: the CPU's best, capped by
/// `UUIDFORGE_CPU_TIER`.
#[inline(always)]
pub(crate) fn tier() -> u8 {
    match TIER.load(Ordering::Relaxed) {
        UNKNOWN => decide(),
        t => t,
    }
}

#[cold]
fn decide() -> u8 {
    let best = NAMES
        .iter()
        .rev()
        .map(|(t, _)| *t)
        .find(|t| supports(*t))
        .unwrap_or(BASELINE);
    let cap = std::env::var("UUIDFORGE_CPU_TIER")
        .ok()
        .and_then(|name| NAMES.iter().find(|(_, n)| *n == name).map(|(t, _)| *t))
        .unwrap_or(VBMI);
    let t = best.min(cap);
    TIER.store(t, Ordering::Relaxed);
    t
}

/// Whether this CPU runs tier `t`'s kernels (whatever the cap).
pub(crate) fn supports(t: u8) -> bool {
    match t {
        BASELINE => true,
        SSSE3_BMI2 => {
            std::is_x86_feature_detected!("ssse3") && std::is_x86_feature_detected!("bmi2")
        }
        AVX2 => std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("ssse3"),
        VBMI => {
            std::is_x86_feature_detected!("avx512vbmi")
                && std::is_x86_feature_detected!("avx512vl")
                && std::is_x86_feature_detected!("avx512bw")
        }
        _ => false,
    }
}

/// Base32 of `bytes` by every kernel this CPU runs (whatever the cap),
/// with the tier's name: for the tests and the fuzz target.
pub(crate) fn base32_encode_every_tier(bytes: &[u8; 16]) -> Vec<(&'static str, [u8; 26])> {
    let mut out = Vec::new();
    let run = |kernel: Base32EncodeKernel| -> [u8; 26] {
        let mut text = [0u8; 32];
        // SAFETY: the caller checked that the CPU runs `kernel`; `text` is
        // 32 writable bytes.
        unsafe { kernel(bytes, &mut text) };
        text[..26].try_into().expect("26")
    };
    if supports(SSSE3_BMI2) {
        out.push(("ssse3-bmi2", run(base32_encode_ssse3_into)));
    }
    if supports(AVX2) {
        out.push(("avx2", run(base32_encode_avx2_into)));
    }
    if supports(VBMI) {
        out.push(("avx512-vbmi", run(base32_encode_vbmi_into)));
    }
    out
}

/// A canonical text parsed by every kernel this CPU runs (whatever the
/// cap), with the tier's name (`None`: refused).
pub(crate) fn parse_canonical_every_tier(text: &[u8; 36]) -> Vec<(&'static str, Option<[u8; 16]>)> {
    let mut out = Vec::new();
    let run = |kernel: ParseKernel| {
        let mut bytes = [0u8; 16];
        // SAFETY: called only for a tier `supports` allows.
        unsafe { kernel(text, &mut bytes) }.then_some(bytes)
    };
    if supports(SSSE3_BMI2) || supports(AVX2) {
        out.push(("ssse3", run(parse_canonical_ssse3_into)));
    }
    if supports(AVX2) {
        out.push(("avx2", run(parse_canonical_avx2_into)));
    }
    if supports(VBMI) {
        out.push(("avx512-vbmi", run(parse_canonical_vbmi_into)));
    }
    out
}

/// The value of 26 Base32 symbols by every kernel this CPU runs, with the
/// tier's name (`None`: refused).
pub(crate) fn base32_decode_every_tier(text: &[u8; 26]) -> Vec<(&'static str, Option<u128>)> {
    let mut out = Vec::new();
    let run = |kernel: Base32DecodeKernel| {
        let mut bytes = [0u8; 16];
        // SAFETY: called only for a tier `supports` allows.
        unsafe { kernel(text, &mut bytes) }.then(|| u128::from_be_bytes(bytes))
    };
    if supports(SSSE3_BMI2) {
        out.push(("ssse3-bmi2", run(base32_decode_into)));
    }
    if supports(AVX2) {
        out.push(("avx2", run(base32_decode_avx2_into)));
    }
    if supports(VBMI) {
        out.push(("avx512-vbmi", run(base32_decode_vbmi_into)));
    }
    out
}

/// A kernel that parses a canonical text into `out` (all 16 bytes written
/// when it returns true); false: the text is not canonical.
pub(crate) type ParseKernel = unsafe fn(&[u8; 36], *mut [u8; 16]) -> bool;
/// A kernel that decodes 26 Base32 symbols into `out` (all 16 bytes
/// written when it returns true); false: not Base32 of 128 bits.
pub(crate) type Base32DecodeKernel = unsafe fn(&[u8; 26], *mut [u8; 16]) -> bool;
/// A kernel that encodes 16 bytes into 26 Base32 symbols written to `out`
/// (and 6 more bytes, to store whole vectors).
pub(crate) type Base32EncodeKernel = unsafe fn(&[u8; 16], *mut [u8; 32]);

// Each operation's kernel is chosen at its first call, for the tier, and
// kept: every later call is one load and one indirect call. Checking the
// tier at each call was a tenth of a decode's instructions. Each slot holds
// a function of its operation's kernel type: the chooser, then the kernel.
static PARSE: AtomicPtr<()> = AtomicPtr::new(choose_parse as *mut ());
static BASE32_DECODE: AtomicPtr<()> = AtomicPtr::new(choose_base32_decode as *mut ());
static BASE32_ENCODE: AtomicPtr<()> = AtomicPtr::new(choose_base32_encode as *mut ());

/// Parses a canonical text into `out` with the tier's kernel (the portable
/// one below SSSE3); true when all 16 bytes were written.
#[inline(always)]
pub(crate) fn parse_canonical(text: &[u8; 36], out: *mut [u8; 16]) -> bool {
    // SAFETY: PARSE holds a ParseKernel the CPU runs; `out` is 16 writable
    // bytes (the caller's).
    unsafe {
        let kernel: ParseKernel = core::mem::transmute(PARSE.load(Ordering::Relaxed));
        kernel(text, out)
    }
}

/// Decodes 26 Base32 symbols into `out` with the tier's kernel; true when
/// all 16 bytes were written.
#[inline(always)]
pub(crate) fn base32_decode(text: &[u8; 26], out: *mut [u8; 16]) -> bool {
    // SAFETY: BASE32_DECODE holds a Base32DecodeKernel the CPU runs.
    unsafe {
        let kernel: Base32DecodeKernel =
            core::mem::transmute(BASE32_DECODE.load(Ordering::Relaxed));
        kernel(text, out)
    }
}

/// Encodes 16 bytes into 26 Base32 symbols with the tier's kernel. The
/// kernel writes into this function's (so the caller's) memory, with
/// stores of 16 bytes: the caller's 16-byte loads of the text are then
/// forwarded from them (see [`store_halves`]).
#[inline(always)]
pub(crate) fn base32_encode_bytes(bytes: &[u8; 16]) -> [u8; 32] {
    let mut out = core::mem::MaybeUninit::<[u8; 32]>::uninit();
    // SAFETY: BASE32_ENCODE holds a Base32EncodeKernel the CPU runs, which
    // writes all 32 bytes of `out`.
    unsafe {
        let kernel: Base32EncodeKernel =
            core::mem::transmute(BASE32_ENCODE.load(Ordering::Relaxed));
        kernel(bytes, out.as_mut_ptr());
        out.assume_init()
    }
}

unsafe fn choose_parse(text: &[u8; 36], out: *mut [u8; 16]) -> bool {
    let kernel: ParseKernel = match tier() {
        VBMI => parse_canonical_vbmi_into,
        AVX2 => parse_canonical_avx2_into,
        SSSE3_BMI2 => parse_canonical_ssse3_into,
        _ => crate::parser::parse_canonical_portable_into,
    };
    PARSE.store(kernel as *mut (), Ordering::Relaxed);
    kernel(text, out)
}

unsafe fn choose_base32_decode(text: &[u8; 26], out: *mut [u8; 16]) -> bool {
    let kernel: Base32DecodeKernel = match tier() {
        VBMI => base32_decode_vbmi_into,
        AVX2 => base32_decode_avx2_into,
        SSSE3_BMI2 => base32_decode_into,
        _ => crate::base32::decode_portable_into,
    };
    BASE32_DECODE.store(kernel as *mut (), Ordering::Relaxed);
    kernel(text, out)
}

unsafe fn choose_base32_encode(bytes: &[u8; 16], out: *mut [u8; 32]) {
    let kernel: Base32EncodeKernel = match tier() {
        VBMI => base32_encode_vbmi_into,
        AVX2 => base32_encode_avx2_into,
        SSSE3_BMI2 => base32_encode_ssse3_into,
        _ => crate::base32::encode_portable_into,
    };
    BASE32_ENCODE.store(kernel as *mut (), Ordering::Relaxed);
    kernel(bytes, out)
}

const Z: i8 = -128; // pshufb: zero the byte

const FIVE_BIT_GROUPS: u64 = 0x1F1F_1F1F_1F1F_1F1F;

/// Base32-encodes a 128-bit value into 26 Crockford symbols.
///
/// # Safety
/// The CPU must support SSSE3 and BMI2 ([`available`]).
#[target_feature(enable = "ssse3,bmi2")]
pub(crate) unsafe fn base32_encode(v: u128) -> [u8; 32] {
    let head = (v >> 120) as u64; // 2 symbols: 3 + 5 bits
    let group = |x: u64| _pdep_u64(x & 0xFF_FFFF_FFFF, FIVE_BIT_GROUPS).swap_bytes();
    let a = group((v >> 80) as u64);
    let b = group((v >> 40) as u64);
    let c = group(v as u64);
    let lane0 = (head >> 5) | ((head & 31) << 8) | (a << 16);
    let lane1 = (a >> 48) | (b << 16);
    let lane2 = (b >> 48) | (c << 16);
    let lane3 = c >> 48;
    let lo_table = _mm_loadu_si128(b"0123456789ABCDEF".as_ptr().cast());
    let hi_table = _mm_loadu_si128(b"GHJKMNPQRSTVWXYZ".as_ptr().cast());
    let to_symbols = |x: __m128i| {
        let index = _mm_and_si128(x, _mm_set1_epi8(0x0f));
        let high = _mm_cmpgt_epi8(x, _mm_set1_epi8(15));
        _mm_or_si128(
            _mm_andnot_si128(high, _mm_shuffle_epi8(lo_table, index)),
            _mm_and_si128(high, _mm_shuffle_epi8(hi_table, index)),
        )
    };
    let first = to_symbols(_mm_set_epi64x(lane1 as i64, lane0 as i64));
    let second = to_symbols(_mm_set_epi64x(lane3 as i64, lane2 as i64));
    let mut out = [0u8; 32];
    _mm_storeu_si128(out.as_mut_ptr().cast(), first);
    _mm_storeu_si128(out.as_mut_ptr().add(16).cast(), second);
    out
}

/// [`base32_encode`] of 16 big-endian bytes, as the other tiers take them,
/// written to `out` (in two 16-byte stores: SSE registers have no wider).
#[target_feature(enable = "ssse3,bmi2")]
unsafe fn base32_encode_ssse3_into(bytes: &[u8; 16], out: *mut [u8; 32]) {
    out.write(base32_encode(u128::from_be_bytes(*bytes)));
}

/// [`base32_decode`] writing the big-endian bytes to `out` with one 16-byte
/// store, so the caller's 16-byte load of them is forwarded (a `u128`
/// returned in two registers and stored in halves stalls it); returns
/// whether the text was valid.
#[target_feature(enable = "ssse3,bmi2")]
pub(crate) unsafe fn base32_decode_into(text: &[u8; 26], out: *mut [u8; 16]) -> bool {
    const X: i8 = -1; // invalid
                      // Values by low nibble for upper-cased bytes 0x3_, 0x4_ and 0x5_.
    let digits = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, X, X, X, X, X, X);
    // @ A B C D E F G H I J K L M N O
    let row4 = _mm_setr_epi8(X, 10, 11, 12, 13, 14, 15, 16, 17, 1, 18, 19, 1, 20, 21, 0);
    // P Q R S T U V W X Y Z [ \ ] ^ _
    let row5 = _mm_setr_epi8(22, 23, 24, 25, 26, X, 27, 28, 29, 30, 31, X, X, X, X, X);
    let values = |c: __m128i| {
        // Fold a-z onto A-Z; other bytes keep their row and fail below.
        let is_lower = _mm_and_si128(
            _mm_cmpgt_epi8(c, _mm_set1_epi8(0x60)),
            _mm_cmplt_epi8(c, _mm_set1_epi8(0x7b)),
        );
        let c = _mm_sub_epi8(c, _mm_and_si128(is_lower, _mm_set1_epi8(0x20)));
        let low = _mm_and_si128(c, _mm_set1_epi8(0x0f));
        let row = _mm_and_si128(_mm_srli_epi16(c, 4), _mm_set1_epi8(0x0f));
        let pick = |n: i8, table: __m128i| {
            _mm_and_si128(
                _mm_cmpeq_epi8(row, _mm_set1_epi8(n)),
                _mm_shuffle_epi8(table, low),
            )
        };
        let in_rows = _mm_or_si128(
            _mm_or_si128(
                _mm_cmpeq_epi8(row, _mm_set1_epi8(3)),
                _mm_cmpeq_epi8(row, _mm_set1_epi8(4)),
            ),
            _mm_cmpeq_epi8(row, _mm_set1_epi8(5)),
        );
        // Bytes >= 0x80 have a row of 8..15 and are outside the three rows.
        let v = _mm_or_si128(_mm_or_si128(pick(3, digits), pick(4, row4)), pick(5, row5));
        _mm_or_si128(v, _mm_andnot_si128(in_rows, _mm_set1_epi8(X)))
    };
    let first = values(_mm_loadu_si128(text.as_ptr().cast()));
    // Bytes 10..26: overlaps the first load so no read goes past the text.
    let second = values(_mm_loadu_si128(text.as_ptr().add(10).cast()));
    // Invalid symbols are 0xff, the only values with bit 7 set; the first
    // symbol must also be at most 7.
    let bad = _mm_movemask_epi8(first) | _mm_movemask_epi8(second);
    let lane = |x: __m128i, i: i32| -> u64 {
        if i == 0 {
            _mm_cvtsi128_si64(x) as u64
        } else {
            _mm_cvtsi128_si64(_mm_srli_si128(x, 8)) as u64
        }
    };
    let lane0 = lane(first, 0); // symbols 0..8
    let lane1 = lane(first, 1); // symbols 8..16
    let lane2 = lane(second, 0); // symbols 10..18
    let lane3 = lane(second, 1); // symbols 18..26
    let ok = bad == 0 && (lane0 & 0xff) <= 7;
    let pack = |x: u64| _pext_u64(x.swap_bytes(), FIVE_BIT_GROUPS) as u128;
    let head = ((lane0 & 0xff) << 5) | ((lane0 >> 8) & 0xff);
    // Symbols 2..10 straddle the first two lanes.
    let s2 = (lane0 >> 16) | (lane1 << 48);
    let v = ((head as u128) << 120) | (pack(s2) << 80) | (pack(lane2) << 40) | pack(lane3);
    let be = _mm_set_epi64x(
        (v as u64).swap_bytes() as i64,
        ((v >> 64) as u64).swap_bytes() as i64,
    );
    _mm_storeu_si128(out.cast(), be);
    ok
}

/// Base32-encodes 16 bytes into 26 Crockford symbols with AVX2: each
/// symbol's two source bytes gathered into a 16-bit word (`vpshufb` on the
/// value broadcast to both lanes), its 5 bits moved to the word's top by a
/// multiply and brought down by a shift, the words packed to bytes and the
/// bytes looked up in the alphabet's two halves.
///
/// # Safety
/// The CPU must support AVX2 ([`supports`]).
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn base32_encode_avx2_into(bytes: &[u8; 16], out: *mut [u8; 32]) {
    // Symbol i has its lowest bit at 125 - 5i (of 128, from the right): in
    // the word (byte 15 - L/8, then the byte before it above), shifted by
    // L % 8. Z: the byte before the first, which is zero.
    let x = _mm256_broadcastsi128_si256(_mm_loadu_si128(bytes.as_ptr().cast()));
    // Lanes hold symbols 0..8 and 16..24 (a), 8..16 and 24..32 (b), so
    // that packing a and b to bytes puts every symbol in its place.
    let words_a = _mm256_setr_epi8(
        0, Z, Z, 0, 1, 0, 2, 1, 2, 1, 3, 2, 4, 3, 4, 3, // symbols 0..8
        10, 9, Z, 10, 11, 10, 12, 11, 12, 11, 13, 12, 14, 13, 14, 13, // 16..24
    );
    let words_b = _mm256_setr_epi8(
        5, 4, Z, 5, 6, 5, 7, 6, 7, 6, 8, 7, 9, 8, 9, 8, // symbols 8..16
        15, 14, Z, 15, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, // 24..26
    );
    // 1 << (11 - L % 8): the 5 bits to the top of the word (the pattern
    // repeats every 8 symbols, 5 bytes). A symbol in a byte's low five bits
    // (L % 8 = 0) comes from the word with that byte above (`Z, byte`
    // above), so every factor is at most 1 << 10: the compiler then makes
    // the multiply and shift one `vpmulhuw` and a mask, with no blend for
    // a factor of 1 << 11. One factor vector serves both halves (the
    // lanes past symbol 25 hold zero words).
    let up = _mm256_setr_epi16(
        1 << 6,
        1 << 3,
        1 << 8,
        1 << 5,
        1 << 10,
        1 << 7,
        1 << 4,
        1 << 9, //
        1 << 6,
        1 << 3,
        1 << 8,
        1 << 5,
        1 << 10,
        1 << 7,
        1 << 4,
        1 << 9,
    );
    let a = _mm256_srli_epi16(_mm256_mullo_epi16(_mm256_shuffle_epi8(x, words_a), up), 11);
    let b = _mm256_srli_epi16(_mm256_mullo_epi16(_mm256_shuffle_epi8(x, words_b), up), 11);
    let values = _mm256_packus_epi16(a, b);
    let low = _mm256_broadcastsi128_si256(_mm_loadu_si128(b"0123456789ABCDEF".as_ptr().cast()));
    let high = _mm256_broadcastsi128_si256(_mm_loadu_si128(b"GHJKMNPQRSTVWXYZ".as_ptr().cast()));
    let symbols = _mm256_blendv_epi8(
        _mm256_shuffle_epi8(low, values),
        _mm256_shuffle_epi8(high, values),
        // Bit 4 (values 16..31) moved to bit 7, which vpblendvb reads
        // (no constant to load).
        _mm256_slli_epi16(values, 3),
    );
    store_halves(out, symbols);
}

/// Stores `v` at `out` as two 16-byte halves. The text goes to callers
/// built for the baseline x86-64 (SSE2), whose copies of it are 16-byte
/// loads; AMD Zen 3 does not forward a 32-byte store to a load of its upper
/// half, which then waits for the store to reach the cache (`perf` on the
/// Base32 encode benchmark: most samples on that load; two halves took a
/// value from 2.61–2.81 to 2.56–2.64 ns, and the whole benchmark built with
/// AVX2, whose copies are 32-byte loads, ran at 2.34). Written in assembly
/// because the compiler merges two adjacent 16-byte stores back into one.
///
/// # Safety
/// `out` must be 32 writable bytes; the CPU must support AVX2.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn store_halves(out: *mut [u8; 32], v: __m256i) {
    core::arch::asm!(
        "vmovdqu xmmword ptr [{out}], {low}",
        "vextracti128 xmmword ptr [{out} + 16], {v}, 1",
        out = in(reg) out,
        low = in(xmm_reg) _mm256_castsi256_si128(v),
        v = in(ymm_reg) v,
        options(nostack, preserves_flags),
    );
}

/// [`base32_decode_avx2`] writing the bytes to `out` with one store;
/// returns whether the text was valid. Six `'0'` symbols in front make 32:
/// four groups of eight, one per 64-bit lane, which two multiply-adds pack
/// into 40 bits each (as the AVX-512 kernel does). A symbol's value: a
/// digit's is the byte less `'0'`; a letter's (either case: bytes 0x40 to
/// 0x7f) is looked up by its low five bits in two 16-entry tables, bit 4
/// choosing the table; anything else is 0xff. One unsigned compare against
/// each position's largest value (7 for the first symbol) checks them all.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn base32_decode_avx2_into(text: &[u8; 26], out: *mut [u8; 16]) -> bool {
    const X: i8 = -1; // invalid
    const O: i8 = b'0' as i8;
    // Lane 0: six '0' then symbols 0..10; lane 1: symbols 10..26. Two
    // 16-byte loads inside the text.
    let first = _mm_slli_si128(_mm_loadu_si128(text.as_ptr().cast()), 6);
    let second = _mm_loadu_si128(text.as_ptr().add(10).cast());
    let c = _mm256_or_si256(
        _mm256_inserti128_si256(_mm256_castsi128_si256(first), second, 1),
        _mm256_setr_epi8(
            O, O, O, O, O, O, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
            0, 0, 0,
        ),
    );
    // Letters by their low five bits: @ A B C D E F G H I J K L M N O, then
    // P Q R S T U V W X Y Z [ \ ] ^ _ (a-z are the same bits plus 0x20).
    let letters_low = _mm256_broadcastsi128_si256(_mm_setr_epi8(
        X, 10, 11, 12, 13, 14, 15, 16, 17, 1, 18, 19, 1, 20, 21, 0,
    ));
    let letters_high = _mm256_broadcastsi128_si256(_mm_setr_epi8(
        22, 23, 24, 25, 26, X, 27, 28, 29, 30, 31, X, X, X, X, X,
    ));
    let index = _mm256_and_si256(c, _mm256_set1_epi8(0x1f));
    // Bit 4 moved to bit 7, which vpblendvb reads.
    let letter = _mm256_blendv_epi8(
        _mm256_shuffle_epi8(letters_low, index),
        _mm256_shuffle_epi8(letters_high, index),
        _mm256_slli_epi16(c, 3),
    );
    let letter_row = _mm256_cmpeq_epi8(
        _mm256_and_si256(c, _mm256_set1_epi8(0xc0u8 as i8)),
        _mm256_set1_epi8(0x40),
    );
    let digit = _mm256_sub_epi8(c, _mm256_set1_epi8(O));
    let is_digit = _mm256_cmpeq_epi8(_mm256_min_epu8(digit, _mm256_set1_epi8(9)), digit);
    let values = _mm256_blendv_epi8(
        _mm256_or_si256(letter, _mm256_andnot_si256(letter_row, _mm256_set1_epi8(X))),
        digit,
        is_digit,
    );
    // The padding is 0, the first symbol at most 7 (128 bits), the others
    // at most 31; 0xff exceeds them all.
    let largest = _mm256_setr_epi8(
        0, 0, 0, 0, 0, 0, 7, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31,
        31, 31, 31, 31, 31, 31, 31, 31,
    );
    let within = _mm256_cmpeq_epi8(_mm256_max_epu8(values, largest), largest);
    let ok = _mm256_movemask_epi8(within) == -1;
    let pairs = _mm256_maddubs_epi16(values, _mm256_set1_epi16(0x0120)); // 32*a + b
    let quads = _mm256_madd_epi16(pairs, _mm256_set1_epi32(0x0001_0400)); // 1024*a + b
    let groups = _mm256_or_si256(
        _mm256_srli_epi64(quads, 32),
        _mm256_srli_epi64(_mm256_slli_epi64(quads, 32), 12),
    );
    // Lane 0: group 0 is byte 0, group 1 bytes 1..6; lane 1: bytes 6..16.
    let be = _mm256_setr_epi8(
        0, 12, 11, 10, 9, 8, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, //
        4, 3, 2, 1, 0, 12, 11, 10, 9, 8, Z, Z, Z, Z, Z, Z,
    );
    let picked = _mm256_shuffle_epi8(groups, be);
    let bytes = _mm_or_si128(
        _mm256_castsi256_si128(picked),
        _mm_slli_si128(_mm256_extracti128_si256(picked, 1), 6),
    );
    _mm_storeu_si128(out.cast(), bytes);
    ok
}

/// What the canonical-text kernels know of a byte from its two nibbles:
/// whether it is a digit, a letter a-f/A-F or a dash (a byte is one when
/// the class of its high nibble and that of its low nibble share the bit),
/// and what to add to its low nibble for its hex value.
mod text_class {
    use core::arch::x86_64::*;
    pub const DIGIT: i8 = 1;
    pub const LETTER: i8 = 2;
    pub const DASH: i8 = 4;
    pub const HEX: i8 = DIGIT | LETTER;
    const BY_HIGH: [i8; 16] = [
        0, 0, DASH, DIGIT, LETTER, 0, LETTER, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    ];
    const BY_LOW: [i8; 16] = [
        DIGIT, HEX, HEX, HEX, HEX, HEX, HEX, DIGIT, DIGIT, DIGIT, 0, 0, 0, DASH, 0, 0,
    ];
    const LETTER_ADD: [i8; 16] = [0, 0, 0, 0, 9, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0];

    /// The class by high nibble, by low nibble, and the letters' addend.
    #[inline(always)]
    pub fn tables() -> (__m128i, __m128i, __m128i) {
        let load = |t: &[i8; 16]| {
            // SAFETY: 16 bytes; SSE2 is part of x86-64.
            unsafe { _mm_loadu_si128(t.as_ptr().cast()) }
        };
        (load(&BY_HIGH), load(&BY_LOW), load(&LETTER_ADD))
    }

    /// Each byte's hex value, and a mask of the bytes that are not of a
    /// class `wants` has at their position.
    ///
    /// # Safety
    /// The CPU must support SSSE3.
    #[inline]
    #[target_feature(enable = "ssse3")]
    pub unsafe fn read(c: __m128i, wants: __m128i) -> (__m128i, u32) {
        let (by_high, by_low, letter_add) = tables();
        let nibble = _mm_set1_epi8(0x0f);
        let high = _mm_and_si128(_mm_srli_epi16(c, 4), nibble);
        let low = _mm_and_si128(c, nibble);
        let class = _mm_and_si128(
            _mm_and_si128(
                _mm_shuffle_epi8(by_high, high),
                _mm_shuffle_epi8(by_low, low),
            ),
            wants,
        );
        let wrong = _mm_movemask_epi8(_mm_cmpeq_epi8(class, _mm_setzero_si128())) as u32;
        (_mm_add_epi8(low, _mm_shuffle_epi8(letter_add, high)), wrong)
    }
}

/// Parses a canonical 8-4-4-4-12 text into `out` with SSSE3 (the
/// SSSE3 + BMI2 tier): three 16-byte loads (0..16, 16..32, 20..36), each
/// byte classified by two nibble lookups against what its position wants
/// (as the AVX2 kernel does) and turned into its hex value, the 32 digits
/// gathered in order by `pshufb`, pairs joined by `pmaddubsw` and packed;
/// false if a dash or a hex digit is wrong (the caller then locates the
/// error).
///
/// # Safety
/// The CPU must support SSSE3 (every tier from [`SSSE3_BMI2`] up).
#[target_feature(enable = "ssse3")]
pub(crate) unsafe fn parse_canonical_ssse3_into(s: &[u8; 36], out: *mut [u8; 16]) -> bool {
    use text_class::{DASH, HEX};
    // Dashes at 8, 13 (p), 18, 23 (q: 2, 7); r's last four are new digits.
    let (pv, p_wrong) = text_class::read(
        _mm_loadu_si128(s.as_ptr().cast()),
        _mm_setr_epi8(
            HEX, HEX, HEX, HEX, HEX, HEX, HEX, HEX, DASH, HEX, HEX, HEX, HEX, DASH, HEX, HEX,
        ),
    );
    let (qv, q_wrong) = text_class::read(
        _mm_loadu_si128(s.as_ptr().add(16).cast()),
        _mm_setr_epi8(
            HEX, HEX, DASH, HEX, HEX, HEX, HEX, DASH, HEX, HEX, HEX, HEX, HEX, HEX, HEX, HEX,
        ),
    );
    let (rv, r_wrong) = text_class::read(
        _mm_loadu_si128(s.as_ptr().add(20).cast()),
        _mm_set1_epi8(HEX),
    );
    if p_wrong | q_wrong | (r_wrong & 0xf000) != 0 {
        return false;
    }
    // The first 16 digits: p's 0..8, 9..13, 14..16 and q's 0..2.
    let first = _mm_or_si128(
        _mm_shuffle_epi8(
            pv,
            _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 14, 15, Z, Z),
        ),
        _mm_shuffle_epi8(
            qv,
            _mm_setr_epi8(Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, 0, 1),
        ),
    );
    // The last 16: q's 3..7 (19..23) and r's 4..16 (24..36).
    let second = _mm_or_si128(
        _mm_shuffle_epi8(
            qv,
            _mm_setr_epi8(3, 4, 5, 6, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z),
        ),
        _mm_shuffle_epi8(
            rv,
            _mm_setr_epi8(Z, Z, Z, Z, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
        ),
    );
    let join = _mm_set1_epi16(0x0110); // 16 * high + low
    let bytes = _mm_packus_epi16(
        _mm_maddubs_epi16(first, join),
        _mm_maddubs_epi16(second, join),
    );
    _mm_storeu_si128(out.cast(), bytes);
    true
}

/// Parses a canonical 8-4-4-4-12 text with AVX2 into `out`; false if a
/// dash or a hex digit is wrong (nothing useful is written then). Bytes
/// 0..32 in one register and 32..36 from a second load; each byte is
/// classified by two nibble lookups (hex digit, letter a-f/A-F, dash),
/// checked against what its position wants with one compare and one
/// mask test, and its value is its low nibble plus 9 for a letter; the
/// digits are gathered in order within each lane, pairs joined by
/// `vpmaddubsw`, packed, and the lanes' seven bytes each and the last two
/// put together.
///
/// # Safety
/// The CPU must support AVX2 ([`supports`]).
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn parse_canonical_avx2_into(s: &[u8; 36], out: *mut [u8; 16]) -> bool {
    use text_class::{DASH, HEX};
    let (by_high, by_low, letter_add) = text_class::tables();
    let nibble = _mm256_set1_epi8(0x0f);
    let (by_high_y, by_low_y, letter_add_y) = (
        _mm256_broadcastsi128_si256(by_high),
        _mm256_broadcastsi128_si256(by_low),
        _mm256_broadcastsi128_si256(letter_add),
    );
    // Text 0..32: what each position wants (dashes at 8, 13, 18, 23).
    let wants = _mm256_setr_epi8(
        HEX, HEX, HEX, HEX, HEX, HEX, HEX, HEX, DASH, HEX, HEX, HEX, HEX, DASH, HEX, HEX, //
        HEX, HEX, DASH, HEX, HEX, HEX, HEX, DASH, HEX, HEX, HEX, HEX, HEX, HEX, HEX, HEX,
    );
    let c = _mm256_loadu_si256(s.as_ptr().cast());
    let high = _mm256_and_si256(_mm256_srli_epi16(c, 4), nibble);
    let low = _mm256_and_si256(c, nibble);
    let class = _mm256_and_si256(
        _mm256_and_si256(
            _mm256_shuffle_epi8(by_high_y, high),
            _mm256_shuffle_epi8(by_low_y, low),
        ),
        wants,
    );
    let wrong = _mm256_movemask_epi8(_mm256_cmpeq_epi8(class, _mm256_setzero_si256())) as u32;
    // Text 20..36, of which 32..36 (its last four bytes) are new: digits.
    let (t_values, t_wrong) = text_class::read(
        _mm_loadu_si128(s.as_ptr().add(20).cast()),
        _mm_set1_epi8(HEX),
    );
    if wrong | (t_wrong & 0xf000) != 0 {
        return false;
    }
    let values = _mm256_add_epi8(low, _mm256_shuffle_epi8(letter_add_y, high));
    // Lane 0 (text 0..16): digits 0..14; lane 1 (text 16..32): 14..28.
    let digits = _mm256_shuffle_epi8(
        values,
        _mm256_setr_epi8(
            0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 14, 15, Z, Z, //
            0, 1, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15, Z, Z,
        ),
    );
    let join = _mm256_set1_epi16(0x0110); // 16 * first + second
    let bytes = _mm256_packus_epi16(_mm256_maddubs_epi16(digits, join), _mm256_setzero_si256());
    // Digits 28..32: text 32..36, bytes 12..16 of the second load.
    let last = _mm_packus_epi16(
        _mm_maddubs_epi16(
            _mm_shuffle_epi8(
                t_values,
                _mm_setr_epi8(12, 13, 14, 15, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z),
            ),
            _mm256_castsi256_si128(join),
        ),
        _mm_setzero_si128(),
    );
    let joined = _mm_or_si128(
        _mm_or_si128(
            _mm256_castsi256_si128(bytes),
            _mm_slli_si128(_mm256_extracti128_si256(bytes, 1), 7),
        ),
        _mm_slli_si128(last, 14),
    );
    _mm_storeu_si128(out.cast(), joined);
    true
}

/// Crockford's alphabet as a `vpermb` table.
#[inline(always)]
unsafe fn alphabet() -> __m256i {
    _mm256_loadu_si256(crate::base32::ALPHABET.as_ptr().cast())
}

/// Base32-encodes 16 bytes into 26 Crockford symbols.
///
/// Each 64-bit lane gets, little-endian, the (up to 6) source bytes that
/// hold its 8 symbols; `vpmultishiftqb` then cuts each symbol out at its bit
/// offset, and `vpermb` maps the low 5 bits to the alphabet.
///
/// # Safety
/// The CPU must support AVX-512 VBMI, VL and BW ([`supports`]).
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vbmi")]
pub(crate) unsafe fn base32_encode_vbmi_into(bytes: &[u8; 16], out: *mut [u8; 32]) {
    let x = _mm256_broadcastsi128_si256(_mm_loadu_si128(bytes.as_ptr().cast()));
    let sources = _mm256_setr_epi8(
        5, 4, 3, 2, 1, 0, Z, Z, // symbols 0..8: bytes 0..6 (2 pad bits first)
        9, 8, 7, 6, 5, 4, Z, Z, // symbols 8..16: bytes 4..10
        14, 13, 12, 11, 10, 9, Z, Z, // symbols 16..24: bytes 9..15
        15, 14, Z, Z, Z, Z, Z, Z, // symbols 24..26: bytes 14..16
    );
    let lanes = _mm256_shuffle_epi8(x, sources);
    let offsets = _mm256_setr_epi8(
        45, 40, 35, 30, 25, 20, 15, 10, 37, 32, 27, 22, 17, 12, 7, 2, 37, 32, 27, 22, 17, 12, 7, 2,
        5, 0, 0, 0, 0, 0, 0, 0,
    );
    let groups = _mm256_multishift_epi64_epi8(offsets, lanes);
    let symbols = _mm256_permutexvar_epi8(groups, alphabet());
    // In halves, as the AVX2 kernel (a 26-byte result written piecewise
    // would stall the caller's loads too).
    store_halves(out, symbols);
}

/// [`base32_decode_vbmi`] writing the bytes to `out` with one store (see
/// [`base32_decode_into`]); returns whether the text was valid.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vbmi")]
pub(crate) unsafe fn base32_decode_vbmi_into(text: &[u8; 26], out: *mut [u8; 16]) -> bool {
    // Six zero symbols in front make 32 symbols: four 40-bit groups, one per
    // 64-bit lane. The load starts 6 bytes early with those lanes masked
    // off; masked lanes are neither read nor able to fault.
    const TEXT: u64 = 0xffff_ffc0;
    let c = _mm512_maskz_loadu_epi8(TEXT, text.as_ptr().wrapping_sub(6).cast());
    // One 128-entry lookup covers both cases and the aliases; bytes >= 0x80
    // would wrap to 7 bits, so they are rejected separately.
    let (t0, t1) = decode_tables();
    let values = _mm512_maskz_permutex2var_epi8(TEXT, t0, c, t1);
    // Invalid: a non-ASCII byte, a symbol value of 0xff, a first symbol
    // (lane 6) above 7.
    let mut limits = [32u8; 64];
    limits[6] = 8;
    let too_big = _mm512_cmpge_epu8_mask(values, _mm512_loadu_si512(limits.as_ptr().cast()));
    let ok = (too_big | _mm512_movepi8_mask(c)) == 0;
    let padded = _mm512_castsi512_si256(values);
    let pairs = _mm256_maddubs_epi16(padded, _mm256_set1_epi16(0x0120)); // 32*a + b
    let quads = _mm256_madd_epi16(pairs, _mm256_set1_epi32(0x0001_0400)); // 1024*a + b
    let groups = _mm256_or_si256(
        _mm256_srli_epi64(quads, 32),
        _mm256_srli_epi64(_mm256_slli_epi64(quads, 32), 12),
    );
    let be = _mm256_setr_epi8(
        0, 12, 11, 10, 9, 8, 20, 19, 18, 17, 16, 28, 27, 26, 25, 24, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0,
    );
    let bytes = _mm256_castsi256_si128(_mm256_permutexvar_epi8(be, groups));
    _mm_storeu_si128(out.cast(), bytes);
    ok
}

/// Symbol values of the 128 ASCII bytes, 0xff where invalid, as the two
/// 64-byte halves of a `vpermt2b` table.
#[inline(always)]
unsafe fn decode_tables() -> (__m512i, __m512i) {
    const T: [u8; 128] = {
        let mut t = [0xffu8; 128];
        let mut c = 0;
        while c < 128 {
            t[c] = crate::base32::symbol_value(c as u8);
            c += 1;
        }
        t
    };
    (
        _mm512_loadu_si512(T.as_ptr().cast()),
        _mm512_loadu_si512(T.as_ptr().add(64).cast()),
    )
}

/// Parses a canonical 8-4-4-4-12 text into `out`; false if a dash or a
/// hex digit is wrong (the caller then locates the error).
///
/// # Safety
/// The CPU must support AVX-512 VBMI, VL and BW ([`supports`]).
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vbmi")]
pub(crate) unsafe fn parse_canonical_vbmi_into(s: &[u8; 36], out: *mut [u8; 16]) -> bool {
    const DASHES: u64 = (1 << 8) | (1 << 13) | (1 << 18) | (1 << 23);
    let c = _mm512_maskz_loadu_epi8((1u64 << 36) - 1, s.as_ptr().cast());
    let dash = _mm512_cmpeq_epi8_mask(c, _mm512_set1_epi8(b'-' as i8));
    let gather = _mm512_set_epi8(
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, // bytes 32..64 unused
        35, 34, 33, 32, 31, 30, 29, 28, 27, 26, 25, 24, 22, 21, 20, 19, 17, 16, 15, 14, 12, 11, 10,
        9, 7, 6, 5, 4, 3, 2, 1, 0,
    );
    let hex = _mm512_castsi512_si256(_mm512_permutexvar_epi8(gather, c));
    let digit = _mm256_sub_epi8(hex, _mm256_set1_epi8(b'0' as i8));
    let is_digit = _mm256_cmple_epu8_mask(digit, _mm256_set1_epi8(9));
    let alpha = _mm256_sub_epi8(
        _mm256_or_si256(hex, _mm256_set1_epi8(0x20)),
        _mm256_set1_epi8(b'a' as i8),
    );
    let is_alpha = _mm256_cmple_epu8_mask(alpha, _mm256_set1_epi8(5));
    if (is_digit | is_alpha) != u32::MAX || dash & DASHES != DASHES {
        return false;
    }
    let nibbles = _mm256_mask_blend_epi8(
        is_alpha,
        digit,
        _mm256_add_epi8(alpha, _mm256_set1_epi8(10)),
    );
    let bytes = _mm256_cvtepi16_epi8(_mm256_maddubs_epi16(nibbles, _mm256_set1_epi16(0x0110)));
    _mm_storeu_si128(out.cast(), bytes);
    true
}
