#![warn(missing_docs)]
#![forbid(unsafe_code)]
//! # shardring
//!
//! Consistent hashing: given a set of nodes (cache servers, database shards,
//! backends), answers "which node owns this key?", moving as few keys as
//! possible when nodes join, leave or change weight, and placing every key
//! identically in Rust, C, Python and Node.
//!
//! Placement follows `core/SPEC.md` (placement format 1): keys and points are
//! hashed with XXH3-64 under the ring's seed; a node of weight `w` owns
//! `round(vnodes * w)` points; a key belongs to the first point at or after
//! its hash, wrapping past the end.
//!
//! ```
//! use shardring::Ring;
//!
//! let ring = Ring::builder()
//!     .node("cache-1", 1.0)
//!     .node("cache-2", 1.0)
//!     .node("cache-3", 2.0) // owns about twice the keys of the others
//!     .build()?;
//! let owner = ring.get("user:42")?;
//! let replicas = ring.get_n("user:42", 2)?; // two distinct nodes, owner first
//! assert_eq!(replicas[0].id(), owner.id());
//! assert_ne!(replicas[0].id(), replicas[1].id());
//! # Ok::<(), shardring::RingError>(())
//! ```

mod algorithm;
mod algorithms;
mod analysis;
mod batch;
mod bounded;
mod builder;
mod compat;
mod config;
mod error;
mod hash;
mod json;
mod node;
mod params;
mod registry;
mod ring;
mod scheme;
mod structures;
mod traffic;
mod transition;

// The modules of public items, by the paths they have always had.
pub use algorithms::{jump, jumpback, maglev, slots};
pub use compat::envoy_grpc as ring_hash;
pub use compat::{ketama, nginx, twemproxy};

pub use algorithm::Algorithm;
pub use algorithms::memento::MAX_BUCKETS as MAX_MEMENTO_BUCKETS;
pub use analysis::{Balance, Flow, KeyArc, MovedArc, RingDiff, Spread};
pub use batch::KeyBatch;
pub use bounded::{Assignment, Lease, LoadTracker};
pub use builder::RingBuilder;
pub use config::{NodeConfig, PLACEMENT_FORMAT, RingConfig};
pub use error::RingError;
pub use hash::{HashFunction, KeyHash, hash_key, hash_point};
pub use json::from_json_strict;
pub use node::{Node, NodeState};
pub use params::{
    DEFAULT_SEED, DEFAULT_VNODES, Distribution, EndpointOrder, ParamKind, ParamValue, RendezvousScore, RingParams,
    ServerIds, ServerKey,
};
pub use ring::Ring;
pub use structures::continuum::MAX_POINTS;
pub use traffic::counts::{LookupCounter, LookupCounts, STRIPES as COUNT_STRIPES};
pub use traffic::hot_keys::{HotKey, HotKeys, HotKeysOptions};
pub use traffic::hot_set::{HotEntry, HotPhase, HotSet, KeyRate, MAX_HOT_REPLICAS, SpreadPlan};
pub use traffic::near_cache::NearCache;
pub use transition::Transition;
pub use transition::handoff::{self, Route};
