//! A ring's parameters besides its nodes: the peer parameter types
//! ([`Distribution`], [`ServerIds`], ...; declared in `params/choices.rs`,
//! re-exported here), the parameters as given ([`RingParams`]), and as each
//! algorithm resolves them ([`Params`]). Which algorithm takes which is
//! stated by each algorithm's scheme (`Facts::takes`).

use serde::{Deserialize, Serialize};

use crate::algorithm::Algorithm;
use crate::error::RingError;
use crate::hash::{HashFunction, KeyHash, KeyRule};

mod choices;

pub use choices::{Distribution, EndpointOrder, RendezvousScore, ServerIds, ServerKey};

/// Default points per unit of weight. At 160 points, 10 equal nodes hold
/// between about 0.9x and 1.1x of the mean load (docs/performance.md, the
/// classic experiments); 160 is also libketama's and nginx's count per server.
pub const DEFAULT_VNODES: u32 = 160;

/// Default ring seed for key and point hashes.
pub const DEFAULT_SEED: u64 = 0;

/// A parameter of [`RingParams`], as an algorithm's facts name the ones it
/// takes (`vnodes` and `seed` are stated by `Facts::vnodes` and
/// `Facts::seeded` instead).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Param {
    Vnodes,
    Seed,
    TableSize,
    Distribution,
    KeyHash,
    ServerIds,
    HashTag,
    DefaultPort,
    SlotRanges,
    MinRingSize,
    MaxRingSize,
    HashFunction,
    EndpointOrder,
    Avalanche,
    ServerKey,
    /// Per-node HAProxy server ids (`puid`s).
    ServerPuids,
    /// Per-node buckets and the removed buckets (`memento`).
    Buckets,
    /// How `rendezvous` scores nodes.
    Score,
    /// Per-node `down` flags (`nginx`): the node keeps its points, but
    /// keys skip them.
    Down,
}

impl Param {
    /// The parameter a [`RingParams`] field name stands for.
    fn named(name: &str) -> Param {
        match name {
            "vnodes" => Param::Vnodes,
            "seed" => Param::Seed,
            "table_size" => Param::TableSize,
            "distribution" => Param::Distribution,
            "key_hash" => Param::KeyHash,
            "server_ids" => Param::ServerIds,
            "hash_tag" => Param::HashTag,
            "default_port" => Param::DefaultPort,
            "min_ring_size" => Param::MinRingSize,
            "max_ring_size" => Param::MaxRingSize,
            "hash_function" => Param::HashFunction,
            "endpoint_order" => Param::EndpointOrder,
            "avalanche" => Param::Avalanche,
            "server_key" => Param::ServerKey,
            "score" => Param::Score,
            "removed_buckets" => Param::Buckets,
            other => unreachable!("{other} is no RingParams field"),
        }
    }

    /// The parameter's name, as configs and messages write it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Param::Vnodes => "vnodes",
            Param::Seed => "seed",
            Param::TableSize => "table_size",
            Param::Distribution => "distribution",
            Param::KeyHash => "key_hash",
            Param::ServerIds => "server_ids",
            Param::HashTag => "hash_tag",
            Param::DefaultPort => "default_port",
            Param::SlotRanges => "slots",
            Param::MinRingSize => "min_ring_size",
            Param::MaxRingSize => "max_ring_size",
            Param::HashFunction => "hash_function",
            Param::EndpointOrder => "endpoint_order",
            Param::Avalanche => "avalanche",
            Param::ServerKey => "server_key",
            Param::ServerPuids => "haproxy_id",
            Param::Buckets => "removed_buckets",
            Param::Score => "score",
            Param::Down => "down",
        }
    }
}

