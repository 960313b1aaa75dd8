//! The standard library's `uuid.UUID`, made and read from Rust.
//!
//! Every value this module returns is exactly `uuid.UUID` (not a subclass),
//! so that psycopg, Django, SQLAlchemy and pydantic take it as it is. Its
//! Python constructor validates arguments and costs about a microsecond;
//! the object itself is two slots (`int`, `is_safe`). So a value is made the
//! way `uuid.UUID.__init__` ends: an instance allocated by the class's own
//! allocator, then its two slots set — through the slots' descriptors
//! (`PyObject_GenericSetAttr`, what `object.__setattr__` does), or, when
//! their places in the object were found and checked at import, written
//! there directly (what the descriptors do, without the name lookup). The
//! result is the same object either way; `construction()` says which is in
//! use and the tests compare both with `uuid.UUID(int=...)`.

use crate::ints::{int_of, u128_of};
use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyString, PyType};
use std::os::raw::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use uuid::Uuid;

/// What making a `uuid.UUID` needs, read once.
pub struct UuidClass {
    class: Py<PyType>,
    alloc: ffi::allocfunc,
    int_name: Py<PyString>,
    is_safe_name: Py<PyString>,
    unknown: Py<PyAny>,
    /// Byte offsets of the `int` and `is_safe` slots, when found and checked.
    slots: Option<(isize, isize)>,
}

static CLASS: PyOnceLock<UuidClass> = PyOnceLock::new();

/// Set to make values through the descriptors even where the slots are
/// known (the tests compare both ways).
static THROUGH_DESCRIPTORS: AtomicBool = AtomicBool::new(false);

/// `uuid.UUID` and what making one needs.
pub fn class(py: Python<'_>) -> PyResult<&UuidClass> {
    CLASS.get_or_try_init(py, || UuidClass::read(py))
}

impl UuidClass {
    fn read(py: Python<'_>) -> PyResult<UuidClass> {
        let module = py.import("uuid")?;
        let class = module.getattr("UUID")?.cast_into::<PyType>()?;
        let unknown = module.getattr("SafeUUID")?.getattr("unknown")?;
        // SAFETY: `uuid.UUID` is a class defined in Python (a heap type),
        // whose slots PyType_GetSlot reads on every version.
        let alloc = unsafe { ffi::PyType_GetSlot(class.as_type_ptr(), ffi::Py_tp_alloc) };
        if alloc.is_null() {
            return Err(PyTypeError::new_err("uuid.UUID has no allocator"));
        }
        // SAFETY: the Py_tp_alloc slot holds an allocfunc.
        let alloc: ffi::allocfunc =
            unsafe { std::mem::transmute::<*mut c_void, ffi::allocfunc>(alloc) };
        let mut made = UuidClass {
            class: class.clone().unbind(),
            alloc,
            int_name: PyString::intern(py, "int").unbind(),
            is_safe_name: PyString::intern(py, "is_safe").unbind(),
            unknown: unknown.unbind(),
            slots: None,
        };
        made.slots = made.find_slots(py)?;
        Ok(made)
    }

    /// The offsets of the two slots in an instance: an instance is given
    /// two marker objects through the descriptors, and its words are
    /// searched for them; then an instance made by writing there must read
    /// back, through Python, as `uuid.UUID(int=...)` does.
    fn find_slots(&self, py: Python<'_>) -> PyResult<Option<(isize, isize)>> {
        let size: isize = self.class.bind(py).getattr("__basicsize__")?.extract()?;
        let first = std::mem::size_of::<ffi::PyObject>() as isize;
        let word = std::mem::size_of::<*mut ffi::PyObject>() as isize;
        let a = PyBytes::new(py, b"int marker").into_any();
        let b = PyBytes::new(py, b"is_safe marker").into_any();
        let probe = self.allocate(py)?;
        self.set_through_descriptors(&probe, &a, &b)?;
        let mut int_at = None;
        let mut safe_at = None;
        let mut at = first;
        while at + word <= size {
            // SAFETY: reads a word inside the instance (below its basic
            // size), word-aligned as slots are.
            let p = unsafe {
                *(probe
                    .as_ptr()
                    .cast::<u8>()
                    .offset(at)
                    .cast::<*mut ffi::PyObject>())
            };
            if p == a.as_ptr() {
                int_at = Some(at);
            } else if p == b.as_ptr() {
                safe_at = Some(at);
            }
            at += word;
        }
        let (Some(i), Some(s)) = (int_at, safe_at) else {
            return Ok(None);
        };
        let checked = UuidClass {
            class: self.class.clone_ref(py),
            alloc: self.alloc,
            int_name: self.int_name.clone_ref(py),
            is_safe_name: self.is_safe_name.clone_ref(py),
            unknown: self.unknown.clone_ref(py),
            slots: Some((i, s)),
        };
        let value: u128 = 0x0190_8b4a_1c2d_7e3f_8a9b_0c1d_2e3f_4a5b;
        let made = checked.make(py, value)?;
        let standard = self
            .class
            .bind(py)
            .call((), Some(&[("int", value)].into_py_dict(py)?))?;
        let same = made.eq(&standard)?
            && made.str()?.to_cow()? == standard.str()?.to_cow()?
            && made.getattr("is_safe")?.is(&standard.getattr("is_safe")?)
            && made.hash()? == standard.hash()?
            && made.get_type().is(self.class.bind(py));
        Ok(same.then_some((i, s)))
    }

