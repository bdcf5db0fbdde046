//! [`NearCache`]: a small cache of hot values in the client, in front of
//! the servers. Fan et al. ("Small Cache, Big Effect", SoCC 2011) show that
//! a front-end cache of O(n log n) entries, n the number of back-end
//! nodes, keeps every node's load within a constant factor of the mean
//! whatever the request distribution: [`NearCache::default_capacity`].
//! A value is served for at most its time to live, so a value changed on
//! the servers by another client can be read stale for that long; a value
//! this client writes or deletes is replaced or removed at once.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A key's value and when it expires.
type Entry = (Box<[u8]>, Instant);

/// A bounded TTL cache of keys' values (bytes to bytes). `Send + Sync`;
/// one lock, held for a map operation.
#[derive(Debug)]
pub struct NearCache {
    capacity: usize,
    ttl: Duration,
    entries: Mutex<HashMap<Box<[u8]>, Entry>>,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl NearCache {
    /// Fan et al.'s O(n log n) for `nodes` nodes: `ceil(n * log2(n))`, at
    /// least 16 (44 entries for 12 nodes, 665 for 100).
    pub fn default_capacity(nodes: usize) -> usize {
        let n = nodes as f64;
        ((n * n.log2().max(0.0)).ceil() as usize).max(16)
    }

    /// A cache of at most `capacity` entries, each served for `ttl`.
    ///
    /// Errors: a message naming the value when `capacity` is 0 or above
    /// 1,000,000, or `ttl` is under 1 ms.
    pub fn new(capacity: usize, ttl: Duration) -> Result<NearCache, String> {
        if capacity == 0 || capacity > 1_000_000 {
            return Err(format!("capacity {capacity} must be from 1 to 1,000,000"));
        }
        if ttl < Duration::from_millis(1) {
            return Err(format!("ttl {ttl:?} must be at least 1 ms"));
        }
        Ok(NearCache {
            capacity,
            ttl,
            entries: Mutex::new(HashMap::with_capacity(capacity)),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        })
    }

    /// The value of `key` when it was put less than the TTL ago (a hit),
    /// else `None` (a miss; an expired entry is dropped).
    pub fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let found = match entries.get(key) {
            Some((value, expires)) if Instant::now() < *expires => Some(value.to_vec()),
            Some(_) => {
                entries.remove(key);
                None
            }
            None => None,
        };
        drop(entries);
        let counter = if found.is_some() { &self.hits } else { &self.misses };
        counter.fetch_add(1, Ordering::Relaxed);
        found
    }

    /// Keeps `value` for `key` for the TTL. When the cache is full, the
    /// entry that expires first makes room (a scan of the entries: the cache
    /// is small by design).
    pub fn put(&self, key: &[u8], value: &[u8]) {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if entries.len() >= self.capacity && !entries.contains_key(key) {
            let now = Instant::now();
            entries.retain(|_, (_, expires)| *expires > now);
            if entries.len() >= self.capacity
                && let Some(first) = entries.iter().min_by_key(|(_, (_, e))| *e).map(|(k, _)| k.clone())
            {
                entries.remove(&first);
            }
        }
        entries.insert(key.into(), (value.into(), Instant::now() + self.ttl));
    }

    /// Forgets `key` (a write or delete of it through this client).
    pub fn remove(&self, key: &[u8]) {
        self.entries.lock().unwrap_or_else(|p| p.into_inner()).remove(key);
    }

    /// Entries held (expired ones not yet dropped included).
    pub fn len(&self) -> usize {
        self.entries.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Whether it holds no entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Most entries.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// `(hits, misses)` of [`NearCache::get`] since it was made.
    pub fn hits_and_misses(&self) -> (u64, u64) {
        (self.hits.load(Ordering::Relaxed), self.misses.load(Ordering::Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_served_for_their_ttl_and_counted() {
        let cache = NearCache::new(2, Duration::from_millis(50)).unwrap();
        assert_eq!(cache.get(b"a"), None);
        cache.put(b"a", b"1");
        assert_eq!(cache.get(b"a").as_deref(), Some(&b"1"[..]));
        std::thread::sleep(Duration::from_millis(60));
        assert_eq!(cache.get(b"a"), None);
        assert_eq!((cache.hits_and_misses(), cache.len()), ((1, 2), 0));
    }

    #[test]
    fn a_full_cache_drops_the_entry_that_expires_first() {
        let cache = NearCache::new(2, Duration::from_secs(60)).unwrap();
        cache.put(b"a", b"1");
        std::thread::sleep(Duration::from_millis(2));
        cache.put(b"b", b"2");
        cache.put(b"a", b"3");
        cache.put(b"c", b"4");
        assert_eq!((cache.get(b"a"), cache.get(b"b"), cache.len()), (Some(b"3".to_vec()), None, 2));
        cache.remove(b"a");
        assert_eq!(cache.get(b"a"), None);
    }

    #[test]
    fn the_default_size_grows_as_n_log_n() {
        let sizes: Vec<usize> = [1, 12, 100, 1_000].map(NearCache::default_capacity).to_vec();
        assert_eq!(sizes, [16, 44, 665, 9_966]);
        assert!(NearCache::new(0, Duration::from_secs(1)).unwrap_err().contains("capacity 0"));
        assert!(NearCache::new(1, Duration::ZERO).unwrap_err().contains("ttl 0ns"));
    }
}
