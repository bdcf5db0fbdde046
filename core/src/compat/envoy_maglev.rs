//! Envoy's `MAGLEV` load balancer (`envoy-maglev`), bit-exact with Envoy's
//! `maglev_lb.cc`; rules in `core/SPEC.md` (*envoy-maglev*), sources in
//! `docs/algorithms.md`. Node ids are host keys as for
//! `envoy-ring-hash`.
//!
//! Hosts are sorted by key (bytewise), so their order never matters. Each
//! gets `offset = XXH64(key, 0) mod M` and
//! `skip = XXH64(key, 1) mod (M - 1) + 1`; the table of `M` slots (a prime, default 65,537) is filled in
//! rounds: in round `r` a host of normalised weight `w` takes its next free
//! preferred slot unless `r * w` is below its running target, which then
//! grows by the largest normalised weight. A request hash `h` (XXH64 of the
//! header value, seed 0) belongs to `table[h mod M]`; retry `k` looks up
//! `h XOR (2^64 - k)`, and the preference list takes those retries' hosts,
//! distinct, then any host not yet reached in table order.

use xxhash_rust::xxh64::xxh64;

use crate::error::RingError;
use crate::hash::KeyRule;
use crate::node::Node;
use crate::params::Param;
use crate::params::{Params, RingParams};
use crate::scheme::{Facts, Lookup, PerNode, Placement, PointHash, Scheme};
use crate::structures::modula::Modula;

/// Envoy's default table size, 65,537.
pub const DEFAULT_TABLE_SIZE: u32 = 65_537;

/// Envoy's largest table size (`table_size` is at most 5,000,011).
pub const LARGEST_TABLE_SIZE: u32 = 5_000_011;

/// The `envoy-maglev` algorithm.
pub(crate) struct EnvoyMaglev;

static FACTS: Facts = Facts { weight_zero_drains: false, takes: &[Param::TableSize], ..Facts::DEFAULT };

const WEIGHT_RULE: &str =
    "Envoy host weights are whole numbers from 1 (load_balancing_weight is at least 1), summing to at most 4294967295";

impl Scheme for EnvoyMaglev {
    fn facts(&self) -> &Facts {
        &FACTS
    }

    /// Errors: [`RingError::InvalidTableSize`] for a size that is not a
    /// prime from 2 to 5,000,011 ("The table size of maglev must be prime number").
    fn resolve(&self, given: &RingParams) -> Result<Params, RingError> {
        let size = given.table_size.unwrap_or(DEFAULT_TABLE_SIZE);
        let invalid = |reason: &str| RingError::InvalidTableSize { size: u64::from(size), reason: reason.to_owned() };
        if size > LARGEST_TABLE_SIZE {
            return Err(invalid("Envoy's largest Maglev table is 5000011 slots"));
        }
        if !is_prime(size) {
            return Err(invalid("The table size of maglev must be prime number (Envoy; 65537 is the default)"));
        }
        Ok(Params { table_size: size, ..Params::base(given, None, KeyRule::Xxh64)? })
    }

    /// Errors: [`RingError::InvalidWeight`] (0, not a whole number, or a sum above u32).
    fn build(&self, params: &Params, nodes: &[Node], _: PointHash, _: PerNode) -> Result<Placement, RingError> {
        let mut sum = 0u64;
        for node in nodes {
            let weight = node.weight();
            let whole = weight >= 1.0 && weight.fract() == 0.0 && weight <= f64::from(u32::MAX);
            sum += if whole { weight as u64 } else { 0 };
            if !whole || sum > u64::from(u32::MAX) {
                return Err(RingError::InvalidWeight { id: node.id().to_owned(), weight, rule: WEIGHT_RULE });
            }
        }
        Ok(Placement::other(Table(Modula(fill(nodes, sum, u64::from(params.table_size))))))
    }
}

/// Trial division; sizes are at most 5,000,011.
fn is_prime(n: u32) -> bool {
    n >= 2 && (2..).take_while(|d| d * d <= n).all(|d| !n.is_multiple_of(d))
}