/// A ring's algorithm and every parameter, each `None` when left out (the
/// algorithm's default then applies): the one list of parameters, which
/// the builder ([`crate::RingBuilder::params`]), a config
/// ([`crate::RingConfig::params`]), etcd's `P/config` record and
/// [`crate::Ring::params`] share, and which the bindings convert their
/// keyword options into. As JSON, the fields of a config besides
/// `format_version` and `nodes` (`docs/config.schema.json`); a field the
/// algorithm does not take is an [`RingError::InvalidConfig`] naming it,
/// when the ring is built. Per-node settings (zone, HAProxy id, bucket,
/// `down`, slots) are on the nodes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a ring config object")]
pub struct RingParams {
    /// The placement algorithm (default `ring`).
    #[serde(default)]
    pub algorithm: Algorithm,
    /// Points per unit of weight: `ring` (default [`DEFAULT_VNODES`], at least 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vnodes: Option<u32>,
    /// Seed of the XXH3 key and point hashes: `ring`, `jump`, `rendezvous`,
    /// `maglev`, `jumpback`, `memento` (default 0); the peer modes and
    /// `slots` hash unseeded and accept only 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Lookup table size, a prime: `maglev` (at least the node count, at
    /// most [`crate::MAX_POINTS`]) and `envoy-maglev` (up to 5,000,011);
    /// default 65,537.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_size: Option<u32>,
    /// The peer's distribution: `libmemcached` (default
    /// `consistent_ketama`), `twemproxy` (`ketama` or `modula`, default
    /// `ketama`), `hashring-js` (`ketama` or `hash_ring`, default `ketama`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distribution: Option<Distribution>,
    /// The named key hash: `libmemcached` (default MD5 for the weighted
    /// distributions, one-at-a-time otherwise; the hashes Debian's
    /// libhashkit 1.1.4 builds) and `twemproxy` (its `hash:`, default
    /// `fnv1a_64`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_hash: Option<KeyHash>,
    /// What node ids are: `twemproxy` (default `address`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_ids: Option<ServerIds>,
    /// twemproxy's `hash_tag`, two bytes such as `"{}"`: `twemproxy`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hash_tag: Option<String>,
    /// npm hashring's `default port`: `hashring-js` (default none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_port: Option<u16>,
    /// `minimum_ring_size`: `envoy-ring-hash` and `grpc-ring-hash` (default
    /// 1,024; 1 to 8,388,608, gRPC's capped at 4,096).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_ring_size: Option<u64>,
    /// `maximum_ring_size`: `envoy-ring-hash` (default 8,388,608) and
    /// `grpc-ring-hash` (default and cap 4,096); at least the minimum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_ring_size: Option<u64>,
    /// The balancer's hash function: `envoy-ring-hash` (its points' host
    /// hash, `xx_hash` or `murmur_hash_2`, default `xx_hash`),
    /// `grpc-ring-hash` (`xx_hash` only), `haproxy` (the request hash,
    /// `sdbm`, `djb2`, `wt6`, `crc32`, default `sdbm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hash_function: Option<HashFunction>,
    /// The endpoint order: `grpc-ring-hash` (`given`, gRPC C-core's and the
    /// default, or `by_key`, grpc-go's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint_order: Option<EndpointOrder>,
    /// HAProxy's `avalanche`: `haproxy` (default on without
    /// `hash_function`, off with one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub avalanche: Option<bool>,
    /// What HAProxy node keys derive from: `haproxy` (default `id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_key: Option<ServerKey>,
    /// How nodes are scored: `rendezvous` (default `integer`; `float` is
    /// placement format 1's, with the platform's `ln`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<RendezvousScore>,
    /// The removed buckets in removal order, oldest first: `memento`
    /// (default none). With the nodes' buckets they make up the bucket
    /// array `0..nodes + removed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub removed_buckets: Option<Vec<u32>>,
}

impl RingParams {
    /// Default parameters for `algorithm`: every parameter left out.
    pub fn new(algorithm: Algorithm) -> RingParams {
        RingParams { algorithm, ..RingParams::default() }
    }

    /// Each parameter given (the algorithm aside), with the value as an
    /// error names it: the list the facade checks against what the
    /// algorithm takes.
    pub(crate) fn given(&self) -> Vec<(Param, String)> {
        self.values()
            .into_iter()
            .filter(|(name, _)| *name != "algorithm")
            .map(|(name, value)| (Param::named(name), value.to_string()))
            .collect()
    }

