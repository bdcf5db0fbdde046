//! Python bindings for shardring: converts arguments, maps errors, and
//! nothing else. Placement lives in the `shardring` crate.

use std::borrow::Cow;
use std::sync::Arc;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyString, PyType};

use shardring::{Node, RingError};

/// Converts a core error into the `shardring` exception a Python caller
/// expects (see `python/shardring/_errors.py`), keeping the core's message.
fn to_py_err(py: Python<'_>, error: RingError) -> PyErr {
    let class = match &error {
        RingError::EmptyId { .. }
        | RingError::DuplicateId { .. }
        | RingError::InvalidWeight { .. }
        | RingError::EmptyZone { .. } => "InvalidNodeError",
        RingError::UnknownNode { .. } => "UnknownNodeError",
        RingError::EmptyRing => "EmptyRingError",
        _ => "InvalidConfigError",
    };
    match error_class(py, class) {
        Ok(class) => PyErr::from_type(class, error.to_string()),
        Err(import_error) => import_error,
    }
}

fn error_class<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyType>> {
    static ERRORS: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    let module = ERRORS.get_or_try_init(py, || py.import("shardring._errors").map(Bound::unbind))?;
    Ok(module.bind(py).getattr(name)?.cast_into::<PyType>()?)
}

/// A key's bytes: a `str` as UTF-8, `bytes` as is; anything else is a `TypeError`.
/// (Under the Python 3.9 stable ABI a `str` is encoded into a temporary.)
fn key_bytes<'a>(key: &'a Bound<'_, PyAny>) -> PyResult<Cow<'a, [u8]>> {
    if let Ok(bytes) = key.cast::<PyBytes>() {
        return Ok(Cow::Borrowed(bytes.as_bytes()));
    }
    if let Ok(text) = key.cast::<PyString>() {
        return Ok(match text.to_cow()? {
            Cow::Borrowed(text) => Cow::Borrowed(text.as_bytes()),
            Cow::Owned(text) => Cow::Owned(text.into_bytes()),
        });
    }
    Err(PyTypeError::new_err(format!("key must be str or bytes, not {}", key.get_type().name()?)))
}

/// An immutable consistent-hash ring (placement format 1).
///
/// Ring(nodes, *, vnodes=160, seed=0)
///
/// nodes: a list of node ids (weight 1.0 each) or a dict id -> weight.
/// A weight is relative capacity, finite and >= 0 (0 = drained: a member
/// that owns no keys); a node owns round(vnodes * weight) points.
/// vnodes: points per unit of weight (>= 1). seed: seed of the XXH3-64 key
/// and point hashes (0 <= seed < 2**64).
///
/// Raises InvalidNodeError (a ValueError) for an empty or duplicate id or a
/// NaN, infinite or negative weight; InvalidConfigError (a ValueError) for
/// vnodes 0 or more than 2**24 points; TypeError for ids that are not str.
#[pyclass(frozen, module = "shardring", name = "Ring")]
struct PyRing {
    ring: Arc<shardring::Ring>,
    /// Node ids as Python strings, built once so lookups return without allocating.
    ids: Vec<Py<PyString>>,
}

impl PyRing {
    fn wrap(py: Python<'_>, ring: shardring::Ring) -> PyRing {
        let ids = ring.nodes().iter().map(|n| PyString::new(py, n.id()).unbind()).collect();
        PyRing { ring: Arc::new(ring), ids }
    }
}

#[pymethods]
impl PyRing {
    #[new]
    #[pyo3(signature = (nodes, *, vnodes = shardring::DEFAULT_VNODES, seed = shardring::DEFAULT_SEED))]
    fn new(py: Python<'_>, nodes: &Bound<'_, PyAny>, vnodes: u32, seed: u64) -> PyResult<PyRing> {
        let mut list = Vec::new();
        if let Ok(dict) = nodes.cast::<PyDict>() {
            for (id, weight) in dict.iter() {
                list.push(Node::new(id.extract::<String>()?, weight.extract::<f64>()?));
            }
        } else {
            for id in nodes.try_iter()? {
                list.push(Node::new(id?.extract::<String>()?, 1.0));
            }
        }
        let ring = shardring::Ring::builder().vnodes(vnodes).seed(seed).nodes(list).build();
        Ok(PyRing::wrap(py, ring.map_err(|e| to_py_err(py, e))?))
    }