/// Envoy's table fill (`MaglevTable` constructor); empty without hosts.
fn fill(nodes: &[Node], sum: u64, size: u64) -> Vec<u32> {
    struct Entry {
        host: u32,
        offset: u64,
        skip: u64,
        weight: f64,
        target: f64,
        next: u64,
    }
    if nodes.is_empty() {
        return Vec::new();
    }
    let mut entries: Vec<Entry> = nodes
        .iter()
        .enumerate()
        .map(|(i, node)| {
            let key = node.id().as_bytes();
            Entry {
                host: i as u32,
                offset: xxh64(key, 0) % size,
                skip: xxh64(key, 1) % (size - 1) + 1,
                weight: (node.weight() * 1.0) / sum as f64,
                target: 0.0,
                next: 0,
            }
        })
        .collect();
    entries.sort_by(|a, b| nodes[a.host as usize].id().as_bytes().cmp(nodes[b.host as usize].id().as_bytes()));
    let max_weight = entries.iter().map(|e| e.weight).fold(0.0, f64::max);
    const EMPTY: u32 = u32::MAX;
    let mut table = vec![EMPTY; size as usize];
    let mut filled = 0u64;
    let mut iteration = 1u32;
    while filled < size {
        for entry in entries.iter_mut() {
            if filled == size {
                break;
            }
            if f64::from(iteration) * entry.weight < entry.target {
                continue;
            }
            entry.target += max_weight;
            let mut slot = (entry.offset + entry.skip * entry.next) % size;
            while table[slot as usize] != EMPTY {
                entry.next += 1;
                slot = (entry.offset + entry.skip * entry.next) % size;
            }
            table[slot as usize] = entry.host;
            entry.next += 1;
            filled += 1;
        }
        iteration += 1;
    }
    table
}

/// A filled table: a modula lookup (`table[h mod M]`) whose preference
/// walk follows Envoy's retries first.
#[derive(Debug)]
struct Table(Modula);

impl Lookup for Table {
    fn owner(&self, hash: u64) -> usize {
        self.0.owner(hash)
    }

    /// Envoy's retries `k = 0, 1, ...` (`h XOR (2^64 - k)`), up to one per
    /// slot, then every slot in table order from `h mod M`.
    fn walk(&self, hash: u64, visit: &mut dyn FnMut(usize) -> bool) {
        let mut done = false;
        for k in 0..self.0.0.len() as u64 {
            let retry = if k == 0 { hash } else { hash ^ k.wrapping_neg() };
            if visit(self.0.owner(retry)) {
                done = true;
                break;
            }
        }
        if !done {
            self.0.walk(hash, visit)
        }
    }

    fn mark_live(&self, live: &mut [bool]) {
        self.0.mark_live(live)
    }

    fn heap_bytes(&self) -> usize {
        self.0.heap_bytes()
    }

    fn arc_ends(&self) -> Option<Vec<(u64, usize)>> {
        None
    }

    /// Slots held over table size.
    fn expected_shares(&self, shares: &mut [f64]) {
        self.0.expected_shares(shares)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envoys_published_table() {
        // maglev_lb_test.cc, Basic: hosts :90..:95, table size 7.
        let nodes: Vec<Node> = (90..96).map(|p| Node::new(format!("127.0.0.1:{p}"), 1.0)).collect();
        let params = EnvoyMaglev.resolve(&RingParams { table_size: Some(7), ..RingParams::default() }).unwrap();
        let Placement::Other(table) =
            EnvoyMaglev.build(&params, &nodes, crate::hash::hash_point, PerNode::default()).unwrap()
        else {
            unreachable!()
        };
        let owners: Vec<usize> = (0..21).map(|h| table.owner(h)).collect();
        assert_eq!(owners[..7], [2, 4, 0, 1, 5, 0, 3]);
        assert_eq!(owners[7..14], owners[..7]);
        // Listing the hosts in another order builds the same table.
        let reversed: Vec<Node> = nodes.iter().rev().cloned().collect();
        let Placement::Other(again) =
            EnvoyMaglev.build(&params, &reversed, crate::hash::hash_point, PerNode::default()).unwrap()
        else {
            unreachable!()
        };
        assert!((0..7).all(|h| 5 - again.owner(h) == owners[h as usize]));
    }

    #[test]
    fn weights_must_be_whole_and_sum_within_u32() {
        let params = EnvoyMaglev.resolve(&RingParams::default()).unwrap();
        for weights in [vec![1.0, 1e20], vec![0.0], vec![1.5], vec![4294967295.0, 1.0]] {
            let nodes: Vec<Node> = weights.iter().enumerate().map(|(i, &w)| Node::new(format!("h{i}"), w)).collect();
            let built = EnvoyMaglev.build(&params, &nodes, crate::hash::hash_point, PerNode::default());
            assert!(matches!(built, Err(RingError::InvalidWeight { .. })), "{weights:?}");
        }
    }

    #[test]
    fn table_sizes_must_be_primes_envoy_takes() {
        for size in [0, 1, 4, 65_536, LARGEST_TABLE_SIZE + 2] {
            let given = RingParams { table_size: Some(size), ..RingParams::default() };
            assert!(matches!(EnvoyMaglev.resolve(&given), Err(RingError::InvalidTableSize { .. })), "{size}");
        }
    }
}
