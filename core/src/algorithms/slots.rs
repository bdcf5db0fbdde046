//! Redis Cluster key slots: `CRC16/XMODEM(key) mod 16384`, hashing only the
//! `{hash tag}` when the key has one (Redis Cluster specification, "Keys
//! distribution model"), and a slot -> node assignment.
//!
//! A fresh assignment gives each node of weight > 0 one contiguous range, in
//! node order, as `redis-cli --cluster create` does (its float32 arithmetic
//! included, so equal weights give exactly its ranges: 0-5460, 5461-10922,
//! 10923-16383 for three nodes). Deriving a ring rebalances instead, moving
//! exactly the slots `redis-cli --cluster rebalance --cluster-use-empty-masters`
//! moves (sources give their lowest-numbered slots), so a derived ring
//! predicts a real rebalance.

use std::ops::RangeInclusive;

use crate::error::RingError;
use crate::hash::KeyRule;
use crate::node::Node;
use crate::params::{Param, Params, RingParams};
use crate::scheme::{
    Change, Facts, Lookup, PerNode, Placement, PointHash, Scheme, mark_table, table_arc_ends, walk_table,
};

const NONE: u32 = u32::MAX;

pub use crate::hash::{SLOT_COUNT, crc16, key_slot};

/// The `slots` algorithm.
pub(crate) struct Slots;

static FACTS: Facts = Facts { hash_bits: 14, takes: &[Param::SlotRanges], ..Facts::DEFAULT };

impl Scheme for Slots {
    fn facts(&self) -> &Facts {
        &FACTS
    }

    fn resolve(&self, given: &RingParams) -> Result<Params, RingError> {
        Params::base(given, None, KeyRule::Slot)
    }

    /// The ranges given per node, else [`contiguous`] ones. Errors: those of
    /// [`validate`] and [`explicit`].
    fn build(&self, _: &Params, nodes: &[Node], _: PointHash, extra: PerNode) -> Result<Placement, RingError> {
        validate(nodes)?;
        let table = match extra.slots {
            None => contiguous(nodes),
            Some(ranges) => explicit(nodes, &ranges)?,
        };
        Ok(Placement::other(SlotTable(table)))
    }

    /// Rebalances the parent's assignment ([`rebalance`]), as `redis-cli
    /// --cluster rebalance --cluster-use-empty-masters` would after the change.
    fn derive(
        &self,
        _: &Params,
        parent: &Placement,
        nodes: &[Node],
        change: Change,
        _: PointHash,
    ) -> Result<Placement, RingError> {
        validate(nodes)?;
        let parent = parent.lookup().slot_table().expect("a slots ring has a slot table");
        let previous = if parent.is_empty() {
            vec![None; SLOT_COUNT]
        } else {
            parent.iter().map(|&owner| change.owner_now(owner)).collect()
        };
        Ok(Placement::other(SlotTable(rebalance(nodes, &previous))))
    }
}

/// A slot -> node index table of 16,384 entries; empty when no node holds a slot.
#[derive(Debug)]
struct SlotTable(Vec<u32>);

impl Lookup for SlotTable {
    fn owner(&self, hash: u64) -> usize {
        self.0[hash as usize] as usize
    }

    /// Forward through the slots from the key's, each range once.
    fn walk(&self, hash: u64, visit: &mut dyn FnMut(usize) -> bool) {
        walk_table(&self.0, hash as usize, visit)
    }

    fn mark_live(&self, live: &mut [bool]) {
        mark_table(&self.0, live)
    }

    fn heap_bytes(&self) -> usize {
        self.0.len() * size_of::<u32>()
    }

    /// Slot `s` holds the 64-bit positions up to `((s + 1) << 50) - 1`.
    fn arc_ends(&self) -> Option<Vec<(u64, usize)>> {
        Some(table_arc_ends(&self.0, |s| (((s as u64) + 1) << 50).wrapping_sub(1)))
    }

    fn slot_table(&self) -> Option<&[u32]> {
        Some(&self.0)
    }
}

