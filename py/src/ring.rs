//! `shardring.Ring`: an immutable snapshot behind an atomic pointer, so the
//! mutating conveniences swap whole snapshots under concurrent readers.

use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use shardring::{
    Distribution, EndpointOrder, HashFunction, KeyHash, ParamValue, RendezvousScore, Ring, ServerIds, ServerKey,
};

use crate::errors::{Argument, number_argument, package_class, text_argument, to_py_err, type_name, whole_argument};
use crate::keys::{hash_keys, key_bytes, pack_keys};
use crate::options::{ring_params, to_ids, to_node, to_nodes, to_options};

// The Python signatures spell the core's defaults out, so introspection shows them.
const _: () = assert!(shardring::DEFAULT_VNODES == 160 && shardring::DEFAULT_SEED == 0);
const _: () = assert!(shardring::maglev::DEFAULT_TABLE_SIZE == 65_537);

/// One ring and its node ids as Python strings (built once, so lookups
/// return without allocating).
pub(crate) struct Snapshot {
    /// Shared, so a LoadTracker over this ring holds the same snapshot.
    pub(crate) ring: Arc<Ring>,
    ids: Vec<Py<PyString>>,
}

impl Snapshot {
    fn new(py: Python<'_>, ring: Ring) -> Arc<Snapshot> {
        Snapshot::of(py, Arc::new(ring))
    }

    /// A snapshot of a shared ring (a follower's).
    pub(crate) fn of(py: Python<'_>, ring: Arc<Ring>) -> Arc<Snapshot> {
        let ids = ring.nodes().iter().map(|n| PyString::new(py, n.id()).unbind()).collect();
        Arc::new(Snapshot { ring, ids })
    }

    fn id(&self, py: Python<'_>, index: usize) -> Py<PyString> {
        self.ids[index].clone_ref(py)
    }
}

/// A fingerprint as the text every binding and the CLI print: 16 lowercase
/// hex digits, zero-padded (`"53712479e1fdae70"`).
pub(crate) fn fingerprint_hex(fingerprint: u64) -> String {
    format!("{fingerprint:016x}")
}

/// What `Ring.balance` measured: the core's balance of a sample and the
/// ring it was placed on. The `analysis` room, home of the analysis
/// results, turns it into a `shardring.Balance` (its `IntoPyObject`), so the
/// ring does not import the room that imports it.
pub(crate) struct RingBalance {
    pub(crate) ring: Arc<Ring>,
    pub(crate) balance: shardring::Balance,
}

