//! MementoHash (Coluzzi, Brocco, Antonucci and Leidi, "MementoHash: A
//! Stateful, Minimal Memory, Best Performing Consistent Hash Algorithm",
//! IEEE/ACM Transactions on Networking, 2024; arXiv 2306.09783): a
//! consistent hash over an array of buckets, any of which may be removed,
//! with a replacement table for the removed ones.
//!
//! Each node holds one bucket. A key goes to `jumpback(hash, size)`; when
//! that bucket was removed, the key is rehashed into the buckets that were
//! working right after the removal, following the replacement chain, so
//! removing any node moves only its keys, spread evenly over the others,
//! and adding a node back restores the placement before the last removal
//! (LIFO). The paper's base is jump hash; this mode uses JumpBackHash
//! (Ertl 2024), which keeps jump's guarantees in expected constant time
//! instead of `ln n` dependent steps (as hash4j's JumpBackAnchor pairs
//! AnchorHash with it), so with no removals the placement is exactly
//! `jumpback`'s.
//!
//! The placement depends on the order of removals, not only on the nodes
//! present: the history is the ring's state (its buckets and its
//! `removed_buckets`, oldest first), which configs, fingerprints and
//! derivations carry (`core/SPEC.md`, *memento*).

use crate::algorithms::jumpback::jump_back_hash;
use crate::error::RingError;
use crate::hash::{KeyRule, fmix64, splitmix64};
use crate::node::Node;
use crate::params::{Param, Params, RingParams};
use crate::scheme::{BucketTable, Change, Facts, Lookup, PerNode, Placement, PointHash, Scheme};

pub(crate) const WEIGHT_RULE: &str =
    "memento has no weights: every node must have weight 1 (remove a node to take it out, add nodes for capacity)";

/// The largest bucket array, 2^31 - 1 buckets (working and removed).
pub const MAX_BUCKETS: u32 = i32::MAX as u32;

/// The `memento` algorithm.
pub(crate) struct Memento;

static FACTS: Facts = Facts {
    seeded: true,
    order_places_keys: true,
    unit_weights: Some(WEIGHT_RULE),
    weight_zero_drains: false,
    takes: &[Param::Buckets],
    ..Facts::DEFAULT
};

impl Scheme for Memento {
    fn facts(&self) -> &Facts {
        &FACTS
    }

    fn resolve(&self, given: &RingParams) -> Result<Params, RingError> {
        Params::base(given, None, KeyRule::Xxh3)
    }

    /// Errors: [`RingError::InvalidConfig`] for buckets that do not fit (see
    /// [`resolve`]). (Every weight is 1: the facade checks [`WEIGHT_RULE`].)
    fn build(&self, _: &Params, nodes: &[Node], _: PointHash, extra: PerNode) -> Result<Placement, RingError> {
        let table = resolve(nodes, extra.buckets.as_deref(), extra.removed_buckets.as_deref().unwrap_or_default())?;
        Ok(Placement::other(Buckets::new(table)))
    }

    /// Memento's own operations on the parent's buckets: an added node
    /// takes the most recently removed bucket (or a new one past the end),
    /// a removed node's bucket joins the history. O(buckets).
    fn derive(
        &self,
        _: &Params,
        parent: &Placement,
        _: &[Node],
        change: Change,
        _: PointHash,
    ) -> Result<Placement, RingError> {
        let mut table = parent.lookup().buckets().expect("a memento ring's placement has buckets").clone();
        match change {
            Change::Added => {
                let bucket = match table.removed.pop() {
                    Some(bucket) => bucket,
                    None if table.size < MAX_BUCKETS => {
                        table.size += 1;
                        table.size - 1
                    }
                    None => return Err(too_many(u64::from(table.size) + 1)),
                };
                table.of_node.push(bucket);
            }
            Change::Removed(node) => {
                let bucket = table.of_node.remove(node as usize);
                remove(&mut table, bucket);
            }
            // Every weight is 1 (checked above), so the weight did not change.
            Change::Reweighted(..) => {}
        }
        Ok(Placement::other(Buckets::new(table)))
    }
}

fn too_many(buckets: u64) -> RingError {
    RingError::InvalidConfig { message: format!("memento takes at most {MAX_BUCKETS} buckets, got {buckets}") }
}

/// Memento's `remove(b)` on a bucket table whose nodes no longer hold `b`:
/// with no removal on record, removing the last bucket shrinks the array
/// (as jumpback would); otherwise `b` goes on top of the history.
fn remove(table: &mut BucketTable, bucket: u32) {
    if table.removed.is_empty() && bucket + 1 == table.size {
        table.size -= 1;
    } else {
        table.removed.push(bucket);
    }
}