/// Checks that every node of weight > 0 can hold a slot.
///
/// Errors: [`RingError::InvalidConfig`] for more than 16,384 such nodes.
fn validate(nodes: &[Node]) -> Result<(), RingError> {
    let live = nodes.iter().filter(|n| n.weight() > 0.0).count();
    if live > SLOT_COUNT {
        return Err(RingError::InvalidConfig {
            message: format!("{live} nodes of weight > 0 cannot each hold one of the 16384 Redis Cluster slots"),
        });
    }
    Ok(())
}

/// The fresh assignment: contiguous ranges as `redis-cli --cluster create`
/// computes them, generalised to weights (a node's range spans
/// `(float)(w / W) * 16384` slots, with `w / W` in binary64, which for
/// equal weights is exactly redis-cli's `16384 / (float)n`).
pub(crate) fn contiguous(nodes: &[Node]) -> Vec<u32> {
    let live: Vec<usize> = (0..nodes.len()).filter(|&i| nodes[i].weight() > 0.0).collect();
    if live.is_empty() {
        return Vec::new();
    }
    let total = live.iter().map(|&i| nodes[i].weight()).sum::<f64>();
    let mut table = vec![NONE; SLOT_COUNT];
    let (mut first, mut cursor) = (0i64, 0f32);
    for (k, &i) in live.iter().enumerate() {
        let span = (nodes[i].weight() / total) as f32 * SLOT_COUNT as f32;
        let mut last = f64::from(cursor + span - 1.0).round() as i64;
        if last > SLOT_COUNT as i64 || k == live.len() - 1 {
            last = SLOT_COUNT as i64 - 1;
        }
        last = last.max(first).min(SLOT_COUNT as i64 - 1);
        for slot in first..=last {
            table[slot as usize] = i as u32;
        }
        first = last + 1;
        cursor += span;
    }
    table
}

/// An assignment from explicit ranges per node (`ranges[i]` for node `i`).
///
/// Errors: [`RingError::InvalidConfig`] naming a slot above 16383, an
/// inverted range, a slot given twice, or a slot no node holds.
fn explicit(nodes: &[Node], ranges: &[Vec<RangeInclusive<u16>>]) -> Result<Vec<u32>, RingError> {
    let invalid = |message: String| RingError::InvalidConfig { message };
    let mut table = vec![NONE; SLOT_COUNT];
    for (i, node_ranges) in ranges.iter().enumerate() {
        if nodes[i].weight() == 0.0 && !node_ranges.is_empty() {
            return Err(invalid(format!("node {:?} has weight 0 (drained) but is given slots", nodes[i].id())));
        }
        for range in node_ranges {
            let (start, end) = (*range.start(), *range.end());
            if start > end {
                return Err(invalid(format!("slot range [{start}, {end}] of node {:?} is inverted", nodes[i].id())));
            }
            if usize::from(end) >= SLOT_COUNT {
                return Err(invalid(format!("slot {end} of node {:?} is above 16383", nodes[i].id())));
            }
            for slot in start..=end {
                if table[slot as usize] != NONE {
                    let other = nodes[table[slot as usize] as usize].id();
                    return Err(invalid(format!("slot {slot} is given to both {other:?} and {:?}", nodes[i].id())));
                }
                table[slot as usize] = i as u32;
            }
        }
    }
    if let Some(slot) = table.iter().position(|&owner| owner == NONE) {
        return Err(invalid(format!("slot {slot} is not given to any node; every slot 0-16383 must be")));
    }
    Ok(table)
}

