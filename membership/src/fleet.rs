//! What a fleet of followers reports ([`Admin::fleet`]): the ring the
//! records describe now, every client's report (`P/clients/<id>`), and
//! whether they agree ([`FleetView::verdict`]), as Riak's `ringready`
//! asks whether every node holds the same ring.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use etcd_client::GetOptions;
use shardring::{HotSet, Ring};

use crate::error::MembershipError;
use crate::member::{Admin, timed};
use crate::records::{KeyKind, Records};
use crate::report::ClientRecord;

/// One client as [`Admin::fleet`] reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientEntry {
    /// The client id (the key after `P/clients/`).
    pub id: String,
    /// Its report, or why it does not parse.
    pub record: Result<ClientRecord, String>,
    /// The etcd revision at which the report was written.
    pub mod_revision: i64,
}

/// The fleet under one prefix, read at one etcd revision.
#[derive(Debug, Clone)]
pub struct FleetView {
    /// The store's revision at the read.
    pub revision: i64,
    /// The revision of the last change to the ring's records (`P/config`,
    /// `P/members/*`): a follower at a lower revision has not seen it.
    pub ring_revision: i64,
    /// The fingerprint of the transition the records describe (what every
    /// current follower must hold), or why no ring can be built.
    pub fingerprint: Result<u64, String>,
    /// The ring's algorithm name, when it builds.
    pub algorithm: Option<String>,
    /// Members by id with their state name (`active`, `warming`, `draining`).
    pub members: BTreeMap<String, String>,
    /// Every client report, by id.
    pub clients: Vec<ClientEntry>,
    /// A running (or just finished) rebalance's progress (`P/rebalance`),
    /// as the rebalancer wrote it, when there is one.
    pub rebalance: Option<serde_json::Value>,
    /// The hot set at `P/hot` (empty when there is none; `Err` naming the
    /// problem when it is not a hot set).
    pub hot_set: Result<HotSet, String>,
    /// `P/hot`'s modification revision (0 when there is none): what
    /// [`Admin::put_hot_set`] compares against.
    pub hot_set_revision: i64,
    /// The ring the records describe (the read ring during a transition),
    /// when they build one.
    pub ring: Option<Arc<Ring>>,
}

/// How one client stands ([`FleetView::verdict`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientStanding {
    /// At or past the ring's last change, holding its fingerprint.
    Current,
    /// Reported without the ring's last change, but before (or within the
    /// slack after) any client reported holding it: its next report tells.
    Pending,
    /// Reported without the ring's last change more than the slack after
    /// another client reported holding it (a watch that delivers nothing,
    /// a client that cannot build the ring), or holds another fingerprint
    /// than the ring at or past its revision.
    Lagging,
    /// Its last report is older than twice its interval plus `max_age`
    /// slack (a frozen or dead client whose lease has not expired yet).
    Stale,
    /// Its report does not parse.
    Invalid,
}

/// The fleet's agreement, as `shardring fleet status` prints it.
#[derive(Debug, Clone)]
pub struct Verdict {
    /// Per client id, its standing and its report's age.
    pub clients: Vec<(String, ClientStanding, Option<Duration>)>,
    /// Revisions at which clients report different fingerprints, with them.
    pub split: Vec<(i64, Vec<String>)>,
    /// Lookups per node summed over the clients' last intervals.
    pub lookups: BTreeMap<String, u64>,
}

impl Verdict {
    /// Whether every client is current or pending and no revision is split.
    pub fn agrees(&self) -> bool {
        self.split.is_empty()
            && self.clients.iter().all(|(_, s, _)| matches!(s, ClientStanding::Current | ClientStanding::Pending))
    }
}

