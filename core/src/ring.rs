//! The "ring" algorithm: consistent hashing with weighted virtual nodes
//! (Karger et al., 1997; virtual nodes and preference lists as in Dynamo,
//! DeCandia et al., 2007). Byte-exact rules: `core/SPEC.md`.

use std::cmp::Ordering;

use crate::error::RingError;
use crate::hash::{hash_key, hash_point};
use crate::node::{Node, check_unique, check_weight};

/// Default points per unit of weight. At 160 points, 10 equal nodes hold
/// between about 0.9x and 1.1x of the mean load (see the README's balance
/// table); 160 is also libketama's and nginx's count per server.
pub const DEFAULT_VNODES: u32 = 160;

/// Default ring seed for key and point hashes.
pub const DEFAULT_SEED: u64 = 0;

/// Most points a ring may hold: 2^24 = 16,777,216 (192 MiB of points).
/// Building or deriving a larger ring fails with [`RingError::TooManyPoints`].
pub const MAX_POINTS: u64 = 1 << 24;

/// Hash of point `index` of node `id` under a seed. Always [`hash_point`]
/// except in the crate's own collision tests, which force a tiny hash.
type PointHash = fn(&[u8], u32, u64) -> u64;

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

    /// Builds the ring: O(P log P) for P points.
    ///
    /// Errors: [`RingError::ZeroVnodes`], [`RingError::EmptyId`],
    /// [`RingError::InvalidWeight`], [`RingError::EmptyZone`],
    /// [`RingError::DuplicateId`], [`RingError::TooManyPoints`]. A ring with
    /// no nodes (or only drained ones) builds; lookups on it fail with
    /// [`RingError::EmptyRing`].
    pub fn build(self) -> Result<Ring, RingError> {
        Ring::build_with(self.nodes, self.vnodes, self.seed, hash_point)
    }
}

/// An immutable consistent-hash ring snapshot (placement format 1).
///
/// Cheap to share between threads behind an `Arc` (`Send + Sync`). Nodes keep
/// the order they were given in (a derived ring appends an added node and
/// closes the gap of a removed one); indices returned by
/// [`Ring::get_index`] and [`Ring::get_n_indices`] refer to [`Ring::nodes`].
/// Placement never depends on that order.
#[derive(Debug, Clone)]
pub struct Ring {
    nodes: Vec<Node>,
    vnodes: u32,
    seed: u64,
    /// Point positions, ascending; equal positions ordered by owner id bytes.
    points: Vec<u64>,
    /// `owners[i]` is the index in `nodes` of the node owning `points[i]`.
    owners: Vec<u32>,
    /// Per node, its zone class: nodes share a class iff they share a zone;
    /// a node without a zone has a class of its own. Empty when no node has a zone.
    zone_class: Vec<u32>,
    /// Number of nodes owning at least one point.
    live_nodes: usize,
    /// Number of distinct zone classes among nodes owning points.
    live_zones: usize,
    /// Lookup index over the points' top bits (see [`PointIndex`]).
    index: PointIndex,
    point_hash: PointHash,
}

impl Ring {
    /// A builder with the defaults: vnodes 160, seed 0, no nodes.
    pub fn builder() -> RingBuilder {
        RingBuilder::default()
    }

