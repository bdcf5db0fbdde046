//! One case of `testdata/vectors.json`: its record (config, fingerprint,
//! lookups by key and by hash) and how it is computed from a ring.

use serde::Serialize;
use shardring::{Node, Ring, RingConfig};

#[derive(Serialize)]
pub(crate) struct Case {
    name: String,
    config: RingConfig,
    fingerprint: String,
    lookups: Vec<Lookup>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    hash_lookups: Vec<HashLookup>,
}

#[derive(Serialize)]
struct HashLookup {
    hash: String,
    owner: String,
}

#[derive(Serialize)]
struct Lookup {
    key_hex: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    key: Option<String>,
    key_hash: String,
    owner: String,
    n: usize,
    preference: Vec<String>,
}

pub(crate) fn case(name: &str, vnodes: u32, seed: u64, nodes: &[(&str, f64)], keys: &[Vec<u8>], n: usize) -> Case {
    let nodes = nodes.iter().map(|&(id, w)| Node::new(id, w));
    ring_case(name, Ring::builder().vnodes(vnodes).seed(seed).nodes(nodes).build().unwrap(), keys, &[n])
}

/// A case on any ring; lookup `i` asks for a preference list of `ns[i % ns.len()]` nodes.
pub(crate) fn ring_case(name: &str, ring: Ring, keys: &[Vec<u8>], ns: &[usize]) -> Case {
    let lookups = keys
        .iter()
        .zip(ns.iter().cycle())
        .map(|(key, &n)| Lookup {
            key_hex: hex::encode(key),
            key: String::from_utf8(key.clone()).ok(),
            key_hash: format!("{:016x}", ring.hash_key(key)),
            owner: ring.get(key).unwrap().id().to_owned(),
            n,
            preference: ring.get_n(key, n).unwrap().iter().map(|n| n.id().to_owned()).collect(),
        })
        .collect();
    let fingerprint = format!("{:016x}", ring.fingerprint());
    Case { name: name.to_owned(), config: ring.to_config(), fingerprint, lookups, hash_lookups: Vec::new() }
}

/// Adds lookups by hash at every point, one above and one below it, and at
/// both ends of the hash space.
pub(crate) fn with_hash_lookups(case: Case) -> Case {
    let ring = Ring::from_json(&serde_json::to_string(&case.config).unwrap()).unwrap();
    let mut hashes = Vec::new();
    for (point, _) in ring.points() {
        hashes.extend([point.wrapping_sub(1), point, point.wrapping_add(1)]);
    }
    with_hashes(case, hashes)
}

/// Adds lookups by the given hashes and both ends of the algorithm's hash
/// space; hashes beyond its width are dropped.
pub(crate) fn with_hashes(mut case: Case, extra: Vec<u64>) -> Case {
    let ring = Ring::from_json(&serde_json::to_string(&case.config).unwrap()).unwrap();
    let bits = ring.algorithm().hash_bits();
    let top = if bits == 64 { u64::MAX } else { (1 << bits) - 1 };
    let mut hashes = vec![0, top];
    hashes.extend(extra.into_iter().filter(|&h| h <= top));
    case.hash_lookups = hashes
        .into_iter()
        .map(|hash| HashLookup { hash: format!("{hash:016x}"), owner: ring.get_by_hash(hash).unwrap().id().to_owned() })
        .collect();
    case
}
