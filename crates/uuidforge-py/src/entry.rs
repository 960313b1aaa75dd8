//! Hand-made entries for the calls made most (`uuid7()`, `parse(text)`):
//! CPython calls a `METH_VARARGS | METH_KEYWORDS` function — what PyO3
//! makes for the stable ABI of 3.9 — through a tuple built per call and its
//! generic argument reader, a third of a `uuid7()`. These entries take the
//! interpreter's direct calls instead: `METH_O` (one argument; stable ABI
//! everywhere) and, on CPython 3.10+ where the stable ABI has it,
//! `METH_FASTCALL | METH_KEYWORDS` (the arguments as an array). Calls with
//! other arguments go on to the function PyO3 made, which reads and checks
//! them.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};

/// `METH_FASTCALL` (CPython's value since 3.7; in the stable ABI from 3.10).
const METH_FASTCALL: std::os::raw::c_int = 0x0080;

/// A fast-call function with keywords: the positional arguments, their
/// count, then the keyword values after them named by `kwnames`.
pub type FastWithKeywords = unsafe extern "C" fn(
    *mut ffi::PyObject,
    *const *mut ffi::PyObject,
    ffi::Py_ssize_t,
    *mut ffi::PyObject,
) -> *mut ffi::PyObject;

/// Whether the running interpreter's stable ABI has `METH_FASTCALL` (3.10+).
pub fn fastcall_in_stable_abi(py: Python<'_>) -> bool {
    py.version_info() >= (3, 10)
}

/// The flags and pointer of a `METH_FASTCALL | METH_KEYWORDS` entry.
pub fn fastcall_def(
    name: &'static std::ffi::CStr,
    doc: &'static std::ffi::CStr,
    fast: FastWithKeywords,
) -> ffi::PyMethodDef {
    ffi::PyMethodDef {
        ml_name: name.as_ptr(),
        ml_meth: ffi::PyMethodDefPointer {
            // SAFETY: CPython calls the pointer with the signature its flags
            // name (METH_FASTCALL | METH_KEYWORDS: `fast`'s).
            PyCFunction: unsafe { std::mem::transmute::<FastWithKeywords, ffi::PyCFunction>(fast) },
        },
        ml_flags: METH_FASTCALL | ffi::METH_KEYWORDS,
        ml_doc: doc.as_ptr(),
    }
}

/// A module function of a method definition that lives as long as the
/// process (leaked once at import).
pub fn function<'py>(py: Python<'py>, def: ffi::PyMethodDef) -> PyResult<Bound<'py, PyAny>> {
    let def: &'static mut ffi::PyMethodDef = Box::leak(Box::new(def));
    let module_name = PyString::new(py, "uuidforge._native");
    // SAFETY: `def` lives as long as the process; bound to no object.
    unsafe {
        Bound::from_owned_ptr_or_err(
            py,
            ffi::PyCFunction_NewEx(def, std::ptr::null_mut(), module_name.as_ptr()),
        )
    }
}

/// Runs `body` as a C entry does: a panic becomes a `RuntimeError` naming
/// `what`, an error is restored and NULL returned.
pub fn run(
    py: Python<'_>,
    what: &str,
    body: impl FnOnce() -> PyResult<*mut ffi::PyObject> + std::panic::UnwindSafe,
) -> *mut ffi::PyObject {
    match std::panic::catch_unwind(body) {
        Ok(Ok(obj)) => obj,
        Ok(Err(e)) => {
            e.restore(py);
            std::ptr::null_mut()
        }
        Err(_) => {
            pyo3::exceptions::PyRuntimeError::new_err(format!("uuidforge: {what} panicked"))
                .restore(py);
            std::ptr::null_mut()
        }
    }
}

/// Calls `full` with a fast call's arguments, as a tuple and a dict.
///
/// # Safety
/// `args` holds `nargs` positional arguments and then one value per name
/// of `kwnames` (a tuple, or NULL), as CPython passes them.
pub unsafe fn call_with(
    py: Python<'_>,
    full: &Bound<'_, PyAny>,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> PyResult<*mut ffi::PyObject> {
    let borrowed = |i: isize| unsafe { Bound::from_borrowed_ptr(py, *args.offset(i)) };
    let positional = PyTuple::new(py, (0..nargs).map(borrowed))?;
    let keywords = if kwnames.is_null() {
        None
    } else {
        let names = unsafe { Bound::from_borrowed_ptr(py, kwnames) }.cast_into::<PyTuple>()?;
        let dict = PyDict::new(py);
        for (i, name) in names.iter().enumerate() {
            dict.set_item(name, borrowed(nargs + i as isize))?;
        }
        Some(dict)
    };
    Ok(full.call(positional, keywords.as_ref())?.into_ptr())
}
