//! The one internal interface every algorithm implements, in its own file:
//! [`Scheme`] (its facts, parameters and their validation, build and
//! derivation) and [`Lookup`] (owner, preference walk, arcs of what it
//! builds). [`Algorithm::scheme`](crate::Algorithm) is the registry, and
//! [`Ring`](crate::Ring) the facade that dispatches to it in one place.
//!
//! A key lookup goes through [`Placement`]: the continuum, which most
//! algorithms share, is matched directly so that `get` inlines its search;
//! every other structure is a [`Lookup`] behind one indirect call.

use std::fmt;
use std::panic::{RefUnwindSafe, UnwindSafe};
use std::sync::Arc;

use crate::error::RingError;
use crate::hash::KeyHash;
use crate::node::Node;
use crate::params::{Distribution, Param, Params, RingParams};
use crate::structures::continuum::Continuum;

/// Hash of point `index` of node `id` under a seed. Always
/// [`hash_point`](crate::hash_point) except in the crate's own collision
/// tests, which force a tiny hash.
pub(crate) type PointHash = fn(&[u8], u32, u64) -> u64;

/// What a config or builder gives per node besides id, weight and zone,
/// each parallel to the nodes and given only to an algorithm that takes it,
/// and the history a `memento` ring was given.
#[derive(Debug, Clone, Default)]
pub(crate) struct PerNode {
    /// Redis Cluster slot ranges ([`Param::SlotRanges`]: `slots` rings mirroring a live cluster).
    pub(crate) slots: Option<Vec<Vec<std::ops::RangeInclusive<u16>>>>,
    /// HAProxy server ids, 0 for one HAProxy assigns ([`Param::ServerPuids`]).
    pub(crate) puids: Option<Vec<u32>>,
    /// Memento buckets, `None` for a node without one ([`Param::Buckets`]).
    pub(crate) buckets: Option<Vec<Option<u32>>>,
    /// Memento's removed buckets in removal order, oldest first ([`Param::Buckets`]).
    pub(crate) removed_buckets: Option<Vec<u32>>,
    /// Whether each node is marked `down` (nginx; [`Param::Down`]).
    pub(crate) down: Option<Vec<bool>>,
}

/// The state of a `memento` ring besides its nodes: its bucket array, whose
/// buckets each node holds, and which were removed in which order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BucketTable {
    /// Buckets in the array, working and removed.
    pub(crate) size: u32,
    /// Each node's bucket, parallel to the nodes.
    pub(crate) of_node: Vec<u32>,
    /// The removed buckets in removal order, oldest first; with
    /// [`BucketTable::of_node`] they are exactly `0..size`.
    pub(crate) removed: Vec<u32>,
}

/// What the facade and the bindings know of an algorithm without building it.
#[derive(Debug)]
pub(crate) struct Facts {
    /// Width in bits of the key hash: keys hash into `[0, 2^bits)`.
    pub(crate) hash_bits: u32,
    /// The default `vnodes`, where `vnodes` is a parameter.
    pub(crate) vnodes: Option<u32>,
    /// Whether the seed is a parameter (the peer modes hash unseeded, as their peers do).
    pub(crate) seeded: bool,
    /// Whether node order places keys, and so enters the fingerprint.
    pub(crate) order_places_keys: bool,
    /// Where every node must have weight exactly 1 (a node is a bucket):
    /// the rule a weight breaks, which the facade checks for every build and
    /// derivation.
    pub(crate) unit_weights: Option<&'static str>,
    /// Whether a node of weight 0 owns no keys.
    pub(crate) weight_zero_drains: bool,
    /// The other parameters it takes.
    pub(crate) takes: &'static [Param],
}

impl Facts {
    /// What most algorithms are, so each states only where it differs: a
    /// 64-bit key hash, no `vnodes` parameter, unseeded, node order
    /// irrelevant, any weights, weight 0 draining a node, no other parameter.
    pub(crate) const DEFAULT: Facts = Facts {
        hash_bits: 64,
        vnodes: None,
        seeded: false,
        order_places_keys: false,
        unit_weights: None,
        weight_zero_drains: true,
        takes: &[],
    };

