//! Equal fingerprints mean equal placement, for every algorithm: two rings
//! whose fingerprints match give every point and every key the same owner,
//! whatever order their nodes were listed or derived in. Points that collide
//! (equal positions owned by different nodes) are where node order could
//! leak into placement, so the tests force real ones: a birthday search over
//! host names for the 32-bit modes, and a known pair for the 64-bit ring.

use std::sync::OnceLock;

use proptest::prelude::*;
use shardring::{Algorithm, Node, Ring};

/// Ids `84a4aa705e4550cf` and `ac81c4a16659065d` share point 0 under seed 0:
/// XXH3-64 of either id followed by 4 zero bytes is 13006201352855750151.
const RING_PAIR: [&str; 2] = ["84a4aa705e4550cf", "ac81c4a16659065d"];

const KEYS: usize = 10_000;

/// Host names for a birthday search: `10.a.b.c` with `port` (none when 0).
fn hosts(count: usize, port: u16) -> Vec<String> {
    (0..count)
        .map(|i| {
            let host = format!("10.{}.{}.{}", 1 + i / 65_536, (i / 256) % 256, i % 256);
            if port == 0 { host } else { format!("{host}:{port}") }
        })
        .collect()
}

fn build(algorithm: Algorithm, ids: &[String]) -> Ring {
    Ring::builder().algorithm(algorithm).nodes(ids.iter().map(|id| Node::new(id.clone(), 1.0))).build().unwrap()
}

/// The points `id` has on a ring of its own, in the algorithm's hash space
/// (a server's ketama digests for one equal-weight server number 40, as in
/// a ring of two; nginx's 160 do not depend on the other servers).
fn own_points(algorithm: Algorithm, id: &str) -> Vec<u64> {
    build(algorithm, &[id.to_owned()]).points().map(|(p, _)| p).collect()
}

/// Two ids and the point they share.
type Collision = ([String; 2], u64);

/// Pairs of ids whose own points collide, and the shared point of each,
/// found by a birthday search: 2,000 hosts of 160 points hold about a dozen
/// 32-bit collisions.
fn collisions(algorithm: Algorithm) -> &'static [Collision] {
    static FOUND: OnceLock<Vec<(Algorithm, Vec<Collision>)>> = OnceLock::new();
    let found = FOUND.get_or_init(|| {
        [Algorithm::Ketama, Algorithm::KetamaSpy, Algorithm::Libketama, Algorithm::Nginx]
            .into_iter()
            .map(|algorithm| {
                let port = if algorithm == Algorithm::Nginx { 80 } else { 11211 };
                let mut owner_of = std::collections::HashMap::new();
                let mut pairs = Vec::new();
                for host in hosts(2_000, port) {
                    for point in own_points(algorithm, &host) {
                        match owner_of.insert(point, host.clone()) {
                            Some(other) if other != host => pairs.push(([other, host.clone()], point)),
                            _ => {}
                        }
                    }
                }
                assert!(!pairs.is_empty(), "{algorithm}: the birthday search found no collision");
                (algorithm, pairs)
            })
            .collect()
    });
    found.iter().find(|(a, _)| *a == algorithm).map_or(&[], |(_, pairs)| pairs.as_slice())
}

/// Every point's position, its neighbours, and `KEYS` key hashes.
fn probes(ring: &Ring) -> Vec<u64> {
    let bits = ring.algorithm().hash_bits();
    let top = if bits == 64 { u64::MAX } else { (1 << bits) - 1 };
    let mut probes: Vec<u64> =
        ring.points().flat_map(|(p, _)| [p.saturating_sub(1), p, p.saturating_add(1).min(top)]).collect();
    probes.extend((0..KEYS).map(|i| ring.hash_key(format!("key-{i}"))));
    probes
}

/// The owner and 3-node preference list of every probe, by id.
fn placement<'r>(ring: &'r Ring, probes: &[u64]) -> Vec<Vec<&'r str>> {
    let mut out = [0usize; 3];
    probes
        .iter()
        .map(|&h| {
            let found = ring.get_n_indices_by_hash(h, &mut out).unwrap();
            let owner = ring.get_by_hash(h).unwrap().id();
            std::iter::once(owner).chain(out[..found].iter().map(|&i| ring.nodes()[i].id())).collect()
        })
        .collect()
}

/// Fails when `a` and `b` share a fingerprint but place a probe differently.
fn assert_fingerprint_implies_placement(a: &Ring, b: &Ring) -> Result<(), TestCaseError> {
    if a.fingerprint() == b.fingerprint() {
        let probes = probes(a);
        let (pa, pb) = (placement(a, &probes), placement(b, &probes));
        let differing = pa.iter().zip(&pb).position(|(x, y)| x != y);
        prop_assert!(
            differing.is_none(),
            "{}: equal fingerprints {:#x} but hash {} goes to {:?} and {:?}",
            a.algorithm(),
            a.fingerprint(),
            probes[differing.unwrap()],
            pa[differing.unwrap()],
            pb[differing.unwrap()]
        );
    }
    Ok(())
}

#[test]
fn the_ring_pair_really_collides() {
    let [a, b] = RING_PAIR.map(|id| own_points(Algorithm::Ring, id));
    assert!(a.iter().any(|p| b.contains(p)));
    assert_eq!(shardring::hash_point(RING_PAIR[0].as_bytes(), 0, 0), 13_006_201_352_855_750_151);
}