/// The bucket table of `nodes` from the buckets given per node (`None`:
/// not given) and the removed buckets in removal order, oldest first.
///
/// The array holds `nodes + removed` buckets. Nodes without a bucket take
/// the buckets neither given nor removed, in ascending order, in node
/// order (with none given and none removed, node `i` holds bucket `i`, as
/// under `jump`). The removals are then replayed by Memento's rule from a
/// full array, so one that removes the last bucket while none is on record
/// shrinks the array instead of being recorded.
///
/// Errors: [`RingError::InvalidConfig`] naming a bucket outside the array,
/// one listed twice (removed twice, held by two nodes, or both held and
/// removed), or an array over [`MAX_BUCKETS`].
pub(crate) fn resolve(
    nodes: &[Node],
    given: Option<&[Option<u32>]>,
    removed: &[u32],
) -> Result<BucketTable, RingError> {
    let total = nodes.len() as u64 + removed.len() as u64;
    if total > u64::from(MAX_BUCKETS) {
        return Err(too_many(total));
    }
    let invalid = |message: String| RingError::InvalidConfig { message };
    let shape = || format!("{total} buckets: {} nodes and {} removed", nodes.len(), removed.len());
    // Who claimed each bucket: None, a removal, or a node.
    #[derive(Clone, Copy, PartialEq)]
    enum Claim {
        Free,
        Removed,
        Node(usize),
    }
    let mut claims = vec![Claim::Free; total as usize];
    for (i, &bucket) in removed.iter().enumerate() {
        let Some(claim) = claims.get_mut(bucket as usize) else {
            return Err(invalid(format!(
                "removed_buckets[{i}] = {bucket} is outside the buckets 0..{total} ({})",
                shape()
            )));
        };
        if *claim != Claim::Free {
            return Err(invalid(format!("removed_buckets lists bucket {bucket} twice")));
        }
        *claim = Claim::Removed;
    }
    let given = given.unwrap_or_default();
    for (i, bucket) in given.iter().enumerate().filter_map(|(i, b)| Some((i, (*b)?))) {
        let id = nodes[i].id();
        let Some(claim) = claims.get_mut(bucket as usize) else {
            return Err(invalid(format!(
                "node {id:?}: bucket {bucket} is outside the buckets 0..{total} ({})",
                shape()
            )));
        };
        match *claim {
            Claim::Free => *claim = Claim::Node(i),
            Claim::Removed => {
                return Err(invalid(format!("node {id:?}: bucket {bucket} is also in removed_buckets")));
            }
            Claim::Node(other) => {
                return Err(invalid(format!("node {id:?}: bucket {bucket} is already node {:?}'s", nodes[other].id())));
            }
        }
    }
    let mut free = claims.iter().enumerate().filter(|(_, c)| **c == Claim::Free).map(|(b, _)| b as u32);
    let of_node = (0..nodes.len())
        .map(|i| match given.get(i).copied().flatten() {
            Some(bucket) => bucket,
            None => free.next().expect("as many free buckets as nodes without one"),
        })
        .collect();
    let mut table = BucketTable { size: total as u32, of_node, removed: Vec::with_capacity(removed.len()) };
    for &bucket in removed {
        remove(&mut table, bucket);
    }
    Ok(table)
}

/// Set in a bucket's entry when the bucket was removed.
const REMOVED: u32 = 1 << 31;

/// A built MementoHash placement.
#[derive(Debug)]
struct Buckets {
    /// Per bucket: the index of the node holding it, or [`REMOVED`] | the
    /// number of buckets working right after its removal (Memento's
    /// replacer: removal `k` of the history, from 0, has `size - k - 1`).
    entries: Vec<u32>,
    table: BucketTable,
}

impl Buckets {
    fn new(table: BucketTable) -> Buckets {
        let mut entries = vec![0u32; table.size as usize];
        for (node, &bucket) in table.of_node.iter().enumerate() {
            entries[bucket as usize] = node as u32;
        }
        for (k, &bucket) in table.removed.iter().enumerate() {
            entries[bucket as usize] = REMOVED | (table.size - k as u32 - 1);
        }
        Buckets { entries, table }
    }

