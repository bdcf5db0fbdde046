//! C ABI for shardring: `libring.so` / `libring.a`, declared in
//! `include/ring.h` (generated from this file by cbindgen).
//!
//! Conventions (also in the README's "C API" section):
//! - Every C type is opaque; a `ring_t` is an immutable, reference-counted
//!   ring snapshot, safe to read from many threads at once.
//! - Fallible functions return a `ring_result` (`RING_OK` = 0); outputs go
//!   through out-parameters, written only on success.
//! - Inputs come before outputs; every buffer is followed by its `size_t`
//!   length; `const` pointers are never written through.
//! - No Rust panic unwinds into C: every export catches it and returns
//!   `RING_PANIC`. NULL pointers return `RING_NULL_ARGUMENT`.
//! - After a failure, `ring_last_error()` gives a message naming the bad
//!   value, for the calling thread.
#![allow(non_camel_case_types)]

use std::cell::RefCell;
use std::ffi::{CString, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use shardring::{Node, Ring, RingError};

/// Result code of every fallible `ring_*` function. Values are explicit and
/// never reused.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ring_result {
    /// Success.
    RING_OK = 0,
    /// A required pointer argument was NULL.
    RING_NULL_ARGUMENT = 1,
    /// A Rust panic was caught at the boundary (a bug in shardring; please report it).
    RING_PANIC = 2,
    /// A node id was empty.
    RING_EMPTY_ID = 3,
    /// Two nodes share an id (ids are compared as bytes).
    RING_DUPLICATE_ID = 4,
    /// A weight was NaN, infinite or negative.
    RING_INVALID_WEIGHT = 5,
    /// `vnodes` was 0.
    RING_ZERO_VNODES = 6,
    /// The ring would exceed its point limit (2^24 points).
    RING_TOO_MANY_POINTS = 7,
    /// Lookup on a ring with no points (no node with weight > 0).
    RING_EMPTY_RING = 8,
    /// A JSON config could not be read.
    RING_INVALID_CONFIG = 9,
    /// A JSON config names a placement format this build does not implement.
    RING_UNSUPPORTED_FORMAT = 10,
    /// A node id (or JSON text) was not valid UTF-8.
    RING_INVALID_UTF8 = 11,
    /// A node index was not below `ring_node_count()`.
    RING_INDEX_OUT_OF_RANGE = 12,
    /// A node's zone was the empty string.
    RING_EMPTY_ZONE = 13,
    /// A node named for removal or re-weighting is not in the ring.
    RING_UNKNOWN_NODE = 14,
    /// Two rings compared by a diff have different seeds.
    RING_SEED_MISMATCH = 15,
}

use ring_result::*;

/// An immutable ring snapshot. Create with `ring_new` or
/// `ring_new_from_json`; add a reference with `ring_clone`; drop one with
/// `ring_free`. Safe to share between threads.
pub struct ring_t {
    ring: Ring,
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_last_error(message: String) {
    let message = CString::new(message.replace('\0', "\\0")).unwrap_or_default();
    LAST_ERROR.with(|slot| *slot.borrow_mut() = message);
}

fn fail(code: ring_result, message: String) -> ring_result {
    set_last_error(message);
    code
}

fn core_error(error: RingError) -> ring_result {
    let code = match &error {
        RingError::EmptyId { .. } => RING_EMPTY_ID,
        RingError::DuplicateId { .. } => RING_DUPLICATE_ID,
        RingError::InvalidWeight { .. } => RING_INVALID_WEIGHT,
        RingError::ZeroVnodes => RING_ZERO_VNODES,
        RingError::TooManyPoints { .. } => RING_TOO_MANY_POINTS,
        RingError::EmptyRing => RING_EMPTY_RING,
        RingError::InvalidConfig { .. } => RING_INVALID_CONFIG,
        RingError::UnsupportedFormat { .. } => RING_UNSUPPORTED_FORMAT,
        RingError::EmptyZone { .. } => RING_EMPTY_ZONE,
        RingError::UnknownNode { .. } => RING_UNKNOWN_NODE,
        RingError::SeedMismatch { .. } => RING_SEED_MISMATCH,
        _ => RING_PANIC,
    };
    fail(code, error.to_string())
}

/// Runs an export's body, turning a panic into `RING_PANIC`.
fn boundary(body: impl FnOnce() -> Result<(), ring_result>) -> ring_result {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => RING_OK,
        Ok(Err(code)) => code,
        Err(_) => fail(RING_PANIC, "internal panic caught at the C boundary".to_owned()),
    }
}

macro_rules! non_null {
    ($($name:ident),+) => {
        $(if $name.is_null() {
            return Err(fail(RING_NULL_ARGUMENT, format!("argument `{}` is NULL", stringify!($name))));
        })+
    };
}

