//! `shardring.LoadTracker` and `shardring.Lease`: bounded loads (the core's
//! `LoadTracker`), with a context manager that releases on exit.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use arc_swap::ArcSwap;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use shardring::{LoadTracker, RingError};

use crate::errors::{number_argument, text_argument, to_py_err, whole_argument};
use crate::keys::key_bytes;
use crate::ring::{PyRing, Snapshot};

/// The snapshot cell of the `Ring` a tracker follows.
type RingCell = Arc<ArcSwap<Snapshot>>;

/// LoadTracker(ring, epsilon)
///
/// Consistent hashing with bounded loads (Mirrokni, Thorup and
/// Zadimoghaddam, 2017): counts live requests per node of `ring` and sends each request to the first node in its key's preference
/// order that is under capacity, max(1, ceil((1 + epsilon) * (total load + 1)
/// * weight / total weight)). epsilon: a float > 0 (Envoy's
/// hash_balance_factor 125 is epsilon 0.25).
///
/// >>> with tracker.acquire("user:42") as node:
/// ...     serve(node)               # released when the block exits
///
/// The tracker follows `ring` as it changes in place: after
/// `ring.remove_node("a")` no request goes to "a" (its load leaves with it),
/// and a node added starts at load 0.
///
/// Thread-safe: acquires and releases from many threads never wait for each
/// other. Raises InvalidConfigError (a ValueError) for a bad epsilon.
#[pyclass(frozen, module = "shardring", name = "LoadTracker")]
pub struct PyLoadTracker {
    tracker: Arc<LoadTracker>,
    /// The ring followed (replaced by `swap`).
    ring: ArcSwap<RingCell>,
}

impl PyLoadTracker {
    /// The tracker, moved onto its ring's current snapshot.
    fn current(&self) -> &LoadTracker {
        let snapshot = self.ring.load().load_full();
        self.tracker.follow(&snapshot.ring);
        &self.tracker
    }
}

#[pymethods]
impl PyLoadTracker {
    #[new]
    fn new(ring: &PyRing, epsilon: &Bound<'_, PyAny>) -> PyResult<PyLoadTracker> {
        let epsilon = number_argument(epsilon, "epsilon")?;
        let tracker = LoadTracker::new(Arc::clone(&ring.snapshot().ring), epsilon).map_err(to_py_err)?;
        Ok(PyLoadTracker { tracker: Arc::new(tracker), ring: ArcSwap::from_pointee(ring.cell()) })
    }

    /// LoadTracker.haproxy(ring, hash_balance_factor) -> LoadTracker: bounds
    /// loads as HAProxy's `hash-balance-factor` does (an int above 100, a
    /// percentage of the average load) on a "haproxy" ring: the servers
    /// HAProxy picks while that many requests are in flight on each.
    /// Raises InvalidConfigError for a factor of 100 or less or a ring of
    /// another algorithm.
    #[staticmethod]
    fn haproxy(ring: &PyRing, hash_balance_factor: &Bound<'_, PyAny>) -> PyResult<PyLoadTracker> {
        let factor = whole_argument(hash_balance_factor, "hash_balance_factor", u64::from(u32::MAX))? as u32;
        let tracker = LoadTracker::haproxy(Arc::clone(&ring.snapshot().ring), factor).map_err(to_py_err)?;
        Ok(PyLoadTracker { tracker: Arc::new(tracker), ring: ArcSwap::from_pointee(ring.cell()) })
    }