    /// The bucket of `hash` when `replacer(b)` gives each removed bucket's
    /// replacer (`None` for a working one) over an array of `size`:
    /// Memento's lookup. Terminates: each rehash is into fewer buckets than
    /// the last.
    #[inline]
    fn locate(hash: u64, size: u32, replacer: impl Fn(u32) -> Option<u32>) -> u32 {
        let mut bucket = jump_back_hash(hash, size);
        let mut next = replacer(bucket);
        while let Some(working) = next {
            bucket = rehash(hash, bucket, working);
            next = replacer(bucket);
            // A bucket removed before (when more were working) stands for its replacer.
            while let Some(earlier) = next.filter(|&r| r >= working) {
                bucket = earlier;
                next = replacer(bucket);
            }
        }
        bucket
    }

    fn replacer(&self, bucket: u32) -> Option<u32> {
        let entry = self.entries[bucket as usize];
        (entry & REMOVED != 0).then_some(entry & !REMOVED)
    }
}

/// A key's bucket among the first `working` buckets after its bucket
/// `bucket` was found removed: value `bucket` of the SplitMix64 stream
/// seeded with `fmix64(hash)` (not the key hash itself, whose stream
/// JumpBackHash draws from), scaled to `0..working` (`(r * working) >> 64`).
#[inline]
fn rehash(hash: u64, bucket: u32, working: u32) -> u32 {
    ((u128::from(splitmix64(fmix64(hash), u64::from(bucket))) * u128::from(working)) >> 64) as u32
}

impl Lookup for Buckets {
    #[inline]
    fn owner(&self, hash: u64) -> usize {
        let size = self.entries.len() as u32;
        let bucket = if self.table.removed.is_empty() {
            jump_back_hash(hash, size)
        } else {
            Buckets::locate(hash, size, |b| self.replacer(b))
        };
        self.entries[bucket as usize] as usize
    }

    /// The owner, then the owner once it is removed, and so on: each next
    /// node is where the key goes when the nodes before it are removed in
    /// order, so a preference list is the key's failover order.
    fn walk(&self, hash: u64, visit: &mut dyn FnMut(usize) -> bool) {
        let mut overlay = Overlay::new(&self.table);
        loop {
            let bucket = Buckets::locate(hash, overlay.size, |b| overlay.replacer(b).or_else(|| self.replacer(b)));
            if visit(self.entries[bucket as usize] as usize) || !overlay.remove(bucket) {
                return;
            }
        }
    }

    fn mark_live(&self, live: &mut [bool]) {
        live.fill(true);
    }

    fn heap_bytes(&self) -> usize {
        (self.entries.capacity() + self.table.of_node.capacity() + self.table.removed.capacity()) * size_of::<u32>()
    }

    fn arc_ends(&self) -> Option<Vec<(u64, usize)>> {
        None
    }

    /// `1/n` for each of the `n` nodes (each holds one working bucket).
    fn expected_shares(&self, shares: &mut [f64]) {
        shares.fill(1.0 / shares.len() as f64);
    }

    fn buckets(&self) -> Option<&BucketTable> {
        Some(&self.table)
    }
}

/// Removals made for a preference walk on top of a ring's history, which
/// stays shared: a short list, or, past [`Overlay::DENSE`] removals, a
/// replacer per bucket.
struct Overlay {
    size: u32,
    working: u32,
    history_empty: bool,
    recent: Vec<(u32, u32)>,
    dense: Vec<Option<u32>>,
}

impl Overlay {
    const DENSE: usize = 16;

    fn new(table: &BucketTable) -> Overlay {
        Overlay {
            size: table.size,
            working: table.of_node.len() as u32,
            history_empty: table.removed.is_empty(),
            recent: Vec::new(),
            dense: Vec::new(),
        }
    }

    /// The replacer this walk gave `bucket`, if it removed it.
    fn replacer(&self, bucket: u32) -> Option<u32> {
        if self.dense.is_empty() {
            self.recent.iter().find(|&&(b, _)| b == bucket).map(|&(_, r)| r)
        } else {
            self.dense[bucket as usize]
        }
    }

