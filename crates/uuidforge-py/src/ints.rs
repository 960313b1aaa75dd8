//! Python `int`s of 128 bits, made and read. The stable ABI of 3.9 has
//! no call that takes or gives 16 bytes; the interpreter's own calls are
//! looked up at import and checked against the stable ABI on chosen values
//! before they are used (see [`IntMaker`]).

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use std::os::raw::c_void;

/// How a 128-bit `int` is made. The stable ABI has no call that takes 16
/// bytes before 3.14, and building the value from two halves with a shift
/// and an or makes three objects. Every CPython exports better ones, which
/// are looked up at import and each checked against the halves on chosen
/// values; the first that agrees is used:
///
/// - `Digits`: the interpreter's own allocator of an int of n digits
///   (`_PyLong_New`) and the 30-bit digits written in place — the layout
///   read from `int.__basicsize__`/`__itemsize__` and `sys.int_info`, the
///   digit count where 3.9–3.11 keep it (`ob_size`) or 3.12+ (`lv_tag`);
/// - `NativeBytes`: public `PyLong_FromUnsignedNativeBytes` (3.13+);
/// - `ByteArray`: `_PyLong_FromByteArray` (same signature since 3.0);
/// - `Halves`: the stable ABI alone.
type NewFn = unsafe extern "C" fn(isize) -> *mut ffi::PyObject;
type NativeBytesFn = unsafe extern "C" fn(*const c_void, usize, i32) -> *mut ffi::PyObject;
type ByteArrayFn = unsafe extern "C" fn(*const u8, usize, i32, i32) -> *mut ffi::PyObject;

#[derive(Clone, Copy)]
enum IntMaker {
    Digits {
        new: NewFn,
        /// Byte offset of the digits; the count or tag is the word before.
        digits_at: usize,
        /// 3.12+: the count is kept as `n << 3` (sign bits 0: positive).
        tagged: bool,
    },
    NativeBytes(NativeBytesFn),
    ByteArray(ByteArrayFn),
    Halves,
}

static INT_MAKER: std::sync::OnceLock<IntMaker> = std::sync::OnceLock::new();

/// `Py_ASNATIVEBYTES_LITTLE_ENDIAN`.
const LITTLE_ENDIAN: i32 = 1;

fn symbol(name: &std::ffi::CStr) -> *mut c_void {
    // SAFETY: looks a name up in the process (the interpreter exports its
    // C API to extension modules).
    unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) }
}

/// The digits maker, when this interpreter's ints are laid out as known:
/// 30-bit digits of 4 bytes after a header whose last word is the count.
fn digits_maker(py: Python<'_>) -> PyResult<Option<IntMaker>> {
    let int = py.get_type::<pyo3::types::PyInt>();
    let basic: usize = int.getattr("__basicsize__")?.extract()?;
    let item: usize = int.getattr("__itemsize__")?.extract()?;
    let bits: u32 = py
        .import("sys")?
        .getattr("int_info")?
        .getattr("bits_per_digit")?
        .extract()?;
    let new = symbol(c"_PyLong_New");
    let known_header = basic == std::mem::size_of::<ffi::PyObject>() + 8;
    if new.is_null() || item != 4 || bits != 30 || !known_header {
        return Ok(None);
    }
    Ok(Some(IntMaker::Digits {
        // SAFETY: `PyLongObject *_PyLong_New(Py_ssize_t size)`, 3.0 on.
        new: unsafe { std::mem::transmute::<*mut c_void, NewFn>(new) },
        digits_at: basic,
        tagged: py.version_info() >= (3, 12),
    }))
}

fn choose_int_maker(py: Python<'_>) -> PyResult<IntMaker> {
    let mut candidates = Vec::new();
    candidates.extend(digits_maker(py)?);
    if py.version_info() >= (3, 13) {
        let f = symbol(c"PyLong_FromUnsignedNativeBytes");
        if !f.is_null() {
            // SAFETY: the documented signature of that public function.
            candidates.push(IntMaker::NativeBytes(unsafe {
                std::mem::transmute::<*mut c_void, NativeBytesFn>(f)
            }));
        }
    } else {
        let f = symbol(c"_PyLong_FromByteArray");
        if !f.is_null() {
            // SAFETY: its signature from 3.0 through 3.12.
            candidates.push(IntMaker::ByteArray(unsafe {
                std::mem::transmute::<*mut c_void, ByteArrayFn>(f)
            }));
        }
    }
    let values = [
        0u128,
        1,
        (1 << 30) - 1,
        1 << 30,
        u64::MAX as u128,
        (u64::MAX as u128) + 1,
        (1 << 90) - 1,
        1 << 90,
        1 << 120,
        u128::MAX,
        0x0190_8b4a_1c2d_7e3f_8a9b_0c1d_2e3f_4a5b,
    ];
    'candidate: for candidate in candidates {
        for v in values {
            let a = int_with(py, candidate, v)?;
            let b = int_with(py, IntMaker::Halves, v)?;
            let same = a.eq(&b)?
                && a.hash()? == b.hash()?
                && a.str()?.to_cow()? == b.str()?.to_cow()?
                && a.call_method0("bit_length")?
                    .eq(b.call_method0("bit_length")?)?
                && a.extract::<u128>()? == v
                && match candidate {
                    IntMaker::Digits {
                        digits_at, tagged, ..
                    } => read_digits(&b, digits_at, tagged) == Some(v),
                    _ => true,
                };
            if !same {
                continue 'candidate;
            }
        }
        return Ok(candidate);
    }
    Ok(IntMaker::Halves)
}

