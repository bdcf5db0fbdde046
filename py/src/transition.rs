//! `shardring.Transition`: the read and write sets of a ring whose members
//! are warming up or draining (the core's `Transition`).

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyString;

use shardring::{Node, Transition};

use crate::analysis::PyDiff;
use crate::errors::{text_argument, to_py_err};
use crate::keys::key_bytes;
use crate::ring::{PyRing, fingerprint_hex};

/// Transition.from_json(config) / Transition.between(old, new)
///
/// A ring in transition (core/SPEC.md, Transitions): members are "active",
/// "warming" (joining: takes the writes of the keys it will own, no reads,
/// while a rebalancer copies them) or "draining" (leaving: no writes, reads
/// as a fallback). read_nodes(key) is the owner among the active members,
/// then the old owner when it differs; write_nodes(key) the owner among the
/// active members, then the new owner when it differs. With every member
/// active both are [owner].
#[pyclass(frozen, module = "shardring", name = "Transition")]
pub struct PyTransition {
    pub(crate) transition: Arc<Transition>,
}

fn ids<'py>(py: Python<'py>, nodes: Vec<&Node>) -> Vec<Bound<'py, PyString>> {
    nodes.iter().map(|n| PyString::new(py, n.id())).collect()
}

/// A key's route during a transition (Transition.route): `old`, its owner
/// under the old ring; `new`, its owner under the new ring; `moving`,
/// whether they differ.
#[pyclass(frozen, get_all, module = "shardring", name = "Route")]
pub struct PyRoute {
    old: Py<PyString>,
    new: Py<PyString>,
    moving: bool,
}

#[pymethods]
impl PyRoute {
    fn __repr__(&self, py: Python<'_>) -> String {
        let moving = if self.moving { "True" } else { "False" };
        format!(
            "Route(old={:?}, new={:?}, moving={moving})",
            self.old.bind(py).to_string(),
            self.new.bind(py).to_string()
        )
    }
}

#[pymethods]
impl PyTransition {
    /// Transition.from_json(config: str) -> Transition: from a JSON ring
    /// config whose nodes may carry "state" ("active", "warming",
    /// "draining"; absent: active). Raises InvalidConfigError and the Ring
    /// constructor's errors.
    #[staticmethod]
    fn from_json(py: Python<'_>, config: &str) -> PyResult<PyTransition> {
        let config = shardring::RingConfig::from_json(config).map_err(to_py_err)?;
        let transition = py.detach(|| Transition::from_config(&config)).map_err(to_py_err)?;
        Ok(PyTransition { transition: Arc::new(transition) })
    }

    /// Transition.between(old: Ring, new: Ring) -> Transition: members only
    /// in `old` drain, members only in `new` warm up. Raises
    /// InvalidConfigError when the algorithms or seeds differ.
    #[staticmethod]
    fn between(py: Python<'_>, old: &PyRing, new: &PyRing) -> PyResult<PyTransition> {
        let (old, new) = (old.snapshot(), new.snapshot());
        let transition = py.detach(|| Transition::between(&old.ring, &new.ring)).map_err(to_py_err)?;
        Ok(PyTransition { transition: Arc::new(transition) })
    }

    /// read_nodes(key) -> list[str]: where to read `key`, in order (one or
    /// two ids). Raises EmptyRingError when no active member owns keys.
    #[pyo3(signature = (key, /))]
    fn read_nodes<'py>(&self, py: Python<'py>, key: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyString>>> {
        let key = key_bytes(key)?;
        Ok(ids(py, self.transition.read_nodes(&*key).map_err(to_py_err)?))
    }

    /// write_nodes(key) -> list[str]: where to write `key` (one or two ids;
    /// a write is acknowledged once every one of them took it). Raises
    /// EmptyRingError when no active member owns keys.
    #[pyo3(signature = (key, /))]
    fn write_nodes<'py>(&self, py: Python<'py>, key: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyString>>> {
        let key = key_bytes(key)?;
        Ok(ids(py, self.transition.write_nodes(&*key).map_err(to_py_err)?))
    }

    /// route(key) -> Route: where `key` is (`old`, its owner under the old
    /// ring) and where it goes (`new`, under the new ring), and whether its
    /// arc is `moving` (they differ). The handoff protocol sends a moving
    /// key's commands through REDIS_GUARD on `old`, then to `new` when the
    /// guard answers MOVED_REPLY (core/SPEC.md, Handoff). Raises
    /// EmptyRingError when neither ring can own keys.
    #[pyo3(signature = (key, /))]
    fn route(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<PyRoute> {
        let key = key_bytes(key)?;
        let route = self.transition.route(&*key).map_err(to_py_err)?;
        Ok(PyRoute {
            old: PyString::new(py, route.old.id()).unbind(),
            new: PyString::new(py, route.new.id()).unbind(),
            moving: route.is_moving(),
        })
    }

    /// The handoff mark: "shardring:handoff:" and the fingerprint in 16 hex
    /// digits, the key the mover sets on each old owner before it moves
    /// keys; the guard's second key (core/SPEC.md, Handoff).
    #[getter]
    fn handoff_mark(&self) -> String {
        self.transition.handoff_mark()
    }

    /// The ring of the active members (where keys are read first).
    #[getter]
    fn read_ring(&self, py: Python<'_>) -> PyRing {
        PyRing::from_ring(py, shardring::Ring::clone(self.transition.read_ring()))
    }

    /// The ring of the active and draining members (where keys are now).
    #[getter]
    fn old_ring(&self, py: Python<'_>) -> PyRing {
        PyRing::from_ring(py, shardring::Ring::clone(self.transition.old_ring()))
    }

    /// The ring of the active and warming members (where keys go).
    #[getter]
    fn new_ring(&self, py: Python<'_>) -> PyRing {
        PyRing::from_ring(py, shardring::Ring::clone(self.transition.new_ring()))
    }

    /// state(id) -> str | None: "active", "warming" or "draining"; None for
    /// an id not in the transition.
    fn state(&self, id: &Bound<'_, PyAny>) -> PyResult<Option<&'static str>> {
        Ok(self.transition.state(&text_argument(id, "id")?).map(shardring::NodeState::name))
    }

    /// Whether every member is active.
    #[getter]
    fn is_steady(&self) -> bool {
        self.transition.is_steady()
    }

    /// The fingerprint of the config with its states (int).
    #[getter]
    fn fingerprint(&self) -> u64 {
        self.transition.fingerprint()
    }

    /// The fingerprint as text, 16 lowercase hex digits, zero-padded (as
    /// the CLI prints it); a steady transition's is its ring's.
    #[getter]
    fn fingerprint_hex(&self) -> String {
        fingerprint_hex(self.transition.fingerprint())
    }

    /// moves() -> Diff: the old ring's difference to the new one, the arcs a
    /// rebalancer copies. Computed without the GIL.
    fn moves(&self, py: Python<'_>) -> PyResult<PyDiff> {
        let transition = Arc::clone(&self.transition);
        let diff = py.detach(|| transition.moves()).map_err(to_py_err)?;
        Ok(PyDiff::from(diff))
    }

    fn __repr__(&self) -> String {
        let t = &self.transition;
        format!(
            "Transition(active={}, old={} nodes, new={} nodes, fingerprint={:#018x})",
            t.read_ring().nodes().len(),
            t.old_ring().nodes().len(),
            t.new_ring().nodes().len(),
            t.fingerprint()
        )
    }
}