/// Ring(nodes, *, algorithm="ring", vnodes=160, seed=0, table_size=65537, distribution=..., key_hash=..., server_ids=..., hash_tag=..., default_port=..., min_ring_size=..., max_ring_size=..., hash_function=..., endpoint_order=..., avalanche=..., server_key=..., haproxy_ids=..., buckets=..., removed_buckets=..., score=...)
///
/// A consistent-hash ring (placement format 1, core/SPEC.md).
///
/// nodes: a list of node ids (weight 1.0 each) or of `Node(id, weight,
/// zone)` objects, or a dict id -> weight. A weight is relative capacity,
/// finite and >= 0 (0 = drained: a member owning no keys); on the "ring"
/// algorithm a node owns round(vnodes * weight) points.
/// algorithm: "ring", "ketama", "ketama-spy", "libketama" (memcached
/// clients, ids "host:port", whole-number weights), "nginx", "jump" (weights
/// 1), "rendezvous", "maglev", "slots" (Redis Cluster), "libmemcached"
/// (exactly as libmemcached / pylibmc place keys; weight 0 is read as 1) or
/// "twemproxy" (exactly as nutcracker places keys; weights >= 1).
/// vnodes: points per unit of weight (>= 1, default 160), "ring" only.
/// seed: seed of the XXH3 hashes, 0 <= seed < 2**64 ("ring", "jump",
/// "rendezvous", "maglev", "jumpback", "memento"). table_size: Maglev table
/// size, a prime (default 65537). score: "rendezvous" only, "integer" (the
/// default, the same on every platform) or "float" (placement format 1's,
/// with the platform's ln).
/// distribution: "libmemcached": "modula", "consistent_ketama" (the
/// default), "consistent_weighted", "consistent_ketama_spy" or
/// "consistent_ketama_spy_weighted"; "twemproxy": "ketama" (the default) or
/// "modula". key_hash: "libmemcached": "one_at_a_time", "md5", "crc32",
/// "fnv1_64", "fnv1a_64", "fnv1_32", "fnv1a_32", "murmur", "jenkins" or
/// "murmur3" (default md5 for the weighted distributions, else
/// one_at_a_time); "twemproxy": its hash: values (default "fnv1a_64").
/// server_ids: "twemproxy" only: "address" (default; ids are host:port) or "label"
/// (ids are server names, used literally). hash_tag: "twemproxy" only, two
/// characters such as "{}". "uhashring", "uhashring-ketama" and
/// "hashring-js" (to move off those libraries without emptying caches) take
/// vnodes (defaults 160, 40 and 40); "hashring-js" also distribution
/// ("ketama", its default compatibility, or "hash_ring") and default_port.
/// The load balancers' modes: "envoy-ring-hash" and "grpc-ring-hash" take
/// min_ring_size and max_ring_size (1 to 8388608; defaults 1024 and 8388608,
/// gRPC 4096, gRPC capping both at 4096) and hash_function ("xx_hash", the
/// default, or Envoy's "murmur_hash_2"); "grpc-ring-hash" also
/// endpoint_order ("given", gRPC C-core's and the default, or "by_key",
/// grpc-go's); "envoy-maglev" takes table_size; "haproxy" takes
/// hash_function ("sdbm", the default, "djb2", "wt6", "crc32"), avalanche
/// (a bool; default True without hash_function, else False), server_key
/// ("id", "id_full_hash", "id32") and haproxy_ids (a mapping of node id to
/// HAProxy server id, from 1; unlisted servers get the id HAProxy assigns).
/// "jumpback" (JumpBackHash, bit-exact with hash4j) and "memento"
/// (MementoHash: any node can be removed, only its keys move) take weights
/// of 1; "memento" also takes its removal history: removed_buckets (the
/// removed buckets, oldest first, as to_json writes them) and buckets (a
/// mapping of node id to bucket; unlisted nodes take the free buckets in
/// ascending order). Derive memento rings (remove_node, add_node) or read
/// them with from_json: a node list alone forgets the history.
/// Leave a parameter out for its default: None is not a value, and a bool is
/// not a number (both raise TypeError).
///
/// Keys are str (hashed as UTF-8) or bytes-like; "abc" and b"abc" land on the
/// same node. Lookups read one whole snapshot even while another thread calls
/// add_node, remove_node or set_weight.
///
/// Raises InvalidNodeError (a ValueError) for an empty or duplicate id, a NaN,
/// infinite or negative weight, a weight the algorithm cannot express, a bad
/// ketama address or an empty zone; InvalidConfigError (a ValueError) for
/// vnodes 0, more than 2**24 points, an unknown algorithm, a parameter the
/// algorithm does not take or a bad Maglev table size, naming the keyword, the
/// value and the names accepted; OutOfRangeError (a ValueError) for an int
/// the keyword cannot hold (seed -1, vnodes 2**32); InvalidUtf8Error (a
/// UnicodeError) for an id holding a lone surrogate; TypeError for nodes or
/// parameters of another type.
#[pyclass(frozen, module = "shardring", name = "Ring")]
pub struct PyRing {
    /// Shared with every LoadTracker over this ring, which follows it.
    current: Arc<ArcSwap<Snapshot>>,
    /// Serialises the mutating methods so none of their updates is lost.
    writer: Mutex<()>,
    /// Set for a Follower's ring, which only its source changes.
    followed: bool,
    /// Counts lookups once `count_lookups` was called: every snapshot
    /// stored from then on counts into it.
    counter: Mutex<Option<shardring::LookupCounter>>,
    /// Observes the keys of lookups once `watch_hot_keys` was called.
    hot: Mutex<Option<Arc<shardring::HotKeys>>>,
}

impl PyRing {
    pub(crate) fn from_ring(py: Python<'_>, ring: Ring) -> PyRing {
        PyRing {
            current: Arc::new(ArcSwap::new(Snapshot::new(py, ring))),
            writer: Mutex::new(()),
            followed: false,
            counter: Mutex::new(None),
            hot: Mutex::new(None),
        }
    }

    /// A ring whose snapshots a Follower stores into `cell`; its in-place
    /// methods raise, as the follower would overwrite their change.
    pub(crate) fn followed(cell: Arc<ArcSwap<Snapshot>>) -> PyRing {
        PyRing {
            current: cell,
            writer: Mutex::new(()),
            followed: true,
            counter: Mutex::new(None),
            hot: Mutex::new(None),
        }
    }

