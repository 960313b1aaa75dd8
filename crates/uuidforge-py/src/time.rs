//! Times as Python gives and takes them: an aware `datetime`, or Unix
//! milliseconds as an `int`. Arithmetic on `datetime` and `timedelta` is
//! exact (no float), so a millisecond never rounds to its neighbour.

use crate::errors;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyInt};

struct Datetime {
    class: Py<PyAny>,
    epoch: Py<PyAny>,
    one_ms: Py<PyAny>,
    timedelta: Py<PyAny>,
}

fn datetime(py: Python<'_>) -> PyResult<&Datetime> {
    static DATETIME: PyOnceLock<Datetime> = PyOnceLock::new();
    DATETIME.get_or_try_init(py, || {
        let m = py.import("datetime")?;
        let class = m.getattr("datetime")?;
        let utc = m.getattr("timezone")?.getattr("utc")?;
        let timedelta = m.getattr("timedelta")?;
        let epoch = class.call1((1970, 1, 1, 0, 0, 0, 0, utc))?;
        let one_ms = timedelta.call1((0, 0, 0, 1))?;
        Ok::<_, PyErr>(Datetime {
            class: class.unbind(),
            epoch: epoch.unbind(),
            one_ms: one_ms.unbind(),
            timedelta: timedelta.unbind(),
        })
    })
}

/// What `field` accepts.
const EXPECTED: &str = "an aware datetime.datetime (with tzinfo) or Unix milliseconds (int)";

/// The Unix millisecond of `at` (an aware `datetime` or an `int` of
/// milliseconds), floored; errors name `field`.
pub fn unix_ms(at: &Bound<'_, PyAny>, field: &str) -> PyResult<i64> {
    let py = at.py();
    if at.is_instance_of::<PyInt>() && !at.is_instance_of::<PyBool>() {
        return match at.extract::<i64>() {
            Ok(ms) => Ok(ms),
            Err(_) => Err(errors::field(py, field, &at.repr()?.to_cow()?, EXPECTED)),
        };
    }
    let d = datetime(py)?;
    if at.is_instance(d.class.bind(py))? {
        if at.call_method0("utcoffset")?.is_none() {
            return Err(errors::field(
                py,
                field,
                &at.repr()?.to_cow()?,
                "an aware datetime (a naive one has no one instant: give tzinfo, e.g. datetime.timezone.utc)",
            ));
        }
        let since = at.sub(d.epoch.bind(py))?;
        return since.floor_div(d.one_ms.bind(py))?.extract::<i64>();
    }
    Err(errors::field(py, field, &at.repr()?.to_cow()?, EXPECTED))
}

/// The first instant `datetime` cannot hold (10000-01-01T00:00:00Z), in
/// Unix nanoseconds; a UUIDv7 reaches to the year 10889.
const DATETIME_END_NANOS: i128 = 253_402_300_800_000_000_000;

/// An aware UTC `datetime` of `unix_nanos` (microseconds kept: what
/// `datetime` holds; floored before 1970 too); `None` from the year 10000
/// on, which `datetime` cannot hold.
pub fn to_datetime(py: Python<'_>, unix_nanos: i128) -> PyResult<Option<Bound<'_, PyAny>>> {
    if unix_nanos >= DATETIME_END_NANOS {
        return Ok(None);
    }
    let d = datetime(py)?;
    let micros = unix_nanos.div_euclid(1000);
    let days = micros.div_euclid(86_400_000_000);
    let rest = micros.rem_euclid(86_400_000_000);
    let delta = d.timedelta.bind(py).call1((
        i64::try_from(days).unwrap_or(i64::MAX),
        0,
        i64::try_from(rest).unwrap_or(0),
    ))?;
    d.epoch.bind(py).add(delta).map(Some)
}
