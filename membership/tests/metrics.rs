//! A Rust follower's lookup counts and metrics text (a file follower: no
//! server needed): the counters match the lookups this test made, per node,
//! through the ring, a batch, a preference list and the transition; a near
//! cache it reports shows its own counts.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use shardring::NearCache;
use shardring_membership::{Follower, FollowerOptions};

#[test]
fn a_followers_counts_and_metrics_match_the_lookups_made() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ring.json");
    std::fs::write(&path, r#"{"format_version": 1, "nodes": [{"id": "a"}, {"id": "b"}, {"id": "c"}]}"#).unwrap();
    let follower = Follower::file(&path, FollowerOptions::default()).unwrap();
    let keys: Vec<String> = (0..2_000).map(|i| format!("key-{i}")).collect();
    let ring = follower.ring();
    let mut want: BTreeMap<String, u64> = BTreeMap::new();
    for key in &keys {
        *want.entry(ring.get(key).unwrap().id().to_owned()).or_default() += 4;
    }
    let mut out = vec![0usize; keys.len()];
    ring.get_indices(&keys, &mut out).unwrap();
    for key in &keys {
        ring.get_n(key, 2).unwrap();
        follower.epoch().transition.read_nodes(key).unwrap();
    }
    let counts = follower.lookup_counts().expect("a follower counts by default");
    assert_eq!(counts.counts.into_iter().collect::<BTreeMap<_, _>>(), want);
    let text = follower.metrics();
    for (id, count) in &want {
        assert!(text.contains(&format!("shardring_lookups_total{{node=\"{id}\"}} {count}\n")), "{id}: {text}");
    }
    let fingerprint = format!("{:016x}", follower.epoch().fingerprint);
    assert!(
        text.contains(&format!(
            "shardring_ring_info{{algorithm=\"ring\",fingerprint=\"{fingerprint}\",epoch=\"1\"}} 1"
        ))
    );
    assert!(text.contains("shardring_members{state=\"active\"} 3.0") && text.ends_with("# EOF\n"));

    let quiet = Follower::file(&path, FollowerOptions { count_lookups: false, ..FollowerOptions::default() }).unwrap();
    quiet.ring().get("k").unwrap();
    assert!(quiet.lookup_counts().is_none() && !quiet.metrics().contains("shardring_lookups"));
}

/// A near cache reported by a follower: its hits, misses, entries,
/// capacity and hit ratio in the metrics text, as the cache counted them.
#[test]
fn a_reported_near_cache_is_in_the_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ring.json");
    std::fs::write(&path, r#"{"format_version": 1, "nodes": [{"id": "a"}, {"id": "b"}]}"#).unwrap();
    let follower = Follower::file(&path, FollowerOptions::default()).unwrap();
    assert!(!follower.metrics().contains("near_cache"), "no cache reported yet");
    let cache = Arc::new(NearCache::new(16, Duration::from_secs(60)).unwrap());
    follower.report_near_cache(Arc::clone(&cache));
    cache.put(b"hot", b"value");
    for _ in 0..3 {
        assert!(cache.get(b"hot").is_some());
    }
    assert!(cache.get(b"cold").is_none());
    let text = follower.metrics();
    for line in [
        "shardring_near_cache_hits_total 3\n",
        "shardring_near_cache_misses_total 1\n",
        "shardring_near_cache_entries 1.0\n",
        "shardring_near_cache_capacity 16.0\n",
        "shardring_near_cache_hit_ratio 0.75\n",
    ] {
        assert!(text.contains(line), "{line}: {text}");
    }
}
