//! [`Ring`]: the one placement interface over every [`Algorithm`]. Each
//! algorithm is a [`Scheme`] in its own file, reached through
//! [`Algorithm::scheme`]; this facade validates nodes and parameters once,
//! hashes keys by the [`KeyRule`] the scheme chose, and looks keys up in
//! its [`Placement`]. Byte-exact rules: `core/SPEC.md`.

use std::ops::RangeInclusive;

use crate::algorithm::Algorithm;
use crate::continuum::Continuum;
use crate::error::RingError;
use crate::hash::{HashFunction, KeyHash, KeyRule, hash_point};
use crate::node::{Node, check_unique, check_weight};
use crate::params::{Distribution, EndpointOrder, Given, Params, RendezvousScore, ServerIds, ServerKey};
use crate::scheme::{Change, Param, PerNode, Placement, PointHash};
use crate::slots;

/// Checks that each given parameter applies to `algorithm` (naming the
/// first that does not), then resolves them by its scheme.
///
/// Errors: [`RingError::InvalidConfig`] naming a parameter the algorithm
/// does not take, or a value it refuses; [`RingError::ZeroVnodes`].
fn resolve(algorithm: Algorithm, given: &Given) -> Result<Params, RingError> {
    let facts = algorithm.facts();
    let unused = |what: String| RingError::InvalidConfig {
        message: format!("{what} does not apply to algorithm {:?}", algorithm.name()),
    };
    if let Some(v) = given.vnodes.filter(|_| facts.vnodes.is_none()) {
        return Err(unused(format!("vnodes ({v})")));
    }
    if let Some(s) = given.seed.filter(|&s| s != 0 && !facts.seeded) {
        return Err(RingError::InvalidConfig {
            message: format!(
                "seed ({s}) does not apply to algorithm {:?}: it hashes exactly as its peer system does, unseeded",
                algorithm.name()
            ),
        });
    }
    let refused = |param| !facts.takes(param);
    if let Some(t) = given.table_size.filter(|_| refused(Param::TableSize)) {
        return Err(unused(format!("table_size ({t})")));
    }
    if let Some(port) = given.default_port.filter(|_| refused(Param::DefaultPort)) {
        return Err(unused(format!("default_port ({port})")));
    }
    if let Some(d) = given.distribution.filter(|_| refused(Param::Distribution)) {
        return Err(unused(format!("distribution ({:?})", d.name())));
    }
    if let Some(h) = given.key_hash.filter(|_| refused(Param::KeyHash)) {
        return Err(unused(format!("key_hash ({:?})", h.name())));
    }
    if let Some(i) = given.server_ids.filter(|_| refused(Param::ServerIds)) {
        return Err(unused(format!("server_ids ({:?})", i.name())));
    }
    if let Some(tag) = given.hash_tag.as_ref().filter(|_| refused(Param::HashTag)) {
        return Err(unused(format!("hash_tag ({tag:?})")));
    }
    if let Some(size) = given.min_ring_size.filter(|_| refused(Param::MinRingSize)) {
        return Err(unused(format!("min_ring_size ({size})")));
    }
    if let Some(size) = given.max_ring_size.filter(|_| refused(Param::MaxRingSize)) {
        return Err(unused(format!("max_ring_size ({size})")));
    }
    if let Some(function) = given.hash_function.filter(|_| refused(Param::HashFunction)) {
        return Err(unused(format!("hash_function ({:?})", function.name())));
    }
    if let Some(order) = given.endpoint_order.filter(|_| refused(Param::EndpointOrder)) {
        return Err(unused(format!("endpoint_order ({:?})", order.name())));
    }
    if let Some(avalanche) = given.avalanche.filter(|_| refused(Param::Avalanche)) {
        return Err(unused(format!("avalanche ({avalanche})")));
    }
    if let Some(key) = given.server_key.filter(|_| refused(Param::ServerKey)) {
        return Err(unused(format!("server_key ({:?})", key.name())));
    }
    if let Some(score) = given.score.filter(|_| refused(Param::Score)) {
        return Err(unused(format!("score ({:?})", score.name())));
    }
    algorithm.scheme().resolve(given)
}

