//! The cases of the other algorithms (ketama, libketama, nginx, jump,
//! rendezvous with the float score, maglev, slots), followed by every
//! family's list: the cases after the format-1 ones, in file order.

use shardring::{Algorithm, RendezvousScore, Ring};

use super::balancers::balancer_cases;
use super::case::{Case, ring_case, with_hash_lookups, with_hashes};
use super::fixtures::{
    MEMCACHED_SERVERS, WEIGHTED, algorithm_ring, fixture_keys, numbered_keys, text_keys, two_zones, weighted_ring,
};
use super::libmemcached::libmemcached_cases;
use super::migration::migration_cases;
use super::modern::modern_cases;
use super::twemproxy::twemproxy_cases;

pub(crate) fn algorithm_cases() -> Vec<Case> {
    let ten: Vec<String> = (0..10).map(|i| format!("shard-{i}")).collect();
    let ten: Vec<(&str, f64)> = ten.iter().map(|id| (id.as_str(), 1.0)).collect();
    let weighted = WEIGHTED;
    let zoned = two_zones();
    let redis_keys = text_keys(&[
        "somekey",
        "foo{hash_tag}",
        "{user1000}.following",
        "{user1000}.followers",
        "foo{}{bar}",
        "foo{{bar}}zap",
        "",
        "123456789",
    ]);
    let slot_edges = vec![5460, 5461, 10922, 10923, 16383, 16384];
    let explicit_slots = Ring::builder()
        .algorithm(Algorithm::Slots)
        .node("redis-a:6379", 1.0)
        .node("redis-b:6379", 1.0)
        .node("redis-c:6379", 1.0)
        .slot_ranges("redis-a:6379", [0..=99, 200..=8191])
        .slot_ranges("redis-b:6379", [100..=199, 8192..=12000])
        .slot_ranges("redis-c:6379", [12001..=16383])
        .build()
        .unwrap();
    vec![
        ring_case(
            "ketama: libmemcached's fixture servers",
            algorithm_ring(Algorithm::Ketama, &MEMCACHED_SERVERS),
            &fixture_keys(24),
            &[1, 3],
        ),
        ring_case(
            "ketama-spy: libmemcached's fixture servers",
            algorithm_ring(Algorithm::KetamaSpy, &MEMCACHED_SERVERS),
            &fixture_keys(24),
            &[1, 3],
        ),
        with_hash_lookups(ring_case(
            "ketama: ports other than 11211, IPv6, lookups by hash on every point",
            algorithm_ring(Algorithm::Ketama, &[("cache-a:11212", 1.0), ("[::1]:11311", 1.0), ("cache-c", 0.0)]),
            &numbered_keys("mc:", 8),
            &[2],
        )),
        ring_case(
            "libketama: the 600/400 example",
            algorithm_ring(Algorithm::Libketama, &[("127.0.0.1:11211", 600.0), ("127.0.0.1:11212", 400.0)]),
            &text_keys(&["test", "foo", "bar", "user:1", ""]),
            &[1, 2],
        ),
        ring_case(
            "libketama: weights 6/5/1/3/10 (float32 edge)",
            algorithm_ring(
                Algorithm::Libketama,
                &[("s1:1", 6.0), ("s2:1", 5.0), ("s3:1", 1.0), ("s4:1", 3.0), ("s5:1", 10.0)],
            ),
            &numbered_keys("k", 12),
            &[1, 3],
        ),
        ring_case(
            "ketama: weights 6/5/1/3/10 (float32 edge)",
            algorithm_ring(
                Algorithm::Ketama,
                &[("s1:1", 6.0), ("s2:1", 5.0), ("s3:1", 1.0), ("s4:1", 3.0), ("s5:1", 10.0)],
            ),
            &numbered_keys("k", 12),
            &[1, 3],
        ),
        ring_case(
            "nginx: host:port, hostname, unix socket, IPv6, weight 2",
            algorithm_ring(
                Algorithm::Nginx,
                &[
                    ("127.0.0.1:8080", 1.0),
                    ("backend.example.com", 2.0),
                    ("unix:/tmp/app.sock", 1.0),
                    ("[::1]:80", 1.0),
                ],
            ),
            &text_keys(&["/", "/index.html", "/api/v1/users/42", "", "\u{e9}t\u{e9}"]),
            &[1, 4],
        ),
        // Two servers sharing point 849932538 (crc32 chains of
        // 127.0.0.1:20412 and 127.0.0.1:20195): the one listed first wins.
        with_hashes(
            ring_case(
                "nginx: a tie goes to the server listed first (byte-larger id first)",
                algorithm_ring(
                    Algorithm::Nginx,
                    &[("127.0.0.1:20412", 1.0), ("127.0.0.1:20195", 1.0), ("localhost:20999", 2.0)],
                ),
                &numbered_keys("t", 8),
                &[1, 3],
            ),
            vec![849932537, 849932538, 849932539],
        ),
        with_hashes(
            ring_case(
                "nginx: a tie goes to the server listed first (byte-smaller id first)",
                algorithm_ring(
                    Algorithm::Nginx,
                    &[("127.0.0.1:20195", 1.0), ("127.0.0.1:20412", 1.0), ("localhost:20999", 2.0)],
                ),
                &numbered_keys("t", 8),
                &[1, 3],
            ),
            vec![849932537, 849932538, 849932539],
        ),
        with_hashes(
            ring_case(
                "nginx: a server marked down keeps the tie it wins, and keys skip its points",
                Ring::builder()
                    .algorithm(Algorithm::Nginx)
                    .node("127.0.0.1:20412", 1.0)
                    .node("127.0.0.1:20195", 1.0)
                    .node("localhost:20999", 2.0)
                    .down("127.0.0.1:20412", true)
                    .build()
                    .unwrap(),
                &numbered_keys("t", 8),
                &[1, 3],
            ),
            vec![849932537, 849932538, 849932539],
        ),
        // 10.1.0.72:11211 and 10.1.1.102:11211 share point 4057872511.
        with_hashes(
            ring_case(
                "libketama: a tie goes to the server listed first",
                algorithm_ring(Algorithm::Libketama, &[("10.1.1.102:11211", 1.0), ("10.1.0.72:11211", 1.0)]),
                &numbered_keys("k", 8),
                &[1, 2],
            ),
            vec![4057872510, 4057872511, 4057872512],
        ),
        with_hashes(
            ring_case(
                "libketama: a tie goes to the server listed first, the other order",
                algorithm_ring(Algorithm::Libketama, &[("10.1.0.72:11211", 1.0), ("10.1.1.102:11211", 1.0)]),
                &numbered_keys("k", 8),
                &[1, 2],
            ),
            vec![4057872510, 4057872511, 4057872512],
        ),
        with_hashes(
            ring_case(
                "jump: ten nodes in list order",
                algorithm_ring(Algorithm::Jump, &ten),
                &numbered_keys("obj-", 24),
                &[1, 3, 10],
            ),
            vec![1, 42, 0xDEAD_10CC, 1 << 63],
        ),
        // Placement format 1's float score, as these cases recorded it before the integer score.
        with_hashes(
            ring_case(
                "rendezvous: weights 1/2/1 and a drained node",
                weighted_ring(Algorithm::Rendezvous, &weighted, &|b| b.score(RendezvousScore::Float)),
                &numbered_keys("r", 24),
                &[1, 2, 4],
            ),
            vec![1, 1 << 32, 1 << 63],
        ),
        ring_case(
            "rendezvous: zones and a seed",
            Ring::builder()
                .algorithm(Algorithm::Rendezvous)
                .score(RendezvousScore::Float)
                .seed(7)
                .nodes(zoned.clone())
                .build()
                .unwrap(),
            &numbered_keys("z", 16),
            &[2, 3, 5],
        ),
        with_hashes(
            ring_case(
                "maglev: default table, weights 1/2/1",
                algorithm_ring(Algorithm::Maglev, &weighted),
                &numbered_keys("m", 24),
                &[1, 3],
            ),
            vec![1, 1 << 32, 1 << 63, 0x8000_7FFF_0000_0000],
        ),
        ring_case(
            "maglev: table of 13 slots, zones",
            Ring::builder().algorithm(Algorithm::Maglev).table_size(13).nodes(zoned).build().unwrap(),
            &numbered_keys("t", 16),
            &[1, 2, 5],
        ),
        with_hashes(
            ring_case(
                "slots: three nodes as redis-cli creates them",
                algorithm_ring(
                    Algorithm::Slots,
                    &[("redis-a:6379", 1.0), ("redis-b:6379", 1.0), ("redis-c:6379", 1.0)],
                ),
                &redis_keys,
                &[1, 3],
            ),
            slot_edges.clone(),
        ),
        with_hashes(ring_case("slots: explicit ranges", explicit_slots, &redis_keys, &[1, 2]), slot_edges),
    ]
    .into_iter()
    .chain(libmemcached_cases())
    .chain(twemproxy_cases())
    .chain(migration_cases())
    .chain(balancer_cases())
    .chain(modern_cases())
    .collect()
}
