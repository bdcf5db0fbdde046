//! Compatibility modes against placements recorded by the peers themselves.

use serde_json::Value;
use shardring::{Algorithm, Node, Ring, RingError};

fn peer_vectors() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/peer/libmemcached-ketama.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("peer vectors")).expect("valid JSON")
}

fn memcached_ring(vectors: &Value, algorithm: Algorithm) -> Ring {
    let nodes = vectors["servers"].as_array().unwrap().iter().map(|s| {
        let id = format!("{}:{}", s["host"].as_str().unwrap(), s["port"]);
        Node::new(id, s["weight"].as_f64().unwrap())
    });
    Ring::builder().algorithm(algorithm).nodes(nodes).build().unwrap()
}

/// All 99 cases of libmemcached's own ketama fixture: key hash, the
/// continuum point chosen and the server.
#[test]
fn ketama_reproduces_libmemcached_fixture() {
    let vectors = peer_vectors();
    let ring = memcached_ring(&vectors, Algorithm::Ketama);
    let cases = vectors["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 99);
    for case in cases {
        let key = case["key"].as_str().unwrap();
        let hash = ring.hash_key(key);
        assert_eq!(hash, case["key_hash"].as_u64().unwrap(), "key hash of {key:?}");
        let start = ring.points().position(|(p, _)| p >= hash).unwrap_or(0);
        let (point, owner) = ring.points().nth(start).unwrap();
        assert_eq!(point, case["point"].as_u64().unwrap(), "point of {key:?}");
        let server = ring.nodes()[owner].id().trim_end_matches(":11211");
        assert_eq!(server, case["server"].as_str().unwrap(), "server of {key:?}");
        assert_eq!(ring.get(key).unwrap().id(), ring.nodes()[owner].id());
    }
}

/// The 99 cases of the same fixture in spy mode (only the server is recorded).
#[test]
fn ketama_spy_reproduces_libmemcached_fixture() {
    let vectors = peer_vectors();
    let ring = memcached_ring(&vectors, Algorithm::KetamaSpy);
    let cases = vectors["spy_cases"].as_array().unwrap();
    assert_eq!(cases.len(), 99);
    for case in cases {
        let key = case["key"].as_str().unwrap();
        let server = ring.get(key).unwrap().id().trim_end_matches(":11211");
        assert_eq!(server, case["server"].as_str().unwrap(), "spy server of {key:?}");
    }
}

/// libketama's documented example: two servers weighted 600 and 400 give
/// 320 points; "test" hashes to 3446378249 and lands on point 3454255383 of
/// 127.0.0.1:11211.
#[test]
fn libketama_reproduces_its_documented_example() {
    let ring = Ring::builder()
        .algorithm(Algorithm::Libketama)
        .node("127.0.0.1:11211", 600.0)
        .node("127.0.0.1:11212", 400.0)
        .build()
        .unwrap();
    assert_eq!(ring.point_count(), 320);
    assert_eq!(ring.hash_key("test"), 3_446_378_249);
    let (point, owner) = ring.points().find(|&(p, _)| p >= 3_446_378_249).unwrap();
    assert_eq!(point, 3_454_255_383);
    assert_eq!(ring.nodes()[owner].id(), "127.0.0.1:11211");
    assert_eq!(ring.get("test").unwrap().id(), "127.0.0.1:11211");
}

#[test]
fn ketama_and_libketama_disagree_where_float32_does() {
    let weights = [6.0, 5.0, 1.0, 3.0, 10.0];
    let build = |algorithm| {
        let nodes = weights.iter().enumerate().map(|(i, &w)| Node::new(format!("10.0.0.{i}:11211"), w));
        Ring::builder().algorithm(algorithm).nodes(nodes).build().unwrap()
    };
    let count = |ring: &Ring| ring.points().filter(|&(_, o)| o == 0).count();
    assert_eq!(count(&build(Algorithm::Libketama)), 48 * 4);
    assert_eq!(count(&build(Algorithm::Ketama)), 47 * 4);
}

#[test]
fn nginx_points_chain_crc32_over_host_port_and_previous_point() {
    let ring = Ring::builder().algorithm(Algorithm::Nginx).node("127.0.0.1:8080", 1.0).build().unwrap();
    assert_eq!(ring.point_count(), 160);
    // The first point: crc32("127.0.0.1" || 0x00 || "8080" || 0u32 LE).
    let first = crc32fast::hash(b"127.0.0.1\x008080\x00\x00\x00\x00") as u64;
    let second = crc32fast::hash(&[b"127.0.0.1\x008080".as_slice(), &(first as u32).to_le_bytes()].concat()) as u64;
    let points: Vec<u64> = ring.points().map(|(p, _)| p).collect();
    assert!(points.contains(&first) && points.contains(&second));
    assert_eq!(ring.hash_key("/index.html"), crc32fast::hash(b"/index.html") as u64);
    // Weight 3: 480 points; weights must be whole numbers.
    let heavy = Ring::builder().algorithm(Algorithm::Nginx).node("a", 3.0).node("b", 1.0).build().unwrap();
    assert_eq!(heavy.points().filter(|&(_, o)| o == 0).count(), 480);
    let err = Ring::builder().algorithm(Algorithm::Nginx).node("a", 1.5).build().unwrap_err();
    assert!(matches!(err, RingError::InvalidWeight { weight, .. } if weight == 1.5), "{err}");
}

#[test]
fn compatibility_modes_reject_parameters_they_do_not_take() {
    for algorithm in [Algorithm::Ketama, Algorithm::Nginx, Algorithm::Slots] {
        let err = Ring::builder().algorithm(algorithm).seed(7).node("a", 1.0).build().unwrap_err();
        assert!(matches!(err, RingError::InvalidConfig { .. }), "{algorithm}: {err}");
        let err = Ring::builder().algorithm(algorithm).vnodes(100).node("a", 1.0).build().unwrap_err();
        assert!(err.to_string().contains("vnodes (100)"), "{algorithm}: {err}");
    }
    let err = Ring::builder().table_size(7).node("a", 1.0).build().unwrap_err();
    assert!(err.to_string().contains("table_size (7)"), "{err}");
}