/// Collects the algorithm, parameters and nodes, then builds an immutable [`Ring`].
#[derive(Debug, Clone, Default)]
pub struct RingBuilder {
    algorithm: Algorithm,
    given: Given,
    nodes: Vec<Node>,
    slot_ranges: Vec<(String, Vec<RangeInclusive<u16>>)>,
    haproxy_ids: Vec<(String, u32)>,
    buckets: Vec<(String, u32)>,
    removed_buckets: Option<Vec<u32>>,
}

impl RingBuilder {
    /// The placement algorithm (default [`Algorithm::Ring`]).
    pub fn algorithm(mut self, algorithm: Algorithm) -> Self {
        self.algorithm = algorithm;
        self
    }

    /// Points per unit of weight (default [`DEFAULT_VNODES`](crate::DEFAULT_VNODES) = 160). Must be
    /// at least 1. Only [`Algorithm::Ring`] takes it.
    pub fn vnodes(mut self, vnodes: u32) -> Self {
        self.given.vnodes = Some(vnodes);
        self
    }

    /// Seed of the XXH3 key and node hashes (default 0). Rings with
    /// different seeds place keys independently. `ring`, `jump`,
    /// `rendezvous` and `maglev` take it; the compatibility modes and
    /// `slots` accept only 0.
    pub fn seed(mut self, seed: u64) -> Self {
        self.given.seed = Some(seed);
        self
    }

    /// Maglev lookup table size: for [`Algorithm::Maglev`] a prime, at least
    /// the node count, at most [`MAX_POINTS`](crate::MAX_POINTS); for
    /// [`Algorithm::EnvoyMaglev`] a prime up to 5,000,011 (Envoy's limit).
    /// Default [`DEFAULT_TABLE_SIZE`](crate::maglev::DEFAULT_TABLE_SIZE) =
    /// 65,537. Only those two take it.
    pub fn table_size(mut self, size: u32) -> Self {
        self.given.table_size = Some(size);
        self
    }

    /// The peer's distribution: for [`Algorithm::Libmemcached`] one of its
    /// own (default [`Distribution::ConsistentKetama`]), for
    /// [`Algorithm::Twemproxy`] [`Distribution::Ketama`] (the default) or
    /// [`Distribution::Modula`]. Only those two take it.
    pub fn distribution(mut self, distribution: Distribution) -> Self {
        self.given.distribution = Some(distribution);
        self
    }

    /// The key hash. [`Algorithm::Libmemcached`]: default
    /// [`Distribution::default_key_hash`] (MD5 for the weighted
    /// distributions, one-at-a-time otherwise), and only the hashes
    /// libhashkit 1.1.4 provides as Debian builds it (not `hsieh`, `crc16`,
    /// `crc32a`). [`Algorithm::Twemproxy`]: its `hash:`, default `fnv1a_64`,
    /// any but `murmur3`. Only those two take it.
    pub fn key_hash(mut self, key_hash: KeyHash) -> Self {
        self.given.key_hash = Some(key_hash);
        self
    }

    /// What node ids are under [`Algorithm::Twemproxy`] (default
    /// [`ServerIds::Address`]); only it takes this.
    pub fn server_ids(mut self, server_ids: ServerIds) -> Self {
        self.given.server_ids = Some(server_ids);
        self
    }

    /// twemproxy's `hash_tag`: two bytes, such as `"{}"`; keys with a tag
    /// hash only the bytes inside it. Only [`Algorithm::Twemproxy`] takes it.
    pub fn hash_tag(mut self, tag: impl Into<String>) -> Self {
        self.given.hash_tag = Some(tag.into());
        self
    }

    /// npm hashring's `default port`: a server whose port equals it is
    /// labelled by its host alone. Only [`Algorithm::HashringJs`] takes it.
    pub fn default_port(mut self, port: u16) -> Self {
        self.given.default_port = Some(port);
        self
    }