/// A byte slice from a C pointer and length; a NULL pointer is allowed only
/// with length 0.
///
/// # Safety
/// `ptr` must be NULL or valid for reads of `len` bytes for the returned lifetime.
unsafe fn bytes<'a>(ptr: *const u8, len: usize, name: &str) -> Result<&'a [u8], ring_result> {
    if ptr.is_null() {
        if len == 0 {
            return Ok(&[]);
        }
        return Err(fail(RING_NULL_ARGUMENT, format!("argument `{name}` is NULL with length {len}")));
    }
    // SAFETY: non-NULL, and the caller guarantees `len` readable bytes.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// The ring behind a handle.
///
/// # Safety
/// `handle` must be NULL or a live handle from this library.
unsafe fn ring_ref<'a>(handle: *const ring_t) -> Result<&'a Ring, ring_result> {
    if handle.is_null() {
        return Err(fail(RING_NULL_ARGUMENT, "argument `ring` is NULL".to_owned()));
    }
    // SAFETY: the caller holds a reference on a live handle.
    Ok(unsafe { &(*handle).ring })
}

fn into_handle(ring: Ring) -> *mut ring_t {
    Arc::into_raw(Arc::new(ring_t { ring })) as *mut ring_t
}

/// Builds a ring from `node_count` nodes given as parallel arrays.
///
/// - `ids[i]` points to `id_lens[i]` bytes of UTF-8 (not NUL-terminated; copied).
/// - `weights[i]` is the node's relative capacity (finite, >= 0; 0 = drained);
///   `weights` may be NULL, meaning weight 1.0 for every node.
/// - `zones[i]` points to `zone_lens[i]` bytes of UTF-8 naming the node's
///   failure domain, or is NULL for a node without a zone; `zones` and
///   `zone_lens` may both be NULL, meaning no node has a zone.
/// - `vnodes`: points per unit of weight (160 is the default elsewhere); >= 1.
/// - `seed`: seed of the XXH3-64 key and point hashes (0 is the default elsewhere).
///
/// On success writes a new handle (one reference) to `*out_ring`; release it
/// with `ring_free`. Errors: `RING_NULL_ARGUMENT`, `RING_INVALID_UTF8`,
/// `RING_EMPTY_ID`, `RING_DUPLICATE_ID`, `RING_INVALID_WEIGHT`,
/// `RING_EMPTY_ZONE`, `RING_ZERO_VNODES`, `RING_TOO_MANY_POINTS`.
///
/// # Safety
/// Each non-NULL array must hold `node_count` elements; `ids[i]` must be valid
/// for `id_lens[i]` bytes and a non-NULL `zones[i]` for `zone_lens[i]` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_new(
    ids: *const *const c_char,
    id_lens: *const usize,
    weights: *const f64,
    zones: *const *const c_char,
    zone_lens: *const usize,
    node_count: usize,
    vnodes: u32,
    seed: u64,
    out_ring: *mut *mut ring_t,
) -> ring_result {
    boundary(|| {
        non_null!(out_ring);
        if node_count > 0 {
            non_null!(ids, id_lens);
        }
        if zones.is_null() != zone_lens.is_null() {
            return Err(fail(RING_NULL_ARGUMENT, "`zones` and `zone_lens` must both be NULL or both be set".into()));
        }
        let mut nodes = Vec::with_capacity(node_count);
        for i in 0..node_count {
            // SAFETY: the caller guarantees `node_count` elements in each non-NULL array.
            let (id_ptr, id_len) = unsafe { (*ids.add(i), *id_lens.add(i)) };
            // SAFETY: the caller guarantees `ids[i]` is valid for `id_lens[i]` bytes.
            let id = utf8(unsafe { bytes(id_ptr.cast(), id_len, "ids[i]") }?, "node id", i)?;
            // SAFETY: as above, `weights` is NULL or holds `node_count` elements.
            let weight = if weights.is_null() { 1.0 } else { unsafe { *weights.add(i) } };
            let mut node = Node::new(id, weight);
            // SAFETY: both zone arrays are non-NULL here and hold `node_count` elements.
            let zone_ptr = if zones.is_null() { std::ptr::null() } else { unsafe { *zones.add(i) } };
            if !zone_ptr.is_null() {
                // SAFETY: the caller guarantees `zones[i]` is valid for `zone_lens[i]` bytes.
                let zone = unsafe { bytes(zone_ptr.cast(), *zone_lens.add(i), "zones[i]") }?;
                node = node.with_zone(utf8(zone, "zone", i)?);
            }
            nodes.push(node);
        }
        let ring = Ring::builder().vnodes(vnodes).seed(seed).nodes(nodes).build().map_err(core_error)?;
        // SAFETY: `out_ring` is non-NULL and writable by contract.
        unsafe { *out_ring = into_handle(ring) };
        Ok(())
    })
}

