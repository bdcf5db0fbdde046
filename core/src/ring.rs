//! [`Ring`]: the one placement interface over every [`Algorithm`]. Each
//! algorithm is a [`Scheme`] in its own file, reached through
//! [`Algorithm::scheme`]; this facade validates nodes and parameters once,
//! hashes keys by the [`KeyRule`] the scheme chose, and looks keys up in
//! its [`Placement`]. Byte-exact rules: `core/SPEC.md`.
//!
//! Here: the struct, its getters and its derivations (`with_node`,
//! `without_node`, `with_weight`). The lookups (`get`, batches, `get_n` and
//! its preference walks with zones) are in `ring/lookups.rs`.

use std::ops::RangeInclusive;
use std::sync::Arc;

use crate::algorithm::Algorithm;
use crate::algorithms::slots;
use crate::error::RingError;
use crate::hash::{HashFunction, KeyHash, KeyRule};
use crate::node::{Node, check_nodes, check_unit_weights, check_weight};
use crate::params::{Distribution, EndpointOrder, Param, Params, RendezvousScore, RingParams, ServerIds, ServerKey};
use crate::scheme::{Change, Placement, PointHash};
use crate::structures::continuum::Continuum;
use crate::traffic::counts::{LookupCounter, RingCounts};
use crate::traffic::hot_keys::HotKeys;

mod lookups;

/// An immutable placement snapshot: nodes, an [`Algorithm`] and its
/// parameters. Every algorithm answers through this one type.
///
/// Cheap to share between threads behind an `Arc` (`Send + Sync`). Nodes keep
/// the order they were given in (a derived ring appends an added node and
/// closes the gap of a removed one); indices returned by
/// [`Ring::get_index`] and [`Ring::get_n_indices`] refer to [`Ring::nodes`].
/// Placement never depends on that order, except where
/// [`Algorithm::order_places_keys`] says it does (jump's buckets, ties in
/// libmemcached's modes and the migration modes, the Envoy and gRPC ring
/// hash's fractional shares, HAProxy's assigned ids) and the fresh
/// [`Algorithm::Slots`] ranges; those are the cases where the order enters
/// [`Ring::fingerprint`].
#[derive(Debug, Clone)]
pub struct Ring {
    nodes: Vec<Node>,
    algorithm: Algorithm,
    params: Params,
    /// Per node, its zone class: nodes share a class iff they share a zone;
    /// a node without a zone has a class of its own. Empty when no node has a zone.
    zone_class: Vec<u32>,
    /// Number of nodes that can own keys.
    live_nodes: usize,
    /// Number of distinct zone classes among nodes that can own keys.
    live_zones: usize,
    placement: Placement,
    point_hash: PointHash,
    /// Where lookups are counted, when a [`crate::LookupCounter`] counts this ring.
    counts: Option<RingCounts>,
    /// The sketch that observes the keys of this ring's lookups, when one does.
    hot: Option<Arc<HotKeys>>,
}

impl Ring {
    pub(crate) fn assemble(
        nodes: Vec<Node>,
        algorithm: Algorithm,
        params: Params,
        placement: Placement,
        point_hash: PointHash,
    ) -> Ring {
        let mut live = vec![false; nodes.len()];
        placement.lookup().mark_live(&mut live);
        let zone_class = zone_classes(&nodes);
        let live_zones = if zone_class.is_empty() {
            0
        } else {
            let mut classes: Vec<u32> = (0..nodes.len()).filter(|&i| live[i]).map(|i| zone_class[i]).collect();
            classes.sort_unstable();
            classes.dedup();
            classes.len()
        };
        let live_nodes = live.iter().filter(|&&l| l).count();
        Ring {
            nodes,
            algorithm,
            params,
            zone_class,
            live_nodes,
            live_zones,
            placement,
            point_hash,
            counts: None,
            hot: None,
        }
    }

    pub(crate) fn set_counts(&mut self, counts: Option<RingCounts>) {
        self.counts = counts;
    }

    pub(crate) fn set_hot(&mut self, hot: Option<Arc<HotKeys>>) {
        self.hot = hot;
    }

