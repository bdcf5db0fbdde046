//! Maglev hashing (Eisenbud et al., "Maglev: A Fast and Reliable Software
//! Network Load Balancer", NSDI 2016), weighted.
//!
//! A lookup table of prime size `M` maps a key's slot
//! `(hash * M) >> 64` to a node. Each node `i` has a permutation of the
//! slots, `offset_i + j * skip_i (mod M)`, from the two halves of the
//! XXH3-128 of its id; nodes take turns claiming their next unclaimed slot.
//! A node of weight `w` earns `w / max weight` turns per round (fractions
//! carry over), so it fills about a `w / W` share of the table. Nodes take
//! turns in ascending order of id bytes, so the table does not depend on the
//! order nodes are given in. Permutations are generated one step at a time,
//! never stored: building costs O(M log M) time and O(M + n) memory.

use xxhash_rust::xxh3::xxh3_128_with_seed;

use crate::error::RingError;
use crate::hash::KeyRule;
use crate::node::Node;
use crate::params::{Param, Params, RingParams};
use crate::scheme::{Facts, Lookup, PerNode, Placement, PointHash, Scheme, mark_table, table_arc_ends, walk_table};
use crate::structures::continuum::MAX_POINTS;

/// Default table size: 65,537, the prime the Maglev paper uses in its
/// evaluation. Keep it well above 100 x the node count for balance.
pub const DEFAULT_TABLE_SIZE: u32 = 65_537;

/// The `maglev` algorithm.
pub(crate) struct Maglev;

static FACTS: Facts = Facts { seeded: true, takes: &[Param::TableSize], ..Facts::DEFAULT };

impl Scheme for Maglev {
    fn facts(&self) -> &Facts {
        &FACTS
    }

    fn resolve(&self, given: &RingParams) -> Result<Params, RingError> {
        let table_size = given.table_size.unwrap_or(DEFAULT_TABLE_SIZE);
        Ok(Params { table_size, ..Params::base(given, None, KeyRule::Xxh3)? })
    }

    /// Errors: [`RingError::InvalidTableSize`] (see [`validate`]).
    fn build(&self, params: &Params, nodes: &[Node], _: PointHash, _: PerNode) -> Result<Placement, RingError> {
        validate(params.table_size, nodes.len())?;
        Ok(Placement::other(Table(build(nodes, params.seed, params.table_size))))
    }
}

/// A built Maglev table: `0[slot]` is a node index; empty when no node has weight > 0.
#[derive(Debug)]
struct Table(Vec<u32>);

impl Lookup for Table {
    fn owner(&self, hash: u64) -> usize {
        self.0[slot(hash, self.0.len())] as usize
    }

    /// Forward through the table from the key's slot.
    fn walk(&self, hash: u64, visit: &mut dyn FnMut(usize) -> bool) {
        walk_table(&self.0, slot(hash, self.0.len()), visit)
    }

    fn mark_live(&self, live: &mut [bool]) {
        mark_table(&self.0, live)
    }

    fn heap_bytes(&self) -> usize {
        self.0.len() * size_of::<u32>()
    }

    fn arc_ends(&self) -> Option<Vec<(u64, usize)>> {
        Some(table_arc_ends(&self.0, |s| slot_end(s, self.0.len())))
    }
}

/// Checks a table size: prime, at least the node count, at most [`MAX_POINTS`].
///
/// Errors: [`RingError::InvalidTableSize`] naming the size and the rule.
fn validate(size: u32, nodes: usize) -> Result<(), RingError> {
    let invalid = |reason: String| RingError::InvalidTableSize { size: u64::from(size), reason };
    if u64::from(size) > MAX_POINTS {
        return Err(invalid(format!("the largest table is {MAX_POINTS} slots")));
    }
    if !is_prime(size) {
        return Err(invalid("Maglev table sizes must be prime (65537 is the default)".to_owned()));
    }
    if (size as usize) < nodes {
        return Err(invalid(format!("the table must have at least one slot per node ({nodes} nodes)")));
    }
    Ok(())
}

/// Trial division; sizes are at most 2^24.
fn is_prime(n: u32) -> bool {
    if n < 4 {
        return n >= 2;
    }
    if n.is_multiple_of(2) {
        return false;
    }
    (3..).step_by(2).take_while(|d| d * d <= n).all(|d| !n.is_multiple_of(d))
}

