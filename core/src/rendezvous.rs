//! Weighted rendezvous (highest random weight) hashing: Thaler and
//! Ravishankar, "Using name-based mappings to increase hit rates" (1998),
//! weighted by the logarithmic method (Schindelhauer and Schomaker, 2005;
//! the form used by Tarantool's vshard and Ceph's straw2).
//!
//! Each node `i` scores a key `-w_i / ln(u_i)` (`w_i` its weight over the
//! largest weight), where `u_i` in (0, 1) is
//! uniform from the key's and the node's hashes; the key goes to the highest
//! score, and its preference list is the nodes by descending score. A node
//! of weight `w` wins a share `w / W` of keys, and adding, removing or
//! re-weighting one node only moves keys to or from it. A lookup costs one
//! logarithm per node: O(n).

use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::error::RingError;
use crate::hash::{KeyRule, fmix64};
use crate::node::Node;
use crate::params::{Given, Params};
use crate::scheme::{Facts, Lookup, PerNode, Placement, PointHash, Scheme};

/// The `rendezvous` algorithm.
pub(crate) struct Hrw;

static FACTS: Facts = Facts {
    hash_bits: 64,
    vnodes: None,
    seeded: true,
    order_places_keys: false,
    unit_weights: false,
    weight_zero_drains: true,
    takes: &[],
};

impl Scheme for Hrw {
    fn facts(&self) -> &Facts {
        &FACTS
    }

    fn resolve(&self, given: &Given) -> Result<Params, RingError> {
        Params::base(given, None, KeyRule::Xxh3)
    }

    fn build(&self, params: &Params, nodes: &[Node], _: PointHash, _: PerNode) -> Result<Placement, RingError> {
        Ok(Placement::other(Rendezvous::new(nodes, params.seed)))
    }
}

/// Per node: XXH3-64 of its id under the ring's seed, and its weight over
/// the largest weight (in (0, 1], so scores stay finite).
#[derive(Debug, Clone)]
struct Rendezvous {
    /// `(node hash, weight, index)` for nodes of weight > 0, ascending by id bytes.
    candidates: Vec<(u64, f64, u32)>,
}

impl Rendezvous {
    fn new(nodes: &[Node], seed: u64) -> Rendezvous {
        // Weights relative to the largest keep every score finite.
        let max_weight = nodes.iter().map(Node::weight).fold(0.0, f64::max);
        let mut candidates: Vec<(u64, f64, u32)> = (0..nodes.len())
            .filter(|&i| nodes[i].weight() > 0.0)
            .map(|i| (xxh3_64_with_seed(nodes[i].id().as_bytes(), seed), nodes[i].weight() / max_weight, i as u32))
            .collect();
        candidates
            .sort_unstable_by(|a, b| nodes[a.2 as usize].id().as_bytes().cmp(nodes[b.2 as usize].id().as_bytes()));
        Rendezvous { candidates }
    }

    /// The score of a node for a key hash: `u = (top 53 bits of
    /// fmix64(key_hash ^ node_hash) + 0.5) / 2^53`, score `-w / ln(u)` with
    /// `w` the weight over the largest weight.
    #[inline]
    fn score(key_hash: u64, node_hash: u64, weight: f64) -> f64 {
        let u = ((fmix64(key_hash ^ node_hash) >> 11) as f64 + 0.5) * (1.0 / (1u64 << 53) as f64);
        -weight / u.ln()
    }

    /// Index of the winning node; ties (equal scores) go to the smaller id.
    /// Must not be empty.
    #[inline]
    fn owner(&self, key_hash: u64) -> usize {
        let mut best = (f64::NEG_INFINITY, 0u32);
        for &(node_hash, weight, index) in &self.candidates {
            let score = Self::score(key_hash, node_hash, weight);
            // Candidates ascend by id, so a strict `>` keeps the smaller id on a tie.
            if score > best.0 {
                best = (score, index);
            }
        }
        best.1 as usize
    }

    /// Node indices by descending score (ties by id), visited until `visit`
    /// returns true.
    fn walk(&self, key_hash: u64, mut visit: impl FnMut(usize) -> bool) {
        let mut ranked: Vec<(f64, usize, u32)> = self
            .candidates
            .iter()
            .enumerate()
            .map(|(rank, &(node_hash, weight, index))| (Self::score(key_hash, node_hash, weight), rank, index))
            .collect();
        ranked.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        for (_, _, index) in ranked {
            if visit(index as usize) {
                return;
            }
        }
    }
}

impl Lookup for Rendezvous {
    fn owner(&self, hash: u64) -> usize {
        Rendezvous::owner(self, hash)
    }

    fn walk(&self, hash: u64, visit: &mut dyn FnMut(usize) -> bool) {
        Rendezvous::walk(self, hash, visit)
    }

    fn mark_live(&self, live: &mut [bool]) {
        self.candidates.iter().for_each(|&(_, _, index)| live[index as usize] = true);
    }

    fn heap_bytes(&self) -> usize {
        self.candidates.len() * size_of::<(u64, f64, u32)>()
    }

    fn arc_ends(&self) -> Option<Vec<(u64, usize)>> {
        None
    }

    /// `weight / total weight` each.
    fn expected_shares(&self, shares: &mut [f64]) {
        let total: f64 = self.candidates.iter().map(|&(_, weight, _)| weight).sum();
        self.candidates.iter().for_each(|&(_, weight, index)| shares[index as usize] = weight / total);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fmix64_avalanches() {
        // fmix64 fixes 0 and spreads a one-bit change over about half the bits.
        assert_eq!(fmix64(0), 0);
        let flips: u32 = (0..64).map(|bit| (fmix64(1 << bit) ^ fmix64(0)).count_ones()).sum();
        assert!((1800..2300).contains(&flips), "{flips}");
    }

    #[test]
    fn scores_follow_weights() {
        let nodes = [Node::new("a", 1.0), Node::new("b", 3.0)];
        let r = Rendezvous::new(&nodes, 0);
        let won_by_b = (0..40_000u64).filter(|&k| r.owner(fmix64(k)) == 1).count() as f64 / 40_000.0;
        assert!((won_by_b - 0.75).abs() < 0.01, "{won_by_b}");
    }
}
