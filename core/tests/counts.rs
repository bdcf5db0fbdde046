//! Lookup counts per node (`LookupCounter`): every lookup kind counts the
//! node it chose, exactly, from many threads at once, and counts survive
//! the rings they were made on.

use std::collections::BTreeMap;
use std::sync::Arc;

use shardring::{Algorithm, LookupCounter, Node, NodeState, Ring, RingConfig, Transition};

fn ring(algorithm: Algorithm, ids: &[&str]) -> Ring {
    Ring::builder().algorithm(algorithm).nodes(ids.iter().map(|id| Node::new(*id, 1.0))).build().unwrap()
}

fn keys(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("key-{i}")).collect()
}

/// What the uncounted ring says, tallied by id.
fn expected(ring: &Ring, keys: &[String]) -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    for key in keys {
        *counts.entry(ring.get(key).unwrap().id().to_owned()).or_default() += 1;
    }
    counts
}

fn as_map(counter: &LookupCounter) -> BTreeMap<String, u64> {
    counter.snapshot().counts.into_iter().filter(|(_, c)| *c > 0).collect()
}

#[test]
fn every_lookup_kind_counts_the_owner_once() {
    for algorithm in [Algorithm::Ring, Algorithm::Jump, Algorithm::Maglev, Algorithm::Rendezvous] {
        let plain = ring(algorithm, &["a", "b", "c", "d"]);
        let counter = LookupCounter::new();
        let counted = counter.count(plain.clone());
        let keys = keys(2_000);
        let want = expected(&plain, &keys);
        assert!(!plain.is_counted() && counted.is_counted());

        for key in &keys {
            counted.get(key).unwrap();
        }
        assert_eq!(as_map(&counter), want, "{algorithm:?}: get");

        for key in &keys {
            counted.index_by_hash(counted.hash_key(key)).unwrap();
        }
        let mut out = vec![0usize; keys.len()];
        counted.get_indices(&keys, &mut out).unwrap();
        let hashes: Vec<u64> = keys.iter().map(|k| counted.hash_key(k)).collect();
        counted.get_indices_by_hash(&hashes, &mut out).unwrap();
        for key in &keys {
            counted.get_n(key, 3).unwrap();
        }
        let tripled: BTreeMap<String, u64> = want.iter().map(|(id, c)| (id.clone(), c * 5)).collect();
        assert_eq!(as_map(&counter), tripled, "{algorithm:?}: by hash, batches, preference lists");
        assert_eq!(counter.snapshot().total, 5 * keys.len() as u64);
        // The plain ring counts nothing into anyone.
        plain.get("x").unwrap();
        assert_eq!(counter.snapshot().total, 5 * keys.len() as u64);
    }
}

#[test]
fn threads_beyond_the_stripes_lose_no_count() {
    let counter = LookupCounter::new();
    let counted = Arc::new(counter.count(ring(Algorithm::Ring, &["a", "b", "c"])));
    let keys = Arc::new(keys(500));
    let threads = shardring::COUNT_STRIPES + 16;
    let rounds = 100;
    // Every thread holds a row before any counts: the last 16 share one.
    let all_started = Arc::new(std::sync::Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let (counted, keys, all_started) = (Arc::clone(&counted), Arc::clone(&keys), Arc::clone(&all_started));
            std::thread::spawn(move || {
                counted.get(&keys[0]).unwrap();
                all_started.wait();
                for round in 0..rounds {
                    // Skip the first key once: it was counted before the barrier.
                    for key in &keys[usize::from(round == 0)..] {
                        counted.get(key).unwrap();
                    }
                }
            })
        })
        .collect();
    handles.into_iter().for_each(|h| h.join().unwrap());
    let per_round = expected(&counted, &keys);
    // `expected` counted once more through the counted ring itself.
    let want: BTreeMap<String, u64> =
        per_round.iter().map(|(id, c)| (id.clone(), c * (threads * rounds + 1) as u64)).collect();
    assert_eq!(as_map(&counter), want);
}

#[test]
fn counts_outlive_their_rings_for_the_nodes_still_held() {
    let counter = LookupCounter::new();
    let first = counter.count(ring(Algorithm::Ring, &["a", "b"]));
    for key in keys(100) {
        first.get(&key).unwrap();
    }
    let before = counter.snapshot();
    assert_eq!(before.get("a") + before.get("b"), 100);
    let second = counter.count(ring(Algorithm::Ring, &["b", "c"]));
    // Both rings in use: both tables count.
    assert_eq!(counter.snapshot(), before.clone().with(&[("c", 0)]));
    drop(first);
    for key in keys(100) {
        second.get(&key).unwrap();
    }
    let after = counter.snapshot();
    // b's counts carried over from the dropped ring; a, held by no ring, is gone.
    assert_eq!(after.get("a"), 0);
    assert!(after.counts.iter().all(|(id, _)| id != "a"));
    assert_eq!(after.get("b") + after.get("c"), 100 + before.get("b"));
    // Folded once, counted once: a second snapshot says the same.
    assert_eq!(counter.snapshot(), after);
    // A counter nobody reads keeps only the tables in use.
    for _ in 0..1_000 {
        drop(counter.count(ring(Algorithm::Ring, &["b", "c"])));
    }
    assert!(counter.live_tables() <= 2, "{} tables kept", counter.live_tables());
    assert_eq!(counter.snapshot(), after);
}

