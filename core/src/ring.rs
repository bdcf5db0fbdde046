//! [`Ring`]: the one placement interface over every [`Algorithm`], and the
//! "ring" algorithm itself, consistent hashing with weighted virtual nodes
//! (Karger et al., 1997; virtual nodes and preference lists as in Dynamo,
//! DeCandia et al., 2007). Byte-exact rules: `core/SPEC.md`.

use std::cmp::Ordering;
use std::ops::RangeInclusive;

use crate::algorithm::Algorithm;
use crate::continuum::{Continuum, MAX_POINTS, points_for, sort_by_point_then_id, too_many};
use crate::error::RingError;
use crate::hash::{KeyHash, hash_key, hash_point};
use crate::ketama::{Distribution, Member};
use crate::node::{Node, check_unique, check_weight};
use crate::rendezvous::Rendezvous;
use crate::twemproxy::{self, ServerIds};
use crate::{jump, maglev, nginx, slots};

/// Default points per unit of weight. At 160 points, 10 equal nodes hold
/// between about 0.9x and 1.1x of the mean load (see the README's balance
/// table); 160 is also libketama's and nginx's count per server.
pub const DEFAULT_VNODES: u32 = 160;

/// Default ring seed for key and point hashes.
pub const DEFAULT_SEED: u64 = 0;

/// Hash of point `index` of node `id` under a seed. Always [`hash_point`]
/// except in the crate's own collision tests, which force a tiny hash.
type PointHash = fn(&[u8], u32, u64) -> u64;

/// A ring's parameters, each applying to some algorithms only.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Params {
    algorithm: Algorithm,
    vnodes: u32,
    seed: u64,
    table_size: u32,
    /// `libmemcached` and `twemproxy` only.
    distribution: Option<Distribution>,
    /// `twemproxy` only.
    server_ids: Option<ServerIds>,
    /// `hashring-js` only.
    default_port: Option<u16>,
    key: KeyRule,
}

/// How a ring hashes keys, resolved once from its algorithm and parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
enum KeyRule {
    /// XXH3-64 under the seed.
    Xxh3,
    /// A peer's named 32-bit hash.
    Named(KeyHash),
    /// The Redis Cluster slot.
    Slot,
    /// twemproxy's: a named hash of the key or of its hash tag; 0 for an empty key.
    Twemproxy(KeyHash, Option<[u8; 2]>),
    /// uhashring's: the top 64 bits of the key's 128-bit MD5, big-endian.
    Md5High64,
}

/// Arguments of [`Params::resolve`], each `None` when not given.
#[derive(Debug, Clone, Default)]
struct Given {
    vnodes: Option<u32>,
    seed: Option<u64>,
    table_size: Option<u32>,
    distribution: Option<Distribution>,
    key_hash: Option<KeyHash>,
    server_ids: Option<ServerIds>,
    hash_tag: Option<String>,
    default_port: Option<u16>,
}

