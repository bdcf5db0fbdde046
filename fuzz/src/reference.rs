//! Naive re-implementations of `core/SPEC.md`, written from the spec text and
//! not from the library's source: linear scans, whole rebuilds, no indexes.
//! Each function is slow on purpose; the fuzz targets only feed it small rings.
//!
//! A "preference order" here is every node that can own keys, each once, in
//! the order the algorithm prefers them for a hash; [`with_zones`] then
//! applies the zones rule of *Lookup* to give the `get_n` list.

use xxhash_rust::xxh3::xxh3_128_with_seed;

/// Index in `points` (sorted `(position, node)` pairs) of the point owning
/// `hash`: the first point whose position is `>= hash`, wrapping to the first
/// point when there is none. `None` for an empty continuum.
pub fn continuum_start(points: &[(u64, usize)], hash: u64) -> Option<usize> {
    if points.is_empty() {
        return None;
    }
    Some(points.iter().position(|&(position, _)| position >= hash).unwrap_or(0))
}

/// Owner (node index) of `hash` on a continuum, by linear search.
pub fn continuum_owner(points: &[(u64, usize)], hash: u64) -> Option<usize> {
    continuum_start(points, hash).map(|start| points[start].1)
}

/// Preference order of `hash` on a continuum: walk clockwise from the owning
/// point, once around, listing each node the first time one of its points is
/// met. `total` is the number of different owners ([`distinct_count`]), where
/// the walk may stop.
pub fn continuum_order(points: &[(u64, usize)], hash: u64, total: usize) -> Vec<usize> {
    let Some(start) = continuum_start(points, hash) else {
        return Vec::new();
    };
    distinct_in_order(points[start..].iter().chain(&points[..start]).map(|&(_, node)| node), total)
}

/// How many different nodes appear in `owners`.
pub fn distinct_count(owners: impl Iterator<Item = usize>) -> usize {
    let mut all: Vec<usize> = owners.collect();
    all.sort_unstable();
    all.dedup();
    all.len()
}

/// Each node of `owners` once, in order of first appearance; stops after `total`.
fn distinct_in_order(owners: impl Iterator<Item = usize>, total: usize) -> Vec<usize> {
    let mut order: Vec<usize> = Vec::with_capacity(total);
    let mut previous = usize::MAX;
    for node in owners {
        if order.len() == total {
            break;
        }
        // Runs of one owner (Redis slot ranges) are checked once.
        if node != previous && !order.contains(&node) {
            order.push(node);
        }
        previous = node;
    }
    order
}

/// The `get_n` list of *Lookup* from a preference order: `m = min(n, order.len())`
/// nodes; when any node has a zone, nodes of zones not yet listed first (a
/// node without a zone is a zone of its own), then the rest in order.
/// `zones` is indexed by node index.
pub fn with_zones(order: &[usize], zones: &[Option<&str>], n: usize) -> Vec<usize> {
    let m = n.min(order.len());
    if zones.iter().all(Option::is_none) {
        return order[..m].to_vec();
    }
    let mut out: Vec<usize> = Vec::with_capacity(m);
    for &node in order {
        if out.len() == m {
            break;
        }
        let zone_taken = match zones[node] {
            Some(zone) => out.iter().any(|&listed| zones[listed] == Some(zone)),
            None => false,
        };
        if !zone_taken {
            out.push(node);
        }
    }
    for &node in order {
        if out.len() == m {
            break;
        }
        if !out.contains(&node) {
            out.push(node);
        }
    }
    out
}

/// MurmurHash3's 64-bit finaliser.
pub fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^ (k >> 33)
}

/// `jump(k, n)` exactly as *jump* in the spec writes it.
pub fn jump(mut k: u64, n: u64) -> u64 {
    let (mut b, mut j): (i64, i64) = (-1, 0);
    while (j as i128) < n as i128 {
        b = j;
        k = k.wrapping_mul(2_862_933_555_777_941_757).wrapping_add(1);
        j = ((b + 1) as f64 * ((1u64 << 31) as f64 / ((k >> 33) + 1) as f64)).floor() as i64;
    }
    b as u64
}

