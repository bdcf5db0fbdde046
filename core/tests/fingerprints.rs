//! Fingerprints against placement, for every algorithm, on node lists that
//! are permuted or derived (a node removed and added back, so it moves to
//! the end):
//!
//! - where node order does not place keys, a permuted list is the same
//!   ring: equal fingerprints and equal placement;
//! - where it does, a permutation that places any key differently has
//!   another fingerprint, and equal fingerprints always mean equal
//!   placement. (A fingerprint is a digest of the config, recomputable from
//!   it alone in any language, so it changes with the order of such a list
//!   even when no key moves: it cannot know that without placing keys.)
//!
//! Node order reaches placement through ties (equal points owned by
//! different nodes), list positions (jump, modula, auto-assigned ids) and
//! fractional shares (Envoy's and gRPC's ring hash), so the lists here hold
//! real ties: birthday searches over host names for the 32-bit point modes,
//! HAProxy ids equal modulo 2^20, known 64-bit pairs for the XXH3 ring,
//! uhashring and the ring hashes;
//! every algorithm runs the same number of cases, and each order-sensitive
//! one must see placement change in some of them.

use std::sync::OnceLock;

use shardring::{Algorithm, Node, Ring, RingBuilder};

/// Ids `84a4aa705e4550cf` and `ac81c4a16659065d` share point 0 under seed 0:
/// XXH3-64 of either id followed by 4 zero bytes is 13006201352855750151.
const RING_PAIR: [&str; 2] = ["84a4aa705e4550cf", "ac81c4a16659065d"];

/// Hosts whose Envoy/gRPC ring-hash point 0 coincide: XXH64 (seed 0) of
/// `c805723ad813178a_0` and of `e7f4e915eb3a8eb7_0` is
/// 12043477926767263131 (found by a distinguished-point collision search
/// over 16-hex-digit ids, about 2^32 hashes).
const RING_HASH_PAIR: [&str; 2] = ["c805723ad813178a", "e7f4e915eb3a8eb7"];
const RING_HASH_TIE: u64 = 12_043_477_926_767_263_131;

/// The same under `hash_function: murmur_hash_2` (MurmurHash64A, seed
/// 0xc70f6907): `d0122b7983956d6c_0` and `fbd0b721db9edf20_0` hash to
/// 16969076104075114785.
const MURMUR_PAIR: [&str; 2] = ["d0122b7983956d6c", "fbd0b721db9edf20"];
const MURMUR_TIE: u64 = 16_969_076_104_075_114_785;

/// Ids whose uhashring point 0 coincide: the top 64 bits of the MD5 of
/// `c2664d9aed718fd9-0` and of `9bc658ae254aca19-0` are
/// 13794156811576650553 (a distinguished-point collision search over
/// 16-hex-digit ids, about 2^32 MD5s).
const UHASHRING_PAIR: [&str; 2] = ["c2664d9aed718fd9", "9bc658ae254aca19"];
const UHASHRING_TIE: u64 = 13_794_156_811_576_650_553;

/// HAProxy ids whose node keys coincide (`puid * 4096` is equal mod 2^32):
/// every node `j` of one ties with node `j` of the other.
const HAPROXY_PAIRS: [(u32, u32); 2] = [(1, 1 + (1 << 20)), (2, 2 + (1 << 20))];

const KEYS: usize = 1_000;
const CASES: usize = 24;

/// The algorithms whose points can tie, by birthday search over host names
/// (a node's points alone are the points it has among nodes of equal weight).
const BIRTHDAY: [Algorithm; 8] = [
    Algorithm::Ketama,
    Algorithm::KetamaSpy,
    Algorithm::Libketama,
    Algorithm::Nginx,
    Algorithm::Libmemcached,
    Algorithm::Twemproxy,
    Algorithm::UhashringKetama,
    Algorithm::HashringJs,
];

/// Host names for a birthday search: `10.a.b.c:port`.
fn hosts(count: usize, port: u16) -> Vec<String> {
    (0..count).map(|i| format!("10.{}.{}.{}:{port}", 1 + i / 65_536, (i / 256) % 256, i % 256)).collect()
}

