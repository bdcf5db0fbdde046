//! [`RingBuilder`]: collects an algorithm, its parameters ([`RingParams`])
//! and the nodes with what is given per node, checks every parameter
//! against what the algorithm takes, once for all of them, and builds a
//! [`Ring`].

use std::ops::RangeInclusive;

use crate::algorithm::Algorithm;
use crate::error::RingError;
use crate::hash::{HashFunction, KeyHash, hash_point};
use crate::node::{Node, check_nodes, check_unit_weights};
use crate::params::{Distribution, EndpointOrder, Param, Params, RendezvousScore, RingParams, ServerIds, ServerKey};
use crate::ring::Ring;
use crate::scheme::PerNode;

/// Checks that each parameter given applies to its algorithm (naming the
/// first that does not), then resolves them by the algorithm's scheme.
///
/// Errors: [`RingError::InvalidConfig`] naming a parameter the algorithm
/// does not take, or a value it refuses; [`RingError::ZeroVnodes`].
pub(crate) fn resolve(given: &RingParams) -> Result<Params, RingError> {
    let algorithm = given.algorithm;
    let facts = algorithm.facts();
    for (param, value) in given.given() {
        let applies = match param {
            Param::Vnodes => facts.vnodes.is_some(),
            // A seed of 0 is no seed.
            Param::Seed => facts.seeded || value == "0",
            other => facts.takes(other),
        };
        if applies {
            continue;
        }
        let name = param.name();
        let hint = match param {
            Param::Seed => ": it hashes exactly as its peer system does, unseeded",
            _ => "",
        };
        return Err(RingError::InvalidConfig {
            message: format!("{name} ({value}) does not apply to algorithm {:?}{hint}", algorithm.name()),
        });
    }
    algorithm.scheme().resolve(given)
}

/// Collects the algorithm, parameters and nodes, then builds an immutable [`Ring`].
#[derive(Debug, Clone, Default)]
pub struct RingBuilder {
    params: RingParams,
    nodes: Vec<Node>,
    slot_ranges: Vec<(String, Vec<RangeInclusive<u16>>)>,
    haproxy_ids: Vec<(String, u32)>,
    buckets: Vec<(String, u32)>,
    down: Vec<(String, bool)>,
}

impl RingBuilder {
    /// The placement algorithm (default [`Algorithm::Ring`]).
    pub fn algorithm(mut self, algorithm: Algorithm) -> Self {
        self.params.algorithm = algorithm;
        self
    }

    /// The algorithm and every parameter at once, replacing what was set
    /// before (each field's doc names the algorithms that take it).
    pub fn params(mut self, params: RingParams) -> Self {
        self.params = params;
        self
    }

    /// Points per unit of weight (default [`DEFAULT_VNODES`](crate::DEFAULT_VNODES) = 160). Must be
    /// at least 1. Only [`Algorithm::Ring`] takes it.
    pub fn vnodes(mut self, vnodes: u32) -> Self {
        self.params.vnodes = Some(vnodes);
        self
    }

    /// Seed of the XXH3 key and node hashes (default 0). Rings with
    /// different seeds place keys independently. `ring`, `jump`,
    /// `rendezvous` and `maglev` take it; the compatibility modes and
    /// `slots` accept only 0.
    pub fn seed(mut self, seed: u64) -> Self {
        self.params.seed = Some(seed);
        self
    }

    /// Maglev lookup table size: for [`Algorithm::Maglev`] a prime, at least
    /// the node count, at most [`MAX_POINTS`](crate::MAX_POINTS); for
    /// [`Algorithm::EnvoyMaglev`] a prime up to 5,000,011 (Envoy's limit).
    /// Default [`DEFAULT_TABLE_SIZE`](crate::algorithms::maglev::DEFAULT_TABLE_SIZE) =
    /// 65,537. Only those two take it.
    pub fn table_size(mut self, size: u32) -> Self {
        self.params.table_size = Some(size);
        self
    }

