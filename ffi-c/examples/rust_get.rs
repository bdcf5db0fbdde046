//! The Rust side of `ffi-c/bench/get_node.c`: the same ring, keys and loop on
//! `Ring::get_index`, so the cost of the C boundary can be read off.
//!
//! cargo run --release -p shardring-ffi --example rust_get

use std::hint::black_box;
use std::time::Instant;

use shardring::{Node, Ring};

const KEYS: usize = 1_000_000;
const PASSES: usize = 7;

fn main() {
    let ring = Ring::builder()
        .nodes((0..100).map(|i| Node::new(format!("cache-{i:04}.example.internal"), 1.0)))
        .build()
        .expect("valid ring");
    let keys: Vec<[u8; 30]> = (0..KEYS)
        .map(|i| {
            let mut key = [b'x'; 30];
            key[..24].copy_from_slice(format!("user:session:{i:011}").as_bytes());
            key
        })
        .collect();
    let mut passes = Vec::with_capacity(PASSES);
    let mut sink = 0usize;
    for _ in 0..PASSES {
        let start = Instant::now();
        for key in &keys {
            sink += ring.get_index(black_box(key.as_slice())).expect("ring has points");
        }
        passes.push(start.elapsed().as_nanos() as f64 / KEYS as f64);
    }
    passes.sort_by(f64::total_cmp);
    println!(
        "Rust Ring::get_index:  {:6.1} ns per key (median of {PASSES} passes over {KEYS} keys)",
        passes[PASSES / 2]
    );
    // The batch call over the same layout as C's: a slice per key, one output array.
    let slices: Vec<&[u8]> = keys.iter().map(|k| k.as_slice()).collect();
    let mut out = vec![0usize; KEYS];
    let mut passes = Vec::with_capacity(PASSES);
    for _ in 0..PASSES {
        let start = Instant::now();
        ring.get_indices(black_box(&slices).iter(), &mut out).expect("ring has points");
        passes.push(start.elapsed().as_nanos() as f64 / KEYS as f64);
        sink += out[KEYS / 2];
    }
    passes.sort_by(f64::total_cmp);
    println!(
        "Rust Ring::get_indices: {:5.1} ns per key (slices of the same keys, one output array)",
        passes[PASSES / 2]
    );
    eprintln!("(checksum {sink})");
}