    /// The least number of points on the ring of [`Algorithm::EnvoyRingHash`]
    /// (default 1,024) or [`Algorithm::GrpcRingHash`] (1,024, capped at
    /// 4,096): Envoy's and gRPC's `minimum_ring_size`, 1 to 8,388,608.
    pub fn min_ring_size(mut self, size: u64) -> Self {
        self.given.min_ring_size = Some(size);
        self
    }

    /// The most points on the ring of [`Algorithm::EnvoyRingHash`] (default
    /// 8,388,608) or [`Algorithm::GrpcRingHash`] (4,096, capped at 4,096):
    /// `maximum_ring_size`, at least the minimum.
    pub fn max_ring_size(mut self, size: u64) -> Self {
        self.given.max_ring_size = Some(size);
        self
    }

    /// The balancer's hash function: for [`Algorithm::EnvoyRingHash`] the
    /// host hash of its points (`xx_hash`, the default, or `murmur_hash_2`;
    /// `grpc-ring-hash` has `xx_hash` only); for [`Algorithm::Haproxy`] the
    /// request hash (`sdbm`, the default, `djb2`, `wt6`, `crc32`).
    pub fn hash_function(mut self, function: HashFunction) -> Self {
        self.given.hash_function = Some(function);
        self
    }

    /// [`Algorithm::GrpcRingHash`]'s endpoint order (default
    /// [`EndpointOrder::Given`], gRPC C-core's; grpc-go's is
    /// [`EndpointOrder::ByKey`]).
    pub fn endpoint_order(mut self, order: EndpointOrder) -> Self {
        self.given.endpoint_order = Some(order);
        self
    }

    /// [`Algorithm::Haproxy`]: whether request hashes pass through
    /// `full_hash` (`hash-type consistent <function> avalanche`). Default:
    /// on when no hash function is given (`hash-type consistent` alone is
    /// `sdbm avalanche`), off when one is.
    pub fn avalanche(mut self, avalanche: bool) -> Self {
        self.given.avalanche = Some(avalanche);
        self
    }

    /// [`Algorithm::Haproxy`]: what node keys derive from (default
    /// [`ServerKey::Id`], HAProxy 2.6's).
    pub fn server_key(mut self, key: ServerKey) -> Self {
        self.given.server_key = Some(key);
        self
    }

    /// [`Algorithm::Haproxy`]: node `id`'s server `id` (puid, from 1). A
    /// node without one gets the id HAProxy assigns.
    pub fn haproxy_id(mut self, id: impl Into<String>, puid: u32) -> Self {
        self.haproxy_ids.push((id.into(), puid));
        self
    }

    /// [`Algorithm::Rendezvous`]: how nodes are scored (default
    /// [`RendezvousScore::Integer`], the same on every platform;
    /// [`RendezvousScore::Float`] is placement format 1's, with the
    /// platform's `ln`). Only rendezvous takes it.
    pub fn score(mut self, score: RendezvousScore) -> Self {
        self.given.score = Some(score);
        self
    }

    /// [`Algorithm::Memento`]: node `id` holds `bucket`. Nodes without one
    /// take the buckets neither given nor removed, in ascending order, in
    /// node order (with none given, node `i` holds bucket `i` of those).
    /// The array has `nodes + removed` buckets. Errors at
    /// [`RingBuilder::build`]: [`RingError::InvalidConfig`] naming a bucket
    /// outside the array or taken twice.
    pub fn bucket(mut self, id: impl Into<String>, bucket: u32) -> Self {
        self.buckets.push((id.into(), bucket));
        self
    }

