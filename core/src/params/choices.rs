//! The types of the ring parameters that name one of a few choices
//! ([`Distribution`], [`ServerIds`], [`EndpointOrder`], [`ServerKey`],
//! [`RendezvousScore`]), each with the names configs write and their
//! parsing. `params.rs` declares the parameters that take them and
//! re-exports them; nothing here depends on it.

use serde::{Deserialize, Serialize};

use crate::error::RingError;
use crate::hash::KeyHash;

/// A libmemcached distribution, as `MEMCACHED_BEHAVIOR_DISTRIBUTION` and the
/// ketama behaviours leave it when the servers are added (the `libmemcached`
/// algorithm's `distribution` parameter). pylibmc equivalents are given in
/// pylibmc's own order of applying behaviours (`hash`, `ketama`,
/// `ketama_weighted`, `distribution`), whatever order its dict lists them in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Distribution {
    /// libmemcached: `h mod server_count`, weights ignored (libmemcached's
    /// and pylibmc's default, no behaviours). twemproxy: `weight` entries per
    /// server in server order, entry `h mod total_weight`.
    Modula,
    /// twemproxy's `distribution: ketama` (its default); npm hashring's
    /// `ketama` compatibility (4 points per digest, its default).
    Ketama,
    /// npm hashring's `hash_ring` compatibility: 3 points per digest.
    HashRing,
    /// `MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA` (`BEHAVIOR_KETAMA=1`;
    /// pylibmc `{"ketama": True}` or `{"distribution": "consistent ketama"}`):
    /// 100 points per server hashed with the key hash while every weight is
    /// at most 1; a weight above 1 switches on weighted MD5 points, while
    /// keys keep the key hash. Key hash default `one_at_a_time`.
    ConsistentKetama,
    /// `MEMCACHED_DISTRIBUTION_CONSISTENT_WEIGHTED`
    /// (`BEHAVIOR_KETAMA_WEIGHTED=1`; pylibmc `{"ketama_weighted": True}`):
    /// weighted MD5 points always. Key hash default `md5`, which the
    /// behaviour sets (pylibmc always ends with MD5 here).
    ConsistentWeighted,
    /// `MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA_SPY` (pylibmc
    /// `{"distribution": "consistent ketama spy"}`): labels `/host:port-i`,
    /// otherwise as `consistent_ketama`. Key hash default `one_at_a_time`.
    ConsistentKetamaSpy,
    /// `BEHAVIOR_KETAMA_WEIGHTED=1` and then `DISTRIBUTION=CONSISTENT_KETAMA_SPY`
    /// (pylibmc `{"ketama_weighted": True, "distribution": "consistent ketama
    /// spy"}`): spy labels, weighted MD5 points always. Key hash default `md5`.
    ConsistentKetamaSpyWeighted,
}

impl Distribution {
    /// Every distribution.
    pub const ALL: [Distribution; 7] = [
        Distribution::Modula,
        Distribution::Ketama,
        Distribution::HashRing,
        Distribution::ConsistentKetama,
        Distribution::ConsistentWeighted,
        Distribution::ConsistentKetamaSpy,
        Distribution::ConsistentKetamaSpyWeighted,
    ];

    /// The name written in configs (`"consistent_ketama"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Distribution::Modula => "modula",
            Distribution::Ketama => "ketama",
            Distribution::HashRing => "hash_ring",
            Distribution::ConsistentKetama => "consistent_ketama",
            Distribution::ConsistentWeighted => "consistent_weighted",
            Distribution::ConsistentKetamaSpy => "consistent_ketama_spy",
            Distribution::ConsistentKetamaSpyWeighted => "consistent_ketama_spy_weighted",
        }
    }

    /// The key hash libmemcached ends with when no `HASH` behaviour follows:
    /// MD5 when `KETAMA_WEIGHTED` was set, else one-at-a-time. (twemproxy's
    /// default, whatever the distribution, is `fnv1a_64`.)
    pub fn default_key_hash(self) -> KeyHash {
        match self {
            Distribution::ConsistentWeighted | Distribution::ConsistentKetamaSpyWeighted => KeyHash::Md5,
            _ => KeyHash::OneAtATime,
        }
    }

    pub(crate) fn weighted(self) -> bool {
        matches!(self, Distribution::ConsistentWeighted | Distribution::ConsistentKetamaSpyWeighted)
    }

    pub(crate) fn spy(self) -> bool {
        matches!(self, Distribution::ConsistentKetamaSpy | Distribution::ConsistentKetamaSpyWeighted)
    }
}

impl std::fmt::Display for Distribution {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Distribution {
    type Err = RingError;

    /// Parses a name as written by [`Distribution::name`]. Errors:
    /// [`RingError::InvalidConfig`] naming the unknown value and the known ones.
    fn from_str(name: &str) -> Result<Distribution, RingError> {
        Distribution::ALL.into_iter().find(|d| d.name() == name).ok_or_else(|| RingError::InvalidConfig {
            message: format!(
                "unknown distribution {name:?}; expected one of {}",
                Distribution::ALL.map(Distribution::name).join(", ")
            ),
        })
    }
}

/// What a twemproxy ring's node ids are (the `server_ids` parameter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ServerIds {
    /// Server addresses, `host:port` (`[ipv6]:port`, `/socket`), as a
    /// server line without a name: the label base is `host` at port 11211,
    /// else `host:port`.
    #[default]
    Address,
    /// Label bases used literally: a server line's `name` (or, for a server
    /// without one, the base twemproxy would derive, written out).
    Label,
}

