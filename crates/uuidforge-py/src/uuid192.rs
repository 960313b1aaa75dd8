//! `uuidforge.UUID192`: a UUID and a 64-bit segment saying what the key is
//! about (the article's UUID_192), ordered by UUID then segment, with a
//! checksum that catches a mistyped or spliced key.

use crate::errors;
use crate::pyuuid::to_py;
use crate::read::uuid_arg;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use uuidforge::uuid192::{SegmentFields, Uuid192};

/// A UUID_192 value. `UUID192(uuid, module=3, table=42, source=1,
/// operation="insert", message=0, shard=5, archived=False,
/// deleted=False)` (the general structure) or `UUID192(uuid, payload=N)`
/// (44 bits of the application's own); `UUID192.parse(text)` reads its
/// text (53 characters) or Base32 (39).
#[pyclass(module = "uuidforge", name = "UUID192", frozen, eq, ord, hash)]
#[derive(PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PyUuid192 {
    inner: Uuid192,
}

fn fields_of(py: Python<'_>, given: Option<&Bound<'_, PyDict>>) -> PyResult<SegmentFields> {
    let json = py.import("json")?;
    let dict = PyDict::new(py);
    if let Some(g) = given {
        dict.update(g.as_mapping())?;
    }
    if !dict.contains("structure")? {
        let raw = dict.contains("payload")?;
        dict.set_item("structure", if raw { "raw" } else { "general" })?;
    }
    if dict
        .get_item("structure")?
        .is_some_and(|s| s.eq("general").unwrap_or(false))
    {
        for (name, default) in [
            ("module", 0),
            ("table", 0),
            ("source", 0),
            ("message", 0),
            ("shard", 0),
        ] {
            if !dict.contains(name)? {
                dict.set_item(name, default)?;
            }
        }
        for name in ["archived", "deleted"] {
            if !dict.contains(name)? {
                dict.set_item(name, false)?;
            }
        }
        if !dict.contains("operation")? {
            dict.set_item("operation", "none")?;
        }
    }
    let text: String = json.call_method1("dumps", (dict,))?.extract()?;
    serde_json::from_str::<SegmentFields>(&text)
        .map_err(|e| errors::field(py, "fields", &text, &e.to_string()))
}

#[pymethods]
impl PyUuid192 {
    #[new]
    #[pyo3(signature = (uuid, **fields))]
    fn new(
        py: Python<'_>,
        uuid: &Bound<'_, PyAny>,
        fields: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let inner = Uuid192::new(uuid_arg(uuid)?, fields_of(py, fields)?)
            .map_err(|e| errors::field_error(py, &e))?;
        Ok(PyUuid192 { inner })
    }

    /// Reads UUID_192 text (`8-4-4-4-12-16`) or its Crockford Base32 (39
    /// characters), checking structure and checksum.
    #[staticmethod]
    fn parse(py: Python<'_>, text: &str) -> PyResult<Self> {
        let parsed = if text.len() == uuidforge::uuid192::BASE32_LEN {
            Uuid192::parse_base32(text)
        } else {
            Uuid192::parse(text)
        };
        parsed
            .map(|inner| PyUuid192 { inner })
            .map_err(|e| errors::parse_error(py, &e, text))
    }

    /// From the 24 bytes `bytes(value)` gives.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &Bound<'_, PyBytes>) -> PyResult<Self> {
        let bytes: [u8; 24] = data.as_bytes().try_into().map_err(|_| {
            errors::field(
                py,
                "data",
                &format!("{} bytes", data.as_bytes().len()),
                "24 bytes",
            )
        })?;
        Uuid192::from_bytes(bytes)
            .map(|inner| PyUuid192 { inner })
            .map_err(|e| errors::parse_error(py, &e, &format!("{bytes:02x?}")))
    }

    /// The UUID.
    #[getter]
    fn uuid<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, self.inner.uuid())
    }

    /// The 64-bit segment as stored (structure, fields, checksum).
    #[getter]
    fn segment(&self) -> u64 {
        self.inner.segment().0
    }

    /// The segment's fields, as a dict (`structure` "general" or "raw").
    #[getter]
    fn fields<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let fields = self
            .inner
            .fields()
            .map_err(|e| errors::parse_error(py, &e, &self.inner.to_string()))?;
        let text = serde_json::to_string(&fields).expect("fields serialize");
        py.import("json")?.call_method1("loads", (text,))
    }

    /// Crockford Base32 (39 characters).
    #[getter]
    fn base32(&self) -> String {
        self.inner.to_base32()
    }

    fn __bytes__<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.to_bytes())
    }

    fn __str__(&self) -> String {
        self.inner.to_string()
    }

    fn __repr__(&self) -> String {
        format!("UUID192('{}')", self.inner)
    }
}
