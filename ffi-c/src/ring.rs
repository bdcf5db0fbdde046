//! `ring_t`: the handle, its construction (from node arrays, options or
//! JSON), node accessors, single-key lookups, fingerprints and derivations.
//! The options struct is read and converted in `options.rs`; key arrays and
//! the batch lookup are in `keys.rs`.

use std::ffi::{CString, c_char};
use std::sync::Arc;

use shardring::{Node, Ring};

use crate::boundary::{
    boundary, bytes, handle_ref, non_null, out_slice, text, write, write_fingerprint_hex, write_str,
};
use crate::error::ring_result::{self, *};
use crate::error::{core_error, fail};
use crate::options::{build_ring, read_legacy_options, read_options, ring_options_t};

/// An immutable ring snapshot. Create with `ring_new` or
/// `ring_new_from_json`, or derive with `ring_with_node`, `ring_without_node`
/// and `ring_with_weight`; add a reference with `ring_clone`; drop one with
/// `ring_free`. Safe to read from many threads at once.
pub struct ring_t {
    /// Shared, so a tracker over this ring holds the same snapshot instead of a copy.
    pub(crate) ring: Arc<Ring>,
}

/// The ring behind a handle.
///
/// # Safety
/// `handle` must be NULL or a live handle from this library.
pub(crate) unsafe fn ring_ref<'a>(handle: *const ring_t) -> Result<&'a Ring, ring_result> {
    // SAFETY: forwarded contract.
    Ok(unsafe { &handle_ref(handle, "ring")?.ring })
}

/// The snapshot behind a handle, shared.
///
/// # Safety
/// As [`ring_ref`].
pub(crate) unsafe fn ring_shared(handle: *const ring_t) -> Result<Arc<Ring>, ring_result> {
    // SAFETY: forwarded contract.
    Ok(Arc::clone(&unsafe { handle_ref(handle, "ring") }?.ring))
}

/// A new handle (one reference) to a shared snapshot (a follower's).
pub(crate) fn shared_handle(ring: Arc<Ring>) -> *mut ring_t {
    Arc::into_raw(Arc::new(ring_t { ring })) as *mut ring_t
}

/// Stores a new handle in `*out_ring` (checked non-NULL by the caller).
fn hand_out(ring: Ring, out_ring: *mut *mut ring_t) {
    // SAFETY: every caller checks `out_ring` non-NULL first; it is writable by contract.
    unsafe { write(out_ring, shared_handle(Arc::new(ring))) }
}

/// Builds a ring from `node_count` nodes given as parallel arrays, on the
/// default algorithm (`"ring"`). Same as `ring_new_with_options_sized` with
/// options `{ .fields = RING_OPTION_VNODES | RING_OPTION_SEED, .vnodes =
/// vnodes, .seed = seed }`: both are passed as given (there is no "0 means
/// the default"; `ring_new_with_options_sized` leaves a parameter out).
///
/// - `ids[i]` points to `id_lens[i]` bytes of UTF-8 (not NUL-terminated; copied).
/// - `weights[i]` is the node's relative capacity (finite, >= 0; 0 = drained);
///   `weights` may be NULL, meaning weight 1.0 for every node.
/// - `zones[i]` points to `zone_lens[i]` bytes of UTF-8 naming the node's
///   failure domain, or is NULL for a node without a zone; `zones` and
///   `zone_lens` may both be NULL, meaning no node has a zone.
/// - `vnodes`: points per unit of weight, >= 1 (0 is `RING_ZERO_VNODES`;
///   160 is the default where it can be left out).
/// - `seed`: seed of the XXH3-64 key and point hashes (0 is the default
///   where it can be left out).
///
/// On success writes a new handle (one reference) to `*out_ring`; release it
/// with `ring_free`. Errors: `RING_NULL_ARGUMENT`, `RING_INVALID_UTF8`,
/// `RING_EMPTY_ID`, `RING_DUPLICATE_ID`, `RING_INVALID_WEIGHT`,
/// `RING_EMPTY_ZONE`, `RING_ZERO_VNODES`, `RING_TOO_MANY_POINTS`,
/// `RING_INVALID_CONFIG` (`node_count` above 2^24).
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
        // SAFETY: forwarded from this function's own contract.
        let nodes = unsafe { read_nodes(ids, id_lens, weights, zones, zone_lens, node_count) }?;
        let ring = Ring::builder().vnodes(vnodes).seed(seed).nodes(nodes).build().map_err(core_error)?;
        hand_out(ring, out_ring);
        Ok(())
    })
}