    /// [`Algorithm::Memento`]: the removed buckets in the order they were
    /// removed, oldest first, as [`Ring::removed_buckets`] lists them. The
    /// removals are replayed by Memento's rule (`core/SPEC.md`,
    /// *memento*): removing the last bucket while none is on record shrinks
    /// the array. Errors at [`RingBuilder::build`]:
    /// [`RingError::InvalidConfig`] naming a bucket outside the array or
    /// listed twice.
    pub fn removed_buckets(mut self, buckets: impl IntoIterator<Item = u32>) -> Self {
        self.removed_buckets = Some(buckets.into_iter().collect());
        self
    }

    /// Adds a node with the given id and weight and no zone.
    pub fn node(mut self, id: impl Into<String>, weight: f64) -> Self {
        self.nodes.push(Node::new(id, weight));
        self
    }

    /// Adds nodes in order.
    pub fn nodes(mut self, nodes: impl IntoIterator<Item = Node>) -> Self {
        self.nodes.extend(nodes);
        self
    }

    /// Gives node `id` these Redis Cluster slots (inclusive ranges within
    /// 0..=16383), for [`Algorithm::Slots`] rings mirroring a live cluster
    /// (`CLUSTER SLOTS`). When any ranges are given, every slot must be
    /// given exactly once; otherwise each node of weight > 0 gets one
    /// contiguous range as `redis-cli --cluster create` assigns them.
    pub fn slot_ranges(mut self, id: impl Into<String>, ranges: impl IntoIterator<Item = RangeInclusive<u16>>) -> Self {
        self.slot_ranges.push((id.into(), ranges.into_iter().collect()));
        self
    }

    /// Builds the ring: O(P log P) for P points (`ring` and the
    /// compatibility modes), O(M log M) for a Maglev table of M slots, O(n)
    /// otherwise.
    ///
    /// Errors: [`RingError::ZeroVnodes`], [`RingError::EmptyId`],
    /// [`RingError::InvalidWeight`] (including weights the algorithm cannot
    /// express, such as a fractional ketama weight or a jump weight other
    /// than 1), [`RingError::EmptyZone`], [`RingError::DuplicateId`],
    /// [`RingError::TooManyPoints`], [`RingError::InvalidAddress`] (ketama
    /// server ids), [`RingError::InvalidTableSize`] (Maglev),
    /// [`RingError::InvalidConfig`] (a parameter the algorithm does not take;
    /// bad slot ranges), [`RingError::UnknownNode`] (slot ranges for an id
    /// not in the ring). A ring with no nodes (or only drained ones) builds;
    /// lookups on it fail with [`RingError::EmptyRing`].
    pub fn build(self) -> Result<Ring, RingError> {
        let params = resolve(self.algorithm, &self.given)?;
        let refused = |what: &str| RingError::InvalidConfig {
            message: format!("{what} do not apply to algorithm {:?}", self.algorithm.name()),
        };
        let facts = self.algorithm.facts();
        // Per-node settings find their node through a map, built only when
        // some are given (a million memento buckets would otherwise search
        // the node list a million times).
        let positions: std::collections::HashMap<&str, usize> =
            if self.slot_ranges.is_empty() && self.haproxy_ids.is_empty() && self.buckets.is_empty() {
                std::collections::HashMap::new()
            } else {
                let mut positions = std::collections::HashMap::with_capacity(self.nodes.len());
                for (i, node) in self.nodes.iter().enumerate() {
                    positions.entry(node.id()).or_insert(i);
                }
                positions
            };
        let index = |id: String| positions.get(id.as_str()).copied().ok_or(RingError::UnknownNode { id });
        // The nodes first: a per-node setting given twice to an id that is
        // itself listed twice is a duplicate id, not a setting given twice.
        check_nodes(&self.nodes)?;
        let mut extra = PerNode::default();
        if !self.slot_ranges.is_empty() {
            if !facts.takes(Param::SlotRanges) {
                return Err(refused("slot ranges"));
            }
            let mut per_node = vec![Vec::new(); self.nodes.len()];
            for (id, ranges) in self.slot_ranges {
                per_node[index(id)?].extend(ranges);
            }
            extra.slots = Some(per_node);
        }
        if !self.haproxy_ids.is_empty() {
            if !facts.takes(Param::ServerPuids) {
                return Err(refused("haproxy ids"));
            }
            let mut per_node = vec![0; self.nodes.len()];
            for (id, puid) in self.haproxy_ids {
                if puid == 0 {
                    return Err(RingError::InvalidConfig {
                        message: format!("node {id:?}: haproxy id 0 is no id (HAProxy's ids start at 1)"),
                    });
                }
                per_node[index(id)?] = puid;
            }
            extra.puids = Some(per_node);
        }
        if !self.buckets.is_empty() || self.removed_buckets.is_some() {
            if !facts.takes(Param::Buckets) {
                let what = if self.buckets.is_empty() { "removed_buckets" } else { "buckets" };
                return Err(refused(what));
            }
            let mut per_node = vec![None; self.nodes.len()];
            for (id, bucket) in self.buckets {
                let at = index(id.clone())?;
                if per_node[at].replace(bucket).is_some() {
                    return Err(RingError::InvalidConfig { message: format!("node {id:?} is given a bucket twice") });
                }
            }
            extra.buckets = Some(per_node);
            extra.removed_buckets = self.removed_buckets;
        }
        let placement = self.algorithm.scheme().build(&params, &self.nodes, hash_point, extra)?;
        Ok(Ring::assemble(self.nodes, self.algorithm, params, placement, hash_point))
    }
}

