//! Criterion benchmarks of the ring: lookups with the key hash included,
//! preference lists, building and deriving. `cargo bench -p shardring`.

use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use shardring::{Node, Ring};

fn ring(nodes: usize) -> Ring {
    Ring::builder().nodes((0..nodes).map(|i| Node::new(format!("cache-{i:04}.example.internal"), 1.0))).build().unwrap()
}

/// `count` distinct 30-byte keys.
fn keys(count: usize) -> Vec<[u8; 30]> {
    (0..count)
        .map(|i| {
            let mut key = [b'x'; 30];
            key[..24].copy_from_slice(format!("user:session:{i:011}").as_bytes());
            key
        })
        .collect()
}

fn lookups(c: &mut Criterion) {
    let ring = ring(100);
    let mut group = c.benchmark_group("100 nodes x 160 vnodes");
    group.throughput(Throughput::Elements(1));
    for (label, count) in [("1k keys (in cache)", 1_000), ("1M keys", 1_000_000)] {
        let keys = keys(count);
        let mut i = 0;
        group.bench_function(format!("get, {label}"), |b| {
            b.iter(|| {
                i = if i + 1 == keys.len() { 0 } else { i + 1 };
                black_box(ring.get_index(black_box(&keys[i])).unwrap())
            })
        });
        let mut out = [0usize; 3];
        group.bench_function(format!("get_n(3) into a buffer, {label}"), |b| {
            b.iter(|| {
                i = if i + 1 == keys.len() { 0 } else { i + 1 };
                black_box(ring.get_n_indices(black_box(&keys[i]), &mut out).unwrap())
            })
        });
    }
    let keys = keys(1_000_000);
    let mut out = vec![0usize; 1024];
    group.throughput(Throughput::Elements(1024));
    let mut start = 0;
    group.bench_function("get_indices, blocks of 1024 contiguous keys from 1M", |b| {
        b.iter(|| {
            start = if start + 2048 > keys.len() { 0 } else { start + 1024 };
            ring.get_indices(&keys[start..start + 1024], &mut out).unwrap()
        })
    });
    group.finish();
}

fn building(c: &mut Criterion) {
    let nodes: Vec<Node> = (0..1000).map(|i| Node::new(format!("cache-{i:04}"), 1.0)).collect();
    let mut group = c.benchmark_group("1000 nodes x 160 vnodes");
    group.sample_size(20);
    group.bench_function("build", |b| {
        b.iter_batched(|| nodes.clone(), |n| Ring::builder().nodes(n).build().unwrap(), BatchSize::LargeInput)
    });
    let base = Ring::builder().nodes(nodes.clone()).build().unwrap();
    group.bench_function("derive with one node added", |b| {
        b.iter(|| base.with_node(Node::new("cache-new", 1.0)).unwrap())
    });
    group.bench_function("derive with one node removed", |b| b.iter(|| base.without_node("cache-0500").unwrap()));
    group.finish();
}

criterion_group!(benches, lookups, building);
criterion_main!(benches);
