//! Behaviour of the ring: errors for every bad input, and the promises of
//! consistent hashing checked on concrete rings.

use shardring::{MAX_POINTS, Node, Ring, RingError};

fn ring(nodes: &[(&str, f64)]) -> Result<Ring, RingError> {
    Ring::builder().nodes(nodes.iter().map(|&(id, w)| Node::new(id, w))).build()
}

fn keys(count: usize) -> impl Iterator<Item = String> {
    (0..count).map(|i| format!("key-{i}"))
}

#[test]
fn bad_input_gets_a_typed_error_naming_the_value() {
    assert_eq!(ring(&[("a", 1.0), ("", 1.0)]).unwrap_err(), RingError::EmptyId { position: 1 });
    assert_eq!(ring(&[("a", 1.0), ("b", 1.0), ("a", 2.0)]).unwrap_err(), RingError::DuplicateId { id: "a".into() });
    for weight in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -1.0, -1e-300] {
        match ring(&[("w", weight)]).unwrap_err() {
            RingError::InvalidWeight { id, weight: got, .. } => {
                assert_eq!(id, "w");
                assert!(got.to_bits() == weight.to_bits());
            }
            other => panic!("weight {weight}: unexpected {other:?}"),
        }
    }
    assert_eq!(Ring::builder().vnodes(0).node("a", 1.0).build().unwrap_err(), RingError::ZeroVnodes);
    assert_eq!(
        ring(&[("huge", 1e18)]).unwrap_err(),
        RingError::TooManyPoints { id: "huge".into(), requested: u64::MAX, limit: MAX_POINTS } // 1.6e20 saturates
    );
    let err = Ring::builder().vnodes(u32::MAX).node("a", 1.0).build().unwrap_err();
    assert!(matches!(err, RingError::TooManyPoints { requested: 4_294_967_295, .. }), "{err:?}");
    // Many nodes that each fit but together exceed the limit.
    let many = (0..200).map(|i| Node::new(format!("n{i}"), 1.0));
    let err = Ring::builder().vnodes(100_000).nodes(many).build().unwrap_err();
    assert!(matches!(err, RingError::TooManyPoints { ref id, requested: 16_800_000, .. } if id == "n167"), "{err:?}");
    assert_eq!(
        err.to_string(),
        "ring would need at least 16800000 points (while adding node \"n167\"), over the limit of 16777216"
    );
}

#[test]
fn messages_name_the_bad_value() {
    assert_eq!(
        ring(&[("cache-1", f64::NAN)]).unwrap_err().to_string(),
        "invalid weight NaN for node \"cache-1\": weights must be finite and >= 0"
    );
    assert_eq!(ring(&[("x", 1.0), ("x", 1.0)]).unwrap_err().to_string(), "duplicate node id \"x\"");
    assert_eq!(ring(&[("x", -2.5)]).unwrap_err().code(), "RING_INVALID_WEIGHT");
}

#[test]
fn lookups_on_a_ring_without_points_fail() {
    for nodes in [&[][..], &[("drained", 0.0)][..]] {
        let ring = ring(nodes).unwrap();
        assert_eq!(ring.get("k").unwrap_err(), RingError::EmptyRing);
        assert_eq!(ring.get_n("k", 3).unwrap_err(), RingError::EmptyRing);
        assert_eq!(ring.get_by_hash(0).unwrap_err(), RingError::EmptyRing);
    }
}

#[test]
fn point_counts_round_vnodes_times_weight() {
    let r = Ring::builder()
        .vnodes(10)
        .nodes([
            Node::new("a", 1.0),
            Node::new("b", 0.25),
            Node::new("c", 0.001),
            Node::new("d", 0.0),
            Node::new("e", 0.35),
        ])
        .build()
        .unwrap();
    // 10 + round(2.5)=3 + max(1, round(0.01))=1 + 0 + round(3.5)=4
    assert_eq!(r.point_count(), 10 + 3 + 1 + 4);
}

#[test]
fn lookup_wraps_and_points_own_their_exact_hash() {
    let r = Ring::builder().vnodes(1).nodes([Node::new("a", 1.0), Node::new("b", 1.0)]).build().unwrap();
    let pa = shardring::hash_point(b"a", 0, 0);
    let pb = shardring::hash_point(b"b", 0, 0);
    let (low, high) = if pa < pb { ("a", "b") } else { ("b", "a") };
    let (lo, hi) = (pa.min(pb), pa.max(pb));
    assert_eq!(r.get_by_hash(lo).unwrap().id(), low);
    assert_eq!(r.get_by_hash(lo + 1).unwrap().id(), high);
    assert_eq!(r.get_by_hash(hi).unwrap().id(), high);
    assert_eq!(r.get_by_hash(hi + 1).unwrap().id(), low, "past the last point wraps to the first");
    assert_eq!(r.get_by_hash(u64::MAX).unwrap().id(), low);
    assert_eq!(r.get_by_hash(0).unwrap().id(), low);
}

