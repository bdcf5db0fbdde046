//! What a follower's handle (`Follower`) and its source's task (etcd, or a
//! file) share: the current [`Epoch`], the source's health, the
//! subscribers to its [`Event`]s, and the calls through which a source
//! reports (publish, reject, connected, disconnected). The handle and every
//! source depend on this module, and none of them on another.

use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock};
use std::time::{Duration, Instant};

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use shardring::{HotKeys, HotSet, LookupCounter, NearCache, Ring, RingDiff, Transition};
use tokio::sync::{mpsc as async_mpsc, watch};

use crate::error::MembershipError;
use crate::records::Rejected;

/// A ring and the source revision it reflects.
#[derive(Debug, Clone)]
pub struct Epoch {
    /// The etcd revision the ring was read at (the store's revision, which
    /// other keys in the same etcd also advance); for a file source, the
    /// number of times the file was read successfully. 0 before the first ring.
    /// Within one store it only grows; after the store was replaced (a
    /// restore from an older snapshot, a wipe) it is the new store's, which
    /// can be lower: order epochs by [`Epoch::number`].
    pub revision: i64,
    /// The epoch number, which only grows for the life of a follower, across
    /// store replacements too (`core/SPEC.md`, *Epochs*): the first ring's
    /// number is its revision, and each later epoch adds the revision's
    /// growth, or 1 when the revision did not grow (a replaced store). While
    /// a follower reads one store from its start, number == revision.
    pub number: u64,
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
        /// The new epoch number ([`Epoch::number`]): it only grows.
        epoch: u64,
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
    /// The current epoch's number ([`Epoch::number`]).
    pub epoch: u64,
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
/// after it is swapped in and before
/// [`Follower::wait_for_revision`](crate::Follower::wait_for_revision)
/// returns it: the bindings publish it into their own ring objects here,
/// so a waiter that wakes finds them current.
pub type EpochHook = Box<dyn Fn(&Arc<Epoch>) + Send + Sync>;

#[derive(Debug)]
struct Health {
    connected: bool,
    /// Whether the source ever answered (the first contact is no reconnection).
    ever_connected: bool,
    since: Instant,
    last_error: Option<String>,
    epochs: u64,
    /// The source found another store than the one it read: the next
    /// publication is a new epoch even when ring and revision look the same.
    replaced: bool,
}

/// What a follower records as it runs, for its metrics.
#[derive(Debug)]
pub(crate) struct Recorded {
    /// Time to build each new ring from the records, in seconds.
    pub(crate) rebuilds: Histogram,
    pub(crate) rejected: Counter,
    pub(crate) reconnects: Counter,
    /// Client reports written to etcd, and those that failed.
    pub(crate) reports: Counter,
    pub(crate) report_failures: Counter,
}

impl Default for Recorded {
    fn default() -> Recorded {
        Recorded {
            // 50 µs to about 13 s, by factors of 4.
            rebuilds: Histogram::new(exponential_buckets(0.000_05, 4.0, 10)),
            rejected: Counter::default(),
            reconnects: Counter::default(),
            reports: Counter::default(),
            report_failures: Counter::default(),
        }
    }
}

/// A follower's state, shared by its handle and its source's task.
pub(crate) struct FollowerState {
    /// The current epoch. A lock, not an `arc_swap`: that crate keeps
    /// per-thread nodes in a global list it never frees, which memory
    /// checkers of C and C++ programs report; a read here only clones an `Arc`.
    current: RwLock<Arc<Epoch>>,
    health: Mutex<Health>,
    /// Notified whenever an epoch is published or the thread ends.
    published: Condvar,
    /// Each subscriber, with the epoch number current when it subscribed:
    /// it hears of later epochs only.
    subscribers: Mutex<Vec<(mpsc::Sender<Event>, u64)>>,
    hook: Option<Hook>,
    on_epoch: Option<EpochHook>,
    /// Asks the source to confirm its revision (an etcd progress request).
    progress: async_mpsc::UnboundedSender<()>,
    pub(crate) source_name: String,
    /// Counts the lookups on every ring this follower publishes, when it counts.
    pub(crate) counter: Option<LookupCounter>,
    /// Observes the keys of the lookups on every ring it publishes, when on.
    pub(crate) hot: Option<Arc<HotKeys>>,
    /// The fleet's hot set (`P/hot`; empty until one is read).
    hot_set: RwLock<Arc<HotSet>>,
    /// The near cache its metrics report, if one was given.
    pub(crate) near_cache: RwLock<Option<Arc<NearCache>>>,
    /// Rebuild times, rejections and reconnections, for the metrics.
    pub(crate) recorded: Recorded,
    pub(crate) min_backoff: Duration,
    pub(crate) max_backoff: Duration,
}

/// What a source's task receives.
pub(crate) struct Context {
    pub(crate) shared: Arc<FollowerState>,
    pub(crate) stop: watch::Receiver<bool>,
    pub(crate) progress: async_mpsc::UnboundedReceiver<()>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl FollowerState {
    /// The state of a follower of `source_name` before its source answers:
    /// revision 0, an empty ring, not connected. `progress` carries the
    /// waiters' requests to confirm the revision to the source's task.
    pub(crate) fn new(
        source_name: String,
        hook: Option<Hook>,
        on_epoch: Option<EpochHook>,
        progress: async_mpsc::UnboundedSender<()>,
        (min_backoff, max_backoff): (Duration, Duration),
    ) -> FollowerState {
        let empty = Ring::builder().build().expect("an empty ring builds");
        let transition = Arc::new(Transition::steady(Arc::new(empty)));
        let ring = Arc::clone(transition.read_ring());
        FollowerState {
            current: RwLock::new(Arc::new(Epoch {
                revision: 0,
                number: 0,
                fingerprint: transition.fingerprint(),
                ring,
                transition,
            })),
            health: Mutex::new(Health {
                connected: false,
                ever_connected: false,
                since: Instant::now(),
                last_error: None,
                epochs: 0,
                replaced: false,
            }),
            published: Condvar::new(),
            subscribers: Mutex::new(Vec::new()),
            hook,
            on_epoch,
            progress,
            source_name,
            counter: None,
            hot: None,
            hot_set: RwLock::new(Arc::new(HotSet::default())),
            near_cache: RwLock::new(None),
            recorded: Recorded::default(),
            min_backoff,
            max_backoff,
        }
    }

    /// The current epoch.
    pub(crate) fn load(&self) -> Arc<Epoch> {
        Arc::clone(&self.current.read().unwrap_or_else(|p| p.into_inner()))
    }

    fn store(&self, epoch: Arc<Epoch>) {
        *self.current.write().unwrap_or_else(|p| p.into_inner()) = epoch;
    }

    /// Connection state and staleness, with the current epoch's revision.
    pub(crate) fn status(&self) -> Status {
        let epoch = self.load();
        let health = lock(&self.health);
        Status {
            revision: epoch.revision,
            epoch: epoch.number,
            fingerprint: epoch.fingerprint,
            connected: health.connected,
            stale_for: if health.connected { Duration::ZERO } else { health.since.elapsed() },
            last_error: health.last_error.clone(),
            epochs: health.epochs,
        }
    }

    /// A channel that receives every event from now on.
    /// A receiver of the events from now on. An epoch is swapped in before
    /// its event goes out, so a subscriber that arrives in between would hear
    /// of the epoch it already reads; it hears of later epochs only.
    pub(crate) fn subscribe(&self) -> mpsc::Receiver<Event> {
        let (sender, receiver) = mpsc::channel();
        let mut subscribers = lock(&self.subscribers);
        subscribers.push((sender, self.load().number));
        receiver
    }

    /// Waits until the epoch's revision reaches `revision` (asking the
    /// source to confirm its revision each time it moves), `timeout`
    /// passes, or `ended` says the source's thread has ended.
    pub(crate) fn wait_for_revision(
        &self,
        revision: i64,
        timeout: Duration,
        ended: impl Fn() -> bool,
    ) -> Result<Arc<Epoch>, MembershipError> {
        let deadline = Instant::now() + timeout;
        // The revision held when a confirmation was last asked for: ask again
        // once the follower has moved (the first answer may have come while
        // events were still on their way).
        let mut asked_at: Option<(i64, Instant)> = None;
        let mut health = lock(&self.health);
        loop {
            let epoch = self.load();
            if epoch.revision >= revision {
                return Ok(epoch);
            }
            if ended() {
                return Err(MembershipError::Stopped);
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(MembershipError::Timeout {
                    source_name: self.source_name.clone(),
                    waited: timeout,
                    last_error: format!("holds revision {}, waiting for {revision}", epoch.revision),
                });
            }
            // Ask again a second after an unanswered ask too: keys the ring
            // ignores (the clients' reports) change without a new epoch.
            let ask =
                asked_at.is_none_or(|(held, when)| held != epoch.revision || when.elapsed() >= Duration::from_secs(1));
            if epoch.revision > 0 && ask {
                let _ = self.progress.send(());
                asked_at = Some((epoch.revision, now));
            }
            let wait = (deadline - now).min(Duration::from_millis(200));
            health = self.published.wait_timeout(health, wait).unwrap_or_else(|p| p.into_inner()).0;
        }
    }

    /// Wakes every waiter: the source's thread has ended.
    pub(crate) fn ended(&self) {
        self.published.notify_all();
    }

    fn emit(&self, event: Event) {
        let epoch = self.load();
        if let Some(hook) = &self.hook {
            hook(&event, &epoch);
        }
        let number = match &event {
            Event::Epoch { epoch, .. } => Some(*epoch),
            _ => None,
        };
        lock(&self.subscribers).retain(|(subscriber, since)| match number {
            Some(number) if number <= *since => true,
            _ => subscriber.send(event.clone()).is_ok(),
        });
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
        let replaced = std::mem::take(&mut lock(&self.health).replaced);
        if !changed && !replaced && revision <= previous.revision {
            return;
        }
        // Revisions grow within one store; a replaced store's can be lower.
        let number = previous.number + revision.saturating_sub(previous.revision).max(1) as u64;
        let ring = Arc::clone(transition.read_ring());
        let epoch = Arc::new(Epoch { revision, number, ring, transition, fingerprint });
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
        self.emit(Event::Epoch { epoch: number, revision, fingerprint, changed, diff });
    }

    /// `transition`, counting its lookups when this follower counts: a
    /// source passes each transition it builds through here before it
    /// keeps or publishes it (so no ring is copied to count).
    pub(crate) fn counted(&self, transition: Transition) -> Transition {
        let transition = match &self.counter {
            Some(counter) => counter.count_transition(transition),
            None => transition,
        };
        match &self.hot {
            Some(hot) => hot.watch_transition(transition),
            None => transition,
        }
    }

    /// The fleet's hot set as last read.
    pub(crate) fn hot_set(&self) -> Arc<HotSet> {
        Arc::clone(&self.hot_set.read().unwrap_or_else(|p| p.into_inner()))
    }

    /// Takes `value` of `key` (`P/hot`) as the hot set: `None` (deleted) is
    /// the empty set; a value that is not a hot set is rejected and the
    /// last set stays.
    pub(crate) fn read_hot_set(&self, key: &[u8], value: Option<&[u8]>) {
        let set = match value.map(|v| std::str::from_utf8(v).map_err(|e| e.to_string())) {
            None => Ok(HotSet::default()),
            Some(Ok(text)) => HotSet::from_json(text).map_err(|e| match e {
                shardring::RingError::InvalidConfig { message } => format!("not a hot set: {message}"),
                other => format!("not a hot set: {other}"),
            }),
            Some(Err(error)) => Err(format!("the value is not UTF-8: {error}")),
        };
        match set {
            Ok(set) => *self.hot_set.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(set),
            Err(message) => self.reject(Rejected { key: String::from_utf8_lossy(key).into_owned(), message }),
        }
    }

    /// Records how long building a ring took.
    pub(crate) fn rebuilt_in(&self, took: Duration) {
        self.recorded.rebuilds.observe(took.as_secs_f64());
    }

    pub(crate) fn reject(&self, rejected: Rejected) {
        self.recorded.rejected.inc();
        self.emit(Event::Rejected(rejected));
    }

    /// The source holds another store than the one the follower read (a
    /// restore, a wipe, another cluster): reported as a disconnection
    /// naming `reason`; the ring read from the new store is the next epoch,
    /// numbered above the last one whatever its revision.
    pub(crate) fn replaced(&self, reason: String) {
        lock(&self.health).replaced = true;
        self.disconnected(reason);
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
        self.recorded.reconnects.inc();
        self.emit(Event::Reconnected { revision, down_for });
    }
}

#[cfg(test)]
mod tests {
    use std::sync::OnceLock;