impl Params {
    /// Checks that each given parameter applies to the algorithm and fills
    /// in defaults. Errors: [`RingError::ZeroVnodes`],
    /// [`RingError::InvalidConfig`] naming a parameter the algorithm does not
    /// take, [`RingError::InvalidTableSize`] (checked against the node count later).
    fn resolve(algorithm: Algorithm, given: Given) -> Result<Params, RingError> {
        let Given { vnodes, seed, table_size, distribution, key_hash, server_ids, hash_tag, default_port } = given;
        let (distribution_given, server_ids_given) = (distribution, server_ids);
        let named = matches!(algorithm, Algorithm::Libmemcached | Algorithm::Twemproxy);
        let distributed = named || algorithm == Algorithm::HashringJs;
        let unused = |what: String| RingError::InvalidConfig {
            message: format!("{what} does not apply to algorithm {:?}", algorithm.name()),
        };
        if let Some(v) = vnodes.filter(|_| !algorithm.uses_vnodes()) {
            return Err(unused(format!("vnodes ({v})")));
        }
        if let Some(s) = seed.filter(|&s| s != 0 && !algorithm.uses_seed()) {
            return Err(RingError::InvalidConfig {
                message: format!(
                    "seed ({s}) does not apply to algorithm {:?}: it hashes exactly as its peer system does, unseeded",
                    algorithm.name()
                ),
            });
        }
        if let Some(t) = table_size.filter(|_| algorithm != Algorithm::Maglev) {
            return Err(unused(format!("table_size ({t})")));
        }
        if let Some(port) = default_port.filter(|_| algorithm != Algorithm::HashringJs) {
            return Err(unused(format!("default_port ({port})")));
        }
        if default_port == Some(0) {
            return Err(RingError::InvalidConfig {
                message: "default_port 0 is no port (npm hashring reads 0 as none); leave default_port out".into(),
            });
        }
        if let Some(d) = distribution.filter(|_| !distributed) {
            return Err(unused(format!("distribution ({:?})", d.name())));
        }
        if let Some(h) = key_hash.filter(|_| !named) {
            return Err(unused(format!("key_hash ({:?})", h.name())));
        }
        if let Some(i) = server_ids.filter(|_| algorithm != Algorithm::Twemproxy) {
            return Err(unused(format!("server_ids ({:?})", i.name())));
        }
        if let Some(tag) = hash_tag.as_ref().filter(|_| algorithm != Algorithm::Twemproxy) {
            return Err(unused(format!("hash_tag ({tag:?})")));
        }
        let mut server_ids = None;
        let mut distribution = match algorithm {
            Algorithm::Libmemcached => match distribution.or(algorithm.default_distribution()).expect("it has one") {
                Distribution::Ketama => {
                    return Err(RingError::InvalidConfig {
                        message: "distribution \"ketama\" is twemproxy's; libmemcached's is \"consistent_ketama\" (or another consistent_*)".into(),
                    });
                }
                d => Some(d),
            },
            Algorithm::HashringJs => match distribution.or(algorithm.default_distribution()).expect("it has one") {
                d @ (Distribution::Ketama | Distribution::HashRing) => Some(d),
                d => {
                    return Err(RingError::InvalidConfig {
                        message: format!(
                            "distribution {:?} does not apply to algorithm \"hashring-js\": its compatibility is \"ketama\" (4 points per digest, the default) or \"hash_ring\" (3)",
                            d.name()
                        ),
                    });
                }
            },
            _ => None,
        };
        let key = match algorithm {
            Algorithm::Ring | Algorithm::Jump | Algorithm::Rendezvous | Algorithm::Maglev => KeyRule::Xxh3,
            Algorithm::Ketama | Algorithm::KetamaSpy | Algorithm::Libketama => KeyRule::Named(KeyHash::Md5),
            Algorithm::Nginx => KeyRule::Named(KeyHash::Crc32a),
            Algorithm::Slots => KeyRule::Slot,
            Algorithm::UhashringKetama | Algorithm::HashringJs => KeyRule::Named(KeyHash::Md5),
            Algorithm::Uhashring => KeyRule::Md5High64,
            Algorithm::Libmemcached => {
                let hash =
                    key_hash.or(algorithm.default_key_hash(distribution.expect("set above"))).expect("it has one");
                crate::ketama::check_libmemcached_hash(hash)?;
                KeyRule::Named(hash)
            }
            Algorithm::Twemproxy => {
                let params =
                    twemproxy::Params::resolve(distribution_given, key_hash, server_ids_given, hash_tag.as_deref())?;
                distribution = Some(params.distribution);
                server_ids = Some(params.server_ids);
                KeyRule::Twemproxy(params.key_hash, params.hash_tag)
            }
        };
        let vnodes = vnodes.or(algorithm.default_vnodes()).unwrap_or(DEFAULT_VNODES);
        if vnodes == 0 {
            return Err(RingError::ZeroVnodes);
        }
        let table_size = match algorithm {
            Algorithm::Maglev => table_size.unwrap_or(maglev::DEFAULT_TABLE_SIZE),
            _ => 0,
        };
        Ok(Params {
            algorithm,
            vnodes,
            seed: seed.unwrap_or(DEFAULT_SEED),
            table_size,
            distribution,
            server_ids,
            default_port,
            key,
        })
    }
}

/// Where a `slots` ring's assignment comes from.
enum SlotSource {
    /// Contiguous ranges as `redis-cli --cluster create` makes them.
    Fresh,
    /// Ranges per node, parallel to the nodes.
    Explicit(Vec<Vec<RangeInclusive<u16>>>),
    /// A previous assignment to rebalance (`None`: the slot's node left).
    Rebalance(Vec<Option<u32>>),
}

