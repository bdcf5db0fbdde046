//! Transitions: read and write sets while members warm up or drain, the
//! three rings, and what a rebalancer copies.

use proptest::prelude::*;
use shardring::{Node, NodeConfig, NodeState, Ring, RingConfig, RingError, Transition};

fn config(nodes: &[(&str, f64, NodeState)]) -> RingConfig {
    let nodes = nodes
        .iter()
        .map(|&(id, weight, state)| NodeConfig {
            state: (state != NodeState::Active).then_some(state),
            ..NodeConfig::new(id, weight)
        })
        .collect();
    RingConfig::new(Default::default(), nodes)
}

fn ring(ids: &[(&str, f64)]) -> Ring {
    Ring::builder().nodes(ids.iter().map(|&(id, w)| Node::new(id, w))).build().unwrap()
}

const KEYS: usize = 20_000;

#[test]
fn a_warming_member_takes_the_writes_of_the_keys_it_will_own_and_no_reads() {
    use NodeState::*;
    let t = Transition::from_config(&config(&[("a", 1.0, Active), ("b", 1.0, Active), ("w", 1.0, Warming)])).unwrap();
    let (old, new) = (ring(&[("a", 1.0), ("b", 1.0)]), ring(&[("a", 1.0), ("b", 1.0), ("w", 1.0)]));
    assert_eq!(t.read_ring().fingerprint(), old.fingerprint());
    assert_eq!(t.new_ring().fingerprint(), new.fingerprint());
    let mut to_w = 0;
    for i in 0..KEYS {
        let key = format!("key-{i}");
        let owner = old.get(&key).unwrap().id();
        let reads: Vec<&str> = t.read_nodes(&key).unwrap().iter().map(|n| n.id()).collect();
        let writes: Vec<&str> = t.write_nodes(&key).unwrap().iter().map(|n| n.id()).collect();
        assert_eq!(reads, [owner], "reads never go to w");
        if new.get(&key).unwrap().id() == "w" {
            assert_eq!(writes, [owner, "w"]);
            to_w += 1;
        } else {
            assert_eq!(writes, [owner]);
        }
    }
    // The keys w gets are its share of the new ring, and exactly the diff's.
    let moved = t.moves().unwrap();
    assert!((to_w as f64 / KEYS as f64 - moved.moved_share).abs() < 0.02, "{to_w} vs {}", moved.moved_share);
    assert!(moved.flows.iter().all(|f| f.to == "w"));
    assert_eq!(t.state("w"), Some(Warming));
    assert!(!t.is_steady());
}

#[test]
fn a_draining_member_takes_no_writes_and_serves_reads_as_a_fallback() {
    use NodeState::*;
    let t = Transition::from_config(&config(&[("a", 1.0, Active), ("b", 1.0, Active), ("d", 1.0, Draining)])).unwrap();
    let (old, new) = (ring(&[("a", 1.0), ("b", 1.0), ("d", 1.0)]), ring(&[("a", 1.0), ("b", 1.0)]));
    for i in 0..KEYS {
        let key = format!("key-{i}");
        let reads: Vec<&str> = t.read_nodes(&key).unwrap().iter().map(|n| n.id()).collect();
        let writes: Vec<&str> = t.write_nodes(&key).unwrap().iter().map(|n| n.id()).collect();
        let now = new.get(&key).unwrap().id();
        assert_eq!(writes, [now], "writes never go to d");
        if old.get(&key).unwrap().id() == "d" {
            assert_eq!(reads, [now, "d"]);
        } else {
            assert_eq!(reads, [now]);
        }
    }
    assert!(t.moves().unwrap().flows.iter().all(|f| f.from == "d"));
}

