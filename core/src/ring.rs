//! The "ring" algorithm: consistent hashing with weighted virtual nodes
//! (Karger et al., 1997; vnodes as in Dynamo, DeCandia et al., 2007).

use crate::error::RingError;
use crate::hash::{hash_key, hash_point};

/// Default points per unit of weight.
pub const DEFAULT_VNODES: u32 = 160;

/// Default ring seed for key and point hashes.
pub const DEFAULT_SEED: u64 = 0;

/// Most points a ring may hold (2^24 = 16,777,216, about 200 MB of points).
/// Building a larger ring fails with [`RingError::TooManyPoints`].
pub const MAX_POINTS: u64 = 1 << 24;

/// A member of the ring: an id and a weight.
///
/// The id is non-empty UTF-8, compared as bytes (no Unicode normalisation).
/// The weight is finite and `>= 0`; the node owns `round(vnodes * weight)`
/// points (at least 1 when the weight is above 0), so weight is relative
/// capacity: a node of weight 2 owns about twice the keys of one of weight 1.
/// Weight 0 means drained: still a member, owning no keys.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    id: String,
    weight: f64,
}

impl Node {
    /// A node with the given id and weight. Validation happens when the ring
    /// is built.
    pub fn new(id: impl Into<String>, weight: f64) -> Self {
        Node { id: id.into(), weight }
    }

    /// The node's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The node's weight (relative capacity, `>= 0`).
    pub fn weight(&self) -> f64 {
        self.weight
    }
}

/// Collects nodes and parameters, then builds an immutable [`Ring`].
#[derive(Debug, Clone)]
pub struct RingBuilder {
    vnodes: u32,
    seed: u64,
    nodes: Vec<Node>,
}

impl Default for RingBuilder {
    fn default() -> Self {
        RingBuilder { vnodes: DEFAULT_VNODES, seed: DEFAULT_SEED, nodes: Vec::new() }
    }
}

impl RingBuilder {
    /// Points per unit of weight (default [`DEFAULT_VNODES`] = 160). Must be
    /// at least 1.
    pub fn vnodes(mut self, vnodes: u32) -> Self {
        self.vnodes = vnodes;
        self
    }

    /// Seed of the XXH3-64 key and point hashes (default 0). Rings with
    /// different seeds place keys independently.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Adds a node with the given id and weight.
    pub fn node(mut self, id: impl Into<String>, weight: f64) -> Self {
        self.nodes.push(Node::new(id, weight));
        self
    }

    /// Adds nodes in order.
    pub fn nodes(mut self, nodes: impl IntoIterator<Item = Node>) -> Self {
        self.nodes.extend(nodes);
        self
    }

    /// Builds the ring.
    ///
    /// Errors: [`RingError::ZeroVnodes`], [`RingError::EmptyId`],
    /// [`RingError::DuplicateId`], [`RingError::InvalidWeight`],
    /// [`RingError::TooManyPoints`]. A ring with no nodes (or only drained
    /// ones) builds; lookups on it fail with [`RingError::EmptyRing`].
    pub fn build(self) -> Result<Ring, RingError> {
        Ring::from_parts(self.nodes, self.vnodes, self.seed)
    }
}

/// An immutable consistent-hash ring snapshot (placement format 1).
///
/// Cheap to share between threads behind an `Arc` (`Send + Sync`). Nodes keep
/// the order they were given in; [`Ring::nodes`] indices refer to that order.
/// Placement never depends on that order.
#[derive(Debug, Clone)]
pub struct Ring {
    nodes: Vec<Node>,
    vnodes: u32,
    seed: u64,
    /// Point hashes, ascending; ties ordered by owner id bytes.
    points: Vec<u64>,
    /// `owners[i]` is the index in `nodes` of the node owning `points[i]`.
    owners: Vec<u32>,
    /// Number of nodes that own at least one point.
    live_nodes: usize,
}

impl Ring {
    /// A builder with the defaults: vnodes 160, seed 0, no nodes.
    pub fn builder() -> RingBuilder {
        RingBuilder::default()
    }

    fn from_parts(nodes: Vec<Node>, vnodes: u32, seed: u64) -> Result<Ring, RingError> {
        if vnodes == 0 {
            return Err(RingError::ZeroVnodes);
        }
        let mut counts = Vec::with_capacity(nodes.len());
        let mut total: u64 = 0;
        for (position, node) in nodes.iter().enumerate() {
            if node.id.is_empty() {
                return Err(RingError::EmptyId { position });
            }
            let count = point_count(node, vnodes)?;
            total = total.saturating_add(count);
            if total > MAX_POINTS {
                return Err(RingError::TooManyPoints {
                    id: node.id.clone(),
                    requested: total,
                    limit: MAX_POINTS,
                });
            }
            counts.push(count as u32);
        }
        check_unique(&nodes)?;

        let mut tagged: Vec<(u64, u32)> = Vec::with_capacity(total as usize);
        for (index, (node, &count)) in nodes.iter().zip(&counts).enumerate() {
            let id = node.id.as_bytes();
            tagged.extend((0..count).map(|point| (hash_point(id, point, seed), index as u32)));
        }
        tagged.sort_unstable_by(|a, b| {
            a.0.cmp(&b.0)
                .then_with(|| nodes[a.1 as usize].id.as_bytes().cmp(nodes[b.1 as usize].id.as_bytes()))
        });
        let (points, owners) = tagged.into_iter().unzip();
        let live_nodes = counts.iter().filter(|&&c| c > 0).count();
        Ok(Ring { nodes, vnodes, seed, points, owners, live_nodes })
    }

