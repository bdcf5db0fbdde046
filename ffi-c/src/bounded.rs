//! `ring_tracker_t`: consistent hashing with bounded loads over a ring.

use std::ffi::c_char;

use shardring::LoadTracker;

use crate::boundary::{boundary, bytes, free_handle, handle_ref, into_handle, non_null, text, write, write_str};
use crate::error::ring_result::{self, *};
use crate::error::{core_error, fail};
use crate::ring::ring_shared;
use crate::ring::ring_t;

/// Live load per node over a ring, placing requests with bounded loads
/// (Mirrokni, Thorup and Zadimoghaddam, 2017). Create with
/// `ring_tracker_new`, release with `ring_tracker_free`. Safe to use from
/// many threads at once: acquires and releases never wait for each other.
pub struct ring_tracker_t {
    tracker: LoadTracker,
}

/// # Safety
/// `handle` must be NULL or a live tracker handle.
unsafe fn tracker_ref<'a>(handle: *const ring_tracker_t) -> Result<&'a LoadTracker, ring_result> {
    // SAFETY: forwarded contract.
    Ok(unsafe { &handle_ref(handle, "tracker")?.tracker })
}

/// Creates a tracker over the snapshot behind `ring` (shared; the handle may
/// be freed afterwards) with every load 0 and balance factor `1 + epsilon`: a node's
/// capacity is `max(1, ceil((1 + epsilon) * (total load + 1) * weight / total weight))`.
///
/// Errors: `RING_NULL_ARGUMENT`, `RING_INVALID_EPSILON` (epsilon not finite and > 0).
///
/// # Safety
/// `ring` must be a live handle; `out_tracker` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_tracker_new(
    ring: *const ring_t,
    epsilon: f64,
    out_tracker: *mut *mut ring_tracker_t,
) -> ring_result {
    boundary(|| {
        non_null!(out_tracker);
        // SAFETY: live handle by contract.
        let ring = unsafe { ring_shared(ring) }?;
        let tracker = LoadTracker::new(ring, epsilon).map_err(core_error)?;
        let handle = into_handle(ring_tracker_t { tracker });
        // SAFETY: checked non-NULL; writable by contract.
        unsafe { write(out_tracker, handle) };
        Ok(())
    })
}

/// Creates a tracker over the snapshot behind `ring` (an `haproxy` ring;
/// shared, the handle may be freed afterwards) with every load 0, bounding
/// loads as HAProxy's `hash-balance-factor` does: `hash_balance_factor`
/// percent of the average load, in HAProxy's integer slots
/// (`core/SPEC.md`, *haproxy*), a server taking a request while its load is
/// below its slots.
///
/// Errors: `RING_NULL_ARGUMENT`, `RING_INVALID_CONFIG` (a factor of 100 or
/// less, or a ring of another algorithm).
///
/// # Safety
/// `ring` must be a live handle; `out_tracker` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_tracker_new_haproxy(
    ring: *const ring_t,
    hash_balance_factor: u32,
    out_tracker: *mut *mut ring_tracker_t,
) -> ring_result {
    boundary(|| {
        non_null!(out_tracker);
        // SAFETY: live handle by contract.
        let ring = unsafe { ring_shared(ring) }?;
        let tracker = LoadTracker::haproxy(ring, hash_balance_factor).map_err(core_error)?;
        let handle = into_handle(ring_tracker_t { tracker });
        // SAFETY: checked non-NULL; writable by contract.
        unsafe { write(out_tracker, handle) };
        Ok(())
    })
}

/// Frees a tracker. NULL is a no-op.
///
/// # Safety
/// `tracker` must be NULL or a live handle, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_tracker_free(tracker: *mut ring_tracker_t) {
    // SAFETY: NULL or a live handle from `ring_tracker_new`, freed once by contract.
    unsafe { free_handle(tracker) }
}