    /// Every parameter the struct holds, by name, with the kind of value it
    /// takes: the list the bindings convert their keyword options by, so a
    /// parameter added to the struct (and to [`RingParams::set`] and
    /// [`RingParams::values`], beside it) needs no code in any binding.
    pub const KINDS: [(&'static str, ParamKind); 17] = [
        ("algorithm", ParamKind::Name),
        ("vnodes", ParamKind::Whole { max: u32::MAX as u64 }),
        ("seed", ParamKind::Whole { max: u64::MAX }),
        ("table_size", ParamKind::Whole { max: u32::MAX as u64 }),
        ("distribution", ParamKind::Name),
        ("key_hash", ParamKind::Name),
        ("server_ids", ParamKind::Name),
        ("hash_tag", ParamKind::Text),
        ("default_port", ParamKind::Whole { max: u16::MAX as u64 }),
        ("min_ring_size", ParamKind::Whole { max: u64::MAX }),
        ("max_ring_size", ParamKind::Whole { max: u64::MAX }),
        ("hash_function", ParamKind::Name),
        ("endpoint_order", ParamKind::Name),
        ("avalanche", ParamKind::Flag),
        ("server_key", ParamKind::Name),
        ("score", ParamKind::Name),
        ("removed_buckets", ParamKind::Wholes { max: u32::MAX as u64 }),
    ];

    /// The kind of value parameter `name` takes; `None` for a name that is
    /// no parameter.
    pub fn kind(name: &str) -> Option<ParamKind> {
        RingParams::KINDS.iter().find(|(n, _)| *n == name).map(|&(_, kind)| kind)
    }

    /// Sets parameter `name` (as a config names it) to `value`, which a
    /// binding converted by the parameter's [`ParamKind`].
    ///
    /// Errors: [`RingError::InvalidConfig`] naming the parameter for a name
    /// that is no parameter, a value of another kind or beyond the kind's
    /// maximum, or an unknown name of a choice (`unknown distribution
    /// "x"; expected one of ...`).
    pub fn set(&mut self, name: &str, value: ParamValue) -> Result<(), RingError> {
        let invalid = |what: String| RingError::InvalidConfig { message: format!("{name}: {what}") };
        let Some(kind) = RingParams::kind(name) else {
            return Err(RingError::InvalidConfig {
                message: format!(
                    "unknown parameter {name:?}; expected one of {}",
                    RingParams::KINDS.map(|(n, _)| n).join(", ")
                ),
            });
        };
        let whole = |value: u64, max: u64| {
            if value <= max { Ok(value) } else { Err(invalid(format!("{value} is above {max}"))) }
        };
        match (kind, value) {
            (ParamKind::Whole { max }, ParamValue::Whole(v)) => {
                let v = whole(v, max)?;
                match name {
                    "vnodes" => self.vnodes = Some(v as u32),
                    "seed" => self.seed = Some(v),
                    "table_size" => self.table_size = Some(v as u32),
                    "default_port" => self.default_port = Some(v as u16),
                    "min_ring_size" => self.min_ring_size = Some(v),
                    "max_ring_size" => self.max_ring_size = Some(v),
                    _ => unreachable!("KINDS names {name} a whole number"),
                }
            }
            (ParamKind::Name, ParamValue::Text(text)) => match name {
                "algorithm" => self.algorithm = text.parse()?,
                "distribution" => self.distribution = Some(text.parse()?),
                "key_hash" => self.key_hash = Some(text.parse()?),
                "server_ids" => self.server_ids = Some(text.parse()?),
                "hash_function" => self.hash_function = Some(text.parse()?),
                "endpoint_order" => self.endpoint_order = Some(text.parse()?),
                "server_key" => self.server_key = Some(text.parse()?),
                "score" => self.score = Some(text.parse()?),
                _ => unreachable!("KINDS names {name} a choice"),
            },
            (ParamKind::Text, ParamValue::Text(text)) => self.hash_tag = Some(text),
            (ParamKind::Flag, ParamValue::Flag(flag)) => self.avalanche = Some(flag),
            (ParamKind::Wholes { max }, ParamValue::Wholes(values)) => {
                let values = values.into_iter().map(|v| whole(v, max).map(|v| v as u32)).collect::<Result<_, _>>()?;
                self.removed_buckets = Some(values);
            }
            (kind, value) => return Err(invalid(format!("expected {}, got {value}", kind.described()))),
        }
        Ok(())
    }

    /// The algorithm and every parameter given, in declaration order, by name.
    pub fn values(&self) -> Vec<(&'static str, ParamValue)> {
        let name = |text: &str| ParamValue::Text(text.to_owned());
        let whole = |v: Option<u64>| v.map(ParamValue::Whole);
        let mut values = vec![("algorithm", name(self.algorithm.name()))];
        let mut add = |param, value: Option<ParamValue>| values.extend(value.map(|v| (param, v)));
        add("vnodes", whole(self.vnodes.map(u64::from)));
        add("seed", whole(self.seed));
        add("table_size", whole(self.table_size.map(u64::from)));
        add("distribution", self.distribution.map(|v| name(v.name())));
        add("key_hash", self.key_hash.map(|v| name(v.name())));
        add("server_ids", self.server_ids.map(|v| name(v.name())));
        add("hash_tag", self.hash_tag.as_deref().map(name));
        add("default_port", whole(self.default_port.map(u64::from)));
        add("min_ring_size", whole(self.min_ring_size));
        add("max_ring_size", whole(self.max_ring_size));
        add("hash_function", self.hash_function.map(|v| name(v.name())));
        add("endpoint_order", self.endpoint_order.map(|v| name(v.name())));
        add("avalanche", self.avalanche.map(ParamValue::Flag));
        add("server_key", self.server_key.map(|v| name(v.name())));
        add("score", self.score.map(|v| name(v.name())));
        add(
            "removed_buckets",
            self.removed_buckets.as_ref().map(|v| ParamValue::Wholes(v.iter().map(|&b| b.into()).collect())),
        );
        values
    }
}

/// The kind of value a [`RingParams`] parameter takes ([`RingParams::KINDS`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParamKind {
    /// A whole number from 0 to `max`.
    Whole {
        /// The largest value.
        max: u64,
    },
    /// The name of one of a parameter's choices (an algorithm, a
    /// distribution, ...), as configs write it.
    Name,
    /// Free text (twemproxy's hash tag).
    Text,
    /// True or false.
    Flag,
    /// A list of whole numbers from 0 to `max`.
    Wholes {
        /// The largest value.
        max: u64,
    },
}