    /// Whether the algorithm takes `param`.
    pub(crate) fn takes(&self, param: Param) -> bool {
        self.takes.contains(&param)
    }
}

/// How a derived ring's nodes differ from its parent's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Change {
    /// A node was appended.
    Added,
    /// The node at this index left; later nodes shifted down one.
    Removed(u32),
    /// The node at this index changed weight; this was its old weight.
    Reweighted(usize, f64),
}

impl Change {
    /// The index a parent's node `owner` has in the derived ring, `None` when it left.
    pub(crate) fn owner_now(self, owner: u32) -> Option<u32> {
        match self {
            Change::Removed(removed) if owner == removed => None,
            Change::Removed(removed) if owner > removed => Some(owner - 1),
            _ => Some(owner),
        }
    }
}

/// One placement algorithm: its facts, parameters, build and derivation.
/// Every implementation is a unit value in the algorithm's own file.
pub(crate) trait Scheme: Sync {
    fn facts(&self) -> &Facts;

    /// The distribution used when none is given, where it is a parameter.
    fn default_distribution(&self) -> Option<Distribution> {
        None
    }

    /// The key hash used when none is given, where it is a parameter.
    fn default_key_hash(&self, _distribution: Distribution) -> Option<KeyHash> {
        None
    }

    /// Resolves the parameters: defaults, checks, the key rule. `given`
    /// holds only parameters the algorithm takes (the facade refused the
    /// others, naming them). Errors: [`RingError::ZeroVnodes`],
    /// [`RingError::InvalidConfig`] naming a value the algorithm refuses.
    fn resolve(&self, given: &RingParams) -> Result<Params, RingError>;

    /// Builds the placement over `nodes`, which the facade validated (ids,
    /// weights, uniqueness), with what was given per node.
    fn build(
        &self,
        params: &Params,
        nodes: &[Node],
        point_hash: PointHash,
        extra: PerNode,
    ) -> Result<Placement, RingError>;

    /// The placement of a ring derived from one placed as `parent` by
    /// `change`, over the derived `nodes`. Builds afresh unless the
    /// algorithm can edit its parent (the `ring` algorithm merges points) or
    /// depends on it (`slots` rebalances).
    fn derive(
        &self,
        params: &Params,
        parent: &Placement,
        nodes: &[Node],
        change: Change,
        point_hash: PointHash,
    ) -> Result<Placement, RingError> {
        let _ = (parent, change);
        self.build(params, nodes, point_hash, PerNode::default())
    }
}

/// What a built placement answers. Called only while some node can own keys.
/// Unwind-safe, as [`crate::Ring`] stays for the bindings that catch panics.
pub(crate) trait Lookup: fmt::Debug + Send + Sync + RefUnwindSafe + UnwindSafe {
    /// Index of the node owning an in-range key hash.
    fn owner(&self, hash: u64) -> usize;

    /// Visits candidate owners of `hash` in preference order (a node may
    /// repeat; every node that can own keys appears), until `visit` returns true.
    fn walk(&self, hash: u64, visit: &mut dyn FnMut(usize) -> bool);

    /// Sets `live[i]` for each node `i` that owns keys.
    fn mark_live(&self, live: &mut [bool]);

    /// Heap bytes of the structure.
    fn heap_bytes(&self) -> usize;

    /// Last 64-bit position of each arc with its owner, in order, when the
    /// placement has arcs: a native hash `h` of `bits` bits sits at
    /// positions `h << (64 - bits) ..= (h << (64 - bits)) | (2^(64 - bits) - 1)`.
    fn arc_ends(&self) -> Option<Vec<(u64, usize)>>;

    /// Adds each node's expected share of keys to `shares`, for placements
    /// without arcs.
    fn expected_shares(&self, shares: &mut [f64]) {
        let _ = shares;
    }

    /// The slot -> node table of a `slots` ring.
    fn slot_table(&self) -> Option<&[u32]> {
        None
    }

