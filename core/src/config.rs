//! The JSON ring config shared by every binding and tool.

use serde::{Deserialize, Serialize};

use crate::error::RingError;
use crate::node::Node;
use crate::ring::{DEFAULT_VNODES, Ring};

/// The placement format this build implements (see `core/SPEC.md`).
pub const PLACEMENT_FORMAT: u32 = 1;

/// Placement algorithm named by a config. Format 1 defines `"ring"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Algorithm {
    /// Consistent hashing with weighted virtual nodes ([`Ring`]).
    #[default]
    Ring,
}

impl Algorithm {
    /// The algorithm's name as written in a config (`"ring"`).
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Ring => "ring",
        }
    }
}

/// A ring as a serde config, read and written as JSON:
///
/// ```json
/// {"format_version": 1, "algorithm": "ring", "vnodes": 160, "seed": 0,
///  "nodes": [{"id": "cache-1", "weight": 1.0}]}
/// ```
///
/// `algorithm` defaults to `"ring"`, `vnodes` to 160, `seed` to 0 and a
/// node's `weight` to 1.0. Unknown fields are rejected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RingConfig {
    /// Placement format; must equal [`PLACEMENT_FORMAT`].
    pub format_version: u32,
    /// Placement algorithm.
    #[serde(default)]
    pub algorithm: Algorithm,
    /// Points per unit of weight.
    #[serde(default = "default_vnodes")]
    pub vnodes: u32,
    /// Seed of the key and point hashes.
    #[serde(default)]
    pub seed: u64,
    /// The nodes, in order.
    pub nodes: Vec<NodeConfig>,
}

/// One node of a [`RingConfig`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeConfig {
    /// Non-empty UTF-8 id.
    pub id: String,
    /// Relative capacity, finite and `>= 0` (default 1.0).
    #[serde(default = "default_weight")]
    pub weight: f64,
    /// Optional failure-domain label (non-empty); left out of the JSON when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
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

fn default_vnodes() -> u32 {
    DEFAULT_VNODES
}

fn default_weight() -> f64 {
    1.0
}

impl RingConfig {
    /// Parses a JSON config.
    ///
    /// Errors: [`RingError::InvalidConfig`] for malformed JSON, missing,
    /// unknown or mistyped fields; [`RingError::UnsupportedFormat`] when
    /// `format_version` is not [`PLACEMENT_FORMAT`].
    pub fn from_json(json: &str) -> Result<RingConfig, RingError> {
        let invalid = |e: serde_json::Error| RingError::InvalidConfig { message: e.to_string() };
        // serde would also read a struct from a JSON array, by position; a config is an object.
        let value: serde_json::Value = serde_json::from_str(json).map_err(invalid)?;
        if !value.is_object() {
            return Err(RingError::InvalidConfig {
                message: format!("expected a JSON object, found {}", json_kind(&value)),
            });
        }
        let config: RingConfig = serde_json::from_value(value).map_err(invalid)?;
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
    /// bytes, `vnodes` (u32), `seed` (u64), the node count (u64), then each
    /// node in ascending order of id bytes: id length (u32) and bytes, weight
    /// as IEEE-754 binary64 bits (u64, with -0.0 written as 0.0), and the zone
    /// as a byte 0 (none) or 1 followed by its length (u32) and bytes.
    pub fn fingerprint(&self) -> u64 {
        let mut nodes: Vec<&NodeConfig> = self.nodes.iter().collect();
        nodes.sort_unstable_by(|a, b| a.id.as_bytes().cmp(b.id.as_bytes()));
        let mut bytes = Vec::with_capacity(64 + nodes.len() * 32);
        let put_str = |bytes: &mut Vec<u8>, text: &str| {
            bytes.extend_from_slice(&(text.len() as u32).to_le_bytes());
            bytes.extend_from_slice(text.as_bytes());
        };
        bytes.extend_from_slice(b"shardring-config");
        bytes.extend_from_slice(&self.format_version.to_le_bytes());
        put_str(&mut bytes, self.algorithm.name());
        bytes.extend_from_slice(&self.vnodes.to_le_bytes());
        bytes.extend_from_slice(&self.seed.to_le_bytes());
        bytes.extend_from_slice(&(nodes.len() as u64).to_le_bytes());
        for node in nodes {
            put_str(&mut bytes, &node.id);
            let weight = if node.weight == 0.0 { 0.0f64 } else { node.weight };
            bytes.extend_from_slice(&weight.to_bits().to_le_bytes());
            match &node.zone {
                None => bytes.push(0),
                Some(zone) => {
                    bytes.push(1);
                    put_str(&mut bytes, zone);
                }
            }
        }
        xxhash_rust::xxh3::xxh3_64(&bytes)
    }

    /// Builds the ring this config describes. Errors as [`crate::RingBuilder::build`].
    pub fn build(&self) -> Result<Ring, RingError> {
        let nodes = self.nodes.iter().map(|n| {
            let node = Node::new(n.id.clone(), n.weight);
            match &n.zone {
                Some(zone) => node.with_zone(zone.clone()),
                None => node,
            }
        });
        Ring::builder().vnodes(self.vnodes).seed(self.seed).nodes(nodes).build()
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
        RingConfig {
            format_version: PLACEMENT_FORMAT,
            algorithm: Algorithm::Ring,
            vnodes: self.vnodes(),
            seed: self.seed(),
            nodes: self
                .nodes()
                .iter()
                .map(|n| NodeConfig { id: n.id().to_owned(), weight: n.weight(), zone: n.zone().map(str::to_owned) })
                .collect(),
        }
    }

    /// A stable 64-bit digest of this ring's canonical config, equal for two
    /// rings exactly when they place every key the same way by construction
    /// (same algorithm, vnodes, seed, and set of (id, weight, zone)); node
    /// order does not count. Computed as XXH3-64 (seed 0) of the canonical
    /// encoding in `core/SPEC.md`, so any language can recompute it.
    pub fn fingerprint(&self) -> u64 {
        self.to_config().fingerprint()
    }
}
