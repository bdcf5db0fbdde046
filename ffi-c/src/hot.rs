//! Hot keys (docs/hot-keys.md): `ring_hot_keys_t`, the sketch that finds
//! the most requested keys; `ring_hot_set_t`, the fleet's agreed hot set
//! with the spread plan of a key; `ring_near_cache_t`, a small TTL cache of
//! values. The follower's plan is `ring_follower_plan`.

use std::ffi::c_char;
use std::sync::Arc;
use std::time::Duration;

use shardring::{HotKey, HotKeys, HotKeysOptions, HotSet, MAX_HOT_REPLICAS, NearCache, Ring, SpreadPlan};

use crate::boundary::{boundary, bytes, free_handle, handle_ref, into_handle, non_null, out_slice, text, write};
use crate::error::ring_result::{self, *};
use crate::error::{core_error, fail};
use crate::follower::{follower_ref, ring_follower_t};
use crate::ring::{ring_ref, ring_t, shared_handle};

/// `ring_hot_keys_new`'s defaults: the top 100 keys.
pub const RING_HOT_KEYS_TOP: usize = 100;
/// Buckets per row (two rows of 8-byte buckets: 64 KiB).
pub const RING_HOT_KEYS_WIDTH: usize = 4_096;
/// One lookup in 4 counted, per thread.
pub const RING_HOT_KEYS_SAMPLE: u32 = 4;
/// Counts halve every 60 s.
pub const RING_HOT_KEYS_HALF_LIFE_MS: u64 = 60_000;
/// Most nodes a hot key is kept on (its owner and 63 copies).
pub const RING_MAX_HOT_REPLICAS: usize = 64;
/// Most copies of a hot key: `ring_spread_plan_t::copies` holds this many.
pub const RING_MAX_HOT_COPIES: usize = 63;
const _: () =
    assert!(RING_MAX_HOT_REPLICAS == MAX_HOT_REPLICAS as usize && RING_MAX_HOT_COPIES == RING_MAX_HOT_REPLICAS - 1);
/// Bytes of `ring_spread_plan_t::copy_suffix`: `#hot`, a 64-bit generation
/// in decimal, and a NUL.
pub const RING_COPY_SUFFIX_LEN: usize = 32;

/// A HeavyKeeper sketch of the most requested keys, in bounded memory
/// (`width * 16` bytes and the top keys' bytes). Create with
/// `ring_hot_keys_new`; show it lookups with `ring_hot_keys_observe`, or
/// every lookup of a ring with `ring_watch_hot_keys`; read it with
/// `ring_hot_keys_top`; release with `ring_hot_keys_free` (rings watched by
/// it keep it alive). Safe to use from many threads at once.
pub struct ring_hot_keys_t {
    hot: Arc<HotKeys>,
}

/// A new sketch keeping the `top` most requested keys (1 to 4,096) in two
/// rows of `width` buckets (a power of two from 64 to 2^24), counting one
/// lookup in `sample` per thread (a power of two, at most 65,536), its
/// counts halving every `half_life_ms` milliseconds (at least 1). Every
/// value is used as given: the defaults are `RING_HOT_KEYS_TOP`,
/// `RING_HOT_KEYS_WIDTH`, `RING_HOT_KEYS_SAMPLE` and
/// `RING_HOT_KEYS_HALF_LIFE_MS`.
///
/// On success writes a new handle to `*out_hot_keys`; release it with
/// `ring_hot_keys_free`. Errors: `RING_NULL_ARGUMENT`; `RING_INVALID_CONFIG`
/// naming the setting out of range.
///
/// # Safety
/// `out_hot_keys` must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_hot_keys_new(
    top: usize,
    width: usize,
    sample: u32,
    half_life_ms: u64,
    out_hot_keys: *mut *mut ring_hot_keys_t,
) -> ring_result {
    boundary(|| {
        non_null!(out_hot_keys);
        let options = HotKeysOptions { top, width, sample, half_life: Duration::from_millis(half_life_ms) };
        let hot = HotKeys::new(options).map_err(|e| fail(RING_INVALID_CONFIG, format_args!("hot keys: {e}")))?;
        let handle = into_handle(ring_hot_keys_t { hot: Arc::new(hot) });
        // SAFETY: non-NULL and writable by contract.
        unsafe { write(out_hot_keys, handle) };
        Ok(())
    })
}