    use super::*;

    fn steady(ids: &[&str]) -> Arc<Transition> {
        let ring = Ring::builder().nodes(ids.iter().map(|&id| shardring::Node::new(id, 1.0))).build().unwrap();
        Arc::new(Transition::steady(Arc::new(ring)))
    }

    fn epochs(events: &mpsc::Receiver<Event>) -> Vec<i64> {
        events
            .try_iter()
            .filter_map(|e| if let Event::Epoch { revision, .. } = e { Some(revision) } else { None })
            .collect()
    }

    /// A subscriber arriving after an epoch is swapped in but before its
    /// event goes out (here: from the epoch hook, which runs in between)
    /// hears of later epochs only, not of the one it already reads.
    #[test]
    fn a_subscriber_hears_only_of_epochs_after_the_one_it_reads() {
        static STATE: OnceLock<Arc<FollowerState>> = OnceLock::new();
        static LATE: Mutex<Option<mpsc::Receiver<Event>>> = Mutex::new(None);
        let on_epoch: EpochHook = Box::new(|epoch| {
            let mut late = lock(&LATE);
            if late.is_none() {
                let state = STATE.get().expect("set before the first publish");
                assert_eq!(state.load().revision, epoch.revision, "the hook runs once the epoch is in place");
                *late = Some(state.subscribe());
            }
        });
        let (progress, _requests) = async_mpsc::unbounded_channel();
        let backoff = (Duration::from_millis(10), Duration::from_millis(10));
        let state = Arc::new(FollowerState::new("test".to_owned(), None, Some(on_epoch), progress, backoff));
        assert!(STATE.set(Arc::clone(&state)).is_ok());
        let early = state.subscribe();
        state.publish(1, Some(steady(&["a"])));
        state.publish(2, Some(steady(&["a", "b"])));
        assert_eq!(epochs(&early), [1, 2]);
        assert_eq!(epochs(lock(&LATE).as_ref().unwrap()), [2]);
    }
}
