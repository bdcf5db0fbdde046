//! `shardring.Follower`: a ring kept current from etcd or a config file by
//! the `shardring-membership` crate's follower thread. The thread stores
//! each new ring into the follower's `Ring` object (whole snapshots, so
//! readers never see a torn ring) and then calls `on_change` callbacks;
//! `events()` iterates over everything the follower reports.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arc_swap::ArcSwap;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use shardring::Transition;
use shardring_membership::{
    Epoch, EtcdAccess, EtcdCredentials, Event, Follower, FollowerOptions, MembershipError, Secret,
};

use crate::errors::{Argument, number_argument, out_of_range, raise, whole_argument};

/// Default of every `timeout`: 5 seconds.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);
use crate::ring::{PyRing, Snapshot, fingerprint_hex};

/// A membership error as its `shardring` exception, a `RingError` with the
/// code Node's follower gives it: a timeout is `FollowerTimeoutError` (a
/// `TimeoutError`), a refusal by etcd `RefusedError` (a `SourceError`, with
/// `refusal` its kind), bad endpoints, prefixes or records
/// `InvalidConfigError`, a failing source `SourceError` (a
/// `ConnectionError`), a stopped follower `FollowerClosedError`.
fn membership_error(py: Python<'_>, error: MembershipError) -> PyErr {
    if let MembershipError::Refused { refusal, .. } = &error {
        let raised = raise(py, "RefusedError", "RING_REFUSED", error.to_string());
        return match raised.value(py).setattr("refusal", refusal.name()) {
            Ok(()) => raised,
            Err(failed) => failed,
        };
    }
    let (class, code) = match error {
        MembershipError::Timeout { .. } => ("FollowerTimeoutError", "RING_TIMEOUT"),
        MembershipError::Record { .. }
        | MembershipError::InvalidPrefix { .. }
        | MembershipError::InvalidEndpoint { .. }
        | MembershipError::InvalidUser { .. }
        | MembershipError::InvalidClientReport(_)
        | MembershipError::InvalidHotKeys(_) => ("InvalidConfigError", "RING_INVALID_CONFIG"),
        MembershipError::Stopped => ("FollowerClosedError", "RING_STOPPED"),
        MembershipError::File { .. } | MembershipError::Secret(_) => ("SourceError", "RING_FILE"),
        _ => ("SourceError", "RING_ETCD"),
    };
    raise(py, class, code, error.to_string())
}

/// `FollowerClosedError`: the follower was closed.
fn closed(py: Python<'_>) -> PyErr {
    raise(py, "FollowerClosedError", "RING_STOPPED", "the follower is closed".to_owned())
}

/// An event as a dict: `{"kind": "epoch", "epoch", "revision", "fingerprint",
/// "fingerprint_hex", "changed", "moved_share", "flows"}`, `{"kind": "rejected", "key",
/// "message"}`, `{"kind": "disconnected", "message"}` or `{"kind":
/// "reconnected", "revision", "down_for"}` (seconds).
fn event_dict<'py>(py: Python<'py>, event: &Event) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    match event {
        Event::Epoch { epoch, revision, fingerprint, changed, diff } => {
            dict.set_item("kind", "epoch")?;
            dict.set_item("epoch", epoch)?;
            dict.set_item("revision", revision)?;
            dict.set_item("fingerprint", fingerprint)?;
            dict.set_item("fingerprint_hex", fingerprint_hex(*fingerprint))?;
            dict.set_item("changed", changed)?;
            dict.set_item("moved_share", diff.as_ref().map(|d| d.moved_share))?;
            let flows = PyDict::new(py);
            for flow in diff.iter().flat_map(|d| &d.flows) {
                flows.set_item((flow.from.as_str(), flow.to.as_str()), flow.share)?;
            }
            dict.set_item("flows", flows)?;
        }
        Event::Rejected(rejected) => {
            dict.set_item("kind", "rejected")?;
            dict.set_item("key", &rejected.key)?;
            dict.set_item("message", &rejected.message)?;
        }
        Event::Disconnected { message } => {
            dict.set_item("kind", "disconnected")?;
            dict.set_item("message", message)?;
        }
        Event::Reconnected { revision, down_for } => {
            dict.set_item("kind", "reconnected")?;
            dict.set_item("revision", revision)?;
            dict.set_item("down_for", down_for.as_secs_f64())?;
        }
        _ => dict.set_item("kind", "other")?,
    }
    Ok(dict)
}