/// A Python `int` of a 128-bit value.
#[inline]
pub fn int_of(py: Python<'_>, value: u128) -> PyResult<Bound<'_, PyAny>> {
    int_with(py, maker(py)?, value)
}

#[inline]
fn maker(py: Python<'_>) -> PyResult<IntMaker> {
    Ok(match INT_MAKER.get() {
        Some(m) => *m,
        None => {
            let m = choose_int_maker(py)?;
            *INT_MAKER.get_or_init(|| m)
        }
    })
}

#[inline]
fn int_with(py: Python<'_>, maker: IntMaker, value: u128) -> PyResult<Bound<'_, PyAny>> {
    let bytes = value.to_le_bytes();
    // SAFETY: each call reads the 16 bytes given; results checked for NULL.
    unsafe {
        match maker {
            // Values below 2^64 (rare in a UUID) through the public call,
            // which returns the interpreter's cached small ints.
            IntMaker::Digits { .. } if value <= u64::MAX as u128 => {
                Bound::from_owned_ptr_or_err(py, ffi::PyLong_FromUnsignedLongLong(value as u64))
            }
            IntMaker::Digits {
                new,
                digits_at,
                tagged,
            } => {
                // 65..=128 bits: 3 to 5 digits of 30 bits. All five are
                // cut from the two halves with constant shifts (a shift of
                // 128 bits by a varying amount is a branchy sequence), and
                // the first n written.
                let n = (128 - value.leading_zeros()).div_ceil(30) as usize;
                let obj = Bound::from_owned_ptr_or_err(py, new(n as isize))?;
                let base = obj.as_ptr().cast::<u8>();
                let digits = base.add(digits_at).cast::<u32>();
                let (lo, hi) = (value as u64, (value >> 64) as u64);
                const DIGIT: u64 = 0x3fff_ffff;
                let all = [
                    (lo & DIGIT) as u32,
                    ((lo >> 30) & DIGIT) as u32,
                    (((lo >> 60) | (hi << 4)) & DIGIT) as u32,
                    ((hi >> 26) & DIGIT) as u32,
                    (hi >> 56) as u32,
                ];
                if n == 5 {
                    // Every UUIDv7 of this millennium: five plain stores.
                    for (i, d) in all.into_iter().enumerate() {
                        digits.add(i).write(d);
                    }
                } else {
                    for (i, d) in all.into_iter().take(n).enumerate() {
                        digits.add(i).write(d);
                    }
                }
                let count = base.add(digits_at - 8).cast::<usize>();
                count.write(if tagged { n << 3 } else { n });
                Ok(obj)
            }
            IntMaker::NativeBytes(f) => {
                Bound::from_owned_ptr_or_err(py, f(bytes.as_ptr().cast(), 16, LITTLE_ENDIAN))
            }
            IntMaker::ByteArray(f) => Bound::from_owned_ptr_or_err(py, f(bytes.as_ptr(), 16, 1, 0)),
            IntMaker::Halves => {
                let hi = (value >> 64) as u64;
                let lo = value as u64;
                let low = Bound::from_owned_ptr_or_err(py, ffi::PyLong_FromUnsignedLongLong(lo))?;
                if hi == 0 {
                    return Ok(low);
                }
                let high = Bound::from_owned_ptr_or_err(py, ffi::PyLong_FromUnsignedLongLong(hi))?;
                let shifted = Bound::from_owned_ptr_or_err(
                    py,
                    ffi::PyNumber_Lshift(high.as_ptr(), sixty_four(py)?.as_ptr()),
                )?;
                Bound::from_owned_ptr_or_err(py, ffi::PyNumber_Or(shifted.as_ptr(), low.as_ptr()))
            }
        }
    }
}

fn sixty_four(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    static SIXTY_FOUR: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    Ok(SIXTY_FOUR
        .get_or_try_init(py, || {
            Ok::<_, PyErr>(64u32.into_pyobject(py)?.into_any().unbind())
        })?
        .bind(py))
}

/// The value of a Python `int` of 0 to 2^128 - 1: read from its digits
/// where the layout was checked at import, else through the stable ABI.
pub fn u128_of(int: &Bound<'_, PyAny>) -> PyResult<u128> {
    if let IntMaker::Digits {
        digits_at, tagged, ..
    } = maker(int.py())?
    {
        if let Some(v) = read_digits(int, digits_at, tagged) {
            return Ok(v);
        }
    }
    int.extract::<u128>()
}

/// The value of an exact `int` of 0 to 2^128 - 1 read from its digits
/// (`None` for another type, a negative or larger value).
fn read_digits(int: &Bound<'_, PyAny>, digits_at: usize, tagged: bool) -> Option<u128> {
    if !int.is_exact_instance_of::<pyo3::types::PyInt>() {
        return None;
    }
    // SAFETY: an exact int of the layout checked at import: the digit
    // count (3.12+: the tag) is the word before the digits.
    unsafe {
        let base = int.as_ptr().cast::<u8>();
        let count = base.add(digits_at - 8).cast::<isize>().read();
        let (n, negative) = if tagged {
            ((count >> 3) as usize, count & 3 == 2)
        } else {
            (count.unsigned_abs(), count < 0)
        };
        if negative || n > 5 {
            return None;
        }
        let digits = base.add(digits_at).cast::<u32>();
        // 5 digits hold 150 bits: above 128 is out of range.
        if n == 5 && digits.add(4).read() >= (1 << 8) {
            return None;
        }
        let mut v: u128 = 0;
        for i in (0..n).rev() {
            v = (v << 30) | u128::from(digits.add(i).read());
        }
        Some(v)
    }
}