/// The parameters each algorithm runs with here: small tables and ring
/// sizes, so that fractional shares and table slots depend on order.
fn configured(algorithm: Algorithm) -> RingBuilder {
    let builder = Ring::builder().algorithm(algorithm);
    match algorithm {
        Algorithm::Maglev | Algorithm::EnvoyMaglev => builder.table_size(1009),
        Algorithm::EnvoyRingHash | Algorithm::GrpcRingHash => builder.min_ring_size(16).max_ring_size(16),
        _ => builder,
    }
}

/// A node of a case: id, weight and, under `haproxy`, its server id.
#[derive(Debug, Clone, PartialEq)]
struct Listed {
    id: String,
    weight: f64,
    puid: Option<u32>,
}

fn build(algorithm: Algorithm, nodes: &[Listed]) -> Ring {
    let mut builder = configured(algorithm).nodes(nodes.iter().map(|n| Node::new(n.id.clone(), n.weight)));
    for node in nodes {
        if let Some(puid) = node.puid {
            builder = builder.haproxy_id(node.id.clone(), puid);
        }
    }
    builder.build().unwrap_or_else(|e| panic!("{algorithm} {nodes:?}: {e}"))
}

/// Two ids and the point they share.
type Collision = ([String; 2], u64);

/// Pairs of ids whose points collide, and the shared point of each: a
/// birthday search over 2,000 hosts of 100 to 160 points each, about a
/// dozen 32-bit collisions per algorithm.
fn collisions(algorithm: Algorithm) -> &'static [Collision] {
    static FOUND: OnceLock<Vec<(Algorithm, Vec<Collision>)>> = OnceLock::new();
    let found = FOUND.get_or_init(|| {
        BIRTHDAY
            .into_iter()
            .map(|algorithm| {
                let port = if algorithm == Algorithm::Nginx { 80 } else { 11211 };
                let mut owner_of = std::collections::HashMap::new();
                let mut pairs = Vec::new();
                for host in hosts(2_000, port) {
                    let alone = configured(algorithm).node(host.clone(), 1.0).build().unwrap();
                    for (point, _) in alone.points() {
                        if let Some(other) = owner_of.insert(point, host.clone())
                            && other != host
                        {
                            pairs.push(([other, host.clone()], point));
                        }
                    }
                }
                assert!(pairs.len() >= 4, "{algorithm}: the birthday search found {} collisions", pairs.len());
                (algorithm, pairs)
            })
            .collect()
    });
    found.iter().find(|(a, _)| *a == algorithm).map_or(&[], |(_, pairs)| pairs.as_slice())
}

/// Candidate nodes of an algorithm, tied ones first in pairs.
fn pool(algorithm: Algorithm) -> Vec<Listed> {
    let plain = |id: String| Listed { id, weight: 1.0, puid: None };
    if BIRTHDAY.contains(&algorithm) {
        let port = if algorithm == Algorithm::Nginx { 80 } else { 11211 };
        let tied = collisions(algorithm).iter().take(4).flat_map(|(pair, _)| pair.clone());
        return tied.chain(hosts(4, port).into_iter().map(|h| h.replace("10.1.", "10.200."))).map(plain).collect();
    }
    match algorithm {
        Algorithm::Ring => {
            RING_PAIR.iter().map(|s| s.to_string()).chain(["a", "b", "c", "d"].map(String::from)).map(plain).collect()
        }
        Algorithm::Uhashring => UHASHRING_PAIR
            .iter()
            .map(|s| s.to_string())
            .chain((0..6).map(|i| format!("cache-{i}")))
            .map(plain)
            .collect(),
        Algorithm::EnvoyRingHash | Algorithm::GrpcRingHash => RING_HASH_PAIR
            .iter()
            .map(|s| s.to_string())
            .chain((0..6).map(|i| format!("10.0.0.{i}:80")))
            .map(plain)
            .collect(),
        Algorithm::Haproxy => {
            let tied = HAPROXY_PAIRS.iter().enumerate().flat_map(|(p, &(x, y))| {
                [(format!("s{p}a"), x), (format!("s{p}b"), y)]
                    .map(|(id, puid)| Listed { puid: Some(puid), ..plain(id) })
            });
            tied.chain(["auto1", "auto2"].map(|id| plain(id.to_owned()))).collect()
        }
        _ => (0..8).map(|i| plain(format!("n{i}"))).collect(),
    }
}

/// A 64-bit LCG, so every run checks the same cases.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, bound: usize) -> usize {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) % bound as u64) as usize
    }
}

