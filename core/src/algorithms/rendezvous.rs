//! Weighted rendezvous (highest random weight) hashing: Thaler and
//! Ravishankar, "Using name-based mappings to increase hit rates" (1998),
//! weighted by the logarithmic method (Schindelhauer and Schomaker, 2005;
//! the form used by Tarantool's vshard and Ceph's straw2).
//!
//! Each node `i` draws `x_i = fmix64(key_hash ^ node_hash)` for a key and
//! scores `w_i / -log(u_i)` (`w_i` its weight over the largest weight,
//! `u_i` in (0, 1) uniform from `x_i`); the key goes to the highest score,
//! and its preference list is the nodes by descending score. A node of
//! weight `w` wins a share `w / W` of keys, and adding, removing or
//! re-weighting one node only moves keys to or from it.
//!
//! Two scores ([`RendezvousScore`]): `integer` (the default) computes
//! `-log2(u)` in 64-bit fixed point with integer operations only, so every
//! platform places every key alike; `float` is placement format 1's
//! `-w / ln(u)` with the platform's `ln`, whose last bit differs between C
//! libraries. Under `integer`, nodes of equal weight rank by their draw
//! alone, so a lookup over equal weights computes no logarithm: O(n)
//! multiply-xorshift steps. With several weights it computes one logarithm
//! per distinct weight (up to [`LEADER_CLASSES`]), then one per node.

use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::error::RingError;
use crate::hash::{KeyRule, fmix64};
use crate::node::Node;
use crate::params::Param;
use crate::params::{Params, RendezvousScore, RingParams};
use crate::scheme::{Facts, Lookup, PerNode, Placement, PointHash, Scheme};

mod score;

use score::neg_log2;

/// The `rendezvous` algorithm.
pub(crate) struct Hrw;

static FACTS: Facts = Facts { seeded: true, takes: &[Param::Score], ..Facts::DEFAULT };

impl Scheme for Hrw {
    fn facts(&self) -> &Facts {
        &FACTS
    }

    fn resolve(&self, given: &RingParams) -> Result<Params, RingError> {
        let score = Some(given.score.unwrap_or_default());
        Ok(Params { score, ..Params::base(given, None, KeyRule::Xxh3)? })
    }

    fn build(&self, params: &Params, nodes: &[Node], _: PointHash, _: PerNode) -> Result<Placement, RingError> {
        Ok(Placement::other(Rendezvous::new(nodes, params.seed, params.score.unwrap_or_default())))
    }
}

/// Weight classes tracked one leader each before any logarithm: with more
/// distinct weights than this, a lookup scores every node.
pub(crate) const LEADER_CLASSES: usize = 8;

/// Two draws of one weight closer than this may rank against their order
/// (the fixed-point logarithm is within 2 units of the true one, and the
/// true one falls by at least 0.011 units per unit of draw), so a leader
/// this close to another node of its class is settled by scores.
const WINDOW: u64 = 1 << 12;

/// A node that can own keys.
#[derive(Debug, Clone, Copy)]
struct Candidate {
    /// XXH3-64 of the id under the ring's seed.
    hash: u64,
    /// Weight over the largest weight, in (0, 1].
    ratio: f64,
    /// Index in the ring's nodes.
    index: u32,
    /// Which distinct `ratio` this is, from 0.
    class: u32,
}

/// Per node: XXH3-64 of its id under the ring's seed, and its weight over
/// the largest weight (in (0, 1], so scores stay finite).
#[derive(Debug, Clone)]
struct Rendezvous {
    /// Nodes of weight > 0, ascending by id bytes (ties rank by id last).
    candidates: Vec<Candidate>,
    /// How many distinct weight ratios the candidates have.
    classes: usize,
    score: RendezvousScore,
}

