//! The load balancers' cases: Envoy's ring hash and Maglev, gRPC's ring
//! hash and HAProxy's consistent hashing.

use shardring::{Algorithm, EndpointOrder, HashFunction, Node, Ring, ServerKey};

use super::case::{Case, ring_case, with_hash_lookups, with_hashes};
use super::fixtures::{numbered_keys, text_keys};

/// Envoy's, gRPC's and HAProxy's placements: Envoy's published rings and
/// table (ring_hash_lb_test.cc, maglev_lb_test.cc), and HAProxy's (checked
/// against a real HAProxy by py/tests/test_peer_haproxy.py).
pub(crate) fn balancer_cases() -> Vec<Case> {
    let build = |algorithm, nodes: &[(&str, f64)], tweak: &dyn Fn(shardring::RingBuilder) -> shardring::RingBuilder| {
        let builder = Ring::builder().algorithm(algorithm).nodes(nodes.iter().map(|&(id, w)| Node::new(id, w)));
        tweak(builder).build().unwrap()
    };
    let hosts: Vec<String> = (90..96).map(|p| format!("127.0.0.1:{p}")).collect();
    let six: Vec<(&str, f64)> = hosts.iter().map(|h| (h.as_str(), 1.0)).collect();
    let tiny = [(hosts[0].as_str(), 1.0), (hosts[1].as_str(), 2.0), (hosts[2].as_str(), 3.0)];
    // Listed out of key order, with weights whose scale is fractional.
    let fractional = [("10.0.0.3:80", 3.0), ("10.0.0.1:80", 1.0), ("[::1]:80", 2.0), ("backend.example:8080", 5.0)];
    let servers = [("web1", 1.0), ("web2", 2.0), ("web3", 0.0), ("web4", 10.0), ("web5", 3.0)];
    let mut keys = numbered_keys("/page/", 16);
    keys.extend(text_keys(&["", "/index.html", "apple", "é", "user:42"]));
    let haproxy_hashes: Vec<u64> = [1237450891u64, 2761370759, 1079705203, 4061310468]
        .iter()
        .flat_map(|&h| [h - 1, h, h + 1])
        .chain((0..16).map(|i| i * 0x1000_0000))
        .collect();
    vec![
        with_hash_lookups(ring_case(
            "envoy-ring-hash: Envoy's Basic ring (six hosts, minimum_ring_size 12)",
            build(Algorithm::EnvoyRingHash, &six, &|b| b.min_ring_size(12)),
            &keys,
            &[1, 3],
        )),
        with_hash_lookups(ring_case(
            "envoy-ring-hash: HostWeightedTinyRing (weights 1, 2, 3; ring size 6)",
            build(Algorithm::EnvoyRingHash, &tiny, &|b| b.min_ring_size(6).max_ring_size(6)),
            &keys,
            &[1, 2],
        )),
        ring_case(
            "envoy-ring-hash: murmur_hash_2 points, fractional scale, hosts out of key order",
            build(Algorithm::EnvoyRingHash, &fractional, &|b| b.hash_function(HashFunction::MurmurHash2)),
            &keys,
            &[1, 4],
        ),
        with_hashes(
            ring_case(
                "envoy-maglev: Envoy's Basic table (six hosts, table size 7)",
                build(Algorithm::EnvoyMaglev, &six, &|b| b.table_size(7)),
                &keys,
                &[1, 3],
            ),
            (0..21).collect(),
        ),
        ring_case(
            "envoy-maglev: weights 3, 1, 2, 5, the default table",
            build(Algorithm::EnvoyMaglev, &fractional, &|b| b),
            &keys,
            &[1, 2],
        ),
        ring_case(
            "grpc-ring-hash: C-core's endpoint order (as listed), fractional scale",
            build(Algorithm::GrpcRingHash, &fractional, &|b| b.min_ring_size(100).max_ring_size(100)),
            &keys,
            &[1, 4],
        ),
        ring_case(
            "grpc-ring-hash: grpc-go's endpoint order (sorted by key), sizes capped at 4096",
            build(Algorithm::GrpcRingHash, &fractional, &|b| {
                b.endpoint_order(EndpointOrder::ByKey).min_ring_size(100_000).max_ring_size(200_000)
            }),
            &keys,
            &[1, 2],
        ),
        with_hashes(
            ring_case(
                "haproxy: hash-type consistent (sdbm avalanche), ids assigned and given, a weight of 0",
                build(Algorithm::Haproxy, &servers, &|b| b.haproxy_id("web4", 2)),
                &keys,
                &[1, 3],
            ),
            haproxy_hashes.clone(),
        ),
        ring_case(
            "haproxy: djb2 without avalanche",
            build(Algorithm::Haproxy, &servers, &|b| b.hash_function(HashFunction::Djb2)),
            &keys,
            &[1],
        ),
        ring_case(
            "haproxy: wt6 avalanche",
            build(Algorithm::Haproxy, &servers, &|b| b.hash_function(HashFunction::Wt6).avalanche(true)),
            &keys,
            &[1],
        ),
        with_hashes(
            ring_case(
                "haproxy: crc32, server_key id32 (HAProxy 3.4)",
                build(Algorithm::Haproxy, &servers, &|b| {
                    b.hash_function(HashFunction::Crc32).server_key(ServerKey::Id32)
                }),
                &keys,
                &[2],
            ),
            haproxy_hashes,
        ),
        ring_case(
            "haproxy: server_key id_full_hash (HAProxy 3.0 before commit 03e9a5a1e)",
            build(Algorithm::Haproxy, &servers, &|b| b.server_key(ServerKey::IdFullHash)),
            &keys,
            &[1],
        ),
    ]
}