/// Collects the algorithm, parameters and nodes, then builds an immutable [`Ring`].
#[derive(Debug, Clone, Default)]
pub struct RingBuilder {
    algorithm: Algorithm,
    vnodes: Option<u32>,
    seed: Option<u64>,
    table_size: Option<u32>,
    distribution: Option<Distribution>,
    key_hash: Option<KeyHash>,
    server_ids: Option<ServerIds>,
    hash_tag: Option<String>,
    default_port: Option<u16>,
    nodes: Vec<Node>,
    slot_ranges: Vec<(String, Vec<RangeInclusive<u16>>)>,
}

impl RingBuilder {
    /// The placement algorithm (default [`Algorithm::Ring`]).
    pub fn algorithm(mut self, algorithm: Algorithm) -> Self {
        self.algorithm = algorithm;
        self
    }

    /// Points per unit of weight (default [`DEFAULT_VNODES`] = 160). Must be
    /// at least 1. Only [`Algorithm::Ring`] takes it.
    pub fn vnodes(mut self, vnodes: u32) -> Self {
        self.vnodes = Some(vnodes);
        self
    }

    /// Seed of the XXH3 key and node hashes (default 0). Rings with
    /// different seeds place keys independently. `ring`, `jump`,
    /// `rendezvous` and `maglev` take it; the compatibility modes and
    /// `slots` accept only 0.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Maglev lookup table size: a prime, at least the node count, at most
    /// [`MAX_POINTS`] (default [`maglev::DEFAULT_TABLE_SIZE`] = 65,537).
    /// Only [`Algorithm::Maglev`] takes it.
    pub fn table_size(mut self, size: u32) -> Self {
        self.table_size = Some(size);
        self
    }

    /// The peer's distribution: for [`Algorithm::Libmemcached`] one of its
    /// own (default [`Distribution::ConsistentKetama`]), for
    /// [`Algorithm::Twemproxy`] [`Distribution::Ketama`] (the default) or
    /// [`Distribution::Modula`]. Only those two take it.
    pub fn distribution(mut self, distribution: Distribution) -> Self {
        self.distribution = Some(distribution);
        self
    }

    /// The key hash. [`Algorithm::Libmemcached`]: default
    /// [`Distribution::default_key_hash`] (MD5 for the weighted
    /// distributions, one-at-a-time otherwise), and only the hashes
    /// libhashkit 1.1.4 provides as Debian builds it (not `hsieh`, `crc16`,
    /// `crc32a`). [`Algorithm::Twemproxy`]: its `hash:`, default `fnv1a_64`,
    /// any but `murmur3`. Only those two take it.
    pub fn key_hash(mut self, key_hash: KeyHash) -> Self {
        self.key_hash = Some(key_hash);
        self
    }

    /// What node ids are under [`Algorithm::Twemproxy`] (default
    /// [`ServerIds::Address`]); only it takes this.
    pub fn server_ids(mut self, server_ids: ServerIds) -> Self {
        self.server_ids = Some(server_ids);
        self
    }

    /// twemproxy's `hash_tag`: two bytes, such as `"{}"`; keys with a tag
    /// hash only the bytes inside it. Only [`Algorithm::Twemproxy`] takes it.
    pub fn hash_tag(mut self, tag: impl Into<String>) -> Self {
        self.hash_tag = Some(tag.into());
        self
    }

    /// npm hashring's `default port`: a server whose port equals it is
    /// labelled by its host alone. Only [`Algorithm::HashringJs`] takes it.
    pub fn default_port(mut self, port: u16) -> Self {
        self.default_port = Some(port);
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
        let given = Given {
            vnodes: self.vnodes,
            seed: self.seed,
            table_size: self.table_size,
            distribution: self.distribution,
            key_hash: self.key_hash,
            server_ids: self.server_ids,
            hash_tag: self.hash_tag,
            default_port: self.default_port,
        };
        let params = Params::resolve(self.algorithm, given)?;
        let source = if self.slot_ranges.is_empty() {
            SlotSource::Fresh
        } else if params.algorithm != Algorithm::Slots {
            return Err(RingError::InvalidConfig {
                message: format!("slot ranges do not apply to algorithm {:?}", params.algorithm.name()),
            });
        } else {
            let mut per_node = vec![Vec::new(); self.nodes.len()];
            for (id, ranges) in self.slot_ranges {
                let index = self.nodes.iter().position(|n| n.id() == id).ok_or(RingError::UnknownNode { id })?;
                per_node[index].extend(ranges);
            }
            SlotSource::Explicit(per_node)
        };
        Ring::build_with(params, self.nodes, source, hash_point)
    }
}