impl Rendezvous {
    fn new(nodes: &[Node], seed: u64, score: RendezvousScore) -> Rendezvous {
        // Weights relative to the largest keep every score finite.
        let max_weight = nodes.iter().map(Node::weight).fold(0.0, f64::max);
        let mut candidates: Vec<Candidate> = (0..nodes.len())
            .filter(|&i| nodes[i].weight() > 0.0)
            .map(|i| Candidate {
                hash: xxh3_64_with_seed(nodes[i].id().as_bytes(), seed),
                ratio: nodes[i].weight() / max_weight,
                index: i as u32,
                class: 0,
            })
            .collect();
        candidates.sort_unstable_by(|a, b| {
            nodes[a.index as usize].id().as_bytes().cmp(nodes[b.index as usize].id().as_bytes())
        });
        let mut ratios: Vec<u64> = Vec::new();
        for candidate in &mut candidates {
            let bits = candidate.ratio.to_bits();
            candidate.class = match ratios.iter().position(|&r| r == bits) {
                Some(class) => class as u32,
                None => {
                    ratios.push(bits);
                    ratios.len() as u32 - 1
                }
            };
        }
        Rendezvous { candidates, classes: ratios.len(), score }
    }

    /// Index of the winning node. Must not be empty.
    #[inline]
    fn owner(&self, key_hash: u64) -> usize {
        match self.score {
            RendezvousScore::Integer if self.classes <= LEADER_CLASSES => self.owner_by_leaders(key_hash),
            RendezvousScore::Integer => self.owner_by_scores(key_hash),
            RendezvousScore::Float => self.owner_by_float(key_hash),
        }
    }

    /// The owner under `integer` with few weight classes: each class's
    /// leader is its largest draw (an equal score goes to the larger draw,
    /// and a larger draw never has a larger logarithm but within
    /// [`WINDOW`]); only the leaders are scored, and none when there is one class.
    fn owner_by_leaders(&self, key_hash: u64) -> usize {
        #[derive(Clone, Copy)]
        struct Leader {
            draw: u64,
            at: u32,
            seen: bool,
        }
        let mut leaders = [Leader { draw: 0, at: 0, seen: false }; LEADER_CLASSES];
        // Whether any node came within WINDOW of its class's leader: each
        // node meets the leader of its time, which is at least as large as
        // any before it, so the final leader is compared with every node.
        let mut close = false;
        for (at, candidate) in self.candidates.iter().enumerate() {
            let draw = fmix64(key_hash ^ candidate.hash);
            let leader = &mut leaders[candidate.class as usize];
            if !leader.seen {
                *leader = Leader { draw, at: at as u32, seen: true };
            } else if draw > leader.draw {
                close |= draw - leader.draw < WINDOW;
                *leader = Leader { draw, at: at as u32, seen: true };
            } else {
                close |= leader.draw - draw < WINDOW;
            }
        }
        if close {
            return self.owner_by_scores(key_hash);
        }
        let leaders = &leaders[..self.classes];
        if let [only] = leaders {
            return self.candidates[only.at as usize].index as usize;
        }
        let ranks = leaders.iter().map(|l| Rank::new(l.draw, self.candidates[l.at as usize].ratio, l.at));
        self.index_of_highest(ranks)
    }

    /// The owner under `integer`, every node scored.
    fn owner_by_scores(&self, key_hash: u64) -> usize {
        self.index_of_highest(self.ranks(key_hash))
    }

