//! libmemcached's cases: its distributions and key hashes.

use shardring::{Algorithm, Distribution, KeyHash, Node, Ring};

use super::case::{Case, ring_case, with_hash_lookups, with_hashes};
use super::fixtures::{numbered_keys, text_keys};

/// libmemcached's distributions and key hashes (checked against the real
/// library by py/tests/test_peer_libmemcached.py).
pub(crate) fn libmemcached_cases() -> Vec<Case> {
    let ring = |distribution, key_hash: Option<KeyHash>, nodes: &[(&str, f64)]| {
        let mut builder = Ring::builder()
            .algorithm(Algorithm::Libmemcached)
            .distribution(distribution)
            .nodes(nodes.iter().map(|&(id, w)| Node::new(id, w)));
        if let Some(hash) = key_hash {
            builder = builder.key_hash(hash);
        }
        builder.build().unwrap()
    };
    let servers = [("10.0.0.1:11211", 1.0), ("10.0.0.2:11212", 0.0), ("[::1]:11213", 1.0), ("/run/mc.sock", 1.0)];
    let heavy = [("10.0.0.1", 1.0), ("10.0.0.2:11212", 2.0), ("10.0.0.3:11213", 3.0)];
    let mut keys = numbered_keys("user:", 16);
    keys.extend(text_keys(&["", "é", "ключ", "日本"]));
    keys.push(vec![0x80, 0xff, 0x7f]);
    let mut cases = vec![
        with_hash_lookups(ring_case(
            "libmemcached: consistent_ketama, one-at-a-time, port 11211, IPv6, a Unix socket, weight 0 read as 1",
            ring(Distribution::ConsistentKetama, None, &servers),
            &keys,
            &[1, 4],
        )),
        ring_case(
            "libmemcached: consistent_ketama, a weight above 1 switches on MD5 points (keys stay one-at-a-time)",
            ring(Distribution::ConsistentKetama, None, &heavy),
            &keys,
            &[1, 3],
        ),
        ring_case(
            "libmemcached: consistent_weighted (MD5 keys and points)",
            ring(Distribution::ConsistentWeighted, None, &servers),
            &keys,
            &[2],
        ),
        ring_case(
            "libmemcached: consistent_ketama_spy, fnv1a_32",
            ring(Distribution::ConsistentKetamaSpy, Some(KeyHash::Fnv1a_32), &servers),
            &keys,
            &[1, 2],
        ),
        ring_case(
            "libmemcached: consistent_ketama_spy_weighted, crc32 keys",
            ring(Distribution::ConsistentKetamaSpyWeighted, Some(KeyHash::Crc32), &heavy),
            &keys,
            &[1, 3],
        ),
        with_hashes(
            ring_case(
                "libmemcached: modula, murmur3 (weights ignored; replicas follow list order)",
                ring(Distribution::Modula, Some(KeyHash::Murmur3), &heavy),
                &keys,
                &[1, 3],
            ),
            vec![1, 2, 3, 4, 5],
        ),
    ];
    for hash in [
        KeyHash::Md5,
        KeyHash::Crc32,
        KeyHash::Fnv1_64,
        KeyHash::Fnv1a_64,
        KeyHash::Fnv1_32,
        KeyHash::Murmur,
        KeyHash::Jenkins,
    ] {
        cases.push(ring_case(
            &format!("libmemcached: consistent_ketama, {hash}"),
            ring(Distribution::ConsistentKetama, Some(hash), &servers[..3]),
            &keys,
            &[1],
        ));
    }
    cases
}