impl FleetView {
    /// Judges the reports: who is current, pending, lagging or stale
    /// (older than twice its interval plus `slack`, by the client's clock
    /// against this machine's), and which revisions hold more than one
    /// fingerprint. A watch delivers a change milliseconds after it is
    /// made, so a client that reports in between is pending, not lagging:
    /// it lags once it reports without the change `slack` after another
    /// client reported holding it.
    pub fn verdict(&self, slack: Duration) -> Verdict {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
        let mut by_revision: BTreeMap<i64, Vec<String>> = BTreeMap::new();
        let mut lookups: BTreeMap<String, u64> = BTreeMap::new();
        let mut clients = Vec::new();
        // When the first client known to hold the ring's last change reported.
        let first_current = self
            .clients
            .iter()
            .filter_map(|entry| entry.record.as_ref().ok())
            .filter(|record| record.revision >= self.ring_revision)
            .map(|record| record.reported_at_ms)
            .min();
        for entry in &self.clients {
            // A report whose interval is no duration (negative, NaN, past
            // u64 seconds) is as good as one that does not parse.
            let report = entry.record.as_ref().ok().and_then(|record| {
                let window = Duration::try_from_secs_f64(2.0 * record.interval_seconds).ok()?;
                (record.interval_seconds > 0.0).then_some((record, window.saturating_add(slack)))
            });
            let Some((record, stale_after)) = report else {
                clients.push((entry.id.clone(), ClientStanding::Invalid, None));
                continue;
            };
            let age = Duration::from_millis(now.saturating_sub(record.reported_at_ms));
            let fingerprints = by_revision.entry(record.revision).or_default();
            if !fingerprints.contains(&record.fingerprint) {
                fingerprints.push(record.fingerprint.clone());
            }
            for (node, count) in &record.lookups {
                let sum = lookups.entry(node.clone()).or_default();
                *sum = sum.saturating_add(*count);
            }
            let ring = self.fingerprint.as_ref().ok().map(|f| format!("{f:016x}"));
            let standing = if age > stale_after {
                ClientStanding::Stale
            } else if record.revision >= self.ring_revision {
                if ring.as_deref().is_none_or(|f| f == record.fingerprint) {
                    ClientStanding::Current
                } else {
                    ClientStanding::Lagging
                }
            } else if entry.mod_revision > self.ring_revision
                && first_current
                    .is_some_and(|first| record.reported_at_ms > first.saturating_add(slack.as_millis() as u64))
            {
                // Another client held the ring's last change at `first`; this
                // one reported later than that (and the slack) without it.
                ClientStanding::Lagging
            } else {
                ClientStanding::Pending
            };
            clients.push((entry.id.clone(), standing, Some(age)));
        }
        let split = by_revision.into_iter().filter(|(_, f)| f.len() > 1).collect();
        Verdict { clients, split, lookups }
    }
}

