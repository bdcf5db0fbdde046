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
        let index = PointIndex::new(&points, &owners);
        Continuum { points, owners, index, shift, above: 0 }
    }

    /// This continuum with keys belonging to the first point strictly above
    /// their hash (Python's `bisect_right`), wrapping past the end.
    pub(crate) fn strictly_above(mut self) -> Continuum {
        self.above = 1;
        self
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.points.len() * size_of::<u64>() + self.owners.len() * size_of::<u32>() + self.index.heap_bytes()
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
        let index = PointIndex::new(&points, &owners);
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

    /// The native `hash` as a 64-bit position: shifted to the top bits, and
    /// one further on when keys take the point strictly above them.
    #[inline(always)]
    fn position(&self, hash: u64) -> u64 {
        hash.wrapping_add(self.above) << self.shift
    }

    /// Index of the first point `>=` the native `hash`, wrapping to 0 past
    /// the end. The continuum must not be empty.
    #[inline(always)]
    pub(crate) fn start(&self, hash: u64) -> usize {
        let i = self.index.first_at_or_after(&self.points, self.position(hash));
        if i == self.points.len() { 0 } else { i }
    }

    /// The owner of the native `hash`, given its bucket's table entry: the
    /// entry's owner, or the owner of the first point `>=` its position
    /// from the entry's first point (wrapping to point 0 past the end).
    #[inline(always)]
    fn settle(&self, hash: u64, entry: Result<u32, u32>) -> usize {
        match entry {
            Ok(owner) => owner as usize,
            Err(start) => {
                let i = self.index.scan(&self.points, start as usize, self.position(hash));
                self.owners[if i == self.points.len() { 0 } else { i }] as usize
            }
        }
    }

    /// Owner of the first point `>=` the native `hash`. Must not be empty.
    #[inline(always)]
    pub(crate) fn owner(&self, hash: u64) -> usize {
        self.settle(hash, self.index.entry(self.position(hash)))
    }

    /// Owners of up to 32 native hashes at once: every table entry is read
    /// before any point is scanned, so the independent loads overlap
    /// instead of each lookup waiting on its own chain of loads.
    #[inline]
    pub(crate) fn owners_of(&self, hashes: &[u64], out: &mut [usize]) {
        let mut entries = [Ok(0u32); 32];
        for (entry, &hash) in entries.iter_mut().zip(hashes) {
            *entry = self.index.entry(self.position(hash));
        }
        for ((slot, &hash), &entry) in out.iter_mut().zip(hashes).zip(&entries) {
            *slot = self.settle(hash, entry);
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

/// A table over the top `bits` bits of positions, many buckets per point.
/// A bucket that holds no point has one owner for all its hashes, that of
/// the first point after it (wrapping): its entry is that owner, so most
/// lookups read one entry and nothing else. A bucket that holds points has
/// a *mixed* entry, the index of its first point; the first point `>=
/// hash` is then among the `window` points from there (points past the
/// bucket lie above every hash in it).
///
/// Entries are 16 bits (flag and 15 bits) when every owner and point
/// index fits in 15 bits, with `ceil(log2(points)) + 4` bits of buckets
/// (about 16 per point), else 32 bits with `ceil(log2(points)) + 3` (about
/// 8 per point); at most 2^18 buckets either way (512 KiB or 1 MiB), so
/// larger rings have more points per bucket, found by binary search. On
/// 16,000 points, 16 buckets per point leave about 6% of lookups a point to
/// compare, against about 60% with one bucket per point.
#[derive(Debug, Clone)]
pub(crate) struct PointIndex {
    entries: Entries,
    shift: u32,
    /// The most points any bucket holds.
    window: usize,
}

#[derive(Debug, Clone)]
enum Entries {
    Narrow(Box<[u16]>),
    Wide(Box<[u32]>),
}

impl Default for PointIndex {
    fn default() -> PointIndex {
        PointIndex { entries: Entries::Narrow(Box::new([])), shift: 64, window: 0 }
    }
}

impl PointIndex {
    const MAX_BITS: u32 = 18;
    /// The flag of a mixed 16-bit entry; 15 bits of value below it.
    const NARROW_MIXED: u16 = 1 << 15;
    /// The flag of a mixed 32-bit entry.
    const WIDE_MIXED: u32 = 1 << 31;

    pub(crate) fn new(points: &[u64], owners: &[u32]) -> PointIndex {
        if points.is_empty() {
            return PointIndex::default();
        }
        let narrow = points.len() <= usize::from(Self::NARROW_MIXED)
            && owners.iter().all(|&o| o < u32::from(Self::NARROW_MIXED));
        let per_point = if narrow { 4 } else { 3 };
        let bits = (usize::BITS - (points.len() - 1).leading_zeros() + per_point).clamp(1, Self::MAX_BITS);
        let shift = 64 - bits;
        let buckets = 1usize << bits;
        let mut entries: Vec<(bool, u32)> = Vec::with_capacity(buckets);
        let mut next = 0usize;
        let mut window = 0usize;
        for bucket in 0..buckets {
            while next < points.len() && ((points[next] >> shift) as usize) < bucket {
                next += 1;
            }
            let mut end = next;
            while end < points.len() && ((points[end] >> shift) as usize) == bucket {
                end += 1;
            }
            window = window.max(end - next);
            entries.push(if end > next {
                (true, next as u32)
            } else {
                (false, owners[if next == points.len() { 0 } else { next }])
            });
        }
        let entries = if narrow {
            Entries::Narrow(
                entries.iter().map(|&(mixed, v)| v as u16 | if mixed { Self::NARROW_MIXED } else { 0 }).collect(),
            )
        } else {
            Entries::Wide(entries.iter().map(|&(mixed, v)| v | if mixed { Self::WIDE_MIXED } else { 0 }).collect())
        };
        PointIndex { entries, shift, window }
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        match &self.entries {
            Entries::Narrow(entries) => entries.len() * size_of::<u16>(),
            Entries::Wide(entries) => entries.len() * size_of::<u32>(),
        }
    }

    /// Bucket `bucket`'s entry: `Ok(owner)` when it holds no point,
    /// `Err(first point)` when it holds some.
    #[inline(always)]
    fn at(&self, bucket: usize) -> Result<u32, u32> {
        match &self.entries {
            Entries::Narrow(entries) => {
                let entry = entries[bucket];
                if entry & Self::NARROW_MIXED == 0 {
                    Ok(u32::from(entry))
                } else {
                    Err(u32::from(entry & !Self::NARROW_MIXED))
                }
            }
            Entries::Wide(entries) => {
                let entry = entries[bucket];
                if entry & Self::WIDE_MIXED == 0 { Ok(entry) } else { Err(entry & !Self::WIDE_MIXED) }
            }
        }
    }

    /// The entry of the bucket holding `hash` (see [`PointIndex::at`]).
    #[inline(always)]
    fn entry(&self, hash: u64) -> Result<u32, u32> {
        self.at((hash >> self.shift) as usize)
    }

    fn buckets(&self) -> usize {
        match &self.entries {
            Entries::Narrow(entries) => entries.len(),
            Entries::Wide(entries) => entries.len(),
        }
    }

    /// Index of the first point `>= hash` (`points.len()` when none is).
    #[inline(always)]
    pub(crate) fn first_at_or_after(&self, points: &[u64], hash: u64) -> usize {
        let bucket = (hash >> self.shift) as usize;
        match self.at(bucket) {
            Err(start) => self.scan(points, start as usize, hash),
            // No point in this bucket: the answer is the next mixed bucket's first point.
            Ok(_) => (bucket + 1..self.buckets()).find_map(|b| self.at(b).err()).map_or(points.len(), |s| s as usize),
        }
    }

    /// Index of the first point `>= hash` from `start`, the first point of
    /// `hash`'s bucket, or `points.len()`.
    #[inline(always)]
    fn scan(&self, points: &[u64], start: usize, hash: u64) -> usize {
        let candidates = &points[start..points.len().min(start + self.window)];
        // A short window counts its points below `hash` instead of stopping
        // at the first one above it: the loop's length depends only on the
        // window, so no branch waits on (or mispredicts over) point loads.
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
            let owners: Vec<u32> = (0..points.len() as u32).collect();
            let index = PointIndex::new(&points, &owners);
            let probes = hashes.iter().copied().chain(points.iter().flat_map(|&p| [p.wrapping_sub(1), p, p.wrapping_add(1)]));
            for hash in probes.chain([0, u64::MAX]) {
                prop_assert_eq!(index.first_at_or_after(&points, hash), points.partition_point(|&p| p < hash));
            }
        }

        /// The owner table answers what a binary search over all points
        /// answers, for buckets with and without points, ties and the wrap,
        /// on 64- and 32-bit continua, with keys on or above their point.
        #[test]
        fn owners_agree_with_binary_search(
            mut points in prop::collection::vec(prop_oneof![any::<u64>(), Just(0u64), Just(u64::MAX), 0..64u64], 1..600),
            hashes in prop::collection::vec(any::<u64>(), 64),
            narrow in any::<bool>(),
            above in any::<bool>(),
            wide_entries in any::<bool>(),
        ) {
            let (bits, mask) = if narrow { (32, u64::from(u32::MAX)) } else { (64, u64::MAX) };
            points.iter_mut().for_each(|p| *p &= mask);
            points.sort_unstable();
            // Owners past 15 bits take 32-bit table entries.
            let base = if wide_entries { 1 << 20 } else { 0 };
            let owners: Vec<u32> = (0..points.len() as u32).map(|i| base + i * 7 % 13).collect();
            let mut continuum = Continuum::new(points.clone(), owners.clone(), bits);
            if above {
                continuum = continuum.strictly_above();
            }
            let probes = hashes.iter().map(|h| h & mask).chain(points.iter().flat_map(|&p| [p.wrapping_sub(1) & mask, p, p.wrapping_add(1) & mask]));
            for hash in probes.chain([0, mask]) {
                let first = points.partition_point(|&p| if above { p <= hash } else { p < hash });
                let want = owners[if first == points.len() { 0 } else { first }] as usize;
                prop_assert_eq!(continuum.owner(hash), want, "hash {:#x}", hash);
                prop_assert_eq!(continuum.owners[continuum.start(hash)] as usize, want);
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