fn utf8<'a>(bytes: &'a [u8], what: &str, position: usize) -> Result<&'a str, ring_result> {
    std::str::from_utf8(bytes)
        .map_err(|e| fail(RING_INVALID_UTF8, format!("{what} at position {position} is not valid UTF-8: {e}")))
}

/// Builds a ring from a JSON ring config (`json_len` bytes of UTF-8, not
/// NUL-terminated), e.g.
/// `{"format_version":1,"vnodes":160,"seed":0,"nodes":[{"id":"a","weight":1}]}`.
///
/// On success writes a new handle to `*out_ring`; release it with `ring_free`.
/// Errors: `RING_NULL_ARGUMENT`, `RING_INVALID_UTF8`, `RING_INVALID_CONFIG`,
/// `RING_UNSUPPORTED_FORMAT`, and the errors of `ring_new`.
///
/// # Safety
/// `json` must be valid for `json_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_new_from_json(json: *const u8, json_len: usize, out_ring: *mut *mut ring_t) -> ring_result {
    boundary(|| {
        non_null!(out_ring);
        // SAFETY: the caller guarantees `json_len` readable bytes.
        let json = unsafe { bytes(json, json_len, "json") }?;
        let json = std::str::from_utf8(json)
            .map_err(|e| fail(RING_INVALID_UTF8, format!("JSON config is not valid UTF-8: {e}")))?;
        let ring = Ring::from_json(json).map_err(core_error)?;
        // SAFETY: `out_ring` is non-NULL and writable by contract.
        unsafe { *out_ring = into_handle(ring) };
        Ok(())
    })
}

/// Adds a reference to `ring` and returns it (the same handle). Each
/// reference is dropped by one `ring_free`. Returns NULL for NULL.
///
/// # Safety
/// `ring` must be NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_clone(ring: *const ring_t) -> *mut ring_t {
    if !ring.is_null() {
        // SAFETY: a live handle came from `Arc::into_raw` and holds a reference.
        unsafe { Arc::increment_strong_count(ring) };
    }
    ring as *mut ring_t
}

/// Drops one reference to `ring`; the ring is freed with its last reference.
/// NULL is a no-op. Node id pointers from `ring_node_id` stay valid until
/// the last reference is dropped.
///
/// # Safety
/// `ring` must be NULL or a live handle; each reference is freed once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_free(ring: *mut ring_t) {
    if !ring.is_null() {
        // SAFETY: the handle came from `Arc::into_raw`; this call gives up one reference.
        drop(unsafe { Arc::from_raw(ring as *const ring_t) });
    }
}

/// Number of nodes in the ring (drained nodes included); 0 for NULL.
///
/// # Safety
/// `ring` must be NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_node_count(ring: *const ring_t) -> usize {
    // SAFETY: NULL or live, by contract.
    unsafe { ring_ref(ring) }.map_or(0, |r| r.nodes().len())
}

/// The id of node `index` (0-based, in construction order) as a pointer to
/// `*out_id_len` UTF-8 bytes, NOT NUL-terminated, owned by the ring and
/// valid until its last reference is freed.
///
/// Errors: `RING_NULL_ARGUMENT`, `RING_INDEX_OUT_OF_RANGE`.
///
/// # Safety
/// `ring` must be a live handle; out-pointers must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_node_id(
    ring: *const ring_t,
    index: usize,
    out_id: *mut *const c_char,
    out_id_len: *mut usize,
) -> ring_result {
    boundary(|| {
        non_null!(out_id, out_id_len);
        // SAFETY: live handle by contract.
        let ring = unsafe { ring_ref(ring) }?;
        let node = ring.nodes().get(index).ok_or_else(|| {
            fail(RING_INDEX_OUT_OF_RANGE, format!("node index {index} is out of range (ring has {} nodes)", ring.nodes().len()))
        })?;
        // SAFETY: both out-pointers are non-NULL and writable by contract.
        unsafe {
            *out_id = node.id().as_ptr().cast();
            *out_id_len = node.id().len();
        }
        Ok(())
    })
}

/// Places a key: writes to `*out_index` the index of the node owning the
/// `key_len` bytes at `key` (a NULL key is allowed with length 0).
///
/// Errors: `RING_NULL_ARGUMENT`, `RING_EMPTY_RING`.
///
/// # Safety
/// `ring` must be a live handle; `key` valid for `key_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_get_node(
    ring: *const ring_t,
    key: *const u8,
    key_len: usize,
    out_index: *mut usize,
) -> ring_result {
    boundary(|| {
        non_null!(out_index);
        // SAFETY: live handle and readable key, by contract.
        let (ring, key) = unsafe { (ring_ref(ring)?, bytes(key, key_len, "key")?) };
        let index = ring.get_index(key).map_err(core_error)?;
        // SAFETY: non-NULL and writable by contract.
        unsafe { *out_index = index };
        Ok(())
    })
}

