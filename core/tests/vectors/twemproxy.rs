//! twemproxy's cases: its distributions, key hashes, server names and
//! hash tags.

use shardring::{Algorithm, Distribution, KeyHash, Node, Ring, ServerIds};

use super::case::{Case, ring_case, with_hash_lookups, with_hashes};
use super::fixtures::{numbered_keys, text_keys};

/// twemproxy's distributions, hashes, names and hash tags (checked against
/// real nutcracker by py/tests/test_peer_twemproxy.py).
pub(crate) fn twemproxy_cases() -> Vec<Case> {
    let ring = |distribution, key_hash: Option<KeyHash>, server_ids, tag: Option<&str>, nodes: &[(&str, f64)]| {
        let mut builder = Ring::builder()
            .algorithm(Algorithm::Twemproxy)
            .distribution(distribution)
            .server_ids(server_ids)
            .nodes(nodes.iter().map(|&(id, w)| Node::new(id, w)));
        if let Some(hash) = key_hash {
            builder = builder.key_hash(hash);
        }
        if let Some(tag) = tag {
            builder = builder.hash_tag(tag);
        }
        builder.build().unwrap()
    };
    let servers = [("10.0.0.1:11211", 1.0), ("10.0.0.2:22122", 2.0), ("[::1]:11213", 1.0), ("/run/mc.sock", 3.0)];
    let names = [("alpha:11211", 1.0), ("[2001:db8::5]:11211", 1.0), ("b", 2.0), ("gamma-1", 1.0)];
    let mut keys = numbered_keys("user:", 16);
    keys.extend(text_keys(&["", "é", "{42}:name", "a{}b", "{}x1}y", "{tag}:1", "{tag}:2"]));
    let mut cases = vec![
        with_hash_lookups(ring_case(
            "twemproxy: ketama, fnv1a_64 (the default), port 11211, IPv6, a Unix socket, weights",
            ring(Distribution::Ketama, None, ServerIds::Address, None, &servers),
            &keys,
            &[1, 4],
        )),
        ring_case(
            "twemproxy: ketama, server names as literal labels (server_ids: label), md5",
            ring(Distribution::Ketama, Some(KeyHash::Md5), ServerIds::Label, None, &names),
            &keys,
            &[1, 2],
        ),
        with_hashes(
            ring_case(
                "twemproxy: modula, crc16 (weight entries in server order)",
                ring(Distribution::Modula, Some(KeyHash::Crc16), ServerIds::Address, None, &servers),
                &keys,
                &[1, 3],
            ),
            vec![1, 2, 3, 4, 5, 6, 7],
        ),
        ring_case(
            "twemproxy: ketama, hsieh, hash_tag {}",
            ring(Distribution::Ketama, Some(KeyHash::Hsieh), ServerIds::Address, Some("{}"), &servers),
            &keys,
            &[1],
        ),
    ];
    for hash in [
        KeyHash::OneAtATime,
        KeyHash::Crc32,
        KeyHash::Crc32a,
        KeyHash::Fnv1_64,
        KeyHash::Fnv1_32,
        KeyHash::Fnv1a_32,
        KeyHash::Murmur,
        KeyHash::Jenkins,
    ] {
        cases.push(ring_case(
            &format!("twemproxy: ketama, {hash}"),
            ring(Distribution::Ketama, Some(hash), ServerIds::Address, None, &servers[..3]),
            &keys,
            &[1],
        ));
    }
    cases
}