/// The callbacks and the ring cell the follower thread serves.
struct Listeners {
    cell: Arc<ArcSwap<Snapshot>>,
    /// The current epoch's transition (the ring's, with every member active).
    transition: ArcSwap<Transition>,
    callbacks: Mutex<Vec<Py<PyAny>>>,
}

impl Listeners {
    /// On the follower's thread, before waiters wake: publish a changed
    /// ring into the Python ring.
    fn publish(&self, epoch: &Arc<Epoch>) {
        self.transition.store(Arc::clone(&epoch.transition));
        if Arc::ptr_eq(&self.cell.load().ring, &epoch.ring) {
            return;
        }
        Python::attach(|py| self.cell.store(Snapshot::of(py, Arc::clone(&epoch.ring))));
    }

    /// On the follower's thread: call the callbacks with the event.
    fn serve(&self, event: &Event, _epoch: &Arc<Epoch>) {
        Python::attach(|py| {
            let callbacks: Vec<Py<PyAny>> =
                self.callbacks.lock().unwrap_or_else(|p| p.into_inner()).iter().map(|c| c.clone_ref(py)).collect();
            if callbacks.is_empty() {
                return;
            }
            let Ok(dict) = event_dict(py, event) else { return };
            for callback in callbacks {
                if let Err(error) = callback.call1(py, (&dict,)) {
                    // A failing callback must not stop the follower: report it as unraisable.
                    error.write_unraisable(py, Some(callback.bind(py)));
                }
            }
        });
    }
}

/// Follower.etcd(endpoints, prefix, *, timeout=5.0) / Follower.file(path, *, timeout=5.0)
///
/// A ring kept current by a background thread from the member records under
/// `prefix` in etcd (`core/SPEC.md`, Membership in etcd) or from a JSON ring
/// config file (re-read when replaced). The constructors return once the
/// first ring is read, or raise TimeoutError after `timeout` seconds.
///
/// `follower.ring` is a Ring that every lookup can use (get, get_n,
/// get_many, LoadTracker, ...); the follower replaces its snapshot on each
/// change, atomically. `revision` is the epoch it reflects; followers at one
/// revision hold the same `fingerprint`. `on_change(callback)` registers a
/// function called (on the follower's thread) with each event dict;
/// `events(timeout)` iterates over the events from its call on.
/// `wait_for_revision(revision, timeout)` blocks (without the GIL) until the
/// follower holds that revision.
#[pyclass(frozen, module = "shardring", name = "Follower")]
pub struct PyFollower {
    follower: Mutex<Option<Follower>>,
    /// Set first thing by `close`.
    closed: AtomicBool,
    ring: Py<PyRing>,
    listeners: Arc<Listeners>,
}

impl PyFollower {
    fn start(
        py: Python<'_>,
        timeout: Argument<'_>,
        start: impl FnOnce(FollowerOptions) -> Result<Follower, MembershipError> + Send,
    ) -> PyResult<PyFollower> {
        let timeout = timeout.map(|t| seconds(t, "timeout"))?.unwrap_or(DEFAULT_TIMEOUT);
        let empty = Snapshot::of(py, Arc::new(shardring::Ring::builder().build().expect("an empty ring builds")));
        let steady = Transition::steady(Arc::clone(&empty.ring));
        let listeners = Arc::new(Listeners {
            cell: Arc::new(ArcSwap::new(empty)),
            transition: ArcSwap::from_pointee(steady),
            callbacks: Mutex::new(Vec::new()),
        });
        let (hook_listeners, epoch_listeners) = (Arc::clone(&listeners), Arc::clone(&listeners));
        let options = FollowerOptions {
            initial_timeout: timeout,
            hook: Some(Box::new(move |event, epoch| hook_listeners.serve(event, epoch))),
            on_epoch: Some(Box::new(move |epoch| epoch_listeners.publish(epoch))),
            ..FollowerOptions::default()
        };
        // Without the GIL: the follower's thread takes it to publish the first ring.
        let follower = py.detach(|| start(options)).map_err(|e| membership_error(py, e))?;
        let ring = Py::new(py, PyRing::followed(Arc::clone(&listeners.cell)))?;
        Ok(PyFollower { follower: Mutex::new(Some(follower)), closed: AtomicBool::new(false), ring, listeners })
    }

