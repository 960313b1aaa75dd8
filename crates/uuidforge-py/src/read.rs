//! Reading values: every text form people paste, Crockford Base32, the
//! other text forms, times, bounds and partition keys, and inspection.

use crate::errors;
use crate::pyuuid::{class, to_py, value_of};
use crate::time::{to_datetime, unix_ms};
use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyString};
use uuid::Uuid;
use uuidforge::fmt::Format;

/// The value of a UUID given as a `uuid.UUID`, or as text in any form
/// `parse` takes (so every function accepts what people paste).
pub fn uuid_arg(value: &Bound<'_, PyAny>) -> PyResult<Uuid> {
    if value.cast::<PyString>().is_ok() || value.cast::<PyBytes>().is_ok() {
        return parse_value(value);
    }
    value_of(value)
}

/// `PyUnicode_AsUTF8AndSize`: a str's UTF-8 as the object keeps it (for
/// ASCII text, the characters themselves: no copy). In the stable ABI from
/// 3.10, exported by every CPython 3; looked up at import and checked on a
/// sample, else `None` and the text is copied through the stable ABI.
type Utf8Fn = unsafe extern "C" fn(*mut ffi::PyObject, *mut isize) -> *const u8;

fn utf8_fn(py: Python<'_>) -> Option<Utf8Fn> {
    static UTF8: PyOnceLock<Option<Utf8Fn>> = PyOnceLock::new();
    *UTF8.get_or_init(py, || {
        // SAFETY: looks the name up in the process.
        let f = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"PyUnicode_AsUTF8AndSize".as_ptr()) };
        if f.is_null() {
            return None;
        }
        // SAFETY: `const char *PyUnicode_AsUTF8AndSize(PyObject *, Py_ssize_t *)`.
        let f: Utf8Fn = unsafe { std::mem::transmute::<*mut std::ffi::c_void, Utf8Fn>(f) };
        let sample = PyString::new(py, "017f22e2-79B0-7cc3-98c4-dc0c0c07398f é");
        let mut len = 0isize;
        // SAFETY: a str, and a place for its length.
        let p = unsafe { f(sample.as_ptr(), &mut len) };
        let same = !p.is_null()
            && sample.to_cow().ok().is_some_and(|c| {
                // SAFETY: `len` bytes at `p`, kept by `sample`.
                c.as_bytes() == unsafe { std::slice::from_raw_parts(p, len as usize) }
            });
        same.then_some(f)
    })
}

/// The UTF-8 bytes of `s`, borrowed from the object where the interpreter
/// gives them, else copied.
fn utf8_of<'a>(s: &'a Bound<'_, PyString>) -> PyResult<std::borrow::Cow<'a, [u8]>> {
    if let Some(f) = utf8_fn(s.py()) {
        let mut len = 0isize;
        // SAFETY: a str; the bytes live as long as the object, which `s`
        // borrows for 'a.
        let p = unsafe { f(s.as_ptr(), &mut len) };
        if !p.is_null() {
            return Ok(std::borrow::Cow::Borrowed(unsafe {
                std::slice::from_raw_parts(p, len as usize)
            }));
        }
        // A str that cannot be UTF-8 (a lone surrogate): the error is the
        // stable call's to report.
        // SAFETY: clears the error just set.
        unsafe { ffi::PyErr_Clear() };
    }
    Ok(match s.to_cow()? {
        std::borrow::Cow::Borrowed(b) => std::borrow::Cow::Borrowed(b.as_bytes()),
        std::borrow::Cow::Owned(o) => std::borrow::Cow::Owned(o.into_bytes()),
    })
}

/// The UUID of a text (`str` or `bytes`) in any form.
fn parse_value(text: &Bound<'_, PyAny>) -> PyResult<Uuid> {
    let py = text.py();
    if let Ok(s) = text.cast::<PyString>() {
        let bytes = utf8_of(s)?;
        return uuidforge::parser::parse_detect_bytes(&bytes)
            .map(|(u, _)| u)
            .map_err(|e| errors::parse_error(py, &e, &String::from_utf8_lossy(&bytes)));
    }
    if let Ok(b) = text.cast::<PyBytes>() {
        let bytes = b.as_bytes();
        return uuidforge::parser::parse_detect_bytes(bytes)
            .map(|(u, _)| u)
            .map_err(|e| errors::parse_error(py, &e, &String::from_utf8_lossy(bytes)));
    }
    Err(PyTypeError::new_err(format!(
        "expected str or bytes, got {}",
        text.get_type().name()?
    )))
}

