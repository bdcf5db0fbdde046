//! What the benchmarks share (`benches/peers.rs`, `benches/removals.rs`,
//! `benches/curves.rs`): the keys they place, a reproducible removal order
//! and an AnchorHash built as they compare it.

/// `count` distinct 30-byte keys (`user:session:` and 11 digits, padded
/// with `x`); 100,000 are too many for any per-key cache to help and stream
/// 3 MB through the caches.
pub fn keys(count: usize) -> Vec<[u8; 30]> {
    (0..count)
        .map(|i| {
            let mut key = [b'x'; 30];
            key[..24].copy_from_slice(format!("user:session:{i:011}").as_bytes());
            key
        })
        .collect()
}

/// AnchorHash from the `anchorhash` crate over resources `0..n` with
/// capacity `n`, hashing keys with XXH3-64 as shardring does, so a
/// comparison measures the algorithms, not their key hashes.
pub fn anchor<K: std::hash::Hash>(n: usize) -> anchorhash::AnchorHash<K, usize, xxhash_rust::xxh3::Xxh3DefaultBuilder> {
    let capacity = u16::try_from(n).expect("the anchorhash crate holds at most 65,535 buckets");
    anchorhash::Builder::with_hasher(xxhash_rust::xxh3::Xxh3DefaultBuilder).with_resources(0..n).build(capacity)
}

/// A random order of the indices `0..n` (a Fisher-Yates shuffle driven by
/// SplitMix64 from `seed`), the order nodes are removed in.
pub fn removal_order(n: usize, seed: u64) -> Vec<usize> {
    let mut state = seed;
    let mut next = move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        order.swap(i, (next() % (i as u64 + 1)) as usize);
    }
    order
}