    /// `use_it` of the follower; `FollowerClosedError` once it is closed.
    /// Every method but `close` (and `__exit__`) goes through it or
    /// [`PyFollower::open`], so a closed follower answers nothing, rather
    /// than some calls answering from its last ring and others raising.
    fn with<T>(&self, use_it: impl FnOnce(&Follower) -> T) -> PyResult<T> {
        let guard = self.follower.lock().unwrap_or_else(|p| p.into_inner());
        match guard.as_ref() {
            Some(follower) => Ok(use_it(follower)),
            None => Err(Python::attach(closed)),
        }
    }

    /// `FollowerClosedError` once the follower is closed: for the calls
    /// that read the rings the thread published (`ring`, `transition`,
    /// `read_nodes`, ...), without the lock a `wait_for_revision` in flight
    /// holds, so that readers on other threads never wait behind it.
    fn open(&self) -> PyResult<()> {
        if self.closed.load(Ordering::Acquire) { Err(Python::attach(closed)) } else { Ok(()) }
    }
}

/// A duration in seconds (int or float, not a bool), >= 0: `OutOfRangeError`
/// naming the value otherwise (NaN, negative, beyond `Duration`).
fn seconds(value: &Bound<'_, PyAny>, what: &str) -> PyResult<Duration> {
    let seconds = number_argument(value, what)?;
    Duration::try_from_secs_f64(seconds)
        .map_err(|_| out_of_range(value.py(), format!("{what} must be a number of seconds >= 0, got {value}")))
}

/// Endpoints as a str (comma-separated) or a list of str.
fn endpoint_list(endpoints: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    if let Ok(text) = endpoints.extract::<String>() {
        return Ok(text.split(',').map(str::to_owned).collect());
    }
    endpoints.extract::<Vec<String>>().map_err(|_| PyTypeError::new_err("endpoints must be a str or a list of str"))
}