/// Builds the table: `table[slot]` is a node index. Empty when no node has
/// weight > 0. `size` must have passed [`validate`].
fn build(nodes: &[Node], seed: u64, size: u32) -> Vec<u32> {
    let mut live: Vec<u32> = (0..nodes.len() as u32).filter(|&i| nodes[i as usize].weight() > 0.0).collect();
    if live.is_empty() {
        return Vec::new();
    }
    live.sort_unstable_by(|&a, &b| nodes[a as usize].id().as_bytes().cmp(nodes[b as usize].id().as_bytes()));
    let m = u64::from(size);
    let max_weight = live.iter().map(|&i| nodes[i as usize].weight()).fold(0.0, f64::max);
    struct Turn {
        index: u32,
        next: u64,
        skip: u64,
        rate: f64,
        credit: f64,
    }
    let mut turns: Vec<Turn> = live
        .iter()
        .map(|&index| {
            let node = &nodes[index as usize];
            let hash = xxh3_128_with_seed(node.id().as_bytes(), seed);
            let (low, high) = (hash as u64, (hash >> 64) as u64);
            Turn {
                index,
                next: low % m,
                skip: high % (m - 1).max(1) + 1,
                rate: node.weight() / max_weight,
                credit: 0.0,
            }
        })
        .collect();
    const EMPTY: u32 = u32::MAX;
    let mut table = vec![EMPTY; size as usize];
    let mut filled = 0usize;
    while filled < table.len() {
        for turn in &mut turns {
            turn.credit += turn.rate;
            while turn.credit >= 1.0 && filled < table.len() {
                turn.credit -= 1.0;
                // The permutation visits every slot within M steps (M prime,
                // 1 <= skip < M), and this node has claimed fewer than M.
                while table[turn.next as usize] != EMPTY {
                    turn.next = (turn.next + turn.skip) % m;
                }
                table[turn.next as usize] = turn.index;
                turn.next = (turn.next + turn.skip) % m;
                filled += 1;
            }
        }
    }
    table
}

/// The slot of a 64-bit key hash in a table of `size` slots: `(hash * size) >> 64`.
#[inline]
fn slot(hash: u64, size: usize) -> usize {
    ((u128::from(hash) * size as u128) >> 64) as usize
}

/// Last 64-bit hash of each slot's range: slot `s` holds the hashes up to
/// `ceil((s + 1) * 2^64 / size) - 1`.
fn slot_end(s: usize, size: usize) -> u64 {
    (((s as u128 + 1) << 64).div_ceil(size as u128) - 1) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primes_are_recognised() {
        let primes: Vec<u32> = (0..40).filter(|&n| is_prime(n)).collect();
        assert_eq!(primes, [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37]);
        assert!(is_prime(65_537) && is_prime(16_777_213) && !is_prime(65_535) && !is_prime(16_777_215));
    }

    #[test]
    fn slots_partition_the_hash_space() {
        for size in [2usize, 7, 65_537] {
            assert_eq!(slot_end(size - 1, size), u64::MAX);
            for s in [0, (size - 1) / 2, size - 2] {
                let end = slot_end(s, size);
                assert_eq!(slot(end, size), s);
                assert_eq!(slot(end + 1, size), s + 1);
            }
        }
    }

    #[test]
    fn table_shares_follow_weights_and_ignore_order() {
        let nodes: Vec<Node> = (0..5).map(|i| Node::new(format!("n{i}"), if i == 0 { 2.0 } else { 1.0 })).collect();
        let table = build(&nodes, 0, 65_537);
        let mut counts = [0usize; 5];
        table.iter().for_each(|&i| counts[i as usize] += 1);
        assert!((counts[0] as f64 / 65_537.0 - 2.0 / 6.0).abs() < 0.001, "{counts:?}");
        let mut reversed = nodes.clone();
        reversed.reverse();
        let other = build(&reversed, 0, 65_537);
        assert!(table.iter().zip(&other).all(|(&a, &b)| nodes[a as usize].id() == reversed[b as usize].id()));
    }
}