impl ParamKind {
    /// The kind in words, for messages: "a whole number from 0 to 65535".
    pub fn described(self) -> String {
        match self {
            ParamKind::Whole { max } => format!("a whole number from 0 to {max}"),
            ParamKind::Name => "a name".to_owned(),
            ParamKind::Text => "text".to_owned(),
            ParamKind::Flag => "true or false".to_owned(),
            ParamKind::Wholes { max } => format!("a list of whole numbers from 0 to {max}"),
        }
    }
}

/// A parameter's value, as a binding converted it by the parameter's
/// [`ParamKind`] ([`RingParams::set`], [`RingParams::values`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParamValue {
    /// A whole number.
    Whole(u64),
    /// A name or text.
    Text(String),
    /// True or false.
    Flag(bool),
    /// Whole numbers, in order.
    Wholes(Vec<u64>),
}

impl std::fmt::Display for ParamValue {
    /// As messages show a value: numbers in decimal, names and text quoted
    /// (`"ketama"`), lists in brackets.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParamValue::Whole(v) => write!(f, "{v}"),
            ParamValue::Text(text) => write!(f, "{text:?}"),
            ParamValue::Flag(flag) => write!(f, "{flag}"),
            ParamValue::Wholes(values) => write!(f, "{values:?}"),
        }
    }
}

/// A ring's parameters as its algorithm resolved them: defaults filled in,
/// every value checked. The fields an algorithm does not take keep the
/// values [`Params::base`] gives them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Params {
    /// Points per unit of weight (or the peer's `vnodes`); [`DEFAULT_VNODES`]
    /// where it is no parameter.
    pub(crate) vnodes: u32,
    pub(crate) seed: u64,
    /// Maglev only; 0 otherwise.
    pub(crate) table_size: u32,
    /// `libmemcached`, `twemproxy` and `hashring-js` only.
    pub(crate) distribution: Option<Distribution>,
    /// `twemproxy` only.
    pub(crate) server_ids: Option<ServerIds>,
    /// `hashring-js` only.
    pub(crate) default_port: Option<u16>,
    /// The ring hash modes' bounds on the point count; 0 otherwise.
    pub(crate) min_ring_size: u64,
    pub(crate) max_ring_size: u64,
    /// The ring hash modes' host hash (`haproxy`'s request hash is in `key`).
    pub(crate) hash_function: Option<HashFunction>,
    /// `grpc-ring-hash` only.
    pub(crate) endpoint_order: Option<EndpointOrder>,
    /// `haproxy` only.
    pub(crate) server_key: Option<ServerKey>,
    /// `rendezvous` only.
    pub(crate) score: Option<RendezvousScore>,
    pub(crate) key: KeyRule,
}

