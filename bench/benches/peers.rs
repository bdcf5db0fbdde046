//! shardring against the peer crates, side by side in one process and one
//! run: each group holds shardring and the peer on the same nodes, points
//! and keys (100 nodes; 100,000 distinct 30-byte keys, key hash included;
//! the ring group runs again on 1,000 keys, a key set that stays in cache;
//! jumpback at 10, 1,000 and 1,000,000 buckets; memento on 1,000 nodes
//! after 0%, 10% and 50% random removals; the ring again with lookups
//! counted per node, and with hot keys observed). `make bench` runs it and
//! `bench/report.py` prints the ratios.

use std::hint::black_box;
use std::net::SocketAddr;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use maglev::ConsistentHasher;
use shardring::{Algorithm, Node, Ring};
use shardring_bench::keys;

const NODES: usize = 100;

fn addresses() -> Vec<SocketAddr> {
    (0..NODES).map(|i| format!("10.0.{}.{}:11211", i / 250, i % 250 + 1).parse().unwrap()).collect()
}

fn ring(algorithm: Algorithm) -> Ring {
    let nodes = addresses().into_iter().map(|a| Node::new(a.to_string(), 1.0));
    let builder = Ring::builder().algorithm(algorithm).nodes(nodes);
    builder.build().unwrap()
}

/// Benchmarks `place` over the keys in turn.
fn bench<'k>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    keys: &'k [[u8; 30]],
    place: impl Fn(&'k [u8]) -> usize,
) {
    let mut i = 0;
    group.bench_function(name, |b| {
        b.iter(|| {
            i = if i + 1 == keys.len() { 0 } else { i + 1 };
            black_box(place(black_box(&keys[i])))
        })
    });
}

/// A virtual node of the `hashring` crate, which has no vnodes of its own.
#[derive(Hash, PartialEq, Clone, Copy, Debug)]
struct VNode {
    node: usize,
    index: u32,
}

fn continuum(c: &mut Criterion) {
    continuum_on(c, "ring, 100 nodes x 160 points", &keys(100_000));
    continuum_on(c, "ring, 100 nodes x 160 points, 1,000 keys", &keys(1_000));
}

fn continuum_on(c: &mut Criterion, name: &str, keys: &[[u8; 30]]) {
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Elements(1));
    let ours = ring(Algorithm::Ring);
    bench(&mut group, "shardring ring", keys, |k| ours.get_index(k).unwrap());
    // pingora-ketama places keys as nginx does: the same points as our nginx mode.
    let nginx = ring(Algorithm::Nginx);
    bench(&mut group, "shardring nginx", keys, |k| nginx.get_index(k).unwrap());
    // The peer modes of libmemcached (plain ketama: 100 points per server,
    // one-at-a-time keys) and twemproxy (fnv1a_64 keys), on the same servers.
    let nodes = || addresses().into_iter().map(|a| Node::new(a.to_string(), 1.0));
    let libmemcached = Ring::builder().algorithm(Algorithm::Libmemcached).nodes(nodes()).build().unwrap();
    bench(&mut group, "shardring libmemcached", keys, |k| libmemcached.get_index(k).unwrap());
    let twemproxy = Ring::builder().algorithm(Algorithm::Twemproxy).nodes(nodes()).build().unwrap();
    bench(&mut group, "shardring twemproxy", keys, |k| twemproxy.get_index(k).unwrap());
    let buckets: Vec<pingora_ketama::Bucket> =
        addresses().into_iter().map(|a| pingora_ketama::Bucket::new(a, 1)).collect();
    let pingora = pingora_ketama::Continuum::new(&buckets);
    bench(&mut group, "pingora-ketama", keys, |k| pingora.node_idx(k));
    let buckets: Vec<pingora_ketama_latest::Bucket> =
        addresses().into_iter().map(|a| pingora_ketama_latest::Bucket::new(a, 1)).collect();
    let latest = pingora_ketama_latest::Continuum::new(&buckets);
    bench(&mut group, "pingora-ketama 0.9", keys, |k| latest.node_idx(k));
    // What the key hashes alone cost, in the same loop: the floor under each lookup.
    bench(&mut group, "XXH3-64 alone", keys, |k| shardring::hash_key(k, 0) as usize);
    bench(&mut group, "CRC-32 alone", keys, |k| shardring::KeyHash::Crc32a.hash(k) as usize);
    let mut hashring = hashring::HashRing::new();
    for node in 0..NODES {
        hashring.batch_add((0..160).map(|index| VNode { node, index }).collect());
    }
    bench(&mut group, "hashring", keys, |k| hashring.get(&k).unwrap().node);
    group.finish();
}

