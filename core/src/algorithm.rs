//! The placement algorithms a [`Ring`](crate::Ring) can run, named by the
//! `algorithm` field of a config.

use std::ffi::CStr;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::RingError;
use crate::hash::KeyHash;
use crate::params::Distribution;
use crate::scheme::{Facts, Param, Scheme};
use crate::{
    envoy_maglev, haproxy, hashring_js, jump, jumpback, ketama, libmemcached, maglev, memento, nginx, rendezvous,
    ring_hash, slots, twemproxy, uhashring, vnode,
};

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

    /// The algorithm's implementation, in its own file: the one registry
    /// of algorithms, which every call of [`crate::Ring`] dispatches through.
    pub(crate) fn scheme(self) -> &'static dyn Scheme {
        match self {
            Algorithm::Ring => &vnode::Vnodes,
            Algorithm::Ketama => &ketama::KETAMA,
            Algorithm::KetamaSpy => &ketama::KETAMA_SPY,
            Algorithm::Libketama => &ketama::LIBKETAMA,
            Algorithm::Nginx => &nginx::Nginx,
            Algorithm::Jump => &jump::JumpHash,
            Algorithm::Rendezvous => &rendezvous::Hrw,
            Algorithm::Maglev => &maglev::Maglev,
            Algorithm::Slots => &slots::Slots,
            Algorithm::Libmemcached => &libmemcached::Libmemcached,
            Algorithm::Twemproxy => &twemproxy::Twemproxy,
            Algorithm::Uhashring => &uhashring::UHASHRING,
            Algorithm::UhashringKetama => &uhashring::UHASHRING_KETAMA,
            Algorithm::HashringJs => &hashring_js::HashringJs,
            Algorithm::EnvoyRingHash => &ring_hash::ENVOY,
            Algorithm::EnvoyMaglev => &envoy_maglev::EnvoyMaglev,
            Algorithm::GrpcRingHash => &ring_hash::GRPC,
            Algorithm::Haproxy => &haproxy::Haproxy,
            Algorithm::Jumpback => &jumpback::JumpBack,
            Algorithm::Memento => &memento::Memento,
        }
    }

    pub(crate) fn facts(self) -> &'static Facts {
        self.scheme().facts()
    }

    /// Width in bits of this algorithm's key hash: keys hash into
    /// `[0, 2^bits)`. 64 for XXH3 and uhashring's 64-bit MD5, 32 for the
    /// other named hashes, 14 for Redis slots.
    pub fn hash_bits(self) -> u32 {
        self.facts().hash_bits
    }

    /// Whether `vnodes` (points per unit of weight) is a parameter:
    /// `ring`, and the migration modes, whose peers take one.
    pub fn uses_vnodes(self) -> bool {
        self.default_vnodes().is_some()
    }

    /// The default `vnodes` where it is a parameter: 160 for `ring` and
    /// `uhashring`, 40 for `uhashring-ketama` and `hashring-js` (their peers'
    /// defaults).
    pub fn default_vnodes(self) -> Option<u32> {
        self.facts().vnodes
    }

    /// Whether node order places keys, and so enters the fingerprint: jump
    /// and jumpback (buckets are list positions), memento (nodes given no
    /// bucket take the free ones in list order; its fingerprint lists nodes
    /// by bucket), libmemcached's modes (equal points go
    /// to the earlier server, as libmemcached sorts its continuum by value,
    /// then server index; `modula` takes list positions), and the migration
    /// modes (their peers keep one owner per point value by list order).
    /// Every other algorithm breaks ties by id bytes or sorts its servers,
    /// so its placement is a function of the node set alone.
    pub fn order_places_keys(self) -> bool {
        self.facts().order_places_keys
    }

    /// The distribution used when a config gives none, for the algorithms
    /// that take one: `consistent_ketama` (libmemcached), `ketama`
    /// (twemproxy; npm hashring's default compatibility).
    pub fn default_distribution(self) -> Option<Distribution> {
        self.scheme().default_distribution()
    }

    /// The key hash used when a config gives none, for the algorithms that
    /// take one: libmemcached's depends on the distribution
    /// ([`Distribution::default_key_hash`]), twemproxy's is `fnv1a_64`.
    pub fn default_key_hash(self, distribution: Distribution) -> Option<KeyHash> {
        self.scheme().default_key_hash(distribution)
    }

    /// Whether every node must have weight exactly 1: `jump`, `jumpback` and
    /// `memento`, where a node is a bucket (a ring of them gets capacity
    /// from more nodes, not from weights).
    pub fn unit_weights(self) -> bool {
        self.facts().unit_weights
    }

    /// Whether a node of weight 0 owns no keys. True except under `jump`,
    /// `jumpback` and `memento` (no weights: every node is a bucket), `libmemcached` and
    /// `hashring-js`, which read weight 0 as 1 as their peers do (remove a
    /// server to take it out), and `twemproxy`, which refuses weight 0 as
    /// twemproxy does.
    pub fn weight_zero_drains(self) -> bool {
        self.facts().weight_zero_drains
    }

    /// Whether placement depends on the order in which nodes were removed,
    /// not only on the nodes present: `memento`. Its configs carry the
    /// history (`removed_buckets`, per-node `bucket`), and rings of it
    /// should change by derivation ([`crate::Ring::with_node`],
    /// [`crate::Ring::without_node`]), not by building from a node list.
    pub fn placement_has_history(self) -> bool {
        self.facts().takes(Param::Buckets)
    }

    /// Whether the seed is a parameter; the compatibility modes and `slots`
    /// hash exactly as their peers do, with no seed.
    pub fn uses_seed(self) -> bool {
        self.facts().seeded
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