    /// Builds a ring from a JSON ring config (the format of Ring config files
    /// shared by every binding). Raises InvalidConfigError for malformed JSON
    /// or unknown fields, and the constructor's errors.
    #[staticmethod]
    fn from_json(py: Python<'_>, config: &str) -> PyResult<PyRing> {
        let ring = shardring::Ring::from_json(config).map_err(|e| to_py_err(py, e))?;
        Ok(PyRing::wrap(py, ring))
    }

    /// Points per unit of weight.
    #[getter]
    fn vnodes(&self) -> u32 {
        self.ring.vnodes()
    }

    /// Seed of the key and point hashes.
    #[getter]
    fn seed(&self) -> u64 {
        self.ring.seed()
    }

    /// Node ids in the order given (drained nodes included).
    #[getter]
    fn nodes(&self, py: Python<'_>) -> Vec<Py<PyString>> {
        self.ids.iter().map(|id| id.clone_ref(py)).collect()
    }

    /// The key's position on the ring: XXH3-64 of its bytes under the ring's
    /// seed, an int in [0, 2**64).
    fn hash_key(&self, key: &Bound<'_, PyAny>) -> PyResult<u64> {
        Ok(self.ring.hash_key(&*key_bytes(key)?))
    }

    /// The id of the node owning `key` (str, hashed as UTF-8, or bytes).
    /// Raises EmptyRingError (a LookupError) when no node has weight > 0,
    /// TypeError for other key types.
    fn get(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Py<PyString>> {
        let index = self.ring.get_index(&key_bytes(key)?).map_err(|e| to_py_err(py, e))?;
        Ok(self.ids[index].clone_ref(py))
    }

    /// The id of the node owning ring position `hash` (an int in
    /// [0, 2**64), e.g. from `hash_key`): the owner of the first point >= hash.
    /// Raises EmptyRingError (a LookupError) when no node has weight > 0.
    fn get_by_hash(&self, py: Python<'_>, hash: u64) -> PyResult<Py<PyString>> {
        let index = self.ring.index_by_hash(hash).map_err(|e| to_py_err(py, e))?;
        Ok(self.ids[index].clone_ref(py))
    }

    /// A stable 64-bit digest (int) of the ring's algorithm, vnodes, seed and
    /// set of nodes, independent of node order (see core/SPEC.md), so two
    /// processes can check they hold the same ring.
    #[getter]
    fn fingerprint(&self) -> u64 {
        self.ring.fingerprint()
    }

    /// The key's preference list: up to `n` distinct node ids clockwise from
    /// the key, the first being `get(key)`; every node with weight > 0 once
    /// when `n` exceeds their number. Follows Dynamo's preference list.
    /// Raises as `get`.
    fn get_n(&self, py: Python<'_>, key: &Bound<'_, PyAny>, n: usize) -> PyResult<Vec<Py<PyString>>> {
        let mut indices = vec![0usize; n.min(self.ids.len())];
        let found = self.ring.get_n_indices(&key_bytes(key)?, &mut indices).map_err(|e| to_py_err(py, e))?;
        Ok(indices[..found].iter().map(|&i| self.ids[i].clone_ref(py)).collect())
    }

    fn __len__(&self) -> usize {
        self.ids.len()
    }

    fn __repr__(&self) -> String {
        format!(
            "Ring({} nodes, {} points, vnodes={}, seed={})",
            self.ids.len(),
            self.ring.point_count(),
            self.ring.vnodes(),
            self.ring.seed()
        )
    }
}

/// XXH3-64 of a key (str as UTF-8, or bytes) under `seed`: the position
/// every binding gives the key on a ring with that seed.
#[pyfunction]
#[pyo3(signature = (key, seed = shardring::DEFAULT_SEED))]
fn hash_key(key: &Bound<'_, PyAny>, seed: u64) -> PyResult<u64> {
    Ok(shardring::hash_key(&key_bytes(key)?, seed))
}

#[pymodule]
fn _shardring(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyRing>()?;
    m.add_function(wrap_pyfunction!(hash_key, m)?)?;
    m.add("PLACEMENT_FORMAT", shardring::PLACEMENT_FORMAT)?;
    Ok(())
}