#[pymethods]
impl PyFollower {
    /// Follower.etcd(endpoints, prefix, *, timeout=5.0, ca_file=None,
    /// cert_file=None, key_file=None, user=None, password=None,
    /// password_file=None) -> Follower: follows the ring under `prefix`
    /// (e.g. "/shardring/cache") in etcd at `endpoints`
    /// ("http://127.0.0.1:2379", comma-separated, or a list). TLS when an
    /// endpoint is https:// or a CA or client certificate is given (PEM
    /// files; the key file must be its owner's alone); etcd's auth with
    /// `user` and its password (a str, or the first line of an owner-only
    /// file), the token renewed when it expires. Raises RefusedError (a
    /// SourceError, code RING_REFUSED, `refusal` "tls", "authentication" or
    /// "permission") when no ring is read within `timeout` seconds and the
    /// last error was etcd refusing this client (the endpoint and the TLS
    /// or auth reason in the message), TimeoutError when no ring is read
    /// within `timeout` seconds otherwise, InvalidConfigError for a bad
    /// endpoint, prefix or user, SourceError (RING_FILE) for a TLS or
    /// password file that cannot be used, naming it. With `report_as`, the
    /// follower reports itself every `report_interval` seconds as
    /// `<prefix>/clients/<report_as>` (epoch, fingerprint, lookups per node)
    /// for `shardring fleet status`; InvalidConfigError for a bad id. With
    /// `hot_keys=True` it finds the hot keys of its lookups (a 64 KiB
    /// HotKeys sketch; follower.hot_keys()) and reports them too, for
    /// `shardring hot publish`.
    #[staticmethod]
    #[pyo3(signature = (endpoints, prefix, *, timeout = Argument::Absent, ca_file = None, cert_file = None, key_file = None, user = None, password = None, password_file = None, report_as = None, report_interval = 10.0, hot_keys = false),
           text_signature = "(endpoints, prefix, *, timeout=5.0, ca_file=None, cert_file=None, key_file=None, user=None, password=None, password_file=None, report_as=None, report_interval=10.0, hot_keys=False)")]
    #[allow(clippy::too_many_arguments)]
    fn etcd(
        py: Python<'_>,
        endpoints: &Bound<'_, PyAny>,
        prefix: &str,
        timeout: Argument<'_>,
        ca_file: Option<PathBuf>,
        cert_file: Option<PathBuf>,
        key_file: Option<PathBuf>,
        user: Option<String>,
        password: Option<String>,
        password_file: Option<PathBuf>,
        report_as: Option<String>,
        report_interval: f64,
        hot_keys: bool,
    ) -> PyResult<PyFollower> {
        let endpoints = endpoint_list(endpoints)?;
        let Ok(interval) = Duration::try_from_secs_f64(report_interval) else {
            let message = format!("report_interval {report_interval} must be a number of seconds > 0");
            return Err(raise(py, "InvalidConfigError", "RING_INVALID_CONFIG", message));
        };
        let report = report_as.map(|client_id| shardring_membership::ClientReport { client_id, interval });
        let password = password.map(Secret::new).transpose().map_err(|e| membership_error(py, e.into()))?;
        let credentials = EtcdCredentials { ca_file, cert_file, key_file, user, password, password_file };
        let access = EtcdAccess::new(&endpoints).with_credentials(&credentials).map_err(|e| membership_error(py, e))?;
        let prefix = prefix.to_owned();
        PyFollower::start(py, timeout, move |options| {
            let hot_keys = hot_keys.then(shardring::HotKeysOptions::default);
            Follower::etcd(access, &prefix, FollowerOptions { report, hot_keys, ..options })
        })
    }

    /// hot_keys() -> list[tuple[bytes, int, float]] | None: the hot keys of
    /// this follower's lookups, most requested first (key, requests,
    /// requests per second); None unless started with hot_keys=True.
    fn hot_keys<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, pyo3::types::PyList>>> {
        let Some(top) = self.with(|f| f.hot_keys())? else { return Ok(None) };
        let rows = top.into_iter().map(|k| (pyo3::types::PyBytes::new(py, &k.key), k.requests, k.rate));
        Ok(Some(pyo3::types::PyList::new(py, rows)?))
    }

    /// hot_set() -> HotSet: the fleet's hot set as last read from
    /// `<prefix>/hot` (empty before one is published).
    fn hot_set(&self) -> PyResult<crate::hot::PyHotSet> {
        Ok(crate::hot::PyHotSet { set: self.with(|f| f.hot_set())? })
    }

    /// plan(key) -> (read, read_copy, owner, copies, copy_key): where to
    /// read and write `key` now, by the fleet's hot set (HotSet.plan on
    /// the current ring). EmptyRingError.
    fn plan<'py>(&self, py: Python<'py>, key: &Bound<'py, PyAny>) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
        let key = crate::keys::key_bytes(key)?;
        let (ring, plan) = self.with(|f| f.plan(&key))?.map_err(crate::errors::to_py_err)?;
        crate::hot::plan_tuple(py, &ring, &plan)
    }

    /// report_near_cache(cache) -> None: the metrics report `cache` (its
    /// hits, misses, entries, capacity and hit ratio); a later call
    /// replaces it.
    fn report_near_cache(&self, cache: &crate::hot::PyNearCache) -> PyResult<()> {
        self.with(|f| f.report_near_cache(std::sync::Arc::clone(&cache.cache)))
    }

    /// lookup_counts() -> dict[str, int]: lookups made on this follower's
    /// rings so far (ring.get and its variants, each key of a batch, the
    /// first node of get_n, read_nodes / write_nodes), per node id.
    fn lookup_counts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let counts = self.with(|f| f.lookup_counts())?.unwrap_or_default();
        let dict = PyDict::new(py);
        for (id, count) in counts.counts {
            dict.set_item(id, count)?;
        }
        Ok(dict)
    }

    /// metrics() -> str: the follower's metrics as OpenMetrics text (serve
    /// it at /metrics with any HTTP server; the list: docs/operating.md).
    fn metrics(&self) -> PyResult<String> {
        // With the GIL, as every call under the follower's lock: a call
        // that let go of it there would deadlock with one waiting for it.
        self.with(|f| f.metrics())
    }

    /// Follower.file(path, *, timeout=5.0) -> Follower: follows a JSON ring
    /// config file (docs/config.schema.json), re-read whenever it is replaced
    /// (write a temporary file, then rename it over) or written. Raises
    /// SourceError (code RING_FILE) at once when the file cannot be read or
    /// its config is refused, naming the path and why (the I/O error, or the
    /// field, value, or byte and position); later a failed reload keeps the
    /// last ring and is an event ("rejected" or "disconnected") saying why.
    #[staticmethod]
    #[pyo3(signature = (path, *, timeout = Argument::Absent), text_signature = "(path, *, timeout=5.0)")]
    fn file(py: Python<'_>, path: std::path::PathBuf, timeout: Argument<'_>) -> PyResult<PyFollower> {
        PyFollower::start(py, timeout, move |options| Follower::file(path, options))
    }

    /// The current ring: a Ring the follower keeps up to date (its in-place
    /// methods raise TypeError; change the membership instead).
    #[getter]
    fn ring(&self, py: Python<'_>) -> PyResult<Py<PyRing>> {
        self.open()?;
        Ok(self.ring.clone_ref(py))
    }

    /// The current transition (members warming up or draining; with every
    /// member active, just the ring): a Transition snapshot.
    #[getter]
    fn transition(&self) -> PyResult<crate::transition::PyTransition> {
        self.open()?;
        Ok(crate::transition::PyTransition { transition: self.listeners.transition.load_full() })
    }

    /// read_nodes(key) -> list[str]: where to read `key` now (the current
    /// transition's read set; [owner] with every member active).
    #[pyo3(signature = (key, /))]
    fn read_nodes<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
    ) -> PyResult<Vec<Bound<'py, pyo3::types::PyString>>> {
        self.open()?;
        let key = crate::keys::key_bytes(key)?;
        let transition = self.listeners.transition.load();
        let nodes = transition.read_nodes(&*key).map_err(crate::errors::to_py_err)?;
        Ok(nodes.iter().map(|n| pyo3::types::PyString::new(py, n.id())).collect())
    }

    /// write_nodes(key) -> list[str]: where to write `key` now (the owner,
    /// and a warming member that will own it).
    #[pyo3(signature = (key, /))]
    fn write_nodes<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
    ) -> PyResult<Vec<Bound<'py, pyo3::types::PyString>>> {
        self.open()?;
        let key = crate::keys::key_bytes(key)?;
        let transition = self.listeners.transition.load();
        let nodes = transition.write_nodes(&*key).map_err(crate::errors::to_py_err)?;
        Ok(nodes.iter().map(|n| pyo3::types::PyString::new(py, n.id())).collect())
    }

    /// The revision of the current ring: the etcd revision it was read at,
    /// or the number of successful reads of the file. It can go down when
    /// etcd is restored from an older snapshot; `epoch` does not.
    #[getter]
    fn revision(&self) -> PyResult<i64> {
        self.with(Follower::revision)
    }

    /// The current epoch number (int): it only grows, across an etcd
    /// restore too; equal to `revision` while the follower has read one
    /// store from its start (`core/SPEC.md`, *Epochs*).
    #[getter]
    fn epoch(&self) -> PyResult<u64> {
        self.with(|f| f.epoch().number)
    }

    /// The current ring's fingerprint (int).
    #[getter]
    fn fingerprint(&self) -> PyResult<u64> {
        self.with(|f| f.epoch().fingerprint)
    }

    /// The current ring's fingerprint as text, 16 lowercase hex digits,
    /// zero-padded: what `shardring watch` and `follower.ring.fingerprint_hex` print.
    #[getter]
    fn fingerprint_hex(&self) -> PyResult<String> {
        self.with(|f| fingerprint_hex(f.epoch().fingerprint))
    }

    /// status() -> dict: {"epoch", "revision", "fingerprint", "fingerprint_hex",
    /// "connected", "stale_for" (seconds out of touch with the source, 0.0
    /// while connected), "last_error", "epochs"}.
    fn status<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let status = self.with(Follower::status)?;
        let dict = PyDict::new(py);
        dict.set_item("epoch", status.epoch)?;
        dict.set_item("revision", status.revision)?;
        dict.set_item("fingerprint", status.fingerprint)?;
        dict.set_item("fingerprint_hex", fingerprint_hex(status.fingerprint))?;
        dict.set_item("connected", status.connected)?;
        dict.set_item("stale_for", status.stale_for.as_secs_f64())?;
        dict.set_item("last_error", status.last_error)?;
        dict.set_item("epochs", status.epochs)?;
        Ok(dict)
    }

    /// wait_for_revision(revision, timeout=5.0) -> int: blocks, without the
    /// GIL, until the follower holds `revision` or a later one, and returns
    /// the revision it holds. Raises TimeoutError after `timeout` seconds;
    /// OutOfRangeError for a revision outside 0 to 2**63 - 1, TypeError for
    /// one that is not an int (a bool included).
    #[pyo3(signature = (revision, timeout = Argument::Absent), text_signature = "(self, revision, timeout=5.0)")]
    fn wait_for_revision(&self, py: Python<'_>, revision: &Bound<'_, PyAny>, timeout: Argument<'_>) -> PyResult<i64> {
        let revision = whole_argument(revision, "revision", i64::MAX as u64)? as i64;
        let timeout = timeout.map(|t| seconds(t, "timeout"))?.unwrap_or(DEFAULT_TIMEOUT);
        let guard = self.follower.lock().unwrap_or_else(|p| p.into_inner());
        let Some(follower) = guard.as_ref() else {
            return Err(closed(py));
        };
        let epoch = py.detach(|| follower.wait_for_revision(revision, timeout)).map_err(|e| membership_error(py, e))?;
        Ok(epoch.revision)
    }

    /// on_change(callback): calls `callback(event)` with each event dict, on
    /// the follower's thread, after the ring is replaced. Exceptions from the
    /// callback are reported as unraisable and do not stop the follower.
    fn on_change(&self, callback: Py<PyAny>) -> PyResult<()> {
        self.open()?;
        self.listeners.callbacks.lock().unwrap_or_else(|p| p.into_inner()).push(callback);
        Ok(())
    }

    /// events(timeout=None) -> iterator of event dicts from this call on;
    /// each `next` waits (without the GIL) up to `timeout` seconds and ends
    /// the iteration when none came.
    #[pyo3(signature = (timeout = None))]
    fn events(&self, timeout: Option<&Bound<'_, PyAny>>) -> PyResult<PyEvents> {
        let timeout = timeout.map(|t| seconds(t, "timeout")).transpose()?;
        let receiver = self.with(Follower::subscribe)?;
        Ok(PyEvents { receiver: Mutex::new(receiver), timeout })
    }

    /// close(): stops the follower's thread; a Ring taken from it before
    /// keeps its last snapshot. Every later call but close() raises
    /// FollowerClosedError; closing again does nothing.
    fn close(&self, py: Python<'_>) {
        self.closed.store(true, Ordering::Release);
        let follower = self.follower.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(follower) = follower {
            // Without the GIL: the thread may be publishing, which takes it.
            py.detach(|| follower.close());
        }
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, pyo3::types::PyTuple>) -> bool {
        self.close(py);
        false
    }

    fn __repr__(&self) -> String {
        match self.with(Follower::status) {
            Ok(s) => format!(
                "Follower(revision={}, fingerprint={:#018x}, connected={})",
                s.revision,
                s.fingerprint,
                if s.connected { "True" } else { "False" }
            ),
            Err(_) => "Follower(closed)".to_owned(),
        }
    }
}

/// An iterator over a follower's events (see Follower.events).
#[pyclass(frozen, module = "shardring", name = "FollowerEvents")]
pub struct PyEvents {
    receiver: Mutex<Receiver<Event>>,
    timeout: Option<Duration>,
}

#[pymethods]
impl PyEvents {
    fn __iter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let (mutex, timeout) = (&self.receiver, self.timeout);
        let next = py.detach(move || {
            let receiver = mutex.lock().unwrap_or_else(|p| p.into_inner());
            match timeout {
                Some(timeout) => receiver.recv_timeout(timeout),
                None => receiver.recv().map_err(|_| RecvTimeoutError::Disconnected),
            }
        });
        match next {
            Ok(event) => event_dict(py, &event).map(Some),
            Err(_) => Ok(None),
        }
    }
}
