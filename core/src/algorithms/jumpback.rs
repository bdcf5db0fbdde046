//! JumpBackHash (Ertl, "JumpBackHash: Say Goodbye to the Modulo Operation
//! to Distribute Keys Uniformly to Buckets", Software: Practice and
//! Experience 55(3), 2025; arXiv 2403.18682) over the node list in order.
//!
//! Like jump hash, bucket `b` is node `b` of the list: appending a node
//! moves only the keys it takes (1/(n+1) of them), removing the last node
//! moves only its keys, and removing or reordering any other node
//! renumbers the buckets after it. Unlike jump hash it uses integer
//! operations only and costs expected constant time whatever the node
//! count: at most 5/3 random values per lookup on average. Nodes carry no
//! weights (each must be exactly 1).
//!
//! Bit-exact with hash4j's `ConsistentJumpBackBucketHasher` built by
//! `ConsistentHashing.jumpBackHashSplitMix64()` for the same 64-bit key
//! hash: the random values are the SplitMix64 stream seeded with the key
//! hash (as `java.util.SplittableRandom(hash)` draws them). Java users
//! agree with us by hashing keys with XXH3-64 under the ring's seed (hash4j's
//! `Hashing.xxh3_64(seed)`) and asking that hasher for the bucket.

use crate::algorithms::jump;
use crate::error::RingError;
use crate::hash::{KeyRule, splitmix64};
use crate::node::Node;
use crate::params::{Params, RingParams};
use crate::scheme::{Facts, Lookup, PerNode, Placement, PointHash, Scheme};

pub(crate) const WEIGHT_RULE: &str = "jumpback has no weights: every node must have weight 1 (remove the last node to shrink, or use memento to remove any node)";

/// The largest bucket count hash4j accepts, 2^31 - 1.
pub const MAX_BUCKETS: u32 = i32::MAX as u32;

/// The bucket in `0..buckets` of a 64-bit key hash by JumpBackHash, as
/// hash4j's `jumpBackHashSplitMix64()` computes it: the random values are
/// `r_k = mix64(hash + (k + 1) * 0x9e3779b97f4a7c15)` (SplitMix64, see
/// `core/SPEC.md`, *jumpback*). `buckets` must be in `1..=`[`MAX_BUCKETS`];
/// 0 is read as 1.
///
/// ```
/// // hash4j's README: these keys land in buckets 1, 0, 2 of 3.
/// let keys = [0x7f7487ee708c8a96, 0x6265648fbc797f25, 0x85ef23a0b545d53b];
/// assert_eq!(keys.map(|k| shardring::jumpback::jump_back_hash(k, 3)), [1, 0, 2]);
/// ```
#[inline]
pub fn jump_back_hash(hash: u64, buckets: u32) -> u32 {
    debug_assert!(buckets <= MAX_BUCKETS);
    if buckets <= 1 {
        return 0;
    }
    let mut draw = 0u64;
    let r0 = splitmix64(hash, draw);
    let (low, high) = (r0 as u32, (r0 >> 32) as u32);
    let mask = u32::MAX >> (buckets - 1).leading_zeros();
    let mut x = (low ^ high) & mask;
    while x != 0 {
        // The highest set bit of x, and the half of r0 that the parity of
        // its popcount picks (hash4j shifts r0 right by 32 * popcount, which
        // Java reduces mod 64).
        let lo = 1u32 << (31 - x.leading_zeros());
        let half = if x.count_ones() & 1 == 1 { high } else { low };
        let b = lo + (half & (lo - 1));
        if b < buckets {
            return b;
        }
        let hi = (lo << 1) - 1;
        'draws: loop {
            draw += 1;
            let r = splitmix64(hash, draw);
            for b in [r as u32 & hi, (r >> 32) as u32 & hi] {
                if b < lo {
                    break 'draws;
                }
                if b < buckets {
                    return b;
                }
            }
        }
        x ^= lo;
    }
    0
}

/// The `jumpback` algorithm.
pub(crate) struct JumpBack;

static FACTS: Facts = Facts {
    seeded: true,
    order_places_keys: true,
    unit_weights: Some(WEIGHT_RULE),
    weight_zero_drains: false,
    ..Facts::DEFAULT
};

