//! Python bindings for shardring (PyO3): converts arguments, maps errors,
//! releases the GIL around batch work, and nothing else. Placement lives in
//! the `shardring` crate.

mod analysis;
mod bounded;
mod errors;
mod follower;
mod hot;
mod keys;
mod options;
mod ring;
mod sketch;
mod transition;

use pyo3::prelude::*;

#[pymodule]
fn _shardring(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ring::PyRing>()?;
    m.add_class::<analysis::PyDiff>()?;
    m.add_class::<bounded::PyLoadTracker>()?;
    m.add_class::<bounded::PyLease>()?;
    m.add_class::<analysis::PyBalance>()?;
    m.add_class::<analysis::PySpread>()?;
    m.add_class::<follower::PyFollower>()?;
    m.add_class::<transition::PyTransition>()?;
    m.add_class::<transition::PyRoute>()?;
    m.add_class::<follower::PyEvents>()?;
    m.add_class::<sketch::PyHotKeys>()?;
    m.add_class::<hot::PyHotSet>()?;
    m.add_class::<hot::PyNearCache>()?;
    m.add_function(wrap_pyfunction!(keys::hash_key, m)?)?;
    m.add_function(wrap_pyfunction!(analysis::diff, m)?)?;
    m.add_function(wrap_pyfunction!(ring::_ring_from_json, m)?)?;
    m.add("PLACEMENT_FORMAT", shardring::PLACEMENT_FORMAT)?;
    m.add("REDIS_GUARD", shardring::handoff::REDIS_GUARD)?;
    m.add("REDIS_GUARD_SHA1", shardring::handoff::REDIS_GUARD_SHA1)?;
    m.add("MOVED_REPLY", shardring::handoff::MOVED_REPLY)?;
    m.add("TRYAGAIN_REPLY", shardring::handoff::TRYAGAIN_REPLY)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    let names = shardring::Algorithm::ALL.map(shardring::Algorithm::name);
    m.add("ALGORITHMS", pyo3::types::PyTuple::new(m.py(), names)?)?;
    let parameters = shardring::RingParams::KINDS.map(|(name, _)| name);
    m.add("PARAMETERS", pyo3::types::PyTuple::new(m.py(), parameters)?)?;
    Ok(())
}