/// What counting lookups per node adds to a `get` (issue 34's goal: at
/// most 2 ns): the same ring and keys without and with a
/// [`shardring::LookupCounter`], on one thread and on the in-cache key set,
/// where the added work is the largest share of a lookup.
fn counting(c: &mut Criterion) {
    let keys = keys(1_000);
    let mut group = c.benchmark_group("counting, ring, 100 nodes, 1,000 keys");
    group.throughput(Throughput::Elements(1));
    let plain = ring(Algorithm::Ring);
    bench(&mut group, "shardring ring", &keys, |k| plain.get_index(k).unwrap());
    let counter = shardring::LookupCounter::new();
    let counted = counter.count(ring(Algorithm::Ring));
    bench(&mut group, "shardring ring, counted", &keys, |k| counted.get_index(k).unwrap());
    group.finish();
}

/// What hot-key detection adds to a `get` (issue 35's goal: at most 10 ns):
/// the ring's own hash feeds the sketch (default settings: 64 KiB, one
/// lookup in 4 counted), on the in-cache key set, one thread.
fn hot_keys(c: &mut Criterion) {
    let keys = keys(1_000);
    let mut group = c.benchmark_group("hot keys, ring, 100 nodes, 1,000 keys");
    group.throughput(Throughput::Elements(1));
    let ring = ring(Algorithm::Ring);
    bench(&mut group, "shardring ring", &keys, |k| ring.get_index(k).unwrap());
    let sketch = shardring::HotKeys::new(shardring::HotKeysOptions::default()).unwrap();
    bench(&mut group, "shardring ring, hot keys observed", &keys, |k| {
        let hash = ring.hash_key(k);
        sketch.observe_hashed(k, hash);
        ring.index_by_hash(hash).unwrap()
    });
    group.finish();
}

fn alternatives(c: &mut Criterion) {
    let keys = &keys(100_000);
    let mut group = c.benchmark_group("jump, 100 buckets");
    let ours = ring(Algorithm::Jump);
    bench(&mut group, "shardring jump", keys, |k| ours.get_index(k).unwrap());
    let jumphash = jumphash::JumpHasher::new();
    bench(&mut group, "jumphash", keys, |k| jumphash.slot(&k, NODES as u32) as usize);
    group.finish();

    let mut group = c.benchmark_group("maglev, 100 nodes, 65537 slots");
    let ours = ring(Algorithm::Maglev);
    bench(&mut group, "shardring maglev", keys, |k| ours.get_index(k).unwrap());
    let peer = maglev::Maglev::with_capacity((0..NODES).collect::<Vec<usize>>(), 65_537);
    bench(&mut group, "maglev", keys, |k| *peer.get(&k).unwrap());
    group.finish();

    let mut group = c.benchmark_group("rendezvous, 100 nodes");
    let ours = ring(Algorithm::Rendezvous);
    bench(&mut group, "shardring rendezvous", keys, |k| ours.get_index(k).unwrap());
    let nodes = addresses().into_iter().map(|a| Node::new(a.to_string(), 1.0));
    let float = Ring::builder().algorithm(Algorithm::Rendezvous).score(shardring::RendezvousScore::Float);
    let float = float.nodes(nodes).build().unwrap();
    bench(&mut group, "shardring rendezvous, float score", keys, |k| float.get_index(k).unwrap());
    // Four weights: one logarithm per weight and lookup.
    let weighted = addresses().into_iter().enumerate().map(|(i, a)| Node::new(a.to_string(), (i % 4 + 1) as f64));
    let weighted = Ring::builder().algorithm(Algorithm::Rendezvous).nodes(weighted).build().unwrap();
    bench(&mut group, "shardring rendezvous, weights 1-4", keys, |k| weighted.get_index(k).unwrap());
    // Every weight distinct: every node scored.
    let distinct = addresses().into_iter().enumerate().map(|(i, a)| Node::new(a.to_string(), 1.0 + i as f64 / 100.0));
    let distinct = Ring::builder().algorithm(Algorithm::Rendezvous).nodes(distinct).build().unwrap();
    bench(&mut group, "shardring rendezvous, 100 weights", keys, |k| distinct.get_index(k).unwrap());
    let peer = hrw_hash::HrwNodes::new(0..NODES);
    bench(&mut group, "hrw-hash", keys, |k| *peer.sorted(&k).next().unwrap());
    group.finish();
}

