//! The JSON ring config shared by every binding and tool.

use serde::{Deserialize, Serialize};

use crate::algorithm::Algorithm;
use crate::error::RingError;
use crate::hash::{HashFunction, KeyHash};
use crate::node::{Node, NodeState};
use crate::params::{Distribution, EndpointOrder, RendezvousScore, ServerIds, ServerKey};
use crate::ring::Ring;
use crate::scheme::BucketTable;
use crate::{envoy_maglev, haproxy, maglev, memento, slots};

/// The placement format this build implements (see `core/SPEC.md`).
pub const PLACEMENT_FORMAT: u32 = 1;

/// A ring as a serde config, read and written as JSON:
///
/// ```json
/// {"format_version": 1, "algorithm": "ring", "vnodes": 160, "seed": 0,
///  "nodes": [{"id": "cache-1", "weight": 1.0}]}
/// ```
///
/// `algorithm` defaults to `"ring"`, `vnodes` to 160, `seed` to 0,
/// `table_size` to 65,537 and a node's `weight` to 1.0. A parameter the
/// algorithm does not take (`vnodes` outside `ring`, a non-zero `seed` for a
/// compatibility mode or `slots`, `table_size` outside `maglev` and
/// `envoy-maglev`, `slots` on
/// a node outside `slots`) is rejected when the ring is built, as are
/// unknown fields when the JSON is read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a ring config object")]
pub struct RingConfig {
    /// Placement format; must equal [`PLACEMENT_FORMAT`].
    pub format_version: u32,
    /// Placement algorithm.
    #[serde(default)]
    pub algorithm: Algorithm,
    /// Points per unit of weight (`ring` only; 160 when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vnodes: Option<u32>,
    /// Seed of the XXH3 hashes (`ring`, `jump`, `rendezvous`, `maglev`; 0 when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Maglev table size, a prime (`maglev` and `envoy-maglev`; 65,537 when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_size: Option<u32>,
    /// The peer's distribution (`libmemcached`: `consistent_ketama` when
    /// absent; `twemproxy`: `ketama` when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distribution: Option<Distribution>,
    /// Named key hash (`libmemcached`: MD5 for the weighted distributions
    /// and one-at-a-time otherwise when absent; `twemproxy`: `fnv1a_64`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_hash: Option<KeyHash>,
    /// What node ids are (`twemproxy` only; `address` when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_ids: Option<ServerIds>,
    /// twemproxy's `hash_tag`, two bytes such as `"{}"` (`twemproxy` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hash_tag: Option<String>,
    /// npm hashring's `default port` (`hashring-js` only; none when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_port: Option<u16>,
    /// Envoy's and gRPC's `minimum_ring_size` (`envoy-ring-hash`,
    /// `grpc-ring-hash`; 1,024 when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_ring_size: Option<u64>,
    /// Envoy's and gRPC's `maximum_ring_size` (8,388,608 for Envoy and
    /// 4,096 for gRPC when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_ring_size: Option<u64>,
    /// The balancer's hash function (`envoy-ring-hash`: `xx_hash` when
    /// absent, or `murmur_hash_2`; `haproxy`: `sdbm` when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hash_function: Option<HashFunction>,
    /// gRPC's endpoint order (`grpc-ring-hash` only; `given` when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint_order: Option<EndpointOrder>,
    /// HAProxy's `avalanche` (`haproxy` only; on when absent with no
    /// `hash_function`, off when absent with one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub avalanche: Option<bool>,
    /// What HAProxy node keys derive from (`haproxy` only; `id` when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_key: Option<ServerKey>,
    /// How `rendezvous` scores nodes (`rendezvous` only; `integer` when
    /// absent; `float` is placement format 1's, with the platform's `ln`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<RendezvousScore>,
    /// The removed buckets in removal order, oldest first (`memento` only;
    /// none when absent). With the nodes' buckets they make up the bucket
    /// array `0..nodes + removed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub removed_buckets: Option<Vec<u32>>,
    /// The nodes, in order.
    pub nodes: Vec<NodeConfig>,
}

