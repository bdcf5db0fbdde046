//! The JSON ring config shared by every binding and tool: [`RingConfig`]
//! and [`NodeConfig`], their canonical fingerprint, and the conversions
//! between a config and a [`Ring`]. The text is read by the strict reader
//! of `json.rs`.

use serde::{Deserialize, Serialize};

use crate::algorithm::Algorithm;
use crate::error::RingError;
use crate::json::{config_text, from_json_strict, with_path};
use crate::node::{Node, NodeState};
use crate::params::{ParamValue, RendezvousScore, RingParams};
use crate::ring::Ring;
use crate::scheme::BucketTable;
use crate::{algorithms::maglev, algorithms::memento, algorithms::slots, compat::envoy_maglev, compat::haproxy};

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
#[serde(try_from = "ConfigFields")]
pub struct RingConfig {
    /// Placement format; must equal [`PLACEMENT_FORMAT`].
    pub format_version: u32,
    /// The algorithm and its parameters, written beside `format_version`
    /// and `nodes` as the config's other fields.
    #[serde(flatten)]
    pub params: RingParams,
    /// The nodes, in order.
    pub nodes: Vec<NodeConfig>,
}

/// A config object as read: `format_version`, `nodes`, and the other fields,
/// which make up the [`RingParams`] (read strictly, each error naming its
/// field). serde's `flatten` cannot refuse unknown fields, hence this step.
#[derive(Deserialize)]
#[serde(expecting = "a ring config object")]
struct ConfigFields {
    format_version: u32,
    nodes: Vec<NodeConfig>,
    #[serde(flatten)]
    params: serde_json::Map<String, serde_json::Value>,
}

impl TryFrom<ConfigFields> for RingConfig {
    type Error = String;

    fn try_from(fields: ConfigFields) -> Result<RingConfig, String> {
        let params = read_params(fields.params)?;
        Ok(RingConfig { format_version: fields.format_version, params, nodes: fields.nodes })
    }
}

/// The [`RingParams`] of a config's or a record's fields besides its own,
/// or a message naming the field at fault, in JSON terms.
fn read_params(fields: serde_json::Map<String, serde_json::Value>) -> Result<RingParams, String> {
    serde_path_to_error::deserialize(serde_json::Value::Object(fields))
        .map_err(|e| with_path(&e.path().to_string(), &e.inner().to_string()))
}

impl RingParams {
    /// The parameters among the fields of a JSON object, read as a config
    /// reads them (for records that hold a config's fields besides `nodes`,
    /// such as etcd's `P/config`).
    ///
    /// Errors: [`RingError::InvalidConfig`] naming an unknown field or the
    /// field holding a value of the wrong type, in JSON terms.
    pub fn from_fields(fields: serde_json::Map<String, serde_json::Value>) -> Result<RingParams, RingError> {
        read_params(fields).map_err(|message| RingError::InvalidConfig { message })
    }

    /// The parameters a JSON object such as `{"vnodes": 40, "seed": 7}`
    /// gives, by name, in [`RingParams::KINDS`]' order (`algorithm` when it
    /// is given): the fields of a config besides `format_version` and
    /// `nodes`, read as a config reads them. The C binding's
    /// `ring_options_t.params`, through which a parameter needs no field of
    /// its own.
    ///
    /// Errors: [`RingError::InvalidConfig`] for text that is not a JSON
    /// object, a duplicate key or a `null`, and naming an unknown field or
    /// the field holding a value of the wrong type.
    pub fn given_in_json(text: &str) -> Result<Vec<(&'static str, ParamValue)>, RingError> {
        let fields: serde_json::Map<String, serde_json::Value> = from_json_strict(text)?;
        let names: Vec<String> = fields.keys().cloned().collect();
        let params = RingParams::from_fields(fields)?;
        Ok(params.values().into_iter().filter(|(name, _)| names.iter().any(|n| n == name)).collect())
    }
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
    /// nginx's `down` (`nginx` only; absent: not down): the server keeps
    /// its points, but keys skip them ([`crate::RingBuilder::down`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub down: Option<bool>,
    /// The node's part in a transition (absent: active). A config with
    /// warming or draining nodes describes a [`crate::Transition`], not a ring.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<NodeState>,
}

