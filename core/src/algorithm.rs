//! The placement algorithms a [`Ring`](crate::Ring) can run, named by the
//! `algorithm` field of a config.

use std::ffi::CStr;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::RingError;

/// Placement algorithm of a ring. Every algorithm answers the same calls
/// (`get`, `get_n`, derivations, ownership, diff); they differ in how keys
/// and nodes are hashed and in what each promises. Byte-exact rules for each
/// are in `core/SPEC.md`.
///
/// | name         | key hash                  | weights        | source |
/// |--------------|---------------------------|----------------|--------|
/// | `ring`       | XXH3-64                   | any `>= 0`     | Karger et al. 1997; Dynamo |
/// | `ketama`     | MD5, 32 bits              | whole numbers  | libmemcached `CONSISTENT_KETAMA`, weighted |
/// | `ketama-spy` | MD5, 32 bits              | whole numbers  | libmemcached `CONSISTENT_KETAMA_SPY`, weighted |
/// | `libketama`  | MD5, 32 bits              | whole numbers  | last.fm libketama |
/// | `nginx`      | CRC-32                    | whole numbers  | nginx `hash $key consistent` |
/// | `jump`       | XXH3-64                   | exactly 1      | Lamping & Veach 2014 |
/// | `rendezvous` | XXH3-64                   | any `>= 0`     | Thaler & Ravishankar 1998, logarithmic weighting |
/// | `maglev`     | XXH3-64                   | any `>= 0`     | Eisenbud et al. 2016 |
/// | `slots`      | CRC16/XMODEM mod 16384    | any `>= 0`     | Redis Cluster key slots |
/// | `libmemcached` | its `key_hash` (default one-at-a-time) | whole numbers, 0 read as 1 | libmemcached 1.1, every distribution |
/// | `twemproxy`  | its `hash:` (default fnv1a_64) | whole numbers >= 1 | twemproxy 0.5 `ketama` and `modula` |
/// | `uhashring`  | MD5, top 64 of 128 bits   | whole numbers  | uhashring 2.x default ring |
/// | `uhashring-ketama` | MD5, 32 bits        | whole numbers  | uhashring 2.x `hash_fn="ketama"` |
/// | `hashring-js` | MD5, 32 bits             | any `>= 0`, 0 read as 1 | npm hashring 3.2.0 |
/// | `envoy-ring-hash` | XXH64                | whole numbers >= 1 | Envoy `RING_HASH` |
/// | `envoy-maglev` | XXH64                   | whole numbers >= 1 | Envoy `MAGLEV` |
/// | `grpc-ring-hash` | XXH64                 | whole numbers, 0 read as 1 | gRPC `ring_hash` (A42) |
/// | `haproxy`    | sdbm, djb2, wt6 or crc32, 32 bits | whole numbers 0 to 256 | HAProxy `hash-type consistent` |
/// | `jumpback`   | XXH3-64                   | exactly 1      | Ertl 2024 (JumpBackHash), bit-exact with hash4j |
/// | `memento`    | XXH3-64                   | exactly 1      | Coluzzi et al. 2024 (MementoHash) |
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Algorithm {
    /// Weighted virtual nodes on a 64-bit ring ([`crate::Ring`]'s own format).
    #[default]
    Ring,
    /// libmemcached's weighted ketama: bit-exact with its clients.
    Ketama,
    /// libmemcached's weighted ketama in "spy" mode (point strings `/host:port-i`).
    KetamaSpy,
    /// The original last.fm libketama continuum.
    Libketama,
    /// nginx's `hash $key consistent;` (also Cache::Memcached::Fast).
    Nginx,
    /// Jump consistent hash over the node list in order.
    Jump,
    /// Weighted rendezvous (highest random weight) hashing.
    Rendezvous,
    /// Maglev lookup table of a prime size.
    Maglev,
    /// Redis Cluster key slots and a slot -> node assignment.
    Slots,
    /// libmemcached exactly as configured: a [`crate::Distribution`]
    /// (`modula`, or one of the consistent ketama ones) and a
    /// [`crate::KeyHash`], weight 0 read as 1.
    Libmemcached,
    /// twemproxy (nutcracker) exactly as configured: `distribution`
    /// (`ketama` or `modula`), `hash:` as [`crate::KeyHash`], server names
    /// or addresses as ids, `hash_tag`.
    Twemproxy,
    /// uhashring 2.x's default ring (128-bit MD5 points, `vnodes * weight`
    /// per node): for moving off that library without emptying caches.
    Uhashring,
    /// uhashring 2.x with `hash_fn="ketama"`.
    UhashringKetama,
    /// npm `hashring` 3.2.0 (`ketama` or `hash_ring` compatibility,
    /// `default port`): for moving off that package without emptying caches.
    HashringJs,
    /// Envoy's `RING_HASH` load balancer: `min_ring_size`, `max_ring_size`,
    /// `hash_function` (`xx_hash` or `murmur_hash_2`).
    EnvoyRingHash,
    /// Envoy's `MAGLEV` load balancer: `table_size`.
    EnvoyMaglev,
    /// gRPC's `ring_hash` policy: `min_ring_size`, `max_ring_size` (both
    /// capped at 4,096), `endpoint_order` (C-core's or grpc-go's).
    GrpcRingHash,
    /// HAProxy's `hash-type consistent`: `hash_function`, `avalanche`,
    /// `server_key`, per-node server ids.
    Haproxy,
    /// JumpBackHash over the node list in order: jump's guarantees (only
    /// appending or removing the last node is minimal) in expected
    /// constant time, bit-exact with hash4j's `jumpBackHashSplitMix64()`.
    Jumpback,
    /// MementoHash over JumpBackHash: buckets any of which may be removed
    /// with only its keys moving; the removal history (per-node `bucket`,
    /// `removed_buckets`) is part of the ring. With no removals,
    /// `jumpback`'s placement exactly.
    Memento,
}