/// One node of a [`RingConfig`] (or of a [`crate::Transition`]'s config).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a node object such as {\"id\": \"cache-1\", \"weight\": 1}")]
pub struct NodeConfig {
    /// Non-empty UTF-8 id.
    pub id: String,
    /// Relative capacity, finite and `>= 0` (default 1.0).
    #[serde(default = "default_weight")]
    pub weight: f64,
    /// Optional failure-domain label (non-empty); left out of the JSON when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
    /// Redis Cluster slots held (`slots` only), as inclusive `[first, last]`
    /// ranges; when any node lists slots, every slot must be listed once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slots: Option<Vec<[u16; 2]>>,
    /// The HAProxy server `id` (`haproxy` only, from 1; absent: the id
    /// HAProxy assigns).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub haproxy_id: Option<u32>,
    /// The node's bucket (`memento` only; absent: the lowest bucket neither
    /// held by an earlier node nor removed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bucket: Option<u32>,
    /// The node's part in a transition (absent: active). A config with
    /// warming or draining nodes describes a [`crate::Transition`], not a ring.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<NodeState>,
}

/// A serde error prefixed with the path of the field it concerns
/// (`nodes[1].weight: invalid type: null, expected a number`). An unknown
/// field's path would end in the field itself, which the message already
/// names. Rust type names in serde's messages are spelt as JSON types.
fn with_path(path: &str, message: &str) -> String {
    let path =
        if message.starts_with("unknown field") { path.rfind(['.', '[']).map_or("", |end| &path[..end]) } else { path };
    let mut message = message.to_owned();
    for (rust, json) in [
        ("expected f64", "expected a number"),
        ("expected u32", "expected a whole number from 0 to 4294967295"),
        ("expected u64", "expected a whole number from 0 to 18446744073709551615"),
        ("expected u16", "expected a whole number from 0 to 65535"),
        ("expected a sequence", "expected an array"),
    ] {
        message = message.replace(rust, json);
    }
    if path.is_empty() || path == "." { message } else { format!("{path}: {message}") }
}

fn json_kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// Reads JSON into a [`serde_json::Value`] strictly: a key given twice in
/// one object, or a `null` anywhere, is an error naming its path. (serde_json
/// alone keeps the last of two equal keys, so `{"weight": 1, "weight": 0}`
/// would silently drain a node, and `null` would silently mean "default" for
/// some fields and be an error for others; here a field is either left out,
/// meaning its default, or given a valid value.)
struct Strict<'p> {
    path: &'p str,
}