    /// The [`HotKeys`] sketch observing this ring's lookups, when one does
    /// (see [`HotKeys::watch`]).
    pub fn hot_keys(&self) -> Option<&Arc<HotKeys>> {
        self.hot.as_ref()
    }

    /// Shows the sketch, when one watches this ring, a lookup of `key`
    /// whose hash under this ring is `hash`. A `slots` ring's 14-bit hash
    /// would make keys share counts: the sketch hashes those keys itself.
    #[inline(always)]
    pub(crate) fn observe(&self, key: &[u8], hash: u64) {
        if let Some(hot) = &self.hot {
            if self.algorithm.hash_bits() >= 32 { hot.observe_hashed(key, hash) } else { hot.observe(key) }
        }
    }

    /// Whether a [`crate::LookupCounter`] counts this ring's lookups.
    pub fn is_counted(&self) -> bool {
        self.counts.is_some()
    }

    /// Counts a lookup that chose node `index`, when this ring is counted.
    #[inline(always)]
    pub(crate) fn tally(&self, index: usize) -> usize {
        if let Some(counts) = &self.counts {
            counts.add(index);
        }
        index
    }

    /// The nodes, in order (drained ones included).
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// Index in [`Ring::nodes`] of the node with this id, if present.
    pub fn position(&self, id: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.id() == id)
    }

    /// The placement algorithm.
    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    /// The algorithm and its parameters as this ring resolved them, in the
    /// canonical form a config writes: each parameter the algorithm takes,
    /// defaults filled in (`vnodes`, `table_size`, the peers' distribution
    /// and key hash, the ring hash modes' sizes and hash function, HAProxy's
    /// `avalanche` and `server_key`, gRPC's endpoint order), and left out
    /// where the algorithm takes none or the value is no parameter's
    /// (rendezvous's default `integer` score, no removed buckets, no hash
    /// tag, no default port). Building a ring from these parameters and
    /// the same nodes gives this ring again.
    pub fn params(&self) -> RingParams {
        let algorithm = self.algorithm;
        let sizes = self.ring_sizes();
        RingParams {
            algorithm,
            vnodes: self.vnodes(),
            seed: algorithm.uses_seed().then_some(self.seed()),
            table_size: self.table_size(),
            key_hash: self.key_hash_parameter(),
            hash_tag: self.hash_tag(),
            min_ring_size: sizes.map(|(min, _)| min),
            max_ring_size: sizes.map(|(_, max)| max),
            hash_function: self.hash_function(),
            avalanche: self.avalanche(),
            // The default, integer, is left out; float is written.
            score: self.score().filter(|&s| s != RendezvousScore::default()),
            removed_buckets: self.removed_buckets().filter(|r| !r.is_empty()).map(<[u32]>::to_vec),
            ..self.params.written(algorithm)
        }
    }

    /// Points per unit of weight: `Some` for [`Algorithm::Ring`] only.
    pub fn vnodes(&self) -> Option<u32> {
        self.algorithm.uses_vnodes().then_some(self.params.vnodes)
    }

    /// Seed of the key and node hashes (0 for the unseeded algorithms).
    pub fn seed(&self) -> u64 {
        self.params.seed
    }

    /// The peer's distribution: `Some` for [`Algorithm::Libmemcached`] and
    /// [`Algorithm::Twemproxy`] only.
    pub fn distribution(&self) -> Option<Distribution> {
        self.params.distribution
    }

    /// npm hashring's `default port`: `Some` for an [`Algorithm::HashringJs`] ring that has one.
    pub fn default_port(&self) -> Option<u16> {
        self.params.default_port
    }

    /// The `key_hash` parameter as configured or defaulted: `Some` for the
    /// algorithms that take one ([`Algorithm::Libmemcached`],
    /// [`Algorithm::Twemproxy`]), which a config then writes.
    pub fn key_hash_parameter(&self) -> Option<KeyHash> {
        let distribution = self.params.distribution?;
        self.algorithm.default_key_hash(distribution).and(self.named_key_hash())
    }

    /// What node ids are: `Some` for [`Algorithm::Twemproxy`] only.
    pub fn server_ids(&self) -> Option<ServerIds> {
        self.params.server_ids
    }

    /// twemproxy's hash tag: `Some` when a [`Algorithm::Twemproxy`] ring has one.
    pub fn hash_tag(&self) -> Option<String> {
        match self.params.key {
            KeyRule::Tagged(_, Some(tag)) => Some(String::from_utf8_lossy(&tag).into_owned()),
            _ => None,
        }
    }

    /// The named 32-bit key hash of a peer-compatible mode (MD5 for the
    /// ketama modes, `crc32a` for nginx, the configured one for
    /// libmemcached); `None` for the XXH3 algorithms and `slots`.
    pub fn named_key_hash(&self) -> Option<KeyHash> {
        self.params.key.named()
    }

    /// Table size: `Some` for [`Algorithm::Maglev`] and [`Algorithm::EnvoyMaglev`] only.
    pub fn table_size(&self) -> Option<u32> {
        self.algorithm.facts().takes(Param::TableSize).then_some(self.params.table_size)
    }

    /// `Some((minimum, maximum))` ring size, as configured or defaulted (and
    /// capped, under gRPC), for the ring hash modes only.
    pub fn ring_sizes(&self) -> Option<(u64, u64)> {
        (self.params.max_ring_size > 0).then_some((self.params.min_ring_size, self.params.max_ring_size))
    }

    /// The balancer's hash function as configured or defaulted: `Some` for
    /// [`Algorithm::EnvoyRingHash`], [`Algorithm::GrpcRingHash`] and
    /// [`Algorithm::Haproxy`] only.
    pub fn hash_function(&self) -> Option<HashFunction> {
        match self.params.key {
            KeyRule::Haproxy(function, _) => Some(function),
            _ => self.params.hash_function,
        }
    }

    /// `Some(avalanche)` for [`Algorithm::Haproxy`] only.
    pub fn avalanche(&self) -> Option<bool> {
        match self.params.key {
            KeyRule::Haproxy(_, avalanche) => Some(avalanche),
            _ => None,
        }
    }

    /// The endpoint order: `Some` for [`Algorithm::GrpcRingHash`] only.
    pub fn endpoint_order(&self) -> Option<EndpointOrder> {
        self.params.endpoint_order
    }

    /// What HAProxy node keys derive from: `Some` for [`Algorithm::Haproxy`] only.
    pub fn server_key(&self) -> Option<ServerKey> {
        self.params.server_key
    }

    /// How nodes are scored, as configured or defaulted: `Some` for
    /// [`Algorithm::Rendezvous`] only.
    pub fn score(&self) -> Option<RendezvousScore> {
        self.params.score
    }

    /// The ids of the nodes marked `down` ([`RingBuilder::down`](crate::RingBuilder::down)), in
    /// node order; empty when none is (always, outside `nginx`).
    pub fn down_nodes(&self) -> Vec<&str> {
        match self.placement.lookup().down() {
            Some(down) => self.nodes.iter().zip(down).filter(|(_, d)| **d).map(|(n, _)| n.id()).collect(),
            None => Vec::new(),
        }
    }

    /// Sets `live[i]` for each node `i` that can own keys, as the placement
    /// says.
    pub(crate) fn mark_live(&self, live: &mut [bool]) {
        self.placement.lookup().mark_live(live);
    }

    /// Per node, whether it is marked `down`; `None` when none is.
    pub(crate) fn down_per_node(&self) -> Option<&[bool]> {
        self.placement.lookup().down()
    }

    /// The HAProxy server ids given, as (node id, id) in node order; nodes
    /// whose id HAProxy assigns are left out. `Some` for
    /// [`Algorithm::Haproxy`] only.
    pub fn haproxy_ids(&self) -> Option<Vec<(&str, u32)>> {
        let given = self.placement.lookup().puids()?;
        Some(self.nodes.iter().zip(given).filter(|(_, puid)| **puid != 0).map(|(n, &puid)| (n.id(), puid)).collect())
    }

    /// The HAProxy server ids given per node (0 where HAProxy assigns one),
    /// parallel to [`Ring::nodes`].
    pub(crate) fn haproxy_ids_per_node(&self) -> Option<&[u32]> {
        self.placement.lookup().puids()
    }

    /// Each node's bucket, parallel to [`Ring::nodes`]: `Some` for
    /// [`Algorithm::Memento`] only.
    pub fn buckets(&self) -> Option<&[u32]> {
        Some(&self.placement.lookup().buckets()?.of_node)
    }

    /// The removed buckets in the order they were removed, oldest first:
    /// `Some` for [`Algorithm::Memento`] only. With [`Ring::buckets`] they
    /// make up the bucket array `0..nodes + removed`; a config carries both,
    /// so another process rebuilds the same placement.
    pub fn removed_buckets(&self) -> Option<&[u32]> {
        Some(&self.placement.lookup().buckets()?.removed)
    }

    /// Number of nodes that can own keys: nodes with weight > 0 (under
    /// `slots`, nodes holding a slot; under `jump`, every node). Lookups
    /// fail with [`RingError::EmptyRing`] when it is 0.
    pub fn live_node_count(&self) -> usize {
        self.live_nodes
    }

    /// Number of points on the continuum (`ring` and the continuum modes;
    /// under `nginx`, without those of servers marked down);
    /// 0 for `jump`, `jumpback`, `memento`, `rendezvous`, the Maglev tables,
    /// `slots`, modula and `haproxy` (whose nodes sit in a tree of its own, with the closest-node rule).
    pub fn point_count(&self) -> usize {
        self.placement.continuum().map_or(0, Continuum::len)
    }

    /// Heap bytes of the placement structure (points, owners and index, or
    /// the lookup table, or per-node scores), excluding the node list.
    pub fn placement_bytes(&self) -> usize {
        self.placement.lookup().heap_bytes()
    }

    /// The continuum's points in ring order as (position in the algorithm's
    /// hash space, index into [`Ring::nodes`]); empty for algorithms
    /// without points.
    pub fn points(&self) -> impl Iterator<Item = (u64, usize)> + '_ {
        self.placement.continuum().into_iter().flat_map(Continuum::points)
    }

    /// The owner of an `haproxy` ring's first node in key order.
    pub(crate) fn first_owner(&self) -> Option<usize> {
        self.placement.lookup().first_owner()
    }

    /// Last 64-bit position of each arc with its owner, in order, when the
    /// algorithm has arcs: a native hash `h` of `bits` bits sits at
    /// positions `h << (64 - bits) ..= (h << (64 - bits)) | (2^(64 - bits) - 1)`.
    pub(crate) fn arc_ends(&self) -> Option<Vec<(u64, usize)>> {
        self.placement.lookup().arc_ends()
    }

    /// Expected share of keys per node for the algorithms without arcs:
    /// `1/n` each under jump, `weight / total weight` under rendezvous,
    /// entries over table length under modula.
    pub(crate) fn expected_shares(&self) -> Vec<f64> {
        let mut shares = vec![0.0; self.nodes.len()];
        self.placement.lookup().expected_shares(&mut shares);
        shares
    }

    /// For `slots`: each node's slots as inclusive ranges, parallel to
    /// [`Ring::nodes`]; `None` for other algorithms.
    pub fn slot_ranges(&self) -> Option<Vec<Vec<RangeInclusive<u16>>>> {
        let table = self.placement.lookup().slot_table()?;
        Some(slots::ranges(table, self.nodes.len()))
    }

    /// Whether this `slots` ring's assignment is the fresh contiguous one
    /// for its nodes (so a config need not list ranges).
    pub(crate) fn slots_are_fresh(&self) -> bool {
        match self.placement.lookup().slot_table() {
            Some(table) => *table == slots::contiguous(&self.nodes),
            None => true,
        }
    }

    /// A new ring with `node` added (appended to [`Ring::nodes`]). On the
    /// `ring` algorithm only keys that the new node now owns move, and its
    /// points are merged into the sorted points (O(P + k log k) for P points
    /// and k new ones), not rebuilt. The other algorithms rebuild, with the
    /// movement each promises (`slots` moves the slots `redis-cli --cluster
    /// rebalance --cluster-use-empty-masters` would; the ketama modes move
    /// about the new node's share, as their peers do).
    ///
    /// Errors: [`RingError::DuplicateId`] when the id is taken, the errors
    /// of [`RingBuilder::build`](crate::RingBuilder::build).
    pub fn with_node(&self, node: Node) -> Result<Ring, RingError> {
        node.validate(self.nodes.len())?;
        if self.position(node.id()).is_some() {
            return Err(RingError::DuplicateId { id: node.id().to_owned() });
        }
        let mut nodes = self.nodes.clone();
        nodes.push(node);
        self.derived(nodes, Change::Added)
    }

    /// A new ring without the node `id`; the nodes after it shift down one
    /// index. On a continuum only keys that node owned move (costs O(P));
    /// under jump, removing any node but the last renumbers the buckets
    /// after it and moves most keys.
    ///
    /// Errors: [`RingError::UnknownNode`] when no node has this id.
    pub fn without_node(&self, id: &str) -> Result<Ring, RingError> {
        let removed = self.position(id).ok_or_else(|| RingError::UnknownNode { id: id.to_owned() })?;
        let mut nodes = self.nodes.clone();
        nodes.remove(removed);
        self.derived(nodes, Change::Removed(removed as u32))
    }

    /// A new ring with node `id` at `weight`. On the `ring` algorithm its
    /// points become `0..round(vnodes * weight)`, so raising the weight only
    /// moves keys to it and lowering it only moves keys away from it (costs
    /// O(P + k log k)); `rendezvous` keeps the same promise, and `slots`
    /// moves what `redis-cli --cluster rebalance` would.
    ///
    /// Errors: [`RingError::UnknownNode`], [`RingError::InvalidWeight`]
    /// (including weights the algorithm cannot express, and under `haproxy`
    /// a weight HAProxy's `set weight` would reach with equal node keys in
    /// another order than a ring of the configuration: `core/SPEC.md`,
    /// *haproxy*), [`RingError::TooManyPoints`].
    pub fn with_weight(&self, id: &str, weight: f64) -> Result<Ring, RingError> {
        let index = self.position(id).ok_or_else(|| RingError::UnknownNode { id: id.to_owned() })?;
        check_weight(id, weight)?;
        let mut nodes = self.nodes.clone();
        let old_weight = nodes[index].weight();
        nodes[index].set_weight(weight);
        self.derived(nodes, Change::Reweighted(index, old_weight))
    }

    /// A ring of the same algorithm and parameters over `nodes`, which differ
    /// from this ring's by `change`: the scheme edits or rebuilds the placement.
    fn derived(&self, nodes: Vec<Node>, change: Change) -> Result<Ring, RingError> {
        check_nodes(&nodes)?;
        if let Some(rule) = self.algorithm.facts().unit_weights {
            check_unit_weights(&nodes, rule)?;
        }
        let placement =
            self.algorithm.scheme().derive(&self.params, &self.placement, &nodes, change, self.point_hash)?;
        Ok(Ring::assemble(nodes, self.algorithm, self.params, placement, self.point_hash))
    }
}