    fn allocate<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        // SAFETY: the class's own allocator, as object.__new__ calls it; the
        // new instance's slots are NULL until set below.
        unsafe {
            let obj = (self.alloc)(self.class.as_ptr().cast::<ffi::PyTypeObject>(), 0);
            Bound::from_owned_ptr_or_err(py, obj)
        }
    }

    /// [`UuidClass::make`] for a value going into a list of many. A
    /// uuid.UUID refers to an int and an enum member, never back to itself
    /// (no `__dict__`, and its `__setattr__` refuses): it cannot be part of
    /// a cycle, so the cycle collector need not scan it — as CPython leaves
    /// out tuples of atomic values. Made by the thousand and tracked, every
    /// 700 trigger a collection that walks the ones before (10 000 kept
    /// alive cost three times as much). A single value stays tracked, as
    /// the constructor leaves it: untracking costs about 4 ns a call.
    #[inline]
    pub fn make_for_list<'py>(&self, py: Python<'py>, value: u128) -> PyResult<Bound<'py, PyAny>> {
        let obj = self.make(py, value)?;
        // SAFETY: `obj` is a new instance of a GC type, tracked by its
        // allocator; untracking it is what its deallocator does first.
        unsafe { ffi::PyObject_GC_UnTrack(obj.as_ptr().cast()) };
        Ok(obj)
    }

    fn set_through_descriptors(
        &self,
        obj: &Bound<'_, PyAny>,
        int: &Bound<'_, PyAny>,
        is_safe: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let py = obj.py();
        for (name, value) in [(&self.int_name, int), (&self.is_safe_name, is_safe)] {
            // SAFETY: what object.__setattr__ does (uuid.UUID.__init__ sets
            // its slots this way, past its own __setattr__ that refuses).
            let rc = unsafe {
                ffi::PyObject_GenericSetAttr(obj.as_ptr(), name.as_ptr(), value.as_ptr())
            };
            if rc != 0 {
                return Err(PyErr::fetch(py));
            }
        }
        Ok(())
    }

    /// A `uuid.UUID` of the 128-bit value `value`.
    #[inline]
    pub fn make<'py>(&self, py: Python<'py>, value: u128) -> PyResult<Bound<'py, PyAny>> {
        let int = int_of(py, value)?;
        let obj = self.allocate(py)?;
        match self.slots {
            Some((i, s)) if !THROUGH_DESCRIPTORS.load(Ordering::Relaxed) => {
                // SAFETY: the offsets of the two object slots of this class,
                // found and checked at import; a new instance holds NULL
                // there, so each takes the reference without releasing one.
                unsafe {
                    let base = obj.as_ptr().cast::<u8>();
                    *base.offset(i).cast::<*mut ffi::PyObject>() = int.into_ptr();
                    *base.offset(s).cast::<*mut ffi::PyObject>() =
                        self.unknown.clone_ref(py).into_ptr();
                }
            }
            _ => self.set_through_descriptors(&obj, &int, self.unknown.bind(py))?,
        }
        Ok(obj)
    }

    /// Whether `obj` is exactly `uuid.UUID` (or a subclass).
    pub fn is_instance(&self, py: Python<'_>, obj: &Bound<'_, PyAny>) -> bool {
        obj.is_instance(self.class.bind(py)).unwrap_or(false)
    }
}

/// A `uuid.UUID` of `u`.
#[inline]
pub fn to_py(py: Python<'_>, u: Uuid) -> PyResult<Bound<'_, PyAny>> {
    class(py)?.make(py, u.as_u128())
}

/// The 128-bit value of a `uuid.UUID` (or anything with an `int` of 128
/// bits, as `uuid.UUID` subclasses have).
pub fn value_of(obj: &Bound<'_, PyAny>) -> PyResult<Uuid> {
    let py = obj.py();
    let class = class(py)?;
    if !class.is_instance(py, obj) {
        return Err(PyTypeError::new_err(format!(
            "expected a uuid.UUID, got {}",
            obj.get_type().name()?
        )));
    }
    if let Some((int_at, _)) = class.slots {
        if obj.get_type().is(class.class.bind(py)) {
            // SAFETY: an exact uuid.UUID, whose `int` slot is at the
            // offset found and checked at import; a borrowed reference the
            // object keeps (NULL only for an instance whose __init__ never
            // ran, read through Python below).
            let int = unsafe {
                *obj.as_ptr()
                    .cast::<u8>()
                    .offset(int_at)
                    .cast::<*mut ffi::PyObject>()
            };
            if !int.is_null() {
                // SAFETY: a live int the object holds while `obj` is borrowed.
                let int = unsafe { Bound::from_borrowed_ptr(py, int) };
                return Ok(Uuid::from_u128(u128_of(&int)?));
            }
        }
    }
    let int = obj.getattr(class.int_name.bind(py))?;
    Ok(Uuid::from_u128(u128_of(&int)?))
}

/// `"slots"` when values are made by writing their slots, `"descriptors"`
/// when through the slots' descriptors.
#[pyfunction]
pub fn _construction(py: Python<'_>) -> PyResult<&'static str> {
    Ok(
        if class(py)?.slots.is_some() && !THROUGH_DESCRIPTORS.load(Ordering::Relaxed) {
            "slots"
        } else {
            "descriptors"
        },
    )
}

/// Makes values through the descriptors (`True`) or, where possible, by
/// writing the slots (`False`): for the tests and the benchmark.
#[pyfunction]
pub fn _through_descriptors(on: bool) {
    THROUGH_DESCRIPTORS.store(on, Ordering::Relaxed);
}

use pyo3::types::IntoPyDict;
