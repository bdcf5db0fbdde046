//! The registry of algorithms: each [`Algorithm`] to its [`Scheme`], the
//! unit value in its own file (`algorithms/` or `compat/`), and what the
//! facade and the bindings ask of an algorithm without building a ring.
//! Adding an algorithm adds its arm here.

use crate::algorithm::Algorithm;
use crate::algorithms::{jump, jumpback, maglev, memento, rendezvous, slots, vnodes};
use crate::compat::{
    envoy_grpc, envoy_maglev, haproxy, hashring_js, ketama, libmemcached, nginx, twemproxy, uhashring,
};
use crate::hash::KeyHash;
use crate::params::{Distribution, Param};
use crate::scheme::{Facts, Scheme};

impl Algorithm {
    /// The algorithm's implementation, in its own file: the one registry
    /// of algorithms, which every call of [`crate::Ring`] dispatches through.
    pub(crate) fn scheme(self) -> &'static dyn Scheme {
        match self {
            Algorithm::Ring => &vnodes::Vnodes,
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
            Algorithm::EnvoyRingHash => &envoy_grpc::ENVOY,
            Algorithm::EnvoyMaglev => &envoy_maglev::EnvoyMaglev,
            Algorithm::GrpcRingHash => &envoy_grpc::GRPC,
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
        self.facts().unit_weights.is_some()
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