/// Releases a sketch handle; rings watched by it keep the sketch. NULL is a
/// no-op.
///
/// # Safety
/// `hot_keys` must be NULL or a live handle, released once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_hot_keys_free(hot_keys: *mut ring_hot_keys_t) {
    // SAFETY: NULL or a live handle from `ring_hot_keys_new`, released once by contract.
    unsafe { free_handle(hot_keys) }
}

/// # Safety
/// `handle` must be NULL or a live sketch handle.
unsafe fn hot_ref<'a>(handle: *const ring_hot_keys_t) -> Result<&'a Arc<HotKeys>, ring_result> {
    // SAFETY: forwarded contract.
    Ok(unsafe { &handle_ref(handle, "hot_keys")?.hot })
}

/// Shows the sketch one lookup of the `key_len` bytes at `key`.
///
/// Errors: `RING_NULL_ARGUMENT`.
///
/// # Safety
/// `hot_keys` must be a live handle; `key` valid for `key_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_hot_keys_observe(
    hot_keys: *const ring_hot_keys_t,
    key: *const u8,
    key_len: usize,
) -> ring_result {
    boundary(|| {
        // SAFETY: live handle and readable key, by contract.
        let (hot, key) = unsafe { (hot_ref(hot_keys)?, bytes(key, key_len, "key")?) };
        hot.observe(key);
        Ok(())
    })
}

/// A new handle to `ring` that shows `hot_keys` every lookup by key it
/// makes (`ring_get_node`, `ring_get_nodes`, `ring_get_node_batch`; not
/// `ring_get_node_by_hash`), placing exactly as `ring`. About 4 to 7 ns
/// per lookup (docs/hot-keys.md).
///
/// On success writes the handle to `*out_ring`; release it with
/// `ring_free`. Errors: `RING_NULL_ARGUMENT`.
///
/// # Safety
/// `ring` and `hot_keys` must be live handles; `out_ring` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_watch_hot_keys(
    ring: *const ring_t,
    hot_keys: *const ring_hot_keys_t,
    out_ring: *mut *mut ring_t,
) -> ring_result {
    boundary(|| {
        non_null!(out_ring);
        // SAFETY: live handles by contract.
        let (ring, hot) = unsafe { (ring_ref(ring)?, hot_ref(hot_keys)?) };
        let watched = hot.watch(Ring::clone(ring));
        // SAFETY: non-NULL and writable by contract.
        unsafe { write(out_ring, shared_handle(Arc::new(watched))) };
        Ok(())
    })
}

/// The sketch's top keys at one moment, most requested first. Create with
/// `ring_hot_keys_top`, read with `ring_hot_top_count` and
/// `ring_hot_top_key`, release with `ring_hot_top_free`.
pub struct ring_hot_top_t {
    keys: Vec<HotKey>,
}

/// Takes the sketch's top keys now and writes a new handle holding them
/// to `*out_top`; release it with `ring_hot_top_free`.
///
/// Errors: `RING_NULL_ARGUMENT`.
///
/// # Safety
/// `hot_keys` must be a live handle; `out_top` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_hot_keys_top(
    hot_keys: *const ring_hot_keys_t,
    out_top: *mut *mut ring_hot_top_t,
) -> ring_result {
    boundary(|| {
        non_null!(out_top);
        // SAFETY: a live handle by contract.
        let keys = unsafe { hot_ref(hot_keys)? }.top();
        // SAFETY: non-NULL and writable by contract.
        unsafe { write(out_top, into_handle(ring_hot_top_t { keys })) };
        Ok(())
    })
}

/// Number of keys in `top`; 0 for NULL.
///
/// # Safety
/// `top` must be NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_hot_top_count(top: *const ring_hot_top_t) -> usize {
    // SAFETY: NULL or live, by contract.
    unsafe { top.as_ref() }.map_or(0, |t| t.keys.len())
}