    /// Every candidate's `integer` rank for a key hash, in candidate order.
    #[inline]
    fn ranks(&self, key_hash: u64) -> impl Iterator<Item = Rank> + '_ {
        self.candidates.iter().enumerate().map(move |(at, c)| Rank::new(fmix64(key_hash ^ c.hash), c.ratio, at as u32))
    }

    /// The node index of the highest of `ranks` (not empty).
    #[inline]
    fn index_of_highest(&self, ranks: impl Iterator<Item = Rank>) -> usize {
        let best = ranks.reduce(|best, rank| if rank.above(&best) { rank } else { best });
        self.candidates[best.expect("a ring that places keys has a candidate").at as usize].index as usize
    }

    /// The owner under `float`: the highest `-w / ln(u)`, equal scores to the smaller id.
    fn owner_by_float(&self, key_hash: u64) -> usize {
        let mut best = (f64::NEG_INFINITY, 0u32);
        for candidate in &self.candidates {
            let score = float_score(key_hash, candidate.hash, candidate.ratio);
            // Candidates ascend by id, so a strict `>` keeps the smaller id on a tie.
            if score > best.0 {
                best = (score, candidate.index);
            }
        }
        best.1 as usize
    }

    /// Node indices by rank, visited until `visit` returns true: `integer`
    /// by descending score, then descending draw, then id; `float` by
    /// descending score, then id.
    fn walk(&self, key_hash: u64, mut visit: impl FnMut(usize) -> bool) {
        let mut ranked: Vec<Rank> = match self.score {
            RendezvousScore::Integer => self.ranks(key_hash).collect(),
            // Draw 0 for every node: equal scores fall to the position (id bytes).
            RendezvousScore::Float => (self.candidates.iter().enumerate())
                .map(|(at, c)| Rank { score: float_score(key_hash, c.hash, c.ratio), draw: 0, at: at as u32 })
                .collect(),
        };
        ranked.sort_unstable_by(|a, b| b.score.total_cmp(&a.score).then(b.draw.cmp(&a.draw)).then(a.at.cmp(&b.at)));
        for Rank { at, .. } in ranked {
            if visit(self.candidates[at as usize].index as usize) {
                return;
            }
        }
    }
}

/// A candidate's standing for one key: its score, its draw and its
/// position among the candidates (ascending id bytes).
#[derive(Debug, Clone, Copy)]
struct Rank {
    score: f64,
    draw: u64,
    at: u32,
}

impl Rank {
    /// The `integer` rank of a draw: the weight ratio over `-log2(u)` in
    /// fixed point ([`neg_log2`]), `u = (draw | 1) / 2^64`, in binary64.
    #[inline]
    fn new(draw: u64, ratio: f64, at: u32) -> Rank {
        Rank { score: ratio / neg_log2(draw | 1) as f64, draw, at }
    }

    /// Whether this ranks above `other`: a higher score, then a larger
    /// draw, then an earlier position (smaller id bytes).
    #[inline]
    fn above(&self, other: &Rank) -> bool {
        self.score > other.score
            || (self.score == other.score
                && (self.draw > other.draw || (self.draw == other.draw && self.at < other.at)))
    }
}

/// The `float` score (placement format 1): `u = (top 53 bits of
/// fmix64(key_hash ^ node_hash) + 0.5) / 2^53`, score `-w / ln(u)` with `w`
/// the weight over the largest weight and `ln` the platform's.
#[inline]
fn float_score(key_hash: u64, node_hash: u64, weight: f64) -> f64 {
    let u = ((fmix64(key_hash ^ node_hash) >> 11) as f64 + 0.5) * (1.0 / (1u64 << 53) as f64);
    -weight / u.ln()
}

impl Lookup for Rendezvous {
    fn owner(&self, hash: u64) -> usize {
        Rendezvous::owner(self, hash)
    }

    fn walk(&self, hash: u64, visit: &mut dyn FnMut(usize) -> bool) {
        Rendezvous::walk(self, hash, visit)
    }

    fn mark_live(&self, live: &mut [bool]) {
        self.candidates.iter().for_each(|c| live[c.index as usize] = true);
    }

    fn heap_bytes(&self) -> usize {
        self.candidates.capacity() * size_of::<Candidate>()
    }

    fn arc_ends(&self) -> Option<Vec<(u64, usize)>> {
        None
    }