    /// The nodes, in the order given to the builder (drained ones included).
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// Points per unit of weight.
    pub fn vnodes(&self) -> u32 {
        self.vnodes
    }

    /// Seed of the key and point hashes.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Total number of points on the ring.
    pub fn point_count(&self) -> usize {
        self.points.len()
    }

    /// The key's position on this ring: XXH3-64 of the key bytes under the
    /// ring's seed. See [`hash_key`].
    #[inline]
    pub fn hash_key(&self, key: impl AsRef<[u8]>) -> u64 {
        hash_key(key.as_ref(), self.seed)
    }

    /// The node owning `key` (bytes; a string is its UTF-8 bytes): the owner
    /// of the first point `>=` the key's hash, wrapping past the end.
    ///
    /// Errors: [`RingError::EmptyRing`] when no node has weight > 0.
    #[inline]
    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<&Node, RingError> {
        self.get_by_hash(self.hash_key(key))
    }

    /// Like [`Ring::get`], for a caller that hashed the key itself with
    /// [`Ring::hash_key`].
    #[inline]
    pub fn get_by_hash(&self, hash: u64) -> Result<&Node, RingError> {
        Ok(&self.nodes[self.owner_of_hash(hash)?])
    }

    /// Index in [`Ring::nodes`] of the node owning `key`. Errors as [`Ring::get`].
    #[inline]
    pub fn get_index(&self, key: impl AsRef<[u8]>) -> Result<usize, RingError> {
        self.owner_of_hash(self.hash_key(key))
    }

    /// The preference list of `key`: up to `n` distinct nodes, in clockwise
    /// order from the key's position, the first being [`Ring::get`]. When `n`
    /// exceeds the number of nodes owning points, each of them appears once.
    /// Follows Dynamo's preference list (DeCandia et al., 2007).
    ///
    /// Errors: [`RingError::EmptyRing`] when no node has weight > 0.
    pub fn get_n(&self, key: impl AsRef<[u8]>, n: usize) -> Result<Vec<&Node>, RingError> {
        let mut indices = vec![0usize; n.min(self.live_nodes)];
        let found = self.get_n_indices(key, &mut indices)?;
        Ok(indices[..found].iter().map(|&i| &self.nodes[i]).collect())
    }

    /// Writes the preference list of `key` (see [`Ring::get_n`]) as indices
    /// into [`Ring::nodes`], up to `out.len()` of them, and returns how many
    /// were written. Does not allocate when `out.len() <= 64`.
    ///
    /// Errors: [`RingError::EmptyRing`] when no node has weight > 0.
    pub fn get_n_indices(&self, key: impl AsRef<[u8]>, out: &mut [usize]) -> Result<usize, RingError> {
        let hash = self.hash_key(key);
        let start = self.first_point_at_or_after(hash)?;
        let want = out.len().min(self.live_nodes);
        let mut found = 0;
        let mut seen_large: Vec<bool> = if want > 64 { vec![false; self.nodes.len()] } else { Vec::new() };
        let len = self.points.len();
        for step in 0..len {
            if found == want {
                break;
            }
            let owner = self.owners[(start + step) % len] as usize;
            let seen = if seen_large.is_empty() {
                out[..found].contains(&owner)
            } else {
                std::mem::replace(&mut seen_large[owner], true)
            };
            if !seen {
                out[found] = owner;
                found += 1;
            }
        }
        Ok(found)
    }

    /// Index of the first point `>=` hash, wrapping to 0 past the end.
    #[inline]
    fn first_point_at_or_after(&self, hash: u64) -> Result<usize, RingError> {
        if self.points.is_empty() {
            return Err(RingError::EmptyRing);
        }
        let i = self.points.partition_point(|&p| p < hash);
        Ok(if i == self.points.len() { 0 } else { i })
    }

    #[inline]
    fn owner_of_hash(&self, hash: u64) -> Result<usize, RingError> {
        Ok(self.owners[self.first_point_at_or_after(hash)?] as usize)
    }
}

/// `round(vnodes * weight)` (half away from zero), at least 1 for weight > 0.
fn point_count(node: &Node, vnodes: u32) -> Result<u64, RingError> {
    let weight = node.weight;
    if !weight.is_finite() || weight < 0.0 {
        return Err(RingError::InvalidWeight { id: node.id.clone(), weight });
    }
    if weight == 0.0 {
        return Ok(0);
    }
    let exact = (weight * f64::from(vnodes)).round();
    if exact > MAX_POINTS as f64 {
        return Err(RingError::TooManyPoints {
            id: node.id.clone(),
            requested: exact as u64, // saturates at u64::MAX
            limit: MAX_POINTS,
        });
    }
    Ok((exact as u64).max(1))
}

fn check_unique(nodes: &[Node]) -> Result<(), RingError> {
    let mut ids: Vec<&str> = nodes.iter().map(|n| n.id.as_str()).collect();
    ids.sort_unstable();
    match ids.windows(2).find(|w| w[0] == w[1]) {
        Some(w) => Err(RingError::DuplicateId { id: w[0].to_owned() }),
        None => Ok(()),
    }
}
