//! `shardring.Ring`: an immutable snapshot behind an atomic pointer, so the
//! mutating conveniences swap whole snapshots under concurrent readers.

use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use pyo3::types::{PyDict, PyList, PyMapping, PyString, PyTuple};

use shardring::{Algorithm, Node, Ring};

use crate::analysis::PyBalance;
use crate::keys::{key_bytes, pack_keys};
use crate::{package_class, to_py_err};

// The Python signatures spell the core's defaults out, so introspection shows them.
const _: () = assert!(shardring::DEFAULT_VNODES == 160 && shardring::DEFAULT_SEED == 0);

/// One ring and its node ids as Python strings (built once, so lookups
/// return without allocating).
pub(crate) struct Snapshot {
    /// Shared, so a LoadTracker over this ring holds the same snapshot.
    pub(crate) ring: Arc<Ring>,
    ids: Vec<Py<PyString>>,
}

impl Snapshot {
    fn new(py: Python<'_>, ring: Ring) -> Arc<Snapshot> {
        let ids = ring.nodes().iter().map(|n| PyString::new(py, n.id()).unbind()).collect();
        Arc::new(Snapshot { ring: Arc::new(ring), ids })
    }

    fn id(&self, py: Python<'_>, index: usize) -> Py<PyString> {
        self.ids[index].clone_ref(py)
    }
}

/// Ring(nodes, *, algorithm="ring", vnodes=None, seed=0, table_size=None)
///
/// A consistent-hash ring (placement format 1, core/SPEC.md).
///
/// nodes: a list of node ids (weight 1.0 each) or of `Node(id, weight,
/// zone)` objects, or a dict id -> weight. A weight is relative capacity,
/// finite and >= 0 (0 = drained: a member owning no keys); on the "ring"
/// algorithm a node owns round(vnodes * weight) points.
/// algorithm: "ring", "ketama", "ketama-spy", "libketama" (memcached
/// clients, ids "host:port", whole-number weights), "nginx", "jump" (weights
/// 1), "rendezvous", "maglev" or "slots" (Redis Cluster).
/// vnodes: points per unit of weight (>= 1, default 160), "ring" only.
/// seed: seed of the XXH3 hashes, 0 <= seed < 2**64 ("ring", "jump",
/// "rendezvous", "maglev"). table_size: Maglev table size, a prime (default 65537).
///
/// Keys are str (hashed as UTF-8) or bytes-like; "abc" and b"abc" land on the
/// same node. Lookups read one whole snapshot even while another thread calls
/// add_node, remove_node or set_weight.
///
/// Raises InvalidNodeError (a ValueError) for an empty or duplicate id, a NaN,
/// infinite or negative weight, a weight the algorithm cannot express, a bad
/// ketama address or an empty zone; InvalidConfigError (a ValueError) for
/// vnodes 0, more than 2**24 points, an unknown algorithm, a parameter the
/// algorithm does not take or a bad Maglev table size; TypeError for nodes of
/// another type.
#[pyclass(frozen, module = "shardring", name = "Ring")]
pub struct PyRing {
    current: ArcSwap<Snapshot>,
    /// Serialises the mutating methods so none of their updates is lost.
    writer: Mutex<()>,
}

impl PyRing {
    pub(crate) fn from_ring(py: Python<'_>, ring: Ring) -> PyRing {
        PyRing { current: ArcSwap::new(Snapshot::new(py, ring)), writer: Mutex::new(()) }
    }

    pub(crate) fn snapshot(&self) -> Arc<Snapshot> {
        self.current.load_full()
    }

    /// Derives a ring from the current snapshot without the GIL.
    fn derive(
        &self,
        py: Python<'_>,
        change: impl FnOnce(&Ring) -> Result<Ring, shardring::RingError> + Send,
    ) -> PyResult<Ring> {
        let snapshot = self.current.load_full();
        py.detach(|| change(&snapshot.ring)).map_err(to_py_err)
    }

    /// Replaces the snapshot with one derived from it, atomically for readers.
    fn update(
        &self,
        py: Python<'_>,
        change: impl FnOnce(&Ring) -> Result<Ring, shardring::RingError> + Send,
    ) -> PyResult<()> {
        // Waits for the lock with the GIL released, so a writer never deadlocks with the GIL.
        let _writer = self.writer.lock_py_attached(py).unwrap_or_else(|poisoned| poisoned.into_inner());
        let ring = self.derive(py, change)?;
        self.current.store(Snapshot::new(py, ring));
        Ok(())
    }
}

