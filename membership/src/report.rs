//! Client reports: a follower that is given a client id writes, every
//! interval, `P/clients/<client id>` = a [`ClientRecord`] (its epoch,
//! revision, fingerprint, the lookups per node of the last interval and its
//! hot keys)
//! under a lease of three intervals and 5 s, so a client that stops
//! reporting is seen as stale, then disappears. `shardring fleet status` and the dashboard read these
//! records to check that the fleet agrees (`docs/operating.md`).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use etcd_client::{Client, PutOptions};
use serde::{Deserialize, Serialize};
use tokio::sync::watch;

use crate::access::EtcdAccess;
use crate::etcd::{REQUEST_TIMEOUT, connect, describe};
use crate::records::Layout;
use crate::state::FollowerState;

/// Fewest estimated requests of a hot key a report carries: a key seen a
/// few times (a client that just started) is no hot key, and its rate over
/// a short time would be far off.
pub const MIN_REPORTED_REQUESTS: u64 = 64;

/// Version of the [`ClientRecord`] format.
pub const CLIENT_FORMAT: u32 = 1;

/// How a follower reports itself to the fleet.
#[derive(Debug, Clone)]
pub struct ClientReport {
    /// The client's id: its key `P/clients/<id>` (non-empty, no `/`,
    /// at most 128 bytes; e.g. host name and process id).
    pub client_id: String,
    /// How often to report (default 10 s; from 100 ms to a day); the lease
    /// lasts three intervals and 5 s.
    pub interval: Duration,
}

impl ClientReport {
    /// A report as `client_id` every 10 s.
    pub fn new(client_id: impl Into<String>) -> ClientReport {
        ClientReport { client_id: client_id.into(), interval: Duration::from_secs(10) }
    }

    /// Errors: [`crate::MembershipError::Record`] naming a bad id or interval.
    pub(crate) fn check(&self) -> Result<(), crate::MembershipError> {
        let id = &self.client_id;
        if id.is_empty() || id.len() > 128 || id.contains('/') || id.chars().any(char::is_control) {
            return Err(crate::MembershipError::InvalidClientReport(format!(
                "client id {id:?} must be 1 to 128 bytes without '/' or control characters"
            )));
        }
        if self.interval < Duration::from_millis(100) || self.interval > Duration::from_secs(86_400) {
            return Err(crate::MembershipError::InvalidClientReport(format!(
                "report interval {:?} is not from 100 ms to a day",
                self.interval
            )));
        }
        Ok(())
    }
}

