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

fn envoy_hosts() -> Vec<Node> {
    (90..96).map(|port| Node::new(format!("127.0.0.1:{port}"), 1.0)).collect()
}

/// Envoy's ring_hash_lb_test.cc, Basic and BasicWithRetryHostPredicate:
/// lookups at 0, the wrap, on a point and one above it, and the retry walk.
#[test]
fn envoy_ring_hash_answers_as_envoys_tests() {
    let ring =
        Ring::builder().algorithm(Algorithm::EnvoyRingHash).nodes(envoy_hosts()).min_ring_size(12).build().unwrap();
    assert_eq!(ring.point_count(), 12);
    for (hash, host) in [
        (0, ":94"),
        (u64::MAX, ":94"),
        (3551244743356806947, ":95"),
        (3551244743356806948, ":93"),
        // The "no hash" lookup, with its random value.
        (16117243373044804880, ":90"),
    ] {
        assert_eq!(ring.get_by_hash(hash).unwrap().id(), format!("127.0.0.1{host}"), "hash {hash}");
    }
    // Retries from h = 0: :94, then :92 (its next point), then :90 (index 2).
    let mut out = [0usize; 3];
    assert_eq!(ring.get_n_indices_by_hash(0, &mut out).unwrap(), 3);
    let ids: Vec<&str> = out.iter().map(|&i| ring.nodes()[i].id()).collect();
    assert_eq!(ids, ["127.0.0.1:94", "127.0.0.1:92", "127.0.0.1:90"]);
    // XXH64, seed 0: the standard check value.
    assert_eq!(Ring::builder().algorithm(Algorithm::EnvoyRingHash).build().unwrap().hash_key(""), 17241709254077376921);
}

/// Envoy's maglev_lb_test.cc, Basic: table size 7, h mod 7 for h = 0..20.
#[test]
fn envoy_maglev_answers_as_envoys_tests() {
    let ring = Ring::builder().algorithm(Algorithm::EnvoyMaglev).nodes(envoy_hosts()).table_size(7).build().unwrap();
    let table = [2, 4, 0, 1, 5, 0, 3];
    for hash in 0..21u64 {
        assert_eq!(ring.index_by_hash(hash).unwrap(), table[(hash % 7) as usize], "hash {hash}");
    }
    // Weight 0 and fractions are Envoy configuration errors.
    let zero = Ring::builder().algorithm(Algorithm::EnvoyMaglev).node("127.0.0.1:90", 0.0).build();
    assert!(matches!(zero, Err(RingError::InvalidWeight { .. })), "{zero:?}");
}

/// HAProxy's request hashes (computed from v2.6.0's src/hash.c; HAProxy
/// publishes no vectors), with and without avalanche.
#[test]
fn haproxy_request_hashes_match_the_spec_sheet() {
    use shardring::HashFunction::{Crc32, Djb2, Sdbm, Wt6};
    let hash = |function, avalanche, key: &str| {
        let ring = Ring::builder().algorithm(Algorithm::Haproxy).hash_function(function).avalanche(avalanche);
        ring.build().unwrap().hash_key(key)
    };
    for (key, sdbm, sdbm_avalanche, djb2, wt6, crc32) in [
        ("apple", 1327380058, 3274580788, 253337143, 1870391778, 2838417488),
        ("/index.html", 858007926, 4217574924, 3776231887, 822151038, 3928116034),
    ] {
        assert_eq!(hash(Sdbm, false, key), sdbm, "{key}");
        assert_eq!(hash(Sdbm, true, key), sdbm_avalanche, "{key}");
        assert_eq!(hash(Djb2, false, key), djb2, "{key}");
        assert_eq!(hash(Wt6, false, key), wt6, "{key}");
        assert_eq!(hash(Crc32, false, key), crc32, "{key}");
    }
    // `hash-type consistent` alone is sdbm with avalanche.
    assert_eq!(Ring::builder().algorithm(Algorithm::Haproxy).build().unwrap().hash_key("apple"), 3274580788);
}
