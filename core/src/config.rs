//! The JSON ring config shared by every binding and tool.

use serde::{Deserialize, Serialize};

use crate::error::RingError;
use crate::ring::{DEFAULT_VNODES, Node, Ring};

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
        let config: RingConfig =
            serde_json::from_str(json).map_err(|e| RingError::InvalidConfig { message: e.to_string() })?;
        if config.format_version != PLACEMENT_FORMAT {
            return Err(RingError::UnsupportedFormat { found: config.format_version, supported: PLACEMENT_FORMAT });
        }
        Ok(config)
    }

    /// The config as pretty-printed JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a RingConfig always serialises")
    }

    /// Builds the ring this config describes. Errors as [`crate::RingBuilder::build`].
    pub fn build(&self) -> Result<Ring, RingError> {
        let nodes = self.nodes.iter().map(|n| Node::new(n.id.clone(), n.weight));
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
            nodes: self.nodes().iter().map(|n| NodeConfig { id: n.id().to_owned(), weight: n.weight() }).collect(),
        }
    }
}

