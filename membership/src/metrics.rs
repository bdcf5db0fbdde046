//! A follower's metrics in the OpenMetrics text format (Prometheus
//! naming: the `shardring_` prefix, base units, `_total` counters), rendered
//! on demand by [`Follower::metrics`](crate::Follower::metrics). A library
//! opens no port: a program serves the text itself (the CLI's
//! `--metrics-listen`). Labels are node ids and member states, bounded by
//! the ring's size. The list, with meanings: `docs/operating.md`.

use std::sync::atomic::AtomicU64;

use prometheus_client::encoding::text::encode;
use prometheus_client::encoding::{EncodeLabelValue, LabelValueEncoder};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::{Registry, Unit};
use shardring::{LookupCounts, NodeState};

use crate::state::{Epoch, Recorded, Status};

/// A label value written as OpenMetrics requires: `\`, `"` and a line
/// break escaped (`\\`, `\"`, `\n`). `prometheus-client` writes label
/// values as given, and a node id may hold any of them.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EscapedLabel(pub String);

impl EncodeLabelValue for EscapedLabel {
    fn encode(&self, encoder: &mut LabelValueEncoder) -> std::fmt::Result {
        use std::fmt::Write;
        for c in self.0.chars() {
            match c {
                '\\' => encoder.write_str("\\\\")?,
                '"' => encoder.write_str("\\\"")?,
                '\n' => encoder.write_str("\\n")?,
                c => encoder.write_char(c)?,
            }
        }
        Ok(())
    }
}

/// A label set: names and escaped values.
pub type Labels = Vec<(&'static str, EscapedLabel)>;

fn label(name: &'static str, value: impl Into<String>) -> Labels {
    vec![(name, EscapedLabel(value.into()))]
}

/// Ranks of hot keys the metrics show.
const HOT_RANKS: usize = 10;

fn gauge(value: f64) -> Gauge<f64, AtomicU64> {
    let gauge = Gauge::<f64, AtomicU64>::default();
    gauge.set(value);
    gauge
}

fn counter(value: u64) -> Counter {
    let counter = Counter::default();
    counter.inc_by(value);
    counter
}

/// The OpenMetrics text of a follower: its epoch, ring, health, what it
/// recorded and the lookups counted (`None` when it does not count).
/// The hot-key parts of a follower's metrics: its sketch's top keys (when
/// it finds them), the fleet's hot set, and the near cache it reports.
pub(crate) struct Hot<'a> {
    pub(crate) top: Option<&'a [shardring::HotKey]>,
    pub(crate) set: &'a shardring::HotSet,
    pub(crate) near: Option<&'a shardring::NearCache>,
}

