//! [`HotKeys`]: which keys take the most requests, in bounded memory.
//!
//! A HeavyKeeper sketch (Yang et al., "HeavyKeeper: An Accurate Algorithm
//! for Finding Top-k Elephant Flows", USENIX ATC 2018): `ROWS` rows of
//! buckets, each a key fingerprint and a count. A key's bucket in each row
//! counts it up when it holds its fingerprint (or is empty), and otherwise
//! decays the holder's count by one with probability `1.08^-count`, taking
//! the bucket once the count reaches zero: small counts are evicted fast,
//! large ones almost never, so the buckets end up held by the heavy keys.
//! A top-K list keeps the keys (their bytes) whose estimate passes the
//! smallest one in it, and marks their buckets: counting a key already in
//! the list takes no lock, and its estimate is read from the buckets when
//! the list is. Counts halve every half-life, so a key that stops
//! being requested cools. Only every `sample`-th lookup of a thread is
//! counted (a per-thread counter, no shared write), which keeps the added
//! cost to 4 to 7 ns (`make bench`, *hot keys*); a heavy key is sampled
//! often by definition.

use std::cell::Cell;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Rows of buckets; a key has one bucket in each.
const ROWS: usize = 2;

/// HeavyKeeper's decay base `b`: a bucket holding count `c` is decayed by
/// another key with probability `b^-c` (the paper's choice, 1.08).
const DECAY_BASE: f64 = 1.08;

thread_local! {
    /// Lookups this thread has seen (for sampling), and its random state.
    static SEEN: Cell<u32> = const { Cell::new(0) };
    static RANDOM: Cell<u64> = const { Cell::new(0) };
}

/// One hot key: its bytes, its estimated requests and rate.
#[derive(Debug, Clone, PartialEq)]
pub struct HotKey {
    /// The key's bytes.
    pub key: Vec<u8>,
    /// Estimated requests over the sketch's memory (counts halve every
    /// half-life): the sampled count times the sampling interval.
    pub requests: u64,
    /// Estimated requests per second: `requests` over the time they were
    /// counted in (the time since the sketch started, at most the
    /// half-life divided by ln 2, the mean age of a decayed count).
    pub rate: f64,
}

/// Settings of a [`HotKeys`] sketch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HotKeysOptions {
    /// How many hot keys to keep (the top K; default 100, at most 4,096).
    pub top: usize,
    /// Buckets per row, a power of two (default 4,096: two rows of 8-byte
    /// buckets, 64 KiB).
    pub width: usize,
    /// Count one lookup in `sample` per thread, a power of two (default 4).
    pub sample: u32,
    /// Counts halve after this long (default 60 s).
    pub half_life: Duration,
}

impl Default for HotKeysOptions {
    fn default() -> HotKeysOptions {
        HotKeysOptions { top: 100, width: 4_096, sample: 4, half_life: Duration::from_secs(60) }
    }
}

/// A bucket: the holder's fingerprint (high 32 bits), whether the holder
/// is in the top K (bit 31), and its count (low 31 bits).
const MEMBER: u64 = 1 << 31;
const COUNT: u64 = MEMBER - 1;

#[derive(Debug)]
struct Entry {
    key: Box<[u8]>,
    hash: u64,
}

/// The heavy keys of the lookups it observes, in bounded memory
/// (`width * 16` bytes of buckets, and the top K keys' bytes). `Send +
/// Sync`; [`HotKeys::observe`] takes no lock unless the key's estimate
/// passes the smallest of the top K.
///
/// ```
/// use shardring::{HotKeys, HotKeysOptions, Node, Ring};
///
/// let ring = Ring::builder().nodes(["a", "b", "c"].map(|id| Node::new(id, 1.0))).build().unwrap();
/// let hot = HotKeys::new(HotKeysOptions { sample: 1, ..HotKeysOptions::default() }).unwrap();
/// for i in 0..10_000 {
///     let key = if i % 10 == 0 { "hot".to_owned() } else { format!("key-{i}") };
///     let hash = ring.hash_key(&key); // the ring's own hash feeds the sketch
///     hot.observe_hashed(key.as_bytes(), hash);
///     ring.get_by_hash(hash).unwrap();
/// }
/// let top = hot.top();
/// assert_eq!(top[0].key, b"hot");
/// assert!((900..=1_000).contains(&top[0].requests));
/// ```
#[derive(Debug)]
pub struct HotKeys {
    buckets: Box<[AtomicU64]>,
    mask: usize,
    sample_mask: u32,
    top_k: usize,
    top: Mutex<Vec<Entry>>,
    /// The smallest count in a full top K (0 while it has room).
    threshold: AtomicU32,
    /// Below 2^32 * DECAY_BASE^-count for each count: the decay's odds.
    decay_odds: Box<[u32]>,
    started: Instant,
    half_life: Duration,
    /// Milliseconds since `started` of the next halving.
    next_halving_ms: AtomicU64,
}

