//! The promises of consistent hashing, as proptest properties (1,000 cases each).

use std::collections::BTreeMap;

use proptest::prelude::*;
use shardring::{Node, Ring};

const WEIGHTS: [f64; 6] = [0.0, 0.25, 0.5, 1.0, 2.0, 3.3];

/// 1 to 8 nodes with distinct ids, weights from `WEIGHTS` (at least one > 0),
/// optionally zoned.
fn nodes() -> impl Strategy<Value = Vec<Node>> {
    prop::collection::btree_map("[a-z0-9]{1,5}", (0..WEIGHTS.len(), prop::option::of(0..3u8)), 1..8)
        .prop_filter("at least one node with weight > 0", |m| m.values().any(|&(w, _)| WEIGHTS[w] > 0.0))
        .prop_map(|m: BTreeMap<String, (usize, Option<u8>)>| {
            m.into_iter()
                .map(|(id, (w, zone))| {
                    let node = Node::new(id, WEIGHTS[w]);
                    match zone {
                        Some(z) => node.with_zone(format!("zone-{z}")),
                        None => node,
                    }
                })
                .collect()
        })
}

fn keys() -> impl Strategy<Value = Vec<Vec<u8>>> {
    prop::collection::vec(prop::collection::vec(any::<u8>(), 0..24), 100)
}

fn build(nodes: &[Node], vnodes: u32, seed: u64) -> Ring {
    Ring::builder().vnodes(vnodes).seed(seed).nodes(nodes.iter().cloned()).build().unwrap()
}

fn owner(ring: &Ring, key: &[u8]) -> String {
    ring.get(key).unwrap().id().to_owned()
}

