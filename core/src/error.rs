//! The one error type of the placement engine.

/// Everything that can go wrong when building a ring or placing a key.
///
/// Every variant names the offending value. Bindings map each variant to
/// their own error vocabulary exactly once (C: a `ring_result` code; Python:
/// a `shardring.RingError` subclass; Node: an `Error` whose `code` is the C
/// result name), so the variant list is part of the public contract.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RingError {
    /// A node id is the empty string. `position` is the node's index in the
    /// list given to the builder (0-based).
    #[error("node id at position {position} is empty; ids must be non-empty UTF-8")]
    EmptyId {
        /// 0-based position of the node in the builder's input.
        position: usize,
    },

    /// Two nodes share an id. Ids are compared as UTF-8 bytes, without
    /// Unicode normalisation.
    #[error("duplicate node id {id:?}")]
    DuplicateId {
        /// The repeated id.
        id: String,
    },

    /// A weight is NaN, infinite or negative, or one the ring's algorithm
    /// cannot express (a fractional ketama or nginx weight, a jump weight
    /// other than 1, a `haproxy` weight change that HAProxy's `set weight`
    /// would make with ties reordered). Weights must be finite and `>= 0`;
    /// 0 means drained (a member that owns no keys).
    #[error("invalid weight {weight} for node {id:?}: {rule}")]
    InvalidWeight {
        /// The node the weight was given for.
        id: String,
        /// The rejected weight, as given.
        weight: f64,
        /// The rule it breaks.
        rule: &'static str,
    },

    /// A node's zone is the empty string (leave it out instead).
    #[error("zone of node {id:?} is empty; leave the zone out for a node without one")]
    EmptyZone {
        /// The node whose zone is empty.
        id: String,
    },

    /// A node named for removal or re-weighting is not in the ring.
    #[error("unknown node {id:?}")]
    UnknownNode {
        /// The id that was not found.
        id: String,
    },

    /// Two rings compared by a diff hash keys with different seeds, so the
    /// same key sits at different positions on them.
    #[error("rings have different seeds ({left} and {right}): their positions cannot be compared")]
    SeedMismatch {
        /// Seed of the first ring.
        left: u64,
        /// Seed of the second ring.
        right: u64,
    },

    /// `vnodes` (points per unit of weight) is 0.
    #[error("vnodes must be at least 1, got 0")]
    ZeroVnodes,

    /// The ring would hold more points than [`MAX_POINTS`](crate::MAX_POINTS).
    /// Point counts are computed with checked arithmetic, so an enormous
    /// weight or vnodes value fails here instead of allocating.
    #[error("ring would need {} points (while adding node {id:?}), over the limit of {limit}", points_text(*.requested))]
    TooManyPoints {
        /// The node whose points crossed the limit.
        id: String,
        /// Points needed up to and including that node (saturated at `u64::MAX`).
        requested: u64,
        /// The limit, [`MAX_POINTS`](crate::MAX_POINTS).
        limit: u64,
    },

    /// A lookup on a ring with no node that can own keys: it has no nodes,
    /// every node has weight 0, or (nginx) every node is marked down.
    #[error("ring has no points: add a node with weight > 0 (and, under nginx, not marked down) before placing keys")]
    EmptyRing,

    /// A ring config (JSON) could not be read (malformed JSON, a missing or
    /// unknown field, a value of the wrong type: the message then starts
    /// with "invalid ring config: "), or a parameter is refused (one the
    /// algorithm does not take, an unknown algorithm or parameter value:
    /// the message names the parameter and the value, whether it came from a
    /// config or from a builder call).
    #[error("{message}")]
    InvalidConfig {
        /// What the JSON reader reported, with line and column.
        message: String,
    },

    /// A ring config names a placement format this build does not implement.
    #[error("unsupported placement format_version {found}; this build implements format {supported}")]
    UnsupportedFormat {
        /// The `format_version` found in the config.
        found: u32,
        /// The format this build implements, [`PLACEMENT_FORMAT`](crate::PLACEMENT_FORMAT).
        supported: u32,
    },

    /// A Maglev table size is not prime, is smaller than the node count, or
    /// is above [`MAX_POINTS`](crate::MAX_POINTS).
    #[error("invalid Maglev table size {size}: {reason}")]
    InvalidTableSize {
        /// The rejected size.
        size: u64,
        /// The rule it breaks.
        reason: String,
    },

    /// A ketama server id is not `host`, `host:port` or `[ipv6]:port` with a
    /// port from 1 to 65535.
    #[error("invalid server address {id:?}: {reason}")]
    InvalidAddress {
        /// The node id.
        id: String,
        /// What is wrong with it.
        reason: String,
    },

    /// A hash given to a `*_by_hash` call is wider than the algorithm's key
    /// hash (32 bits for ketama and nginx, 14 for Redis slots).
    #[error("hash {hash} is out of range: this algorithm's key hashes are below 2^{bits}")]
    HashOutOfRange {
        /// The hash given.
        hash: u64,
        /// Width of the algorithm's key hash, [`Algorithm::hash_bits`](crate::Algorithm::hash_bits).
        bits: u32,
    },

    /// Two rings compared by a diff run different algorithms, so their hash
    /// positions do not correspond.
    #[error("rings use different algorithms ({left} and {right}): their positions cannot be compared")]
    AlgorithmMismatch {
        /// Algorithm of the first ring.
        left: &'static str,
        /// Algorithm of the second ring.
        right: &'static str,
    },

    /// A bounded-loads balance factor `1 + epsilon` with `epsilon` not
    /// finite and `> 0`.
    #[error("invalid epsilon {epsilon}: bounded loads need a finite epsilon > 0 (balance factor 1 + epsilon)")]
    InvalidEpsilon {
        /// The rejected epsilon.
        epsilon: f64,
    },

    /// A load release for a node whose load is already 0.
    #[error("node {id:?} has no load to release")]
    NoLoad {
        /// The node id.
        id: String,
    },
}

