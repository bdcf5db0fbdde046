//! [`Follower`]: the client side. A follower keeps the ring of a source
//! (etcd, or a local JSON config file) current on a background thread:
//! each change becomes one new ring, swapped atomically, so readers always
//! see a whole ring, and each ring carries the revision (epoch) it reflects.

use std::path::Path;
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use shardring::{Ring, RingDiff, Transition};
use tokio::sync::{mpsc as async_mpsc, watch};

use crate::error::MembershipError;
use crate::records::{Layout, Rejected};

/// A ring and the source revision it reflects.
#[derive(Debug, Clone)]
pub struct Epoch {
    /// The etcd revision the ring was read at (the store's revision, which
    /// other keys in the same etcd also advance); for a file source, the
    /// number of times the file was read successfully. 0 before the first ring.
    pub revision: i64,
    /// The ring of the active members: where keys are read (with every
    /// member active, the ring).
    pub ring: Arc<Ring>,
    /// The members' transition: read and write sets while members are
    /// warming or draining (`core/SPEC.md`, *Transitions*).
    pub transition: Arc<Transition>,
    /// `transition.fingerprint()` (with every member active, the ring's
    /// fingerprint), computed once.
    pub fingerprint: u64,
}

/// Something a follower reports.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Event {
    /// A new epoch: the ring changed (`changed`), or the follower learnt that
    /// its ring is still current at a later revision.
    Epoch {
        /// The new revision.
        revision: i64,
        /// The ring's fingerprint.
        fingerprint: u64,
        /// Whether the ring differs from the previous epoch's.
        changed: bool,
        /// What moved, when the ring changed and both rings share an
        /// algorithm and seed.
        diff: Option<Arc<RingDiff>>,
    },
    /// A record was left out of the ring (it does not parse, has unknown
    /// fields, or names a weight or address the algorithm rejects); the
    /// rest of the ring is built.
    Rejected(Rejected),
    /// The source cannot be read; the follower answers from its last ring
    /// and retries with backoff.
    Disconnected {
        /// What failed.
        message: String,
    },
    /// The source answers again; the follower has resynchronised.
    Reconnected {
        /// The revision it resynchronised at.
        revision: i64,
        /// How long it was disconnected.
        down_for: Duration,
    },
}

/// How current a follower is.
#[derive(Debug, Clone)]
pub struct Status {
    /// The current epoch's revision.
    pub revision: i64,
    /// The current ring's fingerprint.
    pub fingerprint: u64,
    /// Whether the source answered at the last attempt.
    pub connected: bool,
    /// How long the follower has been out of touch with its source (zero
    /// while connected): how stale its ring may be.
    pub stale_for: Duration,
    /// The last error from the source, if any since the last reconnection.
    pub last_error: Option<String>,
    /// Epochs published so far (rings and revision advances).
    pub epochs: u64,
}

/// A function called on the follower's thread for every event, after the
/// new epoch (if any) is in place and before other subscribers hear of it.
pub type Hook = Box<dyn Fn(&Event, &Arc<Epoch>) + Send + Sync>;

/// A function called on the follower's thread with each new epoch, right
/// after it is swapped in and before [`Follower::wait_for_revision`]
/// returns it: the bindings publish it into their own ring objects here,
/// so a waiter that wakes finds them current.
pub type EpochHook = Box<dyn Fn(&Arc<Epoch>) + Send + Sync>;

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
}