/// A case: a tied pair (when the pool has one) plus others, all of weight
/// 1 in even cases (so the ketama modes keep the points that tie), of
/// weights 1 to 3 in odd ones where the algorithm takes weights.
fn case(algorithm: Algorithm, pool: &[Listed], number: usize, random: &mut Lcg) -> Vec<Listed> {
    let mut chosen: Vec<Listed> = Vec::new();
    let pair = 2 * random.below(pool.len() / 2);
    chosen.extend(pool[pair..pair + 2].iter().cloned());
    for _ in 0..random.below(5) {
        let node = &pool[random.below(pool.len())];
        if !chosen.iter().any(|c| c.id == node.id) {
            chosen.push(node.clone());
        }
    }
    if number % 2 == 1 && !algorithm.unit_weights() {
        chosen.iter_mut().for_each(|n| n.weight = (1 + random.below(3)) as f64);
    }
    let start = random.below(chosen.len());
    chosen.rotate_left(start);
    chosen
}

fn shuffled(list: &[Listed], random: &mut Lcg) -> Vec<Listed> {
    let mut list = list.to_vec();
    for i in (1..list.len()).rev() {
        list.swap(i, random.below(i + 1));
    }
    list
}

/// Every point of either ring with its neighbours, and `KEYS` key hashes.
fn probes(a: &Ring, b: &Ring) -> Vec<u64> {
    let bits = a.algorithm().hash_bits();
    let top = if bits == 64 { u64::MAX } else { (1 << bits) - 1 };
    let mut probes: Vec<u64> = a
        .points()
        .chain(b.points())
        .flat_map(|(p, _)| [p.saturating_sub(1), p, p.saturating_add(1).min(top)])
        .collect();
    probes.extend((0..KEYS).map(|i| a.hash_key(format!("key-{i}"))));
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

/// Whether `a` and `b` place every probe alike (every slot, under `slots`).
fn place_alike(a: &Ring, b: &Ring) -> bool {
    if let (Some(x), Some(y)) = (a.slot_ranges(), b.slot_ranges()) {
        let by_id = |r: &Ring, ranges: Vec<Vec<std::ops::RangeInclusive<u16>>>| {
            let mut held: Vec<(String, Vec<std::ops::RangeInclusive<u16>>)> =
                r.nodes().iter().map(|n| n.id().to_owned()).zip(ranges).collect();
            held.sort_by(|p, q| p.0.cmp(&q.0));
            held
        };
        return by_id(a, x) == by_id(b, y);
    }
    let probes = probes(a, b);
    placement(a, &probes) == placement(b, &probes)
}

/// Whether `algorithm`'s fingerprint ignores node order: order does not
/// place keys, and (under `slots`) fresh ranges, which follow the order,
/// are not in play.
fn order_free(algorithm: Algorithm) -> bool {
    !algorithm.order_places_keys() && algorithm != Algorithm::Slots
}

/// Checks `a` against `b`, the same nodes listed in another order; returns
/// whether they place some key differently.
fn check_pair(algorithm: Algorithm, a: &Ring, b: &Ring, what: &str) -> bool {
    let alike = place_alike(a, b);
    let ids = |r: &Ring| r.nodes().iter().map(|n| n.id().to_owned()).collect::<Vec<_>>();
    if order_free(algorithm) {
        assert_eq!(a.fingerprint(), b.fingerprint(), "{algorithm} {what}: {:?} and {:?}", ids(a), ids(b));
        assert!(alike, "{algorithm} {what}: equal fingerprints but placement differs: {:?} and {:?}", ids(a), ids(b));
    } else if matches!(algorithm, Algorithm::Slots | Algorithm::Memento) {
        // The fingerprint holds what order decides (the slot table, fresh or
        // as moved by a derivation; memento's buckets, nodes listed by
        // bucket), so it differs exactly when placement does.
        assert_eq!(a.fingerprint() == b.fingerprint(), alike, "{algorithm} {what}: {:?} and {:?}", ids(a), ids(b));
    } else {
        let same_order = ids(a) == ids(b);
        // The order is in the fingerprint, so it differs exactly when the list does.
        assert_eq!(a.fingerprint() == b.fingerprint(), same_order, "{algorithm} {what}: {:?} and {:?}", ids(a), ids(b));
        assert!(alike || !same_order, "{algorithm} {what}: one list, two placements");
    }
    !alike
}

#[test]
fn permuted_and_derived_lists_keep_fingerprint_and_placement_together() {
    let mut changed_placement = Vec::new();
    for algorithm in Algorithm::ALL {
        let pool = pool(algorithm);
        let mut random = Lcg(algorithm as u64 + 1);
        let mut changed = 0;
        for number in 0..CASES {
            let listed = case(algorithm, &pool, number, &mut random);
            let original = build(algorithm, &listed);
            let permuted = build(algorithm, &shuffled(&listed, &mut random));
            changed += usize::from(check_pair(algorithm, &original, &permuted, "permuted"));
            let back = &listed[random.below(listed.len())];
            let derived = original
                .without_node(&back.id)
                .and_then(|r| r.with_node(Node::new(back.id.clone(), back.weight)))
                .unwrap_or_else(|e| panic!("{algorithm} {listed:?}: {e}"));
            if back.puid.is_none() {
                changed += usize::from(check_pair(algorithm, &original, &derived, "re-added"));
            }
        }
        changed_placement.push((algorithm, changed));
    }
    for (algorithm, changed) in changed_placement {
        if order_free(algorithm) {
            assert_eq!(changed, 0, "{algorithm}");
        } else {
            assert!(changed > 0, "{algorithm}: no permutation changed placement, so none tested the fingerprint");
        }
    }
}

/// Each algorithm's tie rule on forced collisions, in both orders: the
/// earlier server (libmemcached's sort, nginx's and libketama's stable
/// `qsort`, npm hashring's stable sort, HAProxy's tree), the later one
/// (uhashring's dict), or an order-free rule (twemproxy's sorted servers,
/// the ring's id bytes); a tie decided by order changes the fingerprint.
#[test]
fn forced_ties_follow_each_algorithms_rule() {
    let mut checked = Vec::new();
    let forced =
        [Algorithm::Ring, Algorithm::Uhashring, Algorithm::Haproxy, Algorithm::EnvoyRingHash, Algorithm::GrpcRingHash];
    for algorithm in BIRTHDAY.into_iter().chain(forced) {
        let pool = pool(algorithm);
        let pairs: Vec<([Listed; 2], u64)> = match algorithm {
            Algorithm::Ring => vec![([pool[0].clone(), pool[1].clone()], 13_006_201_352_855_750_151)],
            Algorithm::Uhashring => vec![([pool[0].clone(), pool[1].clone()], UHASHRING_TIE)],
            Algorithm::EnvoyRingHash | Algorithm::GrpcRingHash => {
                vec![([pool[0].clone(), pool[1].clone()], RING_HASH_TIE)]
            }
            // Node 0 of both servers: full_hash(puid * 4096), the same for both ids.
            Algorithm::Haproxy => (0..2)
                .map(|p| {
                    let pair = [pool[2 * p].clone(), pool[2 * p + 1].clone()];
                    let puid = pair[0].puid.unwrap();
                    (pair, u64::from(full_hash(puid.wrapping_mul(4096))))
                })
                .collect(),
            _ => collisions(algorithm)
                .iter()
                .take(8)
                .map(|([a, b], tie)| {
                    let node = |id: &String| Listed { id: id.clone(), weight: 1.0, puid: None };
                    ([node(a), node(b)], *tie)
                })
                .collect(),
        };
        for (pair, tie) in &pairs {
            let forward = build(algorithm, pair);
            let reversed = build(algorithm, &[pair[1].clone(), pair[0].clone()]);
            // uhashring takes the first point strictly above a hash.
            let at =
                if matches!(algorithm, Algorithm::Uhashring | Algorithm::UhashringKetama) { tie - 1 } else { *tie };
            let owners = [&forward, &reversed].map(|r| r.get_by_hash(at).unwrap().id().to_owned());
            let (first, second) = (pair[0].id.clone(), pair[1].id.clone());
            let expected = match algorithm {
                Algorithm::Uhashring | Algorithm::UhashringKetama => [second.clone(), first.clone()],
                Algorithm::Ring => [first.clone().min(second.clone()), first.clone().min(second.clone())],
                Algorithm::Twemproxy => {
                    let winner =
                        [first.clone(), second.clone()].into_iter().min_by_key(|id| (id.len(), id.clone())).unwrap();
                    [winner.clone(), winner]
                }
                _ => [first.clone(), second.clone()],
            };
            assert_eq!(owners, expected, "{algorithm}: tie at {tie}");
            assert_eq!(forward.fingerprint() == reversed.fingerprint(), order_free(algorithm), "{algorithm}");
        }
        checked.push((algorithm, pairs.len()));
    }
    // At least four tied pairs for each birthday-searched mode (up to eight), every known pair for the others.
    assert!(checked.iter().all(|&(a, n)| n >= if BIRTHDAY.contains(&a) { 4 } else { 1 }), "{checked:?}");
}

/// HAProxy's `full_hash` (Bob Jenkins' 32-bit integer avalanche, `intops.h`).
fn full_hash(mut a: u32) -> u32 {
    a = a.wrapping_add(0x7ed5_5d16).wrapping_add(a << 12);
    a = (a ^ 0xc761_c23c) ^ (a >> 19);
    a = a.wrapping_add(0x1656_67b1).wrapping_add(a << 5);
    a = a.wrapping_add(0xd3a2_646c) ^ (a << 9);
    a = a.wrapping_add(0xfd70_46c5).wrapping_add(a << 3);
    a = (a ^ 0xb55a_4f09) ^ (a >> 16);
    a.wrapping_mul(3_221_225_473)
}

/// The ring-hash pairs share a point, and under Envoy's and gRPC C-core's
/// order (hosts as given, equal hashes in that order) the host listed
/// first owns it; grpc-go's order sorts the hosts by key first.
#[test]
fn ring_hash_ties_go_to_the_host_reached_first() {
    use shardring::{EndpointOrder, HashFunction};
    for (pair, tie, function) in
        [(RING_HASH_PAIR, RING_HASH_TIE, HashFunction::XxHash), (MURMUR_PAIR, MURMUR_TIE, HashFunction::MurmurHash2)]
    {
        for id in pair {
            let ring = configured(Algorithm::EnvoyRingHash).hash_function(function).node(id, 1.0).build().unwrap();
            assert!(ring.points().any(|(p, _)| p == tie), "{id}: {function:?}");
        }
        for order in [pair, [pair[1], pair[0]]] {
            let nodes = || order.iter().map(|&id| Node::new(id, 1.0));
            let envoy = configured(Algorithm::EnvoyRingHash).hash_function(function).nodes(nodes()).build().unwrap();
            assert_eq!(envoy.get_by_hash(tie).unwrap().id(), order[0], "{function:?}");
            if function == HashFunction::XxHash {
                let go = configured(Algorithm::GrpcRingHash).endpoint_order(EndpointOrder::ByKey).nodes(nodes());
                assert_eq!(go.build().unwrap().get_by_hash(tie).unwrap().id(), pair[0].min(pair[1]));
            }
        }
    }
}

#[test]
fn the_ring_pair_really_collides() {
    let [a, b] =
        RING_PAIR.map(|id| Ring::builder().node(id, 1.0).build().unwrap().points().map(|(p, _)| p).collect::<Vec<_>>());
    assert!(a.iter().any(|p| b.contains(p)));
    assert_eq!(shardring::hash_point(RING_PAIR[0].as_bytes(), 0, 0), 13_006_201_352_855_750_151);
}

/// A whole 2,000-host pool with its dozen collisions, listed in reverse,
/// under the order-free modes that can tie: one fingerprint, one placement.
#[test]
fn large_pools_with_collisions_place_identically_when_order_is_free() {
    let algorithm = Algorithm::Twemproxy;
    let mut ids = hosts(2_000, 11211);
    let forward = configured(algorithm).nodes(ids.iter().map(|id| Node::new(id.clone(), 1.0))).build().unwrap();
    ids.reverse();
    let reversed = configured(algorithm).nodes(ids.iter().map(|id| Node::new(id.clone(), 1.0))).build().unwrap();
    assert_eq!(forward.fingerprint(), reversed.fingerprint());
    let mut probes: Vec<u64> = collisions(algorithm).iter().map(|&(_, tie)| tie).collect();
    probes.extend((0..KEYS).map(|i| forward.hash_key(format!("key-{i}"))));
    assert_eq!(placement(&forward, &probes), placement(&reversed, &probes));
}
