//! The package's exceptions: input errors are `ValueError`s that carry what
//! was wrong as attributes (the field or the position and character, the
//! value, what was expected), so a program can point at it; a generator
//! that cannot go on under its policy raises `GeneratorError`.

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use uuidforge::error::ParseErrorKind;
use uuidforge::generator::GenError;

create_exception!(
    uuidforge,
    ParseError,
    PyValueError,
    "A text that is not a UUID in the form asked for. Attributes: `form` (what was being read), \
     `text`, `position` and `character` (the first wrong character, or None), `expected`."
);
create_exception!(
    uuidforge,
    FieldError,
    PyValueError,
    "A value out of its field's range. Attributes: `field`, `value`, `expected`."
);
create_exception!(
    uuidforge,
    GeneratorError,
    PyRuntimeError,
    "The generator cannot hand out a value under its policy (counter overflow with \
     overflow='error', clock moved back with rollback='error', no clock)."
);

fn with_attributes(err: PyErr, py: Python<'_>, attributes: &[(&str, Py<PyAny>)]) -> PyErr {
    let value = err.value(py);
    for (name, v) in attributes {
        // An attribute that cannot be set leaves the message, which says
        // the same.
        let _ = value.setattr(*name, v.bind(py));
    }
    err
}

/// The Python error of a parse error of `text`.
pub fn parse_error(py: Python<'_>, e: &uuidforge::ParseError, text: &str) -> PyErr {
    let (position, character, expected) = match &e.kind {
        ParseErrorKind::InvalidCharacter {
            position,
            found,
            expected,
        } => (
            Some(*position),
            Some(found.to_string()),
            expected.to_string(),
        ),
        ParseErrorKind::Overflow { found } => (
            Some(0),
            Some(found.to_string()),
            "a first character from 0 to 7".to_string(),
        ),
        ParseErrorKind::InvalidLength { expected, .. } => (None, None, expected.to_string()),
        ParseErrorKind::CheckSymbolMismatch { expected, .. } => {
            (None, None, format!("check symbol {expected}"))
        }
        ParseErrorKind::ChecksumMismatch { expected, .. } => {
            (None, None, format!("checksum {expected:#06x}"))
        }
        ParseErrorKind::UnknownStructure { .. } => {
            (None, None, "a known segment structure".to_string())
        }
    };
    let attributes = [
        (
            "form",
            e.input
                .describe()
                .into_pyobject(py)
                .map(|v| v.into_any().unbind()),
        ),
        (
            "text",
            text.into_pyobject(py).map(|v| v.into_any().unbind()),
        ),
        (
            "position",
            position.into_pyobject(py).map(|v| v.into_any().unbind()),
        ),
        (
            "character",
            character.into_pyobject(py).map(|v| v.into_any().unbind()),
        ),
        (
            "expected",
            expected.into_pyobject(py).map(|v| v.into_any().unbind()),
        ),
    ];
    let attributes: Vec<(&str, Py<PyAny>)> = attributes
        .into_iter()
        .filter_map(|(n, v)| v.ok().map(|v| (n, v)))
        .collect();
    with_attributes(ParseError::new_err(e.to_string()), py, &attributes)
}

/// The Python error of a field error.
pub fn field_error(py: Python<'_>, e: &uuidforge::FieldError) -> PyErr {
    field(py, e.field, &e.value, &e.expected)
}

/// A [`FieldError`] naming `field`, its `value` and what was `expected`.
pub fn field(py: Python<'_>, field: &str, value: &str, expected: &str) -> PyErr {
    let attributes: Vec<(&str, Py<PyAny>)> =
        [("field", field), ("value", value), ("expected", expected)]
            .into_iter()
            .filter_map(|(n, v)| v.into_pyobject(py).ok().map(|v| (n, v.into_any().unbind())))
            .collect();
    with_attributes(
        FieldError::new_err(format!("invalid {field}: {value}, expected {expected}")),
        py,
        &attributes,
    )
}

/// The Python error of a generator error.
pub fn generator_error(py: Python<'_>, e: &GenError) -> PyErr {
    match e {
        GenError::Config(f) => field_error(py, f),
        other => GeneratorError::new_err(other.to_string()),
    }
}