/// A node from a `str` id (weight 1.0) or a `shardring.Node`.
fn to_node(item: &Bound<'_, PyAny>) -> PyResult<Node> {
    if let Ok(id) = item.cast::<PyString>() {
        return Ok(Node::new(id.to_cow()?.into_owned(), 1.0));
    }
    if item.is_instance(package_class(item.py(), "Node")?.as_any())? {
        let node = Node::new(item.getattr("id")?.extract::<String>()?, item.getattr("weight")?.extract::<f64>()?);
        let zone: Option<String> = item.getattr("zone")?.extract()?;
        return Ok(match zone {
            Some(zone) => node.with_zone(zone),
            None => node,
        });
    }
    Err(PyTypeError::new_err(format!("a node must be a str id or a shardring.Node, not {}", item.get_type().name()?)))
}

fn to_nodes(nodes: &Bound<'_, PyAny>) -> PyResult<Vec<Node>> {
    if let Ok(dict) = nodes.cast::<PyDict>() {
        return dict
            .iter()
            .map(|(id, weight)| Ok(Node::new(id.extract::<String>()?, weight.extract::<f64>()?)))
            .collect();
    }
    // Any other mapping (MappingProxyType, UserDict, ...) is id -> weight too.
    if let Ok(mapping) = nodes.cast::<PyMapping>() {
        let items = mapping.items()?;
        return items
            .iter()
            .map(|item| {
                let (id, weight): (String, f64) = item.extract()?;
                Ok(Node::new(id, weight))
            })
            .collect();
    }
    if nodes.cast::<PyString>().is_ok() {
        return Err(PyTypeError::new_err("nodes must be a list of ids or Node objects, or a dict, not a single str"));
    }
    nodes.try_iter()?.map(|item| to_node(&item?)).collect()
}

#[pymethods]
impl PyRing {
    #[new]
    #[pyo3(signature = (nodes, *, algorithm = "ring", vnodes = None, seed = 0, table_size = None))]
    fn new(
        py: Python<'_>,
        nodes: &Bound<'_, PyAny>,
        algorithm: &str,
        vnodes: Option<&Bound<'_, PyAny>>,
        seed: u64,
        table_size: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyRing> {
        let vnodes = vnodes.map(|v| u32_argument("vnodes", v)).transpose()?;
        let table_size = table_size.map(|t| u32_argument("table_size", t)).transpose()?;
        let nodes = to_nodes(nodes)?;
        let algorithm: Algorithm = algorithm.parse().map_err(to_py_err)?;
        let mut builder = Ring::builder().algorithm(algorithm).seed(seed).nodes(nodes);
        if let Some(vnodes) = vnodes {
            builder = builder.vnodes(vnodes);
        }
        if let Some(size) = table_size {
            builder = builder.table_size(size);
        }
        let ring = py.detach(|| builder.build()).map_err(to_py_err)?;
        Ok(PyRing::from_ring(py, ring))
    }

    /// Ring.from_json(config: str) -> Ring
    ///
    /// Builds a ring from a JSON ring config (the format every binding and
    /// the CLI share). Raises InvalidConfigError for malformed JSON or unknown
    /// fields, and the constructor's errors.
    #[staticmethod]
    fn from_json(py: Python<'_>, config: &str) -> PyResult<PyRing> {
        Ok(PyRing::from_ring(py, Ring::from_json(config).map_err(to_py_err)?))
    }

    /// to_json() -> str: the ring's JSON config, which Ring.from_json reads back.
    fn to_json(&self) -> String {
        self.current.load().ring.to_config().to_json()
    }

    /// The placement algorithm's name ("ring", "ketama", ...).
    #[getter]
    fn algorithm(&self) -> &'static str {
        self.current.load().ring.algorithm().name()
    }

    /// Points per unit of weight ("ring" only; None otherwise).
    #[getter]
    fn vnodes(&self) -> Option<u32> {
        self.current.load().ring.vnodes()
    }

    /// Maglev table size ("maglev" only; None otherwise).
    #[getter]
    fn table_size(&self) -> Option<u32> {
        self.current.load().ring.table_size()
    }

    /// Seed of the key and point hashes.
    #[getter]
    fn seed(&self) -> u64 {
        self.current.load().ring.seed()
    }

    /// Total number of points on the ring (0 for jump, rendezvous, maglev and slots).
    #[getter]
    fn point_count(&self) -> usize {
        self.current.load().ring.point_count()
    }

    /// A stable 64-bit digest (int) of the ring's vnodes, seed and set of
    /// nodes, independent of node order (core/SPEC.md), so two processes can
    /// check they hold the same ring.
    #[getter]
    fn fingerprint(&self) -> u64 {
        self.current.load().ring.fingerprint()
    }

