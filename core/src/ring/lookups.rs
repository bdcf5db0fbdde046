//! Lookups on a [`Ring`]: a key's hash and owner, batches of keys or
//! hashes, and preference lists (replicas in the algorithm's order, distinct
//! zones first). The ring's struct, getters and derivations are in
//! `ring.rs`; lookups ask its [`Placement`].

use crate::error::RingError;
use crate::node::Node;
use crate::scheme::Placement;

use super::Ring;

impl Ring {
    /// The key's hash under this ring's algorithm, in `[0, 2^bits)` for
    /// `bits` = [`Algorithm::hash_bits`](crate::Algorithm::hash_bits): XXH3-64 under the seed (`ring`,
    /// `jump`, `rendezvous`, `maglev`, `jumpback`, `memento`; see
    /// [`hash_key`](crate::hash_key)), the first 4 bytes
    /// of MD5 little-endian (ketama modes), CRC-32 (`nginx`), the Redis
    /// Cluster slot (`slots`), or the key hash of the peer a compatibility
    /// mode follows (`core/SPEC.md`).
    #[inline(always)]
    pub fn hash_key(&self, key: impl AsRef<[u8]>) -> u64 {
        self.params.key.hash(key.as_ref(), self.params.seed)
    }

    /// [`Ring::hash_key`], showing the key to the [`crate::HotKeys`] sketch
    /// watching this ring (if any) as one lookup: for a binding that hashes
    /// keys while it holds its runtime's lock and places them by hash after
    /// letting go of it.
    #[inline]
    pub fn hash_key_observed(&self, key: impl AsRef<[u8]>) -> u64 {
        let key = key.as_ref();
        let hash = self.hash_key(key);
        self.observe(key, hash);
        hash
    }

    /// The node owning `key` (bytes; a string is its UTF-8 bytes). On a
    /// continuum, the owner of the first point `>=` the key's hash, wrapping
    /// past the end; on the other algorithms, as each defines.
    ///
    /// Errors: [`RingError::EmptyRing`] when no node can own keys.
    #[inline]
    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<&Node, RingError> {
        Ok(&self.nodes[self.get_index(key)?])
    }

    /// [`Ring::get_index`] without counting the lookup: a sample's key.
    pub(crate) fn index_uncounted(&self, key: &[u8]) -> Result<usize, RingError> {
        self.owner(self.hash_key(key))
    }

    /// [`Ring::index_by_hash`] without counting the lookup: a diff's sample.
    pub(crate) fn index_uncounted_by_hash(&self, hash: u64) -> Result<usize, RingError> {
        self.check_hash(hash)?;
        self.owner(hash)
    }

    /// [`Ring::get`] without counting the lookup: the second ring a
    /// transition asks.
    #[inline]
    pub(crate) fn get_uncounted(&self, key: &[u8]) -> Result<&Node, RingError> {
        Ok(&self.nodes[self.owner(self.hash_key(key))?])
    }

    /// Like [`Ring::get`], for a caller that hashed the key itself with
    /// [`Ring::hash_key`].
    ///
    /// Errors: [`RingError::EmptyRing`]; [`RingError::HashOutOfRange`] when
    /// `hash` does not fit the algorithm's [`Algorithm::hash_bits`](crate::Algorithm::hash_bits).
    #[inline]
    pub fn get_by_hash(&self, hash: u64) -> Result<&Node, RingError> {
        Ok(&self.nodes[self.index_by_hash(hash)?])
    }

    /// Index in [`Ring::nodes`] of the node owning `key`. Errors as [`Ring::get`].
    #[inline(always)]
    pub fn get_index(&self, key: impl AsRef<[u8]>) -> Result<usize, RingError> {
        let key = key.as_ref();
        let hash = self.hash_key(key);
        self.observe(key, hash);
        Ok(self.tally(self.owner(hash)?))
    }

    /// Index in [`Ring::nodes`] of the node owning hash `hash`. Errors as
    /// [`Ring::get_by_hash`].
    #[inline]
    pub fn index_by_hash(&self, hash: u64) -> Result<usize, RingError> {
        self.check_hash(hash)?;
        Ok(self.tally(self.owner(hash)?))
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
                let key = key.as_ref();
                let hash = self.hash_key(key);
                self.observe(key, hash);
                *slot = self.owner(hash)?;
                placed += 1;
            }
            self.tally_all(&out[..placed]);
            return Ok(placed);
        };
        let mut hashes = [0u64; BLOCK];
        let mut placed = 0;
        for chunk in out.chunks_mut(BLOCK) {
            let mut filled = 0;
            for (slot, key) in hashes[..chunk.len()].iter_mut().zip(keys.by_ref()) {
                let key = key.as_ref();
                *slot = self.hash_key(key);
                self.observe(key, *slot);
                filled += 1;
            }
            continuum.owners_of(&hashes[..filled], &mut chunk[..filled]);
            placed += filled;
            if filled < chunk.len() {
                break;
            }
        }
        self.tally_all(&out[..placed]);
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
    /// the first hash wider than [`Algorithm::hash_bits`](crate::Algorithm::hash_bits) (nothing is
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
        self.tally_all(out);
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
        let key = key.as_ref();
        let hash = self.hash_key(key);
        self.observe(key, hash);
        let found = self.preference(hash, out)?;
        if found > 0 {
            self.tally(out[0]);
        }
        Ok(found)
    }

    /// Counts one lookup per index, when this ring is counted.
    fn tally_all(&self, indices: &[usize]) {
        if let Some(counts) = &self.counts {
            counts.add_all(indices);
        }
    }

    /// [`Ring::get_n_indices`] for a caller that hashed the key itself.
    /// Errors as [`Ring::get_by_hash`].
    pub fn get_n_indices_by_hash(&self, hash: u64, out: &mut [usize]) -> Result<usize, RingError> {
        self.check_hash(hash)?;
        let found = self.preference(hash, out)?;
        if found > 0 {
            self.tally(out[0]);
        }
        Ok(found)
    }

    /// [`Ring::get_n_indices_by_hash`] without counting or observing: the
    /// hot set's publisher's preference lists.
    pub(crate) fn preference_uncounted(&self, hash: u64, out: &mut [usize]) -> Result<usize, RingError> {
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