impl Params {
    /// The parameters every algorithm has: `vnodes` as given or
    /// `default_vnodes` (or [`DEFAULT_VNODES`] where it is no parameter), the
    /// seed as given or 0, and the key rule `key`.
    ///
    /// Errors: [`RingError::ZeroVnodes`].
    pub(crate) fn base(given: &RingParams, default_vnodes: Option<u32>, key: KeyRule) -> Result<Params, RingError> {
        let vnodes = given.vnodes.or(default_vnodes).unwrap_or(DEFAULT_VNODES);
        if vnodes == 0 {
            return Err(RingError::ZeroVnodes);
        }
        Ok(Params {
            vnodes,
            seed: given.seed.unwrap_or(DEFAULT_SEED),
            table_size: 0,
            distribution: None,
            server_ids: None,
            default_port: None,
            min_ring_size: 0,
            max_ring_size: 0,
            hash_function: None,
            endpoint_order: None,
            server_key: None,
            score: None,
            key,
        })
    }
}

impl Params {
    /// The parameters held here as a config writes them back, for the
    /// fields [`crate::Ring::params`] does not compute: a parameter
    /// added to [`RingParams`] and to [`Params`] is written back here, beside them.
    pub(crate) fn written(&self, algorithm: Algorithm) -> RingParams {
        RingParams {
            distribution: self.distribution,
            server_ids: self.server_ids,
            default_port: self.default_port,
            endpoint_order: self.endpoint_order,
            server_key: self.server_key,
            ..RingParams::new(algorithm)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A value of each kind, as a binding would pass it.
    fn sample(name: &str, kind: ParamKind) -> ParamValue {
        match (name, kind) {
            ("algorithm", _) => ParamValue::Text("envoy-ring-hash".to_owned()),
            ("distribution", _) => ParamValue::Text("modula".to_owned()),
            ("key_hash", _) => ParamValue::Text("md5".to_owned()),
            ("server_ids", _) => ParamValue::Text("label".to_owned()),
            ("hash_function", _) => ParamValue::Text("murmur_hash_2".to_owned()),
            ("endpoint_order", _) => ParamValue::Text("by_key".to_owned()),
            ("server_key", _) => ParamValue::Text("id32".to_owned()),
            ("score", _) => ParamValue::Text("float".to_owned()),
            (_, ParamKind::Whole { max }) => ParamValue::Whole(max),
            (_, ParamKind::Text) => ParamValue::Text("{}".to_owned()),
            (_, ParamKind::Flag) => ParamValue::Flag(true),
            (_, ParamKind::Wholes { max }) => ParamValue::Wholes(vec![3, max]),
            (_, ParamKind::Name) => unreachable!("every choice has a sample above"),
        }
    }

    /// KINDS, set and values cover every field serde knows, in the struct's
    /// order: a field added to RingParams alone fails here.
    #[test]
    fn every_field_can_be_set_by_name_and_read_back() {
        let mut params = RingParams::default();
        for (name, kind) in RingParams::KINDS {
            params.set(name, sample(name, kind)).unwrap();
        }
        let serialized = serde_json::to_value(&params).unwrap();
        let fields: Vec<&str> = serialized.as_object().unwrap().keys().map(String::as_str).collect();
        let mut kinds: Vec<&str> = RingParams::KINDS.iter().map(|(n, _)| *n).collect();
        kinds.sort_unstable();
        assert_eq!(fields, kinds, "serde's fields (sorted) against KINDS");
        let values = params.values();
        assert_eq!(values.iter().map(|(n, _)| *n).collect::<Vec<_>>(), RingParams::KINDS.map(|(n, _)| n));
        for (name, value) in values {
            assert_eq!(value, sample(name, RingParams::kind(name).unwrap()), "{name}");
        }
    }

    #[test]
    fn a_bad_value_names_the_parameter() {
        let mut params = RingParams::default();
        let message = |r: Result<(), RingError>| r.unwrap_err().to_string();
        assert_eq!(
            message(params.set("vnodes", ParamValue::Whole(1 << 40))),
            "vnodes: 1099511627776 is above 4294967295"
        );
        assert_eq!(
            message(params.set("seed", ParamValue::Text("7".to_owned()))),
            "seed: expected a whole number from 0 to 18446744073709551615, got \"7\""
        );
        assert!(message(params.set("colour", ParamValue::Flag(true))).starts_with("unknown parameter \"colour\""));
        assert!(message(params.set("score", ParamValue::Text("exact".to_owned()))).contains("unknown score \"exact\""));
        assert_eq!(params, RingParams::default(), "a refused value leaves the parameters as they were");
    }
}