/// The order-free modes give a tie to the smaller id bytes in every order;
/// libmemcached's give it to the earlier server, so there the reversed list
/// places differently and must have another fingerprint.
#[test]
fn birthday_collisions_follow_each_algorithms_tie_rule() {
    for algorithm in [Algorithm::Ketama, Algorithm::KetamaSpy, Algorithm::Libketama, Algorithm::Nginx] {
        for (pair, tie) in collisions(algorithm) {
            let forward = build(algorithm, pair);
            let reversed = build(algorithm, &[pair[1].clone(), pair[0].clone()]);
            let owners = [&forward, &reversed].map(|r| r.get_by_hash(*tie).unwrap().id().to_owned());
            let smaller = pair.iter().min().unwrap();
            if algorithm.order_places_keys() {
                assert_eq!(owners, [pair[0].clone(), pair[1].clone()], "{algorithm}: the earlier server wins");
                assert_ne!(forward.fingerprint(), reversed.fingerprint(), "{algorithm}");
            } else {
                assert_eq!(owners, [smaller.clone(), smaller.clone()], "{algorithm}: the smaller id wins");
                assert_eq!(forward.fingerprint(), reversed.fingerprint(), "{algorithm}");
            }
        }
    }
}

/// A whole 2,000-host pool, with its dozen collisions, listed in reverse.
#[test]
fn large_pools_with_collisions_place_identically_when_fingerprints_match() {
    for algorithm in [Algorithm::Libketama, Algorithm::Nginx] {
        let port = if algorithm == Algorithm::Nginx { 80 } else { 11211 };
        let mut ids = hosts(2_000, port);
        let forward = build(algorithm, &ids);
        ids.reverse();
        let reversed = build(algorithm, &ids);
        assert_eq!(forward.fingerprint(), reversed.fingerprint());
        let mut probes: Vec<u64> = collisions(algorithm).iter().map(|&(_, tie)| tie).collect();
        probes.extend((0..KEYS).map(|i| forward.hash_key(format!("key-{i}"))));
        assert_eq!(placement(&forward, &probes), placement(&reversed, &probes), "{algorithm}");
    }
}

fn algorithm() -> impl Strategy<Value = Algorithm> {
    prop::sample::select(Algorithm::ALL.to_vec())
}

/// A few ids for `algorithm`: some colliding ones (from its pool, or the
/// 64-bit pair), plus plain ones, with weights it accepts.
fn nodes(algorithm: Algorithm, picks: &[usize], weights: &[u8]) -> Vec<Node> {
    let pool: Vec<String> = match algorithm {
        Algorithm::Ketama | Algorithm::KetamaSpy | Algorithm::Libketama | Algorithm::Nginx => {
            collisions(algorithm).iter().take(4).flat_map(|(pair, _)| pair.clone()).chain(hosts(4, 7000)).collect()
        }
        _ => RING_PAIR.iter().map(|s| s.to_string()).chain(["a", "b", "c", "d"].map(String::from)).collect(),
    };
    let mut chosen: Vec<String> = Vec::new();
    for &p in picks {
        let id = &pool[p % pool.len()];
        if !chosen.contains(id) {
            chosen.push(id.clone());
        }
    }
    chosen
        .into_iter()
        .zip(weights.iter().cycle())
        .map(|(id, &w)| {
            let weight = if algorithm.unit_weights() { 1.0 } else { f64::from(w % 3 + 1) };
            Node::new(id, weight)
        })
        .collect()
}

fn ring_of(algorithm: Algorithm, nodes: &[Node]) -> Ring {
    let mut builder = Ring::builder().algorithm(algorithm).nodes(nodes.iter().cloned());
    if algorithm == Algorithm::Maglev {
        builder = builder.table_size(1009);
    }
    builder.build().unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Permuted lists, and a node removed and added back: whenever the
    /// fingerprints match, so does every owner and preference list.
    #[test]
    fn equal_fingerprints_imply_equal_placement(
        algorithm in algorithm(),
        picks in prop::collection::vec(0..12usize, 2..7),
        weights in prop::collection::vec(any::<u8>(), 7),
        seed in any::<u64>(),
        readd in 0..7usize,
    ) {
        let listed = nodes(algorithm, &picks, &weights);
        let original = ring_of(algorithm, &listed);
        let mut shuffled = listed.clone();
        let mut state = seed | 1;
        for i in (1..shuffled.len()).rev() {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            shuffled.swap(i, ((state >> 33) % (i as u64 + 1)) as usize);
        }
        let permuted = ring_of(algorithm, &shuffled);
        assert_fingerprint_implies_placement(&original, &permuted)?;
        let back = &listed[readd % listed.len()];
        let derived = original.without_node(back.id()).unwrap().with_node(back.clone()).unwrap();
        assert_fingerprint_implies_placement(&original, &derived)?;
        // Where order does not place keys, a permutation is the same ring.
        if !algorithm.order_places_keys() && algorithm != Algorithm::Slots {
            prop_assert_eq!(original.fingerprint(), permuted.fingerprint());
            prop_assert_eq!(original.fingerprint(), derived.fingerprint());
        }
    }
}