#[test]
fn between_two_rings_is_the_transition_of_their_states() {
    use NodeState::*;
    let from = ring(&[("a", 1.0), ("b", 1.0), ("d", 1.0)]);
    let to = ring(&[("a", 1.0), ("b", 1.0), ("w", 2.0)]);
    let between = Transition::between(&from, &to).unwrap();
    let stated = Transition::from_config(&config(&[
        ("a", 1.0, Active),
        ("b", 1.0, Active),
        ("w", 2.0, Warming),
        ("d", 1.0, Draining),
    ]))
    .unwrap();
    assert_eq!(between.fingerprint(), stated.fingerprint());
    for i in 0..2000 {
        let key = format!("key-{i}");
        let ids = |nodes: Vec<&Node>| nodes.iter().map(|n| n.id().to_owned()).collect::<Vec<_>>();
        assert_eq!(ids(between.read_nodes(&key).unwrap()), ids(stated.read_nodes(&key).unwrap()));
        assert_eq!(ids(between.write_nodes(&key).unwrap()), ids(stated.write_nodes(&key).unwrap()));
    }
    assert_eq!(between.old_ring().fingerprint(), from.fingerprint());
    assert_eq!(between.new_ring().fingerprint(), to.fingerprint());
    let maglev = Ring::builder().algorithm(shardring::Algorithm::Maglev).node("a", 1.0).build().unwrap();
    assert!(matches!(Transition::between(&from, &maglev), Err(RingError::AlgorithmMismatch { .. })));
    let seeded = Ring::builder().seed(9).node("a", 1.0).build().unwrap();
    assert!(matches!(Transition::between(&from, &seeded), Err(RingError::SeedMismatch { .. })));
}

