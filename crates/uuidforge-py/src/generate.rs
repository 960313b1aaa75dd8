//! Module-level generation: `uuid7()` and its batch, keyed and host-wide
//! forms, and the other versions. Every value is a `uuid.UUID`.

use crate::entry;
use crate::errors;
use crate::host;
use crate::pyuuid::{class, to_py};
use crate::time::unix_ms;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyList, PyString};
use std::cell::RefCell;
use uuid::Uuid;
use uuidforge::batch::{keyed_v7, BatchSource, BatchSpec};
use uuidforge::generator::{global, GeneratorConfig, V7Generator};

/// The shortest secret `uuid7_from` takes, as SQL's `uuidv7_from(at, key,
/// secret)` and `uuidforge gen --secret-file` insist.
const MIN_SECRET: usize = 16;

thread_local! {
    /// For `uuid7(at=...)`: a value for an explicit time reads and changes
    /// no generator state (it is not ordered with the live sequence).
    static BACKFILL: RefCell<Option<V7Generator>> = const { RefCell::new(None) };
}

/// `uuid7` as the module has it: a function whose call without arguments
/// (nearly every call) goes straight to the generator, and whose other
/// calls go to [`uuid7_with`], where PyO3 reads the arguments. PyO3's own
/// entry costs about a tenth of a call without arguments (its argument
/// reader and bookkeeping), which this leaves out; on CPython 3.10+ the
/// entry is a fast call (see [`crate::entry`]).
pub fn add_uuid7(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let full = wrap_pyfunction!(uuid7_with, m)?;
    FULL.set(py, full.into_any().unbind())
        .map_err(|_| pyo3::exceptions::PyRuntimeError::new_err("uuid7 set up twice"))?;
    let def = if entry::fastcall_in_stable_abi(py) {
        entry::fastcall_def(c"uuid7", UUID7_DOC, uuid7_fast)
    } else {
        ffi::PyMethodDef {
            ml_name: c"uuid7".as_ptr(),
            ml_meth: ffi::PyMethodDefPointer {
                PyCFunctionWithKeywords: uuid7_entry,
            },
            ml_flags: ffi::METH_VARARGS | ffi::METH_KEYWORDS,
            ml_doc: UUID7_DOC.as_ptr(),
        }
    };
    m.add("uuid7", entry::function(py, def)?)
}

static FULL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

const UUID7_DOC: &std::ffi::CStr = c"uuid7(*, at=None, host_wide=None)\n--\n\nA UUIDv7 (uuid.UUID): from the process-wide generator, strictly increasing across every thread of the process in the order values are handed out; with host_wide (True, or a cell path), across every process of the host using that cell (`uuidforge gen --host-wide` included); with at (an aware datetime or Unix milliseconds), a value of that instant with a fresh random counter (a backfill, not in the live sequence).";

/// The next value of the process-wide generator as a `uuid.UUID`.
fn next_uuid7(py: Python<'_>) -> PyResult<*mut ffi::PyObject> {
    Ok(to_py(py, global().generate_or_continue())?.into_ptr())
}

/// `uuid7` on CPython 3.9 (arguments as a tuple and a dict).
unsafe extern "C" fn uuid7_entry(
    _module: *mut ffi::PyObject,
    args: *mut ffi::PyObject,
    kwargs: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: CPython calls this with the interpreter attached.
    let py = unsafe { Python::assume_attached() };
    entry::run(py, "uuid7", || {
        // SAFETY: `args` is the call's tuple, `kwargs` its dict or NULL.
        if kwargs.is_null() && unsafe { ffi::PyTuple_Size(args) } == 0 {
            return next_uuid7(py);
        }
        let full = FULL.get(py).expect("set at import");
        // SAFETY: the same arguments, to the function PyO3 made.
        let result = unsafe { ffi::PyObject_Call(full.as_ptr(), args, kwargs) };
        if result.is_null() {
            return Err(PyErr::fetch(py));
        }
        Ok(result)
    })
}