    /// Memento's `remove(bucket)`; false when no bucket is left working.
    fn remove(&mut self, bucket: u32) -> bool {
        self.working -= 1;
        if self.history_empty && self.recent.is_empty() && bucket + 1 == self.size {
            self.size -= 1;
        } else if self.dense.is_empty() && self.recent.len() < Overlay::DENSE {
            self.recent.push((bucket, self.working));
        } else {
            if self.dense.is_empty() {
                self.dense = vec![None; self.size as usize];
                self.recent.iter().for_each(|&(b, r)| self.dense[b as usize] = Some(r));
            }
            self.dense[bucket as usize] = Some(self.working);
        }
        self.working > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nodes(n: usize) -> Vec<Node> {
        (0..n).map(|i| Node::new(format!("n{i}"), 1.0)).collect()
    }

    fn placement(table: &BucketTable) -> Buckets {
        Buckets::new(table.clone())
    }

    #[test]
    fn without_removals_it_is_jumpback() {
        let table = resolve(&nodes(37), None, &[]).unwrap();
        let buckets = placement(&table);
        for i in 0..10_000u64 {
            let hash = crate::hash::fmix64(i);
            assert_eq!(buckets.owner(hash), jump_back_hash(hash, 37) as usize);
        }
    }

    #[test]
    fn replay_shrinks_on_the_last_bucket_and_records_the_rest() {
        // 3 nodes and 3 removals: 6 buckets; removing 5 first shrinks to 5,
        // then 4 shrinks to 4, then 1 is recorded.
        let table = resolve(&nodes(3), None, &[5, 4, 1]).unwrap();
        assert_eq!((table.size, table.of_node.as_slice(), table.removed.as_slice()), (4, &[0, 2, 3][..], &[1][..]));
        let table = resolve(&nodes(3), None, &[1, 5, 4]).unwrap();
        assert_eq!((table.size, table.removed.as_slice()), (6, &[1, 5, 4][..]));
        let entries = placement(&table).entries;
        assert_eq!(entries, [0, REMOVED | 5, 1, 2, REMOVED | 3, REMOVED | 4]);
    }

    #[test]
    fn bad_buckets_are_named() {
        let message = |given: Option<&[Option<u32>]>, removed: &[u32]| match resolve(&nodes(3), given, removed) {
            Err(RingError::InvalidConfig { message }) => message,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            message(None, &[5]),
            "removed_buckets[0] = 5 is outside the buckets 0..4 (4 buckets: 3 nodes and 1 removed)"
        );
        assert_eq!(message(None, &[1, 1]), "removed_buckets lists bucket 1 twice");
        assert_eq!(message(Some(&[None, Some(1), None]), &[1]), "node \"n1\": bucket 1 is also in removed_buckets");
        assert_eq!(message(Some(&[Some(2), Some(2), None]), &[]), "node \"n1\": bucket 2 is already node \"n0\"'s");
    }

    #[test]
    fn removing_a_bucket_moves_only_its_keys_and_lifo_restores() {
        let mut table = resolve(&nodes(10), None, &[]).unwrap();
        let owner = |t: &BucketTable, hash: u64| {
            let b = placement(t);
            t.of_node[b.owner(hash)]
        };
        let hashes: Vec<u64> = (0..20_000u64).map(crate::hash::fmix64).collect();
        let mut history = vec![table.clone()];
        for bucket in [3u32, 7, 0, 9, 5] {
            let before = table.clone();
            let i = table.of_node.iter().position(|&b| b == bucket).unwrap();
            table.of_node.remove(i);
            remove(&mut table, bucket);
            for &hash in &hashes {
                let (was, now) = (owner(&before, hash), owner(&table, hash));
                assert!(was == now || was == bucket, "hash {hash:#x} moved {was} -> {now} removing {bucket}");
                assert_ne!(now, bucket);
            }
            history.push(table.clone());
        }
        // Adding back pops the history: each state returns exactly.
        history.pop();
        while let Some(state) = history.pop() {
            let bucket = table.removed.pop().unwrap_or_else(|| {
                table.size += 1;
                table.size - 1
            });
            table.of_node.push(bucket);
            for &hash in hashes.iter().take(2000) {
                assert_eq!(owner(&table, hash), owner(&state, hash));
            }
        }
    }

    #[test]
    fn walks_visit_each_node_once_in_failover_order() {
        let table = resolve(&nodes(40), None, &[4, 17, 33, 2]).unwrap();
        let buckets = placement(&table);
        for i in 0..200u64 {
            let hash = crate::hash::fmix64(i);
            let mut seen = Vec::new();
            buckets.walk(hash, &mut |n| {
                seen.push(n);
                false
            });
            assert_eq!(seen[0], buckets.owner(hash));
            // The second is the owner once the first is removed (the node
            // keeps its index; its bucket goes on record as removed).
            let mut without = table.clone();
            let first = without.of_node[seen[0]];
            remove(&mut without, first);
            assert_eq!(placement(&without).owner(hash), seen[1]);
            seen.sort_unstable();
            assert_eq!(seen, (0..40).collect::<Vec<_>>());
        }
    }
}
