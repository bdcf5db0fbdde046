//! Ring members: id, weight and optional zone.

use serde::{Deserialize, Serialize};

use crate::error::RingError;

/// A member of a ring: an id, a weight and an optional zone.
///
/// - **id**: non-empty UTF-8, compared as bytes (no Unicode normalisation).
/// - **weight**: relative capacity, finite and `>= 0`. On the ring algorithm
///   a node owns `round(vnodes * weight)` points (at least 1 when the weight
///   is above 0), so a node of weight 2 owns about twice the keys of one of
///   weight 1. Weight 0 means drained: still a member, owning no keys.
/// - **zone**: an optional failure-domain label (rack, availability zone).
///   Preference lists take nodes from distinct zones first, as Cassandra's
///   NetworkTopologyStrategy spreads replicas across racks.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    id: String,
    weight: f64,
    zone: Option<String>,
}

impl Node {
    /// A node with the given id and weight and no zone. Validation happens
    /// when a ring is built or derived.
    pub fn new(id: impl Into<String>, weight: f64) -> Self {
        Node { id: id.into(), weight, zone: None }
    }

    /// The same node in failure domain `zone` (non-empty).
    pub fn with_zone(mut self, zone: impl Into<String>) -> Self {
        self.zone = Some(zone.into());
        self
    }

    /// The node's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The node's weight (relative capacity, `>= 0`).
    pub fn weight(&self) -> f64 {
        self.weight
    }

    /// The node's zone, if it has one.
    pub fn zone(&self) -> Option<&str> {
        self.zone.as_deref()
    }

    pub(crate) fn set_weight(&mut self, weight: f64) {
        self.weight = weight;
    }

    /// Checks the id, weight and zone. `position` is the node's 0-based
    /// position in the caller's input, for the error message.
    pub(crate) fn validate(&self, position: usize) -> Result<(), RingError> {
        if self.id.is_empty() {
            return Err(RingError::EmptyId { position });
        }
        check_weight(&self.id, self.weight)?;
        if self.zone.as_deref() == Some("") {
            return Err(RingError::EmptyZone { id: self.id.clone() });
        }
        Ok(())
    }
}

/// Weights must be finite and `>= 0`.
pub(crate) fn check_weight(id: &str, weight: f64) -> Result<(), RingError> {
    if weight.is_finite() && weight >= 0.0 {
        Ok(())
    } else {
        Err(RingError::InvalidWeight { id: id.to_owned(), weight, rule: "weights must be finite and >= 0" })
    }
}

/// Fails with the first repeated id (ids compared as bytes).
pub(crate) fn check_unique(nodes: &[Node]) -> Result<(), RingError> {
    let mut ids: Vec<&str> = nodes.iter().map(|n| n.id.as_str()).collect();
    ids.sort_unstable();
    match ids.windows(2).find(|w| w[0] == w[1]) {
        Some(w) => Err(RingError::DuplicateId { id: w[0].to_owned() }),
        None => Ok(()),
    }
}

/// A member's part in a transition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeState {
    /// Takes reads and writes for the keys it owns.
    #[default]
    Active,
    /// Joining: takes writes for the keys it will own, no reads.
    Warming,
    /// Leaving: takes no writes; serves reads as a fallback for the keys it owned.
    Draining,
}

impl NodeState {
    /// `"active"`, `"warming"` or `"draining"`.
    pub fn name(self) -> &'static str {
        match self {
            NodeState::Active => "active",
            NodeState::Warming => "warming",
            NodeState::Draining => "draining",
        }
    }
}

/// Checks every node (id, weight, zone), that ids are unique and that the
/// weights sum to a finite number.
///
/// Errors: [`RingError::EmptyId`], [`RingError::InvalidWeight`],
/// [`RingError::EmptyZone`], [`RingError::DuplicateId`].
pub(crate) fn check_nodes(nodes: &[Node]) -> Result<(), RingError> {
    let mut total_weight = 0.0;
    for (position, node) in nodes.iter().enumerate() {
        node.validate(position)?;
        total_weight += node.weight();
        if !total_weight.is_finite() {
            let rule = "the weights must sum to a finite number (below about 1.8e308)";
            return Err(RingError::InvalidWeight { id: node.id().to_owned(), weight: node.weight(), rule });
        }
    }
    check_unique(nodes)
}

/// Checks that every node has weight exactly 1, for an algorithm whose nodes
/// are buckets: [`RingError::InvalidWeight`] with the algorithm's `rule`
/// naming the first that has another.
pub(crate) fn check_unit_weights(nodes: &[Node], rule: &'static str) -> Result<(), RingError> {
    match nodes.iter().find(|n| n.weight() != 1.0) {
        Some(node) => Err(RingError::InvalidWeight { id: node.id().to_owned(), weight: node.weight(), rule }),
        None => Ok(()),
    }
}
