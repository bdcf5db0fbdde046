//! The etcd source of a follower: a range read of the prefix, then a watch
//! from the next revision; on any failure, backoff and reconnect, resuming
//! the watch where it stopped, or re-reading the prefix when etcd has
//! compacted that history.

use std::sync::Arc;
use std::time::Duration;

use etcd_client::{Client, ConnectOptions, EventType, GetOptions, WatchOptions, WatchResponse};
use futures_util::FutureExt;
use shardring::Transition;

use crate::access::EtcdAccess;
use crate::records::{Layout, Records, Rejected};
use crate::state::{Context, FollowerState};

/// Time allowed for one unary request (connect, range read).
pub(crate) const REQUEST_TIMEOUT: Duration = Duration::from_secs(3);

/// Messages of the transport layers that only say something failed below
/// them; dropped when a cause below says what.
const GENERIC: [&str; 3] = ["transport error", "operation was canceled", "Unknown error"];

/// An etcd client error as one line: etcd's own message (`etcdserver:
/// permission denied`, `... authentication failed, invalid user ID or
/// password`), or the transport's causes down to the one that says what
/// went wrong (the TLS alert, the certificate check that failed), by their
/// `Display` (tonic's own text embeds the causes' `Debug`).
pub(crate) fn describe(error: &etcd_client::Error) -> String {
    use std::error::Error;
    let (first, mut source): (String, Option<&(dyn Error + 'static)>) = match error {
        etcd_client::Error::GRpcStatus(status) => (status.message().to_owned(), status.source()),
        // etcd-client's own error has no source(): start from the transport's.
        etcd_client::Error::TransportError(transport) => (transport.to_string(), transport.source()),
        other => (other.to_string(), other.source()),
    };
    let mut parts = vec![first];
    while let Some(cause) = source {
        let text = cause.to_string();
        if !parts.iter().any(|part| part.contains(&text)) {
            parts.push(text);
        }
        source = cause.source();
    }
    if parts.len() > 1 {
        parts.retain(|part| !GENERIC.contains(&part.as_str()));
    }
    parts.join(": ")
}

/// Quiet time on a connection after which the client pings etcd (HTTP/2
/// PING) to learn whether it still answers.
///
/// Derived from etcd's server-side keepalive enforcement, which a stock
/// etcd applies with its defaults: `--grpc-keepalive-min-time` (5 s) is the
/// shortest interval between a client's pings that etcd tolerates; a
/// ping that comes sooner is a strike, strikes are forgiven only when etcd
/// sends data (an idle watch sends none), and on the third etcd closes the
/// connection with `GOAWAY too_many_pings` (gRPC-Go's policy, with
/// `PermitWithoutStream: false`, set by etcd's `embed` package). Pinging
/// every 2 s, followers lost their connection every 8 s. Twice the minimum
/// leaves room for delays on the way without ever striking; it is also
/// gRPC-Go's floor for a client's ping interval (10 s), so etcd's own
/// clients ping no more often. etcd's `--grpc-keepalive-interval` (2 h)
/// and `--grpc-keepalive-timeout` (20 s) are its pings to the client, which
/// hyper answers without help.
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(10);

/// How long a ping may go unanswered before the connection counts as dead.
/// etcd answers a ping from its transport without touching the disk or
/// raft, so 5 s is ample even on a loaded host; an etcd that stops answering
/// (hung, or cut off by a partition that drops packets) is noticed within
/// [`KEEPALIVE_INTERVAL`] + this, 15 s.
const KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(5);

/// Connects to etcd, failing within [`REQUEST_TIMEOUT`].
///
/// The connection pings etcd every [`KEEPALIVE_INTERVAL`] of quiet while a
/// stream is open (a follower's watch, a member's lease keep-alive), and
/// not at all without one: on a connection with no open stream etcd counts
/// every ping as a strike unless 2 h passed since the last (gRPC-Go's
/// `PermitWithoutStream: false`). (An `Admin` drives its connection only
/// during a call, so it is silent between calls either way.)
pub(crate) async fn connect(endpoints: &[String], access: &EtcdAccess) -> Result<Client, String> {
    let options = access.apply(
        ConnectOptions::new()
            .with_connect_timeout(REQUEST_TIMEOUT)
            .with_keep_alive(KEEPALIVE_INTERVAL, KEEPALIVE_TIMEOUT)
            .with_keep_alive_while_idle(false),
    );
    match tokio::time::timeout(REQUEST_TIMEOUT, Client::connect(endpoints, Some(options))).await {
        Ok(Ok(client)) => Ok(client),
        Ok(Err(error)) => Err(describe(&error)),
        Err(_) => Err(format!("no answer within {REQUEST_TIMEOUT:?}")),
    }
}

/// How a session with etcd ended.
enum Ended {
    /// The follower was stopped.
    Stop,
    /// The watch history was compacted: re-read the prefix at once.
    Resync,
    /// etcd failed: back off, then resume.
    Failed(String),
}

/// What a follower knows between sessions.
struct Position {
    records: Records,
    /// Every key under the prefix with its mod revision, as last read or
    /// watched: what a confirmation read compares against.
    keys: std::collections::BTreeMap<Vec<u8>, i64>,
    /// The transition of the records (with every member active, a ring).
    transition: Option<Arc<Transition>>,
    revision: i64,
    /// The cluster id in etcd's response headers, once read.
    cluster: Option<u64>,
    /// Watch from here on reconnecting, instead of re-reading the prefix.
    resume: Option<i64>,
}

/// Follows `layout` in etcd until stopped.
pub(crate) async fn follow(endpoints: Vec<String>, access: EtcdAccess, layout: Layout, mut context: Context) {
    let shared = Arc::clone(&context.shared);
    let mut position = Position {
        records: Records::new(layout),
        keys: Default::default(),
        transition: None,
        revision: 0,
        cluster: None,
        resume: None,
    };
    let mut backoff = shared.min_backoff;
    loop {
        if *context.stop.borrow() {
            return;
        }
        match session(&endpoints, &access, &mut position, &mut context, &mut backoff).await {
            Ended::Stop => return,
            Ended::Resync => position.resume = None,
            Ended::Failed(message) => {
                shared.disconnected(message);
                tokio::select! {
                    _ = context.stop.changed() => return,
                    () = tokio::time::sleep(backoff) => {}
                }
                backoff = (backoff * 2).min(shared.max_backoff);
            }
        }
    }
}

/// Reads the whole prefix into fresh records and publishes their ring.
async fn read_prefix(client: &mut Client, position: &mut Position, shared: &FollowerState) -> Result<i64, String> {
    let layout = position.records.layout().clone();
    let read = client.get(layout.root(), Some(GetOptions::new().with_prefix()));
    let response = match tokio::time::timeout(REQUEST_TIMEOUT, read).await {
        Ok(Ok(response)) => response,
        Ok(Err(error)) => return Err(describe(&error)),
        Err(_) => return Err(format!("range read of {} took longer than {REQUEST_TIMEOUT:?}", layout.root())),
    };
    let revision = response.header().map_or(0, |h| h.revision());
    position.cluster = response.header().map(|h| h.cluster_id());
    let mut records = Records::new(layout);
    let mut changes = Vec::new();
    position.keys = response.kvs().iter().map(|kv| (kv.key().to_vec(), kv.mod_revision())).collect();
    let hot_key = records.layout().hot_key();
    let hot = response.kvs().iter().find(|kv| kv.key() == hot_key.as_bytes());
    shared.read_hot_set(hot_key.as_bytes(), hot.map(|kv| kv.value()));
    for kv in response.kvs() {
        match records.change_of(kv.key(), Some(kv.value())) {
            Ok(Some(change)) => changes.push(change),
            Ok(None) => {}
            Err(rejected) => shared.reject(rejected),
        }
    }
    let started = std::time::Instant::now();
    let (built, rejected) = records.advance(None, changes);
    shared.rebuilt_in(started.elapsed());
    rejected.into_iter().for_each(|r| shared.reject(r));
    position.records = records;
    settle(position, shared, revision, built);
    Ok(revision)
}

/// Publishes a built ring at `revision`, or reports why none could be built
/// (the last ring stays, and so does the revision).
fn settle(
    position: &mut Position,
    shared: &FollowerState,
    revision: i64,
    built: Result<Transition, shardring::RingError>,
) {
    match built {
        Ok(transition) => {
            let transition = Arc::new(shared.counted(transition));
            position.transition = Some(Arc::clone(&transition));
            position.revision = revision;
            shared.publish(revision, Some(transition));
        }
        Err(error) => {
            // The last ring no longer matches the records: the next change rebuilds.
            position.transition = None;
            let key = position.records.layout().config_key();
            shared.reject(Rejected { key, message: format!("no ring can be built at revision {revision}: {error}") });
        }
    }
}

async fn session(
    endpoints: &[String],
    access: &EtcdAccess,
    position: &mut Position,
    context: &mut Context,
    backoff: &mut std::time::Duration,
) -> Ended {
    let shared = Arc::clone(&context.shared);
    let mut client = match connect(endpoints, access).await {
        Ok(client) => client,
        Err(message) => return Ended::Failed(access.explain(message)),
    };
    // Until the watch runs, a failure is most likely the connection's own
    // (a TLS handshake, a refused certificate): explained for this access.
    // A watch that breaks later was connected; its failure is not explained.
    if position.resume.is_some() {
        match replaced(&mut client, position).await {
            Ok(None) => {}
            Ok(Some(reason)) => {
                // Another store: its history is not the one the watch would resume.
                shared.replaced(reason);
                position.resume = None;
            }
            Err(message) => return Ended::Failed(access.explain(message)),
        }
    }
    let start = match position.resume {
        Some(start) => start,
        None => match read_prefix(&mut client, position, &shared).await {
            Ok(revision) => {
                // In touch with etcd again from the moment its data is read.
                shared.connected(revision);
                revision + 1
            }
            Err(message) => return Ended::Failed(access.explain(message)),
        },
    };
    let options = WatchOptions::new().with_prefix().with_start_revision(start);
    let root = position.records.layout().root();
    let mut stream = match tokio::time::timeout(REQUEST_TIMEOUT, client.watch(root, Some(options))).await {
        Ok(Ok(stream)) => stream,
        Ok(Err(error)) => return Ended::Failed(access.explain(describe(&error))),
        Err(_) => return Ended::Failed(format!("watch not created within {REQUEST_TIMEOUT:?}")),
    };
    shared.connected(position.revision);
    *backoff = shared.min_backoff;
    loop {
        let message = tokio::select! {
            _ = context.stop.changed() => return Ended::Stop,
            Some(()) = context.progress.recv() => {
                // A waiter asked to confirm the revision (wait_for_revision).
                if let Err(message) = confirm(&mut client, position, &shared).await {
                    return lost(position, message);
                }
                continue;
            }
            message = stream.message() => message,
        };
        let first = match message {
            Ok(Some(message)) => message,
            Ok(None) => return lost(position, "etcd closed the watch".into()),
            Err(error) => return lost(position, describe(&error)),
        };
        // Coalesce: every response already received becomes one ring.
        let mut batch = vec![first];
        while let Some(Ok(Some(next))) = stream.message().now_or_never() {
            batch.push(next);
        }
        if let Some(ended) = apply(position, &shared, batch) {
            return ended;
        }
    }
}

/// Confirms that the ring is current at the store's revision, for a waiter
/// whose revision other keys made: a keys-only read of the prefix at the
/// current revision R; when it holds exactly the keys and mod revisions the
/// follower has applied, nothing under the prefix changed since, and the
/// ring is current at R. (etcd 3.4 answers a watch progress request before
/// a catching-up watcher has delivered its events, so a progress reply is
/// not such a proof.) Otherwise the events are on their way.
async fn confirm(client: &mut Client, position: &mut Position, shared: &FollowerState) -> Result<(), String> {
    let root = position.records.layout().root();
    let read = client.get(root, Some(GetOptions::new().with_prefix().with_keys_only()));
    let response = match tokio::time::timeout(REQUEST_TIMEOUT, read).await {
        Ok(Ok(response)) => response,
        Ok(Err(error)) => return Err(describe(&error)),
        Err(_) => return Err(format!("keys-only read took longer than {REQUEST_TIMEOUT:?}")),
    };
    let revision = response.header().map_or(0, |h| h.revision());
    // Reports (`P/clients/`, `P/rebalance`) change all the time and are no
    // ring state: the ring is current when every other key is as applied.
    let layout = position.records.layout();
    let theirs: Vec<_> = response.kvs().iter().filter(|kv| !layout.is_report(kv.key())).collect();
    let ours = position.keys.keys().filter(|key| !layout.is_report(key)).count();
    let current =
        theirs.len() == ours && theirs.iter().all(|kv| position.keys.get(kv.key()) == Some(&kv.mod_revision()));
    if current && revision > position.revision {
        position.revision = revision;
        shared.publish(revision, None);
    }
    Ok(())
}

/// Why the etcd answering now does not hold the store the follower read,
/// if it does not (`core/SPEC.md`, *Membership in etcd*): another cluster
/// id; a revision below the follower's (restored from an older snapshot, or
/// wiped); or a key under the prefix last modified at or before the
/// follower's revision that the follower does not know with that mod
/// revision (a history that differs). A keys-only read of the prefix.
async fn replaced(client: &mut Client, position: &Position) -> Result<Option<String>, String> {
    let root = position.records.layout().root();
    let read = client.get(root.clone(), Some(GetOptions::new().with_prefix().with_keys_only()));
    let response = match tokio::time::timeout(REQUEST_TIMEOUT, read).await {
        Ok(Ok(response)) => response,
        Ok(Err(error)) => return Err(describe(&error)),
        Err(_) => return Err(format!("keys-only read took longer than {REQUEST_TIMEOUT:?}")),
    };
    let Some(header) = response.header() else { return Ok(None) };
    if let Some(cluster) = position.cluster
        && cluster != header.cluster_id()
    {
        return Ok(Some(format!(
            "etcd answers as another cluster (id {:016x}, was {cluster:016x}): reading {root} again",
            header.cluster_id()
        )));
    }
    if header.revision() < position.revision {
        return Ok(Some(format!(
            "etcd's revision {} is below this follower's {} (restored or wiped): reading {root} again",
            header.revision(),
            position.revision
        )));
    }
    let layout = position.records.layout();
    let differs = response.kvs().iter().find(|kv| {
        !layout.is_report(kv.key())
            && kv.mod_revision() <= position.revision
            && position.keys.get(kv.key()) != Some(&kv.mod_revision())
    });
    Ok(differs.map(|kv| {
        format!(
            "etcd holds {} at mod revision {}, which this follower never saw (a restored store): reading {root} again",
            String::from_utf8_lossy(kv.key()),
            kv.mod_revision()
        )
    }))
}

/// Remembers where to resume and reports the failure.
fn lost(position: &mut Position, message: String) -> Ended {
    position.resume = Some(position.revision + 1);
    Ended::Failed(message)
}

/// Applies a batch of watch responses as one new ring.
fn apply(position: &mut Position, shared: &FollowerState, batch: Vec<WatchResponse>) -> Option<Ended> {
    let mut changes = Vec::new();
    let mut revision = position.revision;
    for response in &batch {
        if response.canceled() {
            if response.compact_revision() > 0 {
                // History up to compact_revision is gone: re-read the prefix.
                return Some(Ended::Resync);
            }
            return Some(lost(position, format!("etcd cancelled the watch: {}", response.cancel_reason())));
        }
        if response.created() {
            continue;
        }
        for event in response.events() {
            let Some(kv) = event.kv() else { continue };
            let value = (event.event_type() == EventType::Put).then(|| kv.value());
            match value {
                Some(_) => position.keys.insert(kv.key().to_vec(), kv.mod_revision()),
                None => position.keys.remove(kv.key()),
            };
            if kv.key() == position.records.layout().hot_key().as_bytes() {
                shared.read_hot_set(kv.key(), value);
                continue;
            }
            match position.records.change_of(kv.key(), value) {
                Ok(Some(change)) => changes.push(change),
                Ok(None) => {}
                Err(rejected) => shared.reject(rejected),
            }
        }
        if let Some(header) = response.header() {
            if position.cluster.is_some_and(|cluster| cluster != header.cluster_id()) {
                shared.replaced(format!("etcd's watch answers as another cluster (id {:016x})", header.cluster_id()));
                return Some(Ended::Resync);
            }
            revision = revision.max(header.revision());
        }
    }
    if changes.is_empty() {
        // Only keys the layout ignores changed: the ring is current at
        // `revision`. Reports (`P/clients/`, `P/rebalance`) alone do not
        // make an epoch: every client writes one each interval, and an
        // epoch per report would churn every follower's epoch number.
        let layout = position.records.layout();
        let other_keys =
            batch.iter().flat_map(|r| r.events()).filter_map(|e| e.kv()).any(|kv| !layout.is_report(kv.key()));
        if revision > position.revision && other_keys {
            position.revision = revision;
            shared.publish(revision, None);
        }
        return None;
    }
    let previous = position.transition.clone();
    let started = std::time::Instant::now();
    let (built, rejected) = position.records.advance(previous.as_deref(), changes);
    shared.rebuilt_in(started.elapsed());
    rejected.into_iter().for_each(|r| shared.reject(r));
    settle(position, shared, revision, built);
    None
}
