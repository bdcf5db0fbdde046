//! Spreading hot keys in Python: `HotSet` (the agreed hot keys and their
//! spread plans) and `NearCache`. The sketch that finds them is in
//! `sketch.rs`.

use std::sync::Arc;
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};

use crate::errors::{out_of_range, to_py_err};
use crate::keys::key_bytes;
use crate::ring::PyRing;

/// HotSet.from_json(text): the hot keys a fleet agreed to spread (`P/hot`).
/// Use `plan(ring, key)` for where to read and write a key.
#[pyclass(name = "HotSet", module = "shardring", frozen)]
pub struct PyHotSet {
    pub(crate) set: Arc<shardring::HotSet>,
}

#[pymethods]
impl PyHotSet {
    /// HotSet() is the empty set, epoch 0.
    #[new]
    fn new() -> PyHotSet {
        PyHotSet { set: Arc::new(shardring::HotSet::default()) }
    }

    /// from_json(text) -> HotSet. InvalidConfigError naming the field.
    #[staticmethod]
    fn from_json(text: &str) -> PyResult<PyHotSet> {
        Ok(PyHotSet { set: Arc::new(shardring::HotSet::from_json(text).map_err(to_py_err)?) })
    }

    /// to_json() -> str.
    fn to_json(&self) -> String {
        self.set.to_json()
    }

    /// The publication number.
    #[getter]
    fn epoch(&self) -> u64 {
        self.set.epoch
    }

    /// keys() -> list[tuple[bytes, int, str, int, float]]: (key, replicas,
    /// phase, generation, rate), sorted by key.
    fn keys<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let rows = self
            .set
            .keys()
            .iter()
            .map(|e| (PyBytes::new(py, &e.key), e.replicas, e.phase.name(), e.generation, e.rate));
        PyList::new(py, rows)
    }

    /// plan(ring, key) -> (read, read_copy, owner, copies, copy_key): the node
    /// id to read `key` from, whether it holds a copy (read `copy_key`
    /// there; on a miss read `owner`, then add the value under `copy_key`),
    /// the owner, the ids to write the copy to after the owner, and the copy
    /// key (b"" when not spread). EmptyRingError.
    fn plan<'py>(&self, py: Python<'py>, ring: &PyRing, key: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyTuple>> {
        let snapshot = ring.snapshot();
        let plan = self.set.plan(&snapshot.ring, &*key_bytes(key)?).map_err(to_py_err)?;
        plan_tuple(py, &snapshot.ring, &plan)
    }

    /// advance(ring, observed, loads, bound=1.25) -> HotSet: the next
    /// publication for `ring` from the fleet's hot keys `[(key, rate)]` and
    /// its requests per node `{id: rate}` (per second, counted by owner;
    /// an id left out is 0). InvalidConfigError for an id not in the ring,
    /// a negative or non-finite rate, or a bound under 1.
    #[pyo3(signature = (ring, observed, loads, bound = 1.25))]
    fn advance(
        &self,
        py: Python<'_>,
        ring: &PyRing,
        observed: Vec<(Vec<u8>, f64)>,
        loads: std::collections::HashMap<String, f64>,
        bound: f64,
    ) -> PyResult<PyHotSet> {
        let snapshot = ring.snapshot();
        let named = loads.iter().map(|(id, rate)| (id.as_str(), *rate));
        let rates = shardring::HotSet::loads_by_id(&snapshot.ring, named).map_err(to_py_err)?;
        let next = py.detach(|| self.set.advance(&snapshot.ring, &observed, &rates, bound)).map_err(to_py_err)?;
        Ok(PyHotSet { set: Arc::new(next) })
    }

    fn __len__(&self) -> usize {
        self.set.keys().len()
    }
}

/// A spread plan as Python sees it: `(read, read_copy, owner, copies,
/// copy_key)`, node ids of `ring`, the ring it was made on.
pub(crate) fn plan_tuple<'py>(
    py: Python<'py>,
    ring: &shardring::Ring,
    plan: &shardring::SpreadPlan,
) -> PyResult<Bound<'py, PyTuple>> {
    let id = |i: usize| ring.nodes()[i].id().to_owned();
    let copies: Vec<String> = plan.copies.iter().map(|&i| id(i)).collect();
    (id(plan.read), plan.read_copy, id(plan.owner), copies, PyBytes::new(py, &plan.copy_key)).into_pyobject(py)
}

/// NearCache(capacity, ttl): a small TTL cache of hot values in this
/// process; `NearCache.default_capacity(nodes)` is Fan et al.'s n log n.
#[pyclass(name = "NearCache", module = "shardring", frozen)]
pub struct PyNearCache {
    /// Shared with a follower that reports it in its metrics.
    pub(crate) cache: Arc<shardring::NearCache>,
}

#[pymethods]
impl PyNearCache {
    #[new]
    fn new(py: Python<'_>, capacity: usize, ttl: f64) -> PyResult<PyNearCache> {
        let ttl = Duration::try_from_secs_f64(ttl)
            .map_err(|_| out_of_range(py, format!("ttl {ttl} must be a number of seconds")))?;
        let cache = shardring::NearCache::new(capacity, ttl).map_err(|message| out_of_range(py, message))?;
        Ok(PyNearCache { cache: Arc::new(cache) })
    }

    /// default_capacity(nodes) -> int: ceil(n log2 n), at least 16.
    #[staticmethod]
    fn default_capacity(nodes: usize) -> usize {
        shardring::NearCache::default_capacity(nodes)
    }

    /// get(key) -> bytes | None.
    fn get<'py>(&self, py: Python<'py>, key: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyBytes>>> {
        Ok(self.cache.get(&key_bytes(key)?).map(|v| PyBytes::new(py, &v)))
    }

    /// put(key, value) -> None.
    fn put(&self, key: &Bound<'_, PyAny>, value: &[u8]) -> PyResult<()> {
        self.cache.put(&key_bytes(key)?, value);
        Ok(())
    }

    /// remove(key) -> None.
    fn remove(&self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        self.cache.remove(&key_bytes(key)?);
        Ok(())
    }

    /// (hits, misses) since it was made.
    #[getter]
    fn hits_and_misses(&self) -> (u64, u64) {
        self.cache.hits_and_misses()
    }

    fn __len__(&self) -> usize {
        self.cache.len()
    }
}
