//! The keys and rings the cases are built from: key lists, the rings of
//! the format-1 cases, and the servers, weights and zones several
//! algorithm families share.

use serde_json::Value;
use shardring::{Algorithm, Node, Ring};

pub(crate) fn text_keys(keys: &[&str]) -> Vec<Vec<u8>> {
    keys.iter().map(|k| k.as_bytes().to_vec()).collect()
}

pub(crate) fn numbered_keys(prefix: &str, count: usize) -> Vec<Vec<u8>> {
    (0..count).map(|i| format!("{prefix}{i}").into_bytes()).collect()
}

/// A key whose hash is exactly point `index` of node `id`: the point label itself.
pub(crate) fn point_label(id: &str, index: u32) -> Vec<u8> {
    let mut label = id.as_bytes().to_vec();
    label.extend_from_slice(&index.to_le_bytes());
    label
}

pub(crate) fn three_ring() -> Ring {
    Ring::builder().node("alpha", 1.0).node("bravo", 1.0).node("charlie", 1.0).build().unwrap()
}

pub(crate) fn small_ring() -> Ring {
    Ring::builder().vnodes(2).node("alpha", 1.0).node("bravo", 1.0).node("charlie", 1.5).build().unwrap()
}

pub(crate) fn zoned_ring() -> Ring {
    let nodes = [
        Node::new("us-east-a", 1.0).with_zone("us-east"),
        Node::new("us-east-b", 1.0).with_zone("us-east"),
        Node::new("us-east-c", 2.0).with_zone("us-east"),
        Node::new("us-west-a", 1.0).with_zone("us-west"),
        Node::new("us-west-b", 1.0).with_zone("us-west"),
        Node::new("eu-a", 1.0).with_zone("eu"),
        Node::new("unzoned", 1.0),
        Node::new("drained", 0.0).with_zone("ap"),
    ];
    Ring::builder().nodes(nodes).build().unwrap()
}

pub(crate) fn thousand_ring() -> Ring {
    let weights = [1.0, 1.0, 2.0, 0.5, 1.0];
    let nodes = (0..1000).map(|i| Node::new(format!("node-{i:04}"), weights[i % weights.len()]));
    Ring::builder().nodes(nodes).build().unwrap()
}

pub(crate) fn weighted_ring(
    algorithm: Algorithm,
    nodes: &[(&str, f64)],
    tweak: &dyn Fn(shardring::RingBuilder) -> shardring::RingBuilder,
) -> Ring {
    let nodes = nodes.iter().map(|&(id, w)| Node::new(id, w));
    tweak(Ring::builder().algorithm(algorithm).nodes(nodes)).build().unwrap()
}

pub(crate) fn algorithm_ring(algorithm: Algorithm, nodes: &[(&str, f64)]) -> Ring {
    let nodes = nodes.iter().map(|&(id, w)| Node::new(id, w));
    Ring::builder().algorithm(algorithm).nodes(nodes).build().unwrap()
}

/// The eight servers of libmemcached's ketama fixture (`testdata/peer/`).
pub(crate) const MEMCACHED_SERVERS: [(&str, f64); 8] = [
    ("10.0.1.1:11211", 600.0),
    ("10.0.1.2:11211", 300.0),
    ("10.0.1.3:11211", 200.0),
    ("10.0.1.4:11211", 350.0),
    ("10.0.1.5:11211", 1000.0),
    ("10.0.1.6:11211", 800.0),
    ("10.0.1.7:11211", 950.0),
    ("10.0.1.8:11211", 100.0),
];

/// Keys of libmemcached's ketama fixture, first of its 99 cases.
pub(crate) fn fixture_keys(count: usize) -> Vec<Vec<u8>> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/peer/libmemcached-ketama.json");
    let fixture: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    fixture["cases"].as_array().unwrap()[..count]
        .iter()
        .map(|c| c["key"].as_str().unwrap().as_bytes().to_vec())
        .collect()
}

/// Weights 1/2/1 and a drained node.
pub(crate) const WEIGHTED: [(&str, f64); 4] = [("a", 1.0), ("b", 2.0), ("c", 1.0), ("drained", 0.0)];

/// Two zones of two nodes each (one of weight 2) and a node without a zone.
pub(crate) fn two_zones() -> [Node; 5] {
    [
        Node::new("east-1", 1.0).with_zone("east"),
        Node::new("east-2", 1.0).with_zone("east"),
        Node::new("west-1", 1.0).with_zone("west"),
        Node::new("west-2", 2.0).with_zone("west"),
        Node::new("solo", 1.0),
    ]
}