    pub(crate) fn snapshot(&self) -> Arc<Snapshot> {
        self.current.load_full()
    }

    /// The cell holding this ring's current snapshot, which the in-place
    /// methods replace.
    pub(crate) fn cell(&self) -> Arc<ArcSwap<Snapshot>> {
        Arc::clone(&self.current)
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
        if self.followed {
            return Err(PyTypeError::new_err(
                "this Ring belongs to a Follower, which replaces it on every membership change: change the membership (etcd, or the config file) instead",
            ));
        }
        // Waits for the lock with the GIL released, so a writer never deadlocks with the GIL.
        let _writer = self.writer.lock_py_attached(py).unwrap_or_else(|poisoned| poisoned.into_inner());
        let ring = self.derive(py, change)?;
        let ring = match self.counter.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            Some(counter) => counter.count(ring),
            None => ring,
        };
        let ring = match self.hot.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            Some(sketch) => sketch.watch(ring),
            None => ring,
        };
        self.current.store(Snapshot::new(py, ring));
        Ok(())
    }

    fn refuse_followed(&self) -> PyResult<()> {
        if self.followed {
            return Err(PyTypeError::new_err(
                "this Ring belongs to a Follower, which counts its lookups: follower.lookup_counts()",
            ));
        }
        Ok(())
    }
}

/// A parameter's value as a Python literal, for `repr`.
fn python_literal(value: &ParamValue) -> String {
    match value {
        ParamValue::Whole(v) => v.to_string(),
        ParamValue::Text(text) => format!("'{}'", text.replace('\\', "\\\\").replace('\'', "\\'")),
        ParamValue::Flag(flag) => if *flag { "True" } else { "False" }.to_owned(),
        ParamValue::Wholes(values) => format!("{values:?}"),
        _ => format!("{value}"),
    }
}

#[pymethods]
impl PyRing {
    /// watch_hot_keys(sketch: HotKeys) -> None: from now on, show `sketch`
    /// the key of every lookup by key on this ring (get and its variants,
    /// each key of a batch, get_n), across add_node / remove_node /
    /// set_weight; lookups by hash are not shown. TypeError on a
    /// Follower's ring.
    fn watch_hot_keys(&self, py: Python<'_>, sketch: &crate::sketch::PyHotKeys) -> PyResult<()> {
        self.refuse_followed()?;
        let _writer = self.writer.lock_py_attached(py).unwrap_or_else(|poisoned| poisoned.into_inner());
        let snapshot = self.current.load_full();
        let ring = sketch.sketch.watch((*snapshot.ring).clone());
        self.current.store(Snapshot::new(py, ring));
        *self.hot.lock().unwrap_or_else(|p| p.into_inner()) = Some(Arc::clone(&sketch.sketch));
        Ok(())
    }

    /// count_lookups() -> None: from now on, count the lookups on this ring
    /// per node (get and its variants, each key of a batch, get_n's first
    /// node), across add_node / remove_node / set_weight; about 1.7 ns a
    /// lookup. Calling it again changes nothing. TypeError on a Follower's
    /// ring (the follower counts: follower.lookup_counts()).
    fn count_lookups(&self, py: Python<'_>) -> PyResult<()> {
        self.refuse_followed()?;
        let _writer = self.writer.lock_py_attached(py).unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut counter = self.counter.lock().unwrap_or_else(|p| p.into_inner());
        if counter.is_none() {
            let fresh = shardring::LookupCounter::new();
            let snapshot = self.current.load_full();
            // With the GIL: `lookup_counts` takes `counter` holding it.
            let ring = fresh.count((*snapshot.ring).clone());
            self.current.store(Snapshot::new(py, ring));
            *counter = Some(fresh);
        }
        Ok(())
    }

