//! The hot-key sketch against exact counts: Zipf-distributed requests over
//! 1,000,000 keys, the top 100 found with 64 KiB of buckets; many threads at
//! once; a key that cools leaves the top.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use shardring::{HotKeys, HotKeysOptions};

/// `count` requests over `keys` keys, Zipf with exponent `s`, from a fixed
/// seed: key `i` (from 0) drawn with probability proportional to `1/(i+1)^s`.
fn zipf(keys: usize, s: f64, count: usize, seed: u64) -> Vec<u32> {
    let mut cumulative = Vec::with_capacity(keys);
    let mut total = 0.0;
    for i in 0..keys {
        total += 1.0 / ((i + 1) as f64).powf(s);
        cumulative.push(total);
    }
    let mut state = seed;
    (0..count)
        .map(|_| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            let u = (z >> 11) as f64 / (1u64 << 53) as f64 * total;
            cumulative.partition_point(|&c| c < u) as u32
        })
        .collect()
}

fn key(i: u32) -> String {
    format!("user:{i:07}")
}

/// Recall and precision of the sketch's top 100 against the exact top 100.
fn quality(requests: &[u32], options: HotKeysOptions) -> (f64, f64, HotKeys) {
    let sketch = HotKeys::new(options).unwrap();
    let mut exact: HashMap<u32, u64> = HashMap::new();
    for &i in requests {
        sketch.observe(key(i));
        *exact.entry(i).or_default() += 1;
    }
    let mut ranked: Vec<(u32, u64)> = exact.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    // Keys tied with the 100th count are all in the true top 100.
    let cut = ranked[99].1;
    let truth: std::collections::HashSet<String> =
        ranked.iter().take_while(|(_, c)| *c >= cut).map(|(i, _)| key(*i)).collect();
    let found: Vec<String> = sketch.top().into_iter().map(|h| String::from_utf8(h.key).unwrap()).collect();
    let hits = found.iter().filter(|k| truth.contains(*k)).count();
    (hits as f64 / 100.0, hits as f64 / found.len() as f64, sketch)
}

#[test]
fn the_top_100_of_zipf_requests_is_found_in_64_kib() {
    for s in [0.99, 1.2] {
        let requests = zipf(1_000_000, s, 2_000_000, 7);
        let (recall, precision, sketch) = quality(&requests, HotKeysOptions::default());
        assert_eq!(sketch.sketch_bytes(), 64 * 1024);
        eprintln!("zipf s = {s}: recall {recall:.2}, precision {precision:.2}");
        assert!(recall >= 0.95 && precision >= 0.95, "s = {s}: recall {recall}, precision {precision}");
        let top = sketch.top();
        assert_eq!(top.len(), 100);
        assert_eq!(top[0].key, key(0).into_bytes(), "the hottest key first");
        // Its estimate is within 10% of its true count (a sampled count).
        let exact = requests.iter().filter(|&&i| i == 0).count() as f64;
        assert!((top[0].requests as f64 - exact).abs() < exact * 0.1, "{} against {exact}", top[0].requests);
        assert!(top.windows(2).all(|w| w[0].requests >= w[1].requests));
    }
}

#[test]
fn threads_observing_at_once_find_the_same_hot_keys() {
    let requests = Arc::new(zipf(100_000, 1.2, 800_000, 11));
    let sketch = Arc::new(HotKeys::new(HotKeysOptions { top: 10, ..HotKeysOptions::default() }).unwrap());
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let (requests, sketch) = (Arc::clone(&requests), Arc::clone(&sketch));
            std::thread::spawn(move || {
                for &i in requests.iter().skip(t).step_by(8) {
                    sketch.observe(key(i));
                }
            })
        })
        .collect();
    threads.into_iter().for_each(|t| t.join().unwrap());
    let found: Vec<Vec<u8>> = sketch.top().into_iter().map(|h| h.key).collect();
    let want: Vec<Vec<u8>> = (0..10).map(|i| key(i).into_bytes()).collect();
    assert_eq!(found, want);
}

#[test]
fn a_key_that_cools_leaves_the_top() {
    let sketch = HotKeys::new(HotKeysOptions { top: 2, sample: 1, ..HotKeysOptions::default() }).unwrap();
    for _ in 0..10_000 {
        sketch.observe("yesterday");
    }
    for _ in 0..100 {
        sketch.observe("today");
    }
    assert_eq!(sketch.top().iter().map(|h| h.key.as_slice()).collect::<Vec<_>>(), [&b"yesterday"[..], b"today"]);
    // No more requests for yesterday's key: each half-life halves it.
    for _ in 0..14 {
        sketch.halve();
    }
    assert_eq!(sketch.top(), []);
    for _ in 0..100 {
        sketch.observe("today");
    }
    assert_eq!(sketch.top().iter().map(|h| h.key.as_slice()).collect::<Vec<_>>(), [&b"today"[..]]);
    let bad = [
        HotKeysOptions { width: 1000, ..HotKeysOptions::default() },
        HotKeysOptions { sample: 3, ..HotKeysOptions::default() },
        HotKeysOptions { top: 0, ..HotKeysOptions::default() },
        HotKeysOptions { half_life: Duration::ZERO, ..HotKeysOptions::default() },
    ];
    for options in bad {
        assert!(HotKeys::new(options).is_err(), "{options:?}");
    }
}