/// Assigns a request for `key` (`key_len` bytes) to the first node in the
/// key's preference order that is under capacity and adds one to its load.
/// Writes the node's index (in the tracker's current ring), optionally its
/// id (`out_id`/`out_id_len` may both be NULL; the id stays valid until the
/// next `ring_tracker_swap` or `ring_tracker_free`), and the number of
/// distinct nodes tried (`out_probes` may be NULL; 1 = the key's owner).
///
/// Errors: `RING_NULL_ARGUMENT`, `RING_EMPTY_RING`. Nothing is written on error.
///
/// # Safety
/// `tracker` must be a live handle; `key` valid for `key_len` bytes; the
/// non-NULL outputs writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_tracker_acquire(
    tracker: *const ring_tracker_t,
    key: *const u8,
    key_len: usize,
    out_index: *mut usize,
    out_id: *mut *const c_char,
    out_id_len: *mut usize,
    out_probes: *mut u32,
) -> ring_result {
    boundary(|| {
        non_null!(out_index);
        if out_id.is_null() != out_id_len.is_null() {
            return Err(fail(
                RING_NULL_ARGUMENT,
                format_args!("`out_id` and `out_id_len` must both be NULL or both be set"),
            ));
        }
        // SAFETY: live handle and readable key by contract.
        let (tracker, key) = unsafe { (tracker_ref(tracker)?, bytes(key, key_len, "key")?) };
        // The caller gives the load back with ring_tracker_release.
        let lease = tracker.acquire(key).map_err(core_error)?.detach();
        // SAFETY: checked non-NULL; writable by contract.
        unsafe { write(out_index, lease.index) };
        if !out_probes.is_null() {
            // SAFETY: non-NULL and writable by contract.
            unsafe { write(out_probes, lease.probes) };
        }
        if !out_id.is_null() {
            // SAFETY: non-NULL and writable by contract. The lease's id shares
            // its allocation with the tracker's state, which keeps it until
            // the next swap.
            unsafe { write_str(out_id, out_id_len, &lease.id) };
        }
        Ok(())
    })
}

/// Removes one unit of load from node `id` (`id_len` bytes of UTF-8).
///
/// Errors: `RING_NULL_ARGUMENT`, `RING_INVALID_UTF8`, `RING_UNKNOWN_NODE`
/// (not in the current ring, e.g. removed by a swap: its load left with
/// it), `RING_NO_LOAD` (its load is already 0).
///
/// # Safety
/// `tracker` must be a live handle; `id` valid for `id_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_tracker_release(
    tracker: *const ring_tracker_t,
    id: *const c_char,
    id_len: usize,
) -> ring_result {
    boundary(|| {
        // SAFETY: live handle and readable id by contract.
        let (tracker, id) = unsafe { (tracker_ref(tracker)?, text(id, id_len, "id")?) };
        tracker.release(id).map_err(core_error)
    })
}

/// Moves the tracker onto a snapshot of `ring`, typically one derived from
/// its current ring: nodes in both keep their load, nodes that left drop
/// theirs, new nodes start at 0. Ids returned by earlier acquires become invalid.
///
/// Errors: `RING_NULL_ARGUMENT`.
///
/// # Safety
/// `tracker` and `ring` must be live handles.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_tracker_swap(tracker: *const ring_tracker_t, ring: *const ring_t) -> ring_result {
    boundary(|| {
        // SAFETY: live handles by contract.
        let (tracker, ring) = unsafe { (tracker_ref(tracker)?, ring_shared(ring)?) };
        tracker.swap(ring);
        Ok(())
    })
}

/// Writes the load of node `index` (in the current ring) to `*out_load`.
///
/// Errors: `RING_NULL_ARGUMENT`, `RING_INDEX_OUT_OF_RANGE`.
///
/// # Safety
/// `tracker` must be a live handle; `out_load` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_tracker_load(
    tracker: *const ring_tracker_t,
    index: usize,
    out_load: *mut u64,
) -> ring_result {
    boundary(|| {
        non_null!(out_load);
        // SAFETY: live handle by contract.
        let loads = unsafe { tracker_ref(tracker) }?.loads();
        let load = *loads.get(index).ok_or_else(|| {
            fail(
                RING_INDEX_OUT_OF_RANGE,
                format_args!("node index {index} is not below the node count {}", loads.len()),
            )
        })?;
        // SAFETY: checked non-NULL; writable by contract.
        unsafe { write(out_load, load) };
        Ok(())
    })
}

/// The total load over all nodes (0 when `tracker` is NULL).
///
/// # Safety
/// `tracker` must be NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_tracker_total_load(tracker: *const ring_tracker_t) -> u64 {
    // SAFETY: NULL or live by contract.
    unsafe { tracker_ref(tracker) }.map_or(0, LoadTracker::total_load)
}