impl HotKeys {
    /// A sketch with `options`.
    ///
    /// Errors: a message naming the setting when `width` or `sample` is not
    /// a power of two (or `width` is below 64 or above 2^24, `sample` above
    /// 2^16), `top` is 0 or above 4,096, or `half_life` is under 1 ms.
    pub fn new(options: HotKeysOptions) -> Result<HotKeys, String> {
        let HotKeysOptions { top, width, sample, half_life } = options;
        if !width.is_power_of_two() || !(64..=1 << 24).contains(&width) {
            return Err(format!("width {width} must be a power of two from 64 to 2^24"));
        }
        if !sample.is_power_of_two() || sample > 1 << 16 {
            return Err(format!("sample {sample} must be a power of two from 1 to 65,536"));
        }
        if top == 0 || top > 4_096 {
            return Err(format!("top {top} must be from 1 to 4,096"));
        }
        if half_life < Duration::from_millis(1) {
            return Err(format!("half_life {half_life:?} must be at least 1 ms"));
        }
        let decay_odds = (0..256).map(|c| (DECAY_BASE.powi(-c) * f64::from(u32::MAX)) as u32).collect();
        Ok(HotKeys {
            buckets: (0..ROWS * width).map(|_| AtomicU64::new(0)).collect(),
            mask: width - 1,
            sample_mask: sample - 1,
            top_k: top,
            top: Mutex::new(Vec::with_capacity(top)),
            threshold: AtomicU32::new(0),
            decay_odds,
            started: Instant::now(),
            half_life,
            next_halving_ms: AtomicU64::new(half_life.as_millis() as u64),
        })
    }

    /// Observes one lookup of `key` whose hash is `hash`: a ring's own
    /// [`crate::Ring::hash_key`], or any hash of the key, mixed again here.
    /// Keys whose hashes are equal share their counts, so a hash of fewer
    /// than about 32 bits (a `slots` ring's 14) makes keys collide: use
    /// [`HotKeys::observe`] there.
    #[inline]
    pub fn observe_hashed(&self, key: &[u8], hash: u64) {
        let seen = SEEN.with(|s| {
            let n = s.get().wrapping_add(1);
            s.set(n);
            n
        });
        if seen & self.sample_mask != 0 {
            return;
        }
        if seen & 1023 < self.sample_mask + 1 {
            self.halve_when_due();
        }
        // Spread a narrow hash (ketama's and nginx's 32 bits) over 64.
        self.count(key, crate::hash::fmix64(hash ^ 0x9e37_79b9_7f4a_7c15));
    }

    /// Observes one lookup of `key` (hashed with XXH3-64, seed 0).
    #[inline]
    pub fn observe(&self, key: impl AsRef<[u8]>) {
        let key = key.as_ref();
        self.observe_hashed(key, crate::hash::hash_key(key, 0));
    }

    #[inline]
    fn fingerprint(hash: u64) -> u64 {
        u64::from((hash >> 32) as u32 | 1) << 32
    }

    #[inline]
    fn slot(&self, hash: u64, row: usize) -> usize {
        (row * (self.mask + 1)) | (crate::hash::fmix64(hash ^ (row as u64 + 1)) as usize & self.mask)
    }

    #[inline]
    fn count(&self, key: &[u8], hash: u64) {
        let fingerprint = Self::fingerprint(hash);
        let (mut estimate, mut member) = (0u64, false);
        for row in 0..ROWS {
            let bucket = &self.buckets[self.slot(hash, row)];
            let mut current = bucket.load(Ordering::Relaxed);
            loop {
                let (held, count) = (current & !0xffff_ffff, current & COUNT);
                let next = if held == fingerprint && count > 0 {
                    // Its own bucket: counted up, its mark kept.
                    current + u64::from(count < COUNT)
                } else if count == 0 {
                    // Empty: taken, unmarked.
                    fingerprint | 1
                } else if self.decays(count) {
                    // Another key's: decayed, and taken once it reaches zero.
                    if count == 1 { fingerprint | 1 } else { current - 1 }
                } else {
                    break;
                };
                match bucket.compare_exchange_weak(current, next, Ordering::Relaxed, Ordering::Relaxed) {
                    Ok(_) => {
                        if next & !0xffff_ffff == fingerprint {
                            estimate = estimate.max(next & COUNT);
                            member |= next & MEMBER != 0;
                        }
                        break;
                    }
                    Err(now) => current = now,
                }
            }
        }
        // A newcomer must pass the smallest member by an eighth: keys of
        // nearly equal counts (no heavy key among them) would otherwise
        // trade places on every lookup, each trade taking the lock.
        let threshold = u64::from(self.threshold.load(Ordering::Relaxed));
        if !member && estimate > threshold + threshold / 8 {
            self.offer(key, hash);
        }
    }

    /// The key of `hash`'s estimate: its largest count among the buckets it
    /// holds (0 when it holds none).
    fn estimate(&self, hash: u64) -> u64 {
        let fingerprint = Self::fingerprint(hash);
        (0..ROWS)
            .map(|row| self.buckets[self.slot(hash, row)].load(Ordering::Relaxed))
            .filter(|b| b & !0xffff_ffff == fingerprint)
            .map(|b| b & COUNT)
            .max()
            .unwrap_or(0)
    }

