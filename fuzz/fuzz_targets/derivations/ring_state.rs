//! Checks of one ring state against the model: nodes and parameters,
//! points, ownership, and lookups by hash and by key against the naive
//! references of `shardring_fuzz::reference`.

use shardring::{Algorithm, Node, Ring, RingError};
use shardring_fuzz::reference;

use crate::model::{ModelNode, Setup, points_of};
use crate::rebuilds::check_rebuilds;

/// Every check of one ring state against the model (`buckets`: memento's, read under memento only).
pub(crate) fn check_ring(
    ring: &Ring,
    model: &[ModelNode],
    setup: &Setup,
    buckets: &reference::Memento,
    keys: &[Vec<u8>],
    input_hashes: &[u64],
) {
    // Nodes and parameters.
    assert_eq!(ring.nodes().len(), model.len(), "node count");
    for (node, expected) in ring.nodes().iter().zip(model) {
        assert_eq!(node.id(), expected.id);
        assert_eq!(node.weight().to_bits(), expected.weight.to_bits(), "weight of {:?}", expected.id);
        assert_eq!(node.zone(), expected.zone.as_deref(), "zone of {:?}", expected.id);
    }
    assert_eq!(ring.algorithm(), setup.algorithm);
    assert_eq!(ring.vnodes(), setup.algorithm.uses_vnodes().then_some(setup.vnodes));
    assert_eq!(ring.seed(), if setup.algorithm.uses_seed() { setup.seed } else { 0 });
    assert_eq!(ring.table_size(), (setup.algorithm == Algorithm::Maglev).then_some(setup.table_size));

    let n = model.len();
    let positive = model.iter().filter(|node| node.weight > 0.0).count();
    let live = ring.live_node_count();
    match setup.algorithm {
        Algorithm::Ring | Algorithm::Rendezvous => assert_eq!(live, positive, "live nodes"),
        a if a.unit_weights() => assert_eq!(live, n, "live nodes"),
        // A tiny weight can earn no Maglev slot or ketama digest.
        _ => assert!(live <= positive, "{live} live nodes but only {positive} of weight > 0"),
    }

    let zones: Vec<Option<&str>> = model.iter().map(|node| node.zone.as_deref()).collect();
    let pairs: Vec<(&str, f64)> = model.iter().map(|node| (node.id.as_str(), node.weight)).collect();
    let bits = setup.bits();
    let top = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };

    // The reference preference order of a hash, and the reference ownership.
    let points: Vec<(u64, usize)> = ring.points().collect();
    let table: Vec<usize> = match setup.algorithm {
        Algorithm::Maglev => reference::maglev_table(&pairs, setup.seed, u64::from(setup.table_size)),
        Algorithm::Slots => slot_table(ring, model),
        _ => Vec::new(),
    };
    let order_of: Box<dyn Fn(u64) -> Vec<usize> + '_>;
    let shares: Option<Vec<f64>>;
    let mut hashes: Vec<u64> = input_hashes.iter().map(|&h| h & top).collect();
    hashes.extend([0, top, top / 2]);
    match setup.algorithm {
        _ if setup.is_continuum() => {
            check_points(ring, model, setup, &points);
            // A few points' own positions and their neighbours.
            for &h in input_hashes.iter().take(4) {
                if let Some(&(position, _)) = points.get(h as usize % points.len().max(1)) {
                    hashes.extend([position, position.saturating_sub(1), (position + 1).min(top)]);
                }
            }
            let owners = reference::distinct_count(points.iter().map(|&(_, owner)| owner));
            let ring_points = &points;
            order_of = Box::new(move |h| reference::continuum_order(ring_points, h, owners));
            shares = Some(continuum_shares(&points, n, bits));
        }
        Algorithm::Jump => {
            order_of = Box::new(move |h| reference::jump_order(h, n));
            shares = None;
        }
        Algorithm::Jumpback => {
            order_of = Box::new(move |h| reference::jump_back_order(h, n));
            shares = None;
        }
        Algorithm::Memento => {
            let held: Vec<u32> = buckets.bucket_of.iter().map(|&b| b as u32).collect();
            assert_eq!(ring.buckets(), Some(&held[..]), "buckets");
            let removed: Vec<u32> = buckets.history.iter().map(|&(b, _)| b as u32).collect();
            assert_eq!(ring.removed_buckets(), Some(&removed[..]), "removed buckets");
            order_of = Box::new(|h| if n == 0 { Vec::new() } else { buckets.order(h) });
            shares = None;
        }
        Algorithm::Rendezvous => {
            order_of = Box::new(|h| reference::rendezvous_order(&pairs, setup.seed, h));
            shares = None;
        }
        Algorithm::Maglev => {
            let (size, slots) = (u64::from(setup.table_size), &table);
            let owners = reference::distinct_count(table.iter().copied());
            order_of = Box::new(move |h| {
                if slots.is_empty() {
                    Vec::new()
                } else {
                    reference::table_order(slots, reference::maglev_slot(h, size), owners)
                }
            });
            shares = Some(table_shares(&table, n));
        }
        Algorithm::Slots => {
            let slots = &table;
            let owners = reference::distinct_count(table.iter().copied());
            order_of =
                Box::new(
                    move |h| {
                        if slots.is_empty() { Vec::new() } else { reference::table_order(slots, h as usize, owners) }
                    },
                );
            shares = Some(table_shares(&table, n));
        }
        other => panic!("algorithm {other:?} has no reference"),
    }

    // Ownership.
    let ownership = ring.ownership();
    assert_eq!(ownership.len(), n);
    let sum: f64 = ownership.iter().map(|(_, share)| share).sum();
    for (i, (node, share)) in ownership.iter().enumerate() {
        assert_eq!(node.id(), model[i].id);
        assert!((0.0..=1.0).contains(share), "share {share} of {:?}", model[i].id);
        if model[i].weight == 0.0 {
            assert_eq!(*share, 0.0, "drained node {:?} owns a share", model[i].id);
        }
        if let Some(shares) = &shares {
            assert!((share - shares[i]).abs() < 1e-9, "share of {:?}: {share}, reference {}", model[i].id, shares[i]);
        }
    }
    if live > 0 {
        assert!((sum - 1.0).abs() < 1e-9, "shares sum to {sum}");
    } else {
        assert_eq!(sum, 0.0, "a ring that places no keys owns {sum}");
    }

    // Lookups by hash.
    for &h in &hashes {
        let order = order_of(h);
        assert_eq!(
            order.len(),
            live,
            "hash {h:#x}: the reference order has {} nodes, live_node_count {live}",
            order.len()
        );
        if live == 0 {
            assert_eq!(ring.index_by_hash(h), Err(RingError::EmptyRing));
            assert_eq!(ring.get_n_indices_by_hash(h, &mut [0; 3]), Err(RingError::EmptyRing));
            continue;
        }
        assert_eq!(ring.index_by_hash(h), Ok(order[0]), "owner of hash {h:#x}");
        assert_eq!(ring.get_by_hash(h).map(Node::id), Ok(model[order[0]].id.as_str()));
        for want in [0, 1, 2, live + 2] {
            let mut out = vec![usize::MAX; want];
            let found = ring.get_n_indices_by_hash(h, &mut out).expect("non-empty ring");
            let expected = reference::with_zones(&order, &zones, want);
            assert_eq!(&out[..found], &expected[..], "preference list of hash {h:#x}, n = {want}");
            assert!(out[found..].iter().all(|&i| i == usize::MAX), "wrote past the list");
        }
    }
    if bits < 64 {
        let wide = top + 1 + (input_hashes.first().copied().unwrap_or(0) >> bits);
        assert!(matches!(ring.index_by_hash(wide), Err(RingError::HashOutOfRange { .. })), "hash {wide:#x} accepted");
        assert!(matches!(ring.get_n_indices_by_hash(wide, &mut [0; 2]), Err(RingError::HashOutOfRange { .. })));
    }

    // Lookups by key.
    for key in keys {
        let h = ring.hash_key(key);
        assert!(h <= top, "key hash {h:#x} wider than {bits} bits");
        match setup.algorithm {
            Algorithm::Slots => assert_eq!(h, reference::redis_slot(key), "slot of {key:?}"),
            Algorithm::Ring
            | Algorithm::Jump
            | Algorithm::Jumpback
            | Algorithm::Memento
            | Algorithm::Rendezvous
            | Algorithm::Maglev => {
                assert_eq!(h, shardring::hash_key(key, setup.seed));
            }
            _ => {}
        }
        let order = order_of(h);
        if live == 0 {
            assert_eq!(ring.get(key).map(Node::id), Err(RingError::EmptyRing));
            assert_eq!(ring.get_n(key, 0).map(|l| l.len()), Err(RingError::EmptyRing));
            continue;
        }
        let owner = ring.get_index(key).expect("non-empty ring");
        assert_eq!(owner, order[0], "owner of {key:?}");
        assert_eq!(ring.get(key).map(Node::id), Ok(model[owner].id.as_str()));
        for want in [1, 3, usize::MAX] {
            let listed = ring.get_n(key, want).expect("non-empty ring");
            let ids: Vec<&str> = listed.iter().map(|node| node.id()).collect();
            assert_eq!(listed.len(), want.min(live), "get_n({key:?}, {want}) length");
            if want > 0 {
                assert_eq!(ids[0], model[owner].id, "get_n({key:?}, {want}) does not start with get");
            }
            for (i, node) in listed.iter().enumerate() {
                assert!(node.weight() > 0.0, "get_n({key:?}) lists drained {:?}", node.id());
                assert!(!ids[..i].contains(&node.id()), "get_n({key:?}) lists {:?} twice", node.id());
            }
            let expected: Vec<&str> =
                reference::with_zones(&order, &zones, want).iter().map(|&i| model[i].id.as_str()).collect();
            assert_eq!(ids, expected, "get_n({key:?}, {want})");
        }
    }

    check_rebuilds(ring, model, setup, keys, &hashes);
}

