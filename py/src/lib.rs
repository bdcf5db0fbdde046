//! Python bindings for shardring (PyO3): converts arguments, maps errors,
//! releases the GIL around batch work, and nothing else. Placement lives in
//! the `shardring` crate.

mod analysis;
mod bounded;
mod keys;
mod ring;

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

use shardring::RingError;

/// Converts a core error into the `shardring` exception a Python caller
/// expects (see `python/shardring/_errors.py`), keeping the core's message.
pub(crate) fn to_py_err(error: RingError) -> PyErr {
    let class = match &error {
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
    };
    Python::attach(|py| match package_class(py, class) {
        Ok(class) => PyErr::from_type(class, error.to_string()),
        Err(import_error) => import_error,
    })
}

/// A class the `shardring` package defines in Python (`Node`, the errors),
/// looked up through the package, which is imported once.
pub(crate) fn package_class<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyType>> {
    static PACKAGE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    let package = PACKAGE.get_or_try_init(py, || py.import("shardring").map(Bound::unbind))?;
    Ok(package.bind(py).getattr(name)?.cast_into::<PyType>()?)
}

#[pymodule]
fn _shardring(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ring::PyRing>()?;
    m.add_class::<analysis::PyDiff>()?;
    m.add_class::<bounded::PyLoadTracker>()?;
    m.add_class::<bounded::PyLease>()?;
    m.add_class::<analysis::PyBalance>()?;
    m.add_class::<analysis::PySpread>()?;
    m.add_function(wrap_pyfunction!(keys::hash_key, m)?)?;
    m.add_function(wrap_pyfunction!(analysis::diff, m)?)?;
    m.add_function(wrap_pyfunction!(ring::_ring_from_json, m)?)?;
    m.add("PLACEMENT_FORMAT", shardring::PLACEMENT_FORMAT)?;
    let names = shardring::Algorithm::ALL.map(shardring::Algorithm::name);
    m.add("ALGORITHMS", pyo3::types::PyTuple::new(m.py(), names)?)?;
    Ok(())
}
