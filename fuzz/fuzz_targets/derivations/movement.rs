//! Movement: what one derivation changed ([`Change`]), the key movement each
//! algorithm's docs promise for it, and the exact diff's arcs and flows.

use shardring::{Algorithm, Ring, RingError};

use crate::model::Setup;

/// What the last operation changed, for the movement promises.
pub(crate) enum Change {
    Added(String),
    Removed { id: String, was_last: bool },
    Reweighted { id: String, from: f64, to: f64 },
}

/// The movement each algorithm promises for one derivation, on the probe
/// hashes and keys; and the exact diff's arcs against real lookups.
pub(crate) fn check_movement(
    old: &Ring,
    new: &Ring,
    setup: &Setup,
    change: &Change,
    keys: &[Vec<u8>],
    input_hashes: &[u64],
) {
    let top = if setup.bits() == 64 { u64::MAX } else { (1u64 << setup.bits()) - 1 };
    let mut hashes: Vec<u64> = input_hashes.iter().map(|&h| h & top).collect();
    hashes.extend(keys.iter().map(|key| old.hash_key(key)));
    hashes.extend([0, top]);

    // Which (from, to) moves the docs allow; None: no promise.
    type Allowed<'a> = Box<dyn Fn(&str, &str) -> bool + 'a>;
    let promise: Option<Allowed> = match (setup.algorithm, change) {
        // `slots` promises no such thing: it rebalances as redis-cli does, whose
        // rounding fix can move slots between old masters.
        (
            Algorithm::Ring | Algorithm::Rendezvous | Algorithm::Jump | Algorithm::Jumpback | Algorithm::Memento,
            Change::Added(id),
        ) => Some(Box::new(move |_, to| to == id)),
        (Algorithm::Ring | Algorithm::Rendezvous | Algorithm::Memento, Change::Removed { id, .. })
        | (Algorithm::Jump | Algorithm::Jumpback, Change::Removed { id, was_last: true }) => {
            Some(Box::new(move |from, _| from == id))
        }
        (Algorithm::Ring | Algorithm::Rendezvous, Change::Reweighted { id, from, to }) => {
            let (from, to) = (*from, *to);
            Some(Box::new(move |was, now| {
                if to > from {
                    now == id
                } else if to < from {
                    was == id
                } else {
                    false
                }
            }))
        }
        _ => None,
    };
    let live = old.live_node_count() > 0 && new.live_node_count() > 0;
    if let (Some(allowed), true) = (&promise, live) {
        for &h in &hashes {
            let (was, now) = (old.get_by_hash(h).unwrap().id(), new.get_by_hash(h).unwrap().id());
            if was != now {
                assert!(allowed(was, now), "hash {h:#x} moved from {was:?} to {now:?}, against the documented promise");
            }
        }
    }

    // Exact diffs only: the sampled ones of jump and rendezvous cost 65,536
    // lookups each, longer than everything else here.
    if matches!(setup.algorithm, Algorithm::Jump | Algorithm::Jumpback | Algorithm::Memento | Algorithm::Rendezvous) {
        return;
    }
    let diff = old.diff(new);
    if !live {
        assert_eq!(diff, Err(RingError::EmptyRing));
        return;
    }
    let diff = diff.expect("diff of two rings of one algorithm and seed");
    assert!((0.0..=1.0).contains(&diff.moved_share), "moved share {}", diff.moved_share);
    let flow_sum: f64 = diff.flows.iter().map(|flow| flow.share).sum();
    assert!((flow_sum - diff.moved_share).abs() < 1e-9, "flows sum to {flow_sum}, moved share {}", diff.moved_share);
    for flow in &diff.flows {
        assert_ne!(flow.from, flow.to);
        assert!(flow.share > 0.0 && flow.share <= 1.0);
        if let Some(allowed) = &promise {
            assert!(allowed(&flow.from, &flow.to), "diff flow {flow:?} against the documented promise");
        }
    }
    for pair in diff.arcs.windows(2) {
        assert!(pair[0].end < pair[1].start, "arcs overlap or are out of order: {pair:?}");
    }
    for arc in diff.arcs.iter().take(4) {
        assert!(arc.start <= arc.end && arc.end <= top, "arc {arc:?}");
        for h in [arc.start, arc.end] {
            assert_eq!(old.get_by_hash(h).unwrap().id(), arc.from, "arc {arc:?}: old owner of {h:#x}");
            assert_eq!(new.get_by_hash(h).unwrap().id(), arc.to, "arc {arc:?}: new owner of {h:#x}");
        }
    }
    if diff.arcs.is_empty() {
        assert_eq!(diff.moved_share, 0.0, "moved share without arcs");
    }
}