/// The continuum is sorted, within the hash range, owned by live nodes,
/// ties ordered as the spec says, and (for `ring`) has `round(vnodes * w)`
/// points per node.
fn check_points(ring: &Ring, model: &[ModelNode], setup: &Setup, points: &[(u64, usize)]) {
    assert_eq!(ring.point_count(), points.len());
    let bits = setup.bits();
    for &(position, owner) in points {
        assert!(owner < model.len(), "point owner {owner} out of range");
        assert!(model[owner].weight > 0.0, "drained node {:?} has a point", model[owner].id);
        assert!(bits == 64 || position >> bits == 0, "point {position:#x} wider than {bits} bits");
    }
    for pair in points.windows(2) {
        let ((a, i), (b, j)) = (pair[0], pair[1]);
        assert!(a <= b, "points out of order: {a:#x} then {b:#x}");
        if a == b {
            match setup.algorithm {
                Algorithm::Ring => {
                    assert!(model[i].id.as_bytes() < model[j].id.as_bytes(), "tie at {a:#x} not by id bytes")
                }
                Algorithm::Nginx => panic!("nginx keeps one of equal points, found two at {a:#x}"),
                _ => assert!(i <= j, "ketama tie at {a:#x}: later server first"),
            }
        }
    }
    if setup.algorithm == Algorithm::Ring {
        for (index, node) in model.iter().enumerate() {
            let count = points.iter().filter(|&&(_, owner)| owner == index).count();
            assert_eq!(count as f64, points_of(node.weight, setup.vnodes), "point count of {:?}", node.id);
        }
    }
}