trait With {
    fn with(self, extra: &[(&str, u64)]) -> Self;
}

impl With for shardring::LookupCounts {
    fn with(mut self, extra: &[(&str, u64)]) -> Self {
        self.counts.extend(extra.iter().map(|(id, c)| (id.to_string(), *c)));
        self.counts.sort();
        self.total += extra.iter().map(|(_, c)| c).sum::<u64>();
        self
    }
}

#[test]
fn a_transition_counts_one_node_per_call() {
    let config: RingConfig = serde_json::from_str(
        r#"{"format_version": 1, "algorithm": "ring", "nodes": [
            {"id": "a"}, {"id": "b"}, {"id": "c", "state": "warming"}, {"id": "d", "state": "draining"}]}"#,
    )
    .unwrap();
    let plain = Transition::from_config(&config).unwrap();
    let counter = LookupCounter::new();
    let counted = counter.count_transition(plain.clone());
    assert_eq!(counted.fingerprint(), plain.fingerprint());
    assert_eq!(counted.state("c"), Some(NodeState::Warming));
    let keys = keys(1_000);
    let mut reads = BTreeMap::<String, u64>::new();
    let mut olds = BTreeMap::<String, u64>::new();
    for key in &keys {
        let read = counted.read_nodes(key).unwrap();
        assert_eq!(read.iter().map(|n| n.id()).collect::<Vec<_>>(), {
            plain.read_nodes(key).unwrap().iter().map(|n| n.id()).collect::<Vec<_>>()
        });
        *reads.entry(read[0].id().to_owned()).or_default() += 1;
        counted.write_nodes(key).unwrap();
        *olds.entry(counted.route(key).unwrap().old.id().to_owned()).or_default() += 1;
    }
    let mut want = reads.clone();
    want.values_mut().for_each(|c| *c *= 2);
    for (id, c) in olds {
        *want.entry(id).or_default() += c;
    }
    assert_eq!(as_map(&counter), want);
    assert_eq!(counter.snapshot().total, 3 * keys.len() as u64);
    // Steady: one ring, still one count per call.
    let counter = LookupCounter::new();
    let steady = counter.count_transition(Transition::steady(Arc::new(ring(Algorithm::Ring, &["a", "b"]))));
    for key in &keys {
        steady.read_nodes(key).unwrap();
        steady.route(key).unwrap();
    }
    assert_eq!(counter.snapshot().total, 2 * keys.len() as u64);
}

#[test]
fn a_key_falls_in_the_arc_its_owner_ends() {
    for algorithm in [Algorithm::Ring, Algorithm::Ketama, Algorithm::Nginx, Algorithm::Slots] {
        let ring = ring(algorithm, &["10.0.0.1:11211", "10.0.0.2:11211", "10.0.0.3:11211"]);
        let ends: Vec<u64> = {
            let bits = algorithm.hash_bits();
            // A point `h` ends its arc at the last 64-bit position of `h`.
            let shift = |h: u64| if bits >= 64 { h } else { (h << (64 - bits)) | (u64::MAX >> bits) };
            ring.points().map(|(p, _)| shift(p)).collect()
        };
        for key in keys(300) {
            let arc = ring.arc_of(&key).unwrap().expect("arcs");
            assert_eq!(arc.owner, ring.get_index(&key).unwrap(), "{algorithm:?} {key}");
            let inside = if arc.start <= arc.end {
                (arc.start..=arc.end).contains(&arc.position)
            } else {
                arc.position >= arc.start || arc.position <= arc.end
            };
            assert!(inside, "{algorithm:?} {key}: {arc:?}");
            if !ends.is_empty() {
                // The arc is one gap between neighbouring points.
                assert!(ends.contains(&arc.end), "{algorithm:?}: {arc:?} ends on no point");
                assert!(ends.iter().all(|&p| !(if arc.start <= arc.end {
                    p >= arc.start && p < arc.end
                } else {
                    p >= arc.start || p < arc.end
                })));
            }
        }
    }
    assert_eq!(ring(Algorithm::Jump, &["a"]).arc_of("k").unwrap(), None);
}

#[test]
fn analysis_is_no_lookup() {
    for algorithm in [Algorithm::Jump, Algorithm::Rendezvous, Algorithm::Ring, Algorithm::Maglev] {
        let counter = LookupCounter::new();
        let old = counter.count(ring(algorithm, &["a", "b", "c"]));
        let new = counter.count(ring(algorithm, &["a", "b", "c", "d"]));
        old.diff(&new).unwrap();
        old.ownership();
        old.balance(keys(100)).unwrap();
        old.arc_of("k").unwrap();
        assert_eq!(counter.snapshot().total, 0, "{algorithm:?}");
    }
}