/// Key `index` of `top` (0 is the most requested): its bytes (pointer and
/// length, valid while `top` lives), its estimated requests (counts halve
/// every half-life; the sampled count times the sampling interval) and its
/// estimated rate in requests per second.
///
/// Errors: `RING_NULL_ARGUMENT`, `RING_INDEX_OUT_OF_RANGE`.
///
/// # Safety
/// `top` must be a live handle; every out-pointer writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_hot_top_key(
    top: *const ring_hot_top_t,
    index: usize,
    out_key: *mut *const u8,
    out_key_len: *mut usize,
    out_requests: *mut u64,
    out_rate: *mut f64,
) -> ring_result {
    boundary(|| {
        non_null!(top, out_key, out_key_len, out_requests, out_rate);
        // SAFETY: a live handle by contract.
        let keys = unsafe { &(*top).keys };
        let key = keys.get(index).ok_or_else(|| {
            fail(
                RING_INDEX_OUT_OF_RANGE,
                format_args!("hot key index {index} is out of range (the top has {})", keys.len()),
            )
        })?;
        // SAFETY: every out-pointer is non-NULL and writable by contract.
        unsafe {
            write(out_key, key.key.as_ptr());
            write(out_key_len, key.key.len());
            write(out_requests, key.requests);
            write(out_rate, key.rate);
        }
        Ok(())
    })
}

/// Releases a top handle. NULL is a no-op.
///
/// # Safety
/// `top` must be NULL or a live handle, released once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_hot_top_free(top: *mut ring_hot_top_t) {
    // SAFETY: NULL or a live handle from `ring_hot_keys_top`, released once by contract.
    unsafe { free_handle(top) }
}

/// The fleet's agreed hot keys at one epoch (core/SPEC.md, *Hot keys*; the
/// JSON of `P/hot`). Create with `ring_hot_set_new_from_json`; release
/// with `ring_hot_set_free`. Safe to use from many threads at once.
pub struct ring_hot_set_t {
    set: HotSet,
}

/// How to read and write one key under a hot set: indices into the nodes
/// of the ring the plan was made on.
#[repr(C)]
pub struct ring_spread_plan_t {
    /// The node to read from.
    pub read: usize,
    /// Whether `read` holds a copy: read the key followed by `copy_suffix`
    /// there; on a miss read the owner, then add the value under the copy
    /// key on `read`.
    pub read_copy: bool,
    /// The key's owner (written first; the fallback of a copy read).
    pub owner: usize,
    /// How many of `copies` hold copies (0 when the key is not hot).
    pub copy_count: usize,
    /// The nodes to write the copy key to after the owner.
    pub copies: [usize; RING_MAX_HOT_COPIES],
    /// Bytes of `copy_suffix` before its NUL (0 when the key is not hot).
    pub copy_suffix_len: usize,
    /// The copy key is the key's bytes followed by these (`#hot` and the
    /// key's generation in decimal), NUL-terminated.
    pub copy_suffix: [u8; RING_COPY_SUFFIX_LEN],
}

/// Writes `plan` of `key` to a C plan.
fn fill_plan(plan: &SpreadPlan, out: &mut ring_spread_plan_t) {
    out.read = plan.read;
    out.read_copy = plan.read_copy;
    out.owner = plan.owner;
    out.copy_count = plan.copies.len();
    out.copies = [0; RING_MAX_HOT_COPIES];
    out.copies[..plan.copies.len()].copy_from_slice(&plan.copies);
    let suffix = plan.copy_suffix();
    out.copy_suffix = [0; RING_COPY_SUFFIX_LEN];
    out.copy_suffix[..suffix.len()].copy_from_slice(suffix);
    out.copy_suffix_len = suffix.len();
}