/// `uuid7` on CPython 3.10+ (a fast call).
unsafe extern "C" fn uuid7_fast(
    _module: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: CPython calls this with the interpreter attached.
    let py = unsafe { Python::assume_attached() };
    entry::run(py, "uuid7", || {
        if nargs == 0 && kwnames.is_null() {
            return next_uuid7(py);
        }
        let full = FULL.get(py).expect("set at import").bind(py);
        // SAFETY: the arguments as CPython passed them.
        unsafe { entry::call_with(py, full, args, nargs, kwnames) }
    })
}

/// A UUIDv7: from the process-wide generator, strictly increasing across
/// every thread of the process in the order values are handed out; with
/// `host_wide`, across every process of the host using the same cell
/// (`True`: the default cell `/dev/shm/uuidforge-UID.cell`, shared with
/// `uuidforge gen --host-wide`; or a path); with `at` (an aware datetime or
/// Unix milliseconds), a value of that instant with a fresh random counter
/// (a backfill: it neither moves nor is ordered with the live sequence).
#[pyfunction(name = "uuid7")]
#[pyo3(signature = (*, at = None, host_wide = None))]
pub fn uuid7_with<'py>(
    py: Python<'py>,
    at: Option<&Bound<'py, PyAny>>,
    host_wide: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let value = match (at, host_wide) {
        (None, None) => global().generate_or_continue(),
        (Some(_), Some(h)) if host::wanted(h)? => return Err(errors::field(
            py,
            "host_wide",
            "True",
            "no host-wide order with at= (a value of an explicit time is not in the live sequence)",
        )),
        (Some(at), _) => at_time(py, unix_ms(at, "at")?)?,
        (None, Some(h)) => match host::cell(py, h)? {
            Some(cell) => cell.generate(py)?,
            None => global().generate_or_continue(),
        },
    };
    to_py(py, value)
}

fn at_time(py: Python<'_>, ms: i64) -> PyResult<Uuid> {
    let ms = u64::try_from(ms)
        .ok()
        .filter(|ms| *ms <= uuidforge::v7::MAX_UNIX_MS)
        .ok_or_else(|| {
            errors::field(
                py,
                "at",
                &format!("{ms} ms"),
                "a time from 1970 to 10889 AD",
            )
        })?;
    BACKFILL.with(|g| {
        let mut g = g.borrow_mut();
        let g = match &mut *g {
            Some(g) => g,
            empty => empty.insert(
                V7Generator::new(GeneratorConfig::default())
                    .map_err(|e| errors::generator_error(py, &e))?,
            ),
        };
        g.generate_at(ms)
            .map_err(|e| errors::generator_error(py, &e))
    })
}

/// The one UUIDv7 of a time and a key: the same value as SQL
/// `uuidv7_from(at, key)` (or `uuidv7_from(at, key, secret)`) and
/// `uuidforge gen --at AT --key KEY [--secret-file F]`, on every run and
/// every machine. `key` is text (its UTF-8 bytes) or bytes; `secret`, at
/// least 16 bytes, makes the values unguessable from the key.
#[pyfunction]
#[pyo3(signature = (at, key, *, secret = None))]
pub fn uuid7_from<'py>(
    py: Python<'py>,
    at: &Bound<'py, PyAny>,
    key: &Bound<'py, PyAny>,
    secret: Option<&Bound<'py, PyBytes>>,
) -> PyResult<Bound<'py, PyAny>> {
    let ms = unix_ms(at, "at")?;
    let key = bytes_of(key, "key")?;
    let value = match secret {
        None => keyed_v7(Some(ms), &key).map_err(|e| errors::field_error(py, &e))?,
        Some(s) => {
            let s = s.as_bytes();
            if s.len() < MIN_SECRET {
                return Err(errors::field(
                    py,
                    "secret",
                    &format!("{} bytes", s.len()),
                    "at least 16 bytes (32 random bytes are best)",
                ));
            }
            // The time checked as the keyless form checks it.
            keyed_v7(Some(ms), b"").map_err(|e| errors::field_error(py, &e))?;
            uuidforge::generator::v7_from(ms as u64, &key, s)
                .map_err(|e| errors::field_error(py, &e))?
        }
    };
    to_py(py, value)
}