/// Builds a ring on any algorithm: nodes as in `ring_new`, algorithm and
/// parameters from `options`, a `ring_options_t` of `options_size` bytes
/// (pass `sizeof options`). NULL options, or a zeroed struct, mean every
/// default: the `ring` algorithm, 160 vnodes, seed 0, for Maglev a table of
/// 65,537. A parameter counts when its bit is set in `options->fields` and
/// is passed as given; a field holding a value (not 0, not NULL) without its
/// bit is refused, naming the field. Ketama ids are servers (`host:port`);
/// ketama and nginx weights are whole numbers; jump, jumpback and memento
/// weights are 1.
///
/// The library reads exactly `options_size` bytes: a struct from an older
/// header (shorter) leaves the later parameters at their defaults; one from
/// a newer header (longer) is accepted when the bytes past the fields this
/// library knows are all zero (the Linux kernel's rule for `openat2` and
/// `clone3`).
///
/// On success writes a new handle to `*out_ring`; release it with
/// `ring_free`. Errors: those of `ring_new` (`RING_ZERO_VNODES`: vnodes 0
/// with its bit set), plus `RING_INVALID_CONFIG` (an unknown algorithm, a
/// parameter it does not take, a field set without its bit, a bit of
/// `fields` no `RING_OPTION_*` defines, an `options_size` smaller than the
/// first `ring_options_t`, between two headers' sizes or above 4,096,
/// non-zero bytes past the fields this library knows, a parameter given
/// both in its field and in `params`, or a `params` object a config would
/// refuse), `RING_NULL_ARGUMENT` (a string field NULL with its bit set),
/// `RING_INVALID_UTF8` (a string field that is not UTF-8),
/// `RING_INVALID_TABLE_SIZE` (including 0 with its bit set),
/// `RING_INVALID_ADDRESS`.
///
/// Replaces `ring_new_with_options`, which took no size and which the
/// library still exports for programs built against earlier headers (it
/// reads the `ring_options_t` those headers declared under their rule: a
/// field without its bit is ignored, as it always was for them).
///
/// # Safety
/// As `ring_new`; `options` is NULL or valid for reads of `options_size`
/// bytes, its `algorithm` NULL or a NUL-terminated string, and the arrays
/// whose bits are set hold `node_count` (`haproxy_ids`, `buckets`) or
/// `removed_bucket_count` (`removed_buckets`) entries.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_new_with_options_sized(
    ids: *const *const c_char,
    id_lens: *const usize,
    weights: *const f64,
    zones: *const *const c_char,
    zone_lens: *const usize,
    node_count: usize,
    options: *const ring_options_t,
    options_size: usize,
    out_ring: *mut *mut ring_t,
) -> ring_result {
    boundary(|| {
        non_null!(out_ring);
        // SAFETY: forwarded from this function's own contract.
        let options = unsafe { read_options(options, options_size) }?;
        // SAFETY: forwarded from this function's own contract.
        let nodes = unsafe { read_nodes(ids, id_lens, weights, zones, zone_lens, node_count) }?;
        // SAFETY: forwarded from this function's own contract; `nodes` holds `node_count` nodes.
        hand_out(unsafe { build_ring(options.as_ref(), nodes) }?, out_ring);
        Ok(())
    })
}