/// Jump's preference order over `n` nodes: the owner, then for `i = 1, 2, ...`
/// the `jump(fmix64(hash ^ i * 0x9E3779B97F4A7C15), n - i)`-th not yet
/// listed node, counting in list order.
pub fn jump_order(hash: u64, n: usize) -> Vec<usize> {
    let mut order: Vec<usize> = Vec::with_capacity(n);
    for i in 0..n {
        let key = if i == 0 { hash } else { fmix64(hash ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)) };
        let pick = jump(key, (n - i) as u64) as usize;
        let node = (0..n).filter(|candidate| !order.contains(candidate)).nth(pick).expect("pick < n - i");
        order.push(node);
    }
    order
}

/// Value `k` of the SplitMix64 stream seeded with `seed`, as *jumpback* in
/// the spec writes it.
pub fn splitmix(seed: u64, k: u64) -> u64 {
    let mut z = seed.wrapping_add((k + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// `jumpback(h, n)` step by step as *jumpback* in the spec writes it, in
/// u64 arithmetic with the highest set bit found by a loop.
pub fn jump_back(h: u64, n: u64) -> u64 {
    if n <= 1 {
        return 0;
    }
    let r0 = splitmix(h, 0);
    let (lo32, hi32) = (r0 & 0xffff_ffff, r0 >> 32);
    let bits = 64 - (n - 1).leading_zeros();
    let mut x = (lo32 ^ hi32) & ((1u64 << bits) - 1);
    let mut k = 0;
    while x != 0 {
        let mut lo = 1u64;
        while lo * 2 <= x {
            lo *= 2;
        }
        let half = if x.count_ones() % 2 == 1 { hi32 } else { lo32 };
        let b = lo + (half & (lo - 1));
        if b < n {
            return b;
        }
        'draws: loop {
            k += 1;
            let r = splitmix(h, k);
            for b in [r & 0xffff_ffff & (2 * lo - 1), (r >> 32) & (2 * lo - 1)] {
                if b < lo {
                    break 'draws;
                }
                if b < n {
                    return b;
                }
            }
        }
        x ^= lo;
    }
    0
}

/// JumpBack's preference order: jump's, with `jump_back` in place of `jump`.
pub fn jump_back_order(hash: u64, n: usize) -> Vec<usize> {
    let mut order: Vec<usize> = Vec::with_capacity(n);
    for i in 0..n {
        let key = if i == 0 { hash } else { fmix64(hash ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)) };
        let pick = jump_back(key, (n - i) as u64) as usize;
        let node = (0..n).filter(|candidate| !order.contains(candidate)).nth(pick).expect("pick < n - i");
        order.push(node);
    }
    order
}

/// MementoHash's state as *memento* in the spec defines it, kept the plain
/// way: a map of removed buckets to replacers and the history as a stack.
#[derive(Debug, Clone, PartialEq)]
pub struct Memento {
    /// The bucket array's size.
    pub size: u64,
    /// Each node's bucket, in node order.
    pub bucket_of: Vec<u64>,
    /// The removed buckets, oldest first, with their replacers.
    pub history: Vec<(u64, u64)>,
}

impl Memento {
    /// `n` nodes holding buckets `0..n`, nothing removed.
    pub fn new(n: usize) -> Memento {
        Memento { size: n as u64, bucket_of: (0..n as u64).collect(), history: Vec::new() }
    }

    /// A node is appended: it takes the most recently removed bucket, or a new one.
    pub fn add(&mut self) {
        let bucket = match self.history.pop() {
            Some((bucket, _)) => bucket,
            None => {
                self.size += 1;
                self.size - 1
            }
        };
        self.bucket_of.push(bucket);
    }

    /// Node `index` leaves: Memento's removal rule on its bucket.
    pub fn remove(&mut self, index: usize) {
        let bucket = self.bucket_of.remove(index);
        self.remove_bucket(bucket);
    }

    fn remove_bucket(&mut self, bucket: u64) {
        if self.history.is_empty() && bucket == self.size - 1 {
            self.size -= 1;
        } else {
            // The replacer: the buckets working right after this removal.
            let working = self.size - self.history.len() as u64 - 1;
            self.history.push((bucket, working));
        }
    }

    fn replacer(&self, bucket: u64) -> Option<u64> {
        self.history.iter().find(|&&(b, _)| b == bucket).map(|&(_, r)| r)
    }

    /// The node owning `hash`: Memento's lookup over `jump_back`, the
    /// rehash being `floor(splitmix(fmix64(h), b) * r / 2^64)`.
    pub fn owner(&self, hash: u64) -> usize {
        let mut b = jump_back(hash, self.size);
        let mut r = self.replacer(b);
        while let Some(working) = r {
            b = ((u128::from(splitmix(fmix64(hash), b)) * u128::from(working)) >> 64) as u64;
            r = self.replacer(b);
            while let Some(earlier) = r.filter(|&e| e >= working) {
                b = earlier;
                r = self.replacer(b);
            }
        }
        self.bucket_of.iter().position(|&held| held == b).expect("the bucket a lookup ends on is held")
    }

    /// The failover order: the owner, then the owner once it is removed, and so on.
    pub fn order(&self, hash: u64) -> Vec<usize> {
        let mut state = self.clone();
        let mut indices: Vec<usize> = (0..self.bucket_of.len()).collect();
        let mut order = Vec::new();
        while !state.bucket_of.is_empty() {
            let at = state.owner(hash);
            order.push(indices.remove(at));
            state.remove(at);
        }
        order
    }
}

/// Rendezvous preference order of `hash` over `nodes` (id, weight): nodes of
/// weight > 0 by descending score `-(w / max w) / ln(u)`, equal scores by id bytes.
pub fn rendezvous_float_order(nodes: &[(&str, f64)], seed: u64, hash: u64) -> Vec<usize> {
    let max = nodes.iter().map(|&(_, w)| w).fold(0.0, f64::max);
    let mut scored: Vec<(f64, usize)> = Vec::new();
    for (index, &(id, weight)) in nodes.iter().enumerate() {
        if weight > 0.0 {
            let node_hash = shardring::hash_key(id.as_bytes(), seed);
            let u = ((fmix64(hash ^ node_hash) >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
            scored.push((-(weight / max) / u.ln(), index));
        }
    }
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| nodes[a.1].0.as_bytes().cmp(nodes[b.1].0.as_bytes())));
    scored.into_iter().map(|(_, index)| index).collect()
}

/// The Maglev table (slot -> node index) for `nodes` (id, weight), filled as
/// *maglev* describes: empty when no node has weight > 0.
pub fn maglev_table(nodes: &[(&str, f64)], seed: u64, size: u64) -> Vec<usize> {
    let mut live: Vec<usize> = (0..nodes.len()).filter(|&i| nodes[i].1 > 0.0).collect();
    if live.is_empty() {
        return Vec::new();
    }
    live.sort_by(|&a, &b| nodes[a].0.as_bytes().cmp(nodes[b].0.as_bytes()));
    let max = live.iter().map(|&i| nodes[i].1).fold(0.0, f64::max);
    // Per live node: offset, skip, steps taken along its permutation, credit.
    let mut turns: Vec<(u64, u64, u64, f64)> = live
        .iter()
        .map(|&i| {
            let x = xxh3_128_with_seed(nodes[i].0.as_bytes(), seed);
            let (low, high) = (x as u64, (x >> 64) as u64);
            (low % size, high % (size - 1).max(1) + 1, 0, 0.0)
        })
        .collect();
    let mut table: Vec<Option<usize>> = vec![None; size as usize];
    let mut filled = 0;
    while filled < table.len() {
        for (k, turn) in turns.iter_mut().enumerate() {
            turn.3 += nodes[live[k]].1 / max;
            while turn.3 >= 1.0 && filled < table.len() {
                turn.3 -= 1.0;
                loop {
                    let slot =
                        ((u128::from(turn.0) + u128::from(turn.2) * u128::from(turn.1)) % u128::from(size)) as usize;
                    turn.2 += 1;
                    if table[slot].is_none() {
                        table[slot] = Some(live[k]);
                        filled += 1;
                        break;
                    }
                }
            }
        }
    }
    table.into_iter().map(|owner| owner.expect("every slot claimed")).collect()
}

/// The Maglev slot of a 64-bit hash: `(hash * size) >> 64`.
pub fn maglev_slot(hash: u64, size: u64) -> usize {
    ((u128::from(hash) * u128::from(size)) >> 64) as usize
}

/// Preference order of a table algorithm: owners of the slots from `slot`
/// onwards, wrapping, each node once. `total` is the number of different
/// owners in the table ([`distinct_count`]), where the walk may stop.
pub fn table_order(table: &[usize], slot: usize, total: usize) -> Vec<usize> {
    distinct_in_order(table[slot..].iter().chain(&table[..slot]).copied(), total)
}

/// CRC16/XMODEM, bit by bit: polynomial 0x1021, initial 0, no reflection.
pub fn crc16_xmodem(bytes: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for &byte in bytes {
        crc ^= u16::from(byte) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 { (crc << 1) ^ 0x1021 } else { crc << 1 };
        }
    }
    crc
}