pub(crate) fn render(
    epoch: &Epoch,
    status: &Status,
    recorded: &Recorded,
    counts: Option<&LookupCounts>,
    hot: Hot<'_>,
) -> String {
    let mut registry = Registry::with_prefix("shardring");
    let ring = &epoch.ring;
    let fingerprint = format!("{:016x}", epoch.fingerprint);
    let info = Info::new(vec![
        ("algorithm", EscapedLabel(ring.algorithm().name().to_owned())),
        ("fingerprint", EscapedLabel(fingerprint)),
        ("epoch", EscapedLabel(epoch.number.to_string())),
    ]);
    registry.register("ring", "The ring a follower holds: algorithm, fingerprint and epoch", info);
    registry.register(
        "epoch",
        "Epoch number: grows with every ring change, across store restores",
        gauge(epoch.number as f64),
    );
    registry.register("revision", "etcd revision (or file generation) of the ring", gauge(epoch.revision as f64));
    registry.register_with_unit(
        "stale",
        "How long the follower has been out of touch with its source (0 while connected)",
        Unit::Seconds,
        gauge(status.stale_for.as_secs_f64()),
    );
    registry.register("connected", "1 while the source answers, else 0", gauge(f64::from(u8::from(status.connected))));
    registry.register("epochs", "Epochs published (ring changes and revision advances)", counter(status.epochs));
    registry.register("rejected_records", "Member records left out of the ring (invalid)", recorded.rejected.clone());
    registry.register("reconnects", "Times the source answered again after failing", recorded.reconnects.clone());
    registry.register("client_reports", "Client reports written to etcd (P/clients/<id>)", recorded.reports.clone());
    registry.register("client_report_failures", "Client reports etcd did not take", recorded.report_failures.clone());
    registry.register_with_unit(
        "rebuild_duration",
        "Time to build a new ring from the member records",
        Unit::Seconds,
        recorded.rebuilds.clone(),
    );

    let members = Family::<Labels, Gauge<f64, AtomicU64>>::default();
    for state in [NodeState::Active, NodeState::Warming, NodeState::Draining] {
        let count = epoch.transition.new_ring().nodes().iter().chain(epoch.transition.old_ring().nodes());
        let ids: std::collections::BTreeSet<&str> =
            count.filter(|n| epoch.transition.state(n.id()) == Some(state)).map(|n| n.id()).collect();
        members.get_or_create(&label("state", state.name())).set(ids.len() as f64);
    }
    registry.register("members", "Members by state", members);

    let ownership = Family::<Labels, Gauge<f64, AtomicU64>>::default();
    for (node, share) in ring.ownership() {
        ownership.get_or_create(&label("node", node.id())).set(share);
    }
    registry.register("node_ownership_ratio", "Share of the hash space each node owns (0 to 1)", ownership);
    if ring.point_count() > 0 {
        let mut points = vec![0u64; ring.nodes().len()];
        ring.points().for_each(|(_, owner)| points[owner] += 1);
        let live: Vec<u64> = points.into_iter().filter(|&p| p > 0).collect();
        let (min, max) = (live.iter().min().copied().unwrap_or(0), live.iter().max().copied().unwrap_or(0));
        registry.register("points_per_node_min", "Fewest points of a node on the continuum", gauge(min as f64));
        registry.register("points_per_node_max", "Most points of a node on the continuum", gauge(max as f64));
    }
    if let Some(counts) = counts {
        let lookups = Family::<Labels, Counter>::default();
        for (id, count) in &counts.counts {
            lookups.get_or_create(&label("node", id.as_str())).inc_by(*count);
        }
        registry.register("lookups", "Lookups that chose each node, since the follower started", lookups);
    }
    let Hot { top, set: hot_set, near } = hot;
    registry.register("hot_set_epoch", "Epoch of the fleet's hot set (P/hot; 0: none)", gauge(hot_set.epoch as f64));
    let phases = Family::<Labels, Gauge<f64, AtomicU64>>::default();
    for phase in [shardring::HotPhase::Writing, shardring::HotPhase::Spread, shardring::HotPhase::Leaving] {
        let keys = hot_set.keys().iter().filter(|k| k.phase == phase);
        phases.get_or_create(&label("phase", phase.name())).set(keys.count() as f64);
    }
    registry.register("hot_set_keys", "Keys of the fleet's hot set by phase", phases);
    let copies: u32 = hot_set.keys().iter().map(|k| k.replicas - 1).sum();
    registry.register(
        "hot_set_copies",
        "Copies the fleet's hot set keeps (replicas beyond the owners)",
        gauge(copies as f64),
    );
    if let Some(top) = top {
        // By rank, never by key: at most HOT_RANKS series.
        let rates = Family::<Labels, Gauge<f64, AtomicU64>>::default();
        for (rank, key) in top.iter().take(HOT_RANKS).enumerate() {
            rates.get_or_create(&label("rank", (rank + 1).to_string())).set(key.rate);
        }
        registry.register(
            "hot_key_requests_per_second",
            "Estimated rate of this client's hottest keys, by rank",
            rates,
        );
    }
    if let Some(near) = near {
        let (hits, misses) = near.hits_and_misses();
        registry.register("near_cache_hits", "Near-cache lookups that found a fresh value", counter(hits));
        registry.register("near_cache_misses", "Near-cache lookups that found none", counter(misses));
        registry.register("near_cache_entries", "Values the near cache holds", gauge(near.len() as f64));
        registry.register("near_cache_capacity", "Most values the near cache holds", gauge(near.capacity() as f64));
        let ratio = if hits + misses > 0 { hits as f64 / (hits + misses) as f64 } else { 0.0 };
        registry.register("near_cache_hit_ratio", "Hits over lookups of the near cache (0 before any)", gauge(ratio));
    }
    let mut text = String::new();
    encode(&mut text, &registry).expect("writing to a String cannot fail");
    text
}