impl Default for FollowerOptions {
    fn default() -> FollowerOptions {
        FollowerOptions {
            initial_timeout: Duration::from_secs(5),
            min_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(2),
            hook: None,
            on_epoch: None,
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
            .finish()
    }
}

#[derive(Debug)]
struct Health {
    connected: bool,
    /// Whether the source ever answered (the first contact is no reconnection).
    ever_connected: bool,
    since: Instant,
    last_error: Option<String>,
    epochs: u64,
}

/// What a follower's thread and its handle share.
pub(crate) struct Shared {
    /// The current epoch. A lock, not an `arc_swap`: that crate keeps
    /// per-thread nodes in a global list it never frees, which memory
    /// checkers of C and C++ programs report; a read here only clones an `Arc`.
    current: RwLock<Arc<Epoch>>,
    health: Mutex<Health>,
    /// Notified whenever an epoch is published or the thread ends.
    published: Condvar,
    subscribers: Mutex<Vec<mpsc::Sender<Event>>>,
    hook: Option<Hook>,
    on_epoch: Option<EpochHook>,
    /// Asks the source to confirm its revision (an etcd progress request).
    progress: async_mpsc::UnboundedSender<()>,
    pub(crate) source_name: String,
    pub(crate) min_backoff: Duration,
    pub(crate) max_backoff: Duration,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Shared {
    fn load(&self) -> Arc<Epoch> {
        Arc::clone(&self.current.read().unwrap_or_else(|p| p.into_inner()))
    }

    fn store(&self, epoch: Arc<Epoch>) {
        *self.current.write().unwrap_or_else(|p| p.into_inner()) = epoch;
    }
}

impl Shared {
    fn emit(&self, event: Event) {
        let epoch = self.load();
        if let Some(hook) = &self.hook {
            hook(&event, &epoch);
        }
        lock(&self.subscribers).retain(|subscriber| subscriber.send(event.clone()).is_ok());
    }

    /// Publishes `transition` (or, with `None`, the current one) at `revision`.
    pub(crate) fn publish(&self, revision: i64, transition: Option<Arc<Transition>>) {
        let previous = self.load();
        let (transition, changed) = match transition {
            Some(transition) => (transition, true),
            None => (Arc::clone(&previous.transition), false),
        };
        let fingerprint = transition.fingerprint();
        let changed = changed && (fingerprint != previous.fingerprint || previous.revision == 0);
        if !changed && revision <= previous.revision {
            return;
        }
        let ring = Arc::clone(transition.read_ring());
        let epoch = Arc::new(Epoch { revision, ring, transition, fingerprint });
        self.store(Arc::clone(&epoch));
        if let Some(on_epoch) = &self.on_epoch {
            on_epoch(&epoch);
        }
        {
            let mut health = lock(&self.health);
            health.epochs += 1;
        }
        self.published.notify_all();
        let diff = if changed && previous.revision > 0 {
            previous.transition.new_ring().diff(epoch.transition.new_ring()).ok().map(Arc::new)
        } else {
            None
        };
        self.emit(Event::Epoch { revision, fingerprint, changed, diff });
    }

    pub(crate) fn reject(&self, rejected: Rejected) {
        self.emit(Event::Rejected(rejected));
    }

    /// The source failed; the first failure after a success starts the
    /// stale clock.
    pub(crate) fn disconnected(&self, message: String) {
        let report = {
            let mut health = lock(&self.health);
            let report = health.connected || health.last_error.as_deref() != Some(&message);
            if health.connected {
                health.connected = false;
                health.since = Instant::now();
            }
            health.last_error = Some(message.clone());
            report
        };
        if report {
            self.emit(Event::Disconnected { message });
        }
    }

    /// The source answers (again) at `revision`.
    pub(crate) fn connected(&self, revision: i64) {
        let down_for = {
            let mut health = lock(&self.health);
            if health.connected {
                return;
            }
            health.connected = true;
            health.last_error = None;
            let down_for = health.since.elapsed();
            health.since = Instant::now();
            if !std::mem::replace(&mut health.ever_connected, true) {
                return;
            }
            down_for
        };
        {
            self.emit(Event::Reconnected { revision, down_for });
        }
    }
}

/// Keeps a ring current from a source on a background thread. `Send +
/// Sync`: lookups on [`Follower::ring`] never wait for the thread. Dropping
/// the follower stops the thread.
pub struct Follower {
    shared: Arc<Shared>,
    stop: watch::Sender<bool>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Follower {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Follower").field("source", &self.shared.source_name).field("status", &self.status()).finish()
    }
}

/// What a source's task receives.
pub(crate) struct Context {
    pub(crate) shared: Arc<Shared>,
    pub(crate) stop: watch::Receiver<bool>,
    pub(crate) progress: async_mpsc::UnboundedReceiver<()>,
}

impl Follower {
    /// Follows the ring under `prefix` in the etcd cluster at `endpoints`
    /// (`http://127.0.0.1:2379` or `127.0.0.1:2379`): reads every record of
    /// the prefix, builds the ring at that revision, then watches from the
    /// next revision. Returns once the first ring is built.
    ///
    /// Errors: [`MembershipError::InvalidPrefix`],
    /// [`MembershipError::InvalidEndpoint`], [`MembershipError::Timeout`]
    /// when no ring could be read within `options.initial_timeout` (etcd
    /// unreachable, or an invalid `P/config`).
    pub fn etcd<E: AsRef<str>>(
        endpoints: &[E],
        prefix: &str,
        options: FollowerOptions,
    ) -> Result<Follower, MembershipError> {
        let layout = Layout::new(prefix)?;
        let endpoints = crate::etcd::endpoints(endpoints)?;
        let name = format!("etcd {} {}", endpoints.join(","), layout.prefix());
        Follower::start(name, options, move |context| crate::etcd::follow(endpoints, layout, context))
    }