/// Rebalances `previous` (slot -> node index in `nodes`, `None` for a slot
/// whose node left) to the weights of `nodes` exactly as `redis-cli
/// --cluster rebalance --cluster-use-empty-masters` (threshold 2%, Redis
/// 7.0 `clusterManagerCommandRebalance`) moves slots, with `--cluster-weight`
/// set to each node's weight and the cluster listed in node order. Empty when
/// no node has weight > 0.
///
/// The involved masters, in node order, are the nodes of weight > 0 and
/// those still holding slots (a node of weight 0 gives all of them away, as
/// `--cluster-weight id=0` drains a master before `del-node`); slots of a
/// node that left form one more master of weight 0, last. Each gets
/// `expected = (int)((16384f / total_weight) * weight)` in float32 and
/// `balance = slots - expected`. When no master is off by more than 2%
/// (`|100 - 100 * expected / slots|`, or `expected > 1` with no slot),
/// nothing moves. Otherwise the rounding surplus is taken, one slot at a
/// time, from masters of balance <= 0 in order; masters are sorted by
/// balance ascending (stably, as glibc's merge-sorting `qsort` does), and
/// the most negative takes from the most positive, each move taking the
/// source's lowest-numbered slots, until all balances are 0.
fn rebalance(nodes: &[Node], previous: &[Option<u32>]) -> Vec<u32> {
    const THRESHOLD: f64 = 2.0;
    if nodes.iter().all(|n| n.weight() == 0.0) {
        return Vec::new();
    }
    let departed = nodes.len() as u32;
    let mut table: Vec<u32> = previous.iter().map(|owner| owner.unwrap_or(departed)).collect();
    let mut count = vec![0i64; nodes.len() + 1];
    table.iter().for_each(|&owner| count[owner as usize] += 1);
    struct Master {
        index: u32,
        balance: i64,
    }
    let weight = |i: usize| if i < nodes.len() { nodes[i].weight() as f32 } else { 0.0 };
    let involved: Vec<usize> =
        (0..=nodes.len()).filter(|&i| count[i] > 0 || (i < nodes.len() && nodes[i].weight() > 0.0)).collect();
    let total_weight: f32 = involved.iter().map(|&i| weight(i)).sum();
    let mut over_threshold = false;
    let mut masters: Vec<Master> = involved
        .iter()
        .map(|&i| {
            let expected = ((SLOT_COUNT as f32 / total_weight) * weight(i)) as i64;
            over_threshold |= if count[i] == 0 {
                expected > 1
            } else {
                (100.0 - 100.0 * expected as f64 / count[i] as f64).abs() > THRESHOLD
            };
            Master { index: i as u32, balance: count[i] - expected }
        })
        .collect();
    if !over_threshold {
        return table;
    }
    let mut surplus: i64 = masters.iter().map(|m| m.balance).sum();
    while surplus > 0 && masters.iter().any(|m| m.balance <= 0) {
        for master in masters.iter_mut() {
            if master.balance <= 0 && surplus > 0 {
                master.balance -= 1;
                surplus -= 1;
            }
        }
    }
    masters.sort_by_key(|m| m.balance);
    let (mut dst, mut src) = (0usize, masters.len().saturating_sub(1));
    while dst < src {
        let moved = masters[dst].balance.abs().min(masters[src].balance.abs());
        let (from, to) = (masters[src].index, masters[dst].index);
        let mut left = moved;
        for owner in table.iter_mut() {
            if left == 0 {
                break;
            }
            if *owner == from {
                *owner = to;
                left -= 1;
            }
        }
        masters[dst].balance += moved;
        masters[src].balance -= moved;
        if masters[dst].balance == 0 {
            dst += 1;
        }
        if masters[src].balance == 0 {
            src -= 1;
        }
    }
    // redis-cli leaves no slot behind when its arithmetic balances; should
    // float32 leave a departed node's slot over, the first live node takes it.
    let first_live = nodes.iter().position(|n| n.weight() > 0.0).expect("a node has weight > 0") as u32;
    table.iter_mut().filter(|owner| **owner == departed).for_each(|owner| *owner = first_live);
    table
}

