//! The sorted point array shared by every point-based algorithm (`ring`,
//! `ketama`, `ketama-spy`, `libketama`, `nginx`): a key belongs to the first
//! point at or after its hash, wrapping past the end. "Continuum" is
//! libketama's name for it.

use crate::error::RingError;
use crate::node::Node;

/// Most points a ring may hold: 2^24 = 16,777,216 (192 MiB of points); also
/// the largest Maglev table. Building or deriving a larger ring fails with
/// [`RingError::TooManyPoints`].
pub const MAX_POINTS: u64 = 1 << 24;

/// [`RingError::TooManyPoints`] for `requested` points, met while adding node `id`.
pub(crate) fn too_many(id: &str, requested: u64) -> RingError {
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

/// Sorts (point, node index) pairs by point, equal points by the owners' id
/// bytes (unsigned, lexicographic: a prefix sorts first), so the continuum is
/// the same whatever order the nodes were listed in.
pub(crate) fn sort_by_point_then_id(tagged: &mut [(u64, u32)], nodes: &[Node]) {
    tagged.sort_unstable_by(|a, b| {
        a.0.cmp(&b.0).then_with(|| nodes[a.1 as usize].id().as_bytes().cmp(nodes[b.1 as usize].id().as_bytes()))
    });
}

/// Points in ascending order with their owners, plus a lookup index.
///
/// Points are stored shifted left by `64 - bits`, so a 32-bit hash space
/// (MD5 or CRC-32 points) uses the same 64-bit index as XXH3 points.
#[derive(Debug, Clone)]
pub(crate) struct Continuum {
    /// Point positions `<< shift`, ascending; ties ordered by the algorithm's rule.
    points: Vec<u64>,
    /// `owners[i]` is the index of the node owning `points[i]`.
    owners: Vec<u32>,
    index: PointIndex,
    shift: u32,
    /// 1 when a key belongs to the first point strictly above its hash
    /// (uhashring), 0 for the first point at or above it.
    above: u64,
}

impl Continuum {
    /// A continuum over sorted native positions of `bits` bits (`1..=64`).
    pub(crate) fn new(mut points: Vec<u64>, owners: Vec<u32>, bits: u32) -> Continuum {
        debug_assert!(points.is_sorted() && points.len() == owners.len());
        let shift = 64 - bits;
        if shift > 0 {
            points.iter_mut().for_each(|p| *p <<= shift);
        }
        let index = PointIndex::new(&points);
        Continuum { points, owners, index, shift, above: 0 }
    }

    /// This continuum with keys belonging to the first point strictly above
    /// their hash (Python's `bisect_right`), wrapping past the end.
    pub(crate) fn strictly_above(mut self) -> Continuum {
        self.above = 1;
        self
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.points.len() * size_of::<u64>()
            + self.owners.len() * size_of::<u32>()
            + self.index.starts.len() * size_of::<u32>()
    }

    /// This continuum without the points of node `removed`, the owners
    /// above it renumbered one down.
    pub(crate) fn without_owner(&self, removed: u32) -> Continuum {
        let mut points = Vec::with_capacity(self.points.len());
        let mut owners = Vec::with_capacity(self.owners.len());
        for (&point, &owner) in self.points.iter().zip(&self.owners) {
            if owner != removed {
                points.push(point);
                owners.push(owner - u32::from(owner > removed));
            }
        }
        let index = PointIndex::new(&points);
        Continuum { points, owners, index, shift: self.shift, above: self.above }
    }

    pub(crate) fn len(&self) -> usize {
        self.points.len()
    }

    /// The points at their native positions, in ring order, with owners.
    pub(crate) fn points(&self) -> impl ExactSizeIterator<Item = (u64, usize)> + '_ {
        self.points.iter().zip(&self.owners).map(move |(&p, &o)| (p >> self.shift, o as usize))
    }

    pub(crate) fn owners(&self) -> &[u32] {
        &self.owners
    }

    /// Last position of each point's arc in the 64-bit space (a native point
    /// `p` owns native hashes up to `p`, or up to `p - 1` when keys take the
    /// point strictly above them; that is 64-bit positions up to
    /// `((p + 1) << shift) - 1`), with its owner, in ring order.
    pub(crate) fn boundaries(&self) -> impl Iterator<Item = (u64, usize)> + '_ {
        let fill = if self.shift == 0 { 0 } else { (1u64 << self.shift) - 1 };
        let step = self.above << self.shift;
        self.points.iter().zip(&self.owners).map(move |(&p, &o)| (p.wrapping_sub(step) | fill, o as usize))
    }

    /// Index of the first point `>=` the native `hash`, wrapping to 0 past
    /// the end. The continuum must not be empty.
    #[inline(always)]
    pub(crate) fn start(&self, hash: u64) -> usize {
        let i = self.index.first_at_or_after(&self.points, hash.wrapping_add(self.above) << self.shift);
        if i == self.points.len() { 0 } else { i }
    }

    /// Owner of the first point `>=` the native `hash`. Must not be empty.
    #[inline(always)]
    pub(crate) fn owner(&self, hash: u64) -> usize {
        self.owners[self.start(hash)] as usize
    }

    /// Owners of up to 32 native hashes at once: every bucket range is read
    /// before any point is scanned, so the independent index loads overlap
    /// instead of each lookup waiting on its own chain of loads.
    #[inline]
    pub(crate) fn owners_of(&self, hashes: &[u64], out: &mut [usize]) {
        let mut ranges = [(0u32, 0u32); 32];
        for (range, &hash) in ranges.iter_mut().zip(hashes) {
            *range = self.index.bucket(hash.wrapping_add(self.above) << self.shift);
        }
        // Most buckets hold 0 or 1 point: settle those without a loop, so
        // the point loads of all the hashes issue together.
        let mut found = [0usize; 32];
        for ((slot, &hash), &(start, end)) in found.iter_mut().zip(hashes).zip(&ranges) {
            let (start, end, hash) = (start as usize, end as usize, hash.wrapping_add(self.above) << self.shift);
            *slot = if end - start <= 1 {
                let point = self.points.get(start).copied().unwrap_or(u64::MAX);
                start + usize::from(end > start && point < hash)
            } else {
                self.index.scan(&self.points, start, end, hash)
            };
        }
        let len = self.points.len();
        for (slot, &i) in out.iter_mut().zip(&found) {
            *slot = self.owners[if i == len { 0 } else { i }] as usize;
        }
    }

    /// Visits owners clockwise from point `start`, once around, until `visit`
    /// returns true.
    pub(crate) fn walk(&self, start: usize, mut visit: impl FnMut(usize) -> bool) {
        let (after, before) = self.owners.split_at(start);
        for &owner in before.iter().chain(after) {
            if visit(owner as usize) {
                return;
            }
        }
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
pub(crate) struct PointIndex {
    starts: Vec<u32>,
    shift: u32,
}

impl PointIndex {
    const MAX_BITS: u32 = 16;

    pub(crate) fn new(points: &[u64]) -> PointIndex {
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
    #[inline(always)]
    pub(crate) fn first_at_or_after(&self, points: &[u64], hash: u64) -> usize {
        let (start, end) = self.bucket(hash);
        self.scan(points, start as usize, end as usize, hash)
    }

    /// The range of points whose bucket holds `hash`'s answer.
    #[inline(always)]
    pub(crate) fn bucket(&self, hash: u64) -> (u32, u32) {
        let bucket = (hash >> self.shift) as usize;
        (self.starts[bucket], self.starts[bucket + 1])
    }

    /// Index of the first point `>= hash` within `points[start..end]`, or `end`.
    #[inline(always)]
    pub(crate) fn scan(&self, points: &[u64], start: usize, end: usize, hash: u64) -> usize {
        let candidates = &points[start..end];
        // A short bucket counts its points below `hash` instead of stopping
        // at the first one above it: the loop's length depends only on the
        // bucket range, so no branch waits on (or mispredicts over) point loads.
        let offset = if candidates.len() <= 8 {
            candidates.iter().map(|&p| usize::from(p < hash)).sum()
        } else {
            candidates.partition_point(|&p| p < hash)
        };
        start + offset
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn narrow_points_keep_their_order_and_arcs() {
        let c = Continuum::new(vec![5, 9, u32::MAX as u64], vec![0, 1, 2], 32);
        assert_eq!(c.points().collect::<Vec<_>>(), [(5, 0), (9, 1), (u32::MAX as u64, 2)]);
        assert_eq!([0, 5, 6, 9, 10, u32::MAX as u64].map(|h| c.owner(h)), [0, 0, 1, 1, 2, 2]);
        let ends: Vec<u64> = c.boundaries().map(|(b, _)| b).collect();
        assert_eq!(ends, [(6 << 32) - 1, (10 << 32) - 1, u64::MAX]);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]

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

        /// Batch lookups give the owners single lookups give, on 64- and
        /// 32-bit continua, for blocks of any length up to 32.
        #[test]
        fn owners_of_agrees_with_owner(
            mut points in prop::collection::vec(prop_oneof![any::<u64>(), Just(0u64), 0..64u64], 1..300),
            hashes in prop::collection::vec(any::<u64>(), 0..=32),
            narrow in any::<bool>(),
        ) {
            let bits = if narrow { 32 } else { 64 };
            let mask = if narrow { u64::from(u32::MAX) } else { u64::MAX };
            points.iter_mut().for_each(|p| *p &= mask);
            points.sort_unstable();
            let owners = (0..points.len() as u32).collect();
            let continuum = Continuum::new(points.clone(), owners, bits);
            let hashes: Vec<u64> = hashes.iter().chain(&points).take(32).map(|h| h & mask).collect();
            let mut out = vec![usize::MAX; hashes.len()];
            continuum.owners_of(&hashes, &mut out);
            for (&hash, &owner) in hashes.iter().zip(&out) {
                prop_assert_eq!(owner, continuum.owner(hash));
            }
        }
    }
}
