//! Rebuilds: the ring rebuilt from its config, from its JSON, and (where
//! placement has no history) from the model's nodes must equal it.

use shardring::{Algorithm, Node, Ring};

use crate::model::{ModelNode, Setup};

/// The ring rebuilt from `to_config()` (and through JSON) equals it; so does
/// a fresh build of the model except under `slots`.
pub(crate) fn check_rebuilds(ring: &Ring, model: &[ModelNode], setup: &Setup, keys: &[Vec<u8>], hashes: &[u64]) {
    let config = ring.to_config();
    let json = config.to_json();
    let mut others: Vec<(&str, Ring)> = vec![
        ("to_config().build()", config.build().unwrap_or_else(|e| panic!("config does not rebuild: {e}\n{json}"))),
        (
            "from_json(to_json())",
            Ring::from_json(&json).unwrap_or_else(|e| panic!("JSON does not rebuild: {e}\n{json}")),
        ),
    ];
    if setup.algorithm != Algorithm::Slots && !setup.algorithm.placement_has_history() {
        others.push(("a fresh build of the model", setup.build(model).expect("the model's nodes build")));
    }
    let (fingerprint, slot_ranges) = (ring.fingerprint(), ring.slot_ranges());
    for (how, other) in &others {
        assert_eq!(other.fingerprint(), fingerprint, "{how}: fingerprint differs\n{json}");
        assert_eq!(other.nodes(), ring.nodes(), "{how}: nodes differ");
        assert_eq!(other.live_node_count(), ring.live_node_count(), "{how}: live nodes differ");
        assert_eq!(other.slot_ranges(), slot_ranges, "{how}: slot ranges differ");
        for &h in hashes {
            assert_eq!(other.index_by_hash(h), ring.index_by_hash(h), "{how}: owner of hash {h:#x} differs");
        }
        for key in keys {
            let ids = |r: &Ring| r.get_n(key, 3).map(|l| l.iter().map(|node| node.id().to_owned()).collect::<Vec<_>>());
            assert_eq!(other.get(key).map(Node::id), ring.get(key).map(Node::id), "{how}: get({key:?}) differs");
            assert_eq!(ids(other), ids(ring), "{how}: get_n({key:?}, 3) differs");
        }
    }
}
