//! [`Follower`]: the client side. A follower keeps the ring of a source
//! (etcd, or a local JSON config file) current on a background thread:
//! each change becomes one new ring, swapped atomically, so readers always
//! see a whole ring, and each ring carries the revision (epoch) it reflects.

use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use shardring::{HotKey, HotKeys, HotKeysOptions, HotSet, LookupCounter, LookupCounts, NearCache, Ring, SpreadPlan};
use tokio::sync::{mpsc as async_mpsc, watch};

use crate::access::EtcdAccess;
use crate::error::MembershipError;
use crate::records::Layout;
use crate::report::ClientReport;
use crate::state::{Context, Epoch, EpochHook, Event, FollowerState, Hook, Status};

/// Settings of a follower.
pub struct FollowerOptions {
    /// How long the constructor waits for the first ring (default 5 s).
    pub initial_timeout: Duration,
    /// First retry delay after the source fails (default 100 ms); doubles up
    /// to `max_backoff` (default 2 s).
    pub min_backoff: Duration,
    /// Longest retry delay.
    pub max_backoff: Duration,
    /// Called for every event on the follower's thread.
    pub hook: Option<Hook>,
    /// Called with every new epoch on the follower's thread, before waiters wake.
    pub on_epoch: Option<EpochHook>,
    /// Count the lookups on the follower's rings per node (default true):
    /// [`Follower::lookup_counts`], the metrics and the fleet reports read
    /// them. About 1.7 ns per lookup (`make bench`, *counting*).
    pub count_lookups: bool,
    /// Report this follower to the fleet as `P/clients/<id>` (etcd
    /// followers only; default none): see [`ClientReport`].
    pub report: Option<ClientReport>,
    /// Find the hot keys of the lookups on the follower's rings (default
    /// none: 4 to 7 ns per lookup, `make bench`, *hot keys*):
    /// [`Follower::hot_keys`], the metrics and the fleet reports (which
    /// `shardring hot publish` reads) carry them.
    pub hot_keys: Option<HotKeysOptions>,
}

impl Default for FollowerOptions {
    fn default() -> FollowerOptions {
        FollowerOptions {
            initial_timeout: Duration::from_secs(5),
            min_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(2),
            hook: None,
            on_epoch: None,
            count_lookups: true,
            report: None,
            hot_keys: None,
        }
    }
}

impl std::fmt::Debug for FollowerOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FollowerOptions")
            .field("initial_timeout", &self.initial_timeout)
            .field("min_backoff", &self.min_backoff)
            .field("max_backoff", &self.max_backoff)
            .field("hook", &self.hook.is_some())
            .field("on_epoch", &self.on_epoch.is_some())
            .field("count_lookups", &self.count_lookups)
            .field("report", &self.report)
            .field("hot_keys", &self.hot_keys)
            .finish()
    }
}

/// Keeps a ring current from a source on a background thread. `Send +
/// Sync`: lookups on [`Follower::ring`] never wait for the thread. Dropping
/// the follower stops the thread.
pub struct Follower {
    shared: Arc<FollowerState>,
    stop: watch::Sender<bool>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Follower {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Follower").field("source", &self.shared.source_name).field("status", &self.status()).finish()
    }
}

impl Follower {
    /// Follows the ring under `prefix` in the etcd cluster `access` names
    /// (endpoints such as `&["127.0.0.1:2379"]`, or an [`EtcdAccess`] with
    /// TLS and a user): reads every record of the prefix, builds the ring at
    /// that revision, then watches from the next revision. Returns once the
    /// first ring is built. A follower that etcd refuses later (a revoked
    /// permission, a certificate that expired) keeps its last ring and
    /// reports why ([`Event::Disconnected`](crate::Event::Disconnected)).
    ///
    /// Errors: [`MembershipError::InvalidPrefix`],
    /// [`MembershipError::InvalidEndpoint`], [`MembershipError::Refused`]
    /// when no ring could be read within `options.initial_timeout` and the
    /// last error was a refusal ([`Refusal`](crate::Refusal): TLS, a wrong
    /// user or password, a permission denied), [`MembershipError::Timeout`]
    /// otherwise (etcd unreachable, or an invalid `P/config`).
    pub fn etcd(
        access: impl Into<EtcdAccess>,
        prefix: &str,
        options: FollowerOptions,
    ) -> Result<Follower, MembershipError> {
        let access = access.into();
        let layout = Layout::new(prefix)?;
        let endpoints = access.urls()?;
        let name = format!("etcd {} {}", endpoints.join(","), layout.prefix());
        let report = options.report.clone();
        if let Some(report) = &report {
            report.check()?;
        }
        let started = Follower::start(name, options, move |context| async move {
            let Some(report) = report else {
                return crate::etcd::follow(endpoints, access, layout, context).await;
            };
            let reporter = crate::report::publish(
                endpoints.clone(),
                access.clone(),
                layout.clone(),
                Arc::clone(&context.shared),
                context.stop.clone(),
                report,
            );
            tokio::join!(crate::etcd::follow(endpoints, access, layout, context), reporter);
        });
        started.map_err(MembershipError::refused_if_so)
    }