impl Admin {
    /// Reads the ring's records and every client report under the prefix
    /// in one range read, and builds the ring the records describe, as a
    /// follower does.
    ///
    /// Errors: [`MembershipError::Etcd`] when etcd does not answer,
    /// [`MembershipError::Refused`] when it refuses the read.
    pub fn fleet(&mut self) -> Result<FleetView, MembershipError> {
        let root = self.layout.root();
        let (target, client) = (&self.target, &mut self.client);
        let response =
            self.runtime.block_on(timed(target, client.get(root.clone(), Some(GetOptions::new().with_prefix()))))?;
        let revision = response.header().map_or(0, |h| h.revision());
        let clients_prefix = self.layout.clients_prefix();
        let mut records = Records::new(self.layout.clone());
        let mut changes = Vec::new();
        let mut ring_revision = 0;
        let mut clients = Vec::new();
        let mut rebalance = None;
        let rebalance_key = self.layout.rebalance_key();
        let (hot_key, mut hot_set, mut hot_set_revision) = (self.layout.hot_key(), Ok(HotSet::default()), 0);
        for kv in response.kvs() {
            if kv.key() == hot_key.as_bytes() {
                hot_set = std::str::from_utf8(kv.value())
                    .map_err(|e| e.to_string())
                    .and_then(|text| HotSet::from_json(text).map_err(|e| e.to_string()));
                hot_set_revision = kv.mod_revision();
                continue;
            }
            if kv.key() == rebalance_key.as_bytes() {
                rebalance = serde_json::from_slice(kv.value()).ok();
                continue;
            }
            if let Some(id) = kv.key().strip_prefix(clients_prefix.as_bytes()) {
                let record = std::str::from_utf8(kv.value())
                    .map_err(|e| e.to_string())
                    .and_then(|text| serde_json::from_str::<ClientRecord>(text).map_err(|e| e.to_string()));
                let id = String::from_utf8_lossy(id).into_owned();
                clients.push(ClientEntry { id, record, mod_revision: kv.mod_revision() });
                continue;
            }
            if matches!(self.layout.classify(kv.key()), KeyKind::Config | KeyKind::Member(_)) {
                ring_revision = ring_revision.max(kv.mod_revision());
            }
            if let Ok(Some(change)) = records.change_of(kv.key(), Some(kv.value())) {
                changes.push(change);
            }
        }
        let (built, _) = records.advance(None, changes);
        let ring = built.as_ref().ok().map(|t| Arc::clone(t.read_ring()));
        let (fingerprint, algorithm, members) = match built {
            Ok(transition) => {
                let mut members = BTreeMap::new();
                for ring in [transition.old_ring(), transition.new_ring()] {
                    for node in ring.nodes() {
                        let state = transition.state(node.id()).unwrap_or_default();
                        members.insert(node.id().to_owned(), state.name().to_owned());
                    }
                }
                (Ok(transition.fingerprint()), Some(transition.read_ring().algorithm().name().to_owned()), members)
            }
            Err(error) => (Err(error.to_string()), None, BTreeMap::new()),
        };
        Ok(FleetView {
            revision,
            ring_revision,
            fingerprint,
            algorithm,
            members,
            clients,
            rebalance,
            hot_set,
            hot_set_revision,
            ring,
        })
    }

    /// Writes `set` to `P/hot` when the key's modification revision is
    /// still `expected` (0: when there is none), so that of two publishers
    /// only one writes each step. Returns whether it wrote.
    ///
    /// Errors: [`MembershipError::Etcd`],
    /// [`MembershipError::Refused`].
    pub fn put_hot_set(&mut self, set: &HotSet, expected: i64) -> Result<bool, MembershipError> {
        use etcd_client::{Compare, CompareOp, Txn, TxnOp};
        let key = self.layout.hot_key();
        let txn = Txn::new()
            .when([Compare::mod_revision(key.clone(), CompareOp::Equal, expected)])
            .and_then([TxnOp::put(key, set.to_json(), None)]);
        let (target, client) = (&self.target, &mut self.client);
        Ok(self.runtime.block_on(timed(target, client.txn(txn)))?.succeeded())
    }