/// A `uuid.UUID` from text in any form people paste: canonical (any case),
/// 32 hex digits, braced, URN, Crockford Base32 (26 characters, ULID text)
/// and Base32 with its check symbol (27). Raises `ParseError` (a
/// `ValueError`) naming the form, the position and the character.
#[pyfunction]
pub fn parse<'py>(py: Python<'py>, text: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let value = parse_value(text)?;
    class(py)?.make(py, value.as_u128())
}

/// `parse` as the module has it: a one-argument (`METH_O`) entry, the
/// interpreter's direct call (see [`crate::entry`]), with [`parse`]'s
/// signature and documentation.
pub fn add_parse(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let doc = wrap_pyfunction!(parse, m)?
        .getattr("__doc__")?
        .extract::<String>()?;
    let doc: &'static std::ffi::CStr =
        Box::leak(std::ffi::CString::new(format!("parse(text)\n--\n\n{doc}"))?.into_boxed_c_str());
    let def = ffi::PyMethodDef {
        ml_name: c"parse".as_ptr(),
        ml_meth: ffi::PyMethodDefPointer {
            PyCFunction: parse_entry,
        },
        ml_flags: ffi::METH_O,
        ml_doc: doc.as_ptr(),
    };
    m.add("parse", crate::entry::function(py, def)?)
}

unsafe extern "C" fn parse_entry(
    _module: *mut ffi::PyObject,
    text: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: CPython calls this with the interpreter attached and one
    // borrowed argument.
    let py = unsafe { Python::assume_attached() };
    crate::entry::run(py, "parse", || {
        let text = unsafe { Bound::from_borrowed_ptr(py, text) };
        Ok(parse(py, &text)?.into_ptr())
    })
}

/// The text of `u` in `form`: "canonical", "simple", "braced", "urn",
/// "base32", "base32-check" (`upper` for upper-case hex).
#[pyfunction]
#[pyo3(signature = (u, form = "canonical", *, upper = false))]
pub fn format(py: Python<'_>, u: &Bound<'_, PyAny>, form: &str, upper: bool) -> PyResult<String> {
    let value = uuid_arg(u)?;
    let format = Format::from_name(form)
        .filter(|f| *f != Format::Binary)
        .ok_or_else(|| {
            errors::field(
                py,
                "form",
                form,
                "canonical, simple, braced, urn, base32 or base32-check",
            )
        })?;
    let mut out = Vec::with_capacity(48);
    format.write(&value, &mut out);
    let text = String::from_utf8(out).expect("every text form is ASCII");
    Ok(
        if upper && !matches!(format, Format::Base32 | Format::Base32Check) {
            text.to_ascii_uppercase().replace("URN:UUID:", "urn:uuid:")
        } else {
            text
        },
    )
}

/// Crockford Base32 of `u` (26 characters, the ULID alphabet; `check`
/// appends the mod-37 check symbol).
#[pyfunction]
#[pyo3(signature = (u, *, check = false))]
pub fn to_base32(u: &Bound<'_, PyAny>, check: bool) -> PyResult<String> {
    let value = uuid_arg(u)?;
    Ok(if check {
        String::from_utf8(uuidforge::base32::encode_with_check(&value).to_vec())
    } else {
        String::from_utf8(uuidforge::base32::encode(&value).as_bytes().to_vec())
    }
    .expect("Base32 is ASCII"))
}

/// The `uuid.UUID` of Crockford Base32 text (26 characters; 27 with a
/// check symbol, which is verified). Case-insensitive; `I`, `L` and `O`
/// read as `1`, `1`, `0` as Crockford specifies.
#[pyfunction]
pub fn from_base32<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyString>,
) -> PyResult<Bound<'py, PyAny>> {
    let bytes = utf8_of(text)?;
    let value = match bytes.len() {
        27 => uuidforge::base32::decode_with_check(&bytes),
        _ => uuidforge::base32::decode(&bytes),
    }
    .map_err(|e| errors::parse_error(py, &e, &String::from_utf8_lossy(&bytes)))?;
    to_py(py, value)
}

