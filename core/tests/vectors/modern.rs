//! The modern algorithms' cases: rendezvous with the integer score,
//! JumpBackHash and MementoHash.

use shardring::{Algorithm, Node, Ring};

use super::case::{Case, ring_case, with_hashes};
use super::fixtures::{WEIGHTED, algorithm_ring, numbered_keys, two_zones};

/// Rendezvous with the integer score; JumpBackHash (by hash: hash4j's
/// published buckets, checked by the core's unit tests against
/// `jumpBackHashSplitMix64()`); MementoHash with its removal history.
pub(crate) fn modern_cases() -> Vec<Case> {
    let buckets = |n: usize| -> Vec<Node> { (0..n).map(|i| Node::new(format!("bucket-{i:04}"), 1.0)).collect() };
    let jumpback = |n: usize| Ring::builder().algorithm(Algorithm::Jumpback).nodes(buckets(n)).build().unwrap();
    // hash4j's table (SplitMix64) and README keys.
    let hash4j = vec![
        1,
        0x0123_4567_89ab_cdef,
        0x8000_0000_0000_0000,
        0x9e37_79b9_7f4a_7c15,
        0x7f74_87ee_708c_8a96,
        0x6265_648f_bc79_7f25,
        0x85ef_23a0_b545_d53b,
    ];
    let memento = |n: usize| Ring::builder().algorithm(Algorithm::Memento).nodes(buckets(n)).build().unwrap();
    let removed = memento(10)
        .without_node("bucket-0003")
        .and_then(|r| r.without_node("bucket-0007"))
        .and_then(|r| r.without_node("bucket-0000"))
        .and_then(|r| r.with_node(Node::new("refill", 1.0)))
        .unwrap();
    // The last bucket removed first is jump's shrink (nothing on record), then two from the middle.
    let shrunk = Ring::builder()
        .algorithm(Algorithm::Memento)
        .seed(7)
        .nodes(buckets(6))
        .build()
        .and_then(|r| r.without_node("bucket-0005"))
        .and_then(|r| r.without_node("bucket-0002"))
        .and_then(|r| r.without_node("bucket-0001"))
        .unwrap();
    let equal: Vec<String> = (0..10).map(|i| format!("s{i}")).collect();
    let equal: Vec<(&str, f64)> = equal.iter().map(|id| (id.as_str(), 1.0)).collect();
    let weighted = WEIGHTED;
    let eleven: Vec<(String, f64)> = (0..11).map(|i| (format!("w{i}"), f64::from(i % 11 + 1))).collect();
    let eleven: Vec<(&str, f64)> = eleven.iter().map(|(id, w)| (id.as_str(), *w)).collect();
    let zoned = two_zones();
    vec![
        // The integer score (the default): the same on every platform.
        with_hashes(
            ring_case(
                "rendezvous, integer score: weights 1/2/1 and a drained node",
                algorithm_ring(Algorithm::Rendezvous, &weighted),
                &numbered_keys("r", 24),
                &[1, 2, 4],
            ),
            vec![1, 1 << 32, 1 << 63],
        ),
        with_hashes(
            ring_case(
                "rendezvous, integer score: ten equal nodes (no logarithm needed)",
                algorithm_ring(Algorithm::Rendezvous, &equal),
                &numbered_keys("eq-", 24),
                &[1, 3, 10],
            ),
            vec![1, 42, 0xDEAD_10CC, 1 << 63],
        ),
        ring_case(
            "rendezvous, integer score: eleven distinct weights (every node scored)",
            algorithm_ring(Algorithm::Rendezvous, &eleven),
            &numbered_keys("w-", 24),
            &[1, 3],
        ),
        ring_case(
            "rendezvous, integer score: zones and a seed",
            Ring::builder().algorithm(Algorithm::Rendezvous).seed(7).nodes(zoned).build().unwrap(),
            &numbered_keys("z", 16),
            &[2, 3, 5],
        ),
        with_hashes(ring_case("jumpback: 3 buckets", jumpback(3), &numbered_keys("jb-", 8), &[1, 3]), hash4j.clone()),
        with_hashes(
            ring_case("jumpback: 10 buckets", jumpback(10), &numbered_keys("jb-", 16), &[1, 3, 10]),
            hash4j.clone(),
        ),
        with_hashes(ring_case("jumpback: 1000 buckets", jumpback(1000), &numbered_keys("jb-", 16), &[1, 4]), hash4j),
        ring_case(
            "memento: ten buckets, no removals (jumpback's placement)",
            memento(10),
            &numbered_keys("obj-", 24),
            &[1, 3],
        ),
        with_hashes(
            ring_case(
                "memento: buckets 3, 7 and 0 removed, then a node added (it takes bucket 0)",
                removed,
                &numbered_keys("obj-", 32),
                &[1, 2, 8],
            ),
            vec![1, 42, 0xDEAD_10CC, 1 << 63],
        ),
        ring_case(
            "memento: seed 7, the last bucket removed first (a shrink), then two in the middle",
            shrunk,
            &numbered_keys("m-", 16),
            &[1, 3],
        ),
    ]
}