    /// Marks (or unmarks) the buckets `hash`'s key holds as a top-K member's.
    fn mark(&self, hash: u64, member: bool) {
        let fingerprint = Self::fingerprint(hash);
        for row in 0..ROWS {
            let _ = self.buckets[self.slot(hash, row)].fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| {
                (b & !0xffff_ffff == fingerprint).then_some(if member { b | MEMBER } else { b & !MEMBER })
            });
        }
    }

    /// HeavyKeeper's coin: true with probability `DECAY_BASE^-count`.
    #[inline]
    fn decays(&self, count: u64) -> bool {
        let Some(&odds) = self.decay_odds.get(count as usize) else { return false };
        let draw = RANDOM.with(|r| {
            // xorshift64*, seeded per thread from its cell's address.
            let mut x = r.get();
            if x == 0 {
                x = crate::hash::fmix64(r as *const Cell<u64> as u64) | 1;
            }
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            r.set(x);
            (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) as u32
        });
        draw < odds
    }

    /// Puts `key` in the top K in place of its smallest member, when its
    /// estimate passes that member's (or the list has room).
    #[cold]
    fn offer(&self, key: &[u8], hash: u64) {
        let mut top = self.top.lock().unwrap_or_else(|p| p.into_inner());
        let estimate = self.estimate(hash);
        if top.iter().any(|e| e.hash == hash && *e.key == *key) {
            // A member whose buckets lost their mark (taken over, then won back).
            self.mark(hash, true);
            return;
        }
        if top.len() < self.top_k {
            top.push(Entry { key: key.into(), hash });
            self.mark(hash, true);
        } else {
            let estimates: Vec<u64> = top.iter().map(|e| self.estimate(e.hash)).collect();
            let (smallest, &least) =
                estimates.iter().enumerate().min_by_key(|(_, e)| **e).expect("a full top K is not empty");
            if estimate <= least + least / 8 {
                self.threshold.store(least.min(u64::from(u32::MAX)) as u32, Ordering::Relaxed);
                return;
            }
            self.mark(top[smallest].hash, false);
            top[smallest] = Entry { key: key.into(), hash };
            self.mark(hash, true);
        }
        self.settle_threshold(&top);
    }

    /// The smallest estimate of a full top K (0 while it has room): the
    /// estimate a key must pass to be offered.
    fn settle_threshold(&self, top: &[Entry]) {
        let threshold =
            if top.len() < self.top_k { 0 } else { top.iter().map(|e| self.estimate(e.hash)).min().unwrap_or(0) };
        self.threshold.store(threshold.min(u64::from(u32::MAX)) as u32, Ordering::Relaxed);
    }

    /// Halves every count once a half-life has passed since the last time.
    fn halve_when_due(&self) {
        let now = self.started.elapsed().as_millis() as u64;
        let due = self.next_halving_ms.load(Ordering::Relaxed);
        if now < due {
            return;
        }
        let next = now + self.half_life.as_millis() as u64;
        // One thread halves; the others go on counting.
        if self.next_halving_ms.compare_exchange(due, next, Ordering::Relaxed, Ordering::Relaxed).is_ok() {
            self.halve();
        }
    }

    /// Halves every count now (the sketch does it every half-life by
    /// itself); keys whose count reaches 0 leave the top K.
    pub fn halve(&self) {
        for bucket in self.buckets.iter() {
            let _ = bucket.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| {
                let count = (b & COUNT) / 2;
                Some(if count == 0 { 0 } else { (b & !COUNT) | count })
            });
        }
        let mut top = self.top.lock().unwrap_or_else(|p| p.into_inner());
        top.retain(|e| self.estimate(e.hash) > 0);
        self.settle_threshold(&top);
    }

    /// The hot keys, most requested first: at most `top` of them, with
    /// their estimated requests and rates (see [`HotKey`]).
    pub fn top(&self) -> Vec<HotKey> {
        let window = self.started.elapsed().as_secs_f64().min(self.half_life.as_secs_f64() / std::f64::consts::LN_2);
        let factor = u64::from(self.sample_mask) + 1;
        let top = self.top.lock().unwrap_or_else(|p| p.into_inner());
        let mut keys: Vec<HotKey> = top
            .iter()
            .map(|e| (e, self.estimate(e.hash)))
            .filter(|(_, estimate)| *estimate > 0)
            .map(|(e, estimate)| {
                let requests = estimate * factor;
                HotKey {
                    key: e.key.to_vec(),
                    requests,
                    rate: if window > 0.0 { requests as f64 / window } else { 0.0 },
                }
            })
            .collect();
        keys.sort_by(|a, b| b.requests.cmp(&a.requests).then_with(|| a.key.cmp(&b.key)));
        keys
    }

    /// Bytes of buckets (`ROWS * width * 8`).
    pub fn sketch_bytes(&self) -> usize {
        self.buckets.len() * 8
    }
}