#[test]
fn a_key_that_turns_hot_after_the_buckets_filled_still_enters() {
    // Every bucket taken by cold keys first (HeavyKeeper's decay evicts
    // them; without it a late hot key finds no bucket).
    let sketch = HotKeys::new(HotKeysOptions { top: 5, sample: 1, width: 1024, ..HotKeysOptions::default() }).unwrap();
    for i in 0..200_000u32 {
        sketch.observe(key(i));
        sketch.observe(key(i));
    }
    for _ in 0..2_000 {
        sketch.observe("late and hot");
    }
    let top = sketch.top();
    assert_eq!(
        top[0].key,
        b"late and hot",
        "{:?}",
        top.iter().map(|h| String::from_utf8_lossy(&h.key)).collect::<Vec<_>>()
    );
    assert!(top[0].requests > 1_500, "{}", top[0].requests);
}

#[test]
fn a_ring_with_a_32_bit_key_hash_feeds_the_sketch_too() {
    let nodes = ["10.0.0.1:11211", "10.0.0.2:11211"].map(|id| shardring::Node::new(id, 1.0));
    let ring = shardring::Ring::builder().algorithm(shardring::Algorithm::Ketama).nodes(nodes).build().unwrap();
    let requests = zipf(100_000, 1.2, 400_000, 3);
    let sketch = HotKeys::new(HotKeysOptions { top: 10, ..HotKeysOptions::default() }).unwrap();
    for &i in &requests {
        let key = key(i);
        sketch.observe_hashed(key.as_bytes(), ring.hash_key(&key));
    }
    let found: Vec<Vec<u8>> = sketch.top().into_iter().map(|h| h.key).collect();
    assert_eq!(found, (0..10).map(|i| key(i).into_bytes()).collect::<Vec<_>>());
}

#[test]
fn keys_of_a_32_bit_hash_are_told_apart_in_a_crowded_sketch() {
    // 64 buckets a row: every hot key shares its buckets with hundreds of
    // cold keys, which only their fingerprints (from the mixed hash) keep apart.
    let nodes = ["10.0.0.1:11211", "10.0.0.2:11211"].map(|id| shardring::Node::new(id, 1.0));
    let ring = shardring::Ring::builder().algorithm(shardring::Algorithm::Ketama).nodes(nodes).build().unwrap();
    let sketch = HotKeys::new(HotKeysOptions { top: 10, width: 64, sample: 1, ..HotKeysOptions::default() }).unwrap();
    for round in 0..1_000 {
        for hot in 0..10 {
            let key = format!("hot-{hot}");
            sketch.observe_hashed(key.as_bytes(), ring.hash_key(&key));
        }
        for cold in 0..40 {
            let key = format!("cold-{round}-{cold}");
            sketch.observe_hashed(key.as_bytes(), ring.hash_key(&key));
        }
    }
    let top = sketch.top();
    let mut found: Vec<String> = top.iter().map(|h| String::from_utf8(h.key.clone()).unwrap()).collect();
    found.sort();
    assert_eq!(found, (0..10).map(|i| format!("hot-{i}")).collect::<Vec<_>>());
    for hot in &top {
        assert!((800..=1_000).contains(&hot.requests), "{:?}: {}", String::from_utf8_lossy(&hot.key), hot.requests);
    }
}

/// The top keys of `sketch` with their estimated requests.
fn estimates(sketch: &HotKeys) -> Vec<(String, u64)> {
    sketch.top().into_iter().map(|k| (String::from_utf8(k.key).unwrap(), k.requests)).collect()
}

#[test]
fn a_watched_ring_shows_the_sketch_every_lookup_by_key_once() {
    use shardring::{Node, Ring, Transition};
    let sketch = Arc::new(HotKeys::new(HotKeysOptions { sample: 1, ..HotKeysOptions::default() }).unwrap());
    let nodes = |ids: &[&str]| ids.iter().map(|&id| Node::new(id, 1.0)).collect::<Vec<_>>();
    let plain = Ring::builder().nodes(nodes(&["a", "b", "c"])).build().unwrap();
    let ring = sketch.watch(plain.clone());
    assert!(Arc::ptr_eq(ring.hot_keys().unwrap(), &sketch) && plain.hot_keys().is_none());
    ring.get("get").unwrap();
    ring.get_index("get").unwrap();
    ring.get_n("get_n", 2).unwrap();
    ring.get_n_indices("get_n", &mut [0; 2]).unwrap();
    ring.get_indices(["batch", "batch", "batch"], &mut [0; 3]).unwrap();
    let hash = ring.hash_key_observed("hashed");
    // Lookups by hash carry no key: not observed.
    ring.get_by_hash(hash).unwrap();
    ring.get_indices_by_hash(&[hash, hash], &mut [0; 2]).unwrap();
    plain.get("plain").unwrap();
    ring.with_node(Node::new("d", 1.0)).unwrap().get("derived").unwrap();
    let mut seen = estimates(&sketch);
    seen.sort();
    assert_eq!(seen, [("batch".into(), 3), ("get".into(), 2), ("get_n".into(), 2), ("hashed".into(), 1)]);

    // A transition asks two rings for each key: the key is observed once.
    let sketch = Arc::new(HotKeys::new(HotKeysOptions { sample: 1, ..HotKeysOptions::default() }).unwrap());
    let from = Ring::builder().nodes(nodes(&["a", "b"])).build().unwrap();
    let to = Ring::builder().nodes(nodes(&["a", "b", "c"])).build().unwrap();
    let transition = sketch.watch_transition(Transition::between(&from, &to).unwrap());
    for _ in 0..5 {
        transition.read_nodes("moving").unwrap();
        transition.write_nodes("moving").unwrap();
        transition.route("moving").unwrap();
    }
    assert_eq!(estimates(&sketch), [("moving".into(), 15)]);
}