/// Each node's slots as inclusive ranges, ascending.
pub(crate) fn ranges(table: &[u32], nodes: usize) -> Vec<Vec<RangeInclusive<u16>>> {
    let mut ranges: Vec<Vec<RangeInclusive<u16>>> = vec![Vec::new(); nodes];
    let mut start = 0;
    for slot in 1..=table.len() {
        if slot == table.len() || table[slot] != table[start] {
            ranges[table[start] as usize].push(start as u16..=(slot - 1) as u16);
            start = slot;
        }
    }
    ranges
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_match_redis() {
        // The CRC16/XMODEM check value, and `CLUSTER KEYSLOT` examples from
        // the Redis documentation.
        assert_eq!(crc16(b"123456789"), 0x31C3);
        assert_eq!(key_slot(b"somekey"), 11_058);
        assert_eq!(key_slot(b"foo{hash_tag}"), 2_515);
        assert_eq!(key_slot(b"{user1000}.following"), key_slot(b"{user1000}.followers"));
        assert_eq!(key_slot(b"{user1000}.following"), key_slot(b"user1000"));
        // An empty tag or an unclosed brace hashes the whole key.
        assert_eq!(key_slot(b"foo{}{bar}"), crc16(b"foo{}{bar}") % 16_384);
        assert_eq!(key_slot(b"foo{bar"), crc16(b"foo{bar") % 16_384);
        assert_eq!(key_slot(b"foo{{bar}}zap"), crc16(b"{bar") % 16_384);
    }

    #[test]
    fn equal_spans_are_redis_clis_float32_division() {
        // (float)(1.0 / n) * 16384 must equal redis-cli's 16384 / (float)n.
        for n in 1..=SLOT_COUNT as u32 {
            let ours = (1.0 / f64::from(n)) as f32 * SLOT_COUNT as f32;
            assert_eq!(ours.to_bits(), (SLOT_COUNT as f32 / n as f32).to_bits(), "n = {n}");
        }
    }

    #[test]
    fn rebalancing_an_unchanged_cluster_moves_what_redis_cli_moves() {
        for n in [3usize, 7] {
            let nodes: Vec<Node> = (0..n).map(|i| Node::new(format!("n{i}"), 1.0)).collect();
            let fresh = contiguous(&nodes);
            let same = rebalance(&nodes, &fresh.iter().map(|&o| Some(o)).collect::<Vec<_>>());
            assert_eq!(fresh, same, "{n} nodes");
            let mut grown = nodes.clone();
            grown.push(Node::new("new", 1.0));
            let after = rebalance(&grown, &fresh.iter().map(|&o| Some(o)).collect::<Vec<_>>());
            let moved: Vec<(u32, u32)> =
                fresh.iter().zip(&after).filter(|(a, b)| a != b).map(|(&a, &b)| (a, b)).collect();
            assert!(moved.iter().all(|&(_, to)| to == n as u32), "{n} nodes: a slot moved between old nodes");
            assert_eq!(moved.len(), SLOT_COUNT / (n + 1), "{n} nodes");
        }
        // 1000 masters as `create` makes them hold 16 or 17 slots; redis-cli
        // expects 16 each, finds the 17s 5.9% over (above the 2% threshold)
        // and moves one slot from each of the 384 to one of the first 384
        // 16-slot masters: a real rebalance of an unchanged cluster does move slots.
        let nodes: Vec<Node> = (0..1000).map(|i| Node::new(format!("n{i}"), 1.0)).collect();
        let fresh = contiguous(&nodes);
        let after = rebalance(&nodes, &fresh.iter().map(|&o| Some(o)).collect::<Vec<_>>());
        assert_eq!(fresh.iter().zip(&after).filter(|(a, b)| a != b).count(), 384);
        let mut count = vec![0; 1000];
        after.iter().for_each(|&o| count[o as usize] += 1);
        assert!(count.iter().all(|&c| c == 16 || c == 17));
    }

    #[test]
    fn fresh_ranges_match_redis_cli_create() {
        let nodes: Vec<Node> = (0..3).map(|i| Node::new(format!("n{i}"), 1.0)).collect();
        let got = ranges(&contiguous(&nodes), 3);
        assert_eq!(got, [vec![0..=5460], vec![5461..=10922], vec![10923..=16383]]);
    }

    #[test]
    fn rebalancing_moves_only_the_new_share() {
        let mut nodes: Vec<Node> = (0..3).map(|i| Node::new(format!("n{i}"), 1.0)).collect();
        let before = contiguous(&nodes);
        nodes.push(Node::new("n3", 1.0));
        let after = rebalance(&nodes, &before.iter().map(|&o| Some(o)).collect::<Vec<_>>());
        let moved = before.iter().zip(&after).filter(|(a, b)| a != b).count();
        assert_eq!(moved, 4096);
        assert!(before.iter().zip(&after).all(|(&a, &b)| a == b || b == 3));
    }
}