/// How a ring places keys.
#[derive(Debug, Clone)]
enum Placement {
    /// `ring` and the compatibility modes: sorted points.
    Continuum(Continuum),
    /// Jump hash over the node list.
    Jump,
    /// `modula` (libmemcached, twemproxy): `table[hash mod len]` is a node index.
    Modula(Vec<u32>),
    /// Scores per node.
    Rendezvous(Rendezvous),
    /// `maglev` and `slots`: `table[slot]` is a node index.
    Table(Vec<u32>),
}

/// An immutable placement snapshot: nodes, an [`Algorithm`] and its
/// parameters. Every algorithm answers through this one type.
///
/// Cheap to share between threads behind an `Arc` (`Send + Sync`). Nodes keep
/// the order they were given in (a derived ring appends an added node and
/// closes the gap of a removed one); indices returned by
/// [`Ring::get_index`] and [`Ring::get_n_indices`] refer to [`Ring::nodes`].
/// Placement never depends on that order, except under [`Algorithm::Jump`]
/// (buckets are list positions), the fresh [`Algorithm::Slots`] ranges, and
/// ties between equal 32-bit points in `ketama` and `ketama-spy` (the
/// earlier server wins, as in libmemcached); those are the cases where the
/// order enters [`Ring::fingerprint`].
#[derive(Debug, Clone)]
pub struct Ring {
    nodes: Vec<Node>,
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

    fn build_with(
        params: Params,
        nodes: Vec<Node>,
        slots: SlotSource,
        point_hash: PointHash,
    ) -> Result<Ring, RingError> {
        let mut total_weight = 0.0;
        for (position, node) in nodes.iter().enumerate() {
            node.validate(position)?;
            total_weight += node.weight();
            if !total_weight.is_finite() {
                let rule = "the weights must sum to a finite number (below about 1.8e308)";
                return Err(RingError::InvalidWeight { id: node.id().to_owned(), weight: node.weight(), rule });
            }
        }
        check_unique(&nodes)?;
        let placement = match params.algorithm {
            Algorithm::Ring => Placement::Continuum(vnode_continuum(&nodes, params, point_hash)?),
            Algorithm::Ketama => Placement::Continuum(Member::KETAMA.build(&nodes)?),
            Algorithm::KetamaSpy => Placement::Continuum(Member::KETAMA_SPY.build(&nodes)?),
            Algorithm::Libketama => Placement::Continuum(Member::LIBKETAMA.build(&nodes)?),
            Algorithm::Libmemcached => {
                let KeyRule::Named(key_hash) = params.key else { unreachable!("libmemcached hashes are named") };
                match params.distribution.expect("libmemcached has a distribution") {
                    Distribution::Modula => {
                        Member::libmemcached(Distribution::Modula, key_hash, &nodes).check(&nodes)?;
                        Placement::Modula((0..nodes.len() as u32).collect())
                    }
                    d => Placement::Continuum(Member::libmemcached(d, key_hash, &nodes).build(&nodes)?),
                }
            }
            Algorithm::Uhashring => Placement::Continuum(Member::uhashring(false, params.vnodes).build(&nodes)?),
            Algorithm::UhashringKetama => Placement::Continuum(Member::uhashring(true, params.vnodes).build(&nodes)?),
            Algorithm::HashringJs => {
                let replicas = if params.distribution == Some(Distribution::HashRing) { 3 } else { 4 };
                Placement::Continuum(Member::hashring_js(params.vnodes, replicas, params.default_port).build(&nodes)?)
            }
            Algorithm::Twemproxy => {
                let KeyRule::Twemproxy(key_hash, hash_tag) = params.key else { unreachable!("twemproxy's key rule") };
                let distribution = params.distribution.expect("twemproxy has a distribution");
                let server_ids = params.server_ids.expect("twemproxy has server_ids");
                let twemproxy = twemproxy::Params { distribution, key_hash, server_ids, hash_tag };
                match distribution {
                    Distribution::Modula => Placement::Modula(twemproxy::modula_table(twemproxy, &nodes)?),
                    _ => Placement::Continuum(twemproxy.member().build(&nodes)?),
                }
            }
            Algorithm::Nginx => Placement::Continuum(nginx::build(&nodes)?),
            Algorithm::Jump => {
                jump::validate(&nodes)?;
                Placement::Jump
            }
            Algorithm::Rendezvous => Placement::Rendezvous(Rendezvous::new(&nodes, params.seed)),
            Algorithm::Maglev => {
                maglev::validate(params.table_size, nodes.len())?;
                Placement::Table(maglev::build(&nodes, params.seed, params.table_size))
            }
            Algorithm::Slots => Placement::Table({
                slots::validate(&nodes)?;
                match slots {
                    SlotSource::Fresh => slots::contiguous(&nodes),
                    SlotSource::Explicit(ranges) => slots::explicit(&nodes, &ranges)?,
                    SlotSource::Rebalance(previous) => slots::rebalance(&nodes, &previous),
                }
            }),
        };
        Ok(Ring::assemble(nodes, params, placement, point_hash))
    }