/// "at least N", or "more than 2^64" when the count saturated.
fn points_text(requested: u64) -> String {
    if requested == u64::MAX { "more than 2^64".to_owned() } else { format!("at least {requested}") }
}

impl RingError {
    /// The stable name of this error's kind, shared by every binding: the C
    /// `ring_result` constant and the JavaScript `Error.code` (for example
    /// `"RING_INVALID_WEIGHT"`). Names are never reused for another meaning.
    pub fn code(&self) -> &'static str {
        match self {
            RingError::EmptyId { .. } => "RING_EMPTY_ID",
            RingError::DuplicateId { .. } => "RING_DUPLICATE_ID",
            RingError::InvalidWeight { .. } => "RING_INVALID_WEIGHT",
            RingError::EmptyZone { .. } => "RING_EMPTY_ZONE",
            RingError::UnknownNode { .. } => "RING_UNKNOWN_NODE",
            RingError::SeedMismatch { .. } => "RING_SEED_MISMATCH",
            RingError::ZeroVnodes => "RING_ZERO_VNODES",
            RingError::TooManyPoints { .. } => "RING_TOO_MANY_POINTS",
            RingError::EmptyRing => "RING_EMPTY_RING",
            RingError::InvalidConfig { .. } => "RING_INVALID_CONFIG",
            RingError::UnsupportedFormat { .. } => "RING_UNSUPPORTED_FORMAT",
            RingError::InvalidTableSize { .. } => "RING_INVALID_TABLE_SIZE",
            RingError::InvalidAddress { .. } => "RING_INVALID_ADDRESS",
            RingError::HashOutOfRange { .. } => "RING_HASH_OUT_OF_RANGE",
            RingError::AlgorithmMismatch { .. } => "RING_ALGORITHM_MISMATCH",
            RingError::InvalidEpsilon { .. } => "RING_INVALID_EPSILON",
            RingError::NoLoad { .. } => "RING_NO_LOAD",
        }
    }
}