    /// acquire(key) -> Lease: assigns a request for `key` (str or bytes-like)
    /// to a node under capacity and adds one to its load. Release it with
    /// `lease.release()` or by using the lease as a context manager. Raises
    /// EmptyRingError when no node has weight > 0.
    fn acquire(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<PyLease> {
        let key = key_bytes(key)?;
        // The Lease object gives the load back (release() or `with`).
        let lease = self.current().acquire(&*key).map_err(to_py_err)?.detach();
        Ok(PyLease {
            tracker: self.tracker.clone(),
            node: PyString::new(py, &lease.id).unbind(),
            id: lease.id,
            probes: lease.probes,
            released: AtomicBool::new(false),
        })
    }

    /// release(node): removes one unit of load from node `node` (an id).
    /// Raises UnknownNodeError when it is not in the current ring (a swap
    /// removed it, with its load), NoLoadError when its load is already 0.
    fn release(&self, node: &Bound<'_, PyAny>) -> PyResult<()> {
        self.current().release(&text_argument(node, "node")?).map_err(to_py_err)
    }

    /// swap(ring): follows `ring` from now on (typically one derived from
    /// the current ring). Nodes in both keep their load, nodes that left drop
    /// theirs, new nodes start at 0.
    fn swap(&self, py: Python<'_>, ring: &PyRing) {
        let cell = ring.cell();
        let snapshot = Arc::clone(&cell.load().ring);
        self.ring.store(Arc::new(cell));
        py.detach(|| self.tracker.follow(&snapshot));
    }

    /// Current load per node id of the ring followed, in node order.
    #[getter]
    fn loads<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let tracker = self.current();
        let (ring, loads) = (tracker.ring(), tracker.loads());
        let by_id = PyDict::new(py);
        for (node, load) in ring.nodes().iter().zip(loads) {
            by_id.set_item(node.id(), load)?;
        }
        Ok(by_id)
    }

    /// Sum of all loads.
    #[getter]
    fn total_load(&self) -> u64 {
        self.current().total_load()
    }

    /// The balance factor 1 + epsilon.
    #[getter]
    fn balance_factor(&self) -> f64 {
        self.tracker.balance_factor()
    }

    fn __repr__(&self) -> String {
        format!(
            "LoadTracker(nodes={}, balance_factor={}, total_load={})",
            self.tracker.ring().nodes().len(),
            self.tracker.balance_factor(),
            self.tracker.total_load()
        )
    }
}

/// One request's assignment: `node` (the id) and `probes` (distinct nodes
/// tried; 1 = the key's own owner). Release exactly once, with `release()`
/// or by leaving a `with` block (which gives `node`).
#[pyclass(frozen, module = "shardring", name = "Lease")]
pub struct PyLease {
    tracker: Arc<LoadTracker>,
    node: Py<PyString>,
    /// The id as the tracker holds it (shared with it, not copied), which `release` gives back.
    id: Arc<str>,
    probes: u32,
    released: AtomicBool,
}

#[pymethods]
impl PyLease {
    /// Id of the node the request went to.
    #[getter]
    fn node(&self, py: Python<'_>) -> Py<PyString> {
        self.node.clone_ref(py)
    }

    /// Distinct nodes tried, including the one taken.
    #[getter]
    fn probes(&self) -> u32 {
        self.probes
    }

    /// Whether the lease was released.
    #[getter]
    fn released(&self) -> bool {
        self.released.load(Ordering::Acquire)
    }

    /// release(): gives the load back. Raises NoLoadError when this lease
    /// was already released; UnknownNodeError when a swap removed its node.
    fn release(&self) -> PyResult<()> {
        if self.released.swap(true, Ordering::AcqRel) {
            return Err(to_py_err(RingError::NoLoad { id: self.id.to_string() }));
        }
        self.tracker.release(&self.id).map_err(to_py_err)
    }

    fn __enter__(&self, py: Python<'_>) -> Py<PyString> {
        self.node.clone_ref(py)
    }

    /// Releases unless already released; exceptions from the block propagate.
    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        if !self.released.load(Ordering::Acquire) {
            match self.release() {
                // A swap removed the node: its load left with it.
                Err(e) if e.is_instance_of::<pyo3::exceptions::PyKeyError>(py) => {}
                other => other?,
            }
        }
        Ok(false)
    }

    fn __repr__(&self) -> String {
        let released = if self.released.load(Ordering::Acquire) { "True" } else { "False" };
        format!("Lease(node={:?}, probes={}, released={released})", self.id, self.probes)
    }
}