    pub(crate) fn build_with(
        nodes: Vec<Node>,
        vnodes: u32,
        seed: u64,
        point_hash: PointHash,
    ) -> Result<Ring, RingError> {
        if vnodes == 0 {
            return Err(RingError::ZeroVnodes);
        }
        let mut total: u64 = 0;
        for (position, node) in nodes.iter().enumerate() {
            node.validate(position)?;
            total = total.saturating_add(points_for(node.id(), node.weight(), vnodes)?);
            if total > MAX_POINTS {
                return Err(too_many(node.id(), total));
            }
        }
        check_unique(&nodes)?;

        let mut tagged: Vec<(u64, u32)> = Vec::with_capacity(total as usize);
        for (index, node) in nodes.iter().enumerate() {
            let count = points_for(node.id(), node.weight(), vnodes)? as u32;
            let id = node.id().as_bytes();
            tagged.extend((0..count).map(|point| (point_hash(id, point, seed), index as u32)));
        }
        tagged.sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| id_order(&nodes, a.1, b.1)));
        let (points, owners) = tagged.into_iter().unzip();
        Ok(Ring::assemble(nodes, vnodes, seed, points, owners, point_hash))
    }

    fn assemble(
        nodes: Vec<Node>,
        vnodes: u32,
        seed: u64,
        points: Vec<u64>,
        owners: Vec<u32>,
        point_hash: PointHash,
    ) -> Ring {
        let mut live = vec![false; nodes.len()];
        for &owner in &owners {
            live[owner as usize] = true;
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
        let index = PointIndex::new(&points);
        Ring { nodes, vnodes, seed, points, owners, zone_class, live_nodes, live_zones, index, point_hash }
    }

    /// The nodes, in order (drained ones included).
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// Index in [`Ring::nodes`] of the node with this id, if present.
    pub fn position(&self, id: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.id() == id)
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

    /// The points in ring order as (position, index into [`Ring::nodes`]).
    pub fn points(&self) -> impl ExactSizeIterator<Item = (u64, usize)> + '_ {
        self.points.iter().zip(&self.owners).map(|(&p, &o)| (p, o as usize))
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
    /// [`Ring::hash_key`]: the owner of the first point `>= hash`.
    #[inline]
    pub fn get_by_hash(&self, hash: u64) -> Result<&Node, RingError> {
        Ok(&self.nodes[self.index_by_hash(hash)?])
    }

    /// Index in [`Ring::nodes`] of the node owning `key`. Errors as [`Ring::get`].
    #[inline]
    pub fn get_index(&self, key: impl AsRef<[u8]>) -> Result<usize, RingError> {
        self.index_by_hash(self.hash_key(key))
    }

    /// Places many keys: writes the index in [`Ring::nodes`] of the owner of
    /// the `i`-th key to `out[i]`, for as many keys as both `keys` and `out`
    /// hold, and returns that count. Hashes keys in blocks before looking them
    /// up, so independent memory reads overlap.
    ///
    /// Errors: [`RingError::EmptyRing`] (nothing is written).
    pub fn get_indices<K: AsRef<[u8]>>(
        &self,
        keys: impl IntoIterator<Item = K>,
        out: &mut [usize],
    ) -> Result<usize, RingError> {
        const BLOCK: usize = 32;
        if self.points.is_empty() {
            return Err(RingError::EmptyRing);
        }
        let mut keys = keys.into_iter();
        let mut hashes = [0u64; BLOCK];
        let mut placed = 0;
        for chunk in out.chunks_mut(BLOCK) {
            let mut filled = 0;
            for (slot, key) in hashes[..chunk.len()].iter_mut().zip(keys.by_ref()) {
                *slot = hash_key(key.as_ref(), self.seed);
                filled += 1;
            }
            for (slot, &hash) in chunk[..filled].iter_mut().zip(&hashes[..filled]) {
                let i = self.index.first_at_or_after(&self.points, hash);
                *slot = self.owners[if i == self.points.len() { 0 } else { i }] as usize;
            }
            placed += filled;
            if filled < chunk.len() {
                break;
            }
        }
        Ok(placed)
    }

    /// Index in [`Ring::nodes`] of the node owning position `hash`. Errors as [`Ring::get`].
    #[inline]
    pub fn index_by_hash(&self, hash: u64) -> Result<usize, RingError> {
        Ok(self.owners[self.first_point_at_or_after(hash)?] as usize)
    }

    /// The preference list of `key`: up to `n` distinct nodes clockwise from
    /// the key's position, the first being [`Ring::get`]. When nodes have
    /// zones, nodes of zones not yet listed come first (a node without a zone
    /// counts as a zone of its own), then the remaining nodes in clockwise
    /// order, as Cassandra's NetworkTopologyStrategy places replicas. When `n`
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
    /// were written. Writes nothing when it fails. Does not allocate when
    /// `out.len() <= 32`.
    ///
    /// Errors: [`RingError::EmptyRing`] when no node has weight > 0.
    pub fn get_n_indices(&self, key: impl AsRef<[u8]>, out: &mut [usize]) -> Result<usize, RingError> {
        self.get_n_indices_by_hash(self.hash_key(key), out)
    }

    /// [`Ring::get_n_indices`] for a caller that hashed the key itself.
    pub fn get_n_indices_by_hash(&self, hash: u64, out: &mut [usize]) -> Result<usize, RingError> {
        let start = self.first_point_at_or_after(hash)?;
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
            self.walk(start, |owner| {
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
            self.walk(start, |owner| {
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

    /// Visits owners clockwise from point `start`, once around the ring, until
    /// `visit` returns true.
    fn walk(&self, start: usize, mut visit: impl FnMut(usize) -> bool) {
        let (after, before) = self.owners.split_at(start);
        for &owner in before.iter().chain(after) {
            if visit(owner as usize) {
                return;
            }
        }
    }

    /// Index of the first point `>=` hash, wrapping to 0 past the end.
    #[inline]
    fn first_point_at_or_after(&self, hash: u64) -> Result<usize, RingError> {
        if self.points.is_empty() {
            return Err(RingError::EmptyRing);
        }
        let i = self.index.first_at_or_after(&self.points, hash);
        Ok(if i == self.points.len() { 0 } else { i })
    }

    /// A new ring with `node` added (appended to [`Ring::nodes`]). Only keys
    /// that the new node now owns move. Costs O(P + k log k) for P points on
    /// this ring and k points of the new node: its points are merged into the
    /// sorted points, not rebuilt.
    ///
    /// Errors: [`RingError::DuplicateId`] when the id is taken, the node
    /// errors of [`RingBuilder::build`], [`RingError::TooManyPoints`].
    pub fn with_node(&self, node: Node) -> Result<Ring, RingError> {
        node.validate(self.nodes.len())?;
        if self.position(node.id()).is_some() {
            return Err(RingError::DuplicateId { id: node.id().to_owned() });
        }
        let count = self.checked_total(node.id(), node.weight(), 0)?;
        let mut nodes = self.nodes.clone();
        nodes.push(node);
        let index = nodes.len() - 1;
        let (points, owners) = self.merged(&nodes, index, count, |_| true);
        Ok(Ring::assemble(nodes, self.vnodes, self.seed, points, owners, self.point_hash))
    }

    /// A new ring without the node `id`; the nodes after it shift down one
    /// index. Only keys that node owned move. Costs O(P).
    ///
    /// Errors: [`RingError::UnknownNode`] when no node has this id.
    pub fn without_node(&self, id: &str) -> Result<Ring, RingError> {
        let removed = self.position(id).ok_or_else(|| RingError::UnknownNode { id: id.to_owned() })? as u32;
        let mut nodes = self.nodes.clone();
        nodes.remove(removed as usize);
        let mut points = Vec::with_capacity(self.points.len());
        let mut owners = Vec::with_capacity(self.points.len());
        for (&point, &owner) in self.points.iter().zip(&self.owners) {
            if owner != removed {
                points.push(point);
                owners.push(if owner > removed { owner - 1 } else { owner });
            }
        }
        Ok(Ring::assemble(nodes, self.vnodes, self.seed, points, owners, self.point_hash))
    }

    /// A new ring with node `id` at `weight`. Its points become
    /// `0..round(vnodes * weight)`, so raising the weight only moves keys to
    /// it and lowering it only moves keys away from it. Costs O(P + k log k).
    ///
    /// Errors: [`RingError::UnknownNode`], [`RingError::InvalidWeight`],
    /// [`RingError::TooManyPoints`].
    pub fn with_weight(&self, id: &str, weight: f64) -> Result<Ring, RingError> {
        let index = self.position(id).ok_or_else(|| RingError::UnknownNode { id: id.to_owned() })?;
        check_weight(id, weight)?;
        let old = points_for(id, self.nodes[index].weight(), self.vnodes)?;
        let count = self.checked_total(id, weight, old)?;
        let mut nodes = self.nodes.clone();
        nodes[index].set_weight(weight);
        let (points, owners) = self.merged(&nodes, index, count, |owner| owner != index as u32);
        Ok(Ring::assemble(nodes, self.vnodes, self.seed, points, owners, self.point_hash))
    }

    /// Point count of a node of `weight` replacing `old` points, checked
    /// against [`MAX_POINTS`].
    fn checked_total(&self, id: &str, weight: f64, old: u64) -> Result<u64, RingError> {
        let count = points_for(id, weight, self.vnodes)?;
        let total = self.points.len() as u64 - old + count;
        if total > MAX_POINTS {
            return Err(too_many(id, total));
        }
        Ok(count)
    }

    /// This ring's points for which `keep(owner)` holds, merged with `count`
    /// fresh points of `nodes[index]`, in ring order.
    fn merged(&self, nodes: &[Node], index: usize, count: u64, keep: impl Fn(u32) -> bool) -> (Vec<u64>, Vec<u32>) {
        let id = nodes[index].id().as_bytes();
        let mut fresh: Vec<u64> = (0..count as u32).map(|i| (self.point_hash)(id, i, self.seed)).collect();
        fresh.sort_unstable();
        let capacity = self.points.len() + fresh.len();
        let (mut points, mut owners) = (Vec::with_capacity(capacity), Vec::with_capacity(capacity));
        let mut fresh = fresh.into_iter().peekable();
        for (&point, &owner) in self.points.iter().zip(&self.owners) {
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
        Ring::build_with(nodes, vnodes, 0, point_hash)
    }
}

/// A table over the top `bits` bits of positions: `starts[b]` is the index of
/// the first point whose top bits are `>= b`, so the first point `>= hash`
/// lies in `starts[b]..=starts[b + 1]` for `b = hash >> (64 - bits)`. With
/// about one point per bucket a lookup reads two adjacent table entries and
/// scans one or two points instead of binary-searching the whole ring.
/// `bits` is `ceil(log2(points))`, at most 16: the table holds at most
/// 65,537 `u32` (256 KiB), and rings above 65,536 points get a short binary
/// search inside the bucket.
#[derive(Debug, Clone, Default)]
struct PointIndex {
    starts: Vec<u32>,
    shift: u32,
}

impl PointIndex {
    const MAX_BITS: u32 = 16;

    fn new(points: &[u64]) -> PointIndex {
        if points.is_empty() {
            return PointIndex::default();
        }
        let bits = (usize::BITS - (points.len() - 1).leading_zeros()).clamp(1, Self::MAX_BITS);
        let shift = 64 - bits;
        let buckets = 1usize << bits;
        let mut starts = Vec::with_capacity(buckets + 1);
        let mut next = 0usize;
        for bucket in 0..buckets {
            while next < points.len() && ((points[next] >> shift) as usize) < bucket {
                next += 1;
            }
            starts.push(next as u32);
        }
        starts.push(points.len() as u32);
        PointIndex { starts, shift }
    }

    /// Index of the first point `>= hash` (`points.len()` when none is).
    #[inline]
    fn first_at_or_after(&self, points: &[u64], hash: u64) -> usize {
        let bucket = (hash >> self.shift) as usize;
        let (start, end) = (self.starts[bucket] as usize, self.starts[bucket + 1] as usize);
        let candidates = &points[start..end];
        let offset = if candidates.len() <= 8 {
            candidates.iter().position(|&p| p >= hash).unwrap_or(candidates.len())
        } else {
            candidates.partition_point(|&p| p < hash)
        };
        start + offset
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

fn id_order(nodes: &[Node], a: u32, b: u32) -> Ordering {
    nodes[a as usize].id().as_bytes().cmp(nodes[b as usize].id().as_bytes())
}

fn too_many(id: &str, requested: u64) -> RingError {
    RingError::TooManyPoints { id: id.to_owned(), requested, limit: MAX_POINTS }
}

/// `round(vnodes * weight)` (half away from zero), at least 1 for weight > 0.
/// The weight must already be valid.
pub(crate) fn points_for(id: &str, weight: f64, vnodes: u32) -> Result<u64, RingError> {
    if weight == 0.0 {
        return Ok(0);
    }
    let exact = (weight * f64::from(vnodes)).round();
    if exact > MAX_POINTS as f64 {
        return Err(too_many(id, exact as u64)); // `as` saturates at u64::MAX
    }
    Ok((exact as u64).max(1))
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

        /// The index finds exactly the point a binary search over all points finds.
        #[test]
        fn index_agrees_with_binary_search(
            mut points in prop::collection::vec(prop_oneof![any::<u64>(), Just(0u64), Just(u64::MAX), 0..64u64], 1..400),
            hashes in prop::collection::vec(any::<u64>(), 50),
        ) {
            points.sort_unstable();
            let index = PointIndex::new(&points);
            let probes = hashes.iter().copied().chain(points.iter().flat_map(|&p| [p.wrapping_sub(1), p, p.wrapping_add(1)]));
            for hash in probes.chain([0, u64::MAX]) {
                prop_assert_eq!(index.first_at_or_after(&points, hash), points.partition_point(|&p| p < hash));
            }
        }
    }
}