/// JumpBackHash against our jump and the `jumphash` crate (SipHash-1-3 keys,
/// Lamping's loop) at three bucket counts.
fn jumpback(c: &mut Criterion) {
    let keys = &keys(100_000);
    let jumphash = jumphash::JumpHasher::new();
    for (buckets, name) in [(10u32, "10"), (1_000, "1,000"), (1_000_000, "1,000,000")] {
        let mut group = c.benchmark_group(format!("jumpback, {name} buckets"));
        let nodes = || (0..buckets).map(|i| Node::new(format!("bucket-{i}"), 1.0));
        let ours = Ring::builder().algorithm(Algorithm::Jumpback).nodes(nodes()).build().unwrap();
        bench(&mut group, "shardring jumpback", keys, |k| ours.get_index(k).unwrap());
        let jump = Ring::builder().algorithm(Algorithm::Jump).nodes(nodes()).build().unwrap();
        bench(&mut group, "shardring jump", keys, |k| jump.get_index(k).unwrap());
        bench(&mut group, "jumphash", keys, |k| jumphash.slot(&k, buckets) as usize);
        group.finish();
    }
}

/// MementoHash against AnchorHash (the `anchorhash` crate, capacity 1,000,
/// keys hashed by XXH3 as ours are) and our `ring` on the same survivors,
/// after removing 0%, 10% and 50% of 1,000 nodes in one random order.
fn memento(c: &mut Criterion) {
    let keys = &keys(100_000);
    const N: usize = 1_000;
    let ids: Vec<String> = (0..N).map(|i| format!("node-{i}")).collect();
    let order = shardring_bench::removal_order(N, 0x5eed);
    for percent in [0usize, 10, 50] {
        let gone = &order[..N * percent / 100];
        let mut group = c.benchmark_group(format!("memento, 1,000 nodes, {percent}% removed"));
        let memento = gone.iter().fold(
            Ring::builder()
                .algorithm(Algorithm::Memento)
                .nodes(ids.iter().map(|id| Node::new(id, 1.0)))
                .build()
                .unwrap(),
            |ring, &i| ring.without_node(&ids[i]).unwrap(),
        );
        bench(&mut group, "shardring memento", keys, |k| memento.get_index(k).unwrap());
        let survivors = (0..N).filter(|i| !gone.contains(i)).map(|i| Node::new(&ids[i], 1.0));
        let ring = Ring::builder().nodes(survivors).build().unwrap();
        bench(&mut group, "shardring ring", keys, |k| ring.get_index(k).unwrap());
        let mut anchor = shardring_bench::anchor(N);
        for &i in gone {
            anchor.remove_resource(&i).unwrap();
        }
        bench(&mut group, "anchorhash", keys, |k| *anchor.get_resource(k).unwrap());
        group.finish();
    }
}

criterion_group!(benches, continuum, counting, hot_keys, alternatives, jumpback, memento);
criterion_main!(benches);