/// The value at `P/clients/<client id>` (JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientRecord {
    /// [`CLIENT_FORMAT`].
    pub format_version: u32,
    /// The follower's epoch number ([`crate::Epoch::number`]).
    pub epoch: u64,
    /// The etcd revision its ring was read at.
    pub revision: i64,
    /// Its ring's fingerprint, 16 lowercase hex digits.
    pub fingerprint: String,
    /// The ring's algorithm name.
    pub algorithm: String,
    /// Whether its etcd watch answers.
    pub connected: bool,
    /// The report interval, in seconds.
    pub interval_seconds: f64,
    /// When the report was written: milliseconds since the Unix epoch, by
    /// the client's clock.
    pub reported_at_ms: u64,
    /// Lookups per node id over the last interval (empty when the follower
    /// does not count).
    pub lookups: BTreeMap<String, u64>,
    /// The follower's hot keys and their rates (requests per second), most
    /// requested first, those of at least [`MIN_REPORTED_REQUESTS`]
    /// estimated requests (empty when it does not find hot keys).
    #[serde(default)]
    pub hot_keys: Vec<shardring::KeyRate>,
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// Reports `shared` as `report` says until `stop`; on a failure, retries
/// after the follower's backoff with a new lease.
pub(crate) async fn publish(
    endpoints: Vec<String>,
    access: EtcdAccess,
    layout: Layout,
    shared: Arc<FollowerState>,
    mut stop: watch::Receiver<bool>,
    report: ClientReport,
) {
    let key = layout.client_key(&report.client_id);
    let mut previous: BTreeMap<String, u64> = BTreeMap::new();
    let mut lease: Option<i64> = None;
    let mut client: Option<Client> = None;
    loop {
        if *stop.borrow() {
            break;
        }
        if shared.load().revision == 0 {
            // No ring read yet: a report now would say revision 0 and lag.
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(50)) => {}
                _ = stop.changed() => {}
            }
            continue;
        }
        let record = {
            let epoch = shared.load();
            let status = shared.status();
            let now = shared.counter.as_ref().map(|c| c.snapshot().counts).unwrap_or_default();
            let lookups = now
                .iter()
                .map(|(id, count)| (id.clone(), count - previous.get(id).copied().unwrap_or(0).min(*count)))
                .collect();
            previous = now.into_iter().collect();
            ClientRecord {
                format_version: CLIENT_FORMAT,
                epoch: epoch.number,
                revision: epoch.revision,
                fingerprint: format!("{:016x}", epoch.fingerprint),
                algorithm: epoch.ring.algorithm().name().to_owned(),
                connected: status.connected,
                interval_seconds: report.interval.as_secs_f64(),
                reported_at_ms: now_ms(),
                lookups,
                hot_keys: shared
                    .hot
                    .as_ref()
                    .map(|hot| {
                        let top = hot.top().into_iter().filter(|k| k.requests >= MIN_REPORTED_REQUESTS);
                        top.map(|k| shardring::KeyRate { key: k.key, rate: k.rate }).collect()
                    })
                    .unwrap_or_default(),
            }
        };
        let json = serde_json::to_string(&record).expect("a client record serialises");
        match write(&endpoints, &access, &mut client, &key, json, &mut lease, report.interval).await {
            Ok(()) => {
                shared.recorded.reports.inc();
            }
            Err(_) => {
                shared.recorded.report_failures.inc();
                client = None;
            }
        }
        tokio::select! {
            _ = tokio::time::sleep(report.interval) => {}
            _ = stop.changed() => {}
        }
    }
    // Leave at once: the record goes with its lease (best effort; else it expires).
    if let (Some(mut client), Some(lease)) = (client, lease) {
        let _ = tokio::time::timeout(REQUEST_TIMEOUT, client.lease_revoke(lease)).await;
    }
}

/// Writes one report under a fresh lease and revokes the previous one.
async fn write(
    endpoints: &[String],
    access: &EtcdAccess,
    client: &mut Option<Client>,
    key: &str,
    json: String,
    lease: &mut Option<i64>,
    interval: Duration,
) -> Result<(), String> {
    if client.is_none() {
        *client = Some(connect(endpoints, access).await?);
    }
    let Some(etcd) = client.as_mut() else { return Err("no connection".into()) };
    // Long enough for `fleet status` to see a frozen client as stale (older
    // than two intervals) before its record goes.
    let ttl = (interval.as_secs_f64() * 3.0).ceil() as i64 + 5;
    let granted = timed("lease", tokio::time::timeout(REQUEST_TIMEOUT, etcd.lease_grant(ttl, None)).await)?.id();
    let options = PutOptions::new().with_lease(granted);
    timed("put", tokio::time::timeout(REQUEST_TIMEOUT, etcd.put(key, json, Some(options))).await)?;
    if let Some(old) = lease.replace(granted) {
        let _ = tokio::time::timeout(REQUEST_TIMEOUT, etcd.lease_revoke(old)).await;
    }
    Ok(())
}

/// One request's answer, or what went wrong with it.
fn timed<T>(
    what: &str,
    answer: Result<Result<T, etcd_client::Error>, tokio::time::error::Elapsed>,
) -> Result<T, String> {
    match answer {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(format!("{what}: {}", describe(&error))),
        Err(_) => Err(format!("{what}: no answer within {REQUEST_TIMEOUT:?}")),
    }
}