/// The entry point of programs built against the headers before
/// `ring_new_with_options_sized` (not declared in `ring.h` any more): the
/// same, for a `ring_options_t` of the layout those headers declared, which
/// ends with `score`, under those headers' rule: `fields` decides, and a
/// field whose bit is not set is ignored, whatever it holds. So every binary
/// built against them keeps working exactly as it did; rebuilt against
/// today's header, a program calls `ring_new_with_options_sized`, which
/// refuses a value without its bit by name.
///
/// # Safety
/// As `ring_new_with_options_sized` with `options_size` the size of that
/// first layout.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_new_with_options(
    ids: *const *const c_char,
    id_lens: *const usize,
    weights: *const f64,
    zones: *const *const c_char,
    zone_lens: *const usize,
    node_count: usize,
    options: *const ring_options_t,
    out_ring: *mut *mut ring_t,
) -> ring_result {
    boundary(|| {
        non_null!(out_ring);
        // SAFETY: `fields` and `algorithm`, the struct's first members in
        // every layout with them, are readable (the contract of this
        // function under those headers); the bytes up to a field whose bit
        // is set are too, since a program sets only bits its header has.
        let options = unsafe { read_legacy_options(options) };
        // SAFETY: forwarded from this function's own contract.
        let nodes = unsafe { read_nodes(ids, id_lens, weights, zones, zone_lens, node_count) }?;
        // SAFETY: forwarded from this function's own contract; `nodes` holds `node_count` nodes.
        hand_out(unsafe { build_ring(options.as_ref(), nodes) }?, out_ring);
        Ok(())
    })
}

/// Reads the parallel node arrays of `ring_new`.
///
/// # Safety
/// As `ring_new`.
unsafe fn read_nodes(
    ids: *const *const c_char,
    id_lens: *const usize,
    weights: *const f64,
    zones: *const *const c_char,
    zone_lens: *const usize,
    node_count: usize,
) -> Result<Vec<Node>, ring_result> {
    if node_count > 0 {
        non_null!(ids, id_lens);
    }
    if zones.is_null() != zone_lens.is_null() {
        return Err(fail(RING_NULL_ARGUMENT, format_args!("`zones` and `zone_lens` must both be NULL or both be set")));
    }
    // More nodes than a ring has points (2^24) is a count no caller's arrays
    // hold; refuse it before allocating for it.
    if node_count as u64 > shardring::MAX_POINTS {
        return Err(fail(
            RING_INVALID_CONFIG,
            format_args!("node_count {node_count} is above the {} nodes a ring can hold", shardring::MAX_POINTS),
        ));
    }
    let mut nodes = Vec::with_capacity(node_count);
    for i in 0..node_count {
        // SAFETY: the caller guarantees `node_count` elements in each non-NULL array,
        // and `ids[i]` valid for `id_lens[i]` bytes.
        let id = unsafe { text(*ids.add(i), *id_lens.add(i), format_args!("ids[{i}]")) }?;
        // SAFETY: `weights` is NULL or holds `node_count` elements.
        let weight = if weights.is_null() { 1.0 } else { unsafe { *weights.add(i) } };
        let mut node = Node::new(id, weight);
        // SAFETY: both zone arrays are NULL, or non-NULL with `node_count` elements.
        let zone = if zones.is_null() { std::ptr::null() } else { unsafe { *zones.add(i) } };
        if !zone.is_null() {
            // SAFETY: the caller guarantees `zones[i]` valid for `zone_lens[i]` bytes.
            node = node.with_zone(unsafe { text(zone, *zone_lens.add(i), format_args!("zones[{i}]")) }?);
        }
        nodes.push(node);
    }
    Ok(nodes)
}

/// The ring's algorithm name (`"ring"`, `"ketama"`, ...): a static
/// NUL-terminated string, or NULL when `ring` is NULL.
///
/// # Safety
/// `ring` must be NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_algorithm(ring: *const ring_t) -> *const c_char {
    // SAFETY: NULL or a live handle by contract.
    let Ok(ring) = (unsafe { ring_ref(ring) }) else {
        return std::ptr::null();
    };
    ring.algorithm().c_name().as_ptr()
}

/// Builds a ring from a JSON ring config (`json_len` bytes of UTF-8, not
/// NUL-terminated), e.g.
/// `{"format_version":1,"vnodes":160,"seed":0,"nodes":[{"id":"a","weight":1,"zone":"east"}]}`.
///
/// On success writes a new handle to `*out_ring`; release it with `ring_free`.
/// Errors: `RING_NULL_ARGUMENT`, `RING_INVALID_UTF8`, `RING_INVALID_CONFIG`,
/// `RING_UNSUPPORTED_FORMAT`, the errors of `ring_new`, and those of
/// `ring_new_with_options_sized` (`RING_INVALID_TABLE_SIZE`, `RING_INVALID_ADDRESS`).
///
/// # Safety
/// `json` must be valid for `json_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_new_from_json(
    json: *const c_char,
    json_len: usize,
    out_ring: *mut *mut ring_t,
) -> ring_result {
    boundary(|| {
        non_null!(out_ring);
        // SAFETY: the caller guarantees `json_len` readable bytes.
        let json = unsafe { text(json, json_len, "json") }?;
        hand_out(Ring::from_json(json).map_err(core_error)?, out_ring);
        Ok(())
    })
}