impl Scheme for JumpBack {
    fn facts(&self) -> &Facts {
        &FACTS
    }

    fn resolve(&self, given: &RingParams) -> Result<Params, RingError> {
        Params::base(given, None, KeyRule::Xxh3)
    }

    /// Errors: [`RingError::InvalidConfig`] for more than [`MAX_BUCKETS`]
    /// nodes. (Every weight is 1: the facade checks [`WEIGHT_RULE`].)
    fn build(&self, _: &Params, nodes: &[Node], _: PointHash, _: PerNode) -> Result<Placement, RingError> {
        if nodes.len() > MAX_BUCKETS as usize {
            return Err(RingError::InvalidConfig {
                message: format!("jumpback takes at most {MAX_BUCKETS} nodes, got {}", nodes.len()),
            });
        }
        Ok(Placement::other(Buckets(nodes.len() as u32)))
    }
}

/// JumpBackHash over this many buckets, bucket `b` being node `b`.
#[derive(Debug)]
struct Buckets(u32);

impl Lookup for Buckets {
    #[inline]
    fn owner(&self, hash: u64) -> usize {
        jump_back_hash(hash, self.0) as usize
    }

    /// As jump's walk: successive JumpBackHash picks among the nodes not yet visited.
    fn walk(&self, hash: u64, visit: &mut dyn FnMut(usize) -> bool) {
        jump::walk_buckets(hash, self.0 as usize, jump_back_hash, visit)
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
        shares.fill(1.0 / f64::from(self.0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// hash4j (commit 41d814f) `jumpBackHashSplitMix64()`, as recorded in
    /// `docs/algorithms.md` (*jumpback*): (hash, [bucket for
    /// n = 2, 3, 10, 100, 1000, 65536, 1000000, 2147483647]).
    const HASH4J: [(u64, [u32; 8]); 6] = [
        (0, [0, 0, 7, 25, 313, 19887, 567_353, 454_938_031]),
        (1, [1, 1, 5, 33, 492, 23745, 667_116, 285_879_788]),
        (0x0123_4567_89ab_cdef, [0, 2, 3, 23, 519, 47111, 407_559, 613_395_101]),
        (0xffff_ffff_ffff_ffff, [1, 2, 7, 73, 288, 27680, 863_264, 1_533_357_088]),
        (0x8000_0000_0000_0000, [1, 1, 1, 98, 674, 8354, 390_107, 1_209_974_946]),
        (0x9e37_79b9_7f4a_7c15, [0, 2, 8, 20, 618, 58868, 106_090, 1_639_540_212]),
    ];
    const SIZES: [u32; 8] = [2, 3, 10, 100, 1000, 65536, 1_000_000, MAX_BUCKETS];

    #[test]
    fn matches_hash4j() {
        for (hash, buckets) in HASH4J {
            for (n, want) in SIZES.into_iter().zip(buckets) {
                assert_eq!(jump_back_hash(hash, n), want, "hash {hash:#x}, {n} buckets");
            }
        }
        // hash4j's README: n = 2 gives 1, 0, 0.
        let keys = [0x7f74_87ee_708c_8a96, 0x6265_648f_bc79_7f25, 0x85ef_23a0_b545_d53b];
        assert_eq!(keys.map(|k| jump_back_hash(k, 2)), [1, 0, 0]);
        assert_eq!(keys.map(|k| jump_back_hash(k, 3)), [1, 0, 2]);
    }

    #[test]
    fn one_bucket_takes_everything() {
        for hash in [0, 1, u64::MAX] {
            assert_eq!(jump_back_hash(hash, 1), 0);
            assert_eq!(jump_back_hash(hash, 0), 0);
        }
    }

    #[test]
    fn growing_moves_keys_only_to_the_new_bucket() {
        for i in 0..20_000u64 {
            let hash = crate::hash::fmix64(i);
            let mut before = jump_back_hash(hash, 1);
            for n in 2..70u32 {
                let now = jump_back_hash(hash, n);
                assert!(now == before || now == n - 1, "hash {hash:#x}: {before} -> {now} at {n} buckets");
                before = now;
            }
        }
    }
}