/// Reads a hot set from `json_len` bytes of JSON (`{"epoch": 3, "keys":
/// [{"key": "user:42", "replicas": 4, "phase": "spread", "generation": 2,
/// "rate": 1200.0}]}`, strictly: an unknown field is refused) and writes a
/// new handle to `*out_set`; release it with `ring_hot_set_free`.
///
/// Errors: `RING_NULL_ARGUMENT`, `RING_INVALID_UTF8`, `RING_INVALID_CONFIG`
/// naming the field, a key listed twice or replicas not from 2 to 64.
///
/// # Safety
/// `json` must be valid for `json_len` bytes; `out_set` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_hot_set_new_from_json(
    json: *const c_char,
    json_len: usize,
    out_set: *mut *mut ring_hot_set_t,
) -> ring_result {
    boundary(|| {
        non_null!(out_set);
        // SAFETY: readable for its length by contract.
        let json = unsafe { text(json, json_len, "json")? };
        let set = HotSet::from_json(json).map_err(core_error)?;
        // SAFETY: non-NULL and writable by contract.
        unsafe { write(out_set, into_handle(ring_hot_set_t { set })) };
        Ok(())
    })
}

/// Releases a hot set. NULL is a no-op.
///
/// # Safety
/// `set` must be NULL or a live handle, released once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_hot_set_free(set: *mut ring_hot_set_t) {
    // SAFETY: NULL or a live handle from `ring_hot_set_new_from_json`, released once by contract.
    unsafe { free_handle(set) }
}

/// The set's epoch (its publication number; 0 for the empty set, and for
/// NULL).
///
/// # Safety
/// `set` must be NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_hot_set_epoch(set: *const ring_hot_set_t) -> u64 {
    // SAFETY: NULL or live, by contract.
    unsafe { set.as_ref() }.map_or(0, |s| s.set.epoch)
}

/// How to read and write the `key_len` bytes at `key` on `ring` under
/// `set`, written to `*out_plan`: a key not in the set is read from and
/// written to its owner only; a spread key's reads take its nodes in turn
/// (round robin over every call on this set).
///
/// Errors: `RING_NULL_ARGUMENT`, `RING_EMPTY_RING`.
///
/// # Safety
/// `set` and `ring` must be live handles; `key` valid for `key_len` bytes;
/// `out_plan` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_hot_set_plan(
    set: *const ring_hot_set_t,
    ring: *const ring_t,
    key: *const u8,
    key_len: usize,
    out_plan: *mut ring_spread_plan_t,
) -> ring_result {
    boundary(|| {
        non_null!(set, out_plan);
        // SAFETY: live handles and a readable key, by contract.
        let (set, ring, key) = unsafe { (&(*set).set, ring_ref(ring)?, bytes(key, key_len, "key")?) };
        let plan = set.plan(ring, key).map_err(core_error)?;
        // SAFETY: non-NULL and writable by contract.
        fill_plan(&plan, unsafe { &mut *out_plan });
        Ok(())
    })
}

/// As `ring_hot_set_plan` with the follower's current ring and the hot set
/// it last read from `P/hot` (empty before one is published). When
/// `out_ring` is not NULL, writes a new handle to the ring the plan's
/// indices refer to (release it with `ring_free`): read node ids there,
/// since the follower's ring can change between two calls.
///
/// Errors: `RING_NULL_ARGUMENT`, `RING_EMPTY_RING`.
///
/// # Safety
/// `follower` must be a live handle; `key` valid for `key_len` bytes;
/// `out_plan` and a non-NULL `out_ring` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_follower_plan(
    follower: *const ring_follower_t,
    key: *const u8,
    key_len: usize,
    out_plan: *mut ring_spread_plan_t,
    out_ring: *mut *mut ring_t,
) -> ring_result {
    boundary(|| {
        non_null!(out_plan);
        // SAFETY: a live handle and a readable key, by contract.
        let (follower, key) = unsafe { (follower_ref(follower)?, bytes(key, key_len, "key")?) };
        let (ring, plan) = follower.plan(key).map_err(core_error)?;
        // SAFETY: non-NULL and writable by contract; `out_ring` written only when given.
        unsafe {
            fill_plan(&plan, &mut *out_plan);
            if !out_ring.is_null() {
                write(out_ring, shared_handle(ring));
            }
        }
        Ok(())
    })
}