/// Zone classes per node (see [`Ring::zone_class`]); empty when no node has a zone.
fn zone_classes(nodes: &[Node]) -> Vec<u32> {
    if nodes.iter().all(|n| n.zone().is_none()) {
        return Vec::new();
    }
    let mut names: Vec<&str> = nodes.iter().filter_map(|n| n.zone()).collect();
    names.sort_unstable();
    names.dedup();
    let mut anonymous = names.len() as u32;
    nodes
        .iter()
        .map(|n| match n.zone() {
            Some(zone) => names.binary_search(&zone).expect("every zone is listed") as u32,
            None => {
                anonymous += 1;
                anonymous - 1
            }
        })
        .collect()
}

impl LookupCounter {
    /// `ring`, counting its lookups into this counter (replacing any
    /// counter it had).
    pub fn count(&self, mut ring: Ring) -> Ring {
        let ids: Vec<String> = ring.nodes().iter().map(|n| n.id().to_owned()).collect();
        let cell_of: Arc<[u32]> = (0..ids.len() as u32).collect();
        ring.set_counts(Some(RingCounts::new(self.table(ids), cell_of)));
        ring
    }
}

impl HotKeys {
    /// `ring`, showing this sketch the key of each lookup it answers by key
    /// (`get`, `get_index`, `get_indices`, `get_n`, `get_n_indices`, and a
    /// [`crate::KeyBatch`]'s keys; replacing any sketch it had). Lookups by
    /// hash carry no key and are not observed. A ring derived from it
    /// (`with_node`, ...) is not watched until it is passed here too.
    pub fn watch(self: &Arc<HotKeys>, mut ring: Ring) -> Ring {
        ring.set_hot(Some(Arc::clone(self)));
        ring
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::hash_point;
    use proptest::prelude::*;

    /// A 3-bit point hash: almost every point collides with another.
    fn tiny(id: &[u8], index: u32, seed: u64) -> u64 {
        hash_point(id, index, seed) & 7
    }

    #[test]
    fn collisions_resolve_by_id_bytes_in_every_insertion_order() {
        let ids = ["b", "a", "c", "ab", "a\u{0}", "é"];
        let nodes: Vec<Node> = ids.iter().map(|&id| Node::new(id, 1.0)).collect();
        let reference = Ring::with_point_hash(nodes.clone(), 4, tiny).unwrap();
        // Within each run of equal positions, owners ascend by id bytes.
        for pair in reference.points().collect::<Vec<_>>().windows(2) {
            if pair[0].0 == pair[1].0 {
                let (a, b) = (reference.nodes()[pair[0].1].id(), reference.nodes()[pair[1].1].id());
                assert!(a.as_bytes() <= b.as_bytes(), "{a:?} before {b:?}");
            }
        }
        let owners_by_hash =
            |ring: &Ring| (0..9u64).map(|h| ring.get_by_hash(h).unwrap().id().to_owned()).collect::<Vec<_>>();
        let expected = owners_by_hash(&reference);
        // Every rotation and the reversal, built and derived.
        for shift in 0..nodes.len() {
            let mut order = nodes.clone();
            order.rotate_left(shift);
            let built = Ring::with_point_hash(order.clone(), 4, tiny).unwrap();
            assert_eq!(owners_by_hash(&built), expected);
            order.reverse();
            let last = order.pop().unwrap();
            let derived = Ring::with_point_hash(order, 4, tiny).unwrap().with_node(last).unwrap();
            assert_eq!(owners_by_hash(&derived), expected);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]

        /// With a 3-bit point hash nearly every point collides; the ring must
        /// still be the same whatever order nodes arrive in, built or derived.
        #[test]
        fn forced_collisions_resolve_identically_in_any_order(
            ids in prop::collection::btree_set("[ab\u{0}é]{1,3}", 2..7),
            vnodes in 1..6u32,
            order in Just(()).prop_perturb(|_, mut rng| rng.random::<u64>()),
        ) {
            let nodes: Vec<Node> = ids.iter().map(|id| Node::new(id.clone(), 1.0)).collect();
            let reference = Ring::with_point_hash(nodes.clone(), vnodes, tiny).unwrap();
            let mut shuffled = nodes.clone();
            let mut state = order | 1;
            for i in (1..shuffled.len()).rev() {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                shuffled.swap(i, ((state >> 33) % (i as u64 + 1)) as usize);
            }
            let built = Ring::with_point_hash(shuffled.clone(), vnodes, tiny).unwrap();
            let last = shuffled.pop().unwrap();
            let derived = Ring::with_point_hash(shuffled, vnodes, tiny).unwrap().with_node(last).unwrap();
            for hash in 0..9u64 {
                let want = reference.get_by_hash(hash).unwrap().id();
                prop_assert_eq!(built.get_by_hash(hash).unwrap().id(), want);
                prop_assert_eq!(derived.get_by_hash(hash).unwrap().id(), want);
            }
        }
    }
}