    /// Follows a local JSON ring config file (`docs/config.schema.json`),
    /// re-reading it whenever it is replaced or written (replace it
    /// atomically: write a temporary file, then rename it over). Revision `n`
    /// is the `n`-th successful read. The file is read as bytes and built as
    /// every config reader builds it ([`RingConfig::from_json_bytes`], then
    /// [`Transition::from_config`]). The first read is done here, so a file
    /// that cannot be read or whose config is refused fails at once; later,
    /// an unreadable file is reported ([`Event::Disconnected`]), an invalid
    /// one too ([`Event::Rejected`]), each with the reason, and the last
    /// ring kept.
    ///
    /// Errors: [`MembershipError::File`] naming the path and the reason
    /// (the I/O error, or the core's error naming the field, value, or byte
    /// and position); [`MembershipError::Timeout`] when the follower's
    /// thread does not publish that first ring within
    /// `options.initial_timeout`.
    ///
    /// [`RingConfig::from_json_bytes`]: shardring::RingConfig::from_json_bytes
    /// [`Transition::from_config`]: shardring::Transition::from_config
    /// [`Event::Disconnected`]: crate::Event::Disconnected
    /// [`Event::Rejected`]: crate::Event::Rejected
    pub fn file(path: impl AsRef<Path>, options: FollowerOptions) -> Result<Follower, MembershipError> {
        let path = path.as_ref().to_path_buf();
        let name = path.display().to_string();
        let first = crate::file::load(&path)
            .map_err(|error| MembershipError::File { path: name.clone(), message: error.to_string() })?;
        Follower::start(name, options, move |context| crate::file::follow(path, first, context))
    }