fn same_points(a: &Ring, b: &Ring) -> bool {
    a.points().map(|(p, o)| (p, a.nodes()[o].id())).eq(b.points().map(|(p, o)| (p, b.nodes()[o].id())))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn every_owner_is_a_member_with_weight(nodes in nodes(), vnodes in 1..40u32, seed: u64, keys in keys()) {
        let ring = build(&nodes, vnodes, seed);
        for key in &keys {
            let node = ring.get(key).unwrap();
            prop_assert!(node.weight() > 0.0);
            prop_assert!(nodes.iter().any(|n| n.id() == node.id()));
        }
    }

    #[test]
    fn adding_a_node_moves_keys_only_to_it(nodes in nodes(), vnodes in 1..40u32, weight in 1..WEIGHTS.len(), keys in keys()) {
        let before = build(&nodes, vnodes, 0);
        let after = before.with_node(Node::new("newcomer!", WEIGHTS[weight])).unwrap();
        for key in &keys {
            let (old, new) = (owner(&before, key), owner(&after, key));
            prop_assert!(old == new || new == "newcomer!", "{old} -> {new}");
        }
    }

    #[test]
    fn removing_a_node_moves_only_its_keys(nodes in nodes(), vnodes in 1..40u32, pick: prop::sample::Index, keys in keys()) {
        let before = build(&nodes, vnodes, 0);
        let gone = nodes[pick.index(nodes.len())].id();
        let after = before.without_node(gone).unwrap();
        if after.point_count() == 0 {
            return Ok(());
        }
        for key in &keys {
            let (old, new) = (owner(&before, key), owner(&after, key));
            prop_assert!(old == new || old == gone, "{old} -> {new} after removing {gone}");
        }
    }

    #[test]
    fn changing_a_weight_moves_keys_only_to_or_from_that_node(
        nodes in nodes(), vnodes in 1..40u32, pick: prop::sample::Index, weight in 0..WEIGHTS.len(), keys in keys()
    ) {
        let before = build(&nodes, vnodes, 0);
        let node = &nodes[pick.index(nodes.len())];
        let after = before.with_weight(node.id(), WEIGHTS[weight]).unwrap();
        if after.point_count() == 0 {
            return Ok(());
        }
        let raised = WEIGHTS[weight] >= node.weight();
        for key in &keys {
            let (old, new) = (owner(&before, key), owner(&after, key));
            if old != new {
                if raised {
                    prop_assert_eq!(&new, node.id(), "raising moved {} -> {}", old, new);
                } else {
                    prop_assert_eq!(&old, node.id(), "lowering moved {} -> {}", old, new);
                }
            }
        }
    }

    #[test]
    fn removing_then_re_adding_restores_every_placement(nodes in nodes(), vnodes in 1..40u32, pick: prop::sample::Index, keys in keys()) {
        let ring = build(&nodes, vnodes, 7);
        let node = nodes[pick.index(nodes.len())].clone();
        let back = ring.without_node(node.id()).unwrap().with_node(node).unwrap();
        prop_assert!(same_points(&ring, &back));
        for key in &keys {
            prop_assert_eq!(owner(&ring, key), owner(&back, key));
            let a: Vec<_> = ring.get_n(key, 3).unwrap().iter().map(|n| n.id().to_owned()).collect();
            let b: Vec<_> = back.get_n(key, 3).unwrap().iter().map(|n| n.id().to_owned()).collect();
            prop_assert_eq!(a, b);
        }
    }

    #[test]
    fn derived_rings_equal_rings_built_from_scratch(nodes in nodes(), vnodes in 1..40u32, pick: prop::sample::Index, weight in 0..WEIGHTS.len()) {
        let i = pick.index(nodes.len());
        let mut rest = nodes.clone();
        let last = rest.remove(i);
        let base = build(&rest, vnodes, 3);
        let mut appended = rest.clone();
        appended.push(last.clone());
        prop_assert!(same_points(&base.with_node(last.clone()).unwrap(), &build(&appended, vnodes, 3)));
        let full = build(&nodes, vnodes, 3);
        prop_assert!(same_points(&full.without_node(last.id()).unwrap(), &base));
        let mut reweighted = nodes.clone();
        reweighted[i] = Node::new(last.id(), WEIGHTS[weight]);
        if let Some(zone) = last.zone() {
            reweighted[i] = reweighted[i].clone().with_zone(zone);
        }
        prop_assert!(same_points(&full.with_weight(last.id(), WEIGHTS[weight]).unwrap(), &build(&reweighted, vnodes, 3)));
    }

    #[test]
    fn insertion_order_does_not_matter(nodes in nodes(), vnodes in 1..40u32, shuffle in Just(()).prop_perturb(|_, mut rng| rng.random::<u64>()), keys in keys()) {
        let mut order = nodes.clone();
        // A deterministic shuffle from the case's random number.
        let mut state = shuffle | 1;
        for i in (1..order.len()).rev() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            order.swap(i, (state % (i as u64 + 1)) as usize);
        }
        let a = build(&nodes, vnodes, 11);
        let b = build(&order, vnodes, 11);
        prop_assert!(same_points(&a, &b));
        for key in &keys {
            prop_assert_eq!(owner(&a, key), owner(&b, key));
        }
    }

    #[test]
    fn preference_lists_are_distinct_and_start_with_the_owner(nodes in nodes(), vnodes in 1..40u32, n in 0..10usize, keys in keys()) {
        let ring = build(&nodes, vnodes, 5);
        let live: Vec<&Node> = nodes.iter().filter(|n| n.weight() > 0.0).collect();
        let zones = |list: &[&Node]| {
            let mut z: Vec<String> = list.iter().map(|n| n.zone().map_or_else(|| format!("own:{}", n.id()), str::to_owned)).collect();
            z.sort();
            z.dedup();
            z.len()
        };
        for key in &keys {
            let list = ring.get_n(key, n).unwrap();
            prop_assert_eq!(list.len(), n.min(live.len()));
            if n > 0 {
                prop_assert_eq!(list[0].id(), ring.get(key).unwrap().id());
            }
            let mut ids: Vec<&str> = list.iter().map(|n| n.id()).collect();
            ids.sort_unstable();
            ids.dedup();
            prop_assert_eq!(ids.len(), list.len());
            // Zones first: a list spans as many zones as it can.
            prop_assert_eq!(zones(&list), list.len().min(zones(&live)));
        }
    }

    #[test]
    fn diff_arcs_are_exactly_the_moved_keys(nodes in nodes(), vnodes in 1..40u32, pick: prop::sample::Index, weight in 0..WEIGHTS.len(), keys in keys()) {
        let old = build(&nodes, vnodes, 9);
        let new = old.with_weight(nodes[pick.index(nodes.len())].id(), WEIGHTS[weight]).unwrap().with_node(Node::new("z!", 1.0)).unwrap();
        let diff = old.diff(&new).unwrap();
        let arc_total: f64 = diff.arcs.iter().map(|a| (a.end - a.start) as f64 + 1.0).sum::<f64>() / 2f64.powi(64);
        prop_assert!((arc_total - diff.moved_share).abs() < 1e-9);
        let flow_total: f64 = diff.flows.iter().map(|f| f.share).sum();
        prop_assert!((flow_total - diff.moved_share).abs() < 1e-9);
        for key in &keys {
            let hash = old.hash_key(key);
            let arc = diff.arcs.iter().find(|a| a.start <= hash && hash <= a.end);
            let (from, to) = (owner(&old, key), owner(&new, key));
            match arc {
                Some(arc) => prop_assert!(arc.from == from && arc.to == to, "{arc:?} vs {from} -> {to}"),
                None => prop_assert_eq!(from, to),
            }
        }
    }
}