/// Writes the ring's JSON config (pretty-printed, NUL-terminated UTF-8) to
/// `*out_json` and its length without the NUL to `*out_json_len`. The string
/// is allocated by the library: release it with `ring_string_free`.
///
/// Errors: `RING_NULL_ARGUMENT`.
///
/// # Safety
/// `ring` must be a live handle; the out-pointers writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_to_json(
    ring: *const ring_t,
    out_json: *mut *mut c_char,
    out_json_len: *mut usize,
) -> ring_result {
    boundary(|| {
        non_null!(out_json, out_json_len);
        // SAFETY: live handle by contract.
        let json = unsafe { ring_ref(ring) }?.to_config().to_json();
        let len = json.len();
        // JSON escapes NUL as \u0000, so the text has no interior NUL.
        let json = CString::new(json).map_err(|_| fail(RING_PANIC, format_args!("JSON contained a NUL byte")))?;
        // SAFETY: both out-pointers are non-NULL and writable by contract.
        unsafe {
            write(out_json, json.into_raw());
            write(out_json_len, len);
        }
        Ok(())
    })
}

/// Frees a string returned by `ring_to_json` or `ring_follower_metrics`.
/// NULL is a no-op.
///
/// # Safety
/// `string` must be NULL or a string from one of those, freed once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_string_free(string: *mut c_char) {
    if !string.is_null() {
        // SAFETY: the string came from `CString::into_raw` in `ring_to_json`.
        drop(unsafe { CString::from_raw(string) });
    }
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
/// NULL is a no-op. Node id pointers from this ring stay valid until its last
/// reference is dropped.
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
        let id = node(unsafe { ring_ref(ring) }?, index)?.id();
        // SAFETY: both out-pointers are non-NULL and writable by contract.
        unsafe {
            write_str(out_id, out_id_len, id);
        }
        Ok(())
    })
}

/// The weight of node `index` (relative capacity, >= 0; 0 = drained).
///
/// Errors: `RING_NULL_ARGUMENT`, `RING_INDEX_OUT_OF_RANGE`.
///
/// # Safety
/// `ring` must be a live handle; `out_weight` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_node_weight(ring: *const ring_t, index: usize, out_weight: *mut f64) -> ring_result {
    boundary(|| {
        non_null!(out_weight);
        // SAFETY: live handle by contract.
        let weight = node(unsafe { ring_ref(ring) }?, index)?.weight();
        // SAFETY: non-NULL and writable by contract.
        unsafe { write(out_weight, weight) };
        Ok(())
    })
}

fn node(ring: &Ring, index: usize) -> Result<&Node, ring_result> {
    ring.nodes().get(index).ok_or_else(|| {
        fail(
            RING_INDEX_OUT_OF_RANGE,
            format_args!("node index {index} is out of range (ring has {} nodes)", ring.nodes().len()),
        )
    })
}

/// Places a key: writes to `*out_index` the index of the node owning the
/// `key_len` bytes at `key` (a NULL key is allowed with length 0), and, when
/// `out_id` and `out_id_len` are not NULL, that node's id as in
/// `ring_node_id`.
///
/// Errors: `RING_NULL_ARGUMENT`, `RING_EMPTY_RING`.
///
/// # Safety
/// `ring` must be a live handle; `key` valid for `key_len` bytes; non-NULL
/// out-pointers writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_get_node(
    ring: *const ring_t,
    key: *const u8,
    key_len: usize,
    out_index: *mut usize,
    out_id: *mut *const c_char,
    out_id_len: *mut usize,
) -> ring_result {
    boundary(|| {
        non_null!(out_index);
        // SAFETY: live handle and readable key, by contract.
        let (ring, key) = unsafe { (ring_ref(ring)?, bytes(key, key_len, "key")?) };
        let index = ring.get_index(key).map_err(core_error)?;
        // SAFETY: `out_index` is non-NULL; the id pointers are written only when both are set.
        unsafe {
            write(out_index, index);
            if !out_id.is_null() && !out_id_len.is_null() {
                let id = ring.nodes()[index].id();
                write_str(out_id, out_id_len, id);
            }
        }
        Ok(())
    })
}