/// The Redis Cluster slot of a key: CRC16 of the bytes between the first `{`
/// and the first `}` after it when there is at least one, else of the key.
pub fn redis_slot(key: &[u8]) -> u64 {
    let mut hashed = key;
    if let Some(open) = key.iter().position(|&b| b == b'{') {
        if let Some(close) = key[open + 1..].iter().position(|&b| b == b'}') {
            if close > 0 {
                hashed = &key[open + 1..open + 1 + close];
            }
        }
    }
    u64::from(crc16_xmodem(hashed) % 16_384)
}

/// `(a * b) >> 128` for 128-bit `a`, `b`.
fn mul_hi_128(a: u128, b: u128) -> u128 {
    let mask = u128::from(u64::MAX);
    let (a1, a0, b1, b0) = (a >> 64, a & mask, b >> 64, b & mask);
    let (high, cross1, cross2, low) = (a1 * b1, a1 * b0, a0 * b1, a0 * b0);
    let middle = (low >> 64) + (cross1 & mask) + (cross2 & mask);
    high + (cross1 >> 64) + (cross2 >> 64) + (middle >> 64)
}

/// `2^64 * log2(1 + i/256)` by 64 digits of the squaring algorithm in
/// 126-bit fixed point (within a unit or two of the spec's rounded table).
fn log2_entry(i: u64) -> u64 {
    let mut z = u128::from((256 + i) << 55) << 63;
    let mut bits = 0u64;
    for _ in 0..64 {
        z = mul_hi_128(z, z) << 2;
        bits <<= 1;
        if z >= 1 << 127 {
            bits |= 1;
            z >>= 1;
        }
    }
    bits
}

