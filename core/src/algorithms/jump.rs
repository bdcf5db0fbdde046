//! Jump consistent hash (Lamping & Veach, "A Fast, Minimal Memory,
//! Consistent Hash Algorithm", 2014) over the node list in order.
//!
//! Bucket `b` is node `b` of the list, so only appending a node or removing
//! the last one moves the minimal share of keys (1/(n+1) to the new node);
//! removing or reordering any other node renumbers the buckets after it and
//! moves most keys. Nodes carry no weights (each must be exactly 1) and the
//! table needs no memory.

use crate::error::RingError;
use crate::hash::KeyRule;
use crate::node::Node;
use crate::params::{Params, RingParams};
use crate::scheme::{Facts, Lookup, PerNode, Placement, PointHash, Scheme};

pub(crate) const WEIGHT_RULE: &str =
    "jump has no weights: every node must have weight 1 (remove the last node to shrink, or use rendezvous or maglev)";

/// The bucket in `0..buckets` of a 64-bit key, as in the paper's listing:
/// a 64-bit linear congruential generator (multiplier 2862933555777941757)
/// drives jumps forward until the next one lands past `buckets`.
/// `buckets` must be at least 1.
#[inline]
pub fn jump_hash(mut key: u64, buckets: u32) -> u32 {
    debug_assert!(buckets > 0);
    let (mut b, mut j) = (0i64, 0i64);
    while j < i64::from(buckets) {
        b = j;
        key = key.wrapping_mul(2_862_933_555_777_941_757).wrapping_add(1);
        j = ((b + 1) as f64 * ((1u64 << 31) as f64 / ((key >> 33) + 1) as f64)) as i64;
    }
    b as u32
}

/// The `jump` algorithm.
pub(crate) struct JumpHash;

static FACTS: Facts = Facts {
    seeded: true,
    order_places_keys: true,
    unit_weights: Some(WEIGHT_RULE),
    weight_zero_drains: false,
    ..Facts::DEFAULT
};

impl Scheme for JumpHash {
    fn facts(&self) -> &Facts {
        &FACTS
    }

    fn resolve(&self, given: &RingParams) -> Result<Params, RingError> {
        Params::base(given, None, KeyRule::Xxh3)
    }

    /// Every weight is 1 (the facade checks [`WEIGHT_RULE`]).
    fn build(&self, _: &Params, nodes: &[Node], _: PointHash, _: PerNode) -> Result<Placement, RingError> {
        Ok(Placement::other(Buckets(nodes.len())))
    }
}

/// Jump hash over this many buckets, bucket `b` being node `b`.
#[derive(Debug)]
struct Buckets(usize);

impl Lookup for Buckets {
    fn owner(&self, hash: u64) -> usize {
        jump_hash(hash, self.0 as u32) as usize
    }

    fn walk(&self, hash: u64, visit: &mut dyn FnMut(usize) -> bool) {
        walk_buckets(hash, self.0, jump_hash, visit)
    }

    fn mark_live(&self, live: &mut [bool]) {
        live.fill(true);
    }

    fn heap_bytes(&self) -> usize {
        0
    }

    fn arc_ends(&self) -> Option<Vec<(u64, usize)>> {
        None
    }

    /// `1/n` each.
    fn expected_shares(&self, shares: &mut [f64]) {
        shares.fill(1.0 / self.0 as f64);
    }
}

/// The 64-bit key of replica `i >= 1`: the key hash mixed with `i` by the
/// MurmurHash3 64-bit finaliser, so each replica jumps independently.
#[inline]
fn replica_key(hash: u64, i: u64) -> u64 {
    crate::hash::fmix64(hash ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// Visits nodes in the preference order of `hash` over `n` nodes, each once,
/// until `visit` returns true: first `bucket(hash, n)`, then for `i = 1, 2,
/// ...` the `bucket(replica_key(hash, i), n - i)`-th of the nodes not yet
/// visited, counted in list order. `bucket` is jump hash, or JumpBackHash
/// for `jumpback`.
pub(crate) fn walk_buckets(hash: u64, n: usize, bucket: fn(u64, u32) -> u32, visit: &mut dyn FnMut(usize) -> bool) {
    let mut taken: Vec<usize> = Vec::new();
    for i in 0..n {
        let key = if i == 0 { hash } else { replica_key(hash, i as u64) };
        let mut pick = bucket(key, (n - i) as u32) as usize;
        // The pick-th untaken node: skip over taken ones at or before it.
        for &t in &taken {
            if t <= pick {
                pick += 1;
            } else {
                break;
            }
        }
        let at = taken.partition_point(|&t| t < pick);
        taken.insert(at, pick);
        if visit(pick) {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_published_values() {
        // Values from the reference implementation's users (e.g. the Go port
        // github.com/dgryski/go-jump, jump_test.go).
        assert_eq!(jump_hash(1, 1), 0);
        assert_eq!(jump_hash(42, 57), 43);
        assert_eq!(jump_hash(0xDEAD_10CC, 1), 0);
        assert_eq!(jump_hash(0xDEAD_10CC, 666), 361);
        assert_eq!(jump_hash(256, 1024), 520);
    }

    #[test]
    fn walk_visits_every_node_once() {
        for hash in [0u64, 1, 42, u64::MAX] {
            let mut seen = Vec::new();
            walk_buckets(hash, 9, jump_hash, &mut |i| {
                seen.push(i);
                false
            });
            assert_eq!(seen[0], jump_hash(hash, 9) as usize);
            seen.sort_unstable();
            assert_eq!(seen, (0..9).collect::<Vec<_>>());
        }
    }
}