/// Places a precomputed key hash (from `ring_hash_key`; on the default
/// algorithm, XXH3-64 of the key under the ring's seed): writes to
/// `*out_index` the index of the node owning it (on a continuum, the first
/// point >= `hash`, wrapping past the end).
///
/// Errors: `RING_NULL_ARGUMENT`, `RING_EMPTY_RING`, `RING_HASH_OUT_OF_RANGE` (a hash wider
/// than the algorithm's: 32 bits for ketama and nginx, 14 for slots).
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
        unsafe { write(out_index, index) };
        Ok(())
    })
}

/// Writes the key's preference list: up to `out_indices_len` distinct node
/// indices, in clockwise order from the key (distinct zones first when nodes
/// have zones), the first being `ring_get_node`'s answer; `*out_count`
/// receives how many were written (fewer when the ring has fewer nodes with
/// weight > 0).
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
        // SAFETY: live handle, readable key and writable buffer, by contract.
        let (ring, key, out) = unsafe {
            (ring_ref(ring)?, bytes(key, key_len, "key")?, out_slice(out_indices, out_indices_len, "out_indices")?)
        };
        // `get_n_indices` fails before writing anything, so `out` is untouched on error.
        let count = ring.get_n_indices(key, out).map_err(core_error)?;
        // SAFETY: non-NULL and writable by contract.
        unsafe { write(out_count, count) };
        Ok(())
    })
}

/// The key's hash under the ring's algorithm: XXH3-64 of the key bytes under
/// the seed (`ring`, `jump`, `rendezvous`, `maglev`, `jumpback`,
/// `memento`), the first 4 bytes of MD5 little-endian (ketama
/// modes), CRC-32 (`nginx`), the Redis Cluster slot (`slots`), or the key
/// hash of the peer a compatibility mode follows (`core/SPEC.md`). Returns 0
/// for a NULL ring or a NULL key with non-zero length.
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

/// The ring's config fingerprint: a stable 64-bit digest of its algorithm,
/// parameters and set of nodes (`core/SPEC.md`; node order counts only where
/// it places keys: `jump` and `jumpback` (buckets are list positions), the
/// ketama modes, libketama, nginx and libmemcached (ties go to the earlier
/// server), the migration modes, Envoy's and gRPC's ring hash (fractional
/// shares), `haproxy` (assigned ids) and fresh slot ranges; `memento` lists
/// nodes by bucket and adds its removed buckets), so two processes can
/// check they hold the same ring. 0 for NULL.
///
/// # Safety
/// `ring` must be NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_fingerprint(ring: *const ring_t) -> u64 {
    // SAFETY: NULL or live, by contract.
    unsafe { ring_ref(ring) }.map_or(0, Ring::fingerprint)
}

/// Writes the ring's fingerprint (`ring_fingerprint`) as text into
/// `out_hex`: 16 lowercase hexadecimal digits, zero-padded, then a NUL
/// (`RING_FINGERPRINT_HEX_LEN` = 17 bytes), e.g. `"53712479e1fdae70"`: the
/// text the CLI, Python's `repr` and Node print, and
/// `ring_follower_fingerprint_hex` writes.
///
/// Errors: `RING_NULL_ARGUMENT`, `RING_BUFFER_TOO_SMALL` (`out_hex_len`
/// below 17). Nothing is written on error.
///
/// # Safety
/// `ring` must be a live handle; `out_hex` writable for `out_hex_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_fingerprint_hex(
    ring: *const ring_t,
    out_hex: *mut c_char,
    out_hex_len: usize,
) -> ring_result {
    boundary(|| {
        // SAFETY: live handle by contract.
        let fingerprint = unsafe { ring_ref(ring) }?.fingerprint();
        // SAFETY: writable for `out_hex_len` bytes by contract.
        unsafe { write_fingerprint_hex(fingerprint, out_hex, out_hex_len) }
    })
}

