//! The promises of `jumpback` (JumpBackHash) and `memento` (MementoHash)
//! as properties: minimal disruption (adding a node moves keys only to it;
//! under memento, removing any node moves only its keys), balance within
//! theory after removals, LIFO re-adds restoring the placement, configs and
//! fingerprints that carry memento's removal history, and transitions that
//! follow it.

use proptest::prelude::*;
use shardring::{Algorithm, Node, NodeState, Ring, RingConfig, RingError, Transition};

fn ring(algorithm: Algorithm, n: usize) -> Ring {
    Ring::builder().algorithm(algorithm).nodes((0..n).map(|i| Node::new(format!("n{i}"), 1.0))).build().unwrap()
}

fn owners(ring: &Ring, hashes: &[u64]) -> Vec<String> {
    hashes.iter().map(|&h| ring.get_by_hash(h).unwrap().id().to_owned()).collect()
}

fn hashes() -> impl Strategy<Value = Vec<u64>> {
    prop::collection::vec(any::<u64>(), 256)
}

/// A memento ring of `n` nodes after removing the nodes `picks` selects, in turn.
fn after_removals(n: usize, picks: &[prop::sample::Index]) -> Ring {
    picks.iter().take(n - 1).fold(ring(Algorithm::Memento, n), |ring, pick| {
        let id = ring.nodes()[pick.index(ring.nodes().len())].id().to_owned();
        ring.without_node(&id).unwrap()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Under memento, removing any node moves only the keys it owned, and
    /// adding one moves keys only to it, whatever was removed before.
    #[test]
    fn memento_moves_only_the_changed_nodes_keys(
        n in 2..40usize, picks in prop::collection::vec(any::<prop::sample::Index>(), 0..12),
        pick: prop::sample::Index, hashes in hashes(),
    ) {
        let before = after_removals(n, &picks);
        let gone = before.nodes()[pick.index(before.nodes().len())].id().to_owned();
        if before.nodes().len() > 1 {
            let after = before.without_node(&gone).unwrap();
            for (old, new) in owners(&before, &hashes).iter().zip(owners(&after, &hashes)) {
                prop_assert!(*old == new || *old == gone, "{} moved to {} when {} left", old, new, gone);
            }
        }
        let added = before.with_node(Node::new("newcomer", 1.0)).unwrap();
        for (old, new) in owners(&before, &hashes).iter().zip(owners(&added, &hashes)) {
            prop_assert!(*old == new || new == "newcomer", "{} moved to {}", old, new);
        }
    }

    /// Adding nodes back after removals restores each earlier placement in
    /// turn (LIFO), node ids aside: the newcomer takes the bucket removed last.
    #[test]
    fn memento_re_adds_restore_lifo(n in 2..40usize, picks in prop::collection::vec(any::<prop::sample::Index>(), 1..12), hashes in hashes()) {
        let mut states = vec![ring(Algorithm::Memento, n)];
        let mut removed = Vec::new();
        for pick in picks.iter().take(n - 1) {
            let last = states.last().unwrap();
            let id = last.nodes()[pick.index(last.nodes().len())].id().to_owned();
            states.push(last.without_node(&id).unwrap());
            removed.push(id);
        }
        let mut ring = states.pop().unwrap();
        while let Some(state) = states.pop() {
            ring = ring.with_node(Node::new(removed.pop().unwrap(), 1.0)).unwrap();
            prop_assert_eq!(owners(&ring, &hashes), owners(&state, &hashes));
            prop_assert_eq!(ring.buckets().unwrap().len(), state.buckets().unwrap().len());
        }
    }

    /// A ring's config (what another process receives) rebuilds the same
    /// placement and fingerprint after any sequence of removals and adds,
    /// with its nodes listed in any order.
    #[test]
    fn memento_configs_carry_the_history(
        n in 1..30usize, ops in prop::collection::vec((any::<bool>(), any::<prop::sample::Index>()), 0..16),
        rotate in 0..30usize, hashes in hashes(),
    ) {
        let mut ring = ring(Algorithm::Memento, n);
        for (i, (add, pick)) in ops.iter().enumerate() {
            ring = if *add || ring.nodes().len() == 1 {
                ring.with_node(Node::new(format!("added-{i}"), 1.0)).unwrap()
            } else {
                let id = ring.nodes()[pick.index(ring.nodes().len())].id().to_owned();
                ring.without_node(&id).unwrap()
            };
        }
        let json = ring.to_config().to_json();
        let rebuilt = Ring::from_json(&json).unwrap();
        prop_assert_eq!(owners(&rebuilt, &hashes), owners(&ring, &hashes));
        prop_assert_eq!(rebuilt.fingerprint(), ring.fingerprint());
        prop_assert_eq!(rebuilt.removed_buckets(), ring.removed_buckets());
        // Listed in another order, with every bucket written out.
        let mut config = ring.to_config();
        let buckets = ring.buckets().unwrap();
        config.nodes.iter_mut().zip(buckets).for_each(|(node, &b)| node.bucket = Some(b));
        let len = config.nodes.len();
        config.nodes.rotate_left(rotate % len);
        prop_assert_eq!(config.fingerprint(), ring.fingerprint());
        let shuffled = config.build().unwrap();
        prop_assert_eq!(owners(&shuffled, &hashes), owners(&ring, &hashes));
        prop_assert_eq!(shuffled.fingerprint(), ring.fingerprint());
    }

    /// A memento preference list is its failover order: the k-th node is
    /// the key's owner once the nodes before it are removed in turn.
    #[test]
    fn memento_preference_lists_are_failover_orders(
        n in 2..20usize, picks in prop::collection::vec(any::<prop::sample::Index>(), 0..8), key in any::<u64>(),
    ) {
        let ring = after_removals(n, &picks);
        let list: Vec<String> = {
            let mut out = vec![0usize; ring.nodes().len()];
            let found = ring.get_n_indices_by_hash(key, &mut out).unwrap();
            out[..found].iter().map(|&i| ring.nodes()[i].id().to_owned()).collect()
        };
        prop_assert_eq!(list.len(), ring.nodes().len());
        let mut failing = ring.clone();
        for id in &list[..list.len() - 1] {
            prop_assert_eq!(failing.get_by_hash(key).unwrap().id(), id.as_str());
            failing = failing.without_node(id).unwrap();
        }
    }

    /// jumpback: appending a node moves keys only to it, and removing the
    /// last node moves only its keys.
    #[test]
    fn jumpback_is_minimal_at_the_end(n in 1..200usize, hashes in hashes()) {
        let before = ring(Algorithm::Jumpback, n);
        let added = before.with_node(Node::new("newcomer", 1.0)).unwrap();
        for (old, new) in owners(&before, &hashes).iter().zip(owners(&added, &hashes)) {
            prop_assert!(*old == new || new == "newcomer", "{} moved to {}", old, new);
        }
        prop_assert_eq!(owners(&added.without_node("newcomer").unwrap(), &hashes), owners(&before, &hashes));
    }
}

/// Balance within theory: after removing 10% and 50% of 200 nodes at
/// random, 400,000 keys spread over the survivors like independent uniform
/// choices, every node within 5 standard deviations of the mean (180 nodes:
/// 2,222 keys each, 5 sd = 10.6%; 100 nodes: 4,000 keys, 5 sd = 7.9%), and
/// each removal moves only the removed node's keys.
#[test]
fn memento_balances_after_random_removals() {
    let keys: Vec<String> = (0..400_000).map(|i| format!("key-{i}")).collect();
    let mut ring = ring(Algorithm::Memento, 200);
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for (removals, tolerance) in [(20usize, 0.106), (80, 0.079)] {
        for _ in 0..removals {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            let id = ring.nodes()[(state >> 33) as usize % ring.nodes().len()].id().to_owned();
            let after = ring.without_node(&id).unwrap();
            let diff = ring.diff(&after).unwrap();
            assert!(diff.flows.iter().all(|f| f.from == id), "{id}: {:?}", diff.flows);
            ring = after;
        }
        let balance = ring.balance(&keys).unwrap();
        let live = ring.nodes().len();
        assert!(balance.by_node.max_over_mean < 1.0 + tolerance, "{live} nodes: {:?}", balance.by_node);
        assert!(balance.by_node.min_over_mean > 1.0 - tolerance, "{live} nodes: {:?}", balance.by_node);
        for (_, share) in ring.ownership() {
            assert!((share - 1.0 / live as f64).abs() < 1e-12);
        }
    }
}

/// With no removals memento places exactly as jumpback: a jumpback ring
/// switches to memento without moving a key, and gains removals of any node.
#[test]
fn memento_without_removals_is_jumpback() {
    let jump = ring(Algorithm::Jumpback, 57);
    let memento = ring(Algorithm::Memento, 57);
    for i in 0..20_000 {
        let key = format!("k{i}");
        assert_eq!(memento.get(&key).unwrap().id(), jump.get(&key).unwrap().id());
    }
    let config = memento.to_config();
    assert!(config.params.removed_buckets.is_none() && config.nodes.iter().all(|n| n.bucket.is_none()));
    // Removing the last node is jumpback's shrink: nothing goes on record.
    let shrunk = memento.without_node("n56").unwrap();
    assert_eq!(shrunk.removed_buckets(), Some(&[][..]));
    assert_eq!(shrunk.fingerprint(), ring(Algorithm::Memento, 56).fingerprint());
}

#[test]
fn memento_history_enters_json_and_fingerprint() {
    let base = ring(Algorithm::Memento, 5);
    let one_then_three = base.without_node("n1").unwrap().without_node("n3").unwrap();
    let three_then_one = base.without_node("n3").unwrap().without_node("n1").unwrap();
    // The same nodes, another history: another placement and fingerprint.
    assert_eq!(one_then_three.nodes(), three_then_one.nodes());
    assert_ne!(one_then_three.fingerprint(), three_then_one.fingerprint());
    assert_eq!(one_then_three.removed_buckets(), Some(&[1, 3][..]));
    let json = one_then_three.to_config().to_json();
    assert!(json.contains("\"removed_buckets\": [\n    1,\n    3\n  ]"), "{json}");
    let back = RingConfig::from_json(&json).unwrap();
    assert_eq!(back.params.removed_buckets, Some(vec![1, 3]));
    // A newcomer takes bucket 3, removed last; its config says so.
    let refilled = one_then_three.with_node(Node::new("fresh", 1.0)).unwrap();
    assert_eq!(refilled.buckets(), Some(&[0, 2, 4, 3][..]));
    let config = refilled.to_config();
    assert_eq!(config.nodes.iter().map(|n| n.bucket).collect::<Vec<_>>(), [Some(0), Some(2), Some(4), Some(3)]);
    assert_eq!(config.params.removed_buckets, Some(vec![1]));
    // The history applies to memento alone.
    let err = Ring::builder().removed_buckets([1]).node("a", 1.0).build().unwrap_err();
    assert!(err.to_string().contains("removed_buckets ([1]) does not apply to algorithm \"ring\""), "{err}");
    let err = Ring::builder().algorithm(Algorithm::Jump).bucket("a", 0).node("a", 1.0).build().unwrap_err();
    assert!(err.to_string().contains("buckets do not apply to algorithm \"jump\""), "{err}");
    let err = Ring::builder().algorithm(Algorithm::Memento).node("a", 2.0).build().unwrap_err();
    assert!(matches!(err, RingError::InvalidWeight { .. }) && err.to_string().contains("memento has no weights"));
    let err = Ring::builder().algorithm(Algorithm::Memento).node("a", 1.0).bucket("b", 0).build().unwrap_err();
    assert!(matches!(err, RingError::UnknownNode { ref id } if id == "b"), "{err}");
    // An id listed twice is the fault, not the bucket each listing is given.
    let twice = Ring::builder().algorithm(Algorithm::Memento).node("a", 1.0).node("a", 1.0);
    let err = twice.bucket("a", 0).bucket("a", 1).build().unwrap_err();
    assert!(matches!(err, RingError::DuplicateId { ref id } if id == "a"), "{err}");
    let err = Ring::builder()
        .algorithm(Algorithm::Memento)
        .node("a", 1.0)
        .node("b", 1.0)
        .bucket("a", 0)
        .bucket("a", 1)
        .build();
    assert!(err.unwrap_err().to_string().contains("node \"a\" is given a bucket twice"));
}

/// A memento transition follows the history: the joining member of a
/// config holding every member is undone by a removal, the leaving one
/// removed, so the read ring is the ring before the change.
#[test]
fn memento_transitions_follow_the_history() {
    let before = ring(Algorithm::Memento, 6).without_node("n2").unwrap();
    let joined = before.with_node(Node::new("w", 1.0)).unwrap();
    let mut config = joined.to_config();
    config.nodes.iter_mut().filter(|n| n.id == "w").for_each(|n| n.state = Some(NodeState::Warming));
    let transition = Transition::from_config(&config).unwrap();
    assert_eq!(transition.read_ring().fingerprint(), before.fingerprint());
    assert_eq!(transition.new_ring().fingerprint(), joined.fingerprint());
    let between = Transition::between(&before, &joined).unwrap();
    assert_eq!(between.read_ring().fingerprint(), before.fingerprint());
    assert_eq!(between.state("w"), Some(NodeState::Warming));
    // Leaving: n4 drains; the new ring is the ring without it.
    let mut config = before.to_config();
    config.nodes.iter_mut().filter(|n| n.id == "n4").for_each(|n| n.state = Some(NodeState::Draining));
    let transition = Transition::from_config(&config).unwrap();
    let left = before.without_node("n4").unwrap();
    assert_eq!(transition.new_ring().fingerprint(), left.fingerprint());
    assert_eq!(transition.read_ring().fingerprint(), left.fingerprint());
    assert_eq!(transition.old_ring().fingerprint(), before.fingerprint());
    let between = Transition::between(&before, &left).unwrap();
    assert_eq!(between.read_ring().fingerprint(), left.fingerprint());
    assert_eq!(between.state("n4"), Some(NodeState::Draining));
    for i in 0..2000 {
        let key = format!("k{i}");
        let owner = before.get(&key).unwrap().id();
        let reads: Vec<&str> = transition.read_nodes(&key).unwrap().iter().map(|n| n.id()).collect();
        let want = if owner == "n4" { vec![left.get(&key).unwrap().id(), "n4"] } else { vec![owner] };
        assert_eq!(reads, want, "{key}");
    }
    // Between a ring and itself: steady, with the ring's fingerprint.
    let same = Transition::between(&before, &before).unwrap();
    assert_eq!(same.fingerprint(), before.fingerprint());
    assert_eq!(same.state("n4"), Some(NodeState::Active));
}