/// A small TTL cache of the hottest keys' values, bytes to bytes (Fan et
/// al., SoCC 2011: O(n log n) entries for n servers balance any load).
/// Create with `ring_near_cache_new`; release with `ring_near_cache_free`.
/// Safe to use from many threads at once (one lock per operation).
pub struct ring_near_cache_t {
    /// Shared with a follower that reports it in its metrics.
    cache: Arc<NearCache>,
}

/// `ceil(n * log2(n))` entries for `nodes` servers, at least 16: 44 for 12,
/// 665 for 100.
#[unsafe(no_mangle)]
pub extern "C" fn ring_near_cache_default_capacity(nodes: usize) -> usize {
    NearCache::default_capacity(nodes)
}

/// A new cache of at most `capacity` entries (1 to 1,000,000; when full, a
/// put evicts the entry expiring first), each served for `ttl_ms`
/// milliseconds (at least 1) after it was put.
///
/// Errors: `RING_NULL_ARGUMENT`; `RING_INVALID_CONFIG` naming the value.
///
/// # Safety
/// `out_cache` must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_near_cache_new(
    capacity: usize,
    ttl_ms: u64,
    out_cache: *mut *mut ring_near_cache_t,
) -> ring_result {
    boundary(|| {
        non_null!(out_cache);
        let cache = NearCache::new(capacity, Duration::from_millis(ttl_ms))
            .map_err(|e| fail(RING_INVALID_CONFIG, format_args!("near cache: {e}")))?;
        // SAFETY: non-NULL and writable by contract.
        unsafe { write(out_cache, into_handle(ring_near_cache_t { cache: Arc::new(cache) })) };
        Ok(())
    })
}

/// Releases a cache. NULL is a no-op.
///
/// # Safety
/// `cache` must be NULL or a live handle, released once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_near_cache_free(cache: *mut ring_near_cache_t) {
    // SAFETY: NULL or a live handle from `ring_near_cache_new`, released once by contract.
    unsafe { free_handle(cache) }
}

/// # Safety
/// `handle` must be NULL or a live cache handle.
unsafe fn cache_ref<'a>(handle: *const ring_near_cache_t) -> Result<&'a Arc<NearCache>, ring_result> {
    // SAFETY: forwarded contract.
    Ok(unsafe { &handle_ref(handle, "cache")?.cache })
}

/// Stores a copy of the `value_len` bytes at `value` under the `key_len`
/// bytes at `key`, served for the cache's TTL from now.
///
/// Errors: `RING_NULL_ARGUMENT`.
///
/// # Safety
/// `cache` must be a live handle; `key` and `value` valid for their lengths.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_near_cache_put(
    cache: *const ring_near_cache_t,
    key: *const u8,
    key_len: usize,
    value: *const u8,
    value_len: usize,
) -> ring_result {
    boundary(|| {
        // SAFETY: a live handle and readable buffers, by contract.
        let (cache, key, value) =
            unsafe { (cache_ref(cache)?, bytes(key, key_len, "key")?, bytes(value, value_len, "value")?) };
        cache.put(key, value);
        Ok(())
    })
}