/// Shares of a continuum over its `bits`-bit hash space: point `i` owns the
/// positions after point `i - 1` up to its own; the first also owns the wrap.
fn continuum_shares(points: &[(u64, usize)], n: usize, bits: u32) -> Vec<f64> {
    let mut owned = vec![0u128; n];
    let space = 1u128 << bits;
    for (i, &(position, owner)) in points.iter().enumerate() {
        owned[owner] += if i == 0 {
            u128::from(position) + 1 + (space - 1 - u128::from(points[points.len() - 1].0))
        } else {
            u128::from(position - points[i - 1].0)
        };
    }
    owned.into_iter().map(|o| o as f64 / space as f64).collect()
}

/// Shares of a table algorithm: slots held over table size.
fn table_shares(table: &[usize], n: usize) -> Vec<f64> {
    let mut shares = vec![0.0; n];
    for &owner in table {
        shares[owner] += 1.0 / table.len() as f64;
    }
    shares
}

/// The slot table of a `slots` ring from its ranges, checking that every
/// slot is held exactly once and drained nodes hold none. Empty when no
/// node holds slots.
fn slot_table(ring: &Ring, model: &[ModelNode]) -> Vec<usize> {
    let ranges = ring.slot_ranges().expect("a slots ring has slot ranges");
    assert_eq!(ranges.len(), model.len());
    let mut table = vec![usize::MAX; 16_384];
    for (node, node_ranges) in ranges.iter().enumerate() {
        if model[node].weight == 0.0 {
            assert!(node_ranges.is_empty(), "drained {:?} holds slots {node_ranges:?}", model[node].id);
        }
        for range in node_ranges {
            assert!(range.start() <= range.end() && *range.end() < 16_384, "bad range {range:?}");
            for slot in range.clone() {
                assert_eq!(table[usize::from(slot)], usize::MAX, "slot {slot} held twice");
                table[usize::from(slot)] = node;
            }
        }
    }
    if table.iter().all(|&owner| owner == usize::MAX) {
        return Vec::new();
    }
    assert!(table.iter().all(|&owner| owner != usize::MAX), "some slot is held by no node");
    table
}