#[test]
fn placement_does_not_depend_on_insertion_order() {
    let forward = ring(&[("a", 1.0), ("b", 2.0), ("c", 0.5), ("d", 1.0)]).unwrap();
    let backward = ring(&[("d", 1.0), ("c", 0.5), ("b", 2.0), ("a", 1.0)]).unwrap();
    for key in keys(5_000) {
        assert_eq!(forward.get(&key).unwrap().id(), backward.get(&key).unwrap().id());
        let f: Vec<_> = forward.get_n(&key, 4).unwrap().iter().map(|n| n.id()).collect();
        let b: Vec<_> = backward.get_n(&key, 4).unwrap().iter().map(|n| n.id()).collect();
        assert_eq!(f, b);
    }
}

#[test]
fn adding_a_node_moves_keys_only_to_it() {
    let before = ring(&[("a", 1.0), ("b", 1.0), ("c", 1.0), ("d", 1.0)]).unwrap();
    let after = ring(&[("a", 1.0), ("b", 1.0), ("c", 1.0), ("d", 1.0), ("e", 1.0)]).unwrap();
    let mut moved = 0;
    for key in keys(20_000) {
        let (old, new) = (before.get(&key).unwrap().id(), after.get(&key).unwrap().id());
        if old != new {
            assert_eq!(new, "e", "key {key} moved {old} -> {new}");
            moved += 1;
        }
    }
    // Expect about 1/5 of the keys; 160 vnodes keep the share within a few points.
    assert!((3_000..5_000).contains(&moved), "moved {moved} of 20000");
}

#[test]
fn preference_lists_are_distinct_and_start_with_the_owner() {
    let r = ring(&[("a", 1.0), ("b", 1.0), ("c", 3.0), ("drained", 0.0), ("e", 0.1)]).unwrap();
    for key in keys(2_000) {
        let owner = r.get(&key).unwrap().id();
        for n in [0, 1, 2, 4, 9, 100] {
            let list: Vec<_> = r.get_n(&key, n).unwrap().iter().map(|n| n.id()).collect();
            assert_eq!(list.len(), n.min(4));
            if n > 0 {
                assert_eq!(list[0], owner);
            }
            let mut sorted = list.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), list.len(), "duplicates in {list:?}");
            assert!(!list.contains(&"drained"));
        }
    }
}

#[test]
fn ring_is_send_sync_and_config_round_trips() {
    // Unwind-safe too: the C and Node bindings catch panics around lookups.
    fn shareable<T: Send + Sync + std::panic::UnwindSafe + std::panic::RefUnwindSafe>() {}
    shareable::<Ring>();
    let r = Ring::builder().vnodes(7).seed(99).nodes([Node::new("é", 1.5), Node::new("b", 0.0)]).build().unwrap();
    let json = r.to_config().to_json();
    let again = Ring::from_json(&json).unwrap();
    assert_eq!(again.to_config(), r.to_config());
    assert_eq!(again.get("k").unwrap().id(), r.get("k").unwrap().id());
}