/// Writes the key's preference list: up to `out_indices_len` distinct node
/// indices in clockwise order, the first being `ring_get_node`'s answer;
/// `*out_count` receives how many were written (fewer when the ring has
/// fewer nodes with weight > 0).
///
/// Errors: `RING_NULL_ARGUMENT`, `RING_EMPTY_RING`.
///
/// # Safety
/// `ring` must be a live handle; `key` valid for `key_len` bytes;
/// `out_indices` writable for `out_indices_len` elements.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_get_nodes(
    ring: *const ring_t,
    key: *const u8,
    key_len: usize,
    out_indices: *mut usize,
    out_indices_len: usize,
    out_count: *mut usize,
) -> ring_result {
    boundary(|| {
        non_null!(out_count);
        if out_indices_len > 0 {
            non_null!(out_indices);
        }
        // SAFETY: live handle and readable key, by contract.
        let (ring, key) = unsafe { (ring_ref(ring)?, bytes(key, key_len, "key")?) };
        let out: &mut [usize] = if out_indices_len == 0 {
            &mut []
        } else {
            // SAFETY: non-NULL and writable for `out_indices_len` elements by contract.
            unsafe { std::slice::from_raw_parts_mut(out_indices, out_indices_len) }
        };
        // `get_n_indices` fails before writing anything, so `out` is untouched on error.
        let count = ring.get_n_indices(key, out).map_err(core_error)?;
        // SAFETY: non-NULL and writable by contract.
        unsafe { *out_count = count };
        Ok(())
    })
}

/// XXH3-64 of the key bytes under the ring's seed: the key's position on the
/// ring. Returns 0 for a NULL ring or a NULL key with non-zero length.
///
/// # Safety
/// `ring` must be NULL or a live handle; `key` valid for `key_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_hash_key(ring: *const ring_t, key: *const u8, key_len: usize) -> u64 {
    // SAFETY: by contract.
    match unsafe { (ring_ref(ring), bytes(key, key_len, "key")) } {
        (Ok(ring), Ok(key)) => ring.hash_key(key),
        _ => 0,
    }
}

/// Places a precomputed key hash (from `ring_hash_key`, or XXH3-64 of the
/// key under the ring's seed): writes to `*out_index` the index of the node
/// owning the first point >= `hash`, wrapping past the end.
///
/// Errors: `RING_NULL_ARGUMENT`, `RING_EMPTY_RING`.
///
/// # Safety
/// `ring` must be a live handle; `out_index` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_get_node_by_hash(ring: *const ring_t, hash: u64, out_index: *mut usize) -> ring_result {
    boundary(|| {
        non_null!(out_index);
        // SAFETY: live handle by contract.
        let index = unsafe { ring_ref(ring) }?.index_by_hash(hash).map_err(core_error)?;
        // SAFETY: non-NULL and writable by contract.
        unsafe { *out_index = index };
        Ok(())
    })
}

/// The ring's config fingerprint: a stable 64-bit digest of its algorithm,
/// vnodes, seed and set of nodes (order-independent; `core/SPEC.md`), so two
/// processes can check they hold the same ring. 0 for NULL.
///
/// # Safety
/// `ring` must be NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_fingerprint(ring: *const ring_t) -> u64 {
    // SAFETY: NULL or live, by contract.
    unsafe { ring_ref(ring) }.map_or(0, Ring::fingerprint)
}

/// A static, NUL-terminated description of a result code (never NULL).
#[unsafe(no_mangle)]
pub extern "C" fn ring_result_str(result: u32) -> *const c_char {
    let text: &'static str = match result {
        0 => "ok\0",
        1 => "a required pointer argument is NULL\0",
        2 => "internal panic caught at the C boundary\0",
        3 => "node id is empty\0",
        4 => "duplicate node id\0",
        5 => "invalid weight: must be finite and >= 0\0",
        6 => "vnodes must be at least 1\0",
        7 => "too many points\0",
        8 => "ring has no points (no node with weight > 0)\0",
        9 => "invalid JSON ring config\0",
        10 => "unsupported placement format version\0",
        11 => "invalid UTF-8\0",
        12 => "node index out of range\0",
        13 => "zone is empty\0",
        14 => "unknown node\0",
        15 => "rings have different seeds\0",
        _ => "unknown result code\0",
    };
    text.as_ptr().cast()
}

/// The detailed message of the last failure on the calling thread, naming
/// the bad value (empty string when nothing failed yet). NUL-terminated,
/// owned by the library, valid until the next failing call on this thread.
#[unsafe(no_mangle)]
pub extern "C" fn ring_last_error() -> *const c_char {
    LAST_ERROR.with(|slot| slot.borrow().as_ptr())
}
