//! Redis Cluster key slots: `CRC16/XMODEM(key) mod 16384`, hashing only the
//! `{hash tag}` when the key has one (Redis Cluster specification, "Keys
//! distribution model"), and a slot -> node assignment.
//!
//! A fresh assignment gives each node of weight > 0 one contiguous range, in
//! node order, as `redis-cli --cluster create` does (its float32 arithmetic
//! included, so equal weights give exactly its ranges: 0-5460, 5461-10922,
//! 10923-16383 for three nodes). Deriving a ring rebalances instead: each
//! node's target is its weight's share (largest remainder), over-target
//! nodes give up their highest slots and under-target nodes take the lowest
//! free ones in node order, so only the slots that must move do.

use std::ops::RangeInclusive;

use crate::error::RingError;
use crate::node::Node;

/// Number of Redis Cluster hash slots.
pub const SLOT_COUNT: usize = 16_384;

const NONE: u32 = u32::MAX;

pub use crate::hash::crc16;

/// The Redis Cluster slot of a key, as `CLUSTER KEYSLOT` gives it: if the key
/// has a `{` followed later by a `}` with at least one byte between the first
/// `{` and the first `}` after it, only those bytes are hashed.
pub fn key_slot(key: &[u8]) -> u16 {
    let tagged = key.iter().position(|&b| b == b'{').and_then(|open| {
        let close = key[open + 1..].iter().position(|&b| b == b'}')?;
        (close > 0).then(|| &key[open + 1..open + 1 + close])
    });
    crc16(tagged.unwrap_or(key)) % SLOT_COUNT as u16
}

/// Checks that every node of weight > 0 can hold a slot.
///
/// Errors: [`RingError::InvalidConfig`] for more than 16,384 such nodes.
pub(crate) fn validate(nodes: &[Node]) -> Result<(), RingError> {
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
pub(crate) fn explicit(nodes: &[Node], ranges: &[Vec<RangeInclusive<u16>>]) -> Result<Vec<u32>, RingError> {
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
/// whose node left) to the weights of `nodes`, moving as few slots as
/// possible. Empty when no node has weight > 0.
pub(crate) fn rebalance(nodes: &[Node], previous: &[Option<u32>]) -> Vec<u32> {
    let total: f64 = nodes.iter().map(Node::weight).sum();
    if total == 0.0 {
        return Vec::new();
    }
    let mut count = vec![0usize; nodes.len()];
    previous.iter().flatten().for_each(|&owner| count[owner as usize] += 1);
    // Targets: each node's exact share rounded down, and the slots left over
    // one each to the nodes already holding more than that (so they keep
    // them), then by largest remainder, then in node order.
    let exact: Vec<f64> = nodes.iter().map(|n| n.weight() / total * SLOT_COUNT as f64).collect();
    let mut target: Vec<usize> = exact.iter().map(|&e| e.floor() as usize).collect();
    let mut order: Vec<usize> = (0..nodes.len()).filter(|&i| nodes[i].weight() > 0.0).collect();
    let holds_more = |i: usize| count[i] > target[i];
    order.sort_by(|&a, &b| {
        holds_more(b)
            .cmp(&holds_more(a))
            .then((exact[b] - exact[b].floor()).total_cmp(&(exact[a] - exact[a].floor())))
            .then(a.cmp(&b))
    });
    // A node of weight > 0 that holds a slot keeps at least one (a fresh
    // assignment gives even a tiny weight one slot); otherwise it would hand
    // its slot to another old node. When those slots overshoot the total,
    // the nodes furthest above their exact share give slots back.
    for i in 0..nodes.len() {
        if nodes[i].weight() > 0.0 && count[i] > 0 && target[i] == 0 {
            target[i] = 1;
        }
    }
    let assigned = target.iter().sum::<usize>();
    if assigned <= SLOT_COUNT {
        for &i in order.iter().take(SLOT_COUNT - assigned) {
            target[i] += 1;
        }
    } else {
        let mut givers: Vec<usize> = (0..nodes.len()).filter(|&i| target[i] >= 2).collect();
        givers
            .sort_by(|&a, &b| (target[b] as f64 - exact[b]).total_cmp(&(target[a] as f64 - exact[a])).then(a.cmp(&b)));
        let mut excess = assigned - SLOT_COUNT;
        // Enough exists: each holder keeps one slot, and at most 16384 hold one.
        while excess > 0 && givers.iter().any(|&i| target[i] >= 2) {
            for &i in &givers {
                if excess > 0 && target[i] >= 2 {
                    target[i] -= 1;
                    excess -= 1;
                }
            }
        }
    }
    let mut table: Vec<u32> = previous.iter().map(|owner| owner.unwrap_or(NONE)).collect();
    // Over-target nodes free their highest slots.
    for slot in (0..SLOT_COUNT).rev() {
        let owner = table[slot];
        if owner != NONE && count[owner as usize] > target[owner as usize] {
            count[owner as usize] -= 1;
            table[slot] = NONE;
        }
    }
    // Under-target nodes, in node order, take the lowest free slots.
    let mut receiver = 0;
    for slot in table.iter_mut().filter(|owner| **owner == NONE) {
        while count[receiver] >= target[receiver] {
            receiver += 1;
        }
        *slot = receiver as u32;
        count[receiver] += 1;
    }
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
    fn rebalancing_an_unchanged_cluster_moves_nothing() {
        for n in [3usize, 7, 1000, 5000] {
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