    /// The nodes as `shardring.Node` objects, in order (drained ones included).
    #[getter]
    fn nodes<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let class = package_class(py, "Node")?;
        let snapshot = self.current.load();
        snapshot.ring.nodes().iter().map(|n| class.call1((n.id(), n.weight(), n.zone()))).collect()
    }

    /// hash_key(key) -> int: the key's hash under the ring's algorithm: XXH3-64
    /// of its bytes under the seed, in [0, 2**64) ("ring", "jump",
    /// "rendezvous", "maglev"); the first 4 bytes of MD5, little-endian
    /// (ketama modes); CRC-32 ("nginx"); the Redis Cluster slot ("slots").
    #[pyo3(signature = (key, /))]
    fn hash_key(&self, key: &Bound<'_, PyAny>) -> PyResult<u64> {
        Ok(self.current.load().ring.hash_key(&*key_bytes(key)?))
    }

    /// get(key) -> str: the id of the node owning `key` (str, hashed as
    /// UTF-8, or bytes-like). Raises EmptyRingError (a LookupError) when no
    /// node has weight > 0, TypeError for other key types.
    #[pyo3(signature = (key, /))]
    fn get(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Py<PyString>> {
        let key = key_bytes(key)?;
        let snapshot = self.current.load();
        let index = snapshot.ring.get_index(&key).map_err(to_py_err)?;
        Ok(snapshot.id(py, index))
    }

    /// get_by_hash(hash) -> str: the id of the node owning ring position
    /// `hash` (an int in [0, 2**64), e.g. from hash_key). Raises EmptyRingError.
    #[pyo3(signature = (hash, /))]
    fn get_by_hash(&self, py: Python<'_>, hash: &Bound<'_, PyAny>) -> PyResult<Py<PyString>> {
        let hash: u64 = match hash.extract() {
            Ok(hash) => hash,
            // An int beyond 64 bits is out of range for every algorithm.
            Err(_) if hash.is_instance_of::<pyo3::types::PyInt>() => {
                let message = format!("hash {hash} is out of range: key hashes are below 2^64");
                return Err(PyErr::from_type(crate::package_class(py, "HashOutOfRangeError")?, message));
            }
            Err(e) => return Err(e),
        };
        let snapshot = self.current.load();
        let index = snapshot.ring.index_by_hash(hash).map_err(to_py_err)?;
        Ok(snapshot.id(py, index))
    }

    /// get_n(key, n) -> list[str]: the key's preference list, up to `n`
    /// distinct node ids clockwise from the key, the first being get(key);
    /// nodes of distinct zones first when nodes have zones; every node with
    /// weight > 0 once when n exceeds their number. Follows Dynamo's
    /// preference list. Raises as get; OverflowError for a negative n.
    #[pyo3(signature = (key, n, /))]
    fn get_n(&self, py: Python<'_>, key: &Bound<'_, PyAny>, n: usize) -> PyResult<Vec<Py<PyString>>> {
        let key = key_bytes(key)?;
        let snapshot = self.current.load();
        let mut indices = vec![0usize; n.min(snapshot.ids.len())];
        let found = snapshot.ring.get_n_indices(&key, &mut indices).map_err(to_py_err)?;
        Ok(indices[..found].iter().map(|&i| snapshot.id(py, i)).collect())
    }

    /// get_many(keys) -> list[str]: the owner of every key of an iterable,
    /// in key order. Places the keys without holding the GIL. Raises as get.
    #[pyo3(signature = (keys, /))]
    fn get_many<'py>(&self, py: Python<'py>, keys: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let packed = pack_keys(keys)?;
        let snapshot = self.snapshot();
        let mut indices = vec![0usize; packed.len()];
        py.detach(|| snapshot.ring.get_indices(packed.iter(), &mut indices)).map_err(to_py_err)?;
        PyList::new(py, indices.iter().map(|&i| snapshot.ids[i].bind(py)))
    }

    /// with_node(node) -> Ring: a new ring with `node` (a str id of weight
    /// 1.0, or a Node) added; only keys the new node now owns move. Raises
    /// InvalidNodeError (duplicate id included) or InvalidConfigError.
    fn with_node(&self, py: Python<'_>, node: &Bound<'_, PyAny>) -> PyResult<PyRing> {
        let node = to_node(node)?;
        Ok(PyRing::from_ring(py, self.derive(py, |ring| ring.with_node(node))?))
    }

    /// without_node(id) -> Ring: a new ring without node `id`; only its keys
    /// move. Raises UnknownNodeError (a KeyError).
    fn without_node(&self, py: Python<'_>, id: &str) -> PyResult<PyRing> {
        Ok(PyRing::from_ring(py, self.derive(py, |ring| ring.without_node(id))?))
    }

    /// with_weight(id, weight) -> Ring: a new ring with node `id` at
    /// `weight`; raising it moves keys only to that node, lowering it only
    /// away. Raises UnknownNodeError, InvalidNodeError or InvalidConfigError.
    fn with_weight(&self, py: Python<'_>, id: &str, weight: f64) -> PyResult<PyRing> {
        Ok(PyRing::from_ring(py, self.derive(py, |ring| ring.with_weight(id, weight))?))
    }

    /// add_node(node) -> None: adds a node to this ring in place (see
    /// with_node). Readers on other threads see the old or the new ring, whole.
    fn add_node(&self, py: Python<'_>, node: &Bound<'_, PyAny>) -> PyResult<()> {
        let node = to_node(node)?;
        self.update(py, |ring| ring.with_node(node))
    }

    /// remove_node(id) -> None: removes a node in place (see without_node).
    fn remove_node(&self, py: Python<'_>, id: &str) -> PyResult<()> {
        self.update(py, |ring| ring.without_node(id))
    }

    /// set_weight(id, weight) -> None: re-weights a node in place (see with_weight).
    fn set_weight(&self, py: Python<'_>, id: &str, weight: f64) -> PyResult<()> {
        self.update(py, |ring| ring.with_weight(id, weight))
    }

    /// ownership() -> dict[str, float]: each node's exact share of the hash
    /// space (of uniformly hashed keys), from arc lengths; drained nodes own 0.
    fn ownership<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let snapshot = self.snapshot();
        let shares = py.detach(|| snapshot.ring.ownership().into_iter().map(|(_, share)| share).collect::<Vec<f64>>());
        let dict = PyDict::new(py);
        for (id, share) in snapshot.ids.iter().zip(shares) {
            dict.set_item(id.bind(py), share)?;
        }
        Ok(dict)
    }

    /// balance(keys) -> Balance: places every key of a sample (without the
    /// GIL) and measures how evenly they spread. Raises EmptyRingError.
    fn balance(&self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<PyBalance> {
        let packed = pack_keys(keys)?;
        let snapshot = self.snapshot();
        let balance = py.detach(|| snapshot.ring.balance(packed.iter())).map_err(to_py_err)?;
        PyBalance::new(py, &snapshot, balance)
    }

    fn __len__(&self) -> usize {
        self.current.load().ids.len()
    }

    fn __contains__(&self, id: &Bound<'_, PyAny>) -> bool {
        match id.cast::<PyString>().ok().and_then(|id| id.to_cow().ok()) {
            Some(id) => self.current.load().ring.position(&id).is_some(),
            None => false,
        }
    }

    /// Iterates over the node ids, in order.
    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let snapshot = self.current.load();
        let ids = PyTuple::new(py, snapshot.ids.iter().map(|id| id.bind(py)))?;
        ids.try_iter().map(Bound::into_any)
    }

    fn __repr__(&self) -> String {
        let snapshot = self.current.load();
        let ring = &snapshot.ring;
        let shown: Vec<String> = ring.nodes().iter().take(5).map(|n| format!("{:?}", n.id())).collect();
        let more =
            if ring.nodes().len() > 5 { format!(", ... {} more", ring.nodes().len() - 5) } else { String::new() };
        format!(
            "Ring([{}{more}], algorithm={:?}, {}seed={}, points={}, fingerprint={:#018x})",
            shown.join(", "),
            ring.algorithm().name(),
            ring.vnodes().map(|v| format!("vnodes={v}, ")).unwrap_or_default(),
            ring.seed(),
            ring.point_count(),
            ring.fingerprint()
        )
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, (String,))> {
        let rebuild = py.import("shardring._shardring")?.getattr("_ring_from_json")?;
        Ok((rebuild, (self.to_json(),)))
    }
}

/// An int argument in [0, 2**32): a ValueError naming it otherwise, a
/// TypeError for bools and non-ints.
fn u32_argument(name: &str, value: &Bound<'_, PyAny>) -> PyResult<u32> {
    if value.is_instance_of::<pyo3::types::PyBool>() || !value.is_instance_of::<pyo3::types::PyInt>() {
        let kind = value.get_type().name()?;
        return Err(PyTypeError::new_err(format!("{name} must be an int, got {kind}")));
    }
    value.extract::<u32>().map_err(|_| {
        pyo3::exceptions::PyValueError::new_err(format!("{name} must be an int from 0 to 4294967295, got {value}"))
    })
}

/// Unpickles a Ring from its JSON config.
#[pyfunction]
pub(crate) fn _ring_from_json(py: Python<'_>, config: &str) -> PyResult<PyRing> {
    PyRing::from_json(py, config)
}