/// Derives a new ring with one node added (appended to the node order): only
/// keys the new node now owns move. `zone` may be NULL (no zone). The new
/// handle goes to `*out_ring`; `ring` is unchanged and keeps its references.
///
/// Errors: `RING_NULL_ARGUMENT`, `RING_INVALID_UTF8`, `RING_EMPTY_ID`,
/// `RING_DUPLICATE_ID`, `RING_INVALID_WEIGHT`, `RING_EMPTY_ZONE`,
/// `RING_TOO_MANY_POINTS`, `RING_INVALID_ADDRESS` (ketama and nginx: the id
/// is not a server address, or names a server already present),
/// `RING_INVALID_TABLE_SIZE` (Maglev: the table has no slot left for it),
/// `RING_INVALID_CONFIG` (nginx: servers marked down would then hold 21
/// consecutive points).
///
/// # Safety
/// `ring` must be a live handle; `id` valid for `id_len` bytes, a non-NULL
/// `zone` for `zone_len` bytes; `out_ring` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_with_node(
    ring: *const ring_t,
    id: *const c_char,
    id_len: usize,
    weight: f64,
    zone: *const c_char,
    zone_len: usize,
    out_ring: *mut *mut ring_t,
) -> ring_result {
    boundary(|| {
        non_null!(out_ring);
        // SAFETY: live handle and readable id, by contract.
        let (ring, id) = unsafe { (ring_ref(ring)?, text(id, id_len, "id")?) };
        let mut node = Node::new(id, weight);
        if !zone.is_null() {
            // SAFETY: readable for `zone_len` bytes by contract.
            node = node.with_zone(unsafe { text(zone, zone_len, "zone") }?);
        }
        hand_out(ring.with_node(node).map_err(core_error)?, out_ring);
        Ok(())
    })
}

/// Derives a new ring without node `id` (later nodes shift down one index):
/// only that node's keys move. `ring` is unchanged.
///
/// Errors: `RING_NULL_ARGUMENT`, `RING_INVALID_UTF8`, `RING_UNKNOWN_NODE`,
/// `RING_INVALID_CONFIG` (nginx: servers marked down would then hold 21
/// consecutive points).
///
/// # Safety
/// `ring` must be a live handle; `id` valid for `id_len` bytes; `out_ring` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_without_node(
    ring: *const ring_t,
    id: *const c_char,
    id_len: usize,
    out_ring: *mut *mut ring_t,
) -> ring_result {
    boundary(|| {
        non_null!(out_ring);
        // SAFETY: live handle and readable id, by contract.
        let (ring, id) = unsafe { (ring_ref(ring)?, text(id, id_len, "id")?) };
        hand_out(ring.without_node(id).map_err(core_error)?, out_ring);
        Ok(())
    })
}

/// Derives a new ring with node `id` at `weight`: raising a weight only moves
/// keys to that node, lowering it only moves keys away. `ring` is unchanged.
///
/// Errors: `RING_NULL_ARGUMENT`, `RING_INVALID_UTF8`, `RING_UNKNOWN_NODE`,
/// `RING_INVALID_WEIGHT` (including, under `haproxy`, a weight HAProxy's `set
/// weight` would reach with ties reordered), `RING_TOO_MANY_POINTS`,
/// `RING_INVALID_CONFIG` (nginx: servers marked down would then hold 21
/// consecutive points).
///
/// # Safety
/// `ring` must be a live handle; `id` valid for `id_len` bytes; `out_ring` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_with_weight(
    ring: *const ring_t,
    id: *const c_char,
    id_len: usize,
    weight: f64,
    out_ring: *mut *mut ring_t,
) -> ring_result {
    boundary(|| {
        non_null!(out_ring);
        // SAFETY: live handle and readable id, by contract.
        let (ring, id) = unsafe { (ring_ref(ring)?, text(id, id_len, "id")?) };
        hand_out(ring.with_weight(id, weight).map_err(core_error)?, out_ring);
        Ok(())
    })
}