impl ServerIds {
    /// The name written in configs: `"address"` or `"label"`.
    pub fn name(self) -> &'static str {
        match self {
            ServerIds::Address => "address",
            ServerIds::Label => "label",
        }
    }
}

impl std::str::FromStr for ServerIds {
    type Err = RingError;

    /// Parses `"address"` or `"label"`. Errors: [`RingError::InvalidConfig`]
    /// naming the value.
    fn from_str(name: &str) -> Result<ServerIds, RingError> {
        [ServerIds::Address, ServerIds::Label].into_iter().find(|i| i.name() == name).ok_or_else(|| {
            RingError::InvalidConfig {
                message: format!("unknown server_ids {name:?}; expected \"address\" or \"label\""),
            }
        })
    }
}

/// Which order a gRPC `ring_hash` client walks its endpoints in while it
/// lays out the ring (the `endpoint_order` parameter of `grpc-ring-hash`):
/// the endpoint reaching a fractional point target first gets the point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum EndpointOrder {
    /// As the resolver lists them, the nodes' order: gRPC C-core (C++,
    /// Python, Ruby, PHP), as Envoy does.
    #[default]
    Given,
    /// Sorted by hash key, bytewise: grpc-go.
    ByKey,
}

impl EndpointOrder {
    /// The name written in configs: `"given"` or `"by_key"`.
    pub fn name(self) -> &'static str {
        match self {
            EndpointOrder::Given => "given",
            EndpointOrder::ByKey => "by_key",
        }
    }
}

impl std::str::FromStr for EndpointOrder {
    type Err = RingError;

    /// Parses `"given"` or `"by_key"`. Errors: [`RingError::InvalidConfig`] naming the value.
    fn from_str(name: &str) -> Result<EndpointOrder, RingError> {
        [EndpointOrder::Given, EndpointOrder::ByKey].into_iter().find(|o| o.name() == name).ok_or_else(|| {
            RingError::InvalidConfig {
                message: format!("unknown endpoint_order {name:?}; expected \"given\" or \"by_key\""),
            }
        })
    }
}

/// What an HAProxy server's node keys derive from (the `server_key`
/// parameter of `haproxy`, HAProxy's server `hash-key`), named after the
/// HAProxy versions that have each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ServerKey {
    /// `puid * 4096`: HAProxy 2.6 (no `hash-key`), and `hash-key id` (the
    /// default) from 3.0 once commit 03e9a5a1e is in.
    #[default]
    Id,
    /// `full_hash(puid)`: the default `id` key of HAProxy 3.0 up to commit
    /// 03e9a5a1e (3.3-dev10, 2025-10-16), a regression later backported away.
    IdFullHash,
    /// `full_hash(htonl(puid))`: `hash-key id32` (HAProxy 3.4).
    Id32,
}

impl ServerKey {
    /// Every server key.
    pub const ALL: [ServerKey; 3] = [ServerKey::Id, ServerKey::IdFullHash, ServerKey::Id32];

    /// The name written in configs: `"id"`, `"id_full_hash"` or `"id32"`.
    pub fn name(self) -> &'static str {
        match self {
            ServerKey::Id => "id",
            ServerKey::IdFullHash => "id_full_hash",
            ServerKey::Id32 => "id32",
        }
    }
}

impl std::str::FromStr for ServerKey {
    type Err = RingError;

    /// Parses a name as written by [`ServerKey::name`]. Errors:
    /// [`RingError::InvalidConfig`] naming the value and the known ones.
    fn from_str(name: &str) -> Result<ServerKey, RingError> {
        ServerKey::ALL.into_iter().find(|k| k.name() == name).ok_or_else(|| RingError::InvalidConfig {
            message: format!(
                "unknown server_key {name:?}; expected one of {}",
                ServerKey::ALL.map(ServerKey::name).join(", ")
            ),
        })
    }
}

/// How `rendezvous` scores a node for a key (the `score` parameter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RendezvousScore {
    /// The weight over `-log2(u)` computed in 64-bit fixed point by integer
    /// operations only (`core/SPEC.md`, *rendezvous*): every platform
    /// places every key alike. The default.
    #[default]
    Integer,
    /// Placement format 1's `-w / ln(u)` in binary64 with the platform's
    /// `ln`, whose last bit differs between C libraries (glibc, musl,
    /// macOS), so near-equal scores can rank differently across platforms:
    /// for rings that must keep the placement they had before `integer`.
    Float,
}

impl RendezvousScore {
    /// Every score.
    pub const ALL: [RendezvousScore; 2] = [RendezvousScore::Integer, RendezvousScore::Float];

    /// The name written in configs: `"integer"` or `"float"`.
    pub fn name(self) -> &'static str {
        match self {
            RendezvousScore::Integer => "integer",
            RendezvousScore::Float => "float",
        }
    }
}

impl std::str::FromStr for RendezvousScore {
    type Err = RingError;

    /// Parses `"integer"` or `"float"`. Errors: [`RingError::InvalidConfig`] naming the value.
    fn from_str(name: &str) -> Result<RendezvousScore, RingError> {
        RendezvousScore::ALL.into_iter().find(|s| s.name() == name).ok_or_else(|| RingError::InvalidConfig {
            message: format!("unknown score {name:?}; expected \"integer\" or \"float\""),
        })
    }
}