    fn assemble(nodes: Vec<Node>, params: Params, placement: Placement, point_hash: PointHash) -> Ring {
        let mut live = vec![false; nodes.len()];
        match &placement {
            Placement::Continuum(c) => c.owners().iter().for_each(|&o| live[o as usize] = true),
            Placement::Jump => live.fill(true),
            Placement::Modula(table) => table.iter().for_each(|&o| live[o as usize] = true),
            Placement::Rendezvous(r) => r.weights().for_each(|(i, _)| live[i] = true),
            Placement::Table(table) => table.iter().for_each(|&o| live[o as usize] = true),
        }
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
        Ring { nodes, params, zone_class, live_nodes, live_zones, placement, point_hash }
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
        self.params.algorithm
    }

    /// Points per unit of weight: `Some` for [`Algorithm::Ring`] only.
    pub fn vnodes(&self) -> Option<u32> {
        self.params.algorithm.uses_vnodes().then_some(self.params.vnodes)
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
        self.params.algorithm.default_key_hash(distribution).and(self.named_key_hash())
    }

    /// What node ids are: `Some` for [`Algorithm::Twemproxy`] only.
    pub fn server_ids(&self) -> Option<ServerIds> {
        self.params.server_ids
    }

    /// twemproxy's hash tag: `Some` when a [`Algorithm::Twemproxy`] ring has one.
    pub fn hash_tag(&self) -> Option<String> {
        match self.params.key {
            KeyRule::Twemproxy(_, Some(tag)) => Some(String::from_utf8_lossy(&tag).into_owned()),
            _ => None,
        }
    }

    /// The named 32-bit key hash of a peer-compatible mode (MD5 for the
    /// ketama modes, `crc32a` for nginx, the configured one for
    /// libmemcached); `None` for the XXH3 algorithms and `slots`.
    pub fn named_key_hash(&self) -> Option<KeyHash> {
        match self.params.key {
            KeyRule::Named(hash) | KeyRule::Twemproxy(hash, _) => Some(hash),
            _ => None,
        }
    }

    /// Maglev table size: `Some` for [`Algorithm::Maglev`] only.
    pub fn table_size(&self) -> Option<u32> {
        (self.params.algorithm == Algorithm::Maglev).then_some(self.params.table_size)
    }

    /// Number of nodes that can own keys: nodes with weight > 0 (under
    /// `slots`, nodes holding a slot; under `jump`, every node). Lookups
    /// fail with [`RingError::EmptyRing`] when it is 0.
    pub fn live_node_count(&self) -> usize {
        self.live_nodes
    }

    /// Number of points on the continuum (`ring` and the compatibility
    /// modes); 0 for `jump`, `rendezvous`, `maglev` and `slots`.
    pub fn point_count(&self) -> usize {
        match &self.placement {
            Placement::Continuum(c) => c.len(),
            _ => 0,
        }
    }

