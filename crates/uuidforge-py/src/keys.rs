//! `uuidforge.Hider`: reversible hiding of a UUIDv7's time (E10) with the
//! key file `uuidforge hide --new-key` makes, so Python and the command
//! line (and `serve --hide-key-file`) hide and reveal alike.

use crate::errors;
use crate::pyuuid::to_py;
use crate::read::uuid_arg;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::path::PathBuf;
use uuidforge::generator::TimestampHider;

/// Hides a UUIDv7 behind a UUIDv4-looking value and reveals it again: a
/// keyed permutation of the 122 payload bits, so the outside form shows no
/// time and maps back exactly.
#[pyclass(module = "uuidforge", frozen)]
pub struct Hider {
    inner: TimestampHider,
}

#[pymethods]
impl Hider {
    /// A hider from a key of at least 32 random bytes.
    #[new]
    fn new(py: Python<'_>, key: &Bound<'_, PyBytes>) -> PyResult<Hider> {
        let inner =
            TimestampHider::with_key(key.as_bytes()).map_err(|e| errors::field_error(py, &e))?;
        Ok(Hider { inner })
    }

    /// A hider from a key file: exactly 32 raw bytes, as `uuidforge hide
    /// --new-key FILE` writes them.
    #[staticmethod]
    fn from_key_file(py: Python<'_>, path: PathBuf) -> PyResult<Hider> {
        let bytes = std::fs::read(&path).map_err(|e| {
            errors::field(
                py,
                "key file",
                &path.display().to_string(),
                &format!("a readable key file ({e})"),
            )
        })?;
        let inner = TimestampHider::from_key_file(&bytes).map_err(|e| {
            errors::field(
                py,
                "key file",
                &format!("{} ({})", path.display(), e.value),
                &e.expected,
            )
        })?;
        Ok(Hider { inner })
    }

    /// The outside form (a UUIDv4) of a UUIDv7.
    fn hide<'py>(&self, py: Python<'py>, u: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let value = self
            .inner
            .hide(&uuid_arg(u)?)
            .map_err(|e| errors::field_error(py, &e))?;
        to_py(py, value)
    }

    /// The UUIDv7 behind an outside form.
    fn reveal<'py>(&self, py: Python<'py>, u: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let value = self
            .inner
            .reveal(&uuid_arg(u)?)
            .map_err(|e| errors::field_error(py, &e))?;
        to_py(py, value)
    }

    fn __repr__(&self) -> &'static str {
        // Never the key.
        "uuidforge.Hider(<key>)"
    }
}