fn default_weight() -> f64 {
    1.0
}

impl NodeConfig {
    /// An active node `id` of `weight`, with no zone and nothing else given.
    pub fn new(id: impl Into<String>, weight: f64) -> NodeConfig {
        NodeConfig {
            id: id.into(),
            weight,
            zone: None,
            slots: None,
            haproxy_id: None,
            bucket: None,
            down: None,
            state: None,
        }
    }
}

/// The parameters the fingerprint encodes one by one, each in its own
/// form (`core/SPEC.md`, *Fingerprint*); a parameter added later is encoded
/// after the nodes by name and value, so adding one changes no existing
/// fingerprint and needs no code here.
const ENCODED_ABOVE: [&str; 17] = [
    "algorithm",
    "vnodes",
    "seed",
    "table_size",
    "distribution",
    "key_hash",
    "server_ids",
    "hash_tag",
    "default_port",
    "min_ring_size",
    "max_ring_size",
    "hash_function",
    "endpoint_order",
    "avalanche",
    "server_key",
    "score",
    "removed_buckets",
];

impl RingConfig {
    /// A config of `algorithm` over `nodes` with every parameter at its
    /// default (change the fields to set them).
    pub fn new(algorithm: Algorithm, nodes: Vec<NodeConfig>) -> RingConfig {
        RingConfig { format_version: PLACEMENT_FORMAT, params: RingParams::new(algorithm), nodes }
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

    /// Parses a JSON config from bytes, as a file holds them: the text must
    /// be UTF-8, then as [`RingConfig::from_json`].
    ///
    /// Errors: [`RingError::InvalidConfig`] naming the first byte that is not
    /// UTF-8 and its line, column and offset, or a UTF-16 or UTF-32
    /// byte-order mark (a file saved as UTF-16); then as
    /// [`RingConfig::from_json`].
    pub fn from_json_bytes(json: &[u8]) -> Result<RingConfig, RingError> {
        RingConfig::from_json(config_text(json)?)
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
    /// given or assigned (u32), for `memento` its bucket (u32), for `nginx`
    /// whether it is marked down (u8, 0 or 1), and for `slots` its slot ranges (count u32,
    /// then first and last as u16 each, ascending) as listed, or, when no
    /// node lists any, as the fresh assignment gives them; then each
    /// parameter outside those (none yet) that the ring resolves: its name
    /// (length u32 and bytes), then a whole number as u64, a name or text
    /// as length u32 and bytes, a flag as u8, a list as count u32 and u64
    /// each. `core/SPEC.md`,
    /// *Fingerprint*, has the same as a table.
    pub fn fingerprint(&self) -> u64 {
        let mut order: Vec<usize> = (0..self.nodes.len()).collect();
        if !self.params.algorithm.order_places_keys() {
            order.sort_unstable_by(|&a, &b| self.nodes[a].id.as_bytes().cmp(self.nodes[b].id.as_bytes()));
        }
        let buckets = (self.params.algorithm == Algorithm::Memento).then(|| self.bucket_table());
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
        put_str(&mut bytes, self.params.algorithm.name());
        let vnodes = match self.params.algorithm.default_vnodes() {
            Some(default) => self.params.vnodes.unwrap_or(default),
            None => 0,
        };
        bytes.extend_from_slice(&vnodes.to_le_bytes());
        bytes.extend_from_slice(&self.params.seed.unwrap_or(0).to_le_bytes());
        if self.params.algorithm == Algorithm::Maglev {
            bytes.extend_from_slice(&self.params.table_size.unwrap_or(maglev::DEFAULT_TABLE_SIZE).to_le_bytes());
        }
        if self.params.algorithm == Algorithm::EnvoyMaglev {
            bytes.extend_from_slice(&self.params.table_size.unwrap_or(envoy_maglev::DEFAULT_TABLE_SIZE).to_le_bytes());
        }
        // The peers' parameters, defaults filled in; each algorithm writes
        // the ones it takes, in this order.
        if let Some(default) = self.params.algorithm.default_distribution() {
            let distribution = self.params.distribution.unwrap_or(default);
            put_str(&mut bytes, distribution.name());
            if let Some(default) = self.params.algorithm.default_key_hash(distribution) {
                put_str(&mut bytes, self.params.key_hash.unwrap_or(default).name());
            }
        }
        if self.params.algorithm == Algorithm::HashringJs {
            bytes.extend_from_slice(&u32::from(self.params.default_port.unwrap_or(0)).to_le_bytes());
        }
        if self.params.algorithm == Algorithm::Twemproxy {
            put_str(&mut bytes, self.params.server_ids.unwrap_or_default().name());
            put_str(&mut bytes, self.params.hash_tag.as_deref().unwrap_or(""));
        }
        // The balancers' parameters as their rings resolve them (gRPC's
        // sizes capped), so configs that place alike encode alike.
        let balancer =
            matches!(self.params.algorithm, Algorithm::EnvoyRingHash | Algorithm::GrpcRingHash | Algorithm::Haproxy)
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
        if self.params.algorithm == Algorithm::Rendezvous {
            let score = self.params.score.unwrap_or_default();
            if score != RendezvousScore::Float {
                put_str(&mut bytes, score.name());
            }
        }
        if let Some(table) = &buckets {
            bytes.extend_from_slice(&table.size.to_le_bytes());
            bytes.extend_from_slice(&(table.removed.len() as u32).to_le_bytes());
            table.removed.iter().for_each(|b| bytes.extend_from_slice(&b.to_le_bytes()));
        }
        let haproxy_ids = (self.params.algorithm == Algorithm::Haproxy).then(|| {
            let explicit: Vec<u32> = self.nodes.iter().map(|n| n.haproxy_id.unwrap_or(0)).collect();
            haproxy::assign(&explicit)
        });
        let slot_lists = (self.params.algorithm == Algorithm::Slots).then(|| self.slot_lists());
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
            if self.params.algorithm == Algorithm::Nginx {
                bytes.push(u8::from(node.down.unwrap_or(false)));
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
        // A parameter added after ENCODED_ABOVE needs no code here: when its
        // ring resolves it, its name and canonical value follow the nodes.
        if RingParams::KINDS.iter().any(|(name, _)| !ENCODED_ABOVE.contains(name))
            && let Ok(ring) = self.build_params_only()
        {
            for (name, value) in ring.params().values().into_iter().filter(|(name, _)| !ENCODED_ABOVE.contains(name)) {
                put_str(&mut bytes, name);
                match value {
                    ParamValue::Whole(v) => bytes.extend_from_slice(&v.to_le_bytes()),
                    ParamValue::Text(text) => put_str(&mut bytes, &text),
                    ParamValue::Flag(flag) => bytes.push(u8::from(flag)),
                    ParamValue::Wholes(values) => {
                        bytes.extend_from_slice(&(values.len() as u32).to_le_bytes());
                        values.iter().for_each(|v| bytes.extend_from_slice(&v.to_le_bytes()));
                    }
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
        let removed = self.params.removed_buckets.as_deref().unwrap_or_default();
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
        let mut builder = Ring::builder().params(self.params.clone()).nodes(nodes);
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
            if let Some(down) = node.down {
                builder = builder.down(node.id.clone(), down);
            }
        }
        builder.build()
    }

    /// A ring of this config's algorithm and parameters and no nodes, for
    /// the parameters as resolved.
    fn build_params_only(&self) -> Result<Ring, RingError> {
        let params = RingParams { removed_buckets: None, ..self.params.clone() };
        Ring::builder().params(params).build()
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
        let slot_ranges = if self.slots_are_fresh() { None } else { self.slot_ranges() };
        let haproxy_ids = self.haproxy_ids_per_node();
        let down = self.down_per_node();
        // Memento buckets are written when they are not the default
        // assignment (the working buckets ascending, in node order).
        let buckets = self.buckets().filter(|b| !b.is_sorted_by(|a, b| a < b));
        RingConfig {
            format_version: PLACEMENT_FORMAT,
            params: self.params(),
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
                    down: down.filter(|d| d[i]).map(|_| true),
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