/// `L(y)` step by step as *rendezvous* in the spec writes it.
pub fn neg_log2(y: u64) -> u64 {
    static TABLE: std::sync::OnceLock<Vec<u64>> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| (0..256).map(log2_entry).collect());
    let hi = |a: u64, b: u64| ((u128::from(a) * u128::from(b)) >> 64) as u64;
    let e = 63 - y.leading_zeros();
    let t = y << (63 - e);
    let i = ((t >> 55) & 255) as usize;
    let d = t & ((1 << 55) - 1);
    let r = ((1u128 << 65) / (256 + i as u128)) as u64;
    let rho = ((u128::from(d) * u128::from(r)) >> 56) as u64;
    let (k2, k3, k4, k5, k6) = (1u64 << 63, u64::MAX / 3, 1u64 << 62, u64::MAX / 5, u64::MAX / 6 + 1);
    let mut h = k5 - hi(rho, k6);
    h = k4 - hi(rho, h);
    h = k3 - hi(rho, h);
    h = k2 - hi(rho, h);
    let l = rho - hi(rho, hi(rho, h));
    let f = ((u128::from(l) * 0xb8aa_3b29_5c17_f0bc_u128) >> 63) as u64;
    let big_f = table[i].saturating_add(f);
    (u64::from(64 - e) << 57) - (big_f >> 7)
}

/// Rendezvous preference order under the integer score: by descending
/// `(w / max w) / binary64(L(draw | 1))`, then descending draw, then id bytes.
pub fn rendezvous_order(nodes: &[(&str, f64)], seed: u64, hash: u64) -> Vec<usize> {
    let max = nodes.iter().map(|&(_, w)| w).fold(0.0, f64::max);
    let mut scored: Vec<(f64, u64, usize)> = Vec::new();
    for (index, &(id, weight)) in nodes.iter().enumerate() {
        if weight > 0.0 {
            let draw = fmix64(hash ^ shardring::hash_key(id.as_bytes(), seed));
            scored.push(((weight / max) / neg_log2(draw | 1) as f64, draw, index));
        }
    }
    scored.sort_by(|a, b| {
        b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)).then_with(|| nodes[a.2].0.as_bytes().cmp(nodes[b.2].0.as_bytes()))
    });
    scored.into_iter().map(|(_, _, index)| index).collect()
}