    /// Heap bytes of the placement structure (points, owners and index, or
    /// the lookup table, or per-node scores), excluding the node list.
    pub fn placement_bytes(&self) -> usize {
        match &self.placement {
            Placement::Continuum(c) => c.heap_bytes(),
            Placement::Jump => 0,
            Placement::Modula(table) => table.len() * size_of::<u32>(),
            Placement::Rendezvous(r) => r.heap_bytes(),
            Placement::Table(table) => table.len() * size_of::<u32>(),
        }
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
    /// `jump`, `rendezvous`, `maglev`; see [`hash_key`]), the first 4 bytes
    /// of MD5 little-endian (ketama modes), CRC-32 (`nginx`), or the Redis
    /// Cluster slot (`slots`).
    #[inline(always)]
    pub fn hash_key(&self, key: impl AsRef<[u8]>) -> u64 {
        let key = key.as_ref();
        match self.params.key {
            KeyRule::Xxh3 => hash_key(key, self.params.seed),
            _ => self.peer_hash(key),
        }
    }

    /// The compatibility modes' and slots' key hashes, kept out of line so
    /// the XXH3 path of [`Ring::hash_key`] stays small enough to inline.
    #[inline(never)]
    fn peer_hash(&self, key: &[u8]) -> u64 {
        match self.params.key {
            KeyRule::Named(hash) => u64::from(hash.hash(key)),
            KeyRule::Twemproxy(hash, tag) => u64::from(twemproxy::key_hash(hash, tag, key)),
            KeyRule::Slot => u64::from(slots::key_slot(key)),
            KeyRule::Md5High64 => crate::hash::md5_high64(key),
            KeyRule::Xxh3 => hash_key(key, self.params.seed),
        }
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
        let bits = self.params.algorithm.hash_bits();
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
        Ok(match &self.placement {
            Placement::Continuum(c) => c.owner(hash),
            Placement::Jump => jump::jump_hash(hash, self.nodes.len() as u32) as usize,
            Placement::Modula(table) => table[(hash % table.len() as u64) as usize] as usize,
            Placement::Rendezvous(r) => r.owner(hash),
            Placement::Table(table) => table[self.table_slot(hash, table.len())] as usize,
        })
    }

    #[inline]
    fn table_slot(&self, hash: u64, size: usize) -> usize {
        match self.params.algorithm {
            Algorithm::Slots => hash as usize,
            _ => maglev::slot(hash, size),
        }
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

    /// The preference list of `key`: up to `n` distinct nodes in the
    /// algorithm's preference order, the first being [`Ring::get`]. The
    /// order is clockwise on a continuum (Dynamo's preference list,
    /// DeCandia et al., 2007), forward through the table for `maglev` and
    /// `slots`, by descending score for `rendezvous`, and successive jumps
    /// over the remaining nodes for `jump` (`core/SPEC.md`). When nodes have
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
        match &self.placement {
            Placement::Continuum(c) => c.walk(c.start(hash), visit),
            Placement::Jump => jump::walk(hash, self.nodes.len(), visit),
            Placement::Modula(table) => {
                // libmemcached's replicas: servers (h mod n) + 1, + 2, ... in
                // list order; twemproxy has none, and its table is walked alike.
                let first = (hash % table.len() as u64) as usize;
                let (after, before) = table.split_at(first);
                for &owner in before.iter().chain(after) {
                    if visit(owner as usize) {
                        return;
                    }
                }
            }
            Placement::Rendezvous(r) => r.walk(hash, visit),
            Placement::Table(table) => {
                // Visit each run of equal owners once: Redis slot ranges are
                // thousands of slots long.
                let (after, before) = table.split_at(self.table_slot(hash, table.len()));
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
        }
    }

    /// Last 64-bit position of each arc with its owner, in order, when the
    /// algorithm has arcs: a native hash `h` of `bits` bits sits at
    /// positions `h << (64 - bits) ..= (h << (64 - bits)) | (2^(64 - bits) - 1)`.
    pub(crate) fn arc_ends(&self) -> Option<Vec<(u64, usize)>> {
        match &self.placement {
            Placement::Continuum(c) => Some(c.boundaries().collect()),
            Placement::Table(table) => {
                let end = |s: usize| match self.params.algorithm {
                    Algorithm::Slots => (((s as u64) + 1) << 50).wrapping_sub(1),
                    _ => maglev::slot_end(s, table.len()),
                };
                let mut ends: Vec<(u64, usize)> = Vec::new();
                for (s, &owner) in table.iter().enumerate() {
                    match ends.last_mut() {
                        Some(last) if last.1 == owner as usize => last.0 = end(s),
                        _ => ends.push((end(s), owner as usize)),
                    }
                }
                Some(ends)
            }
            Placement::Jump | Placement::Modula(_) | Placement::Rendezvous(_) => None,
        }
    }

    /// Expected share of keys per node for the algorithms without arcs:
    /// `1/n` each under jump, `weight / total weight` under rendezvous.
    pub(crate) fn expected_shares(&self) -> Vec<f64> {
        let mut shares = vec![0.0; self.nodes.len()];
        match &self.placement {
            Placement::Jump => shares.fill(1.0 / self.nodes.len() as f64),
            Placement::Modula(table) => table.iter().for_each(|&o| shares[o as usize] += 1.0 / table.len() as f64),
            Placement::Rendezvous(r) => {
                let total: f64 = r.weights().map(|(_, w)| w).sum();
                r.weights().for_each(|(i, w)| shares[i] = w / total);
            }
            _ => {}
        }
        shares
    }

    /// For `slots`: each node's slots as inclusive ranges, parallel to
    /// [`Ring::nodes`]; `None` for other algorithms.
    pub fn slot_ranges(&self) -> Option<Vec<Vec<RangeInclusive<u16>>>> {
        match (&self.placement, self.params.algorithm) {
            (Placement::Table(table), Algorithm::Slots) => Some(slots::ranges(table, self.nodes.len())),
            _ => None,
        }
    }

    /// Whether this `slots` ring's assignment is the fresh contiguous one
    /// for its nodes (so a config need not list ranges).
    pub(crate) fn slots_are_fresh(&self) -> bool {
        match &self.placement {
            Placement::Table(table) if self.params.algorithm == Algorithm::Slots => {
                *table == slots::contiguous(&self.nodes)
            }
            _ => true,
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
        let index = nodes.len() - 1;
        let Some(continuum) = self.mergeable() else {
            return self.rebuild(nodes, Some);
        };
        let count = self.checked_total(nodes[index].id(), nodes[index].weight(), 0)?;
        let (points, owners) = self.merged(continuum, &nodes, index, count, |_| true);
        let continuum = Continuum::new(points, owners, 64);
        Ok(Ring::assemble(nodes, self.params, Placement::Continuum(continuum), self.point_hash))
    }

    /// A new ring without the node `id`; the nodes after it shift down one
    /// index. On a continuum only keys that node owned move (costs O(P));
    /// under jump, removing any node but the last renumbers the buckets
    /// after it and moves most keys.
    ///
    /// Errors: [`RingError::UnknownNode`] when no node has this id.
    pub fn without_node(&self, id: &str) -> Result<Ring, RingError> {
        let removed = self.position(id).ok_or_else(|| RingError::UnknownNode { id: id.to_owned() })? as u32;
        let mut nodes = self.nodes.clone();
        nodes.remove(removed as usize);
        let shifted = |owner: u32| match owner.cmp(&removed) {
            Ordering::Less => Some(owner),
            Ordering::Equal => None,
            Ordering::Greater => Some(owner - 1),
        };
        match self.mergeable() {
            Some(continuum) => {
                let continuum = continuum.without_owner(removed);
                Ok(Ring::assemble(nodes, self.params, Placement::Continuum(continuum), self.point_hash))
            }
            None => self.rebuild(nodes, shifted),
        }
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
        nodes[index].set_weight(weight);
        match self.mergeable() {
            Some(continuum) => {
                let old = points_for(id, self.nodes[index].weight(), self.params.vnodes)?;
                let count = self.checked_total(id, weight, old)?;
                let (points, owners) = self.merged(continuum, &nodes, index, count, |owner| owner != index as u32);
                let continuum = Continuum::new(points, owners, 64);
                Ok(Ring::assemble(nodes, self.params, Placement::Continuum(continuum), self.point_hash))
            }
            None => self.rebuild(nodes, Some),
        }
    }

    /// The continuum when derivations can edit it in place: on the `ring`
    /// algorithm a node's points depend only on itself. (The ketama modes'
    /// points depend on every weight, so they rebuild.)
    fn mergeable(&self) -> Option<&Continuum> {
        match &self.placement {
            Placement::Continuum(continuum) if self.params.algorithm == Algorithm::Ring => Some(continuum),
            _ => None,
        }
    }

    /// Builds a ring of the same algorithm and parameters over `nodes`; a
    /// `slots` ring rebalances its assignment, with `owner_now` mapping an
    /// old node index to its new one (`None` when it left).
    fn rebuild(&self, nodes: Vec<Node>, owner_now: impl Fn(u32) -> Option<u32>) -> Result<Ring, RingError> {
        let source = match &self.placement {
            Placement::Table(table) if self.params.algorithm == Algorithm::Slots => {
                let previous = if table.is_empty() {
                    vec![None; slots::SLOT_COUNT]
                } else {
                    table.iter().map(|&owner| owner_now(owner)).collect()
                };
                SlotSource::Rebalance(previous)
            }
            _ => SlotSource::Fresh,
        };
        Ring::build_with(self.params, nodes, source, self.point_hash)
    }

    /// Point count of a node of `weight` replacing `old` points, checked
    /// against [`MAX_POINTS`].
    fn checked_total(&self, id: &str, weight: f64, old: u64) -> Result<u64, RingError> {
        let count = points_for(id, weight, self.params.vnodes)?;
        let total = self.point_count() as u64 - old + count;
        if total > MAX_POINTS {
            return Err(too_many(id, total));
        }
        Ok(count)
    }

    /// The continuum's points for which `keep(owner)` holds, merged with
    /// `count` fresh points of `nodes[index]`, in ring order.
    fn merged(
        &self,
        continuum: &Continuum,
        nodes: &[Node],
        index: usize,
        count: u64,
        keep: impl Fn(u32) -> bool,
    ) -> (Vec<u64>, Vec<u32>) {
        let id = nodes[index].id().as_bytes();
        let mut fresh: Vec<u64> = (0..count as u32).map(|i| (self.point_hash)(id, i, self.params.seed)).collect();
        fresh.sort_unstable();
        let capacity = continuum.len() + fresh.len();
        let (mut points, mut owners) = (Vec::with_capacity(capacity), Vec::with_capacity(capacity));
        let mut fresh = fresh.into_iter().peekable();
        for (point, owner) in continuum.points() {
            let owner = owner as u32;
            if !keep(owner) {
                continue;
            }
            while let Some(&new) = fresh.peek() {
                let before = new.cmp(&point).then_with(|| id.cmp(nodes[owner as usize].id().as_bytes()));
                if before == Ordering::Greater {
                    break;
                }
                points.push(new);
                owners.push(index as u32);
                fresh.next();
            }
            points.push(point);
            owners.push(owner);
        }
        for new in fresh {
            points.push(new);
            owners.push(index as u32);
        }
        (points, owners)
    }

    #[cfg(test)]
    pub(crate) fn with_point_hash(nodes: Vec<Node>, vnodes: u32, point_hash: PointHash) -> Result<Ring, RingError> {
        let params = Params::resolve(Algorithm::Ring, Given { vnodes: Some(vnodes), ..Given::default() })?;
        Ring::build_with(params, nodes, SlotSource::Fresh, point_hash)
    }
}

/// The `ring` algorithm's continuum: `round(vnodes * weight)` points per
/// node at [`hash_point`], equal points ordered by owner id bytes.
fn vnode_continuum(nodes: &[Node], params: Params, point_hash: PointHash) -> Result<Continuum, RingError> {
    let mut total: u64 = 0;
    for node in nodes {
        total = total.saturating_add(points_for(node.id(), node.weight(), params.vnodes)?);
        if total > MAX_POINTS {
            return Err(too_many(node.id(), total));
        }
    }
    let mut tagged: Vec<(u64, u32)> = Vec::with_capacity(total as usize);
    for (index, node) in nodes.iter().enumerate() {
        let count = points_for(node.id(), node.weight(), params.vnodes)? as u32;
        let id = node.id().as_bytes();
        tagged.extend((0..count).map(|point| (point_hash(id, point, params.seed), index as u32)));
    }
    sort_by_point_then_id(&mut tagged, nodes);
    let (points, owners) = tagged.into_iter().unzip();
    Ok(Continuum::new(points, owners, 64))
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