    fn start<F, Fut>(source_name: String, options: FollowerOptions, run: F) -> Result<Follower, MembershipError>
    where
        F: FnOnce(Context) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = ()>,
    {
        let (progress_sender, progress) = async_mpsc::unbounded_channel();
        let backoff = (options.min_backoff, options.max_backoff);
        let mut state = FollowerState::new(source_name, options.hook, options.on_epoch, progress_sender, backoff);
        state.counter = options.count_lookups.then(LookupCounter::new);
        if let Some(hot) = options.hot_keys {
            state.hot = Some(Arc::new(HotKeys::new(hot).map_err(MembershipError::InvalidHotKeys)?));
        }
        let shared = Arc::new(state);
        let (stop, stop_receiver) = watch::channel(false);
        let context = Context { shared: Arc::clone(&shared), stop: stop_receiver, progress };
        let thread_shared = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("shardring-follower".into())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
                match runtime {
                    Ok(runtime) => runtime.block_on(run(context)),
                    Err(error) => {
                        thread_shared.disconnected(format!("could not start the follower's runtime: {error}"))
                    }
                }
                thread_shared.ended();
            })
            .map_err(|e| MembershipError::File { path: "<thread>".into(), message: e.to_string() })?;
        let follower = Follower { shared, stop, thread: Some(thread) };
        let waited = Instant::now();
        match follower.wait_for_revision(1, options.initial_timeout) {
            Ok(_) => Ok(follower),
            Err(_) => Err(MembershipError::Timeout {
                source_name: follower.shared.source_name.clone(),
                waited: waited.elapsed(),
                last_error: follower.status().last_error.unwrap_or_else(|| "no answer".into()),
            }),
        }
    }

    /// The current epoch: its ring, revision and fingerprint, consistent
    /// with one another.
    pub fn epoch(&self) -> Arc<Epoch> {
        self.shared.load()
    }

    /// The current ring.
    pub fn ring(&self) -> Arc<Ring> {
        Arc::clone(&self.shared.load().ring)
    }

    /// The current epoch's revision.
    pub fn revision(&self) -> i64 {
        self.shared.load().revision
    }

    /// The lookups made on this follower's rings so far, per node id
    /// (through [`Follower::ring`], [`Follower::epoch`] and their
    /// transitions; see [`LookupCounter`] for which calls count). `None`
    /// when [`FollowerOptions::count_lookups`] is off.
    pub fn lookup_counts(&self) -> Option<LookupCounts> {
        self.shared.counter.as_ref().map(LookupCounter::snapshot)
    }

    /// The hot keys of the lookups on this follower's rings, most requested
    /// first (see [`HotKeys::top`]); `None` when
    /// [`FollowerOptions::hot_keys`] is off.
    pub fn hot_keys(&self) -> Option<Vec<HotKey>> {
        self.shared.hot.as_ref().map(|hot| hot.top())
    }

    /// The fleet's hot set as last read from `P/hot` (empty, epoch 0, before
    /// one is published or for a file follower).
    pub fn hot_set(&self) -> Arc<HotSet> {
        self.shared.hot_set()
    }

    /// How to read and write `key` now: [`HotSet::plan`] of the fleet's hot
    /// set on the current ring, with that ring (the plan's indices are
    /// into its nodes).
    ///
    /// Errors: [`shardring::RingError::EmptyRing`].
    pub fn plan(&self, key: impl AsRef<[u8]>) -> Result<(Arc<Ring>, SpreadPlan), shardring::RingError> {
        let ring = self.ring();
        let plan = self.hot_set().plan(&ring, key)?;
        Ok((ring, plan))
    }

    /// The follower's metrics as OpenMetrics text (ends with `# EOF`):
    /// its ring (`shardring_ring_info` with algorithm, fingerprint and
    /// epoch), epoch, revision, staleness, members by state, each node's
    /// ownership share, points per node, rebuild durations, rejected
    /// records, reconnections and lookups per node. The list:
    /// `docs/operating.md`.
    pub fn metrics(&self) -> String {
        let counts = self.lookup_counts();
        let (top, hot_set) = (self.hot_keys(), self.hot_set());
        let near = self.shared.near_cache.read().unwrap_or_else(|p| p.into_inner()).clone();
        let hot = crate::metrics::Hot { top: top.as_deref(), set: hot_set.as_ref(), near: near.as_deref() };
        crate::metrics::render(&self.epoch(), &self.status(), &self.shared.recorded, counts.as_ref(), hot)
    }

    /// Reports `cache` in [`Follower::metrics`]: its hits, misses, entries,
    /// capacity and hit ratio. One cache per follower; a later call
    /// replaces the earlier one.
    pub fn report_near_cache(&self, cache: Arc<NearCache>) {
        *self.shared.near_cache.write().unwrap_or_else(|p| p.into_inner()) = Some(cache);
    }

    /// Connection state and staleness.
    pub fn status(&self) -> Status {
        self.shared.status()
    }

    /// Every event from now on, in order, on a channel (unbounded: drain it
    /// or drop the receiver).
    pub fn subscribe(&self) -> mpsc::Receiver<Event> {
        self.shared.subscribe()
    }

    /// Waits until the follower holds revision `revision` or a later one and
    /// returns that epoch. For etcd, confirms with a keys-only read of the
    /// prefix that nothing changed since the follower's revision, so a
    /// follower whose ring is current returns even when `revision` was made
    /// by other keys.
    ///
    /// Errors: [`MembershipError::Timeout`] after `timeout`;
    /// [`MembershipError::Stopped`] when the follower's thread has ended.
    pub fn wait_for_revision(&self, revision: i64, timeout: Duration) -> Result<Arc<Epoch>, MembershipError> {
        self.shared.wait_for_revision(revision, timeout, || self.thread.as_ref().is_some_and(JoinHandle::is_finished))
    }

    /// Stops the background thread and waits for it.
    pub fn close(mut self) {
        self.stop_thread();
    }

    fn stop_thread(&mut self) {
        let _ = self.stop.send(true);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        self.stop_thread();
    }
}