    /// lookup_counts() -> dict[str, int]: the lookups counted since
    /// count_lookups(), per node id (empty before). TypeError on a
    /// Follower's ring.
    fn lookup_counts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
        self.refuse_followed()?;
        let counts = self.counter.lock().unwrap_or_else(|p| p.into_inner()).as_ref().map(|c| c.snapshot());
        let dict = pyo3::types::PyDict::new(py);
        for (id, count) in counts.unwrap_or_default().counts {
            dict.set_item(id, count)?;
        }
        Ok(dict)
    }

    #[new]
    #[pyo3(
        signature = (nodes, *, haproxy_ids = Argument::Absent, buckets = Argument::Absent, **params),
        text_signature = "(nodes, *, algorithm='ring', haproxy_ids=..., buckets=..., **params)"
    )]
    fn new(
        py: Python<'_>,
        nodes: &Bound<'_, PyAny>,
        haproxy_ids: Argument<'_>,
        buckets: Argument<'_>,
        params: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyRing> {
        let params = ring_params(params)?;
        let haproxy_ids = haproxy_ids.map(|ids| to_ids(ids, "haproxy_ids"))?;
        let buckets = buckets.map(|b| to_ids(b, "buckets"))?;
        let nodes = to_nodes(nodes)?;
        let mut builder = Ring::builder().params(params).nodes(nodes);
        for (id, puid) in haproxy_ids.unwrap_or_default() {
            builder = builder.haproxy_id(id, puid);
        }
        for (id, bucket) in buckets.unwrap_or_default() {
            builder = builder.bucket(id, bucket);
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

    /// The algorithm and its parameters as the ring resolved them, as a dict
    /// of the keyword options that rebuild it (`Ring(nodes, **ring.params)`
    /// with the same per-node ids and buckets).
    #[getter]
    fn params<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        to_options(py, &self.current.load().ring.params())
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

    /// The peer's distribution ("libmemcached" and "twemproxy" only; None otherwise).
    #[getter]
    fn distribution(&self) -> Option<&'static str> {
        self.current.load().ring.distribution().map(Distribution::name)
    }

    /// The named 32-bit key hash of a peer-compatible mode ("md5" for the
    /// ketama modes, "crc32a" for nginx, the configured one for
    /// "libmemcached"); None for the XXH3 algorithms and "slots".
    #[getter]
    fn key_hash(&self) -> Option<&'static str> {
        self.current.load().ring.named_key_hash().map(KeyHash::name)
    }

    /// What node ids are, "address" or "label" ("twemproxy" only; None otherwise).
    #[getter]
    fn server_ids(&self) -> Option<&'static str> {
        self.current.load().ring.server_ids().map(ServerIds::name)
    }

    /// npm hashring's default port ("hashring-js" only, when set; None otherwise).
    #[getter]
    fn default_port(&self) -> Option<u16> {
        self.current.load().ring.default_port()
    }

    /// twemproxy's hash tag ("twemproxy" only, when set; None otherwise).
    #[getter]
    fn hash_tag(&self) -> Option<String> {
        self.current.load().ring.hash_tag()
    }

    /// The ring sizes (minimum, maximum) as resolved ("envoy-ring-hash",
    /// "grpc-ring-hash"; None otherwise).
    #[getter]
    fn ring_sizes(&self) -> Option<(u64, u64)> {
        self.current.load().ring.ring_sizes()
    }

    /// The balancer's hash function ("envoy-ring-hash", "grpc-ring-hash", "haproxy"; None otherwise).
    #[getter]
    fn hash_function(&self) -> Option<&'static str> {
        self.current.load().ring.hash_function().map(HashFunction::name)
    }

    /// gRPC's endpoint order, "given" or "by_key" ("grpc-ring-hash" only; None otherwise).
    #[getter]
    fn endpoint_order(&self) -> Option<&'static str> {
        self.current.load().ring.endpoint_order().map(EndpointOrder::name)
    }

    /// Whether request hashes pass through full_hash ("haproxy" only; None otherwise).
    #[getter]
    fn avalanche(&self) -> Option<bool> {
        self.current.load().ring.avalanche()
    }

    /// What HAProxy node keys derive from ("haproxy" only; None otherwise).
    #[getter]
    fn server_key(&self) -> Option<&'static str> {
        self.current.load().ring.server_key().map(ServerKey::name)
    }

    /// The HAProxy server ids given, node id -> id ("haproxy" only; None otherwise).
    #[getter]
    fn haproxy_ids(&self) -> Option<std::collections::BTreeMap<String, u32>> {
        let snapshot = self.current.load();
        Some(snapshot.ring.haproxy_ids()?.into_iter().map(|(id, puid)| (id.to_owned(), puid)).collect())
    }

    /// How nodes are scored, "integer" or "float" ("rendezvous" only; None otherwise).
    #[getter]
    fn score(&self) -> Option<&'static str> {
        self.current.load().ring.score().map(RendezvousScore::name)
    }

    /// Each node's bucket, node id -> bucket ("memento" only; None otherwise).
    #[getter]
    fn buckets(&self) -> Option<std::collections::BTreeMap<String, u32>> {
        let snapshot = self.current.load();
        let ring = &snapshot.ring;
        Some(ring.nodes().iter().map(|n| n.id().to_owned()).zip(ring.buckets()?.iter().copied()).collect())
    }

    /// The removed buckets in removal order, oldest first ("memento" only; None otherwise).
    #[getter]
    fn removed_buckets(&self) -> Option<Vec<u32>> {
        self.current.load().ring.removed_buckets().map(<[u32]>::to_vec)
    }

    /// Seed of the key and point hashes.
    #[getter]
    fn seed(&self) -> u64 {
        self.current.load().ring.seed()
    }

    /// Total number of points on the ring (0 for jump, jumpback, memento, rendezvous, maglev, slots, modula, haproxy).
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

    /// The fingerprint as text, 16 lowercase hex digits, zero-padded: what
    /// the CLI prints and every binding's `fingerprint_hex` gives.
    #[getter]
    fn fingerprint_hex(&self) -> String {
        fingerprint_hex(self.current.load().ring.fingerprint())
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
    /// "rendezvous", "maglev", "jumpback", "memento"); the first 4
    /// bytes of MD5, little-endian (ketama modes); CRC-32 ("nginx"); the Redis
    /// Cluster slot ("slots"); a compatibility mode's peer's hash otherwise.
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
        if hash.is_instance_of::<pyo3::types::PyBool>() || !hash.is_instance_of::<pyo3::types::PyInt>() {
            return Err(PyTypeError::new_err(format!("hash must be an int, not {}", type_name(hash))));
        }
        let Ok(hash) = hash.extract::<u64>() else {
            // An int beyond 64 bits (or below 0) is out of range for every algorithm.
            let message = format!("hash {hash} is out of range: key hashes are in [0, 2^64)");
            return Err(crate::errors::raise(py, "HashOutOfRangeError", "RING_HASH_OUT_OF_RANGE", message));
        };
        let snapshot = self.current.load();
        let index = snapshot.ring.index_by_hash(hash).map_err(to_py_err)?;
        Ok(snapshot.id(py, index))
    }

    /// get_n(key, n) -> list[str]: the key's preference list, up to `n`
    /// distinct node ids clockwise from the key, the first being get(key);
    /// nodes of distinct zones first when nodes have zones; every node with
    /// weight > 0 once when n exceeds their number. Follows Dynamo's
    /// preference list. Raises as get; OutOfRangeError (a ValueError) for a
    /// negative n, TypeError for a bool or non-int n.
    #[pyo3(signature = (key, n, /))]
    fn get_n(&self, py: Python<'_>, key: &Bound<'_, PyAny>, n: &Bound<'_, PyAny>) -> PyResult<Vec<Py<PyString>>> {
        let n = whole_argument(n, "n", u64::MAX)? as usize;
        let key = key_bytes(key)?;
        let snapshot = self.current.load();
        let mut indices = vec![0usize; n.min(snapshot.ids.len())];
        let found = snapshot.ring.get_n_indices(&key, &mut indices).map_err(to_py_err)?;
        Ok(indices[..found].iter().map(|&i| snapshot.id(py, i)).collect())
    }

    /// get_many(keys) -> list[str]: the owner of every key of an iterable,
    /// in key order. Hashes each key as it reads it, then places the hashes
    /// without holding the GIL. Raises as get.
    #[pyo3(signature = (keys, /))]
    fn get_many<'py>(&self, py: Python<'py>, keys: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let snapshot = self.snapshot();
        let hashes = hash_keys(&snapshot.ring, keys)?;
        let mut indices = vec![0usize; hashes.len()];
        py.detach(|| snapshot.ring.get_indices_by_hash(&hashes, &mut indices)).map_err(to_py_err)?;
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
    fn without_node(&self, py: Python<'_>, id: &Bound<'_, PyAny>) -> PyResult<PyRing> {
        let id = text_argument(id, "id")?;
        Ok(PyRing::from_ring(py, self.derive(py, |ring| ring.without_node(&id))?))
    }

    /// with_weight(id, weight) -> Ring: a new ring with node `id` at
    /// `weight`; raising it moves keys only to that node, lowering it only
    /// away. Raises UnknownNodeError, InvalidNodeError or InvalidConfigError.
    fn with_weight(&self, py: Python<'_>, id: &Bound<'_, PyAny>, weight: &Bound<'_, PyAny>) -> PyResult<PyRing> {
        let (id, weight) = (text_argument(id, "id")?, number_argument(weight, "weight")?);
        Ok(PyRing::from_ring(py, self.derive(py, |ring| ring.with_weight(&id, weight))?))
    }

    /// add_node(node) -> None: adds a node to this ring in place (see
    /// with_node). Readers on other threads see the old or the new ring, whole.
    fn add_node(&self, py: Python<'_>, node: &Bound<'_, PyAny>) -> PyResult<()> {
        let node = to_node(node)?;
        self.update(py, |ring| ring.with_node(node))
    }

    /// remove_node(id) -> None: removes a node in place (see without_node).
    fn remove_node(&self, py: Python<'_>, id: &Bound<'_, PyAny>) -> PyResult<()> {
        let id = text_argument(id, "id")?;
        self.update(py, |ring| ring.without_node(&id))
    }

    /// set_weight(id, weight) -> None: re-weights a node in place (see with_weight).
    fn set_weight(&self, py: Python<'_>, id: &Bound<'_, PyAny>, weight: &Bound<'_, PyAny>) -> PyResult<()> {
        let (id, weight) = (text_argument(id, "id")?, number_argument(weight, "weight")?);
        self.update(py, |ring| ring.with_weight(&id, weight))
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
    fn balance(&self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<RingBalance> {
        let packed = pack_keys(keys)?;
        let ring = Arc::clone(&self.snapshot().ring);
        let balance = py.detach(|| ring.balance(packed.iter())).map_err(to_py_err)?;
        Ok(RingBalance { ring, balance })
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

    /// Ring([Node('a', 1.0), Node('b', 2.0, zone='us-east'), ...], algorithm=..., ...):
    /// the first 8 nodes with weights and zones, the parameters, the point
    /// count and the fingerprint.
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        const SHOWN: usize = 8;
        let snapshot = self.current.load();
        let ring = &snapshot.ring;
        let mut nodes = Vec::with_capacity(SHOWN + 1);
        for (node, id) in ring.nodes().iter().zip(&snapshot.ids).take(SHOWN) {
            let zone = match node.zone() {
                Some(zone) => format!(", zone={}", PyString::new(py, zone).repr()?),
                None => String::new(),
            };
            nodes.push(format!("Node({}, {:?}{zone})", id.bind(py).repr()?, node.weight()));
        }
        if ring.nodes().len() > SHOWN {
            nodes.push(format!("... {} more", ring.nodes().len() - SHOWN));
        }
        let parameters: Vec<String> = ring
            .params()
            .values()
            .into_iter()
            .filter(|(name, _)| *name != "algorithm")
            .map(|(name, value)| format!("{name}={}", python_literal(&value)))
            .collect();
        let parameters: String = parameters.iter().map(|p| format!(", {p}")).collect();
        Ok(format!(
            "Ring([{}], algorithm='{}'{parameters}, points={}, fingerprint={:#018x})",
            nodes.join(", "),
            ring.algorithm().name(),
            ring.point_count(),
            ring.fingerprint()
        ))
    }

    /// Two rings are equal when their fingerprints are: they hold the same
    /// algorithm, parameters and nodes (and, where it places keys, node
    /// order), so they place every key identically. A Ring changes in place,
    /// so it is not hashable; compare `fingerprint`s to key a dict.
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let py = other.py();
        Ok(match other.cast::<PyRing>() {
            Ok(other) => {
                let same = self.current.load().ring.fingerprint() == other.get().current.load().ring.fingerprint();
                pyo3::types::PyBool::new(py, same).to_owned().into_any().unbind()
            }
            Err(_) => py.NotImplemented(),
        })
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, (String,))> {
        let rebuild = py.import("shardring._shardring")?.getattr("_ring_from_json")?;
        Ok((rebuild, (self.to_json(),)))
    }
}

/// Unpickles a Ring from its JSON config.
#[pyfunction]
pub(crate) fn _ring_from_json(py: Python<'_>, config: &str) -> PyResult<PyRing> {
    PyRing::from_json(py, config)
}