    /// The peer's distribution: for [`Algorithm::Libmemcached`] one of its
    /// own (default [`Distribution::ConsistentKetama`]), for
    /// [`Algorithm::Twemproxy`] [`Distribution::Ketama`] (the default) or
    /// [`Distribution::Modula`]. Only those two take it.
    pub fn distribution(mut self, distribution: Distribution) -> Self {
        self.params.distribution = Some(distribution);
        self
    }

    /// The key hash. [`Algorithm::Libmemcached`]: default
    /// [`Distribution::default_key_hash`] (MD5 for the weighted
    /// distributions, one-at-a-time otherwise), and only the hashes
    /// libhashkit 1.1.4 provides as Debian builds it (not `hsieh`, `crc16`,
    /// `crc32a`). [`Algorithm::Twemproxy`]: its `hash:`, default `fnv1a_64`,
    /// any but `murmur3`. Only those two take it.
    pub fn key_hash(mut self, key_hash: KeyHash) -> Self {
        self.params.key_hash = Some(key_hash);
        self
    }

    /// What node ids are under [`Algorithm::Twemproxy`] (default
    /// [`ServerIds::Address`]); only it takes this.
    pub fn server_ids(mut self, server_ids: ServerIds) -> Self {
        self.params.server_ids = Some(server_ids);
        self
    }

    /// twemproxy's `hash_tag`: two bytes, such as `"{}"`; keys with a tag
    /// hash only the bytes inside it. Only [`Algorithm::Twemproxy`] takes it.
    pub fn hash_tag(mut self, tag: impl Into<String>) -> Self {
        self.params.hash_tag = Some(tag.into());
        self
    }

    /// npm hashring's `default port`: a server whose port equals it is
    /// labelled by its host alone. Only [`Algorithm::HashringJs`] takes it.
    pub fn default_port(mut self, port: u16) -> Self {
        self.params.default_port = Some(port);
        self
    }

    /// The least number of points on the ring of [`Algorithm::EnvoyRingHash`]
    /// (default 1,024) or [`Algorithm::GrpcRingHash`] (1,024, capped at
    /// 4,096): Envoy's and gRPC's `minimum_ring_size`, 1 to 8,388,608.
    pub fn min_ring_size(mut self, size: u64) -> Self {
        self.params.min_ring_size = Some(size);
        self
    }

    /// The most points on the ring of [`Algorithm::EnvoyRingHash`] (default
    /// 8,388,608) or [`Algorithm::GrpcRingHash`] (4,096, capped at 4,096):
    /// `maximum_ring_size`, at least the minimum.
    pub fn max_ring_size(mut self, size: u64) -> Self {
        self.params.max_ring_size = Some(size);
        self
    }

    /// The balancer's hash function: for [`Algorithm::EnvoyRingHash`] the
    /// host hash of its points (`xx_hash`, the default, or `murmur_hash_2`;
    /// `grpc-ring-hash` has `xx_hash` only); for [`Algorithm::Haproxy`] the
    /// request hash (`sdbm`, the default, `djb2`, `wt6`, `crc32`).
    pub fn hash_function(mut self, function: HashFunction) -> Self {
        self.params.hash_function = Some(function);
        self
    }

    /// [`Algorithm::GrpcRingHash`]'s endpoint order (default
    /// [`EndpointOrder::Given`], gRPC C-core's; grpc-go's is
    /// [`EndpointOrder::ByKey`]).
    pub fn endpoint_order(mut self, order: EndpointOrder) -> Self {
        self.params.endpoint_order = Some(order);
        self
    }

    /// [`Algorithm::Haproxy`]: whether request hashes pass through
    /// `full_hash` (`hash-type consistent <function> avalanche`). Default:
    /// on when no hash function is given (`hash-type consistent` alone is
    /// `sdbm avalanche`), off when one is.
    pub fn avalanche(mut self, avalanche: bool) -> Self {
        self.params.avalanche = Some(avalanche);
        self
    }

