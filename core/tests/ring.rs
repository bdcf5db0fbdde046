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
            RingError::InvalidWeight { id, weight: got } => {
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
    assert_eq!(err.to_string(), "ring would need at least 16800000 points (while adding node \"n167\"), over the limit of 16777216");
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
        .nodes([Node::new("a", 1.0), Node::new("b", 0.25), Node::new("c", 0.001), Node::new("d", 0.0), Node::new("e", 0.35)])
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
    fn shareable<T: Send + Sync>() {}
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
    assert_eq!(err, RingError::InvalidWeight { id: "a".into(), weight: -1.0 });
    assert!(matches!(Ring::from_json("{").unwrap_err(), RingError::InvalidConfig { .. }));
}