/// Checks every node (id, weight, zone), that ids are unique and that the
/// weights sum to a finite number.
///
/// Errors: [`RingError::EmptyId`], [`RingError::InvalidWeight`],
/// [`RingError::EmptyZone`], [`RingError::DuplicateId`].
fn check_nodes(nodes: &[Node]) -> Result<(), RingError> {
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
}

impl Ring {
    /// A builder with the defaults: algorithm `ring`, vnodes 160, seed 0, no nodes.
    pub fn builder() -> RingBuilder {
        RingBuilder::default()
    }

    fn assemble(
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
        Ring { nodes, algorithm, params, zone_class, live_nodes, live_zones, placement, point_hash }
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

    /// Number of points on the continuum (`ring` and the continuum modes);
    /// 0 for `jump`, `jumpback`, `memento`, `rendezvous`, the Maglev tables,
    /// `slots`, modula and `haproxy` (whose nodes sit in a tree of its own, with the closest-node rule).
    pub fn point_count(&self) -> usize {
        match &self.placement {
            Placement::Continuum(c) => c.len(),
            _ => 0,
        }
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
        let continuum = match &self.placement {
            Placement::Continuum(c) => Some(c),
            _ => None,
        };
        continuum.into_iter().flat_map(Continuum::points)
    }

    /// The key's hash under this ring's algorithm, in `[0, 2^bits)` for
    /// `bits` = [`Algorithm::hash_bits`]: XXH3-64 under the seed (`ring`,
    /// `jump`, `rendezvous`, `maglev`, `jumpback`, `memento`; see
    /// [`hash_key`](crate::hash_key)), the first 4 bytes
    /// of MD5 little-endian (ketama modes), CRC-32 (`nginx`), the Redis
    /// Cluster slot (`slots`), or the key hash of the peer a compatibility
    /// mode follows (`core/SPEC.md`).
    #[inline(always)]
    pub fn hash_key(&self, key: impl AsRef<[u8]>) -> u64 {
        self.params.key.hash(key.as_ref(), self.params.seed)
    }

    /// The node owning `key` (bytes; a string is its UTF-8 bytes). On a
    /// continuum, the owner of the first point `>=` the key's hash, wrapping
    /// past the end; on the other algorithms, as each defines.
    ///
    /// Errors: [`RingError::EmptyRing`] when no node can own keys.
    #[inline]
    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<&Node, RingError> {
        Ok(&self.nodes[self.owner(self.hash_key(key))?])
    }

    /// Like [`Ring::get`], for a caller that hashed the key itself with
    /// [`Ring::hash_key`].
    ///
    /// Errors: [`RingError::EmptyRing`]; [`RingError::HashOutOfRange`] when
    /// `hash` does not fit the algorithm's [`Algorithm::hash_bits`].
    #[inline]
    pub fn get_by_hash(&self, hash: u64) -> Result<&Node, RingError> {
        Ok(&self.nodes[self.index_by_hash(hash)?])
    }

    /// Index in [`Ring::nodes`] of the node owning `key`. Errors as [`Ring::get`].
    #[inline(always)]
    pub fn get_index(&self, key: impl AsRef<[u8]>) -> Result<usize, RingError> {
        self.owner(self.hash_key(key))
    }

    /// Index in [`Ring::nodes`] of the node owning hash `hash`. Errors as
    /// [`Ring::get_by_hash`].
    #[inline]
    pub fn index_by_hash(&self, hash: u64) -> Result<usize, RingError> {
        self.check_hash(hash)?;
        self.owner(hash)
    }

    fn check_hash(&self, hash: u64) -> Result<(), RingError> {
        let bits = self.algorithm.hash_bits();
        if bits < 64 && hash >> bits != 0 {
            return Err(RingError::HashOutOfRange { hash, bits });
        }
        Ok(())
    }

    /// Owner of an in-range hash.
    #[inline(always)]
    fn owner(&self, hash: u64) -> Result<usize, RingError> {
        match &self.placement {
            Placement::Continuum(c) if self.live_nodes > 0 => Ok(c.owner(hash)),
            _ => self.owner_elsewhere(hash),
        }
    }

    /// [`Ring::owner`] for the algorithms without a continuum, out of line.
    #[inline(never)]
    fn owner_elsewhere(&self, hash: u64) -> Result<usize, RingError> {
        if self.live_nodes == 0 {
            return Err(RingError::EmptyRing);
        }
        Ok(self.placement.lookup().owner(hash))
    }

    /// Places many keys: writes the index in [`Ring::nodes`] of the owner of
    /// the `i`-th key to `out[i]`, for as many keys as both `keys` and `out`
    /// hold, and returns that count. On a continuum, hashes keys in blocks
    /// before looking them up, so independent memory reads overlap.
    ///
    /// Errors: [`RingError::EmptyRing`] (nothing is written).
    pub fn get_indices<K: AsRef<[u8]>>(
        &self,
        keys: impl IntoIterator<Item = K>,
        out: &mut [usize],
    ) -> Result<usize, RingError> {
        const BLOCK: usize = 32;
        if self.live_nodes == 0 {
            return Err(RingError::EmptyRing);
        }
        let mut keys = keys.into_iter();
        let Placement::Continuum(continuum) = &self.placement else {
            let mut placed = 0;
            for (slot, key) in out.iter_mut().zip(keys) {
                *slot = self.owner(self.hash_key(key))?;
                placed += 1;
            }
            return Ok(placed);
        };
        let mut hashes = [0u64; BLOCK];
        let mut placed = 0;
        for chunk in out.chunks_mut(BLOCK) {
            let mut filled = 0;
            for (slot, key) in hashes[..chunk.len()].iter_mut().zip(keys.by_ref()) {
                *slot = self.hash_key(key);
                filled += 1;
            }
            continuum.owners_of(&hashes[..filled], &mut chunk[..filled]);
            placed += filled;
            if filled < chunk.len() {
                break;
            }
        }
        Ok(placed)
    }

    /// Places many keys hashed beforehand with [`Ring::hash_key`]: writes
    /// the index in [`Ring::nodes`] of the owner of `hashes[i]` to `out[i]`,
    /// for as many hashes as both hold, and returns that count. On a
    /// continuum, looks hashes up in blocks so independent memory reads
    /// overlap. A binding that hashes keys while it reads them (holding its
    /// runtime's lock) can place them after letting go of it.
    ///
    /// Errors: [`RingError::EmptyRing`]; [`RingError::HashOutOfRange`] for
    /// the first hash wider than [`Algorithm::hash_bits`] (nothing is
    /// written in either case).
    pub fn get_indices_by_hash(&self, hashes: &[u64], out: &mut [usize]) -> Result<usize, RingError> {
        const BLOCK: usize = 32;
        if self.live_nodes == 0 {
            return Err(RingError::EmptyRing);
        }
        let count = hashes.len().min(out.len());
        let (hashes, out) = (&hashes[..count], &mut out[..count]);
        if self.algorithm.hash_bits() < 64 {
            hashes.iter().try_for_each(|&h| self.check_hash(h))?;
        }
        match &self.placement {
            Placement::Continuum(continuum) => {
                for (hashes, out) in hashes.chunks(BLOCK).zip(out.chunks_mut(BLOCK)) {
                    continuum.owners_of(hashes, out);
                }
            }
            _ => {
                let lookup = self.placement.lookup();
                hashes.iter().zip(out.iter_mut()).for_each(|(&h, slot)| *slot = lookup.owner(h));
            }
        }
        Ok(count)
    }

    /// The preference list of `key`: up to `n` distinct nodes in the
    /// algorithm's preference order, the first being [`Ring::get`]. The
    /// order is clockwise on a continuum (Dynamo's preference list,
    /// DeCandia et al., 2007), forward through the table for `maglev` and
    /// `slots`, by descending score for `rendezvous`, successive jumps over
    /// the remaining nodes for `jump` and `jumpback`, and for `memento` the
    /// owner once the nodes before it are removed in turn (its failover
    /// order) (`core/SPEC.md`). When nodes have
    /// zones, nodes of zones not yet listed come first (a node without a
    /// zone counts as a zone of its own), then the remaining nodes in
    /// preference order, as Cassandra's NetworkTopologyStrategy places
    /// replicas. When `n` exceeds the number of nodes that can own keys,
    /// each of them appears once.
    ///
    /// Errors: [`RingError::EmptyRing`] when no node can own keys.
    pub fn get_n(&self, key: impl AsRef<[u8]>, n: usize) -> Result<Vec<&Node>, RingError> {
        let mut indices = vec![0usize; n.min(self.live_nodes)];
        let found = self.get_n_indices(key, &mut indices)?;
        Ok(indices[..found].iter().map(|&i| &self.nodes[i]).collect())
    }

    /// Writes the preference list of `key` (see [`Ring::get_n`]) as indices
    /// into [`Ring::nodes`], up to `out.len()` of them, and returns how many
    /// were written. Writes nothing when it fails. On a continuum or a table
    /// it does not allocate when `out.len() <= 32`.
    ///
    /// Errors: [`RingError::EmptyRing`] when no node can own keys.
    pub fn get_n_indices(&self, key: impl AsRef<[u8]>, out: &mut [usize]) -> Result<usize, RingError> {
        self.preference(self.hash_key(key), out)
    }

    /// [`Ring::get_n_indices`] for a caller that hashed the key itself.
    /// Errors as [`Ring::get_by_hash`].
    pub fn get_n_indices_by_hash(&self, hash: u64, out: &mut [usize]) -> Result<usize, RingError> {
        self.check_hash(hash)?;
        self.preference(hash, out)
    }

    fn preference(&self, hash: u64, out: &mut [usize]) -> Result<usize, RingError> {
        if self.live_nodes == 0 {
            return Err(RingError::EmptyRing);
        }
        let want = out.len().min(self.live_nodes);
        if want == 0 {
            return Ok(0);
        }
        let out = &mut out[..want];
        let mut taken = Taken::new(want, self.nodes.len());
        let mut found = 0;
        if !self.zone_class.is_empty() {
            let mut zones = Taken::new(want, self.nodes.len());
            let zone_target = want.min(self.live_zones);
            self.walk(hash, |owner| {
                let zone = self.zone_class[owner] as usize;
                if !taken.contains(out, found, owner) && !zones.contains_zone(out, found, zone, &self.zone_class) {
                    taken.insert(owner);
                    zones.insert(zone);
                    out[found] = owner;
                    found += 1;
                }
                found == zone_target
            });
        }
        if found < want {
            self.walk(hash, |owner| {
                if !taken.contains(out, found, owner) {
                    taken.insert(owner);
                    out[found] = owner;
                    found += 1;
                }
                found == want
            });
        }
        Ok(found)
    }

    /// Visits each node that can own keys once, in the preference order of
    /// `hash` (without the zones rule), until `visit` returns true.
    pub(crate) fn walk_distinct(&self, hash: u64, mut visit: impl FnMut(usize) -> bool) {
        let mut small = 0u64;
        let mut large: Vec<bool> = if self.nodes.len() > 64 { vec![false; self.nodes.len()] } else { Vec::new() };
        let mut seen = 0;
        self.walk(hash, |node| {
            let fresh = if large.is_empty() {
                let fresh = small & (1 << node) == 0;
                small |= 1 << node;
                fresh
            } else {
                !std::mem::replace(&mut large[node], true)
            };
            if !fresh {
                return false;
            }
            seen += 1;
            visit(node) || seen == self.live_nodes
        });
    }

    /// Visits candidate owners of `hash` in preference order (a node may
    /// repeat; every node that can own keys appears), until `visit` returns true.
    #[inline]
    fn walk(&self, hash: u64, mut visit: impl FnMut(usize) -> bool) {
        match &self.placement {
            Placement::Continuum(c) => c.walk(c.start(hash), visit),
            _ => self.walk_elsewhere(hash, &mut visit),
        }
    }

    /// [`Ring::walk`] for the algorithms without a continuum, out of line so
    /// the continuum's walk stays small.
    #[inline(never)]
    fn walk_elsewhere(&self, hash: u64, visit: &mut dyn FnMut(usize) -> bool) {
        self.placement.lookup().walk(hash, visit)
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
    /// of [`RingBuilder::build`].
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
    /// (including weights the algorithm cannot express),
    /// [`RingError::TooManyPoints`].
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
        let placement =
            self.algorithm.scheme().derive(&self.params, &self.placement, &nodes, change, self.point_hash)?;
        Ok(Ring::assemble(nodes, self.algorithm, self.params, placement, self.point_hash))
    }

    #[cfg(test)]
    pub(crate) fn with_point_hash(nodes: Vec<Node>, vnodes: u32, point_hash: PointHash) -> Result<Ring, RingError> {
        let params = resolve(Algorithm::Ring, &Given { vnodes: Some(vnodes), ..Given::default() })?;
        check_nodes(&nodes)?;
        let placement = Algorithm::Ring.scheme().build(&params, &nodes, point_hash, PerNode::default())?;
        Ok(Ring::assemble(nodes, Algorithm::Ring, params, placement, point_hash))
    }
}

/// Which nodes (or zones) a preference walk has taken: a scan of the output
/// for short lists, a bitmap for long ones.
enum Taken {
    Scan,
    Bitmap(Vec<bool>),
}

impl Taken {
    fn new(want: usize, universe: usize) -> Taken {
        if want <= 32 { Taken::Scan } else { Taken::Bitmap(vec![false; universe]) }
    }

    fn contains(&self, out: &[usize], found: usize, node: usize) -> bool {
        match self {
            Taken::Scan => out[..found].contains(&node),
            Taken::Bitmap(bits) => bits[node],
        }
    }

    /// Whether zone class `zone` is taken, when every node in `out[..found]`
    /// was taken for a new zone.
    fn contains_zone(&self, out: &[usize], found: usize, zone: usize, class: &[u32]) -> bool {
        match self {
            Taken::Scan => out[..found].iter().any(|&n| class[n] as usize == zone),
            Taken::Bitmap(bits) => bits[zone],
        }
    }

    fn insert(&mut self, item: usize) {
        if let Taken::Bitmap(bits) = self {
            bits[item] = true;
        }
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

#[cfg(test)]
mod tests {
    use super::*;
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