    /// Writes `P/rebalance` = `json` (a rebalance's progress) under a new
    /// lease of `ttl`, then revokes `previous` (the lease of the last
    /// write): the record goes `ttl` after the last write. Returns the new
    /// lease.
    ///
    /// Errors: [`MembershipError::Etcd`],
    /// [`MembershipError::Refused`].
    pub fn put_rebalance(&mut self, json: &str, ttl: Duration, previous: Option<i64>) -> Result<i64, MembershipError> {
        let key = self.layout.rebalance_key();
        let (target, client) = (&self.target, &mut self.client);
        self.runtime.block_on(async {
            let lease = timed(target, client.lease_grant(ttl.as_secs().max(1) as i64, None)).await?.id();
            let options = etcd_client::PutOptions::new().with_lease(lease);
            timed(target, client.put(key, json, Some(options))).await?;
            if let Some(previous) = previous {
                let _ = timed(target, client.lease_revoke(previous)).await;
            }
            Ok(lease)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now_ms() -> u64 {
        SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64
    }

    fn client(id: &str, revision: i64, fingerprint: &str, mod_revision: i64, ago_ms: u64) -> ClientEntry {
        let record = ClientRecord {
            format_version: 1,
            epoch: revision as u64,
            revision,
            fingerprint: fingerprint.to_owned(),
            algorithm: "ring".to_owned(),
            connected: true,
            interval_seconds: 1.0,
            reported_at_ms: now_ms() - ago_ms,
            lookups: BTreeMap::from([("a".to_owned(), 3)]),
            hot_keys: Vec::new(),
        };
        ClientEntry { id: id.to_owned(), record: Ok(record), mod_revision }
    }

    fn view(clients: Vec<ClientEntry>) -> FleetView {
        FleetView {
            revision: 100,
            ring_revision: 50,
            fingerprint: Ok(0xabc),
            algorithm: Some("ring".to_owned()),
            members: BTreeMap::new(),
            clients,
            rebalance: None,
            hot_set: Ok(HotSet::default()),
            hot_set_revision: 0,
            ring: None,
        }
    }

    fn standings(view: &FleetView) -> Vec<ClientStanding> {
        view.verdict(Duration::from_secs(1)).clients.into_iter().map(|(_, s, _)| s).collect()
    }

    const RING: &str = "0000000000000abc";

    #[test]
    fn current_pending_lagging_and_stale_clients() {
        use ClientStanding::*;
        let fleet = view(vec![
            // The first to hold the ring's last change, 1.5 s ago.
            client("current", 60, RING, 61, 1_500),
            // Reported after the change, 100 ms after `current` held it: on its way.
            client("racing", 40, "0000000000000001", 62, 1_400),
            // Reported after the change 1.5 s after `current` held it, without it.
            client("stuck", 40, "0000000000000001", 63, 0),
            // Reported before the change.
            client("old report", 40, "0000000000000001", 45, 1_600),
            client("frozen", 40, "0000000000000001", 44, 5_000),
            client("wrong ring", 60, "0000000000000002", 65, 100),
        ]);
        assert_eq!(standings(&fleet), [Current, Pending, Lagging, Pending, Stale, Lagging]);
        let verdict = fleet.verdict(Duration::from_secs(1));
        assert!(!verdict.agrees());
        assert_eq!(
            verdict.split,
            [(40, vec!["0000000000000001".to_owned()]), (60, vec![RING.to_owned(), "0000000000000002".to_owned()])]
                [1..]
        );
        assert_eq!(verdict.lookups["a"], 18);
    }

    #[test]
    fn a_fleet_at_one_ring_agrees_and_a_forged_report_splits_it() {
        let mut fleet = view(vec![client("a", 60, RING, 61, 100), client("b", 60, RING, 62, 200)]);
        assert!(fleet.verdict(Duration::from_secs(1)).agrees());
        fleet.clients.push(client("forged", 60, "0123456789abcdef", 63, 0));
        let verdict = fleet.verdict(Duration::from_secs(1));
        assert!(!verdict.agrees());
        assert_eq!(verdict.split, [(60, vec![RING.to_owned(), "0123456789abcdef".to_owned()])]);
        fleet.clients.push(ClientEntry { id: "junk".into(), record: Err("not JSON".into()), mod_revision: 64 });
        assert_eq!(standings(&fleet).last(), Some(&ClientStanding::Invalid));
        // Intervals that are no duration, and lookups that would overflow: typed, never a panic.
        for interval in [-1.0, 0.0, f64::NAN, f64::INFINITY, 1e300] {
            let mut bad = client("bad", 60, RING, 65, 0);
            if let Ok(record) = &mut bad.record {
                record.interval_seconds = interval;
                record.lookups.insert("a".into(), u64::MAX);
                record.reported_at_ms = u64::MAX;
            }
            fleet.clients.push(bad);
            assert_eq!(standings(&fleet).last(), Some(&ClientStanding::Invalid), "{interval}");
            fleet.clients.pop();
        }
        let mut huge = client("huge", 60, RING, 65, 0);
        if let Ok(record) = &mut huge.record {
            record.lookups.insert("a".into(), u64::MAX);
        }
        fleet.clients.push(huge);
        assert_eq!(fleet.verdict(Duration::from_secs(1)).lookups["a"], u64::MAX);
    }
}