    /// `weight / total weight` each.
    fn expected_shares(&self, shares: &mut [f64]) {
        let total: f64 = self.candidates.iter().map(|c| c.ratio).sum();
        self.candidates.iter().for_each(|c| shares[c.index as usize] = c.ratio / total);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rendezvous(weights: &[f64], score: RendezvousScore) -> Rendezvous {
        let nodes: Vec<Node> = weights.iter().enumerate().map(|(i, &w)| Node::new(format!("n{i}"), w)).collect();
        Rendezvous::new(&nodes, 0, score)
    }

    #[test]
    fn fmix64_avalanches() {
        // fmix64 fixes 0 and spreads a one-bit change over about half the bits.
        assert_eq!(fmix64(0), 0);
        let flips: u32 = (0..64).map(|bit| (fmix64(1 << bit) ^ fmix64(0)).count_ones()).sum();
        assert!((1800..2300).contains(&flips), "{flips}");
    }

    #[test]
    fn scores_follow_weights() {
        for score in RendezvousScore::ALL {
            let r = rendezvous(&[1.0, 3.0], score);
            let won_by_b = (0..40_000u64).filter(|&k| r.owner(fmix64(k)) == 1).count() as f64 / 40_000.0;
            assert!((won_by_b - 0.75).abs() < 0.01, "{score:?}: {won_by_b}");
        }
    }

    #[test]
    fn larger_draws_by_the_window_never_score_lower() {
        let mut state = 7u64;
        for _ in 0..200_000 {
            state = fmix64(state.wrapping_add(0x9e37_79b9_7f4a_7c15));
            let low = state.min(u64::MAX - WINDOW);
            assert!(neg_log2((low + WINDOW) | 1) <= neg_log2(low | 1), "{low:#x}");
        }
    }

    /// `integer` ranks by `w / -log2(u)` and `float` by `w / -ln(u)`, the
    /// same order up to rounding (`ln u = log2 u * ln 2`) and a `u` that
    /// differs below 2^-53: they place alike but where two scores are
    /// within about 2^-50 of each other.
    #[test]
    fn integer_and_float_scores_place_alike_but_for_near_ties() {
        for weights in [&[1.0, 2.0, 1.0, 3.0, 0.5][..], &[1.0; 100]] {
            let (integer, float) =
                (rendezvous(weights, RendezvousScore::Integer), rendezvous(weights, RendezvousScore::Float));
            let differ = (0..200_000u64).filter(|&k| integer.owner(fmix64(k)) != float.owner(fmix64(k))).count();
            assert_eq!(differ, 0, "{} weights", weights.len());
        }
    }

    /// The leaders' shortcut ranks as scoring every node does, on equal
    /// weights, few weights, many weights, and draws forced close together.
    #[test]
    fn shortcuts_agree_with_scoring_every_node() {
        let many: Vec<f64> = (1..=12).map(f64::from).collect();
        for weights in [&[1.0; 50][..], &[1.0, 2.0, 1.0, 2.0, 0.5, 1.0], &many, &[3.0]] {
            let r = rendezvous(weights, RendezvousScore::Integer);
            for k in 0..20_000u64 {
                let hash = fmix64(k);
                let first = {
                    let mut first = usize::MAX;
                    r.walk(hash, |i| {
                        first = i;
                        true
                    });
                    first
                };
                assert_eq!(r.owner(hash), r.owner_by_scores(hash), "{weights:?}, hash {hash:#x}");
                assert_eq!(r.owner(hash), first, "{weights:?}, hash {hash:#x}");
            }
        }
        // Two candidates whose draws differ in the lowest bits only: the
        // window sends the lookup to full scoring, which ranks the larger draw first.
        let nodes = [Node::new("a", 1.0), Node::new("b", 1.0)];
        let mut r = Rendezvous::new(&nodes, 0, RendezvousScore::Integer);
        r.candidates[1].hash = r.candidates[0].hash ^ 1;
        for k in 0..1000u64 {
            let hash = fmix64(k);
            let draws = [fmix64(hash ^ r.candidates[0].hash), fmix64(hash ^ r.candidates[1].hash)];
            assert_eq!(r.owner(hash), r.owner_by_scores(hash));
            let larger = usize::from(draws[1] > draws[0]);
            assert_eq!(r.owner(hash), r.candidates[larger].index as usize, "{draws:x?}");
        }
    }
}
