//! Concurrency stress: reader threads place keys while a writer keeps
//! deriving rings (remove x, add y, remove y, add x, ...) and publishing each
//! through a shared cell, for every algorithm, about 10 s in all
//! (`SHARDRING_STRESS_SECS` changes it). Every answer must come from one
//! whole snapshot: a reader's `get`, `get_n` and batch answers must all equal
//! what a ring rebuilt from that snapshot's config answers, which the writer
//! records (by fingerprint) before publishing the snapshot.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use shardring::{Algorithm, Node, Ring};

const READERS: usize = 3;
const KEYS: usize = 64;

/// Per key: the owner and the preference list of 3, as node ids.
type Answers = Vec<(String, Vec<String>)>;

fn keys() -> Vec<String> {
    (0..KEYS).map(|i| format!("stress-key-{i}")).collect()
}

/// Answers of `ring` for `keys`, from a ring rebuilt from its config.
fn expected(ring: &Ring, keys: &[String]) -> Answers {
    let rebuilt = ring.to_config().build().expect("a published ring rebuilds from its config");
    assert_eq!(rebuilt.fingerprint(), ring.fingerprint());
    keys.iter()
        .map(|k| {
            let owner = rebuilt.get(k).unwrap().id().to_owned();
            let list = rebuilt.get_n(k, 3).unwrap().iter().map(|n| n.id().to_owned()).collect();
            (owner, list)
        })
        .collect()
}

/// What one reader saw on one snapshot, checked against the record.
fn read(ring: &Ring, keys: &[String], record: &Answers) {
    let mut batch = vec![0usize; keys.len()];
    assert_eq!(ring.get_indices(keys, &mut batch).unwrap(), keys.len());
    for (i, key) in keys.iter().enumerate() {
        let owner = ring.get(key).unwrap().id();
        let list: Vec<&str> = ring.get_n(key, 3).unwrap().iter().map(|n| n.id()).collect();
        assert_eq!(owner, record[i].0, "owner of {key}");
        assert_eq!(list, record[i].1, "preference list of {key}");
        assert_eq!(ring.nodes()[batch[i]].id(), owner, "batch owner of {key}");
        let mut distinct = list.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), list.len(), "repeated node in the list of {key}");
    }
}

fn stress(algorithm: Algorithm, duration: Duration) -> (u64, u64) {
    let server = |i: usize| format!("10.0.0.{i}:11211");
    let mut builder = Ring::builder().algorithm(algorithm);
    // Small Maglev tables: a derivation refills the table, and the writer
    // must derive a few times within its share of the run even in debug builds.
    if matches!(algorithm, Algorithm::Maglev | Algorithm::EnvoyMaglev) {
        builder = builder.table_size(1009);
    }
    for i in 1..=8 {
        builder = builder.nodes([Node::new(server(i), 1.0)]);
    }
    let first = builder.nodes([Node::new(server(100), 1.0)]).build().unwrap();
    let keys = keys();
    let records = Mutex::new(HashMap::from([(first.fingerprint(), Arc::new(expected(&first, &keys)))]));
    let current = RwLock::new(Arc::new(first));
    let done = AtomicBool::new(false);
    let (reads, swaps) = (AtomicU64::new(0), AtomicU64::new(0));
    std::thread::scope(|scope| {
        for _ in 0..READERS {
            scope.spawn(|| {
                while !done.load(Ordering::Relaxed) {
                    let ring = current.read().unwrap().clone();
                    let record = records.lock().unwrap()[&ring.fingerprint()].clone();
                    read(&ring, &keys, &record);
                    reads.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
        let start = Instant::now();
        let mut step = 0usize;
        while start.elapsed() < duration {
            let ring = current.read().unwrap().clone();
            // remove 100, add 101, remove 101, add 100, ...
            let next = match step % 4 {
                0 => ring.without_node(&server(100)),
                1 => ring.with_node(Node::new(server(101), 1.0)),
                2 => ring.without_node(&server(101)),
                _ => ring.with_node(Node::new(server(100), 1.0)),
            }
            .unwrap();
            let record = Arc::new(expected(&next, &keys));
            records.lock().unwrap().entry(next.fingerprint()).or_insert(record);
            *current.write().unwrap() = Arc::new(next);
            swaps.fetch_add(1, Ordering::Relaxed);
            step += 1;
        }
        done.store(true, Ordering::Relaxed);
    });
    (reads.into_inner(), swaps.into_inner())
}

#[test]
fn readers_see_whole_snapshots_while_a_writer_derives() {
    let seconds: f64 = std::env::var("SHARDRING_STRESS_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(10.0);
    let each = Duration::from_secs_f64(seconds / Algorithm::ALL.len() as f64);
    for algorithm in Algorithm::ALL {
        let (reads, swaps) = stress(algorithm, each);
        assert!(reads > 0 && swaps > 3, "{algorithm}: {reads} reads, {swaps} swaps");
        eprintln!("{algorithm}: {reads} snapshot reads ({} keys each) across {swaps} swaps", KEYS);
    }
}
