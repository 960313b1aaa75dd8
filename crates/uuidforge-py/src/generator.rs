//! `uuidforge.Generator`: a UUIDv7 generator with the library's profiles,
//! settings and policies, and its telemetry. It may be shared by threads
//! (each value is one compare-and-swap, no lock).

use crate::errors;
use crate::generate::list_of;
use crate::host::{self, HostWide};
use crate::pyuuid::to_py;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use uuid::Uuid;
use uuidforge::generator::{global_profile, GeneratorConfig, SharedGenerator, PROFILES};

enum Source {
    /// A built-in profile as it stands: the process-wide generator of that
    /// profile, in one order with `uuid7()`.
    Process(&'static SharedGenerator),
    /// Settings of its own: a cell of its own.
    Own(Box<SharedGenerator>),
}

/// A UUIDv7 generator.
///
/// `Generator()` and `Generator("pg18")` (a built-in profile: "default",
/// "counter42", "pg18", "random") hand out values in one order with
/// `uuid7()` and every other built-in profile of the process. Keyword
/// settings change the profile (the fields of `uuidforge profile show`:
/// `counter_bits`, `guard_bits`, `fraction_bits`, `segment_bits`,
/// `increment`, `clock`, `shift_ms`, `spread`, `masking`, `overflow`
/// ("bump", "stall", "error"), `rollback` ({"policy": "keep"}, ...),
/// `randomness`); such a generator has an order of its own. `host_wide`
/// (`True` or a cell path) orders its values with every process of the
/// host.
#[pyclass(module = "uuidforge", frozen)]
pub struct Generator {
    source: Source,
    config: GeneratorConfig,
    host: Option<HostWide>,
}

impl Generator {
    fn generator(&self) -> &SharedGenerator {
        match &self.source {
            Source::Process(g) => g,
            Source::Own(g) => g,
        }
    }
}

/// `profile` with `settings` (a dict of profile fields) applied, checked
/// by the library (errors name the field).
fn config_of(
    py: Python<'_>,
    profile: &str,
    settings: Option<&Bound<'_, PyDict>>,
) -> PyResult<GeneratorConfig> {
    let base = GeneratorConfig::profile(profile).ok_or_else(|| {
        errors::field(
            py,
            "profile",
            profile,
            &format!("one of {}", PROFILES.join(", ")),
        )
    })?;
    let Some(settings) = settings.filter(|s| !s.is_empty()) else {
        return Ok(base);
    };
    let json = py.import("json")?;
    let given: String = json.call_method1("dumps", (settings,))?.extract()?;
    let given: serde_json::Value = serde_json::from_str(&given)
        .map_err(|e| errors::field(py, "settings", &given, &e.to_string()))?;
    let mut merged: serde_json::Value =
        serde_json::from_str(&base.to_json()).expect("a profile's JSON");
    if let (Some(m), Some(g)) = (merged.as_object_mut(), given.as_object()) {
        for (k, v) in g {
            m.insert(k.clone(), v.clone());
        }
    }
    GeneratorConfig::from_json(&merged.to_string()).map_err(|e| errors::field_error(py, &e))
}

#[pymethods]
impl Generator {
    #[new]
    #[pyo3(signature = (profile = "default", *, host_wide = None, **settings))]
    fn new(
        py: Python<'_>,
        profile: &str,
        host_wide: Option<&Bound<'_, PyAny>>,
        settings: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Generator> {
        let config = config_of(py, profile, settings)?;
        let source = match global_profile(profile) {
            Some(g) if GeneratorConfig::profile(profile).as_ref() == Some(&config) => {
                Source::Process(g)
            }
            _ => Source::Own(Box::new(
                SharedGenerator::new(config.clone())
                    .map_err(|e| errors::generator_error(py, &e))?,
            )),
        };
        let host = match host_wide {
            Some(h) => host::cell(py, h)?,
            None => None,
        };
        Ok(Generator {
            source,
            config,
            host,
        })
    }

    /// The next value.
    fn __call__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let value = match &self.host {
            Some(h) => h.generate_with(py, self.generator())?,
            None => self
                .generator()
                .generate()
                .map_err(|e| errors::generator_error(py, &e))?,
        };
        to_py(py, value)
    }

    /// The next `n` values, in a list (made with the interpreter released).
    fn batch<'py>(&self, py: Python<'py>, n: usize) -> PyResult<Bound<'py, PyList>> {
        let mut values = vec![Uuid::nil(); n];
        match &self.host {
            Some(h) => h.fill_with(py, self.generator(), &mut values)?,
            None => {
                let g = self.generator();
                py.detach(|| g.fill(&mut values))
                    .map_err(|e| errors::generator_error(py, &e))?;
            }
        }
        list_of(py, &values)
    }

    /// The settings, as `uuidforge profile show` prints them (a dict).
    #[getter]
    fn settings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        py.import("json")?
            .call_method1("loads", (self.config.to_json(),))
    }

    /// The bit layout, drawn.
    #[getter]
    fn diagram(&self) -> String {
        self.config.diagram()
    }

    /// Rare events so far (E4): counter overflows, clock rollbacks,
    /// resets, random source reseeds (this thread's), clock failures, how
    /// far the last timestamp ran ahead of the clock and the most it ever
    /// did (ms). For the process-wide generators, every profile's events.
    fn telemetry<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let t = match &self.source {
            Source::Process(g) => {
                let mut t = g.cell_telemetry();
                t.reseeds = g.telemetry().reseeds;
                t
            }
            Source::Own(g) => g.telemetry(),
        };
        let d = PyDict::new(py);
        d.set_item("overflows", t.overflows)?;
        d.set_item("rollbacks", t.rollbacks)?;
        d.set_item("resets", t.resets)?;
        d.set_item("reseeds", t.reseeds)?;
        d.set_item("clock_failures", t.clock_failures)?;
        d.set_item("ahead_ms", t.ahead_ms)?;
        d.set_item("max_ahead_ms", t.max_ahead_ms)?;
        Ok(d)
    }

    fn __repr__(&self) -> String {
        let order = match (&self.source, &self.host) {
            (_, Some(_)) => "host-wide",
            (Source::Process(_), None) => "process-wide",
            (Source::Own(_), None) => "its own order",
        };
        format!("uuidforge.Generator({:?}, {order})", self.config.name)
    }
}