    /// The server ids given to a `haproxy` ring, per node (0: assigned by HAProxy).
    fn puids(&self) -> Option<&[u32]> {
        None
    }

    /// Per server, the nodes HAProxy has allocated for it (`haproxy` rings):
    /// those of its configured weight, or of the highest weight a derivation
    /// gave it since.
    fn allocated_nodes(&self) -> Option<&[u32]> {
        None
    }

    /// The bucket table of a `memento` ring.
    fn buckets(&self) -> Option<&BucketTable> {
        None
    }

    /// Per node, whether it is marked `down` (`nginx` rings with a node
    /// marked down; `None` when none is).
    fn down(&self) -> Option<&[bool]> {
        None
    }

    /// The continuum keys are placed on, when this structure wraps one.
    fn continuum(&self) -> Option<&Continuum> {
        None
    }

    /// The owner of the first node in key order, where HAProxy gives up a
    /// bounded-load walk (`haproxy` rings).
    fn first_owner(&self) -> Option<usize> {
        None
    }
}

/// How a ring places keys: the continuum of the point-based algorithms, or
/// any other [`Lookup`] (jump, modula, rendezvous, Maglev and slot tables).
#[derive(Debug, Clone)]
pub(crate) enum Placement {
    Continuum(Continuum),
    Other(Arc<dyn Lookup>),
}

impl Placement {
    /// The lookup structure, whichever it is.
    pub(crate) fn lookup(&self) -> &dyn Lookup {
        match self {
            Placement::Continuum(continuum) => continuum,
            Placement::Other(other) => &**other,
        }
    }

    /// The continuum keys are placed on, for the point-based algorithms.
    pub(crate) fn continuum(&self) -> Option<&Continuum> {
        match self {
            Placement::Continuum(continuum) => Some(continuum),
            Placement::Other(other) => other.continuum(),
        }
    }

    /// A placement of any other lookup structure.
    pub(crate) fn other(lookup: impl Lookup + 'static) -> Placement {
        Placement::Other(Arc::new(lookup))
    }
}

impl Lookup for Continuum {
    fn owner(&self, hash: u64) -> usize {
        Continuum::owner(self, hash)
    }

    fn walk(&self, hash: u64, visit: &mut dyn FnMut(usize) -> bool) {
        Continuum::walk(self, self.start(hash), visit)
    }

    fn mark_live(&self, live: &mut [bool]) {
        self.owners().iter().for_each(|&o| live[o as usize] = true);
    }

    fn heap_bytes(&self) -> usize {
        Continuum::heap_bytes(self)
    }

    fn arc_ends(&self) -> Option<Vec<(u64, usize)>> {
        Some(self.boundaries().collect())
    }
}

/// Visits the owners of a slot table from slot `first` onwards, wrapping,
/// each run of equal owners once (Redis slot ranges are thousands of slots
/// long), until `visit` returns true.
pub(crate) fn walk_table(table: &[u32], first: usize, visit: &mut dyn FnMut(usize) -> bool) {
    let (after, before) = table.split_at(first);
    for part in [before, after] {
        let mut rest = part;
        while let Some(&owner) = rest.first() {
            if visit(owner as usize) {
                return;
            }
            let run = rest.iter().position(|&o| o != owner).unwrap_or(rest.len());
            rest = &rest[run..];
        }
    }
}

/// The arcs of a slot table: runs of equal owners, each ending at
/// `end(last slot of the run)`.
pub(crate) fn table_arc_ends(table: &[u32], end: impl Fn(usize) -> u64) -> Vec<(u64, usize)> {
    let mut ends: Vec<(u64, usize)> = Vec::new();
    for (s, &owner) in table.iter().enumerate() {
        match ends.last_mut() {
            Some(last) if last.1 == owner as usize => last.0 = end(s),
            _ => ends.push((end(s), owner as usize)),
        }
    }
    ends
}

/// Sets `live[o]` for every owner in a table.
pub(crate) fn mark_table(table: &[u32], live: &mut [bool]) {
    table.iter().for_each(|&o| live[o as usize] = true);
}
