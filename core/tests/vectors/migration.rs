//! The migration modes' cases: uhashring (and its ketama mode) and npm
//! hashring.

use shardring::{Algorithm, Distribution, Node, Ring};

use super::case::{Case, ring_case, with_hash_lookups};
use super::fixtures::{numbered_keys, text_keys};

/// uhashring and npm hashring (checked side by side with the packages by
/// py/tests/test_peer_uhashring.py and node/__test__/peer.test.mjs).
pub(crate) fn migration_cases() -> Vec<Case> {
    let ring = |algorithm,
                vnodes: Option<u32>,
                nodes: &[(&str, f64)],
                tweak: &dyn Fn(shardring::RingBuilder) -> shardring::RingBuilder| {
        let mut builder = Ring::builder().algorithm(algorithm).nodes(nodes.iter().map(|&(id, w)| Node::new(id, w)));
        if let Some(v) = vnodes {
            builder = builder.vnodes(v);
        }
        tweak(builder).build().unwrap()
    };
    let same = |b| b;
    let nodes = [("node-1", 1.0), ("10.0.0.2:11211", 3.0), ("cache-é", 2.0), ("drained", 0.0)];
    let thirds = [("a:11211", 1.0), ("b:11211", 1.0), ("c:11212", 1.0), ("z", 0.0)];
    let mut keys = numbered_keys("key:", 16);
    keys.extend(text_keys(&["", "é", "node-1-0", "cache-é-3", "a:11211-0", "a-5"]));
    vec![
        with_hash_lookups(ring_case(
            "uhashring: the default ring, 7 vnodes, a drained node, keys on points",
            ring(Algorithm::Uhashring, Some(7), &nodes, &same),
            &keys,
            &[1, 3],
        )),
        ring_case(
            "uhashring: the default ring, 160 vnodes",
            ring(Algorithm::Uhashring, None, &nodes, &same),
            &keys,
            &[1],
        ),
        with_hash_lookups(ring_case(
            "uhashring-ketama: 10 vnodes, keys on points take the next point",
            ring(Algorithm::UhashringKetama, Some(10), &nodes, &same),
            &keys,
            &[1, 2],
        )),
        ring_case(
            "hashring-js: equal thirds get 39 digests (binary64), weight 0 read as 1",
            ring(Algorithm::HashringJs, None, &thirds, &same),
            &keys,
            &[1, 4],
        ),
        ring_case(
            "hashring-js: hash_ring compatibility (3 points per digest)",
            ring(Algorithm::HashringJs, None, &thirds, &|b| b.distribution(Distribution::HashRing)),
            &keys,
            &[1],
        ),
        with_hash_lookups(ring_case(
            "hashring-js: default port 11211, 5 vnodes",
            ring(Algorithm::HashringJs, Some(5), &thirds, &|b| b.default_port(11211)),
            &keys,
            &[2],
        )),
    ]
}