impl Strict<'_> {
    /// Only an object is a config (serde would also read a struct from a
    /// JSON array, by position).
    fn value<E: serde::de::Error>(&self, value: serde_json::Value) -> Result<serde_json::Value, E> {
        if self.path.is_empty() {
            return Err(E::custom(format_args!("expected a JSON object, found {}", json_kind(&value))));
        }
        Ok(value)
    }

    fn at(&self, step: std::fmt::Arguments<'_>) -> String {
        format!("{}{step}", self.path)
    }

    fn shown(&self) -> &str {
        if self.path.is_empty() { "the config" } else { self.path }
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for Strict<'_> {
    type Value = serde_json::Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<serde_json::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Strict<'_> {
    type Value = serde_json::Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<serde_json::Value, E> {
        self.value(v.into())
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<serde_json::Value, E> {
        self.value(v.into())
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<serde_json::Value, E> {
        self.value(v.into())
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<serde_json::Value, E> {
        self.value(v.into())
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<serde_json::Value, E> {
        self.value(v.into())
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<serde_json::Value, E> {
        self.value::<E>(serde_json::Value::Null)?;
        Err(E::custom(format_args!("{}: null is not a value; leave the field out for its default", self.shown())))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<serde_json::Value, A::Error> {
        self.value::<A::Error>(serde_json::Value::Array(Vec::new()))?;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(Strict { path: &self.at(format_args!("[{}]", items.len())) })? {
            items.push(item);
        }
        Ok(serde_json::Value::Array(items))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<serde_json::Value, A::Error> {
        let mut object = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let path = if self.path.is_empty() { key.clone() } else { self.at(format_args!(".{key}")) };
            if object.contains_key(&key) {
                return Err(serde::de::Error::custom(format_args!(
                    "{}: duplicate key {key:?}; a key may appear once",
                    self.shown()
                )));
            }
            let value = map.next_value_seed(Strict { path: &path })?;
            object.insert(key, value);
        }
        Ok(serde_json::Value::Object(object))
    }
}

/// Reads a JSON object into `T` by the config rules: a key given twice in
/// one object or a `null` anywhere is an error, and errors name the field's
/// path in JSON terms (`nodes[1].weight: invalid type: string "2", expected
/// a number`). Used for ring configs and for the records other crates keep
/// beside them (etcd member records).
///
/// Errors: [`RingError::InvalidConfig`] with that message.
pub fn from_json_strict<T: serde::de::DeserializeOwned>(json: &str) -> Result<T, RingError> {
    use serde::de::DeserializeSeed;
    let invalid = |e: serde_json::Error| RingError::InvalidConfig { message: e.to_string() };
    let mut reader = serde_json::Deserializer::from_str(json);
    let value = Strict { path: "" }.deserialize(&mut reader).and_then(|v| reader.end().map(|()| v)).map_err(invalid)?;
    serde_path_to_error::deserialize(value)
        .map_err(|e| RingError::InvalidConfig { message: with_path(&e.path().to_string(), &e.inner().to_string()) })
}

fn default_weight() -> f64 {
    1.0
}

impl NodeConfig {
    /// An active node `id` of `weight`, with no zone and nothing else given.
    pub fn new(id: impl Into<String>, weight: f64) -> NodeConfig {
        NodeConfig { id: id.into(), weight, zone: None, slots: None, haproxy_id: None, bucket: None, state: None }
    }
}

impl RingConfig {
    /// A config of `algorithm` over `nodes` with every parameter at its
    /// default (change the fields to set them).
    pub fn new(algorithm: Algorithm, nodes: Vec<NodeConfig>) -> RingConfig {
        RingConfig {
            format_version: PLACEMENT_FORMAT,
            algorithm,
            vnodes: None,
            seed: None,
            table_size: None,
            distribution: None,
            key_hash: None,
            server_ids: None,
            hash_tag: None,
            default_port: None,
            min_ring_size: None,
            max_ring_size: None,
            hash_function: None,
            endpoint_order: None,
            avalanche: None,
            server_key: None,
            score: None,
            removed_buckets: None,
            nodes,
        }
    }

    /// Parses a JSON config.
    ///
    /// Errors: [`RingError::InvalidConfig`] for malformed JSON, a key given
    /// twice in one object, a `null` (leave a field out for its default),
    /// missing, unknown or mistyped fields, each naming the field's path; [`RingError::UnsupportedFormat`] when
    /// `format_version` is not [`PLACEMENT_FORMAT`].
    pub fn from_json(json: &str) -> Result<RingConfig, RingError> {
        let config: RingConfig = from_json_strict(json)?;
        if config.format_version != PLACEMENT_FORMAT {
            return Err(RingError::UnsupportedFormat { found: config.format_version, supported: PLACEMENT_FORMAT });
        }
        Ok(config)
    }

    /// The config as pretty-printed JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a RingConfig always serialises")
    }

    /// The canonical fingerprint of this config: see [`Ring::fingerprint`].
    /// Encoding (all integers little-endian): the bytes `shardring-config`,
    /// `format_version` (u32), the algorithm name's length (u32) and UTF-8
    /// bytes, `vnodes` (u32; 160 when absent for `ring`, 0 for the other
    /// algorithms), `seed` (u64, 0 when absent), for `maglev` and
    /// `envoy-maglev` the table size (u32), for `libmemcached` the
    /// distribution's and the key hash's names, for `twemproxy` the
    /// distribution's, the key hash's and the server_ids' names and the hash
    /// tag (empty when none; each as length u32 and bytes, defaults filled
    /// in), for `hashring-js` the distribution's name and the default port
    /// (u32, 0 for none), for the ring hash modes the minimum and maximum ring
    /// sizes as resolved (u64 each) and the hash function's name, for
    /// `grpc-ring-hash` the endpoint order's name, for `haproxy` the hash
    /// function's name, `avalanche` (u8) and the server key's name, for
    /// `rendezvous` with the `integer` score that score's name (nothing for
    /// `float`, so a ring kept on placement format 1's score keeps its
    /// fingerprint), for `memento` the bucket array's size (u32) and the removed buckets
    /// (count u32, then each u32, oldest first) as the removals' replay
    /// leaves them; the node
    /// count (u64), then each node in ascending order of id bytes (in list
    /// order where order places keys: [`Algorithm::order_places_keys`];
    /// by ascending bucket for `memento`): id
    /// length (u32) and bytes, weight as IEEE-754 binary64 bits (u64, with
    /// -0.0 written as 0.0), the zone as a byte 0 (none) or 1 followed by its
    /// length (u32) and bytes (the byte also holds the node's state in bits
    /// 1-2: 0 active, 1 warming, 2 draining), for `haproxy` its server id as
    /// given or assigned (u32), for `memento` its bucket (u32), and for `slots` its slot ranges (count u32,
    /// then first and last as u16 each, ascending) as listed, or, when no
    /// node lists any, as the fresh assignment gives them. `core/SPEC.md`,
    /// *Fingerprint*, has the same as a table.
    pub fn fingerprint(&self) -> u64 {
        let mut order: Vec<usize> = (0..self.nodes.len()).collect();
        if !self.algorithm.order_places_keys() {
            order.sort_unstable_by(|&a, &b| self.nodes[a].id.as_bytes().cmp(self.nodes[b].id.as_bytes()));
        }
        let buckets = (self.algorithm == Algorithm::Memento).then(|| self.bucket_table());
        if let Some(table) = &buckets {
            order.sort_by_key(|&i| table.of_node[i]);
        }
        let mut bytes = Vec::with_capacity(64 + self.nodes.len() * 32);
        let put_str = |bytes: &mut Vec<u8>, text: &str| {
            bytes.extend_from_slice(&(text.len() as u32).to_le_bytes());
            bytes.extend_from_slice(text.as_bytes());
        };
        bytes.extend_from_slice(b"shardring-config");
        bytes.extend_from_slice(&self.format_version.to_le_bytes());
        put_str(&mut bytes, self.algorithm.name());
        let vnodes = match self.algorithm.default_vnodes() {
            Some(default) => self.vnodes.unwrap_or(default),
            None => 0,
        };
        bytes.extend_from_slice(&vnodes.to_le_bytes());
        bytes.extend_from_slice(&self.seed.unwrap_or(0).to_le_bytes());
        if self.algorithm == Algorithm::Maglev {
            bytes.extend_from_slice(&self.table_size.unwrap_or(maglev::DEFAULT_TABLE_SIZE).to_le_bytes());
        }
        if self.algorithm == Algorithm::EnvoyMaglev {
            bytes.extend_from_slice(&self.table_size.unwrap_or(envoy_maglev::DEFAULT_TABLE_SIZE).to_le_bytes());
        }
        // The peers' parameters, defaults filled in; each algorithm writes
        // the ones it takes, in this order.
        if let Some(default) = self.algorithm.default_distribution() {
            let distribution = self.distribution.unwrap_or(default);
            put_str(&mut bytes, distribution.name());
            if let Some(default) = self.algorithm.default_key_hash(distribution) {
                put_str(&mut bytes, self.key_hash.unwrap_or(default).name());
            }
        }
        if self.algorithm == Algorithm::HashringJs {
            bytes.extend_from_slice(&u32::from(self.default_port.unwrap_or(0)).to_le_bytes());
        }
        if self.algorithm == Algorithm::Twemproxy {
            put_str(&mut bytes, self.server_ids.unwrap_or_default().name());
            put_str(&mut bytes, self.hash_tag.as_deref().unwrap_or(""));
        }
        // The balancers' parameters as their rings resolve them (gRPC's
        // sizes capped), so configs that place alike encode alike.
        let balancer =
            matches!(self.algorithm, Algorithm::EnvoyRingHash | Algorithm::GrpcRingHash | Algorithm::Haproxy)
                .then(|| self.build_params_only())
                .and_then(Result::ok);
        if let Some(ring) = &balancer {
            if let Some((min, max)) = ring.ring_sizes() {
                bytes.extend_from_slice(&min.to_le_bytes());
                bytes.extend_from_slice(&max.to_le_bytes());
            }
            if let Some(function) = ring.hash_function() {
                put_str(&mut bytes, function.name());
            }
            if let Some(order) = ring.endpoint_order() {
                put_str(&mut bytes, order.name());
            }
            if let Some(avalanche) = ring.avalanche() {
                bytes.push(u8::from(avalanche));
            }
            if let Some(key) = ring.server_key() {
                put_str(&mut bytes, key.name());
            }
        }
        if self.algorithm == Algorithm::Rendezvous {
            let score = self.score.unwrap_or_default();
            if score != RendezvousScore::Float {
                put_str(&mut bytes, score.name());
            }
        }
        if let Some(table) = &buckets {
            bytes.extend_from_slice(&table.size.to_le_bytes());
            bytes.extend_from_slice(&(table.removed.len() as u32).to_le_bytes());
            table.removed.iter().for_each(|b| bytes.extend_from_slice(&b.to_le_bytes()));
        }
        let haproxy_ids = (self.algorithm == Algorithm::Haproxy).then(|| {
            let explicit: Vec<u32> = self.nodes.iter().map(|n| n.haproxy_id.unwrap_or(0)).collect();
            haproxy::assign(&explicit)
        });
        let slot_lists = (self.algorithm == Algorithm::Slots).then(|| self.slot_lists());
        bytes.extend_from_slice(&(order.len() as u64).to_le_bytes());
        for i in order {
            let node = &self.nodes[i];
            put_str(&mut bytes, &node.id);
            let weight = if node.weight == 0.0 { 0.0f64 } else { node.weight };
            bytes.extend_from_slice(&weight.to_bits().to_le_bytes());
            // Bit 0: the node has a zone; bits 1-2: its state (0 active, 1
            // warming, 2 draining), so a ring of active nodes encodes as before.
            let state = match node.state.unwrap_or_default() {
                NodeState::Active => 0u8,
                NodeState::Warming => 1,
                NodeState::Draining => 2,
            };
            match &node.zone {
                None => bytes.push(state << 1),
                Some(zone) => {
                    bytes.push(1 | state << 1);
                    put_str(&mut bytes, zone);
                }
            }
            if let Some(ids) = &haproxy_ids {
                bytes.extend_from_slice(&ids[i].to_le_bytes());
            }
            if let Some(table) = &buckets {
                bytes.extend_from_slice(&table.of_node[i].to_le_bytes());
            }
            if let Some(lists) = &slot_lists {
                let listed = &lists[i];
                bytes.extend_from_slice(&(listed.len() as u32).to_le_bytes());
                for &[first, last] in listed {
                    bytes.extend_from_slice(&first.to_le_bytes());
                    bytes.extend_from_slice(&last.to_le_bytes());
                }
            }
        }
        xxhash_rust::xxh3::xxh3_64(&bytes)
    }

    /// A `memento` config's bucket table as its ring resolves it (the
    /// removals replayed, every node given its bucket); for a config whose
    /// buckets do not resolve, the buckets as listed (`u32::MAX` for a node
    /// without one), so that its fingerprint still differs from others'.
    fn bucket_table(&self) -> BucketTable {
        let nodes: Vec<Node> = self.nodes.iter().map(|n| Node::new(n.id.clone(), n.weight)).collect();
        let given: Vec<Option<u32>> = self.nodes.iter().map(|n| n.bucket).collect();
        let removed = self.removed_buckets.as_deref().unwrap_or_default();
        memento::resolve(&nodes, Some(&given), removed).unwrap_or_else(|_| BucketTable {
            size: (nodes.len() + removed.len()).min(u32::MAX as usize) as u32,
            of_node: given.iter().map(|b| b.unwrap_or(u32::MAX)).collect(),
            removed: removed.to_vec(),
        })
    }

    /// Each node's slot ranges, parallel to `nodes`: as listed or, when no
    /// node lists any, as the fresh assignment gives them.
    fn slot_lists(&self) -> Vec<Vec<[u16; 2]>> {
        if self.nodes.iter().any(|n| n.slots.is_some()) {
            return self.nodes.iter().map(|n| n.slots.clone().unwrap_or_default()).collect();
        }
        let members: Vec<Node> = self.nodes.iter().map(|n| Node::new(n.id.clone(), n.weight)).collect();
        let table = slots::contiguous(&members);
        if table.is_empty() {
            return vec![Vec::new(); members.len()];
        }
        slots::ranges(&table, members.len())
            .into_iter()
            .map(|ranges| ranges.into_iter().map(|r| [*r.start(), *r.end()]).collect())
            .collect()
    }

    /// Builds the ring this config describes. Errors as
    /// [`crate::RingBuilder::build`], and [`RingError::InvalidConfig`] naming
    /// a warming or draining node (such a config describes a
    /// [`crate::Transition`]: build it with [`crate::Transition::from_config`]).
    pub fn build(&self) -> Result<Ring, RingError> {
        if let Some(node) = self.nodes.iter().find(|n| n.state.is_some_and(|s| s != NodeState::Active)) {
            let state = node.state.unwrap_or_default().name();
            return Err(RingError::InvalidConfig {
                message: format!(
                    "node {:?} is {state}: a config with warming or draining nodes describes a transition, not a ring",
                    node.id
                ),
            });
        }
        let nodes = self.nodes.iter().map(|n| {
            let node = Node::new(n.id.clone(), n.weight);
            match &n.zone {
                Some(zone) => node.with_zone(zone.clone()),
                None => node,
            }
        });
        let mut builder = Ring::builder().algorithm(self.algorithm).nodes(nodes);
        if let Some(vnodes) = self.vnodes {
            builder = builder.vnodes(vnodes);
        }
        if let Some(seed) = self.seed {
            builder = builder.seed(seed);
        }
        if let Some(size) = self.table_size {
            builder = builder.table_size(size);
        }
        if let Some(distribution) = self.distribution {
            builder = builder.distribution(distribution);
        }
        if let Some(key_hash) = self.key_hash {
            builder = builder.key_hash(key_hash);
        }
        if let Some(server_ids) = self.server_ids {
            builder = builder.server_ids(server_ids);
        }
        if let Some(tag) = &self.hash_tag {
            builder = builder.hash_tag(tag.clone());
        }
        for node in &self.nodes {
            if let Some(ranges) = &node.slots {
                builder = builder.slot_ranges(node.id.clone(), ranges.iter().map(|&[first, last]| first..=last));
            }
            if let Some(puid) = node.haproxy_id {
                builder = builder.haproxy_id(node.id.clone(), puid);
            }
            if let Some(bucket) = node.bucket {
                builder = builder.bucket(node.id.clone(), bucket);
            }
        }
        if let Some(removed) = &self.removed_buckets {
            builder = builder.removed_buckets(removed.iter().copied());
        }
        self.with_params(builder).build()
    }

    /// `builder` with this config's parameters set, nodes aside.
    fn with_params(&self, mut builder: crate::RingBuilder) -> crate::RingBuilder {
        if let Some(port) = self.default_port {
            builder = builder.default_port(port);
        }
        if let Some(size) = self.min_ring_size {
            builder = builder.min_ring_size(size);
        }
        if let Some(size) = self.max_ring_size {
            builder = builder.max_ring_size(size);
        }
        if let Some(function) = self.hash_function {
            builder = builder.hash_function(function);
        }
        if let Some(order) = self.endpoint_order {
            builder = builder.endpoint_order(order);
        }
        if let Some(avalanche) = self.avalanche {
            builder = builder.avalanche(avalanche);
        }
        if let Some(key) = self.server_key {
            builder = builder.server_key(key);
        }
        if let Some(score) = self.score {
            builder = builder.score(score);
        }
        builder
    }

    /// A ring of this config's algorithm and parameters and no nodes, for
    /// the parameters as resolved.
    fn build_params_only(&self) -> Result<Ring, RingError> {
        self.with_params(Ring::builder().algorithm(self.algorithm)).build()
    }
}

impl Ring {
    /// Parses a JSON [`RingConfig`] and builds its ring. Errors as
    /// [`RingConfig::from_json`] and [`crate::RingBuilder::build`].
    pub fn from_json(json: &str) -> Result<Ring, RingError> {
        RingConfig::from_json(json)?.build()
    }

    /// The config that rebuilds this ring exactly.
    pub fn to_config(&self) -> RingConfig {
        let algorithm = self.algorithm();
        let slot_ranges = if self.slots_are_fresh() { None } else { self.slot_ranges() };
        let haproxy_ids = self.haproxy_ids_per_node();
        // Memento buckets are written when they are not the default
        // assignment (the working buckets ascending, in node order).
        let buckets = self.buckets().filter(|b| !b.is_sorted_by(|a, b| a < b));
        let removed_buckets = self.removed_buckets().filter(|r| !r.is_empty()).map(<[u32]>::to_vec);
        RingConfig {
            format_version: PLACEMENT_FORMAT,
            algorithm,
            vnodes: self.vnodes(),
            seed: algorithm.uses_seed().then_some(self.seed()),
            table_size: self.table_size(),
            distribution: self.distribution(),
            key_hash: self.key_hash_parameter(),
            server_ids: self.server_ids(),
            hash_tag: self.hash_tag(),
            default_port: self.default_port(),
            min_ring_size: self.ring_sizes().map(|(min, _)| min),
            max_ring_size: self.ring_sizes().map(|(_, max)| max),
            hash_function: self.hash_function(),
            endpoint_order: self.endpoint_order(),
            avalanche: self.avalanche(),
            server_key: self.server_key(),
            // The default, integer, is left out; float is written.
            score: self.score().filter(|&s| s != RendezvousScore::default()),
            removed_buckets,
            nodes: self
                .nodes()
                .iter()
                .enumerate()
                .map(|(i, n)| NodeConfig {
                    id: n.id().to_owned(),
                    weight: n.weight(),
                    zone: n.zone().map(str::to_owned),
                    slots: slot_ranges.as_ref().map(|r| r[i].iter().map(|r| [*r.start(), *r.end()]).collect()),
                    haproxy_id: haproxy_ids.as_ref().map(|ids| ids[i]).filter(|&puid| puid != 0),
                    bucket: buckets.map(|b| b[i]),
                    state: None,
                })
                .collect(),
        }
    }

    /// A stable 64-bit digest of this ring's canonical config. Equal
    /// fingerprints mean the same algorithm, parameters and set of (id,
    /// weight, zone), plus the slot assignment under `slots`, and so the same
    /// owner and preference list for every key. Node order counts only where
    /// it places keys ([`Algorithm::order_places_keys`], and through the
    /// fresh ranges of `slots`). Computed as
    /// XXH3-64 (seed 0) of the canonical encoding in `core/SPEC.md`, so any
    /// language can recompute it.
    pub fn fingerprint(&self) -> u64 {
        self.to_config().fingerprint()
    }
}
