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
fn haproxy_request_hashes_match_the_check_values() {
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

/// nginx's `ngx_http_upstream_update_chash`, written from the source
/// rather than from this crate: each server string split into host and
/// port (`unix:` sockets have no port), points added server by server in
/// list order, sorted by value with a stable sort (glibc's `qsort` is a
/// merge sort) and the first of equal points kept. Points with the index
/// of their server.
fn nginx_continuum(servers: &[(&str, u32, bool)]) -> Vec<(u32, usize)> {
    let mut points: Vec<(u32, usize)> = Vec::new();
    for (index, &(server, weight, _)) in servers.iter().enumerate() {
        let (host, port) = if server.len() >= 5 && server[..5].eq_ignore_ascii_case("unix:") {
            (&server[5..], "")
        } else {
            match server.rfind(':') {
                Some(colon) if server[colon + 1..].bytes().all(|b| b.is_ascii_digit()) => {
                    (&server[..colon], &server[colon + 1..])
                }
                _ => (server, ""),
            }
        };
        let mut previous = 0u32;
        for _ in 0..160 * weight {
            let bytes = [host.as_bytes(), b"\0", port.as_bytes(), &previous.to_le_bytes()].concat();
            previous = crc32fast::hash(&bytes);
            points.push((previous, index));
        }
    }
    points.sort_by_key(|&(point, _)| point); // stable
    points.dedup_by_key(|&mut (point, _)| point); // keeps the first
    points
}

/// nginx's `ngx_http_upstream_get_chash_peer`: the first point `>=` the
/// hash, wrapping, stepping past points of servers marked down, 20 times
/// at most. The index of the server chosen, `None` if none.
fn nginx_pick(servers: &[(&str, u32, bool)], points: &[(u32, usize)], hash: u32) -> Option<usize> {
    let start = points.partition_point(|&(point, _)| point < hash);
    (0..=20).map(|step| points[(start + step) % points.len()].1).find(|&server| !servers[server].2)
}

/// Pairs of `127.0.0.1:PORT` servers (ports 20000 to 24999) sharing an
/// nginx point, and the point: a birthday search over their 160 points each.
fn nginx_collisions() -> Vec<([String; 2], u32)> {
    let mut owner = std::collections::HashMap::new();
    let mut pairs = Vec::new();
    for port in 20_000..25_000 {
        let id = format!("127.0.0.1:{port}");
        let ring = Ring::builder().algorithm(Algorithm::Nginx).node(id.clone(), 1.0).build().unwrap();
        for (point, _) in ring.points() {
            if let Some(other) = owner.insert(point, id.clone()) {
                pairs.push(([other, id.clone()], point as u32));
            }
        }
    }
    pairs
}

fn nginx_ring(servers: &[(&str, u32, bool)]) -> Result<Ring, RingError> {
    let mut builder = Ring::builder().algorithm(Algorithm::Nginx);
    for &(id, weight, down) in servers {
        builder = builder.node(id, f64::from(weight));
        if down {
            builder = builder.down(id, true);
        }
    }
    builder.build()
}

/// Hashes around each point of `ring` (the point itself, one below, one
/// above) plus a spread of others.
fn probes_around(points: impl Iterator<Item = u64>) -> Vec<u32> {
    let mut probes: Vec<u32> = (0..4_000u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
    for point in points {
        let point = point as u32;
        probes.extend([point, point.wrapping_sub(1), point.wrapping_add(1)]);
    }
    probes
}

/// A tie goes to the server listed earlier, in either order, with or
/// without other servers, weights and servers marked down around it.
#[test]
fn nginx_places_ties_and_down_servers_as_nginx_does() {
    let pairs = nginx_collisions();
    assert!(pairs.len() >= 30, "the birthday search found {} pairs", pairs.len());
    for ([a, b], tie) in pairs.iter().take(30) {
        for (first, second) in [(a, b), (b, a)] {
            let ring = nginx_ring(&[(first, 1, false), (second, 1, false)]).unwrap();
            assert_eq!(ring.get_by_hash(u64::from(*tie)).unwrap().id(), first.as_str(), "tie at {tie}");
            let mixed: [(&str, u32, bool); 5] = [
                ("localhost:8080", 2, false),
                (first, 1, false),
                ("unix:/run/app.sock", 1, false),
                (second, 3, false),
                ("[::1]:80", 1, false),
            ];
            // Every server up, then each of the pair marked down in turn:
            // a down server that wins the tie hides the other's point.
            for down in [None, Some(1), Some(3)] {
                let mut servers = mixed;
                if let Some(i) = down {
                    servers[i].2 = true;
                }
                let ring = nginx_ring(&servers).unwrap();
                let points = nginx_continuum(&servers);
                for hash in probes_around(points.iter().map(|&(p, _)| u64::from(p)).chain([u64::from(*tie)])) {
                    let want = nginx_pick(&servers, &points, hash).map(|i| servers[i].0);
                    assert_eq!(ring.get_by_hash(u64::from(hash)).ok().map(|n| n.id()), want, "hash {hash}");
                }
            }
        }
    }
}

#[test]
fn nginx_down_servers_keep_their_marks_and_enter_the_fingerprint() {
    let servers = [("10.0.0.1:80", 1, false), ("10.0.0.2:80", 2, true), ("10.0.0.3:80", 1, false)];
    let ring = nginx_ring(&servers).unwrap();
    assert_eq!(ring.down_nodes(), ["10.0.0.2:80"]);
    assert_eq!(ring.live_node_count(), 2);
    assert_eq!(ring.point_count(), 320, "the down server's points are skipped");
    let up = nginx_ring(&[("10.0.0.1:80", 1, false), ("10.0.0.2:80", 2, false), ("10.0.0.3:80", 1, false)]).unwrap();
    assert_ne!(ring.fingerprint(), up.fingerprint());
    // The mark survives JSON, derivations, and is refused elsewhere.
    let json = ring.to_config().to_json();
    assert!(json.contains("\"down\": true"), "{json}");
    assert_eq!(Ring::from_json(&json).unwrap().fingerprint(), ring.fingerprint());
    let derived = ring.with_node(Node::new("10.0.0.4:80", 1.0)).unwrap().with_weight("10.0.0.2:80", 3.0).unwrap();
    assert_eq!(derived.down_nodes(), ["10.0.0.2:80"]);
    assert_eq!(ring.without_node("10.0.0.1:80").unwrap().down_nodes(), ["10.0.0.2:80"]);
    assert!(ring.without_node("10.0.0.2:80").unwrap().down_nodes().is_empty());
    let points = nginx_continuum(&servers);
    for hash in probes_around(points.iter().map(|&(p, _)| u64::from(p))) {
        let owner = ring.get_by_hash(u64::from(hash)).unwrap().id();
        assert_ne!(owner, "10.0.0.2:80");
        assert_eq!(Some(owner), nginx_pick(&servers, &points, hash).map(|i| servers[i].0));
    }
    // Balance counts only the servers that can own keys.
    let keys: Vec<String> = (0..4_000).map(|i| format!("k{i}")).collect();
    let balance = ring.balance(&keys).unwrap();
    assert_eq!(balance.counts[1], 0);
    assert!(balance.by_node.max_over_mean < 1.3, "{:?}", balance.by_node);
    let err = Ring::builder().node("a", 1.0).down("a", true).build().unwrap_err();
    assert!(err.to_string().contains("down"), "{err}");
    let err = Ring::from_json(r#"{"format_version":1,"algorithm":"ketama","nodes":[{"id":"a","down":true}]}"#);
    assert!(matches!(err, Err(RingError::InvalidConfig { .. })), "{err:?}");
    let err = Ring::builder().algorithm(Algorithm::Nginx).node("a", 1.0).down("b", true).build().unwrap_err();
    assert_eq!(err, RingError::UnknownNode { id: "b".into() });
}

/// nginx tries a key's point and the next 20, then picks a server round
/// robin: down servers holding 21 points in a row are refused; fewer work.
#[test]
fn nginx_refuses_down_servers_it_would_route_round_robin() {
    // One server up among many down: somewhere 21 down points follow each other.
    let many: Vec<String> = (0..40).map(|i| format!("10.0.1.{i}:80")).collect();
    let mut builder = Ring::builder().algorithm(Algorithm::Nginx).nodes(many.iter().map(|id| Node::new(id, 1.0)));
    for id in &many[1..] {
        builder = builder.down(id.clone(), true);
    }
    let err = builder.build().unwrap_err();
    assert!(matches!(&err, RingError::InvalidConfig { message } if message.contains("round robin")), "{err}");
    // Every server down: nothing to route, lookups fail as on an empty ring.
    let all = nginx_ring(&[("a:1", 1, true), ("b:1", 1, true)]).unwrap();
    assert_eq!(all.get("k").unwrap_err(), RingError::EmptyRing);
    // Two of three down: the longest run of down points decides.
    let servers = [("10.0.0.1:80", 1, false), ("10.0.0.2:80", 1, true), ("10.0.0.3:80", 1, true)];
    let longest = {
        let every = nginx_ring(&servers.map(|(id, w, _)| (id, w, false))).unwrap();
        let owners: Vec<usize> = every.points().map(|(_, o)| o).collect();
        let start = owners.iter().position(|&o| o == 0).unwrap();
        let (mut run, mut longest) = (0, 0);
        for i in start..start + owners.len() {
            run = if owners[i % owners.len()] == 0 { 0 } else { run + 1 };
            longest = longest.max(run);
        }
        longest
    };
    assert_eq!(nginx_ring(&servers).is_ok(), longest < 21, "longest run of down points: {longest}");
}

/// libketama's `ketama_create_continuum`, written from RJ/ketama's
/// `libketama/ketama.c` rather than from this crate: `floorf(pct * 40.0 *
/// (float)N)` digests of 4 MD5 words (little-endian) per server, added in
/// server-file order, then `qsort` by value alone (glibc: a stable merge
/// sort). Points with the index of their server.
fn libketama_continuum(servers: &[(&str, u64)]) -> Vec<(u32, usize)> {
    use md5::{Digest, Md5};
    let memory: u64 = servers.iter().map(|s| s.1).sum();
    let mut continuum: Vec<(u32, usize)> = Vec::new();
    for (index, &(addr, mem)) in servers.iter().enumerate() {
        let pct = mem as f32 / memory as f32;
        let digests = ((f64::from(pct) * 40.0 * f64::from(servers.len() as f32)) as f32).floor() as u32;
        for k in 0..digests {
            let digest = Md5::digest(format!("{addr}-{k}").as_bytes());
            for h in 0..4 {
                continuum.push((u32::from_le_bytes(digest[4 * h..4 * h + 4].try_into().unwrap()), index));
            }
        }
    }
    continuum.sort_by_key(|&(point, _)| point); // stable, as glibc's qsort
    continuum
}

/// libketama's `ketama_get_server` search as written in `ketama.c`: the
/// point `p[mid]` with `h <= p[mid] && h > p[mid - 1]` (0 before the
/// first), so the first of a run of equal points; point 0 past the end.
fn ketama_get_server(continuum: &[(u32, usize)], h: u32) -> (u32, usize) {
    let n = continuum.len() as i64;
    let (mut low, mut high) = (0i64, n);
    loop {
        let mid = (low + high) / 2;
        if mid == n {
            return continuum[0];
        }
        let value = continuum[mid as usize].0;
        let before = if mid == 0 { 0 } else { continuum[mid as usize - 1].0 };
        if h <= value && h > before {
            return continuum[mid as usize];
        }
        if value < h {
            low = mid + 1;
        } else {
            high = mid - 1;
        }
        if low > high {
            return continuum[0];
        }
    }
}

fn libketama_ring(servers: &[(&str, u64)]) -> Ring {
    let nodes = servers.iter().map(|&(id, memory)| Node::new(id, memory as f64));
    Ring::builder().algorithm(Algorithm::Libketama).nodes(nodes).build().unwrap()
}

/// RJ/ketama's own check (`libketama/test.sh`): `ketama_test` over the
/// `ketama.servers` file prints an empty error line, then `hash point
/// server` for each key "0" to "999999"; the MD5 of that output is
/// 5672b131391f5aa2b280936aec1eea74.
#[test]
fn libketama_reproduces_its_test_sh_digest() {
    use md5::{Digest, Md5};
    use std::io::Write;
    let servers = [
        ("10.0.1.1:11211", 600u64),
        ("10.0.1.2:11211", 300),
        ("10.0.1.3:11211", 200),
        ("10.0.1.4:11211", 350),
        ("10.0.1.5:11211", 1000),
        ("10.0.1.6:11211", 800),
        ("10.0.1.7:11211", 950),
        ("10.0.1.8:11211", 100),
    ];
    let ring = libketama_ring(&servers);
    let points: Vec<(u64, usize)> = ring.points().collect();
    let mut output = Vec::with_capacity(32 << 20);
    output.push(b'\n');
    for i in 0..1_000_000 {
        let key = i.to_string();
        let hash = ring.hash_key(&key);
        let at = points.partition_point(|&(p, _)| p < hash);
        let (point, owner) = points[if at == points.len() { 0 } else { at }];
        assert_eq!(ring.get(&key).unwrap().id(), ring.nodes()[owner].id());
        writeln!(output, "{hash} {point} {}", ring.nodes()[owner].id()).unwrap();
    }
    assert_eq!(hex::encode(Md5::digest(&output)), "5672b131391f5aa2b280936aec1eea74");
}

/// Two servers whose libketama points collide: a birthday search over
/// `10.a.b.c:11211` ids, 160 points each (two equal weights): 4,000 ids
/// hold about 30 collisions.
fn libketama_collisions() -> Vec<([String; 2], u32)> {
    let mut owner = std::collections::HashMap::new();
    let mut pairs = Vec::new();
    for i in 0..4_000u32 {
        let id = format!("10.{}.{}.{}:11211", 1 + i / 65_536, (i / 256) % 256, i % 256);
        // Alone, a server has the 40 digests it has beside one of equal weight.
        for (point, _) in libketama_continuum(&[(&id, 1)]) {
            if let Some(other) = owner.insert(point, id.clone()) {
                pairs.push(([other, id.clone()], point));
            }
        }
    }
    pairs
}

/// A tie goes to the server listed earlier, in either order, as the
/// source's stable sort and search give it; every point, its neighbours
/// and 2,000 keys place as the source's search does.
#[test]
fn libketama_places_ties_as_its_source_does() {
    use md5::{Digest, Md5};
    let pairs = libketama_collisions();
    assert!(pairs.len() >= 10, "the birthday search found {} pairs", pairs.len());
    for ([a, b], tie) in pairs.iter().take(10) {
        for (first, second) in [(a, b), (b, a)] {
            for servers in [
                vec![(first.as_str(), 1u64), (second.as_str(), 1)],
                vec![("10.9.9.9:11211", 3), (first.as_str(), 2), (second.as_str(), 2), ("10.9.9.8:11212", 1)],
            ] {
                let ring = libketama_ring(&servers);
                let continuum = libketama_continuum(&servers);
                assert_eq!(ring.point_count(), continuum.len());
                let mut hashes: Vec<u32> = (0..2_000)
                    .map(|i| {
                        let digest = Md5::digest(format!("key-{i}").as_bytes());
                        u32::from_le_bytes(digest[..4].try_into().unwrap())
                    })
                    .collect();
                for &(point, _) in &continuum {
                    hashes.extend([point, point.wrapping_sub(1), point.wrapping_add(1)]);
                }
                for hash in hashes {
                    let (_, server) = ketama_get_server(&continuum, hash);
                    assert_eq!(ring.get_by_hash(u64::from(hash)).unwrap().id(), servers[server].0, "hash {hash}");
                }
                if servers.len() == 2 {
                    assert_eq!(ring.get_by_hash(u64::from(*tie)).unwrap().id(), first.as_str(), "tie at {tie}");
                }
            }
        }
    }
}

/// Envoy's `ring_hash_lb_test.cc` (LargeFractionalScale,
/// LopsidedWeightSmallScale, HostWeightedLargeRing): which host a
/// fractional share of points goes to. gRPC C-core builds its ring as
/// Envoy does, hosts in the order given, so `grpc-ring-hash` with that
/// endpoint order must agree where its 4,096 cap allows.
#[test]
fn ring_hash_fractional_points_go_where_envoys_tests_say() {
    let spread = |count: u64| (0..count).map(move |i| i * (u64::MAX / count));
    for algorithm in [Algorithm::EnvoyRingHash, Algorithm::GrpcRingHash] {
        // Two hosts, exactly 1,023 points: the first reached holds 512.
        let ring = Ring::builder()
            .algorithm(algorithm)
            .nodes((90..92).map(|port| Node::new(format!("127.0.0.1:{port}"), 1.0)))
            .min_ring_size(1023)
            .max_ring_size(1023)
            .build()
            .unwrap();
        let held = |owner| ring.points().filter(|&(_, o)| o == owner).count();
        assert_eq!((held(0), held(1)), (512, 511), "{algorithm}");
        let mut counts = [0; 2];
        spread(1023).for_each(|h| counts[ring.index_by_hash(h).unwrap()] += 1);
        assert_eq!(counts, [526, 497], "{algorithm}");
        // Lopsided: host 0 has 127/128 of the weight, hosts 1 to 1023
        // share the rest; a ring of exactly 1,024 gives host 0 1,016
        // points and every 128th light host one.
        let nodes = (0..1024).map(|i| Node::new(format!("127.0.0.1:{i}"), if i == 0 { 127.0 * 1023.0 } else { 1.0 }));
        let ring =
            Ring::builder().algorithm(algorithm).nodes(nodes).min_ring_size(1024).max_ring_size(1024).build().unwrap();
        assert_eq!(ring.points().filter(|&(_, o)| o == 0).count(), 1016, "{algorithm}");
        for (hash, host) in [
            (11664790346325243808u64, 1),
            (15894554872961148518, 128),
            (13958138884277627155, 256),
            (15803774069438192949, 384),
            (3829253010855396576, 512),
            (17918147347826565154, 640),
            (6442769608292299103, 768),
            (5881074926069334434, 896),
        ] {
            assert_eq!(ring.index_by_hash(hash).unwrap(), host, "{algorithm}: hash {hash}");
        }
    }
    // Weights 1, 2, 3 on a ring of 6,144 (above gRPC's cap).
    let ring = Ring::builder()
        .algorithm(Algorithm::EnvoyRingHash)
        .nodes((90..93).map(|port| Node::new(format!("127.0.0.1:{port}"), f64::from(port - 89))))
        .min_ring_size(6144)
        .build()
        .unwrap();
    let mut counts = [0; 3];
    spread(6000).for_each(|h| counts[ring.index_by_hash(h).unwrap()] += 1);
    assert_eq!(counts, [987, 1932, 3081]);
}