    /// [`Algorithm::Haproxy`]: what node keys derive from (default
    /// [`ServerKey::Id`], HAProxy 2.6's).
    pub fn server_key(mut self, key: ServerKey) -> Self {
        self.params.server_key = Some(key);
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
        self.params.score = Some(score);
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
        self.params.removed_buckets = Some(buckets.into_iter().collect());
        self
    }

    /// [`Algorithm::Nginx`]: marks node `id` `down` (or not), as nginx's
    /// `server ... down;`: the node keeps its points (so it still wins
    /// ties, hiding an equal point of a server listed later), but a key
    /// whose point is its own goes on to the next point of a node not down,
    /// as nginx steps past a server it may not use. Such a node owns no
    /// keys and is left out of preference lists. Errors at
    /// [`RingBuilder::build`]: [`RingError::InvalidConfig`] for another
    /// algorithm, or when nodes marked down hold 21 consecutive points
    /// (nginx then picks a server round robin), [`RingError::UnknownNode`].
    pub fn down(mut self, id: impl Into<String>, down: bool) -> Self {
        self.down.push((id.into(), down));
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
        let algorithm = self.params.algorithm;
        let params = resolve(&self.params)?;
        let refused = |what: &str| RingError::InvalidConfig {
            message: format!("{what} do not apply to algorithm {:?}", algorithm.name()),
        };
        let facts = algorithm.facts();
        // Per-node settings find their node through a map, built only when
        // some are given (a million memento buckets would otherwise search
        // the node list a million times).
        let positions: std::collections::HashMap<&str, usize> = if self.slot_ranges.is_empty()
            && self.haproxy_ids.is_empty()
            && self.buckets.is_empty()
            && self.down.is_empty()
        {
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
        if let Some(rule) = facts.unit_weights {
            check_unit_weights(&self.nodes, rule)?;
        }
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
        if !self.buckets.is_empty() || self.params.removed_buckets.is_some() {
            if !facts.takes(Param::Buckets) {
                return Err(refused("buckets"));
            }
            let mut per_node = vec![None; self.nodes.len()];
            for (id, bucket) in self.buckets {
                let at = index(id.clone())?;
                if per_node[at].replace(bucket).is_some() {
                    return Err(RingError::InvalidConfig { message: format!("node {id:?} is given a bucket twice") });
                }
            }
            extra.buckets = Some(per_node);
            extra.removed_buckets = self.params.removed_buckets.clone();
        }
        if !self.down.is_empty() {
            if !facts.takes(Param::Down) {
                return Err(refused("down marks"));
            }
            let mut per_node = vec![false; self.nodes.len()];
            for (id, down) in self.down {
                per_node[index(id)?] = down;
            }
            extra.down = Some(per_node);
        }
        let placement = algorithm.scheme().build(&params, &self.nodes, hash_point, extra)?;
        Ok(Ring::assemble(self.nodes, algorithm, params, placement, hash_point))
    }
}

impl Ring {
    /// A builder with the defaults: algorithm `ring`, vnodes 160, seed 0, no nodes.
    pub fn builder() -> RingBuilder {
        RingBuilder::default()
    }

    /// A `ring` ring whose points are hashed by `point_hash`: the crate's
    /// collision tests force ties with a tiny hash.
    #[cfg(test)]
    pub(crate) fn with_point_hash(
        nodes: Vec<Node>,
        vnodes: u32,
        point_hash: crate::scheme::PointHash,
    ) -> Result<Ring, RingError> {
        let params = resolve(&RingParams { vnodes: Some(vnodes), ..RingParams::default() })?;
        check_nodes(&nodes)?;
        let placement = Algorithm::Ring.scheme().build(&params, &nodes, point_hash, PerNode::default())?;
        Ok(Ring::assemble(nodes, Algorithm::Ring, params, placement, point_hash))
    }
}