/// The bytes of a `str` (UTF-8) or `bytes` argument named `field`.
pub fn bytes_of(value: &Bound<'_, PyAny>, field: &str) -> PyResult<Vec<u8>> {
    if let Ok(s) = value.cast::<PyString>() {
        return Ok(s.to_cow()?.as_bytes().to_vec());
    }
    if let Ok(b) = value.cast::<PyBytes>() {
        return Ok(b.as_bytes().to_vec());
    }
    Err(pyo3::exceptions::PyTypeError::new_err(format!(
        "{field}: expected str or bytes, got {}",
        value.get_type().name()?
    )))
}

/// `n` UUIDv7 in a list, strictly increasing: from the process-wide
/// generator of `profile` (one order with `uuid7()` and every other batch
/// of the process), or with `at` the values of that instant, or with
/// `host_wide` through the host's cell. The values are made with the
/// interpreter released; only the `uuid.UUID` objects need it.
#[pyfunction]
#[pyo3(signature = (n, *, at = None, profile = "default", host_wide = None))]
pub fn uuid7_batch<'py>(
    py: Python<'py>,
    n: usize,
    at: Option<&Bound<'py, PyAny>>,
    profile: &str,
    host_wide: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyList>> {
    let mut values = vec![Uuid::nil(); n];
    match host_wide {
        Some(h) if host::wanted(h)? => {
            if at.is_some() || profile != "default" {
                return Err(errors::field(
                    py,
                    "host_wide",
                    "True",
                    "the default profile and no at= (the host's cell hands out live values)",
                ));
            }
            let cell = host::cell(py, h)?.expect("wanted");
            cell.fill(py, &mut values)?;
        }
        _ => {
            let config = GeneratorConfig::profile(profile).ok_or_else(|| {
                errors::field(
                    py,
                    "profile",
                    profile,
                    &format!("one of {}", uuidforge::generator::PROFILES.join(", ")),
                )
            })?;
            let at = at.map(|a| unix_ms(a, "at")).transpose()?;
            let mut source = BatchSpec::new(7, Some(config), None, at)
                .and_then(|s| s.process_wide_source())
                .map_err(|e| errors::field_error(py, &e))?;
            py.detach(|| source.fill(&mut values))
                .map_err(|e| errors::generator_error(py, &e))?;
        }
    }
    list_of(py, &values)
}

/// A list of `uuid.UUID`s.
pub fn list_of<'py>(py: Python<'py>, values: &[Uuid]) -> PyResult<Bound<'py, PyList>> {
    let class = class(py)?;
    let len = isize::try_from(values.len())
        .map_err(|_| pyo3::exceptions::PyOverflowError::new_err("too many values"))?;
    // SAFETY: a new list of `len` empty places, each filled once below
    // (PyList_SetItem takes the reference) before the list is used.
    let list = unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyList_New(len))? };
    for (i, v) in values.iter().enumerate() {
        let item = class.make_for_list(py, v.as_u128())?;
        // SAFETY: `i` < `len`; the place is empty.
        if unsafe { ffi::PyList_SetItem(list.as_ptr(), i as isize, item.into_ptr()) } != 0 {
            return Err(PyErr::fetch(py));
        }
    }
    Ok(list.cast_into::<PyList>()?)
}

thread_local! {
    static SOURCES: RefCell<Vec<(u8, BatchSource)>> = const { RefCell::new(Vec::new()) };
}