#[test]
fn states_enter_the_config_and_its_fingerprint_and_a_ring_refuses_them() {
    use NodeState::*;
    let steady = config(&[("a", 1.0, Active), ("b", 1.0, Active)]);
    let ring = steady.build().unwrap();
    assert_eq!(Transition::from_config(&steady).unwrap().fingerprint(), ring.fingerprint(), "all active: the ring's");
    assert!(Transition::from_config(&steady).unwrap().is_steady());
    let warming = config(&[("a", 1.0, Active), ("b", 1.0, Warming)]);
    let draining = config(&[("a", 1.0, Active), ("b", 1.0, Draining)]);
    let prints = [steady.fingerprint(), warming.fingerprint(), draining.fingerprint()];
    assert!(prints[0] != prints[1] && prints[1] != prints[2] && prints[0] != prints[2], "{prints:?}");
    let json = warming.to_json();
    assert!(json.contains(r#""state": "warming""#), "{json}");
    assert_eq!(RingConfig::from_json(&json).unwrap(), warming);
    match warming.build() {
        Err(RingError::InvalidConfig { message }) => assert!(message.contains(r#""b" is warming"#), "{message}"),
        other => panic!("{other:?}"),
    }
    let bad = r#"{"format_version": 1, "nodes": [{"id": "a", "state": "asleep"}]}"#;
    assert!(matches!(RingConfig::from_json(bad), Err(RingError::InvalidConfig { .. })));
    // Nothing active yet: writes still need an owner to read from.
    let fresh = Transition::from_config(&config(&[("w", 1.0, Warming)])).unwrap();
    assert!(matches!(fresh.write_nodes("k"), Err(RingError::EmptyRing)));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Whatever the states, reads start at the active owner and never touch
    /// a warming member; writes start at the active owner and never touch a
    /// draining one; each list holds at most two distinct nodes.
    #[test]
    fn read_and_write_sets_follow_the_states(
        states in prop::collection::vec(0..3u8, 2..8),
        keys in prop::collection::vec("[a-z0-9]{1,12}", 50),
    ) {
        let names: Vec<String> = (0..states.len()).map(|i| format!("n{i}")).collect();
        let mut nodes: Vec<(&str, f64, NodeState)> = names
            .iter()
            .zip(&states)
            .map(|(id, &s)| (id.as_str(), 1.0, [NodeState::Active, NodeState::Warming, NodeState::Draining][s as usize]))
            .collect();
        nodes[0].2 = NodeState::Active;
        let t = Transition::from_config(&config(&nodes)).unwrap();
        for key in &keys {
            let reads = t.read_nodes(key).unwrap();
            let writes = t.write_nodes(key).unwrap();
            prop_assert_eq!(reads[0].id(), t.read_ring().get(key).unwrap().id());
            prop_assert_eq!(writes[0].id(), reads[0].id());
            prop_assert!(reads.len() <= 2 && writes.len() <= 2);
            prop_assert!(reads.iter().all(|n| t.state(n.id()) != Some(NodeState::Warming)));
            prop_assert!(writes.iter().all(|n| t.state(n.id()) != Some(NodeState::Draining)));
        }
    }
}

/// A transition between rings with the same members but other weights (or
/// nginx's down marks) moves keys: it is not steady, and its fingerprint
/// is neither the new ring's nor that of the steady transition to it.
#[test]
fn a_transition_that_only_reweights_is_not_steady() {
    let before = ring(&[("a", 1.0), ("b", 1.0)]);
    let after = ring(&[("a", 2.0), ("b", 1.0)]);
    let moving = Transition::between(&before, &after).unwrap();
    let settled = Transition::between(&after, &after).unwrap();
    assert!(!moving.is_steady() && settled.is_steady());
    assert!(moving.moves().unwrap().moved_share > 0.0);
    assert_ne!(moving.fingerprint(), after.fingerprint());
    assert_ne!(moving.fingerprint(), settled.fingerprint());
    assert_eq!(settled.fingerprint(), after.fingerprint());
    let nginx = |down: bool| {
        Ring::builder()
            .algorithm(shardring::Algorithm::Nginx)
            .nodes(["a:1", "b:1", "c:1"].map(|id| Node::new(id, 1.0)))
            .down("a:1", down)
            .build()
            .unwrap()
    };
    let back_up = Transition::between(&nginx(true), &nginx(false)).unwrap();
    assert!(!back_up.is_steady());
    assert_ne!(back_up.fingerprint(), nginx(false).fingerprint());
}

/// `route` names the key's owner under the old ring and under the new one,
/// so a key moves exactly when the diff says its owner changes: while a
/// member joins, one draining, and when one ring is empty.
#[test]
fn a_route_is_the_old_owner_and_the_new_owner() {
    use NodeState::*;
    let t = Transition::from_config(&config(&[
        ("a", 1.0, Active),
        ("b", 1.0, Draining),
        ("c", 2.0, Active),
        ("w", 1.0, Warming),
    ]))
    .unwrap();
    let (old, new) = (ring(&[("a", 1.0), ("b", 1.0), ("c", 2.0)]), ring(&[("a", 1.0), ("c", 2.0), ("w", 1.0)]));
    let mut moving = 0;
    for i in 0..KEYS {
        let key = format!("key-{i}");
        let route = t.route(&key).unwrap();
        let (was, will) = (old.get(&key).unwrap().id(), new.get(&key).unwrap().id());
        assert_eq!((route.old.id(), route.new.id()), (was, will), "{key}");
        assert_eq!(route.is_moving(), was != will, "{key}");
        moving += usize::from(route.is_moving());
    }
    // b leaves (a quarter of the keys) and w takes a fifth: about 40% move.
    let share = moving as f64 / KEYS as f64;
    assert!((share - t.moves().unwrap().moved_share).abs() < 0.02, "{share}");

    let joining = Transition::from_config(&config(&[("w", 1.0, Warming)])).unwrap();
    let route = joining.route("k").unwrap();
    assert_eq!((route.old.id(), route.new.id(), route.is_moving()), ("w", "w", false));
    let leaving = Transition::from_config(&config(&[("a", 1.0, Active), ("b", 1.0, Draining)])).unwrap();
    assert!(leaving.route("k").is_ok());
    let nothing = Transition::from_config(&config(&[("a", 0.0, Active)])).unwrap();
    assert!(matches!(nothing.route("k"), Err(RingError::EmptyRing)), "{:?}", nothing.route("k"));
}
