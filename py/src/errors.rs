//! Errors: the core's `RingError` as the `shardring` exception a Python
//! caller expects (each carries `.code`, the C result name), and the
//! argument checks that raise `TypeError`, `OutOfRangeError` or
//! `InvalidUtf8Error` before anything reaches the core.
//!
//! The rule for arguments (`docs/bad-inputs.md`): a parameter left out takes
//! its default; anything passed must be a valid value. `None` is never a
//! number or an id, and a `bool` is never a number, although Python would
//! read `True` as 1 (`TypeError`). A number the parameter's type cannot hold
//! (a negative or too large int, an int beyond any float) is an
//! `OutOfRangeError`, a `RingError` and a `ValueError` whose code is
//! `ERR_OUT_OF_RANGE`, the code of the `RangeError` Node throws for it.

use std::borrow::Cow;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyFloat, PyInt, PyString, PyType};

use shardring::RingError;

/// The `shardring` exception class for a core error (`python/shardring/_errors.py`).
fn class_name(error: &RingError) -> &'static str {
    match error {
        RingError::EmptyId { .. }
        | RingError::DuplicateId { .. }
        | RingError::InvalidWeight { .. }
        | RingError::EmptyZone { .. }
        | RingError::InvalidAddress { .. } => "InvalidNodeError",
        RingError::HashOutOfRange { .. } => "HashOutOfRangeError",
        RingError::NoLoad { .. } => "NoLoadError",
        RingError::UnknownNode { .. } => "UnknownNodeError",
        RingError::EmptyRing => "EmptyRingError",
        _ => "InvalidConfigError",
    }
}

/// Converts a core error into its `shardring` exception, keeping the core's
/// message (which names the bad value; "invalid ring config: " heads it only
/// when a JSON config could not be read) and setting `.code` to the C
/// result name (`RING_EMPTY_RING`).
pub(crate) fn to_py_err(error: RingError) -> PyErr {
    Python::attach(|py| raise(py, class_name(&error), error.code(), error.to_string()))
}

/// `OutOfRangeError` (`ERR_OUT_OF_RANGE`) with `message`, which names the value.
pub(crate) fn out_of_range(py: Python<'_>, message: String) -> PyErr {
    raise(py, "OutOfRangeError", "ERR_OUT_OF_RANGE", message)
}

/// An instance of the package's exception `class` with `message` and `.code`.
pub(crate) fn raise(py: Python<'_>, class: &str, code: &str, message: String) -> PyErr {
    let made = package_class(py, class).and_then(|class| {
        let error = PyErr::from_type(class, message);
        error.value(py).setattr("code", code)?;
        Ok(error)
    });
    made.unwrap_or_else(|import_error| import_error)
}

/// A class the `shardring` package defines in Python (`Node`, the errors),
/// looked up through the package, which is imported once.
pub(crate) fn package_class<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyType>> {
    static PACKAGE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    let package = PACKAGE.get_or_try_init(py, || py.import("shardring").map(Bound::unbind))?;
    Ok(package.bind(py).getattr(name)?.cast_into::<PyType>()?)
}

/// The type name of a Python object, for messages.
pub(crate) fn type_name(value: &Bound<'_, PyAny>) -> String {
    value.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "object".to_owned())
}

/// A `str` with a lone surrogate (which UTF-8 cannot encode) as
/// `InvalidUtf8Error` naming `what` and the string, escaped.
fn invalid_utf8(text: &Bound<'_, PyString>, what: &str) -> PyErr {
    let shown = text.repr().map(|r| r.to_string()).unwrap_or_default();
    let message = format!("{what} {shown} is not valid UTF-8: it holds a lone surrogate");
    raise(text.py(), "InvalidUtf8Error", "RING_INVALID_UTF8", message)
}

/// The UTF-8 text of a `str` argument (an id, a zone, an algorithm name):
/// `TypeError` naming `what` for another type, `InvalidUtf8Error` for a
/// lone surrogate.
pub(crate) fn text_argument<'a>(value: &'a Bound<'_, PyAny>, what: &str) -> PyResult<Cow<'a, str>> {
    let text = value
        .cast::<PyString>()
        .map_err(|_| PyTypeError::new_err(format!("{what} must be a str, not {}", type_name(value))))?;
    text.to_cow().map_err(|_| invalid_utf8(text, what))
}

/// [`text_argument`] for a `str` already known to be one (a key).
pub(crate) fn utf8_failure(text: &Bound<'_, PyString>) -> PyErr {
    invalid_utf8(text, "key")
}

/// A real-number argument (a weight, an epsilon): an `int` or a `float` (or
/// a subclass, such as numpy's float64), never a `bool` or `None`
/// (`TypeError`); `OutOfRangeError` naming an int too large for a float.
pub(crate) fn number_argument(value: &Bound<'_, PyAny>, what: &str) -> PyResult<f64> {
    if value.is_instance_of::<PyBool>() || !(value.is_instance_of::<PyFloat>() || value.is_instance_of::<PyInt>()) {
        return Err(PyTypeError::new_err(format!("{what} must be a float or an int, not {}", type_name(value))));
    }
    value.extract::<f64>().map_err(|_| out_of_range(value.py(), format!("{what} {value} does not fit a float")))
}

/// A whole-number argument in `[0, max]` (a seed, vnodes, a table size, n):
/// `TypeError` for a `bool`, `None` or a non-`int`, `OutOfRangeError`
/// naming the value when out of range.
pub(crate) fn whole_argument(value: &Bound<'_, PyAny>, what: &str, max: u64) -> PyResult<u64> {
    if value.is_instance_of::<PyBool>() || !value.is_instance_of::<PyInt>() {
        return Err(PyTypeError::new_err(format!("{what} must be an int, not {}", type_name(value))));
    }
    match value.extract::<u64>() {
        Ok(number) if number <= max => Ok(number),
        _ => Err(out_of_range(value.py(), format!("{what} must be an int from 0 to {max}, got {value}"))),
    }
}

/// A `bool` argument (HAProxy's avalanche): `TypeError` for anything else, `None` and ints included.
pub(crate) fn bool_argument(value: &Bound<'_, PyAny>, what: &str) -> PyResult<bool> {
    if !value.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err(format!("{what} must be a bool, not {}", type_name(value))));
    }
    value.extract::<bool>()
}

/// A keyword argument that may be left out. Unlike `Option`, which PyO3
/// fills with `None` both when the argument is missing and when `None` is
/// passed, this keeps the two apart, so `vnodes=None` can be the
/// `TypeError` the rule asks for while leaving `vnodes` out means 160.
pub(crate) enum Argument<'py> {
    /// Left out: the parameter's default applies.
    Absent,
    /// Passed, `None` included.
    Given(Bound<'py, PyAny>),
}

impl<'a, 'py> FromPyObject<'a, 'py> for Argument<'py> {
    type Error = PyErr;

    fn extract(value: pyo3::Borrowed<'a, 'py, PyAny>) -> PyResult<Argument<'py>> {
        Ok(Argument::Given(value.to_owned()))
    }
}

impl<'py> Argument<'py> {
    /// `None` when left out, else `check` of the value passed.
    pub(crate) fn map<T>(&self, check: impl FnOnce(&Bound<'py, PyAny>) -> PyResult<T>) -> PyResult<Option<T>> {
        match self {
            Argument::Absent => Ok(None),
            Argument::Given(value) => check(value).map(Some),
        }
    }
}