/// Looks `key` up: on a hit (put less than the TTL ago) writes true to
/// `*out_found`, the value's length to `*out_len` and the value to
/// `out_value` (`capacity` bytes); on a miss writes false and 0. Every call
/// counts one hit or one miss.
///
/// Errors: `RING_NULL_ARGUMENT`; `RING_BUFFER_TOO_SMALL` when the value is
/// longer than `capacity` (`*out_len` then holds its length; the entry
/// stays).
///
/// # Safety
/// `cache` must be a live handle; `key` valid for `key_len` bytes;
/// `out_value` NULL with `capacity` 0 or writable for `capacity` bytes; the
/// other out-pointers writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_near_cache_get(
    cache: *const ring_near_cache_t,
    key: *const u8,
    key_len: usize,
    out_value: *mut u8,
    capacity: usize,
    out_len: *mut usize,
    out_found: *mut bool,
) -> ring_result {
    boundary(|| {
        non_null!(out_len, out_found);
        // SAFETY: a live handle, a readable key and a writable buffer, by contract.
        let (cache, key, out) =
            unsafe { (cache_ref(cache)?, bytes(key, key_len, "key")?, out_slice(out_value, capacity, "out_value")?) };
        let value = cache.get(key);
        let len = value.as_ref().map_or(0, Vec::len);
        // SAFETY: both are non-NULL and writable by contract.
        unsafe {
            write(out_found, value.is_some());
            write(out_len, len);
        }
        if let Some(value) = value {
            if len > out.len() {
                return Err(fail(
                    RING_BUFFER_TOO_SMALL,
                    format_args!("out_value holds {capacity} bytes; the value takes {len}"),
                ));
            }
            out[..len].copy_from_slice(&value);
        }
        Ok(())
    })
}

/// Drops `key`'s entry (after a write or delete of the key), if any.
///
/// Errors: `RING_NULL_ARGUMENT`.
///
/// # Safety
/// `cache` must be a live handle; `key` valid for `key_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_near_cache_remove(
    cache: *const ring_near_cache_t,
    key: *const u8,
    key_len: usize,
) -> ring_result {
    boundary(|| {
        // SAFETY: a live handle and a readable key, by contract.
        let (cache, key) = unsafe { (cache_ref(cache)?, bytes(key, key_len, "key")?) };
        cache.remove(key);
        Ok(())
    })
}

/// The cache's hits and misses since it was made, and the entries it holds
/// now, each written where its pointer is not NULL.
///
/// Errors: `RING_NULL_ARGUMENT` (`cache`).
///
/// # Safety
/// `cache` must be a live handle; non-NULL out-pointers writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_near_cache_stats(
    cache: *const ring_near_cache_t,
    out_hits: *mut u64,
    out_misses: *mut u64,
    out_len: *mut usize,
) -> ring_result {
    boundary(|| {
        // SAFETY: a live handle by contract.
        let cache = unsafe { cache_ref(cache)? };
        let (hits, misses) = cache.hits_and_misses();
        // SAFETY: each written only when non-NULL, writable by contract.
        unsafe {
            if !out_hits.is_null() {
                write(out_hits, hits);
            }
            if !out_misses.is_null() {
                write(out_misses, misses);
            }
            if !out_len.is_null() {
                write(out_len, cache.len());
            }
        }
        Ok(())
    })
}

/// The follower's metrics (`ring_follower_metrics`) report `cache` from
/// now on: its hits, misses, entries, capacity and hit ratio. A later call
/// replaces it; the follower keeps the cache alive.
///
/// Errors: `RING_NULL_ARGUMENT`.
///
/// # Safety
/// `follower` and `cache` must be live handles.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_follower_report_near_cache(
    follower: *const ring_follower_t,
    cache: *const ring_near_cache_t,
) -> ring_result {
    boundary(|| {
        // SAFETY: live handles by contract.
        let (follower, cache) = unsafe { (follower_ref(follower)?, cache_ref(cache)?) };
        follower.report_near_cache(Arc::clone(cache));
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_writes_the_copy_suffix_of_a_64_bit_generation_within_its_buffer() {
        let plan = SpreadPlan {
            read: 1,
            read_copy: true,
            owner: 0,
            copies: vec![1, 2],
            copy_key: format!("k#hot{}", u64::MAX).into_bytes(),
        };
        // SAFETY: a zeroed plan is a valid plan (integers, a bool and arrays).
        let mut out: ring_spread_plan_t = unsafe { std::mem::zeroed() };
        fill_plan(&plan, &mut out);
        assert_eq!(&out.copy_suffix[..out.copy_suffix_len], b"#hot18446744073709551615");
        assert_eq!(out.copy_suffix[out.copy_suffix_len], 0);
        assert_eq!(&out.copies[..out.copy_count], &[1, 2]);
        assert_eq!((out.read, out.read_copy, out.owner), (1, true, 0));
    }
}