    /// Follows a local JSON ring config file (`docs/config.schema.json`),
    /// re-reading it whenever it is replaced or written (replace it
    /// atomically: write a temporary file, then rename it over). Revision `n`
    /// is the `n`-th successful read. An unreadable or invalid file is
    /// reported ([`Event::Rejected`]) and the last ring kept.
    ///
    /// Errors: [`MembershipError::Timeout`] when the file gives no valid ring
    /// within `options.initial_timeout`.
    pub fn file(path: impl AsRef<Path>, options: FollowerOptions) -> Result<Follower, MembershipError> {
        let path = path.as_ref().to_path_buf();
        let name = path.display().to_string();
        Follower::start(name, options, move |context| crate::file::follow(path, context))
    }

    fn start<F, Fut>(source_name: String, options: FollowerOptions, run: F) -> Result<Follower, MembershipError>
    where
        F: FnOnce(Context) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = ()>,
    {
        let (progress_sender, progress) = async_mpsc::unbounded_channel();
        let empty = Ring::builder().build().expect("an empty ring builds");
        let shared = Arc::new(Shared {
            current: RwLock::new({
                let transition = Arc::new(Transition::steady(Arc::new(empty)));
                let ring = Arc::clone(transition.read_ring());
                Arc::new(Epoch { revision: 0, fingerprint: transition.fingerprint(), ring, transition })
            }),
            health: Mutex::new(Health {
                connected: false,
                ever_connected: false,
                since: Instant::now(),
                last_error: None,
                epochs: 0,
            }),
            published: Condvar::new(),
            subscribers: Mutex::new(Vec::new()),
            hook: options.hook,
            on_epoch: options.on_epoch,
            progress: progress_sender,
            source_name,
            min_backoff: options.min_backoff,
            max_backoff: options.max_backoff,
        });
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
                thread_shared.published.notify_all();
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

    /// Connection state and staleness.
    pub fn status(&self) -> Status {
        let epoch = self.shared.load();
        let health = lock(&self.shared.health);
        Status {
            revision: epoch.revision,
            fingerprint: epoch.fingerprint,
            connected: health.connected,
            stale_for: if health.connected { Duration::ZERO } else { health.since.elapsed() },
            last_error: health.last_error.clone(),
            epochs: health.epochs,
        }
    }

    /// Every event from now on, in order, on a channel (unbounded: drain it
    /// or drop the receiver).
    pub fn subscribe(&self) -> mpsc::Receiver<Event> {
        let (sender, receiver) = mpsc::channel();
        lock(&self.shared.subscribers).push(sender);
        receiver
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
        let deadline = Instant::now() + timeout;
        // The revision held when a confirmation was last asked for: ask again
        // once the follower has moved (the first answer may have come while
        // events were still on their way).
        let mut asked_at: Option<i64> = None;
        let mut health = lock(&self.shared.health);
        loop {
            let epoch = self.shared.load();
            if epoch.revision >= revision {
                return Ok(epoch);
            }
            if self.thread.as_ref().is_some_and(JoinHandle::is_finished) {
                return Err(MembershipError::Stopped);
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(MembershipError::Timeout {
                    source_name: self.shared.source_name.clone(),
                    waited: timeout,
                    last_error: format!("holds revision {}, waiting for {revision}", epoch.revision),
                });
            }
            if epoch.revision > 0 && asked_at != Some(epoch.revision) {
                let _ = self.shared.progress.send(());
                asked_at = Some(epoch.revision);
            }
            let wait = (deadline - now).min(Duration::from_millis(200));
            health = self.shared.published.wait_timeout(health, wait).unwrap_or_else(|p| p.into_inner()).0;
        }
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