#[test]
fn bad_configs_name_the_problem() {
    let err = Ring::from_json(r#"{"format_version": 1, "nodes": [], "colour": 1}"#).unwrap_err();
    assert!(matches!(&err, RingError::InvalidConfig { message } if message.contains("colour")), "{err}");
    let err = Ring::from_json(r#"{"format_version": 2, "nodes": []}"#).unwrap_err();
    assert_eq!(err, RingError::UnsupportedFormat { found: 2, supported: 1 });
    let err = Ring::from_json(r#"{"format_version": 1, "nodes": [{"id": "a", "weight": -1}]}"#).unwrap_err();
    assert!(matches!(err, RingError::InvalidWeight { ref id, weight, .. } if id == "a" && weight == -1.0));
    assert!(matches!(Ring::from_json("{").unwrap_err(), RingError::InvalidConfig { .. }));
    // A struct read from an array by position is not a config.
    let err = Ring::from_json(r#"[1, "ring", 160, 0, [["a", 1.0, null]]]"#).unwrap_err();
    assert!(
        matches!(&err, RingError::InvalidConfig { message } if message.contains("expected a JSON object, found an array")),
        "{err}"
    );
    // Mistyped fields are named by their path.
    let err =
        Ring::from_json(r#"{"format_version": 1, "nodes": [{"id": "a", "weight": 1}, {"id": "b", "weight": null}]}"#);
    let message = err.unwrap_err().to_string();
    assert!(message.contains("nodes[1].weight: null is not a value; leave the field out"), "{message}");
    let message = Ring::from_json(r#"{"format_version": 1, "algorithm": null, "nodes": []}"#).unwrap_err().to_string();
    assert!(message.contains("algorithm: null is not a value"), "{message}");
    // Messages speak JSON, not Rust: no struct names, no f64 or u32.
    let message = Ring::from_json(r#"{"format_version": 1, "nodes": [{"id": "a", "weight": "2"}]}"#).unwrap_err();
    assert!(
        message.to_string().contains("nodes[0].weight: invalid type: string \"2\", expected a number"),
        "{message}"
    );
    let message = Ring::from_json(r#"{"format_version": 1, "nodes": [5]}"#).unwrap_err().to_string();
    assert!(message.contains("nodes[0]: invalid type: integer `5`, expected a node object such as {"), "{message}");
    let message = Ring::from_json(r#"{"format_version": 1, "vnodes": 4294967296, "nodes": []}"#).unwrap_err();
    assert!(message.to_string().contains("expected a whole number from 0 to 4294967295"), "{message}");
    let message = Ring::from_json(r#"{"format_version": 1, "nodes": {}}"#).unwrap_err().to_string();
    assert!(message.contains("nodes: invalid type: map, expected an array"), "{message}");
}

#[test]
fn duplicate_keys_and_nulls_are_rejected_naming_their_path() {
    let cases = [
        (r#"{"format_version":1,"nodes":[{"id":"a"}],"nodes":[{"id":"b"}]}"#, "the config: duplicate key \"nodes\""),
        (r#"{"format_version":1,"nodes":[{"id":"a","weight":1,"weight":0}]}"#, "nodes[0]: duplicate key \"weight\""),
        (r#"{"format_version":1,"vnodes":null,"nodes":[]}"#, "vnodes: null is not a value"),
        (r#"{"format_version":1,"nodes":[{"id":"a","zone":null}]}"#, "nodes[0].zone: null is not a value"),
        (
            r#"{"format_version":1,"algorithm":"slots","nodes":[{"id":"a","slots":[[0,null]]}]}"#,
            "nodes[0].slots[0][1]: null",
        ),
        (r#"null"#, "expected a JSON object, found null"),
    ];
    for (json, wanted) in cases {
        match Ring::from_json(json) {
            Err(RingError::InvalidConfig { message }) => {
                assert!(message.starts_with(&format!("invalid ring config: {wanted}")), "{json}: {message}")
            }
            other => panic!("{json}: {other:?}"),
        }
    }
    // Trailing text after the object is still malformed JSON.
    assert!(matches!(Ring::from_json(r#"{"format_version":1,"nodes":[]} x"#), Err(RingError::InvalidConfig { .. })));
    // Equal keys in different objects are fine.
    let ring = Ring::from_json(r#"{"format_version":1,"nodes":[{"id":"a"},{"id":"b"}]}"#).unwrap();
    assert_eq!(ring.nodes().len(), 2);
}

#[test]
fn ownership_is_exact_arc_length() {
    let solo = ring(&[("solo", 1.0), ("drained", 0.0)]).unwrap();
    let shares: Vec<(&str, f64)> = solo.ownership().iter().map(|(n, s)| (n.id(), *s)).collect();
    assert_eq!(shares, vec![("solo", 1.0), ("drained", 0.0)]);

    let r = Ring::builder().vnodes(1).nodes([Node::new("a", 1.0), Node::new("b", 1.0)]).build().unwrap();
    let (pa, pb) = (shardring::hash_point(b"a", 0, 0), shardring::hash_point(b"b", 0, 0));
    let (lo, hi) = (pa.min(pb), pa.max(pb));
    let high_share = (hi - lo) as f64 / 2f64.powi(64);
    let shares = r.ownership();
    let high_owner = if pa > pb { 0 } else { 1 };
    assert_eq!(shares[high_owner].1, high_share);
    assert!((shares[0].1 + shares[1].1 - 1.0).abs() < 1e-15);

    let weighted = ring(&[("a", 1.0), ("b", 2.0), ("c", 1.0)]).unwrap();
    let shares: Vec<f64> = weighted.ownership().iter().map(|(_, s)| *s).collect();
    assert!((shares.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    assert!((0.4..0.6).contains(&shares[1]), "weight 2 of 4 owns {shares:?}");
}

#[test]
fn diff_of_a_ring_with_itself_is_empty_and_seeds_must_match() {
    let r = ring(&[("a", 1.0), ("b", 1.0)]).unwrap();
    let diff = r.diff(&r).unwrap();
    assert_eq!((diff.moved_share, diff.flows.len(), diff.arcs.len()), (0.0, 0, 0));
    let seeded = Ring::builder().seed(1).node("a", 1.0).build().unwrap();
    assert_eq!(r.diff(&seeded).unwrap_err(), RingError::SeedMismatch { left: 0, right: 1 });
    assert_eq!(r.diff(&ring(&[]).unwrap()).unwrap_err(), RingError::EmptyRing);
}

#[test]
fn diff_of_adding_a_node_is_its_ownership() {
    let old = ring(&[("a", 1.0), ("b", 1.0), ("c", 1.0)]).unwrap();
    let new = old.with_node(Node::new("d", 1.0)).unwrap();
    let diff = old.diff(&new).unwrap();
    let d_share = new.ownership()[3].1;
    assert!((diff.moved_share - d_share).abs() < 1e-12, "{} vs {d_share}", diff.moved_share);
    assert!(diff.flows.iter().all(|f| f.to == "d"));
    assert_eq!(diff.flows.len(), 3, "every old node donates: {:?}", diff.flows);
    // Coalesced: one arc per point of d at most (160), each ending on a point of d.
    assert!(diff.arcs.len() <= 160 && diff.arcs.len() > 100, "{} arcs", diff.arcs.len());
    let d_points: Vec<u64> = new.points().filter(|&(_, o)| o == 3).map(|(p, _)| p).collect();
    assert!(diff.arcs.iter().all(|a| d_points.contains(&a.end) || a.end == u64::MAX));
}

#[test]
fn balance_counts_and_spreads() {
    let r = ring(&[("a", 1.0), ("b", 3.0), ("drained", 0.0)]).unwrap();
    let keys: Vec<String> = keys(40_000).collect();
    let balance = r.balance(&keys).unwrap();
    assert_eq!(balance.keys, 40_000);
    assert_eq!(balance.counts.iter().sum::<u64>(), 40_000);
    assert_eq!(balance.counts[2], 0);
    // By node, b holds about 3x a: max/mean about 1.5, min/mean about 0.5.
    assert!((1.35..1.65).contains(&balance.by_node.max_over_mean), "{balance:?}");
    // Counts agree with the exact ownership within 4 standard errors of sampling.
    for (count, (_, share)) in balance.counts.iter().zip(r.ownership()) {
        let sigma = (share * (1.0 - share) / 40_000.0).sqrt();
        assert!((*count as f64 / 40_000.0 - share).abs() <= 4.0 * sigma + 1e-12, "{count} vs share {share}");
    }
    // Against weights: each count over its fair count (keys x weight / 4), over their mean.
    let ratios = [balance.counts[0] as f64 / 10_000.0, balance.counts[1] as f64 / 30_000.0];
    let mean = (ratios[0] + ratios[1]) / 2.0;
    assert!((balance.by_weight.max_over_mean - ratios[0].max(ratios[1]) / mean).abs() < 1e-12);
    assert!((balance.by_weight.min_over_mean - ratios[0].min(ratios[1]) / mean).abs() < 1e-12);
    assert!((balance.by_weight.cv - (ratios[0] - ratios[1]).abs() / 2.0 / mean).abs() < 1e-12);
    assert_eq!(ring(&[]).unwrap().balance(["k"]).unwrap_err(), RingError::EmptyRing);
}

#[test]
fn fingerprint_ignores_node_order_but_not_content() {
    let a = ring(&[("a", 1.0), ("b", 2.0)]).unwrap();
    let b = ring(&[("b", 2.0), ("a", 1.0)]).unwrap();
    assert_eq!(a.fingerprint(), b.fingerprint());
    assert_ne!(a.fingerprint(), ring(&[("a", 1.0), ("b", 2.5)]).unwrap().fingerprint());
    assert_ne!(a.fingerprint(), Ring::builder().seed(1).node("a", 1.0).node("b", 2.0).build().unwrap().fingerprint());
    assert_ne!(
        a.fingerprint(),
        Ring::builder().vnodes(10).node("a", 1.0).node("b", 2.0).build().unwrap().fingerprint()
    );
    let zoned = Ring::builder().nodes([Node::new("a", 1.0).with_zone("z"), Node::new("b", 2.0)]).build().unwrap();
    assert_ne!(a.fingerprint(), zoned.fingerprint());
    assert_eq!(ring(&[("a", 0.0)]).unwrap().fingerprint(), ring(&[("a", -0.0)]).unwrap().fingerprint());
}

#[test]
fn zones_spread_preference_lists() {
    let r = Ring::builder()
        .nodes([
            Node::new("east-1", 1.0).with_zone("east"),
            Node::new("east-2", 1.0).with_zone("east"),
            Node::new("east-3", 1.0).with_zone("east"),
            Node::new("west-1", 1.0).with_zone("west"),
            Node::new("loner", 1.0),
        ])
        .build()
        .unwrap();
    for key in keys(2_000) {
        let list: Vec<&str> = r.get_n(&key, 3).unwrap().iter().map(|n| n.id()).collect();
        assert!(list.contains(&"west-1") && list.contains(&"loner"), "{list:?}");
        assert_eq!(list.iter().filter(|id| id.starts_with("east")).count(), 1, "{list:?}");
        assert_eq!(r.get_n(&key, 5).unwrap().len(), 5);
    }
    let err = Ring::builder().nodes([Node::new("a", 1.0).with_zone("")]).build().unwrap_err();
    assert_eq!(err, RingError::EmptyZone { id: "a".into() });
}

#[test]
fn derivation_errors() {
    let r = ring(&[("a", 1.0), ("b", 1.0)]).unwrap();
    assert_eq!(r.with_node(Node::new("a", 1.0)).unwrap_err(), RingError::DuplicateId { id: "a".into() });
    assert_eq!(r.without_node("zz").unwrap_err(), RingError::UnknownNode { id: "zz".into() });
    assert_eq!(r.with_weight("zz", 1.0).unwrap_err(), RingError::UnknownNode { id: "zz".into() });
    assert!(matches!(r.with_weight("a", f64::NAN).unwrap_err(), RingError::InvalidWeight { .. }));
    assert!(matches!(r.with_weight("a", 1e12).unwrap_err(), RingError::TooManyPoints { .. }));
    assert!(matches!(r.with_node(Node::new("", 1.0)).unwrap_err(), RingError::EmptyId { position: 2 }));
    let drained = r.with_weight("a", 0.0).unwrap();
    assert_eq!(drained.nodes().len(), 2);
    assert_eq!(drained.point_count(), 160);
    assert!(keys(500).all(|k| drained.get(&k).unwrap().id() == "b"));
}

#[test]
fn batch_placement_equals_single_lookups() {
    let r = ring(&[("a", 1.0), ("b", 2.0), ("c", 0.5)]).unwrap();
    let keys: Vec<String> = keys(1000).collect();
    let mut out = vec![usize::MAX; 1000];
    assert_eq!(r.get_indices(&keys, &mut out).unwrap(), 1000);
    assert!(keys.iter().zip(&out).all(|(k, &i)| r.get_index(k).unwrap() == i));
    // Fewer output slots than keys, and fewer keys than slots.
    let mut short = vec![usize::MAX; 45];
    assert_eq!(r.get_indices(&keys, &mut short).unwrap(), 45);
    assert_eq!(short[..], out[..45]);
    let mut long = vec![usize::MAX; 70];
    assert_eq!(r.get_indices(&keys[..33], &mut long).unwrap(), 33);
    assert_eq!(long[..33], out[..33]);
    assert!(long[33..].iter().all(|&i| i == usize::MAX));
    let mut untouched = [7usize; 3];
    assert_eq!(ring(&[]).unwrap().get_indices(["k"], &mut untouched).unwrap_err(), RingError::EmptyRing);
    assert_eq!(untouched, [7; 3]);
}

/// Weights survive a JSON round trip bit for bit (serde_json parses floats
/// exactly only with its `float_roundtrip` feature); found by fuzzing.
#[test]
fn weights_round_trip_exactly_through_json() {
    for weight in [1.1111111111111111e21, 0.1, 1.0 / 3.0, 123456.789e-300, f64::MAX, 5e-324] {
        let ring = Ring::builder().algorithm(shardring::Algorithm::Rendezvous).node("a", weight).build().unwrap();
        let again = Ring::from_json(&ring.to_config().to_json()).unwrap();
        assert_eq!(again.nodes()[0].weight().to_bits(), weight.to_bits(), "{weight:e}");
        assert_eq!(again.fingerprint(), ring.fingerprint());
    }
}
