//! Host-wide order (E2): the generator's cell in a shared memory file that
//! every process of the host maps — the same file and format as
//! `uuidforge gen --host-wide` — so Python workers, the command line and
//! servers hand out one strictly increasing sequence. Each cell is mapped
//! once per process and kept for its life; a forked child inherits the
//! shared mapping, so it stays in the same order.

use crate::errors;
use pyo3::prelude::*;
use pyo3::types::PyBool;
use std::path::PathBuf;
use std::sync::Mutex;
use uuid::Uuid;
use uuidforge::generator::{global, SharedGenerator};
use uuidforge_host::HostCell;

/// A mapped cell.
pub struct HostWide {
    cell: &'static HostCell,
}

static CELLS: Mutex<Vec<(PathBuf, &'static HostCell)>> = Mutex::new(Vec::new());

/// Whether `host_wide` asks for host-wide order (`True` or a path).
pub fn wanted(host_wide: &Bound<'_, PyAny>) -> PyResult<bool> {
    if let Ok(b) = host_wide.cast::<PyBool>() {
        return Ok(b.is_true());
    }
    Ok(!host_wide.is_none())
}

/// The path `host_wide` names: the default cell for `True`, else the path
/// (`str` or `os.PathLike`).
fn path_of(host_wide: &Bound<'_, PyAny>) -> PyResult<Option<PathBuf>> {
    if !wanted(host_wide)? {
        return Ok(None);
    }
    if host_wide.cast::<PyBool>().is_ok() {
        return Ok(Some(uuidforge_host::default_path()));
    }
    Ok(Some(host_wide.extract::<PathBuf>()?))
}

/// The cell `host_wide` names, mapped (mode 0600 when it is created), or
/// `None` when `host_wide` is false.
pub fn cell(py: Python<'_>, host_wide: &Bound<'_, PyAny>) -> PyResult<Option<HostWide>> {
    let Some(path) = path_of(host_wide)? else {
        return Ok(None);
    };
    let mut cells = CELLS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, c)) = cells.iter().find(|(p, _)| *p == path) {
        return Ok(Some(HostWide { cell: c }));
    }
    let opened = HostCell::open(&path, 0o600).map_err(|e| {
        errors::field(
            py,
            "host_wide",
            &path.display().to_string(),
            &format!("a host-wide cell file: {}", e.message),
        )
    })?;
    let cell: &'static HostCell = Box::leak(Box::new(opened));
    cells.push((path, cell));
    Ok(Some(HostWide { cell }))
}

impl HostWide {
    /// The next value of the host, from `generator` (default: the default
    /// profile's).
    pub fn generate_with(&self, py: Python<'_>, generator: &SharedGenerator) -> PyResult<Uuid> {
        generator
            .generate_in(self.cell.cell())
            .map_err(|e| errors::generator_error(py, &e))
    }

    /// The next value of the host.
    pub fn generate(&self, py: Python<'_>) -> PyResult<Uuid> {
        self.generate_with(py, global())
    }

    /// Fills `out` with the host's next values, the interpreter released.
    pub fn fill(&self, py: Python<'_>, out: &mut [Uuid]) -> PyResult<()> {
        self.fill_with(py, global(), out)
    }

    /// Fills `out` with the host's next values from `generator`.
    pub fn fill_with(
        &self,
        py: Python<'_>,
        generator: &SharedGenerator,
        out: &mut [Uuid],
    ) -> PyResult<()> {
        let cell = self.cell.cell();
        py.detach(|| generator.fill_in(cell, out))
            .map_err(|e| errors::generator_error(py, &e))
    }
}
