//! # uuidforge for Python
//!
//! The module `uuidforge._native`, which the Python package `uuidforge`
//! (in `python/uuidforge`) re-exports: the library's generators, codecs
//! and readings with every UUID as the standard library's `uuid.UUID`.
//! The library itself knows nothing of Python; this crate only converts.
//!
//! Order: `uuid7()` is the library's process-wide generator — one 128-bit
//! compare-and-swap per value, strictly increasing across threads in the
//! order values are handed out, no lock — and its random source is a
//! ChaCha8 CSPRNG that reseeds in a child after `fork()` (a
//! `pthread_atfork` handler), so nothing is for the user to call after
//! `os.fork()` or in `multiprocessing` workers. `host_wide=` orders values
//! across processes through the shared cell of `uuidforge-host`.

mod entry;
mod errors;
mod generate;
mod generator;
mod host;
mod ints;
mod keys;
mod pyuuid;
mod read;
mod time;
mod uuid192;

use pyo3::prelude::*;

/// The native part of the `uuidforge` package.
#[pymodule(gil_used = false)]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    // Read uuid.UUID now: a module that cannot make one fails at import.
    pyuuid::class(py)?;
    generate::add_uuid7(m)?;
    m.add_function(wrap_pyfunction!(generate::uuid7_batch, m)?)?;
    m.add_function(wrap_pyfunction!(generate::uuid7_from, m)?)?;
    m.add_function(wrap_pyfunction!(generate::uuid1, m)?)?;
    m.add_function(wrap_pyfunction!(generate::uuid3, m)?)?;
    m.add_function(wrap_pyfunction!(generate::uuid4, m)?)?;
    m.add_function(wrap_pyfunction!(generate::uuid5, m)?)?;
    m.add_function(wrap_pyfunction!(generate::uuid6, m)?)?;
    m.add_function(wrap_pyfunction!(generate::uuid8, m)?)?;
    read::add_parse(m)?;
    m.add_function(wrap_pyfunction!(read::format, m)?)?;
    m.add_function(wrap_pyfunction!(read::to_base32, m)?)?;
    m.add_function(wrap_pyfunction!(read::from_base32, m)?)?;
    m.add_function(wrap_pyfunction!(read::timestamp, m)?)?;
    m.add_function(wrap_pyfunction!(read::bounds, m)?)?;
    m.add_function(wrap_pyfunction!(read::partition_key, m)?)?;
    m.add_function(wrap_pyfunction!(read::partition_range, m)?)?;
    m.add_function(wrap_pyfunction!(read::_inspect_json, m)?)?;
    m.add_function(wrap_pyfunction!(pyuuid::_construction, m)?)?;
    m.add_function(wrap_pyfunction!(pyuuid::_through_descriptors, m)?)?;
    m.add_class::<generator::Generator>()?;
    m.add_class::<keys::Hider>()?;
    m.add_class::<uuid192::PyUuid192>()?;
    m.add("ParseError", py.get_type::<errors::ParseError>())?;
    m.add("FieldError", py.get_type::<errors::FieldError>())?;
    m.add("GeneratorError", py.get_type::<errors::GeneratorError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