impl Algorithm {
    /// Every algorithm, in the order of this enum.
    pub const ALL: [Algorithm; 20] = [
        Algorithm::Ring,
        Algorithm::Ketama,
        Algorithm::KetamaSpy,
        Algorithm::Libketama,
        Algorithm::Nginx,
        Algorithm::Jump,
        Algorithm::Rendezvous,
        Algorithm::Maglev,
        Algorithm::Slots,
        Algorithm::Libmemcached,
        Algorithm::Twemproxy,
        Algorithm::Uhashring,
        Algorithm::UhashringKetama,
        Algorithm::HashringJs,
        Algorithm::EnvoyRingHash,
        Algorithm::EnvoyMaglev,
        Algorithm::GrpcRingHash,
        Algorithm::Haproxy,
        Algorithm::Jumpback,
        Algorithm::Memento,
    ];

    /// The name written in configs and accepted by every binding (`"ring"`,
    /// `"ketama-spy"`, ...).
    pub fn name(self) -> &'static str {
        self.c_name().to_str().expect("algorithm names are ASCII")
    }

    /// [`Algorithm::name`] NUL-terminated, for C callers: static, never freed.
    pub fn c_name(self) -> &'static CStr {
        match self {
            Algorithm::Ring => c"ring",
            Algorithm::Ketama => c"ketama",
            Algorithm::KetamaSpy => c"ketama-spy",
            Algorithm::Libketama => c"libketama",
            Algorithm::Nginx => c"nginx",
            Algorithm::Jump => c"jump",
            Algorithm::Rendezvous => c"rendezvous",
            Algorithm::Maglev => c"maglev",
            Algorithm::Slots => c"slots",
            Algorithm::Libmemcached => c"libmemcached",
            Algorithm::Twemproxy => c"twemproxy",
            Algorithm::Uhashring => c"uhashring",
            Algorithm::UhashringKetama => c"uhashring-ketama",
            Algorithm::HashringJs => c"hashring-js",
            Algorithm::EnvoyRingHash => c"envoy-ring-hash",
            Algorithm::EnvoyMaglev => c"envoy-maglev",
            Algorithm::GrpcRingHash => c"grpc-ring-hash",
            Algorithm::Haproxy => c"haproxy",
            Algorithm::Jumpback => c"jumpback",
            Algorithm::Memento => c"memento",
        }
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Algorithm {
    type Err = RingError;

    /// Parses a name as written by [`Algorithm::name`]. Errors:
    /// [`RingError::InvalidConfig`] naming the unknown value and the known ones.
    fn from_str(name: &str) -> Result<Algorithm, RingError> {
        Algorithm::ALL.into_iter().find(|a| a.name() == name).ok_or_else(|| RingError::InvalidConfig {
            message: format!(
                "unknown algorithm {name:?}; expected one of {}",
                Algorithm::ALL.map(Algorithm::name).join(", ")
            ),
        })
    }
}