/// When `u` (v1, v6, v7, or an RFC 9562 B.1 v8) was made, as an aware UTC
/// `datetime` (to the microsecond; `inspect` gives the precision the
/// layout holds).
#[pyfunction]
pub fn timestamp<'py>(py: Python<'py>, u: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let value = uuid_arg(u)?;
    // A v7's time is its 48-bit millisecond field as RFC 9562 defines it
    // (inspect may read a far-future value as a 2021 draft UUIDv7; this
    // does not guess).
    if let Ok(t) = uuidforge::v7::timestamp(&value) {
        return to_datetime(py, t.unix_nanos)?.ok_or_else(|| beyond_datetime(py, &value));
    }
    let report = uuidforge::inspect::inspect(&value);
    let t = report.timestamp.or(report.v8_b1_timestamp).ok_or_else(|| {
        errors::field(
            py,
            "u",
            &value.to_string(),
            &format!(
                "a time-based UUID (version 1, 6 or 7), not version {}",
                report.version
            ),
        )
    })?;
    to_datetime(py, t.unix_nanos)?.ok_or_else(|| beyond_datetime(py, &value))
}

fn beyond_datetime(py: Python<'_>, value: &Uuid) -> PyErr {
    errors::field(
        py,
        "u",
        &value.to_string(),
        "a time before the year 10000, which datetime cannot pass (inspect(u).timestamp.unix_nanos holds any)",
    )
}

/// Everything `uuidforge inspect --json` says of `u`, as JSON text (the
/// package turns it into an `Inspection`).
#[pyfunction]
pub fn _inspect_json(u: &Bound<'_, PyAny>) -> PyResult<String> {
    let value = uuid_arg(u)?;
    serde_json::to_string(&uuidforge::inspect::inspect(&value))
        .map_err(|e| PyTypeError::new_err(e.to_string()))
}

fn ms_arg(py: Python<'_>, at: &Bound<'_, PyAny>, field: &str) -> PyResult<u64> {
    let ms = unix_ms(at, field)?;
    u64::try_from(ms)
        .map_err(|_| errors::field(py, field, &format!("{ms} ms"), "a time from 1970 on"))
}

/// The UUID bounds of the times `[start, end)`: `(lower, upper)` such that
/// every UUIDv7 made in that span, and no other, satisfies `lower <= u <
/// upper` (`upper` is None when `end` is past the last millisecond a v7
/// holds). For `WHERE id >= %s AND id < %s` on a v7 key.
#[pyfunction]
pub fn bounds<'py>(
    py: Python<'py>,
    start: &Bound<'py, PyAny>,
    end: &Bound<'py, PyAny>,
) -> PyResult<(Bound<'py, PyAny>, Option<Bound<'py, PyAny>>)> {
    let range = uuidforge::bounds::v7_range(ms_arg(py, start, "start")?, ms_arg(py, end, "end")?)
        .map_err(|e| errors::field_error(py, &e))?;
    Ok((
        to_py(py, range.start)?,
        range.end.map(|e| to_py(py, e)).transpose()?,
    ))
}

/// The partition key of a UUID, or of a time (an aware datetime or Unix
/// milliseconds): its left `bits` bits (1..=48), the same key
/// `uuidforge partitions` and SQL `uuid_partition_key` give.
#[pyfunction]
#[pyo3(signature = (value, bits))]
pub fn partition_key(py: Python<'_>, value: &Bound<'_, PyAny>, bits: u8) -> PyResult<u64> {
    let key = if class(py)?.is_instance(py, value) {
        uuidforge::bounds::partition_key(&value_of(value)?, bits)
    } else {
        uuidforge::bounds::partition_key_at(ms_arg(py, value, "value")?, bits)
    };
    key.map_err(|e| errors::field_error(py, &e))
}

/// The UUID range `[lower, upper)` partition `key` of `bits` bits covers
/// (`upper` None for the last key).
#[pyfunction]
pub fn partition_range(
    py: Python<'_>,
    key: u64,
    bits: u8,
) -> PyResult<(Bound<'_, PyAny>, Option<Bound<'_, PyAny>>)> {
    let range =
        uuidforge::bounds::partition_range(key, bits).map_err(|e| errors::field_error(py, &e))?;
    Ok((
        to_py(py, range.start)?,
        range.end.map(|e| to_py(py, e)).transpose()?,
    ))
}