/// One value of version `version` (1, 4, 6 or 8) from this thread's
/// source of it (a CSPRNG reseeded after fork).
fn one_of(py: Python<'_>, version: u8) -> PyResult<Bound<'_, PyAny>> {
    let value = SOURCES.with(|s| -> PyResult<Uuid> {
        let mut sources = s.borrow_mut();
        let index = match sources.iter().position(|(v, _)| *v == version) {
            Some(i) => i,
            None => {
                let source = BatchSpec::new(version, None, None, None)
                    .and_then(|s| s.owned_source())
                    .map_err(|e| errors::field_error(py, &e))?;
                sources.push((version, source));
                sources.len() - 1
            }
        };
        let mut out = [Uuid::nil()];
        sources[index]
            .1
            .fill(&mut out)
            .map_err(|e| errors::generator_error(py, &e))?;
        Ok(out[0])
    })?;
    to_py(py, value)
}

/// A UUIDv4: 122 bits from a CSPRNG (ChaCha8 seeded by the operating
/// system, reseeded after fork).
#[pyfunction]
pub fn uuid4(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    one_of(py, 4)
}

/// A UUIDv1 of now with a random node (multicast bit set, RFC 9562 §6.10):
/// no MAC address leaves the machine.
#[pyfunction]
pub fn uuid1(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    one_of(py, 1)
}

/// A UUIDv6 of now (RFC 9562 §5.6): v1's time, reordered to sort.
#[pyfunction]
pub fn uuid6(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    one_of(py, 6)
}

/// A name-based UUIDv3 (MD5), as `uuid.uuid3`: `namespace` a `uuid.UUID`
/// or one of "dns", "url", "oid", "x500"; `name` text or bytes.
#[pyfunction]
pub fn uuid3<'py>(
    py: Python<'py>,
    namespace: &Bound<'py, PyAny>,
    name: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let ns = namespace_of(namespace)?;
    to_py(py, Uuid::new_v3(&ns, &bytes_of(name, "name")?))
}

/// A name-based UUIDv5 (SHA-1), as `uuid.uuid5`.
#[pyfunction]
pub fn uuid5<'py>(
    py: Python<'py>,
    namespace: &Bound<'py, PyAny>,
    name: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let ns = namespace_of(namespace)?;
    to_py(py, Uuid::new_v5(&ns, &bytes_of(name, "name")?))
}

/// A UUIDv8: with `namespace` and `name`, the name-based form of RFC 9562
/// Appendix B.2 (SHA-256); with `custom` (16 bytes), those bytes with the
/// version and variant set (RFC 9562 §5.8); with neither, the time-based
/// layout of the 2021 draft (60-bit nanosecond time).
#[pyfunction]
#[pyo3(signature = (*, namespace = None, name = None, custom = None))]
pub fn uuid8<'py>(
    py: Python<'py>,
    namespace: Option<&Bound<'py, PyAny>>,
    name: Option<&Bound<'py, PyAny>>,
    custom: Option<&Bound<'py, PyBytes>>,
) -> PyResult<Bound<'py, PyAny>> {
    match (namespace, name, custom) {
        (None, None, None) => one_of(py, 8),
        (Some(ns), Some(name), None) => to_py(
            py,
            uuidforge::v8::sha256_name(&namespace_of(ns)?, &bytes_of(name, "name")?),
        ),
        (None, None, Some(c)) => {
            let bytes: [u8; 16] = c.as_bytes().try_into().map_err(|_| {
                errors::field(
                    py,
                    "custom",
                    &format!("{} bytes", c.as_bytes().len()),
                    "16 bytes",
                )
            })?;
            to_py(py, uuid::Builder::from_custom_bytes(bytes).into_uuid())
        }
        _ => Err(errors::field(
            py,
            "uuid8",
            "those arguments",
            "namespace and name together, or custom alone, or nothing",
        )),
    }
}

/// A namespace: a `uuid.UUID`, or the name of one of RFC 9562's.
fn namespace_of(value: &Bound<'_, PyAny>) -> PyResult<Uuid> {
    let py = value.py();
    if let Ok(s) = value.cast::<PyString>() {
        return match &*s.to_cow()? {
            "dns" => Ok(Uuid::NAMESPACE_DNS),
            "url" => Ok(Uuid::NAMESPACE_URL),
            "oid" => Ok(Uuid::NAMESPACE_OID),
            "x500" => Ok(Uuid::NAMESPACE_X500),
            other => Err(errors::field(
                py,
                "namespace",
                other,
                "a uuid.UUID or one of dns, url, oid, x500",
            )),
        };
    }
    crate::pyuuid::value_of(value)
}
